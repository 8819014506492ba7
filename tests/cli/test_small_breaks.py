"""Small breaks of issue 30: `inspect --json` gives every frontmatter property (as
skills-ref's read-properties), and `validate` is another name for `check`."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from click.testing import CliRunner, Result
from helpers.paths import FIXTURES
from helpers.skills import write_skill

from skillpack.cli import main

PROPERTIES = ("---\nname: props\ndescription: Shows its properties. Use when asked.\n"
              "license: MIT\ncompatibility: needs git\nmetadata:\n  author: ada\n"
              "  updated: 2025-01-02\nallowed-tools: Read Bash\n---\n# props\n")


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def test_inspect_json_gives_every_frontmatter_property(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "props", PROPERTIES)
    assert run("pack", folder, "-o", tmp_path / "out").exit_code == 0
    [archive] = (tmp_path / "out").iterdir()
    expected = {"name": "props", "description": "Shows its properties. Use when asked.",
                "license": "MIT", "compatibility": "needs git",
                "metadata": {"author": "ada", "updated": "2025-01-02"},
                "allowed-tools": "Read Bash"}
    for target in (archive, folder):  # verified from the archive, or read from the folder
        result = run("inspect", "--json", target)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["properties"] == {"props": expected}


def test_validate_is_check() -> None:
    checked = run("check", "--json", FIXTURES / "waitlist")
    validated = run("validate", "--json", FIXTURES / "waitlist")
    assert validated.exit_code == checked.exit_code == 0
    assert validated.stdout == checked.stdout
    assert "validate" not in run("--help").stdout  # listed once, as check


def versioned_zip(path: Path) -> Path:
    """A zip as two of Vercel's official ones: the folder named with a version suffix, the
    skill without it."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zipf:
        zipf.writestr("react-best-practices-v2/SKILL.md", (
            "---\nname: react-best-practices\ndescription: React advice. Use when writing "
            "React.\n---\n# React\n\nSee [rules](references/rules.md).\n"))
        zipf.writestr("react-best-practices-v2/references/rules.md", "Keep it pure.\n")
    return path


def test_an_archive_folder_named_otherwise_than_its_skill_is_read(tmp_path: Path) -> None:
    archive = versioned_zip(tmp_path / "react-best-practices.zip")
    said = ("skillpack: " + str(archive) + ": its folder 'react-best-practices-v2/' is not "
            "named as its skill: read as 'react-best-practices/', the name SKILL.md gives\n")
    unpacked = run("unpack", archive, "-o", tmp_path / "skills")
    assert unpacked.exit_code == 0, unpacked.output
    assert unpacked.stderr == said
    assert sorted(p.name for p in (tmp_path / "skills").iterdir()) == ["react-best-practices"]
    folder = tmp_path / "skills" / "react-best-practices"
    assert run("check", folder).exit_code == 0  # the unpacked folder is a valid skill
    of_folder = run("digest", folder)
    of_archive = run("digest", archive)
    assert of_archive.exit_code == of_folder.exit_code == 0, of_archive.output
    assert of_archive.stdout.split()[0] == of_folder.stdout.split()[0]
    assert of_archive.stderr == said
    as_json = run("unpack", "--json", archive, "-o", tmp_path / "again")
    assert json.loads(as_json.stdout)["name"] == "react-best-practices"
    assert json.loads(as_json.stdout)["top"] == "react-best-practices-v2"
