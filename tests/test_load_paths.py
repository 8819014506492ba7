"""`skill_md_path` and the workdir of a parsed skill are spelt as `pathlib` spells them, with
or without building a Path (issue 18: the common spelling skips it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillpack.build import load

SPELLINGS = [
    "{t}", "{t}/", "{t}//", "{t}/.", "{t}/./", "{t}/skill", "{t}/skill/", "{t}//skill",
    "{t}/./skill", "{t}/skill/.", "{t}/skill/SKILL.md", "{t}/skill//SKILL.md",
    "{t}/skill/../skill", "{t}/skill/..", "{t}/SKILL.md", "{t}/SKILL.md/", "{t}/missing",
    "{t}/file.txt", "//{t}/skill", "skill", "skill/", "./skill", "./skill/", "skill/SKILL.md",
    "SKILL.md", ".", "./", "..", "../{name}/skill", "", "/", "//", "///",
]


def pathlib_spelling(path: str) -> str:
    found = Path(path)
    if found.is_dir() and found.name != load.SKILL_MD:
        found = found / load.SKILL_MD
    return str(found)


@pytest.fixture()
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "skill").mkdir()
    (tmp_path / "skill" / "SKILL.md").write_text("---\nname: skill\n---\n")
    (tmp_path / "SKILL.md").mkdir()  # a folder named SKILL.md: named as it is
    (tmp_path / "file.txt").write_text("x")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_skill_md_path_is_spelt_as_pathlib_spells_it(tree: Path) -> None:
    for spelling in SPELLINGS:
        path = spelling.format(t=tree, name=tree.name)
        assert load.skill_md_path(path) == pathlib_spelling(path), path
        assert load.skill_md_path(Path(path)) == pathlib_spelling(path), path
        where = pathlib_spelling(path)
        assert load._parent(where) == str(Path(where).parent), where


def test_the_workdir_of_a_parsed_skill_is_its_folder(tree: Path) -> None:
    for path in (f"{tree}/skill", "skill", "./skill/", "skill/SKILL.md", f"{tree}//skill"):
        skill = load.parse_skill_file(path)
        assert skill.workdir == str(Path(pathlib_spelling(path)).parent), path
        assert skill.file == pathlib_spelling(path), path
    assert os.path.samefile(load.parse_skill_file("skill").workdir or "", tree / "skill")
