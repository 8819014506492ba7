"""Build benchmarks: `skillpack digest` and `skillpack pack` against b3sum, dirhash, a DEFLATE
zip and plain reads of the same files, with the targets of the build-pipeline issue.

    python benchmarks/bench_build.py [--quick] [--runs N] [--json FILE] [--tmp DIR]

Workloads (generated data goes in a temp folder removed at the end):

* ``corpus``: the 182 skills of ``../shared/corpus``; ``digest`` runs on all 182, ``pack`` on
  the 181 valid ones (``anthropics-skills/claude-api`` is refused by design);
* ``small``: one generated skill holding 10,000 files of 4 KiB of random bytes (100 folders of
  100 files) beside its SKILL.md;
* ``big``: one generated skill holding a single 256 MiB file of random bytes;
* ``memory``: peak RSS of packing (and digesting) a skill holding one 1 GiB file, measured in
  a fresh interpreter with ``resource.getrusage(...).ru_maxrss`` minus the RSS of that
  interpreter once skillpack is imported.

Every comparator works on exactly the files skillpack carries (the walk's file list):

* ``read``: open/read/close each file with Python's ``open`` (the baseline "merely reading");
* ``skillpack digest``: ``skillpack.packing.verify.digest(folder)`` for each skill folder;
* ``skillpack pack``: ``skillpack.packing.pack.pack_skills(folders, out)`` into a fresh folder each
  run (fsync'd atomic writes, one archive per skill);
* ``b3sum``: ``b3sum FILE...`` (default threads; mmap; includes its process start);
* ``dirhash``: ``dirhash.dirhash(folder, ALGORITHM)`` for each skill folder, with the fastest
  algorithm of hashlib on this machine (chosen by a short probe; printed);
* ``zip DEFLATE``: ``zipfile.ZipFile(..., ZIP_DEFLATED)`` (default level) of the same files
  into one zip (no fsync);
* the CLI (``skillpack digest ...``, ``skillpack pack ... -o DIR``) once, in a subprocess, for
  honesty: that figure includes interpreter start and imports.

Times are the median of N runs after one warm-up run, so the page cache is warm; the tools of
a workload take their runs in turn (round-robin), so that load elsewhere on the machine falls
on all of them alike. ``--quick``
shrinks everything (1,000 small files, a 32 MiB file, a 128 MiB memory run, 3 runs) for a
smoke run; its figures say nothing about the targets.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CORPUS = (REPO.parent / "shared" / "corpus").resolve()
REFUSED = "anthropics-skills/claude-api"  # invalid: pack refuses it, by design
MiB = 1 << 20


# -- measuring ------------------------------------------------------------------------------

@dataclass
class Job:
    """One thing to time: `fn`, with untimed `before` and `after` around each run."""

    tool: str
    fn: Callable[[], object]
    nbytes: int
    nfiles: int
    runs: int
    note: str = ""
    before: Callable[[], object] | None = None
    after: Callable[[], object] | None = None


def run_jobs(jobs: Sequence[Job]) -> dict[str, list[float]]:
    """Wall times of each job, taken round-robin (one run of each job in turn, so that a
    burst of load elsewhere on the machine hits every tool alike), after one untimed warm-up
    round that also fills the page cache. Before each run, untimed, ``os.sync()`` writes back
    what is dirty (the generated data, the last pack's archives), so that no run shares the
    disk or the CPU with the writeback of another's writes."""
    times: dict[str, list[float]] = {job.tool: [] for job in jobs}
    for round_ in range(max(job.runs for job in jobs) + 1):
        for job in jobs:
            if round_ > job.runs:
                continue
            if job.before is not None:
                job.before()
            os.sync()  # untimed: no run pays for the writeback of another's (or setup's) writes
            start = time.perf_counter()
            job.fn()
            elapsed = time.perf_counter() - start
            if job.after is not None:
                job.after()
            if round_:
                times[job.tool].append(elapsed)
    return times


@dataclass
class Row:
    tool: str
    seconds: float
    nbytes: int
    nfiles: int
    runs: int
    note: str = ""
    every: list[float] = field(default_factory=list)  # each timed run, in order

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "seconds": self.seconds, "bytes": self.nbytes,
                "files": self.nfiles, "runs": self.runs, "note": self.note,
                "every_run": self.every}


@dataclass
class Workload:
    key: str
    title: str
    digest_folders: list[Path]
    pack_folders: list[Path]
    digest_files: list[Path] = field(default_factory=list)
    pack_skills: list[list[tuple[Path, str]]] = field(default_factory=list)  # (path, arcname)
    rows: list[Row] = field(default_factory=list)

    @property
    def pack_files(self) -> list[tuple[Path, str]]:
        return [item for skill in self.pack_skills for item in skill]

    def row(self, tool: str) -> Row:
        return next(r for r in self.rows if r.tool == tool)


def carried(folders: Sequence[Path], base: Path) -> list[list[tuple[Path, str]]]:
    """Every file skillpack carries, per skill of `folders`, as (path on disk, zip name): the
    path relative to `base` (two corpus skills share a name, never a path)."""
    from skillpack.source.load import skill_fileset

    out: list[list[tuple[Path, str]]] = []
    for folder in folders:
        fileset = skill_fileset(folder)
        prefix = folder.relative_to(base).as_posix()
        out.append([(Path(fileset.root) / w.disk_path, f"{prefix}/{w.path}")
                    for w in fileset.files])
    return out


# -- the comparators ------------------------------------------------------------------------

def read_files(files: Sequence[Path]) -> None:
    for path in files:
        with open(path, "rb") as handle:
            handle.read()


def skillpack_digest(folders: Sequence[Path]) -> None:
    from skillpack.packing.verify import digest

    for folder in folders:
        digest(folder)


def b3sum(files: Sequence[Path]) -> None:
    subprocess.run(["b3sum", "--", *map(str, files)], stdout=subprocess.DEVNULL, check=True)


def dirhash_all(folders: Sequence[Path], algorithm: str) -> None:
    import dirhash  # type: ignore[import-untyped, unused-ignore]

    for folder in folders:
        dirhash.dirhash(folder, algorithm)


def zip_deflate(items: Sequence[tuple[Path, str]], dest: Path) -> None:
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, arcname in items:
            archive.write(path, arcname)


def fastest_hashlib(candidates: Sequence[str]) -> tuple[str, dict[str, float]]:
    """The hashlib algorithm dirhash offers that hashes 32 MiB fastest here."""
    data = os.urandom(32 * MiB)
    speeds: dict[str, float] = {}
    for name in candidates:
        best = min(_time(hashlib.new(name).update, data) for _ in range(3))
        speeds[name] = len(data) / best
    return max(speeds, key=lambda n: speeds[n]), speeds


def _time(fn: Callable[[bytes], object], data: bytes) -> float:
    start = time.perf_counter()
    fn(data)
    return time.perf_counter() - start


#: The console script pip writes for a ``[project.scripts]`` entry point (pip's template: it
#: imports `re` to tidy ``argv[0]``, as every installed ``skillpack`` does).
CONSOLE_SCRIPT = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from {module} import {function}
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit({function}())
"""
_CLI: list[str] = []  # the command, made on first use


def installed_python(root: Path) -> str:
    """A venv at `root` whose interpreter finds skillpack (this repository) and its
    dependencies as a wheel install does: through one .pth file of plain paths. Not the
    dev venv's editable install, whose finder imports pathlib, re and urllib.parse at
    every interpreter start (about 24 ms), which no installed skillpack pays."""
    import blake3
    import yaml

    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path("
                           "'purelib'))"], check=True, capture_output=True, text=True)
    deps = {str(Path(m.__file__ or "").resolve().parent.parent) for m in (blake3, yaml)}
    Path(site.stdout.strip(), "skillpack-bench.pth").write_text(
        "\n".join([str(REPO), *sorted(deps)]) + "\n")
    return str(python)


def cli_command() -> list[str]:
    """The command line as a user runs it: the console script pip writes for the entry
    point pyproject.toml names, in a throwaway venv made by `installed_python` (removed at
    exit). Not the dev venv's own script: it is as old as that install (one made before
    the entry point moved to `skillpack._launch` ran the click group, past `check`'s and
    `digest`'s quick paths and `--version`'s shortcut), and its interpreter pays the
    editable finder. ``PYTHONPATH`` still comes first (an A/B of two trees)."""
    if not _CLI:
        import atexit
        import tomllib

        scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
        module, function = scripts["skillpack"].split(":")
        root = Path(tempfile.mkdtemp(prefix="skillpack-bench-cli-"))
        atexit.register(shutil.rmtree, root, True)
        python = installed_python(root / "venv")
        script = root / "venv" / "bin" / "skillpack"
        script.write_text(CONSOLE_SCRIPT.format(python=python, module=module,
                                                function=function))
        script.chmod(0o755)
        _CLI.append(str(script))
    return list(_CLI)


def cli_env() -> dict[str, str]:
    """The environment of a timed command line: this one, except that Python keeps the
    bytecode it compiles (in a cache folder of the temp directory, `PYTHONPYCACHEPREFIX`),
    as an installed skillpack has its ``.pyc`` files. Under PYTHONDONTWRITEBYTECODE=1 (set
    in some shells here) every run would compile each module again: about 190 ms of every
    whole-process figure, which no user pays."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir())
                                     / f"skillpack-bench-pycache-{os.getuid()}")
    return env


def time_cli(args: Sequence[str]) -> float:
    subprocess.run([*cli_command(), "--version"], stdout=subprocess.DEVNULL, check=True,
                   env=cli_env())  # untimed: writes the bytecode a first run compiles
    start = time.perf_counter()
    subprocess.run([*cli_command(), *args], stdout=subprocess.DEVNULL, check=True,
                   env=cli_env())
    return time.perf_counter() - start


@contextlib.contextmanager
def no_fsync() -> Iterator[None]:
    """Turn os.fsync into a no-op (only for the informational breakdown of pack)."""
    real = os.fsync
    os.fsync = lambda fd: None
    try:
        yield
    finally:
        os.fsync = real


# -- generated skills -----------------------------------------------------------------------

def write_skill_md(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {folder.name}\ndescription: A generated skill for skillpack's build "
        "benchmarks.\n---\n\n# Benchmark\n\nData only.\n", encoding="utf-8")


def make_small(folder: Path, count: int, size: int = 4096) -> None:
    write_skill_md(folder)
    per_folder = 100
    for i in range(count):
        sub = folder / "data" / f"{i // per_folder:03d}"
        if i % per_folder == 0:
            sub.mkdir(parents=True)
        (sub / f"f{i:05d}.bin").write_bytes(os.urandom(size))


def timed(jobs: dict[str, Callable[[], object]], runs: int,
          after: Callable[[], object] | None = None) -> dict[str, float]:
    """Median wall time of each job, round-robin after a warm-up round, ``os.sync()`` (and
    `after`, untimed) around each run (issue18.py and floors.py)."""
    times: dict[str, list[float]] = {name: [] for name in jobs}
    for round_ in range(runs + 1):
        for name, fn in jobs.items():
            os.sync()
            start = time.perf_counter()
            fn()
            elapsed = time.perf_counter() - start
            if after is not None:
                after()
            if round_:
                times[name].append(elapsed)
    return {name: statistics.median(values) for name, values in times.items()}


def cpu() -> float:
    """This process's CPU time so far (user + system), in seconds: steadier than wall time on
    a shared machine."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def make_big(folder: Path, size: int, name: str = "big.bin") -> None:
    """A skill holding one file of `size` bytes of random data, every byte written (not
    sparse), 1 MiB at a time (so that a child forked afterwards inherits a small peak RSS)."""
    write_skill_md(folder)
    with open(folder / name, "wb") as handle:
        left = size
        while left:
            chunk = os.urandom(min(MiB, left))
            handle.write(chunk)
            left -= len(chunk)
        handle.flush()
        os.fsync(handle.fileno())


# -- one workload ---------------------------------------------------------------------------

def run_workload(work: Workload, tmp: Path, runs: int, algorithm: str, *,
                 breakdown: bool = False) -> None:
    from skillpack.packing.pack import pack_prepared, pack_skills, prepare_many

    out = tmp / "out"
    zip_path = tmp / "deflate.zip"
    files = work.digest_files
    nbytes = sum(p.stat().st_size for p in files)
    pack_bytes = sum(p.stat().st_size for p, _ in work.pack_files)
    nfiles, pack_nfiles = len(files), len(work.pack_files)
    slow = min(runs, 3)  # the slow comparators on the big workloads

    def clean_out() -> None:
        shutil.rmtree(out, ignore_errors=True)

    big = pack_bytes > 64 * MiB
    pack_files = work.pack_files
    jobs = [
        Job("read (open/read/close)", lambda: read_files(files), nbytes, nfiles, runs),
        Job("skillpack digest", lambda: skillpack_digest(work.digest_folders), nbytes, nfiles,
            runs),
    ]
    if shutil.which("b3sum"):
        jobs.append(Job("b3sum", lambda: b3sum(files), nbytes, nfiles, runs))
    jobs += [
        Job(f"dirhash ({algorithm})", lambda: dirhash_all(work.digest_folders, algorithm),
            nbytes, nfiles, slow if big else runs),
        Job("skillpack pack", lambda: pack_skills(work.pack_folders, out), pack_bytes,
            pack_nfiles, slow if big else runs, before=clean_out, after=clean_out),
        Job("zip DEFLATE (zipfile, one zip)", lambda: zip_deflate(pack_files, zip_path),
            pack_bytes, pack_nfiles, slow if big else runs, after=zip_path.unlink),
    ]
    if breakdown:
        zips = tmp / "zips"

        def zip_each() -> None:
            zips.mkdir()
            for i, items in enumerate(work.pack_skills):
                zip_deflate(items, zips / f"{i}.zip")

        def write_no_fsync() -> None:
            with no_fsync():
                pack_prepared(prepared, out)

        prepared = prepare_many(work.pack_folders)
        jobs += [
            Job("zip DEFLATE (one zip per skill)", zip_each, pack_bytes, pack_nfiles, runs,
                "informational", after=lambda: shutil.rmtree(zips)),
            Job("pack: prepare only", lambda: prepare_many(work.pack_folders), pack_bytes,
                pack_nfiles, runs, "parse, validate, walk, hash"),
            Job("pack: parse SKILL.md only", lambda: _parse_all(work.pack_folders),
                pack_bytes, pack_nfiles, runs, "frontmatter YAML and body"),
            Job("pack: write only", lambda: pack_prepared(prepared, out), pack_bytes,
                pack_nfiles, runs, f"{len(prepared)} fsync'd atomic archives",
                before=clean_out, after=clean_out),
            Job("pack: write only, fsync disabled", write_no_fsync, pack_bytes, pack_nfiles,
                runs, "informational only", before=clean_out, after=clean_out),
        ]
    print(f"\n{work.title}", flush=True)
    times = run_jobs(jobs)
    for job in jobs:
        seconds = statistics.median(times[job.tool])
        work.rows.append(Row(job.tool, seconds, job.nbytes, job.nfiles, job.runs, job.note,
                             times[job.tool]))
        print(f"  {job.tool:<34} {seconds * 1000:10.1f} ms", flush=True)
    # the CLI, once, for honesty (interpreter start and imports included)
    folders = [str(f) for f in work.digest_folders]
    seconds = time_cli(["digest", *folders])
    work.rows.append(Row("CLI: skillpack digest", seconds, nbytes, nfiles, 1,
                         "one run, includes interpreter start"))
    print(f"  {'CLI: skillpack digest (1 run)':<34} {seconds * 1000:10.1f} ms", flush=True)
    clean_out()
    seconds = time_cli(["pack", *map(str, work.pack_folders), "-o", str(out)])
    clean_out()
    work.rows.append(Row("CLI: skillpack pack", seconds, pack_bytes, pack_nfiles, 1,
                         "one run, includes interpreter start"))
    print(f"  {'CLI: skillpack pack (1 run)':<34} {seconds * 1000:10.1f} ms", flush=True)


def run_generated(key: str, title: str, make: Callable[[Path], None], root: Path, runs: int,
                  algorithm: str) -> Workload:
    """Generate one skill with `make`, run its workload, remove it."""
    folder = root / f"bench-{key}"
    make(folder)
    work = Workload(key, title, [folder], [folder])
    work.pack_skills = carried([folder], root)
    work.digest_files = [p for p, _ in work.pack_files]
    run_workload(work, root, runs, algorithm)
    shutil.rmtree(folder)
    return work


def _parse_all(folders: Sequence[Path]) -> None:
    from skillpack.source.load import parse_skill_file

    for folder in folders:
        parse_skill_file(folder / "SKILL.md")


# -- memory ---------------------------------------------------------------------------------

#: Source of ``hwm()`` for a child script: this process image's peak RSS in bytes (Linux's
#: VmHWM; 0 where /proc is missing).
HWM_SOURCE = textwrap.dedent("""
    def hwm():
        try:
            with open("/proc/self/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0
""")

_MEMORY_CHILD = HWM_SOURCE + textwrap.dedent("""
    import json, os, resource, sys
    def rss():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    # hwm(), above: the same peak, from this process image only, as a cross-check
    bare, bare_hwm = rss(), hwm()
    import blake3, yaml, pathspec
    from skillpack.packing.pack import pack_skills
    from skillpack.packing.verify import digest
    import skillpack.packing.bundle, skillpack.approve.lock, skillpack.runtime  # all a run imports
    imported, imported_hwm = rss(), hwm()
    what, skill, out = sys.argv[1:4]
    if what == "pack":
        pack_skills([skill], out)
    else:
        digest(skill)
    print(json.dumps({"bare": bare, "imported": imported, "peak": rss(), "bare_hwm": bare_hwm,
                      "imported_hwm": imported_hwm, "peak_hwm": hwm()}))
""")


def measure_memory(tmp: Path, size: int) -> dict[str, Any]:
    folder = tmp / "bench-memory"
    make_big(folder, size)
    out = tmp / "memory-out"
    import resource

    result: dict[str, Any] = {"file_bytes": size, "parent_rss": resource.getrusage(
        resource.RUSAGE_SELF).ru_maxrss * 1024}
    try:
        for what in ("digest", "pack"):
            proc = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, what, str(folder),
                                   str(out)], capture_output=True, text=True, check=True)
            result[what] = json.loads(proc.stdout)
            shutil.rmtree(out, ignore_errors=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
    return result


# -- report ---------------------------------------------------------------------------------

def machine() -> dict[str, Any]:
    model = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    b3 = ""
    if shutil.which("b3sum"):
        b3 = subprocess.run(["b3sum", "--version"], capture_output=True, text=True).stdout
    import blake3

    try:
        import dirhash  # type: ignore[import-untyped, unused-ignore]
    except ImportError:  # only the issue 18 table is run: it needs no dirhash
        dirhash = None
    return {"nproc": os.cpu_count(), "cpu": model, "python": platform.python_version(),
            "platform": platform.platform(), "blake3": blake3.__version__,
            "dirhash": getattr(dirhash, "__version__", "?"), "b3sum": b3.strip()}


def print_table(works: Sequence[Workload]) -> None:
    print("\nMedian wall time, warm page cache (MB = 10^6 bytes)")
    print(f"{'workload':<8} {'tool':<34} {'median':>11} {'MB/s':>9} {'files/s':>10}  note")
    for work in works:
        for r in work.rows:
            rate = r.nbytes / r.seconds / 1e6
            fps = r.nfiles / r.seconds
            print(f"{work.key:<8} {r.tool:<34} {r.seconds * 1000:8.1f} ms {rate:9.1f} "
                  f"{fps:10,.0f}  {r.note or f'n={r.runs}'}")


def targets(works: dict[str, Workload], memory: dict[str, Any] | None,
            algorithm: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def target(name: str, value: float, goal: float, unit: str, higher: bool = True) -> None:
        met = value >= goal if higher else value < goal
        out.append({"target": name, "value": value, "goal": goal, "unit": unit,
                    "higher_is_better": higher, "met": met})

    big, small, corpus = works.get("big"), works.get("small"), works.get("corpus")
    if big is not None and any(r.tool == "b3sum" for r in big.rows):
        target("big file: digest speed / b3sum speed", big.row("b3sum").seconds
               / big.row("skillpack digest").seconds, 0.8, "x")
    if small is not None:
        digest_s = small.row("skillpack digest").seconds
        target("small files: digest rate / read rate",
               small.row("read (open/read/close)").seconds / digest_s, 0.6, "x")
        target(f"small files: digest speed / dirhash ({algorithm}) speed",
               small.row(f"dirhash ({algorithm})").seconds / digest_s, 5.0, "x")
    if corpus is not None:
        target("corpus: pack speed / zip DEFLATE speed",
               corpus.row("zip DEFLATE (zipfile, one zip)").seconds
               / corpus.row("skillpack pack").seconds, 5.0, "x")
    if memory is not None:
        pack = memory["pack"]
        # ru_maxrss of a child starts at its parent's peak (Linux keeps it across fork and
        # exec), which can hide growth: judge on the larger of it and VmHWM's
        growth = max(pack["peak"] - pack["imported"], pack["peak_hwm"] - pack["imported_hwm"])
        target(f"memory: pack of a {memory['file_bytes'] // MiB} MiB file, peak RSS over "
               "the imported interpreter", growth / MiB, 64.0, "MiB", higher=False)
    return out


def print_targets(results: Sequence[dict[str, Any]]) -> None:
    print("\nTargets")
    for t in results:
        sign = ">=" if t["higher_is_better"] else "<"
        print(f"  {t['target']:<72} {t['value']:8.2f} {t['unit']:<3} (goal {sign} "
              f"{t['goal']:g} {t['unit']}): {'MET' if t['met'] else 'MISSED'}")


# -- main -----------------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 3 runs: a smoke run")
    parser.add_argument("--runs", type=int, help="timed runs per measurement (default 5)")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    parser.add_argument("--tmp", type=Path, help="folder for the generated data (a temp "
                        "folder inside it is removed at the end)")
    parser.add_argument("--only", choices=["corpus", "small", "big", "memory", "issue18"],
                        action="append",
                        help="run only these workloads (repeatable)")
    args = parser.parse_args(argv)
    runs = args.runs or (3 if args.quick else 5)
    small_count = 1000 if args.quick else 10_000
    big_size = (32 if args.quick else 256) * MiB
    memory_size = (128 if args.quick else 1024) * MiB
    only = set(args.only or ["corpus", "small", "big", "memory", "issue18"])

    load_before = os.getloadavg()
    root = Path(tempfile.mkdtemp(prefix="skillpack-bench-build-", dir=args.tmp))
    memory: dict[str, Any] | None = None
    if "memory" in only:
        # first, while this process is small: Linux carries a process's peak RSS across
        # fork and exec into the child's ru_maxrss
        try:
            memory = measure_memory(root, memory_size)
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise

    if not only & {"corpus", "small", "big"}:
        dirhash = None  # only these compare with dirhash: the others run without it installed
    else:
        import dirhash  # type: ignore[import-untyped, unused-ignore]

    candidates = [a for a in ("md5", "sha1", "sha256", "sha512", "blake2b", "blake2s")
                  if dirhash is not None and a in dirhash.algorithms_available] or ["sha1"]
    algorithm, speeds = fastest_hashlib(candidates)
    info = machine()
    print(f"{info['cpu']}, {info['nproc']} CPUs, Python {info['python']}, blake3 "
          f"{info['blake3']}, dirhash {info['dirhash']}, {info['b3sum']}")
    print("dirhash algorithm: " + algorithm + " (fastest hashlib here: " + ", ".join(
        f"{n} {s / 1e6:.0f} MB/s" for n, s in sorted(speeds.items(), key=lambda i: -i[1]))
        + ")")
    print(f"{runs} timed runs per figure after one warm-up run (warm page cache), taken "
          "round-robin; median")
    print("load average at start: " + " ".join(f"{x:.2f}" for x in load_before))
    if memory is not None:
        print(f"\nmemory: pack and digest of one {memory_size // MiB} MiB file, each in a fresh "
              f"interpreter (this process's peak RSS when it started them: "
              f"{memory['parent_rss'] / MiB:.1f} MiB)")
        for what in ("digest", "pack"):
            m = memory[what]
            print(f"  {what:<7} ru_maxrss: bare {m['bare'] / MiB:6.1f} MiB, skillpack imported "
                  f"{m['imported'] / MiB:6.1f} MiB, peak {m['peak'] / MiB:6.1f} MiB: "
                  f"+{(m['peak'] - m['imported']) / MiB:.1f} MiB")
            print(f"  {'':<7} VmHWM:     bare {m['bare_hwm'] / MiB:6.1f} MiB, skillpack imported "
                  f"{m['imported_hwm'] / MiB:6.1f} MiB, peak {m['peak_hwm'] / MiB:6.1f} MiB: "
                  f"+{(m['peak_hwm'] - m['imported_hwm']) / MiB:.1f} MiB")

    works: dict[str, Workload] = {}
    try:
        if "corpus" in only:
            every = sorted(p.parent for p in CORPUS.glob("*/*/SKILL.md"))
            valid = [f for f in every if f.relative_to(CORPUS).as_posix() != REFUSED]
            work = Workload("corpus", f"corpus: {len(every)} skills (digest), {len(valid)} "
                            "valid skills (pack)", every, valid)
            work.digest_files = [p for skill in carried(every, CORPUS) for p, _ in skill]
            work.pack_skills = carried(valid, CORPUS)
            run_workload(work, root, runs, algorithm, breakdown=True)
            works["corpus"] = work
        generated = {
            "small": (f"small: {small_count:,} files of 4 KiB (+ SKILL.md)",
                      lambda folder: make_small(folder, small_count)),
            "big": (f"big: one file of {big_size // MiB} MiB (+ SKILL.md)",
                    lambda folder: make_big(folder, big_size)),
        }
        for key, (title, make) in generated.items():
            if key in only:
                works[key] = run_generated(key, title, make, root, runs, algorithm)
        issue18: dict[str, Any] | None = None
        if "issue18" in only:  # the table of issue 18, peers in the same run (issue18.py)
            from issue18 import main as issue18_main

            issue18 = issue18_main([*(["--quick"] if args.quick else []), "--runs", str(runs)],
                                   tmp=root)
    finally:
        shutil.rmtree(root, ignore_errors=True)

    load_after = os.getloadavg()
    print("\nload average at end: " + " ".join(f"{x:.2f}" for x in load_after)
          + " (other work on the machine slows every figure, and fsync most)")
    print_table(list(works.values()))
    results = targets(works, memory, algorithm)
    print_targets(results)
    if args.quick:
        print("(--quick: smaller workloads; these figures do not judge the targets)")
    if args.json is not None:
        args.json.write_text(json.dumps({
            "machine": info, "load_before": load_before, "load_after": load_after,
            "runs": runs, "quick": args.quick, "dirhash_algorithm": algorithm,
            "hashlib_speeds": speeds,
            "workloads": {k: {"title": w.title, "rows": [r.to_dict() for r in w.rows]}
                          for k, w in works.items()},
            "memory": memory, "targets": results, "issue18": issue18}, indent=2) + "\n",
            encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
