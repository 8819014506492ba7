"""`skillpack lint` and `check --lint`: every approver code fires on its fixture, alone, with
its severity; --strict, --json, exit codes; the corpus holds no lint error."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from helpers.cli import cli
from helpers.paths import CORPUS_SKILLS, FIXTURES
from helpers.skills import make_tree

from skillpack.packing.lint import lint_skill
from skillpack.skillmd.lint_rules import RULES

APPROVER = {
    "program-dynamic": "warning", "run-code-dynamic": "warning", "run-shell-syntax": "warning",
    "text-bidi": "error", "text-tag": "error", "text-invisible": "warning",
}
ALL = {**{code: (FIXTURES / "lint" / code, sev) for code, sev in RULES.items()},
       **{code: (FIXTURES / "approver" / code, sev) for code, sev in APPROVER.items()}}




@pytest.mark.parametrize("code", sorted(ALL))
def test_each_fixture_fires_its_code_alone(code: str) -> None:
    folder, severity = ALL[code]
    result = cli("lint", "--json", folder)
    [entry] = json.loads(result.stdout)
    assert [(p["code"], p["severity"]) for p in entry["problems"]] == [(code, severity)]
    assert result.exit_code == (1 if severity == "error" else 0)
    assert entry["valid"] is (severity != "error")


def test_human_lines_and_the_summary() -> None:
    folder = FIXTURES / "lint" / "file-unreferenced"
    result = cli("lint", folder)
    assert result.exit_code == 0  # info never fails
    assert result.stdout.splitlines() == [
        f"{folder}/scripts/orphan.py: info: [file-unreferenced] nothing in SKILL.md (or the "
        "files it names) refers to 'scripts/orphan.py': a model never learns it is there; "
        "mention it, or leave it out",
        "linted 1 skill: 1 valid, 0 invalid (0 errors, 0 warnings, 1 info)"]


@pytest.mark.parametrize("code", ["program-dynamic", "run-code-dynamic"])
def test_strict_makes_a_model_chosen_program_or_code_an_error(code: str) -> None:
    folder = FIXTURES / "approver" / code
    result = cli("lint", "--strict", folder)
    assert result.exit_code == 1
    assert f": error: [{code}]" in result.stdout


def test_strict_leaves_other_warnings_warnings() -> None:
    result = cli("lint", "--strict", FIXTURES / "approver" / "run-shell-syntax")
    assert result.exit_code == 0 and ": warning: [run-shell-syntax]" in result.stdout


def test_check_lint_adds_the_lint_to_check() -> None:
    folder = FIXTURES / "lint" / "run-path-missing"
    assert cli("check", folder).exit_code == 0
    result = cli("check", "--lint", folder)
    assert result.exit_code == 1 and "[run-path-missing]" in result.stdout
    # invisible text in SKILL.md is `check`'s own error (pack refuses it too), not lint's
    plain = cli("check", "--json", FIXTURES / "approver" / "text-tag")
    assert [p["code"] for p in json.loads(plain.stdout)[0]["problems"]] == ["text-tag"]


def test_a_walk_refusal_is_reported_and_the_text_rules_still_run(tmp_path: Path) -> None:
    folder = make_tree(tmp_path / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: Demo. Use when asked.\n---\n"
                    "Say \u202ehello.\n",
        "." + "env": "X=1\n",
    })
    codes = [p.code for p in lint_skill(folder).problems]
    assert sorted(codes) == ["secret", "text-bidi"]


def test_escape_codes_in_problems_are_shown_escaped(tmp_path: Path) -> None:
    folder = make_tree(tmp_path / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: Demo. Use when asked.\n---\n"
                    "```tool\nid: go\ndescription: Go.\nparams:\n  x:\n    type: string\n"
                    "run: curl $x '\x1b[2K'\n```\n",
    })
    result = cli("lint", folder)
    assert "\x1b" not in result.stdout and "\\x1b[2K" in result.stdout


@pytest.mark.corpus
def test_the_corpus_has_no_lint_error() -> None:
    counts: Counter[str] = Counter()
    for folder in CORPUS_SKILLS:
        for problem in lint_skill(folder).problems:
            counts[problem.code] += 1
            if problem.code in APPROVER or problem.code in RULES:
                assert problem.severity != "error", problem
    assert counts["program-dynamic"] == counts["run-code-dynamic"] == 0
    assert counts["text-bidi"] == 2  # U+200E marks in one reference file (warnings)
