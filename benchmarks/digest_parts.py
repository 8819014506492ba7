"""Where the in-process corpus digest's time goes, by subtraction (issue 18): CPU time of this
process (all its threads) for each part, medians of N rounds taken in turn after a warm-up.

    python benchmarks/digest_parts.py [--runs N] [--only PART]...
    # A/B of two source trees (OLD = git archive COMMIT skillpack | tar -x -C OLD), the
    # floor and the digest only, in turn:
    for i in 1 2 3 4; do for t in OLD $PWD; do
        PYTHONPATH=$t python benchmarks/digest_parts.py --only floor --only digest; done; done

* read + BLAKE3: every carried file opened, read whole, hashed (the floor of issue 18);
* digest: `skillpack.source.records.digest_skill` of each of the 182 corpus skills;
* parse: `load_skill` (SKILL.md read, frontmatter composed and checked, body parsed);
* walk, listing only: `skill_fileset(skill)` (no file opened);
* walk, reading: `skill_fileset(skill, read=True)`: listing, opening, reading, BLAKE3 and the
  content scan of every file;
* content scan in memory: `scan_content` of every file's bytes (already read);
* needle search in memory: the one RE2 search for any rule's needle (`_present`), the least
  the content scan does.

digest is about parse + walk (reading); walk (reading) is about listing + read and hash +
content scan.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_build import CORPUS, carried, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", action="append", metavar="PART",
                        help="time only the parts whose name starts with PART (repeatable)")
    args = parser.parse_args()

    from blake3 import blake3

    from skillpack.content import secret_rules
    from skillpack.content.scan import scan_content
    from skillpack.source.load import load_skill, skill_fileset
    from skillpack.source.records import digest_skill

    folders = sorted(p.parent for p in CORPUS.glob("*/*/SKILL.md"))
    skills = [load_skill(f) for f in folders]
    items = [item for skill in carried(folders, CORPUS) for item in skill]
    datas = [(name, path.read_bytes()) for path, name in items]

    def read_hash() -> None:
        for path, _ in items:
            with open(path, "rb") as handle:
                blake3(handle.read()).digest()

    jobs: dict[str, Callable[[], object]] = {
        "read + BLAKE3 (the floor)": read_hash,
        "digest": lambda: [digest_skill(str(f)) for f in folders],
        "parse (load_skill)": lambda: [load_skill(str(f)) for f in folders],
        "walk, listing only": lambda: [skill_fileset(s) for s in skills],
        "walk, reading (read, hash, scan)": lambda: [skill_fileset(s, read=True)
                                                     for s in skills],
        "content scan in memory": lambda: [scan_content(n, d, frozenset()) for n, d in datas],
        "needle search in memory": lambda: [secret_rules._present(d) for _, d in datas],
    }
    if args.only:
        floor_name = "read + BLAKE3 (the floor)"
        jobs = {name: job for name, job in jobs.items()
                if name == floor_name or any(name.startswith(p) for p in args.only)}
    spent: dict[str, list[float]] = {name: [] for name in jobs}
    for round_ in range(args.runs + 1):
        for name, job in jobs.items():
            start = cpu()
            job()
            if round_:
                spent[name].append(cpu() - start)
    import skillpack

    print(f"{Path(skillpack.__file__).parent}, load "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"corpus: {len(folders)} skills, {len(datas):,} files, "
          f"{sum(len(d) for _, d in datas):,} bytes; CPU time, median of {args.runs}")
    floor = statistics.median(spent["read + BLAKE3 (the floor)"])
    for name, values in spent.items():
        median = statistics.median(values)
        print(f"  {name:<34} {median * 1e3:8.1f} ms  {median / floor:5.2f}x the floor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
