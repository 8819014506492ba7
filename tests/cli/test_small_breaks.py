"""Small breaks of issue 30: `inspect --json` gives every frontmatter property (as
skills-ref's read-properties), and `validate` is another name for `check`."""

from __future__ import annotations

import json
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
