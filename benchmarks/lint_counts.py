"""Count what `skillpack check`, `skillpack lint` and the secret scan report on trees of skills.

    python benchmarks/lint_counts.py [--json FILE] [--show CODE] ROOT...

ROOT defaults to the corpus (``../shared/corpus`` beside the repository). For each ROOT it
prints, as markdown tables to paste into docs/LINT.md and docs/SECRETS.md:

* every problem code of ``lint_skill`` (check's problems and the lint's, as `skillpack lint`
  prints them): the number of problems and, in parentheses, of skills with one;
* the verdicts of `skillpack check` (``check_skill``, no option): skills valid and invalid,
  and for the invalid ones each error code with the number of skills it refuses;
* the secret scan over every regular file of the ROOT (not only the files skills carry;
  ``.git`` left out): files and bytes scanned, content findings (``scan_content``, compressed
  assets inflated with unpack's caps) and files the name rules flag (``secret_name_reason``).

``--json FILE`` writes every problem and finding (skill, code, severity, file, line,
message), for reading the findings by hand; ``--show CODE`` prints each problem of CODE.
Nothing is timed. Exit status 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillpack.content.scan import scan_content
from skillpack.content.secrets import secret_name_reason
from skillpack.errors import Problem, SkillError
from skillpack.packing.check import check_skill
from skillpack.packing.lint import lint_problems
from skillpack.skillmd.lint_rules import RULES
from skillpack.source.discover import find_skills
from skillpack.source.load import parse_skill_file

REPO = Path(__file__).resolve().parent.parent
CORPUS = (REPO.parent / "shared" / "corpus").resolve()
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
#: The approver codes, shown even when nothing reports them (severity as usually reported).
ALWAYS: dict[str, str] = {**RULES, "program-dynamic": "warning", "run-code-dynamic": "warning",
                          "run-shell-syntax": "warning", "text-bidi": "warning",
                          "text-invisible": "warning", "text-tag": "warning"}


@dataclass
class Counts:
    """What one ROOT gave."""

    root: str
    skills: int = 0
    valid: int = 0
    problems: Counter[tuple[str, str]] = field(default_factory=Counter)  # (code, severity)
    skills_with: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    refused_by: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    files: int = 0
    size: int = 0
    secret_findings: list[dict[str, Any]] = field(default_factory=list)
    secret_names: list[dict[str, Any]] = field(default_factory=list)
    found: list[dict[str, Any]] = field(default_factory=list)


def _record(counts: Counts, skill: str, problem: Problem) -> None:
    key = (problem.code, problem.severity)
    counts.problems[key] += 1
    counts.skills_with[key].add(skill)
    counts.found.append({"skill": skill, **problem.to_dict()})


def measure_skills(counts: Counts, root: Path) -> None:
    """`check_skill` and then the lint of every skill under `root` (what `lint_skill` does,
    with check's verdict kept apart)."""
    for folder in find_skills(root):
        skill_id = os.path.relpath(folder, root)
        counts.skills += 1
        checked = check_skill(folder)
        if checked.valid:
            counts.valid += 1
        for code in {p.code for p in checked.problems if p.severity == "error"}:
            counts.refused_by[code].add(skill_id)
        for problem in checked.problems:
            _record(counts, skill_id, problem)
        try:
            skill = parse_skill_file(folder)
        except SkillError:
            continue
        seen = set(checked.problems)
        for problem in lint_problems(skill):
            placed = Problem(problem.severity, problem.code, problem.message,
                             os.path.join(str(folder), problem.file or "SKILL.md"),
                             problem.line)
            if placed not in seen:
                _record(counts, skill_id, placed)


def measure_secrets(counts: Counts, root: Path) -> None:
    """The secret scan over every regular file under `root` but ``.git``."""
    for top, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in sorted(names):
            path = os.path.join(top, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            reason = secret_name_reason(rel)
            if reason is not None:
                counts.secret_names.append({"file": rel, "reason": reason})
            with open(path, "rb") as handle:
                data = handle.read()
            counts.files += 1
            counts.size += len(data)
            scanned = scan_content(rel, data, frozenset())
            for problem in scanned.problems(rel):
                counts.secret_findings.append({"file": rel, "code": problem.code,
                                               "message": problem.message,
                                               "line": problem.line})


def _cell(counts: Counts, key: tuple[str, str]) -> str:
    n = counts.problems.get(key, 0)
    return f"{n:,} ({len(counts.skills_with[key]):,})" if n else "0"


def print_tables(all_counts: list[Counts]) -> None:
    names = [c.root for c in all_counts]
    print("| code | severity | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    found = {k for c in all_counts for k in c.problems}
    found |= {(code, severity) for code, severity in ALWAYS.items()
              if not any(k[0] == code for k in found)}
    keys = sorted(found, key=lambda k: (SEVERITY_ORDER[k[1]], k[0]))
    for key in keys:
        print(f"| `{key[0]}` | {key[1]} | " + " | ".join(_cell(c, key) for c in all_counts)
              + " |")
    print()
    print("| check | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    print("| skills | " + " | ".join(f"{c.skills:,}" for c in all_counts) + " |")
    print("| valid | " + " | ".join(f"{c.valid:,}" for c in all_counts) + " |")
    print("| invalid | " + " | ".join(f"{c.skills - c.valid:,}" for c in all_counts) + " |")
    for code in sorted({code for c in all_counts for code in c.refused_by}):
        print(f"| refused by `{code}` | "
              + " | ".join(f"{len(c.refused_by.get(code, ())):,}" for c in all_counts) + " |")
    print()
    print("| secret scan | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    print("| files | " + " | ".join(f"{c.files:,}" for c in all_counts) + " |")
    print("| MB | " + " | ".join(f"{c.size / 1e6:.1f}" for c in all_counts) + " |")
    print("| content findings | " + " | ".join(f"{len(c.secret_findings)}"
                                              for c in all_counts) + " |")
    print("| secret names | " + " | ".join(f"{len(c.secret_names)}"
                                          for c in all_counts) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("roots", nargs="*", type=Path)
    parser.add_argument("--json", type=Path, help="write every problem and finding here")
    parser.add_argument("--show", action="append", default=[], metavar="CODE",
                        help="print every problem of CODE (repeatable)")
    args = parser.parse_args(argv)
    roots: list[Path] = args.roots or [CORPUS]
    all_counts = []
    for root in roots:
        counts = Counts(root.name.replace("+", "/"))  # a mirror folder: owner+name
        measure_skills(counts, root)
        measure_secrets(counts, root)
        all_counts.append(counts)
    print_tables(all_counts)
    for counts in all_counts:
        for item in counts.secret_findings + counts.secret_names:
            print(f"{counts.root}: secret: {item}", file=sys.stderr)
        for item in counts.found:
            if item["code"] in args.show:
                print(f"{counts.root}: {item['file']}:{item.get('line') or ''}: "
                      f"[{item['code']}] {item['message']}")
    if args.json is not None:
        args.json.write_text(json.dumps(
            [{"root": c.root, "problems": c.found, "secret_findings": c.secret_findings,
              "secret_names": c.secret_names} for c in all_counts], indent=1, sort_keys=True)
            + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
