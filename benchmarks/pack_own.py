"""Pack's own work on the corpus (issue 18, fourth round): where an in-process pack of the 181
valid corpus skills spends its time past the digest's walk, and the A/Bs of that round.

    PYTHONPATH=TREE python benchmarks/pack_own.py stages [--runs 7]
    PYTHONPATH=TREE python benchmarks/pack_own.py vs-floor [--runs 5]
    PYTHONPATH=TREE python benchmarks/pack_own.py manifest
    PYTHONPATH=$PWD python benchmarks/pack_own.py screen | parts | paths

* ``stages``: `pack_skills` with perf_counter and thread-CPU wrappers around its stages (each
  stage's total over the 181 skills), and the digest of the same skills, medians of N after
  a warm-up, ``os.sync()`` before each (a stage the tree lacks is left out);
* ``vs-floor``: `pack_skills` and issue18.py's `pack_floor` in turn, and their ratio (the
  load moves both): run with PYTHONPATH=OLD and =NEW in turn, several times;
* ``manifest``: `Manifest.to_bytes` of the 181 manifests, thread CPU (OLD and NEW in turn);
* ``screen``: the writer of the 181 archives into memory with `ZipWriter.screen` and with it
  made a no-op (each name through `name_problem`), in turn, thread CPU;
* ``parts``: the write step (writer, temp files, fsyncs, renames) with each archive joined,
  written through the 1 MiB buffered file and hashed whole (before) against
  `AtomicBatch.write_parts` and `parts_sha256` (after), in turn;
* ``paths``: finding the skills and their output rules with each path resolved at every
  step (before) against `ResolvedOutputs` (after), in turn.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, cast

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_build import CORPUS, REFUSED, carried
from issue18 import pack_floor

import skillpack._atomic as atomic_module
import skillpack.packing.pack as pack_module
import skillpack.packing.prepare as prepare_module
import skillpack.source.records as records_module
from skillpack._atomic import AtomicBatch
from skillpack.packing.members import write_members
from skillpack.packing.verify import digest
from skillpack.storedzip.writer import ZipWriter

Job = Callable[[], object]


def _folders() -> list[Path]:
    every = sorted(p.parent for p in CORPUS.glob("*/*/SKILL.md"))
    return [f for f in every if f.relative_to(CORPUS).as_posix() != REFUSED]


def _prepared(folders: list[Path], out: Path) -> list[Any]:
    return [pack_module.prepare_skill(f, keep_bytes=pack_module.PACK_KEEP_BYTES,
                                      outputs=[out]) for f in folders]


def _med(times: list[float]) -> str:
    return f"median {statistics.median(times) * 1e3:6.1f} ms (min {min(times) * 1e3:6.1f})"


def _in_turn(jobs: dict[str, Job], runs: int, clock: Callable[[], float] = time.thread_time,
             before: Callable[[], object] | None = None) -> dict[str, list[float]]:
    """Each job once a round, in turn (the order flipped every round), after a warm-up."""
    times: dict[str, list[float]] = {name: [] for name in jobs}
    names = list(jobs)
    for round_ in range(runs + 1):
        for name in names if round_ % 2 else names[::-1]:
            if before is not None:
                before()
            start = clock()
            jobs[name]()
            if round_:
                times[name].append(clock() - start)
    return times


def stages(runs: int, root: Path) -> None:
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def wrap(owner: Any, name: str, label: str) -> None:
        real = getattr(owner, name, None)
        if real is None:
            return

        @functools.wraps(real)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start, start_cpu = time.perf_counter(), time.thread_time()
            try:
                return real(*args, **kwargs)
            finally:
                wall[label] = wall.get(label, 0.0) + time.perf_counter() - start
                cpu[label] = cpu.get(label, 0.0) + time.thread_time() - start_cpu

        setattr(owner, name, timed)

    p, pr = pack_module, prepare_module
    for owner, name, label in (
        (p, "_skill_folders", "pack: find the skills (discover, real paths)"),
        (pr, "parse_skill_file", "pack: parse SKILL.md"),
        (pr, "validate_skill", "pack: validate"),
        (pr, "output_rules", "pack: output rules (real paths)"),
        (pr, "skill_fileset", "pack: walk, read, BLAKE3, SHA-256, scan"),
        (pr, "hash_files", "pack: hash_files (records, #! lines)"),
        (pr, "digest_records", "pack: digest_records"),
        (pr.PreparedSkill, "_make_members", "pack: members and manifest JSON"),
        (p, "_write_one", "pack: _write_one, all of it"),
        (p, "write_members", "pack:   the writer (headers, CRC-32, records)"),
        (p, "bytes_sha256", "pack:   the archive's SHA-256"),
        (p, "parts_sha256", "pack:   the archive's SHA-256"),
        (atomic_module.AtomicBatch, "commit", "pack: commit (fsync wait, renames, folder)"),
        (records_module, "load_skill", "digest: load_skill (parse)"),
        (records_module, "skill_fileset", "digest: walk, read, BLAKE3, scan"),
    ):
        wrap(owner, name, label)
    folders = _folders()
    out = root / "out"
    walls: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    for round_ in range(runs + 1):
        shutil.rmtree(out, ignore_errors=True)
        os.sync()
        wall.clear()
        cpu.clear()
        start, start_cpu = time.perf_counter(), time.thread_time()
        pack_module.pack_skills(folders, out)
        wall["pack, in all"] = time.perf_counter() - start
        cpu["pack, in all"] = time.thread_time() - start_cpu
        os.sync()
        start, start_cpu = time.perf_counter(), time.thread_time()
        for folder in folders:
            digest(folder)
        wall["digest, in all"] = time.perf_counter() - start
        cpu["digest, in all"] = time.thread_time() - start_cpu
        if round_:
            for label in wall:
                walls.setdefault(label, []).append(wall[label])
                cpus.setdefault(label, []).append(cpu[label])
    for label in sorted(walls):
        print(f"{label:48} wall {statistics.median(walls[label]) * 1e3:7.1f} ms  "
              f"CPU {statistics.median(cpus[label]) * 1e3:7.1f} ms")


def vs_floor(runs: int, root: Path) -> None:
    folders = _folders()
    items = carried(folders, CORPUS)
    out = root / "out"

    def clean() -> None:
        shutil.rmtree(out, ignore_errors=True)
        os.sync()

    got = _in_turn({"pack": lambda: pack_module.pack_skills(folders, out),
                    "floor": lambda: pack_floor(items, out)}, runs, time.perf_counter, clean)
    ratios = [a / b for a, b in zip(got["pack"], got["floor"], strict=True)]
    print(f"pack {_med(got['pack'])} | pack_floor {_med(got['floor'])} | ratio "
          f"{statistics.median(got['pack']) / statistics.median(got['floor']):.2f} (rounds: "
          + " ".join(f"{r:.2f}" for r in ratios) + ")")


def manifest(runs: int, root: Path) -> None:
    manifests = [item.manifest for item in _prepared(_folders(), root / "out")]
    got = _in_turn({"to_bytes": lambda: [m.to_bytes() for m in manifests]}, runs)
    print(f"Manifest.to_bytes of {len(manifests)} manifests: {_med(got['to_bytes'])}")


def _archives(items: list[Any]) -> list[list[Any]]:
    return [item.members() for item in items]


def _write_into_memory(members: list[Any]) -> list[bytes]:
    pieces = pack_module._Pieces()
    with ZipWriter(cast(BinaryIO, pieces)) as writer:
        write_members(writer, members)
    return pieces.parts


def screen(runs: int, root: Path) -> None:
    archives = _archives(_prepared(_folders(), root / "out"))
    real = ZipWriter.screen

    def with_screen() -> None:
        ZipWriter.screen = real  # type: ignore[method-assign]
        for members in archives:
            _write_into_memory(members)

    def one_by_one() -> None:
        ZipWriter.screen = lambda self, names: None  # type: ignore[method-assign]
        for members in archives:
            _write_into_memory(members)

    try:
        got = _in_turn({"screened": with_screen, "one by one": one_by_one}, runs)
    finally:
        ZipWriter.screen = real  # type: ignore[method-assign]
    print(f"writer, CPU: names one by one {_med(got['one by one'])} | "
          f"screened {_med(got['screened'])}")


def parts(runs: int, root: Path) -> None:
    out = root / "out"
    items = _prepared(_folders(), out)
    archives = [(out / pack_module.archive_name(i.name, i.digest), i.members()) for i in items]
    shas: dict[str, list[str]] = {}

    def joined() -> None:
        with AtomicBatch() as batch:
            found = []
            for dest, members in archives:
                data = b"".join(_write_into_memory(members))
                with batch.write(dest) as handle:
                    handle.write(data)
                found.append("sha256:" + hashlib.sha256(data).hexdigest())
        shas["joined"] = found

    def written_as_parts() -> None:
        with AtomicBatch() as batch:
            found = []
            for dest, members in archives:
                pieces = _write_into_memory(members)
                batch.write_parts(dest, pieces)
                found.append(pack_module.parts_sha256(pieces))
        shas["parts"] = found

    def fresh() -> None:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        os.sync()

    for clock, what in ((time.perf_counter, "wall"), (time.thread_time, "CPU")):
        got = _in_turn({"joined": joined, "parts": written_as_parts}, runs, clock, fresh)
        print(f"write step, {what}: joined and buffered {_med(got['joined'])} | "
              f"as parts {_med(got['parts'])}")
    assert shas["joined"] == shas["parts"]


def paths(runs: int, root: Path) -> None:
    folders = _folders()
    out = root / "out"

    def every_step() -> None:
        for folder in pack_module._skill_folders(folders):
            prepare_module.output_rules(folder, [out])

    def once() -> None:
        outputs = prepare_module.ResolvedOutputs([out])
        for folder in pack_module._skill_folders(folders, outputs):
            prepare_module.output_rules(folder, outputs)

    got = _in_turn({"every step": every_step, "once": once}, runs, time.perf_counter)
    print(f"finding the skills and their output rules: each path at every step "
          f"{_med(got['every step'])} | once {_med(got['once'])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    modes: dict[str, tuple[Callable[[int, Path], None], int]] = {
        "stages": (stages, 7), "vs-floor": (vs_floor, 5), "manifest": (manifest, 21),
        "screen": (screen, 21), "parts": (parts, 16), "paths": (paths, 31)}
    parser.add_argument("mode", choices=modes)
    parser.add_argument("--runs", type=int, help="timed rounds (defaults: "
                        + ", ".join(f"{k} {v[1]}" for k, v in modes.items()) + ")")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"no corpus at {CORPUS}")
    job, runs = modes[args.mode]
    root = Path(tempfile.mkdtemp(prefix="skillpack-pack-own-"))
    try:
        job(args.runs or runs, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
