"""Every command that takes several skills reports each problem exactly once, in text and JSON.

The inputs overlap on purpose: a folder of skills and two of its skills again (``skills
skills/long skills/leaky``), as a shell glob or a CI step listing changed skills gives them.
A skill found under two PATHs is read once (`skillpack.source.classify`), and an
error's first line never restates the problem listed under it (the bug: `bundle` printed
"description is 1068 characters; the limit is 1024" on two lines).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from helpers.cli import cli

LONG = ("description-too-long", "skills/long/SKILL.md", 3,
        "description is 1100 characters; the limit is 1024")
LEAKY = ("secret", "skills/leaky/.env", None, "a .env file holds environment secrets")
PATHS = ("skills", "skills/long", "skills/leaky")


@pytest.fixture
def skills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``skills/``: notes (valid), long (a description over 1,024 characters: invalid),
    leaky (a .env: refused by the walk); the current folder is `tmp_path`."""
    for name in ("notes", "long", "leaky"):
        (tmp_path / "skills" / name).mkdir(parents=True)
        description = "x" * 1100 if name == "long" else "Keep notes. Use when notes pile up."
        (tmp_path / "skills" / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\nWrite notes.\n")
    (tmp_path / "skills" / "leaky" / ("." + "env")).write_text("TOKEN=1\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "skills"




def assert_once_in_text(result: Result, *expected: tuple[str, str, int | None, str]) -> None:
    assert result.exit_code == 1, result.output
    for code, file, line, message in expected:
        where = file if line is None else f"{file}:{line}"
        assert f"{where}: error: [{code}] {message}" in result.output, result.output
        assert result.output.count(message) == 1, result.output  # no header restating it
    shown = [x.strip() for x in result.output.splitlines() if "] " in x]
    assert len(shown) == len(set(shown)), result.output


def _problems(doc: Any) -> list[tuple[str, str | None, int | None, str]]:
    if isinstance(doc, dict):
        found = [(doc["code"], doc["file"], doc["line"], doc["message"])
                 if "code" in doc and "severity" in doc else None]
        return [f for f in found if f is not None] + [
            p for value in doc.values() for p in _problems(value)]
    if isinstance(doc, list):
        return [p for item in doc for p in _problems(item)]
    return []


def assert_once_in_json(result: Result, *expected: tuple[str, str, int | None, str]) -> None:
    assert result.exit_code == 1, result.output
    counted = Counter(_problems(json.loads(result.output)))
    assert all(n == 1 for n in counted.values()), counted
    for code, file, line, message in expected:
        assert [k for k in counted if k[:3] == (code, file, line) and message in k[3]], counted


@pytest.mark.parametrize("command", ["check", "lint"])
def test_check_and_lint(skills: Path, command: str) -> None:
    assert_once_in_text(cli(command, *PATHS), LONG, LEAKY)
    assert_once_in_json(cli(command, "--json", *PATHS), LONG, LEAKY)
    assert "3 skills: 1 valid, 2 invalid" in cli(command, *PATHS).output  # each skill once


def test_pack(skills: Path) -> None:
    assert_once_in_text(cli("pack", *PATHS, "-o", "out"), LONG, LEAKY)
    assert_once_in_json(cli("pack", "--json", *PATHS, "-o", "out"), LONG, LEAKY)
    assert "2 skills are refused" in cli("pack", *PATHS, "-o", "out").output
    assert not Path("out").exists()


def test_pack_of_one_invalid_skill_among_valid_ones(skills: Path) -> None:
    (skills / "leaky" / ".env").unlink()
    # the bug: the first line said the description's length too
    assert_once_in_text(cli("pack", "skills", "skills/notes", "-o", "out"), LONG)
    assert_once_in_json(cli("pack", "--json", "skills", "-o", "out"), LONG)


def test_bundle(skills: Path) -> None:
    assert_once_in_text(cli("bundle", *PATHS, "-o", "x.bundle"), LONG, LEAKY)
    assert_once_in_json(cli("bundle", "--json", *PATHS, "-o", "x.bundle"), LONG, LEAKY)
    (skills / "leaky" / ".env").unlink()
    assert_once_in_text(cli("bundle", "skills", "-o", "x.bundle"), LONG)
    assert not Path("x.bundle").exists()


def test_lock(skills: Path) -> None:  # lock has no --json
    assert_once_in_text(cli("lock", *PATHS, "-o", "x.lock"), LONG, LEAKY)
    assert not Path("x.lock").exists()


def test_digest(skills: Path) -> None:  # a digest needs the walk, not the rules
    result = cli("digest", *PATHS)
    assert_once_in_text(result, LEAKY)
    assert [x.split()[1] for x in result.output.splitlines() if x.startswith("blake3:")] == [
        "long", "notes"]  # each skill once
    assert_once_in_json(cli("digest", "--json", *PATHS), LEAKY)


def test_verify(skills: Path) -> None:
    assert_once_in_text(cli("verify", *PATHS), LONG, LEAKY)
    assert_once_in_json(cli("verify", "--json", *PATHS), LONG, LEAKY)


def test_inspect(skills: Path) -> None:  # one ARCHIVE: here a folder of skills
    assert_once_in_text(cli("inspect", "skills"), LONG, LEAKY)
    assert_once_in_json(cli("inspect", "--json", "skills"), LONG, LEAKY)


def test_a_parse_error_is_printed_once(skills: Path) -> None:
    (skills / "notes" / "SKILL.md").write_text("---\nname: [unclosed\n---\nbody\n")
    for command in ("pack", "bundle"):
        result = cli(command, "skills/notes", "-o", "out" if command == "pack" else "x.bundle")
        assert result.exit_code == 1
        assert result.output.count("frontmatter is not valid YAML") == 1, result.output
        assert "skills/notes/SKILL.md:2: [yaml-syntax] frontmatter is not valid YAML" \
            in result.output


@pytest.mark.parametrize("command", [
    ["pack", "-o", "out"], ["bundle", "-o", "x.bundle"], ["lock", "-o", "x.lock"],
    ["export", "mcp", "-o", "mcp"], ["export", "well-known", "-o", "site"],
    ["export", "oci", "-o", "oci"]])
def test_a_path_that_holds_no_skill_hides_no_other_refusal(skills: Path,
                                                           command: list[str]) -> None:
    """`pack` and `export oci` stopped at a PATH that holds no skill,
    saying nothing of a stray archive or a broken skill under the next PATH, which bundle,
    lock and the exports list with it; now every command lists all three."""
    (skills / "leaky" / ".env").unlink()
    Path("empty").mkdir()
    (skills / "fixtures.zip").write_text("not a zip\n")
    result = cli(*command[:-2], "empty", "skills", *command[-2:])
    assert result.exit_code == 1, result.output
    assert "3 skills are refused" in result.output, result.output
    for shown in ("empty: error: [no-skill]", "skills/fixtures.zip: error:",
                  "skills/long/SKILL.md:3: error: [description-too-long]"):
        assert shown in result.output, result.output
    assert not Path(command[-1]).exists()
