"""Where the in-process corpus digest's time goes, stage by stage (issue 18, fourth round), and
the parts each change of that round touched, timed alone for an A/B of two source trees.

    python benchmarks/digest_stages.py [--runs N]              # the stages, ~15 s
    python benchmarks/digest_stages.py --part PART [--runs N]  # one part alone, ~5 s
    # A/B (OLD = git archive COMMIT skillpack | tar -x -C OLD), in turn:
    for i in 1 2 3; do for t in OLD $PWD; do
        PYTHONPATH=$t python benchmarks/digest_stages.py --part load; done; done

Stages: `skillpack.source.records.digest_skill` of each of the 182 corpus skills, with
``time.perf_counter`` summed around each stage (the parse and its pieces, the walk, each
file's read, its content scan, the per-skill checks, the digest lines), medians of N rounds
after a warm-up; a wrapper costs about half a microsecond a call, so the figures of the
per-file stages (2,168 calls) carry about 1 ms of it. Then, by subtraction (CPU time, whole
walks of the 182 parsed skills): the reading walk as it is; with each file's read reduced to
its system calls, BLAKE3 and scan alone (no record, no check); and to nothing (what is left:
the listing, the folders' system calls and the per-skill checks).

Parts (``--part``; CPU time of one process, median and minimum of N rounds, default 21):
``load`` (`load_skill` of the 182 skills), ``split`` (`split_frontmatter` of their texts, the
YAML read stubbed out), ``scan`` (`scan_content` of the corpus files' bytes in memory),
``columns`` (the digest columns and lines of each walked file set), ``walk`` (the reading
walk, `skill_fileset(skill, read=True)`, of the 182 parsed skills).
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_build import CORPUS, carried, cpu

PARTS = ("load", "split", "scan", "columns", "walk")


def _median_min(job: Callable[[], object], runs: int) -> tuple[float, float]:
    spent = []
    for round_ in range(runs + 1):
        start = cpu()
        job()
        if round_:
            spent.append(cpu() - start)
    return statistics.median(spent), min(spent)


def part(name: str, runs: int) -> None:
    """Time the part `name` alone."""
    from skillpack.content.scan import scan_content
    from skillpack.formats.digest import digest_columns
    from skillpack.skillmd import frontmatter
    from skillpack.source import records
    from skillpack.source.load import load_skill, skill_fileset

    folders = sorted(p.parent for p in CORPUS.glob("*/*/SKILL.md"))
    job: Callable[[], object]
    if name == "load":
        paths = [str(f) for f in folders]
        job = lambda: [load_skill(f) for f in paths]  # noqa: E731
    elif name == "split":
        texts = [frontmatter.normalise_text((f / "SKILL.md").read_text("utf-8"))
                 for f in folders]
        frontmatter._load = lambda text, file: ({}, {})  # the split's own work
        job = lambda: [frontmatter.split_frontmatter(t) for t in texts]  # noqa: E731
    elif name == "scan":
        datas = [(n, p.read_bytes()) for s in carried(folders, CORPUS) for p, n in s]
        job = lambda: [scan_content(n, d, frozenset()) for n, d in datas]  # noqa: E731
    elif name == "walk":
        parsed = [load_skill(f) for f in folders]
        job = lambda: [skill_fileset(s, read=True) for s in parsed]  # noqa: E731
    else:
        sets = [skill_fileset(load_skill(f), read=True) for f in folders]
        ordered = "ordered=True" in Path(records.__file__).read_text()  # this round's change

        def job() -> None:
            for fileset in sets:
                columns = records._columns_read_by_walk(fileset)
                assert columns is not None
                digest_columns(*columns, ordered=ordered)
    median, least = _median_min(job, runs)
    print(f"{Path(records.__file__).parents[2]}: {name}: median {median * 1e3:.2f} ms, "
          f"min {least * 1e3:.2f} ms (of {runs}); load "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))


def stages(runs: int) -> None:
    """The perf_counter profile of `digest_skill`, then the walks by subtraction."""
    from skillpack.content.scan import scan_content
    from skillpack.skillmd import skill as skill_module
    from skillpack.source import load, records, walk
    from skillpack.source.load import load_skill, skill_fileset
    from skillpack.source.readfile import OPEN_FLAGS

    spent: defaultdict[str, float] = defaultdict(float)
    calls: Counter[str] = Counter()
    clock = time.perf_counter

    wrapped: list[str] = []

    def wrap(owner: Any, name: str, label: str) -> None:
        inner = getattr(owner, name, None)
        if inner is None:  # an older tree: that stage is not a function of its own there
            return
        wrapped.append(label)

        @functools.wraps(inner)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = clock()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[label] += clock() - start
                calls[label] += 1

        setattr(owner, name, timed)

    for owner, name, label in [
        (load, "_parse_at", "parse: read and parse SKILL.md (load_skill less 2 stats)"),
        (load, "parse_skill", "  parse_skill (frontmatter, body, record)"),
        (skill_module, "split_frontmatter", "    split_frontmatter (YAML reader within)"),
        (skill_module, "parse_body", "    parse_body (tool fences)"),
        (load, "_miscased", "  the SKILL.md case check"),
        (load, "_open_regular", "  SKILL.md open + fstat"),
        (load, "_read_to_end", "  SKILL.md read"),
        (walk.Walker, "walk_tree", "walk: listing and reading every file"),
        (walk.Walker, "read_file", "  each file: open, fstat, read, BLAKE3, scan, close"),
        (walk, "scan_content", "    the content scan"),
        (walk, "left_out_rule", "  the leave-out rules, each entry"),
        (walk, "_file_set", "walk: per-skill checks and the file set"),
        (walk.Walker, "check_names", "  check_names"),
        (walk.Walker, "check_secrets", "  check_secrets"),
        (walk.Walker, "load_skillignore", "walk: .skillignore lookup"),
        (records, "_columns_read_by_walk", "digest: columns from the walk"),
        (records, "digest_columns", "digest: lines and their BLAKE3"),
    ]:
        wrap(owner, name, label)
    folders = sorted(str(p.parent) for p in CORPUS.glob("*/*/SKILL.md"))
    totals: dict[str, list[float]] = {"digest_skill of the 182 skills": []}
    totals.update((label, []) for label in wrapped)  # printed in the order declared
    for round_ in range(runs + 1):
        spent.clear()
        calls.clear()
        start = clock()
        for folder in folders:
            records.digest_skill(folder)
        whole = clock() - start
        if round_:
            totals["digest_skill of the 182 skills"].append(whole)
            for label, value in spent.items():
                totals[label].append(value)
    files = calls["  each file: open, fstat, read, BLAKE3, scan, close"]
    print(f"{Path(records.__file__).parents[2]}: {len(folders)} skills, {files:,} files; "
          f"perf_counter, medians of {runs}; load "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    for label, values in totals.items():
        if not values:
            continue
        median = statistics.median(values)
        per = calls.get(label, 0) or len(folders)
        print(f"  {label:<58} {median * 1e3:7.2f} ms  {median * 1e6 / per:6.1f} us a call"
              f" ({per:,} calls)" if calls.get(label) else
              f"  {label:<58} {median * 1e3:7.2f} ms")

    # by subtraction: the reading walk with each file's read cut down
    skills = [load_skill(f) for f in folders]
    real_read = walk.Walker.read_file.__wrapped__  # type: ignore[attr-defined]
    walk.scan_content = walk.scan_content.__wrapped__  # type: ignore[attr-defined]
    flags = OPEN_FLAGS

    def bare(self: walk.Walker, rel: str, name: str, dir_fd: int | None,
             seen: os.stat_result | None = None) -> None:
        fd = os.open(name, flags, dir_fd=dir_fd)
        try:
            assert self.reader is not None  # the walk's reader: read whole, BLAKE3
            found = self.reader(fd, os.fstat(fd).st_size)
        finally:
            os.close(fd)
        assert found is not None
        scan_content(rel, found[1], frozenset())

    def nothing(self: walk.Walker, rel: str, name: str, dir_fd: int | None,
                seen: os.stat_result | None = None) -> None:
        return None

    variants: dict[str, Callable[..., None]] = {
        "the reading walk as it is": real_read,
        "each file: system calls, BLAKE3, scan, no record": bare,
        "each file: nothing (listing, folders, per-skill checks)": nothing,
    }
    spent_by: dict[str, list[float]] = {name: [] for name in variants}
    for round_ in range(runs + 1):
        for name, read_file in variants.items():
            walk.Walker.read_file = read_file  # type: ignore[method-assign]
            start = cpu()
            for parsed in skills:
                skill_fileset(parsed, read=True)
            if round_:
                spent_by[name].append(cpu() - start)
    walk.Walker.read_file = real_read  # type: ignore[method-assign]
    print(f"the reading walk of the 182 parsed skills, CPU, medians of {runs}:")
    for name, values in spent_by.items():
        print(f"  {name:<58} {statistics.median(values) * 1e3:7.1f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int)
    parser.add_argument("--part", choices=PARTS)
    args = parser.parse_args()
    if args.part:
        part(args.part, args.runs or 21)
    else:
        stages(args.runs or 5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
