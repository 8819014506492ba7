"""skillpack against the reference validator (skills-ref): every disagreement is documented.

Runs the comparison of benchmarks/conformance.py on the corpus and fixtures/, and asserts
that its disagreements and skillpack-only warnings are exactly the tables of
docs/CONFORMANCE.md; then builds each documented probe and checks both validators on it.
skills-ref is in the project's test extra: without it these tests fail rather than skip.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import CORPUS, FIXTURES, REPO, load_benchmark
from helpers.skills import write_skill

DOC = (REPO / "docs" / "CONFORMANCE.md").read_text(encoding="utf-8")


conformance = load_benchmark("conformance")


@functools.cache
def comparison() -> Any:
    """The comparison on the corpus and fixtures/, made once (by the first test that needs it:
    a module-level run would fail collection without a corpus)."""
    return conformance.compare([("corpus", CORPUS), ("fixtures", FIXTURES)])


def table(name: str) -> list[list[str]]:
    """The body rows of the table between <!-- name:start --> and <!-- name:end -->."""
    match = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", DOC, re.S)
    assert match is not None, f"docs/CONFORMANCE.md has no {name} table"
    rows = [line for line in match.group(1).splitlines() if line.startswith("|")][2:]
    return [[cell.strip().strip("`") for cell in row.strip("|").split("|")] for row in rows]


@pytest.mark.corpus
def test_every_skill_was_compared() -> None:
    fixtures = len(conformance.find_skills(FIXTURES))
    assert comparison().skills == 182 + fixtures


@pytest.mark.corpus
def test_disagreements_are_exactly_the_documented_ones() -> None:
    documented = {(r[0], r[1], r[2], r[3]) for r in table("disagreements")}
    found = {(d.skill, d.rule, d.skills_ref, d.skillpack) for d in comparison().disagreements}
    assert found - documented == set(), "disagreements missing from docs/CONFORMANCE.md"
    assert documented - found == set(), "docs/CONFORMANCE.md lists disagreements gone"


@pytest.mark.corpus
def test_no_disagreement_on_the_corpus() -> None:
    assert [d for d in comparison().disagreements if d.skill.startswith("corpus/")] == []
    both_fail = [name for name, (messages, problems) in comparison().details.items()
                 if messages and any(": error: " in p for p in problems)
                 and name.startswith("corpus/")]
    assert both_fail == ["corpus/anthropics-skills/claude-api"]


@pytest.mark.corpus
def test_skillpack_only_warnings_are_the_documented_counts() -> None:
    documented = {row[0]: int(row[1]) for row in table("warnings")}
    assert comparison().warning_counts() == documented
    # the corpus, and the fixtures made to fire the approver's warnings
    assert all(skill.startswith(("corpus/", "fixtures/approver/"))
               for skill, _ in comparison().extra_warnings)


def test_every_documented_reason_has_a_section() -> None:
    anchors = {re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
               for title in re.findall(r"^### (.+)$", DOC, re.M)}
    for row in table("disagreements"):
        anchor = re.search(r"\(#([a-z0-9-]+)\)", row[4])
        assert anchor is not None, row
        assert anchor.group(1) in anchors, row


def probe_name(row: list[str]) -> str:
    return row[0].split()[0].strip("`")


PROBES: dict[str, tuple[str, str, dict[str, str]]] = {
    # name: (SKILL.md file name, text, skills-ref rule expected)
    "unknown-key": ("SKILL.md", "---\nname: unknown-key\ndescription: d\nversion: 1.0\n---\n",
                    {"rule": "unknown-key:version", "skillpack": "unknown-key"}),
    "flow-list": ("SKILL.md",
                  "---\nname: flow-list\ndescription: d\nallowed-tools: [Read, Write]\n---\n",
                  {"rule": "yaml", "skillpack": ""}),
    "bom": ("SKILL.md", "\ufeff---\nname: bom\ndescription: d\n---\n",
            {"rule": "frontmatter-missing", "skillpack": ""}),
    "lowercase-skill-md": ("skill.md", "---\nname: lowercase-skill-md\ndescription: d\n---\n",
                           {"rule": "", "skillpack": "skill-md-case"}),
}


@pytest.mark.parametrize("row", table("probes"), ids=lambda r: probe_name(r))
def test_documented_probe(tmp_path: Path, row: list[str]) -> None:
    name = probe_name(row)
    file_name, text, expect = PROBES[name]
    folder = tmp_path / name
    folder.mkdir()
    (folder / file_name).write_text(text, encoding="utf-8")
    if file_name != "SKILL.md" and (folder / "SKILL.md").exists():
        pytest.skip("case-insensitive file system: SKILL.md and skill.md are one file")
    ref = conformance.ref_rules(conformance.run_skills_ref(folder))
    ours, _ = conformance.skillpack_rules(folder)
    assert ref == ({expect["rule"]} if expect["rule"] else set())
    assert ("error" if ref else "-") == row[1]
    mine = max(ours.values(), key=["warning", "error"].index) if ours else "-"
    assert mine == row[2]
    code = expect["skillpack"]
    assert {c.split(":")[0] for c in ours} == ({code} if code else set())


def test_probe_table_covers_every_probe() -> None:
    assert sorted(probe_name(r) for r in table("probes")) == sorted(PROBES)


@pytest.mark.corpus
def test_script_reports_and_checks(capsys: pytest.CaptureFixture[str]) -> None:
    assert conformance.main([str(CORPUS)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == ("compared 182 skills: 0 disagreements, 28 skillpack-only "
                                   "warnings")
    assert conformance.main(["--check", str(FIXTURES / "broken" / "tool-syntax")]) == 1
    out = capsys.readouterr().out
    assert "  tool-syntax: [tool-syntax] skills-ref: -, skillpack: error\n" in out


def test_a_clean_skill_raises_no_rule(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "x", "---\nname: x\ndescription: d\n---\n")
    assert conformance.skillpack_rules(folder) == ({}, [])
