"""`catalog` and `export` take what `bundle` and `verify` take: a folder of archives (what
`pack -o out` wrote) and archives made elsewhere (Anthropic's DEFLATE `.skill`); and they read
thousands of archives with one open file at a time."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers.cli import cli
from helpers.paths import REPO
from helpers.skills import write_skill

from skillpack.packing.pack import pack

COUNT = 90  # archives, more than the descriptor limit the child gets below
LIMIT = 48


def _skills(root: Path, count: int) -> list[Path]:
    return [write_skill(root / f"s{i:03}", f"---\nname: s{i:03}\ndescription: Skill {i}. "
                        "Use when testing.\n---\nBody.\n") for i in range(count)]


def _packed(tmp_path: Path, count: int) -> Path:
    out = tmp_path / "out"
    for folder in _skills(tmp_path / "src", count):
        pack(folder, out)
    return out


def _anthropic(tmp_path: Path) -> Path:
    """A `.skill` as Anthropic's package_skill.py writes it: DEFLATE, one top folder."""
    folder = write_skill(tmp_path / "made" / "elsewhere",
                         "---\nname: elsewhere\ndescription: Made elsewhere. Use when testing."
                         "\n---\nBody.\n")
    archive = tmp_path / "elsewhere.skill"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(folder / "SKILL.md", "elsewhere/SKILL.md")
    return archive


def test_catalog_of_a_folder_of_archives_and_a_foreign_one(tmp_path: Path) -> None:
    out = _packed(tmp_path, 3)
    foreign = _anthropic(tmp_path)
    result = cli("catalog", out, foreign, "--format", "json")
    assert result.exit_code == 0, result.output
    skills = json.loads(result.stdout)["skills"]
    assert [s["name"] for s in skills] == ["s000", "s001", "s002", "elsewhere"]
    assert skills[-1]["location"] == str(foreign.resolve())
    assert all(s["location"].startswith(str(out.resolve())) for s in skills[:3])


def test_export_of_a_folder_of_archives_and_a_foreign_one(tmp_path: Path) -> None:
    out = _packed(tmp_path, 2)
    result = cli("export", "well-known", out, _anthropic(tmp_path), "-o", tmp_path / "site")
    assert result.exit_code == 0, result.output
    index = json.loads((tmp_path / "site" / ".well-known" / "agent-skills" / "index.json")
                       .read_text())
    assert sorted(s["name"] for s in index["skills"]) == ["elsewhere", "s000", "s001"]


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))


@pytest.mark.parametrize("command", [["catalog"], ["export", "mcp"], ["verify"],
                                     ["bundle", "-o", "all.bundle"]])
def test_more_archives_than_open_files_allowed(command: list[str], tmp_path: Path) -> None:
    out = _packed(tmp_path, COUNT)
    result = subprocess.run(
        [sys.executable, "-m", "skillpack", *command, str(out)], cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
        preexec_fn=_limited, check=False)
    assert result.returncode == 0, result.stderr
    assert "Too many open files" not in result.stderr
