"""The in-process digest of issue 18's two per-file workloads in one fresh process, wall and
CPU time: for comparing two source trees run in turn (an A/B on a shared machine).

    python benchmarks/digest_ab.py [--runs N] [--small DIR]
    # OLD and NEW two source trees (git archive COMMIT skillpack | tar -x -C OLD):
    for i in 1 2 3; do for t in OLD NEW; do PYTHONPATH=$t python benchmarks/digest_ab.py; done; done

Lines: the corpus digest (`skillpack.packing.verify.digest` of each of the 182 skills) and the
digest of one skill of 10,000 files of 4 KiB of random bytes (`bench_build.make_small`, in a
temporary folder, or the tree at DIR that `--small` names, made once by
``--make-small DIR``, so that every process of an A/B digests the same files), each a median
of N (default 5) after a warm-up run; CPU is the process's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_build import CORPUS, cpu, make_small


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--small", type=Path, help="the 10,000-file skill to digest")
    parser.add_argument("--make-small", type=Path, help="make that skill at this path, exit")
    args = parser.parse_args()
    if args.make_small is not None:
        make_small(args.make_small, 10_000)
        return 0

    import skillpack
    from skillpack.packing.verify import digest

    every = sorted(str(p.parent) for p in CORPUS.glob("*/*/SKILL.md"))
    with tempfile.TemporaryDirectory() as tmp:
        small = args.small
        if small is None:
            small = Path(tmp) / "small"
            make_small(small, 10_000)
        jobs: dict[str, Callable[[], object]] = {
            "corpus digest (182 skills)": lambda: [digest(f) for f in every],
            "10,000 x 4 KiB digest": lambda: digest(small),
        }
        print(f"skillpack from {Path(skillpack.__file__).parent}", flush=True)
        for name, job in jobs.items():
            job()  # warm-up
            walls, cpus = [], []
            for _ in range(args.runs):
                wall, used = time.perf_counter(), cpu()
                job()
                cpus.append(cpu() - used)
                walls.append(time.perf_counter() - wall)
            print(f"  {name:<28} wall {statistics.median(walls) * 1e3:7.1f} ms   "
                  f"CPU {statistics.median(cpus) * 1e3:7.1f} ms", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
