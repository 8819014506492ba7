"""Run the reference validator (skills-ref) and skillpack on the same skills; print every
disagreement.

    python benchmarks/conformance.py [ROOT...]

ROOT defaults to the corpus (``../shared/corpus`` beside the repository) and ``fixtures/``.
skills-ref is called in-process (``skills_ref.validator.validate``, the function behind
``agentskills validate``); skillpack through ``check_skill``.

skills-ref reports English sentences, skillpack stable codes, so each skills-ref message is
mapped to a *rule*: the skillpack code it corresponds to (``unknown-key:<field>`` for unknown
fields, ``yaml`` for any frontmatter YAML refusal). For every skill and rule the two verdicts
are compared:

* a **disagreement** is a rule on which the verdicts differ and one of them is an error
  (skills-ref errors where skillpack is silent or only warns, or skillpack errors where
  skills-ref is silent). docs/CONFORMANCE.md lists each one and why it is deliberate, and
  tests/project/test_conformance.py fails when the list and this script part ways;
* a **skillpack-only warning** is advice skillpack adds where skills-ref has no rule. It does
  not change a verdict; the script counts them per code.

Exit status: 0 always when run as a report (``--check`` makes it 1 when any disagreement is
found), 2 when skills-ref is not installed.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from skillpack.packing.check import check_skill
from skillpack.source.discover import find_skills

REPO = Path(__file__).resolve().parent.parent
CORPUS = (REPO.parent / "shared" / "corpus").resolve()
FIXTURES = REPO / "fixtures"

#: skillpack codes that skills-ref reports as one "Invalid YAML in frontmatter" message.
YAML_FAMILY = frozenset({"yaml-syntax", "yaml-anchor", "yaml-alias", "yaml-merge-key",
                         "yaml-tag", "yaml-key", "duplicate-key"})

#: skills-ref message (regular expression, matched at the start) -> skillpack rule
_REF_RULES: tuple[tuple[str, str], ...] = (
    (r"Missing required field in frontmatter: name", "name-missing"),
    (r"Missing required field in frontmatter: description", "description-missing"),
    (r"Field 'name' must be a non-empty string", "name-empty"),
    (r"Skill name '.*' exceeds \d+ character limit", "name-too-long"),
    (r"Skill name '.*' must be lowercase", "name-not-lowercase"),
    (r"Skill name cannot start or end with a hyphen", "name-hyphen-edge"),
    (r"Skill name cannot contain consecutive hyphens", "name-double-hyphen"),
    (r"Skill name '.*' contains invalid characters", "name-invalid-characters"),
    (r"Directory name '.*' must match skill name", "name-mismatch"),
    (r"Field 'description' must be a non-empty string", "description-empty"),
    (r"Description exceeds \d+ character limit", "description-too-long"),
    (r"Field 'compatibility' must be a string", "compatibility-type"),
    (r"Compatibility exceeds \d+ character limit", "compatibility-too-long"),
    (r"SKILL.md must start with YAML frontmatter", "frontmatter-missing"),
    (r"SKILL.md frontmatter not properly closed", "frontmatter-unterminated"),
    (r"SKILL.md frontmatter must be a YAML mapping", "frontmatter-not-mapping"),
    (r"Invalid YAML in frontmatter", "yaml"),
    (r"Missing required file: SKILL.md", "no-skill-md"),
)
_UNEXPECTED = re.compile(r"Unexpected fields in frontmatter: (.*?)\. Only ")
_UNKNOWN_KEY = re.compile(r"unknown frontmatter key '(.*?)'")


@dataclass(frozen=True, order=True)
class Disagreement:
    """One rule on which skills-ref and skillpack give different verdicts for one skill.

    ``skills_ref`` is ``error`` or ``-`` (silent); ``skillpack`` is ``error``, ``warning``
    or ``-``.
    """

    skill: str
    rule: str
    skills_ref: str
    skillpack: str

    def __str__(self) -> str:
        return (f"{self.skill}: [{self.rule}] skills-ref: {self.skills_ref}, "
                f"skillpack: {self.skillpack}")


@dataclass(frozen=True)
class Comparison:
    """Everything found over a set of skills."""

    skills: int
    disagreements: tuple[Disagreement, ...]
    #: (skill, rule) for every warning skillpack gives where skills-ref is silent
    extra_warnings: tuple[tuple[str, str], ...]
    #: skill label -> (skills-ref messages, skillpack problems as text), for the report
    details: dict[str, tuple[list[str], list[str]]]

    def warning_counts(self) -> dict[str, int]:
        return dict(sorted(Counter(rule for _, rule in self.extra_warnings).items()))


def ref_rules(messages: Iterable[str]) -> set[str]:
    """The skillpack rules that skills-ref's error messages correspond to."""
    rules: set[str] = set()
    for message in messages:
        unexpected = _UNEXPECTED.match(message)
        if unexpected is not None:
            rules.update(f"unknown-key:{key.strip()}" for key in unexpected.group(1).split(","))
            continue
        for pattern, rule in _REF_RULES:
            if re.match(pattern, message):
                rules.add(rule)
                break
        else:
            rules.add(f"skills-ref: {message.splitlines()[0]}")
    return rules


def skillpack_rules(folder: Path) -> tuple[dict[str, str], list[str]]:
    """skillpack's verdict per rule for one skill (error beats warning), and its problems."""
    result = check_skill(folder)
    rules: dict[str, str] = {}
    for problem in result.problems:
        rule = problem.code
        if rule in YAML_FAMILY:
            rule = "yaml"
        elif rule == "unknown-key":
            key = _UNKNOWN_KEY.match(problem.message)
            rule = f"unknown-key:{key.group(1) if key else '?'}"
        if rules.get(rule) != "error":
            rules[rule] = problem.severity
    return rules, [str(p) for p in result.problems]


def run_skills_ref(folder: Path) -> list[str]:
    """skills-ref's messages for one skill; an exception it raises becomes a message."""
    from skills_ref.validator import validate  # type: ignore[import-untyped]

    try:
        return list(validate(folder))
    except UnicodeDecodeError as exc:  # skills-ref reads SKILL.md without catching this
        return [f"Crashed: UnicodeDecodeError: {exc.reason}"]


_CRASH_RULES = {"Crashed: UnicodeDecodeError": "encoding"}


def compare(roots: Sequence[tuple[str, Path]]) -> Comparison:
    """Compare the verdicts on every skill under each ``(label, root)``.

    A skill is named ``label/<path relative to root>``.
    """
    disagreements: list[Disagreement] = []
    extra: list[tuple[str, str]] = []
    details: dict[str, tuple[list[str], list[str]]] = {}
    count = 0
    for label, root in roots:
        for folder in find_skills(root):
            count += 1
            rel = folder.relative_to(root).as_posix()
            name = label if rel == "." else f"{label}/{rel}"
            messages = run_skills_ref(folder)
            theirs = ref_rules(m for m in messages if not m.startswith("Crashed: "))
            for message in messages:
                for prefix, rule in _CRASH_RULES.items():
                    if message.startswith(prefix):
                        theirs.add(rule)
            ours, problems = skillpack_rules(folder)
            details[name] = (messages, problems)
            for rule in sorted(theirs | set(ours)):
                ref = "error" if rule in theirs else "-"
                mine = ours.get(rule, "-")
                if ref == mine:
                    continue
                if ref == "-" and mine == "warning":
                    extra.append((name, rule))
                else:
                    disagreements.append(Disagreement(name, rule, ref, mine))
    return Comparison(count, tuple(sorted(disagreements)), tuple(sorted(extra)), details)


def default_roots() -> list[tuple[str, Path]]:
    return [("corpus", CORPUS), ("fixtures", FIXTURES)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("roots", nargs="*", type=Path,
                        help="folders searched for skills (default: the corpus and fixtures/)")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when there is any disagreement")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="show both validators' messages for each disagreeing skill")
    args = parser.parse_args(argv)
    try:
        import skills_ref  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        print("conformance: skills-ref is not installed (pip install skills-ref)",
              file=sys.stderr)
        return 2
    roots = [(p.name, p) for p in args.roots] if args.roots else default_roots()
    result = compare(roots)
    print(f"compared {result.skills} skills: {len(result.disagreements)} disagreements, "
          f"{len(result.extra_warnings)} skillpack-only warnings")
    if result.disagreements:
        print("\ndisagreements (rule: skills-ref verdict, skillpack verdict):")
        shown: set[str] = set()
        for item in result.disagreements:
            print(f"  {item}")
            if args.verbose and item.skill not in shown:
                shown.add(item.skill)
                messages, problems = result.details[item.skill]
                for message in messages:
                    print(f"      skills-ref: {message.splitlines()[0]}")
                for problem in problems:
                    print(f"      skillpack:  {problem}")
    if result.extra_warnings:
        print("\nskillpack-only warnings (skills-ref has no such rule; verdicts agree):")
        for rule, count in result.warning_counts().items():
            print(f"  {rule}: {count} skill{'s' * (count != 1)}")
    return 1 if args.check and result.disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
