"""The in-process work of issue 18 in one fresh process, wall and CPU time: for comparing two
commits run in turn (an A/B on a shared machine, where two runs minutes apart differ more
than the code does).

    python benchmarks/in_process.py [--runs N] [--tmp DIR]
    # A/B, OLD and NEW two source trees (git archive COMMIT skillpack | tar -x -C OLD):
    for i in 1 2; do for t in OLD NEW; do PYTHONPATH=$t python benchmarks/in_process.py; done; done

Lines: the corpus digest (`skillpack.packing.verify.digest` of each of the 182 skills), the
check of the corpus (`check_skill`), the pack of the 181 valid skills (`pack_skills`, fsync'd,
into a fresh folder), the digest of one generated 256 MiB file. Medians of N (default 3) after
a warm-up round, ``os.sync()`` before each; CPU is the process's, all threads.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_build import CORPUS, REFUSED, cpu, make_big

MiB = 1 << 20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tmp", type=Path)
    args = parser.parse_args()

    import skillpack
    from skillpack.packing.check import check_skill
    from skillpack.packing.pack import pack_skills
    from skillpack.packing.verify import digest

    every = sorted(p.parent for p in CORPUS.glob("*/*/SKILL.md"))
    valid = [f for f in every if f.relative_to(CORPUS).as_posix() != REFUSED]
    root = Path(tempfile.mkdtemp(prefix="skillpack-inproc-", dir=args.tmp))
    try:
        big = root / "big"
        make_big(big, 256 * MiB)
        out = root / "out"

        def pack() -> None:
            shutil.rmtree(out, ignore_errors=True)
            pack_skills(valid, out)

        jobs: dict[str, Callable[[], object]] = {
            "corpus digest": lambda: [digest(f) for f in every],
            "corpus check": lambda: [check_skill(f) for f in every],
            "corpus pack": pack,
            "256 MiB digest": lambda: digest(big),
        }
        wall: dict[str, list[float]] = {name: [] for name in jobs}
        used: dict[str, list[float]] = {name: [] for name in jobs}
        for round_ in range(args.runs + 1):
            for name, job in jobs.items():
                os.sync()
                start, start_cpu = time.perf_counter(), cpu()
                job()
                if round_:
                    wall[name].append(time.perf_counter() - start)
                    used[name].append(cpu() - start_cpu)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"{Path(skillpack.__file__).parent.parent}: medians of {args.runs}, wall / CPU; load "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    for name in jobs:
        print(f"  {name:<16} {statistics.median(wall[name]) * 1e3:8.1f} / "
              f"{statistics.median(used[name]) * 1e3:8.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
