"""`skillpack check` on the 182 real skills of the corpus (PROVENANCE.md lists the facts)."""

from __future__ import annotations

from collections import Counter

import pytest
import yaml
from helpers.cli import cli
from helpers.paths import CORPUS, CORPUS_SKILLS

from skillpack.packing.check import CheckResult, check_skill
from skillpack.source.discover import find_skills
from skillpack.source.load import parse_skill_file

pytestmark = pytest.mark.corpus

RESULTS: dict[str, CheckResult] = {
    f"{p.parent.name}/{p.name}": check_skill(p) for p in CORPUS_SKILLS
}


def independent_frontmatter(name: str) -> dict[str, object]:
    """The frontmatter read another way (PyYAML's safe loader, plain split)."""
    text = (CORPUS / name / "SKILL.md").read_text(encoding="utf-8")
    data = yaml.safe_load(text.split("\n---", 1)[0].removeprefix("---"))
    assert isinstance(data, dict)
    return data


def test_the_corpus_holds_182_skills() -> None:
    assert len(CORPUS_SKILLS) == 182
    assert find_skills(CORPUS) == CORPUS_SKILLS


def test_exactly_claude_api_fails_on_its_description() -> None:
    failing = {name: r for name, r in RESULTS.items() if not r.valid}
    assert list(failing) == ["anthropics-skills/claude-api"]
    errors = [p for p in failing["anthropics-skills/claude-api"].problems
              if p.severity == "error"]
    assert [(p.code, p.line, p.message) for p in errors] == [
        ("description-too-long", 3, "description is 1068 characters; the limit is 1024")]
    description = independent_frontmatter("anthropics-skills/claude-api")["description"]
    assert isinstance(description, str) and len(description) == 1068


def test_the_25_kdense_skills_with_nested_metadata_pass_with_a_warning() -> None:
    warned = sorted(name for name, r in RESULTS.items()
                    if any(p.code == "metadata-not-string" for p in r.problems))
    assert len(warned) == 25
    assert all(name.startswith("kdense-scientific-skills/") for name in warned)
    assert all(RESULTS[name].valid for name in warned)
    nested = sorted(
        name for name in RESULTS
        if isinstance(meta := independent_frontmatter(name).get("metadata"), dict)
        and any(not isinstance(v, str) for v in meta.values())
    )
    assert warned == nested
    for name in warned:
        for problem in RESULTS[name].problems:
            assert problem.severity == "warning"
            assert problem.line is not None and problem.file is not None


def test_every_warning_in_the_corpus() -> None:
    census = Counter((p.severity, p.code) for r in RESULTS.values() for p in r.problems)
    assert census == {
        ("warning", "metadata-not-string"): 25,
        ("error", "description-too-long"): 1,
        ("warning", "claude-reserved-word"): 1,  # claude-api
        ("warning", "body-too-long"): 1,  # claude-api
        ("warning", "claude-angle-brackets"): 1,
    }


def test_every_corpus_skill_parses_and_is_named_after_its_folder() -> None:
    for folder in CORPUS_SKILLS:
        skill = parse_skill_file(folder)
        assert skill.name == folder.name
        assert skill.description.strip()
        assert skill.tools == ()  # Agent Skills have no tool fences
        assert skill.rendered == skill.body


def test_check_on_the_whole_corpus() -> None:
    result = cli("check", CORPUS)
    assert result.exit_code == 1
    lines = [line for line in result.stdout.splitlines() if not line.startswith("catalog: ")]
    assert lines[-1] == "checked 182 skills: 181 valid, 1 invalid (1 error, 29 warnings)"
    errors = [line for line in lines if ": error: " in line]
    assert errors == [f"{CORPUS / 'anthropics-skills' / 'claude-api' / 'SKILL.md'}:3: error: "
                      "[description-too-long] description is 1068 characters; the limit is 1024"]
    assert len(lines) == 1 + 1 + 29
    # the corpus holds two skill-creators: reported, as bundle and lock refuse them
    [clash] = [line for line in lines if "[duplicate-name]" in line]
    assert clash.startswith(f"{CORPUS / 'openai-skills' / 'skill-creator'}: warning: ")
