"""JSON always: with --json every command prints one JSON document on stdout, on failure too,
each problem with code, message, file and line, and the skill called ``name`` everywhere."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import cli
from helpers.paths import FIXTURES

BROKEN = FIXTURES / "broken" / "frontmatter-unterminated"
PROBLEM_KEYS = {"severity", "code", "message", "file", "line"}


def _leaky(tmp_path: Path) -> Path:
    skill = tmp_path / "leaky"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: leaky\ndescription: Leaks a file.\n---\nx\n")
    (skill / ("." + "env")).write_text("A=1\n")
    return skill


def _document(*args: object) -> Any:
    result = cli(*args)
    assert result.exit_code == 1, result.output
    return json.loads(result.stdout)  # one document, nothing else on stdout


def _problems(doc: Any) -> list[dict[str, Any]]:
    items = doc if isinstance(doc, list) else [doc]
    found = [p for item in items for p in item["problems"]]
    assert found and all(set(p) == PROBLEM_KEYS for p in found)
    return found


@pytest.mark.parametrize("command", ["digest", "files", "programs", "check", "lint"])
def test_a_broken_skill_md_is_a_failed_item_not_an_empty_list(command: str) -> None:
    doc = _document(command, "--json", BROKEN)
    assert isinstance(doc, list) and len(doc) == 1
    assert doc[0]["path"] == str(BROKEN) and "name" in doc[0] and "skill" not in doc[0]
    assert _problems(doc)[0]["severity"] == "error"


@pytest.mark.parametrize("command", ["digest", "files", "programs", "check", "lint"])
def test_a_path_holding_no_skill_is_a_failed_item(command: str, tmp_path: Path) -> None:
    doc = _document(command, "--json", tmp_path)
    assert [p["code"] for p in _problems(doc)] == ["no-skill"]


def test_pack_and_bundle_refusals_are_documents(tmp_path: Path) -> None:
    leaky = _leaky(tmp_path)
    for args in (("pack", leaky, "-o", tmp_path / "out"),
                 ("bundle", leaky, "-o", tmp_path / "b.bundle")):
        doc = _document(*args, "--json")
        assert doc["ok"] is False and doc["error"]
        # the file as check names it: below the folder given
        assert [(p["code"], p["file"]) for p in _problems(doc)] == [("secret",
                                                                     str(leaky / ".env"))]
    assert not (tmp_path / "out").exists() and not (tmp_path / "b.bundle").exists()


def test_inspect_of_a_broken_archive_is_a_document(tmp_path: Path) -> None:
    bad = tmp_path / "bad.skill"
    bad.write_bytes(b"PK\x03\x04 not a zip")
    doc = _document("inspect", "--json", bad)
    assert doc["ok"] is False and _problems(doc)


def test_verify_reports_every_target_that_fails_and_still_verifies_the_rest(
        tmp_path: Path) -> None:
    bad, worse = tmp_path / "bad.skill", tmp_path / "worse.skill"
    bad.write_bytes(b"PK\x03\x04 not a zip")
    worse.write_bytes(b"")
    doc = _document("verify", "--json", bad, FIXTURES / "waitlist", worse)
    assert [(item.get("target"), item["ok"]) for item in doc] == [
        (str(bad), False), (str(FIXTURES / "waitlist"), True), (str(worse), False)]
    assert doc[0]["name"] is None and doc[0]["path"] == str(bad) and _problems(doc[:1])
    text = cli("verify", bad, FIXTURES / "waitlist", worse)
    assert text.exit_code == 1
    assert "ok  " in text.stdout and "waitlist" in text.stdout
    assert str(bad) in text.stderr and str(worse) in text.stderr


def test_verify_of_a_repository_with_a_broken_skill_verifies_every_other(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder of skills, one of them broken: the broken one is a failed item named by its
    folder, each other skill is verified; against a lock that approved it, the broken skill
    is that failure, not "missing", and the good ones are ok. A skill reached by two PATHs
    is verified once."""
    monkeypatch.chdir(tmp_path)
    for name in ("release-notes", "waitlist"):
        shutil.copytree(FIXTURES / name, tmp_path / "skills" / name)
    assert cli("lock", "skills", "-o", "skills.lock").exit_code == 0
    (tmp_path / "skills" / "waitlist" / "SKILL.md").write_text(
        "---\nname: waitlist\ndescription: [unclosed\n---\nbody\n")
    for args in ((), ("--lock", "skills.lock")):
        doc = _document("verify", "--json", *args, "skills", "skills/release-notes")
        assert [(item.get("target"), item.get("name"), item["ok"]) for item in doc] == [
            ("skills/waitlist", None, False), ("skills", "release-notes", True)], doc
        assert [p["code"] for p in _problems(doc[:1])] == ["yaml-syntax"]
        text = cli("verify", *args, "skills")
        assert text.exit_code == 1
        assert "ok        blake3:" in text.stdout and "release-notes" in text.stdout
        assert "missing" not in text.stdout
        assert "skills/waitlist/SKILL.md" in text.stderr


@pytest.mark.parametrize("args", [
    ["check", "--json", "nonexistent"], ["pack", "--json", str(FIXTURES / "waitlist")],
    ["check", "--json", "--target", "gemini", str(FIXTURES / "waitlist")],
    ["check", "--json", "--bogus", "x"], ["catalog", "--format", "json", "nonexistent"],
    ["catalog", "--format=json", "nonexistent"], ["tools", "--format", "gemini", "x"],
    ["unpack", "--json", "--max-members", "0", "x.skill"]])
def test_a_usage_error_on_the_command_line_is_a_json_document_too(args: list[str]) -> None:
    """Caught while click reads the command line, before --json's own callback: still one
    JSON document on stdout (code `usage`), exit 2, nothing of click's on stderr."""
    result = cli(*args)
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["ok"] is False and [p["code"] for p in _problems(doc)] == ["usage"]
    assert "Usage:" not in result.stderr


def test_verify_misuse_is_a_document_with_exit_2(tmp_path: Path) -> None:
    result = cli("verify", "--json", "--digest", "nope", FIXTURES / "waitlist")
    assert result.exit_code == 2
    assert [p["code"] for p in _problems(json.loads(result.stdout))] == ["usage"]


def test_check_json_of_a_valid_skill_names_it_name() -> None:
    result = cli("check", "--json", FIXTURES / "waitlist")
    assert result.exit_code == 0
    [item] = json.loads(result.stdout)
    assert item["name"] == "waitlist" and item["valid"] is True and "skill" not in item
