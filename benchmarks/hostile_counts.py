"""Run the hostile suite and print how many hostile inputs it tried, refused and accepted.

    python benchmarks/hostile_counts.py            # runs pytest tests/hostile (slow tests too)
    python benchmarks/hostile_counts.py --from F   # only prints the counts of a tally file F

Every hostile test records its input in a tally (tests/helpers/hostile.py); conftest.py writes
the tally as JSON to ``$SKILLPACK_HOSTILE_TALLY`` at the end of the session. This script sets
that variable, runs the suite, and prints a markdown table to paste into docs/SECURITY.md.

An *attempt* is one input tried through one entry point (`load`, `verify_bytes`, `pack`,
`skillpack verify`...); an input is counted once however many entry points try it. Outcomes:

* refused: refused with the expected `SkillpackError` subclass and a message naming the
  member or path and the reason;
* neutralised: loaded or packed, but nothing served, run or carried changed (an altered zip
  field the runtime never uses, a forged manifest left out of the walk);
* handled: a stress or fuzz input that must work, and did (a tree 1,000 folders deep, a
  hypothesis example that raised nothing but `SkillError`);
* accepted, wrong-error, crashed: a hostile input let through, refused with the wrong error
  or an unclear message, or a traceback. The goal is none.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OUTCOMES = ("refused", "neutralised", "handled", "accepted", "wrong-error", "crashed")
CATEGORIES = {"archive": "archives", "bundle": "bundles", "tree": "skill folders",
              "write": "writes", "parser": "parsers", "secret": "secrets",
              "foreign-archive": "foreign archives"}


def run_suite(tally: Path, extra: list[str]) -> int:
    env = {**os.environ, "SKILLPACK_HOSTILE_TALLY": str(tally)}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--run-slow",
               "tests/hostile", *extra]
    return subprocess.run(command, cwd=REPO, env=env, check=False).returncode


def summarise(records: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per category: inputs, attempts, and attempts per outcome."""
    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    inputs: dict[tuple[str, str], int] = {}
    for record in records:
        row = table[record["category"]]
        row["attempts"] += record["count"]
        row[record["outcome"]] += record["count"]
        key = (record["category"], record["case"])
        inputs[key] = max(inputs.get(key, 0), record["count"])
    for (category, _), count in inputs.items():
        table[category]["inputs"] += count
    return table


def print_table(table: dict[str, dict[str, int]]) -> None:
    columns = ["inputs", "attempts", *OUTCOMES]
    print("| | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    total: dict[str, int] = defaultdict(int)
    for category in [*CATEGORIES, *sorted(set(table) - set(CATEGORIES))]:
        if category not in table:
            continue
        row = table[category]
        for column in columns:
            total[column] += row.get(column, 0)
        cells = " | ".join(f"{row.get(c, 0):,}" for c in columns)
        print(f"| {CATEGORIES.get(category, category)} | {cells} |")
    cells = " | ".join(f"**{total[c]:,}**" for c in columns)
    print(f"| **all** | {cells} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="source", type=Path,
                        help="print the counts of this tally file instead of running the suite")
    parser.add_argument("pytest_args", nargs="*", help="extra arguments for pytest")
    args = parser.parse_args()
    status = 0
    if args.source is None:
        fd, name = tempfile.mkstemp(prefix="hostile-tally-", suffix=".json")
        os.close(fd)
        args.source = Path(name)
        status = run_suite(args.source, args.pytest_args)
        print()
    try:
        data = json.loads(args.source.read_text())
    except (OSError, ValueError) as exc:
        raise SystemExit(f"hostile_counts: cannot read the tally {args.source}: {exc}") from None
    print_table(summarise(data["records"]))
    counts = data["counts"]
    bad = counts["accepted"] + counts["wrong-error"] + counts["crashed"]
    print(f"\nhostile inputs accepted: {counts['accepted']}; refused with the wrong error: "
          f"{counts['wrong-error']}; crashed: {counts['crashed']} (tally: {args.source})")
    return status or (1 if bad else 0)


if __name__ == "__main__":
    sys.exit(main())
