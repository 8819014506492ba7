"""The programs a skill runs: tool templates, allowed-tools Bash entries, `#!` lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import cli
from helpers.paths import CORPUS, REPO

from skillpack.skillmd.programs import Program, allowed_tool_command, shebang_program
from skillpack.source.records import programs


def hard_skill(tmp_path: Path, runs: dict[str, str | tuple[str, ...]],
               allowed: tuple[str, ...] | None = None) -> object:
    from skillpack.skillmd.skill import Skill
    from skillpack.skillmd.tools import Tool

    tools = tuple(Tool(id=i, description="d", params=(), run=r) for i, r in runs.items())
    return Skill(name="demo", description="d", tools=tools, allowed_tools=allowed,
                 workdir=str(tmp_path))


@pytest.mark.parametrize(
    ("line", "program"),
    [
        (b"#!/usr/bin/env python3\nprint()\n", "python3"),
        (b"#!/bin/bash\n", "bash"),
        (b"#! /bin/sh -e\n", "sh"),
        (b"#!/usr/bin/env -S uv run --script\n", "uv"),
        (b"#!/usr/bin/env -Suv run\n", "uv"),
        (b"#!/usr/bin/env -i PATH=/bin node\n", "node"),
        (b"#!/usr/bin/env -u HOME ruby\n", "ruby"),
        (b"#!/usr/local/bin/python3.12 -u\r\n", "python3.12"),
        (b"#!/usr/bin/env\n", None),
        (b"#!\n", None),
        (b"print('no shebang')\n", None),
        (b"", None),
    ],
)
def test_shebang_program(line: bytes, program: str | None) -> None:
    assert shebang_program(line) == program


@pytest.mark.parametrize(
    ("entry", "command"),
    [
        ("Bash(git:*)", "git"),
        ("Bash(git status:*)", "git"),
        ("Bash(npm run test)", "npm"),
        (" Bash(uv run scripts/x.py:*) ", "uv"),
        ("Bash", None),
        ("Bash(*)", None),
        ("Bash()", None),
        ("Read", None),
        ("WebFetch(domain:example.com)", None),
    ],
)
def test_allowed_tool_command(entry: str, command: str | None) -> None:
    assert allowed_tool_command(entry) == command


def test_programs_from_tools_allowed_tools_and_shebangs(tmp_path: Path) -> None:
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (tmp_path / "SKILL.md").write_text("---\nname: demo\ndescription: d\n---\n")
    (scripts / "run.sh").write_text("#!/bin/bash\necho\n")
    (scripts / "run.sh").chmod(0o755)
    (scripts / "lib.py").write_text("#!/usr/bin/env python3\n")  # not executable: not run
    (scripts / "tool.py").write_text("#!/usr/bin/env python3\n")
    (scripts / "tool.py").chmod(0o755)
    skill = hard_skill(
        tmp_path,
        {
            "list": "python3 scripts/tool.py list --limit $limit",
            "any": ("$command", "--flag"),
            "price": "cost$$ --x",
            "git-log": ("git", "log"),
        },
        allowed=("Read", "Bash(git:*)", "Bash(jq .foo)", "Bash"),
    )
    found = programs(skill)  # type: ignore[arg-type]
    assert found == [
        Program("$command", True, ("any",), ("tool:any",)),
        Program("bash", False, (), ("shebang:scripts/run.sh",)),
        Program("cost$", False, ("price",), ("tool:price",)),
        Program("git", False, ("git-log",), ("allowed-tools", "tool:git-log")),
        Program("jq", False, (), ("allowed-tools",)),
        Program("python3", False, ("list",), ("shebang:scripts/tool.py", "tool:list")),
    ]


def test_programs_are_sorted_by_code_point(tmp_path: Path) -> None:
    skill = hard_skill(tmp_path, {"a": "zsh", "b": "Zsh", "c": "_x", "d": "éa", "e": "ab"})
    names = [p.name for p in programs(skill)]  # type: ignore[arg-type]
    assert names == ["Zsh", "_x", "ab", "zsh", "éa"]


@pytest.mark.corpus
def test_programs_of_a_corpus_skill() -> None:
    from skillpack.source.load import load_skill

    found = programs(load_skill(CORPUS / "anthropics-skills" / "web-artifacts-builder"))
    assert [p.name for p in found] == ["bash"]
    assert found[0].sources == (
        "shebang:scripts/bundle-artifact.sh", "shebang:scripts/init-artifact.sh",
    )


def test_programs_of_the_waitlist_fixture() -> None:
    from skillpack.source.load import load_skill

    found = programs(load_skill(REPO / "fixtures" / "waitlist"))
    python = [p for p in found if p.name == "python3"]
    assert python and not python[0].dynamic and python[0].tools


def test_program_round_trip() -> None:
    program = Program("uv", False, ("sync",), ("tool:sync",))
    assert Program.from_dict(json.loads(json.dumps(program.to_dict()))) == program
    with pytest.raises(ValueError):
        Program.from_dict({"name": "", "dynamic": False})
    with pytest.raises(ValueError):
        Program.from_dict({"name": "x", "dynamic": "no"})


def _skill_folder(tmp_path: Path, program: str) -> Path:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        f"---\nname: s\ndescription: d\nallowed-tools: Read Bash({program}:*)\n---\nbody\n"
    )
    return folder


def test_programs_check_names_the_missing_program(tmp_path: Path) -> None:

    missing = "skillpack-test-no-such-" + "program"
    folder = _skill_folder(tmp_path, missing)
    result = cli("programs", "--check", folder)
    assert result.exit_code == 1
    assert f"needs {missing}, which is not on PATH" in result.output
    listed = cli("programs", folder)
    assert listed.exit_code == 0 and missing in listed.output


def test_programs_check_passes_when_present(tmp_path: Path) -> None:

    folder = _skill_folder(tmp_path, "sh")
    result = cli("programs", "--check", "--json", folder)
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.output)
    assert entry["missing"] == [] and entry["programs"][0]["sources"] == ["allowed-tools"]


def test_programs_command_exit_codes(tmp_path: Path) -> None:

    assert cli("programs", tmp_path / "missing").exit_code == 2
    assert cli("programs", tmp_path).exit_code == 1
