"""skillpack's benchmark suite: every line beside its peer or yardstick, as a ratio.

    python benchmarks/run.py [--only NAME[,NAME]] [--runs N] [--warmup N] [--quick] [--json]
                             [--skills N[,N]] [--corpus DIR | --no-corpus] [--big-mib N]
                             [--packager FILE] [--against REV] [--tmp DIR]

Workloads (``--only``): startup, first-turn, check, lint, digest, pack, bundle, lock,
verify-lock, review-lock, verify-bundle (on the corpus and on each generated repository),
pull (50 references from a local docker-registry, beside skopeo), big-file; workloads.py
says what each line sets beside what. Every figure is the median of
``--runs`` whole processes (5; 3 with ``--quick``; four times as many for start-up and the
first turn, after a warm-up round), the commands of a subject interleaved in a new order
each round. The table is Markdown: time, peak RSS, the peer or yardstick and the ratio
skillpack / beside (below 1: skillpack takes less time).

``--against REV`` also installs REV of this repository (a ``git archive`` export and a venv,
in the temp folder) and runs each of its skillpack commands in the same rounds as this
tree's: the table shows old, new and new/old. Everything made (trees, repositories,
archives) goes in one temp folder (``--tmp DIR`` to choose where), removed at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from harness import (
    BenchError,
    Group,
    Row,
    default_corpus,
    dump,
    export,
    install,
    revision_name,
    run_group,
    scratch_folder,
    table,
)
from workloads import (
    SKILL_WORKLOADS,
    WORKLOADS,
    Context,
    big_file,
    corpus_skills,
    first_turn,
    generated,
    pull_group,
    skill_commands,
    startup,
)


def names(text: str) -> list[str]:
    found = [name.strip() for name in text.split(",") if name.strip()]
    for name in found:
        if name not in WORKLOADS:
            raise argparse.ArgumentTypeError(f"unknown workload {name!r} (one of "
                                             f"{', '.join(WORKLOADS)})")
    return found


def sizes(text: str) -> list[int]:
    try:
        found = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None
    if not found or min(found) < 1:
        raise argparse.ArgumentTypeError("each size must be at least 1")
    return found


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter,
                                   epilog=__doc__.split("\n\n", 2)[2])
    made.add_argument("--only", type=names, action="extend", metavar="NAME[,NAME]",
                      help="run these workloads only (repeatable)")
    made.add_argument("--runs", type=int, help="measured runs of each command (default 5; "
                      "3 with --quick)")
    made.add_argument("--warmup", type=int, help="unmeasured rounds first (default: 1 for "
                      "start-up and the first turn, 0 for the rest, whose setup warms them)")
    made.add_argument("--quick", action="store_true", help="smaller subjects and fewer runs: "
                      "a repository of 200 skills, a 32 MiB file, 3 runs")
    made.add_argument("--skills", type=sizes, metavar="N[,N]", help="sizes of the generated "
                      "repositories (default 1000; 200 with --quick)")
    made.add_argument("--corpus", type=Path, help="the corpus (default $SKILLPACK_CORPUS, "
                      "else ../shared/corpus beside the repository)")
    made.add_argument("--no-corpus", action="store_true", help="leave the corpus out")
    made.add_argument("--big-mib", type=int, help="the big file's size in MiB (default 128; "
                      "32 with --quick)")
    made.add_argument("--packager", type=Path, metavar="FILE",
                      help="Anthropic's skill-creator package_skill.py, run once a skill "
                      "beside `pack`")
    made.add_argument("--against", metavar="REV", help="also run REV of this repository, "
                      "interleaved, and print old, new and new/old")
    made.add_argument("--json", action="store_true", help="print JSON instead of the table")
    made.add_argument("--tmp", type=Path, metavar="DIR", help="where the temp folder goes")
    return made


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    runs = args.runs or (3 if args.quick else 5)
    repos = args.skills or ([200] if args.quick else [1000])
    big = args.big_mib or (32 if args.quick else 128)
    only = args.only or list(WORKLOADS)
    corpus = None if args.no_corpus else (args.corpus.resolve() if args.corpus
                                          else default_corpus())
    if args.corpus is not None and not args.no_corpus and not args.corpus.is_dir():
        raise SystemExit(f"run.py: no corpus at {args.corpus}")
    started = time.perf_counter()

    def progress(text: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s] {text}", file=sys.stderr, flush=True)

    work = scratch_folder(args.tmp)
    try:
        progress(f"installing this tree in {work}")
        trees = [install(Path(__file__).resolve().parent.parent, work / "venv-new", "new",
                         "this tree", work / "pycache")]
        if args.against:
            name = revision_name(args.against)
            progress(f"installing {args.against} ({name})")
            trees.append(install(export(args.against, work / "old"), work / "venv-old", "old",
                                 name, work / "pycache"))
        ctx = Context(trees, work, corpus, args.packager)
        groups: list[Group] = [startup(ctx)]
        if corpus is not None:
            groups.append(first_turn(ctx, "corpus", lambda: corpus_skills(ctx)))
        else:
            groups.append(first_turn(ctx, f"generated repository ({repos[0]:,} skills)",
                                     generated(ctx, repos[0])))
        if set(only) & set(SKILL_WORKLOADS):
            if corpus is not None:
                groups.append(skill_commands(ctx, "corpus", "corpus",
                                             lambda: corpus_skills(ctx)))
            groups += [skill_commands(ctx, f"repo-{n}", "generated repository",
                                      generated(ctx, n)) for n in repos]
        if "pull" in only:
            pulling = pull_group(ctx)
            groups += [pulling] if pulling is not None else []
        groups.append(big_file(ctx, big))
        rows: list[Row] = []
        for group in groups:
            rows += run_group(group, trees, only, runs, args.warmup, work, progress)
    except BenchError as err:
        print(f"run.py: {err}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    settings = {"runs": runs, "warmup": args.warmup, "workloads": only, "repositories": repos,
                "big_mib": big, "corpus": corpus is not None}
    if args.json:
        print(dump(rows, trees, settings))
        return 0
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    warm = (", after a warm-up round for start-up and the first turn" if args.warmup is None
            else f", after {args.warmup} warm-up round(s)")
    command = " ".join(["python benchmarks/run.py", *(sys.argv[1:] if argv is None else argv)])
    print(f"`{command}`: medians of {runs} whole processes ({runs * 4} for start-up and the "
          f"first turn), interleaved{warm}; {os.cpu_count()} "
          f"cores, load average {load} at the end; {time.perf_counter() - started:.0f} s in "
          "all.\nratio: skillpack's time / beside's (below 1: skillpack takes less); a "
          "yardstick is another skillpack command of the same tree.")
    if len(trees) > 1:
        named = args.against if trees[1].name == args.against else (
            f"{args.against} ({trees[1].name})")
        print(f"old: {named}; new: this tree.")
    print()
    print(table(rows, trees))
    return 0


if __name__ == "__main__":
    sys.exit(main())
