"""`skill_md_path` and the workdir of a parsed skill are spelt as `pathlib` spells them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillpack._regular import read_regular
from skillpack.errors import SkillpackError
from skillpack.source import load

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


def test_the_workdir_of_a_parsed_skill_is_its_folder(tree: Path) -> None:
    for path in (f"{tree}/skill", "skill", "./skill/", "skill/SKILL.md", f"{tree}//skill"):
        skill = load.parse_skill_file(path)
        assert skill.workdir == str(Path(pathlib_spelling(path)).parent), path
        assert skill.file == pathlib_spelling(path), path
    assert os.path.samefile(load.parse_skill_file("skill").workdir or "", tree / "skill")


def _outcome(path: Path | str) -> tuple[str, str, str | None, tuple[str, ...]]:
    """What `load_skill` gives: the skill's name and body, or the error's class, message,
    path and problem codes."""
    try:
        skill = load.load_skill(path)
    except SkillpackError as err:
        return (type(err).__name__, err.message, err.path, tuple(p.code for p in err.problems))
    return ("Skill", skill.name, skill.file, (skill.body,))


def test_load_skill_says_what_a_skill_md_is_whatever_it_is(tmp_path: Path) -> None:
    """`load_skill` opens SKILL.md once (its size from that fstat) and reads it with
    `os.read`; whatever SKILL.md is, the user sees what the checks before it said: a
    SKILL.md that is no regular file is "no SKILL.md here", a lowercase one the case error,
    and a readable one parses as `parse_skill_file` parses it."""
    text = "---\nname: {n}\ndescription: d\n---\nbody\n"
    kinds: dict[str, Path] = {}
    for kind in ("regular", "folder", "fifo", "link", "dangling", "missing", "lower",
                 "unreadable", "big"):
        folder = tmp_path / kind
        folder.mkdir()
        kinds[kind] = folder
    (kinds["regular"] / "SKILL.md").write_text(text.format(n="regular"))
    (kinds["folder"] / "SKILL.md").mkdir()
    os.mkfifo(kinds["fifo"] / "SKILL.md")
    (kinds["link"] / "real.md").write_text(text.format(n="link"))
    (kinds["link"] / "SKILL.md").symlink_to("real.md")
    (kinds["dangling"] / "SKILL.md").symlink_to("nowhere.md")
    (kinds["lower"] / "skill.md").write_text(text.format(n="lower"))
    (kinds["unreadable"] / "SKILL.md").write_text(text.format(n="unreadable"))
    (kinds["unreadable"] / "SKILL.md").chmod(0)
    big_body = "x" * (3 << 20) + "\n"  # more than a read of _rest (1 MiB) holds
    (kinds["big"] / "SKILL.md").write_text(text.format(n="big") + big_body)
    seen = {kind: _outcome(folder) for kind, folder in kinds.items()}
    assert seen["regular"] == ("Skill", "regular", f"{kinds['regular']}/SKILL.md", ("body\n",))
    assert seen["link"][:2] == ("Skill", "link")
    assert seen["big"] == ("Skill", "big", f"{kinds['big']}/SKILL.md", ("body\n" + big_body,))
    for kind in ("folder", "fifo", "dangling", "missing"):  # no regular SKILL.md
        assert seen[kind] == ("SkillpackError", "no SKILL.md here", str(kinds[kind]), ()), kind
    assert seen["lower"][0] == "SkillError" and seen["lower"][3] == ("skill-md-case",)
    if os.geteuid() != 0:  # root reads a file of mode 0
        assert seen["unreadable"][0] == "SkillError"
        assert seen["unreadable"][1].startswith("cannot read SKILL.md: ")
    said: dict[str, tuple[str, str]] = {}  # parse_skill_file reads what it is given
    for kind, folder in kinds.items():
        try:
            said[kind] = ("Skill", load.parse_skill_file(folder).name)
        except SkillpackError as err:
            said[kind] = (type(err).__name__, err.message)
        if seen[kind][0] != "SkillpackError":
            assert said[kind] == seen[kind][:2], kind
    assert said["folder"][0] == "SkillError" and "it is a folder" in said["folder"][1]
    assert said["fifo"][0] == "SkillError" and "it is a fifo" in said["fifo"][1]
    assert said["missing"] == ("SkillError", "there is no SKILL.md here")


def test_read_regular_reads_every_byte(tmp_path: Path) -> None:
    path = tmp_path / "f"
    data = bytes(range(256)) * 9000
    path.write_bytes(data)
    assert read_regular(path) == data


def test_load_skill_finds_the_skill_md_skill_md_path_names(tree: Path) -> None:
    """`load_skill` tells a folder by its lstat (isdir asked only of a link): for every
    spelling, a link to the folder and a link to SKILL.md, the file it parses (or the error
    it raises) is that of `parse_skill_file` at `skill_md_path`'s path."""
    (tree / "linked").symlink_to(tree / "skill")
    (tree / "alone").mkdir()
    (tree / "alone" / "SKILL.md").symlink_to(tree / "skill" / "SKILL.md")
    extra = ["{t}/linked", "linked", "linked/", "{t}/alone", "alone/SKILL.md"]
    for spelling in SPELLINGS + extra:
        path = spelling.format(t=tree, name=tree.name)
        try:
            found: object = load.load_skill(path).file
        except SkillpackError as err:
            found = (type(err).__name__, err.path)
        if isinstance(found, str):
            assert found == load.skill_md_path(path), path
            assert load.parse_skill_file(path).file == found, path
        else:
            assert found[0] in ("MissingPathError", "SkillpackError", "SkillError"), path


def test_load_skill_meets_hostile_skill_md_spellings_as_parse_skill_file(tmp_path: Path) -> None:
    """Review of the one-open load: both SKILL.md and skill.md in a folder (a case-sensitive
    disk: SKILL.md is the skill, no case error), skill.md named directly (the case error,
    though it opened), a SKILL.md linked to a folder or to a fifo, a fifo or a folder named
    directly, a folder holding an entry named like the probe only: `load_skill` says what
    the checks before it said (`parse_skill_file` where a SKILL.md is there), never blocks."""
    text = "---\nname: {n}\ndescription: d\n---\nbody\n"
    both = tmp_path / "both"
    both.mkdir()
    (both / "SKILL.md").write_text(text.format(n="upper"))
    (both / "skill.md").write_text(text.format(n="lower"))
    assert _outcome(both)[:2] == ("Skill", "upper")
    assert load.parse_skill_file(both).name == "upper"
    lower = _outcome(both / "skill.md")
    assert lower[0] == "SkillError" and lower[3] == ("skill-md-case",)
    with pytest.raises(SkillpackError) as info:
        load.parse_skill_file(both / "skill.md")
    assert info.value.message == lower[1]
    odd = tmp_path / "odd"
    odd.mkdir()
    os.mkfifo(odd / "pipe")
    (odd / "folder").mkdir()
    linked = {"to-folder": odd / "folder", "to-fifo": odd / "pipe"}
    for name, target in linked.items():
        (odd / name).mkdir()
        (odd / name / "SKILL.md").symlink_to(target)
        assert _outcome(odd / name) == ("SkillpackError", "no SKILL.md here",
                                        str(odd / name), ()), name
    for direct in (odd / "pipe", odd / "to-fifo" / "SKILL.md"):
        assert _outcome(direct) == ("SkillpackError", "no SKILL.md here", str(direct), ())
    probe_only = tmp_path / "probe"
    probe_only.mkdir()
    (probe_only / "sKILL.mD").write_text(text.format(n="probe"))
    found = _outcome(probe_only)  # sKILL.mD: SKILL.md in another case, named so
    assert found[0] == "SkillError" and found[3] == ("skill-md-case",)
    assert "sKILL.mD" in (found[2] or "")


def test_discovery_of_a_path_with_a_nul_says_there_is_none() -> None:
    """A NUL cannot be in a path: `find_skills` says no such file (as it did when it asked
    `os.path.lexists`), never a ValueError from its one `stat`."""
    from skillpack.errors import MissingPathError
    from skillpack.source.discover import find_skills

    with pytest.raises(MissingPathError, match="no such file or folder"):
        find_skills("skills\x00/x")
