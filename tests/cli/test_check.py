"""`skillpack check`: output lines, the summary, JSON, --strict and the exit codes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import Result
from helpers.cli import cli
from helpers.paths import FIXTURES
from helpers.skills import write_skill

LINE = re.compile(
    r"^(?P<path>[^:]+):(?P<line>\d+): (?P<sev>error|warning): \[(?P<code>[a-z-]+)\] .+$"
)
BROKEN = FIXTURES / "broken"


def check(*args: str | Path) -> Result:
    return cli("check", *args)


def problems_and_summary(stdout: str) -> str:
    """`check`'s stdout without its lines of catalog lengths (``catalog: ...``)."""
    return "".join(line for line in stdout.splitlines(keepends=True)
                   if not line.startswith("catalog: "))


def test_each_description_s_catalog_length_is_reported_as_bundle_does() -> None:
    result = check(FIXTURES / "waitlist", FIXTURES / "release-notes")
    assert result.stdout.splitlines()[:3] == [
        "catalog:    141 characters  release-notes", "catalog:    143 characters  waitlist",
        "catalog: 336 characters in all (catalog_text() of 2 skills)"]
    as_json = json.loads(check("--json", FIXTURES / "waitlist").stdout)
    assert as_json[0]["description_chars"] == 143


def test_valid_fixtures_exit_0_with_a_summary() -> None:
    result = check(FIXTURES / "waitlist", FIXTURES / "release-notes" / "SKILL.md")
    assert result.exit_code == 0
    assert problems_and_summary(result.stdout) == (
        "checked 2 skills: 2 valid, 0 invalid (0 errors, 0 warnings)\n")
    assert result.stderr == ""


def test_one_line_per_problem_then_the_summary() -> None:
    result = check(BROKEN / "name-mismatch")
    assert result.exit_code == 1
    skill_md = BROKEN / "name-mismatch" / "SKILL.md"
    assert problems_and_summary(result.stdout) == (
        f"{skill_md}:2: error: [name-mismatch] name 'not-the-folder-name' must equal its "
        "folder name 'name-mismatch'\n"
        "checked 1 skill: 0 valid, 1 invalid (1 error, 0 warnings)\n"
    )


def test_a_folder_of_skills_is_searched() -> None:
    result = check(BROKEN)
    assert result.exit_code == 1
    *lines, summary = problems_and_summary(result.stdout).splitlines()
    count = sum(1 for p in BROKEN.iterdir() if p.is_dir())
    assert summary == (f"checked {count} skills: 0 valid, {count} invalid ({count} errors, "
                       "0 warnings)")
    assert len(lines) == count
    for line in lines:
        match = LINE.match(line)
        assert match is not None, line
        assert match["sev"] == "error"
        assert Path(match["path"]).name == "SKILL.md"
        assert match["code"] in Path(match["path"]).parts  # broken/<code>/...


def test_json_output() -> None:
    result = check("--json", FIXTURES / "waitlist", BROKEN / "tool-unused-param")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    skill_md = str(BROKEN / "tool-unused-param" / "SKILL.md")
    assert data == [
        {"name": "waitlist", "path": str(FIXTURES / "waitlist"), "valid": True,
         "description_chars": 143, "problems": []},
        {"name": "tool-unused-param", "path": str(BROKEN / "tool-unused-param"),
         "valid": False,
         "problems": [{"severity": "error", "code": "tool-unused-param",
                       "message": "tool 'hello': param 'who' is declared but never used in run",
                       "file": skill_md, "line": 14}]},
    ]


def test_warnings_pass_unless_strict(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "versioned",
                        "---\nname: versioned\ndescription: d\nversion: 2\n---\n")
    lenient = check(skill)
    assert lenient.exit_code == 0
    assert problems_and_summary(lenient.stdout).splitlines() == [
        f"{skill / 'SKILL.md'}:4: warning: [unknown-key] unknown frontmatter key 'version'; the "
        "Agent Skills fields are name, description, license, compatibility, metadata and "
        "allowed-tools",
        "checked 1 skill: 1 valid, 0 invalid (0 errors, 1 warning)",
    ]
    strict = check("--strict", skill)
    assert strict.exit_code == 1
    first, summary = problems_and_summary(strict.stdout).splitlines()
    assert first.startswith(f"{skill / 'SKILL.md'}:4: error: [unknown-key]")
    assert summary == "checked 1 skill: 0 valid, 1 invalid (1 error, 0 warnings)"
    as_json = json.loads(check("--strict", "--json", skill).stdout)
    assert as_json[0]["valid"] is False
    assert as_json[0]["problems"][0]["severity"] == "error"


def test_a_path_without_skill_md_fails_plainly(tmp_path: Path) -> None:
    (tmp_path / "empty" / "docs").mkdir(parents=True)
    (tmp_path / "notes.txt").write_text("x")
    result = check(FIXTURES / "waitlist", tmp_path / "empty", tmp_path / "notes.txt")
    assert result.exit_code == 1
    assert problems_and_summary(result.stdout) == (
        "checked 1 skill: 1 valid, 0 invalid (0 errors, 0 warnings)\n")
    assert result.stderr == (f"skillpack: no SKILL.md found in {tmp_path / 'empty'}\n"
                             f"skillpack: no SKILL.md found in {tmp_path / 'notes.txt'}\n")


def test_misuse_exits_2(tmp_path: Path) -> None:
    missing = check(tmp_path / "does-not-exist")
    assert missing.exit_code == 2
    assert "does not exist" in missing.stderr
    assert check().exit_code == 2  # no PATH at all
    assert check("--no-such-option", FIXTURES / "waitlist").exit_code == 2


def test_the_installed_command(tmp_path: Path) -> None:
    script = shutil.which("skillpack", path=str(Path(sys.executable).parent))
    assert script is not None
    ok = subprocess.run([script, "check", str(FIXTURES / "waitlist")], capture_output=True,
                        text=True, check=False)
    assert (ok.returncode, problems_and_summary(ok.stdout)) == (
        0, "checked 1 skill: 1 valid, 0 invalid (0 errors, 0 warnings)\n")
    bad = subprocess.run([script, "check", str(BROKEN / "yaml-alias")], capture_output=True,
                         text=True, check=False)
    assert bad.returncode == 1
    assert bad.stdout.startswith(f"{BROKEN / 'yaml-alias' / 'SKILL.md'}:4: error: [yaml-alias]")
    misuse = subprocess.run([script, "check", str(tmp_path / "nope")], capture_output=True,
                            text=True, check=False)
    assert misuse.returncode == 2
