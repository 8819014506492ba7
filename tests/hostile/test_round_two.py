"""Hostile inputs, round two (issue 13): what an attacker who read SECURITY.md tries next.

* approval bypasses: a `.skillignore` that leaves out SKILL.md; archives resealed by hand to
  carry what `pack` can never write (ignored names, paths outside `includes:`, a file beside a
  folder of the same name, non-NFC paths); names that collide on Windows or macOS;
* crashes: format versions in other digits, deep unknown fields, lone surrogates;
* slow rejects: inputs that made a regex backtrack or a parser go quadratic, each refused
  at a size that would have taken minutes (bounded by input size, `no_hang` only guards).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skillpack.build.pack import pack
from skillpack.build.verify import verify_bytes, verify_folder
from skillpack.errors import IntegrityError, RefusedError, SkillpackError

from ._util import DEMO_MD, TALLY, demo_skill, files_under, no_hang
from ._zip import Member, build, insert, members_of, reseal

SKILL = "demo/SKILL.md"


# -- .skillignore can never leave out SKILL.md ---------------------------------------------------

@pytest.mark.parametrize("rule", ["SKILL.md", "*", "/SKILL.md", "*.md", "SKILL.*", "[S]KILL.md"])
@pytest.mark.parametrize("declared", [False, True], ids=["walked", "included"])
def test_a_skillignore_rule_matching_skill_md_is_an_error(tmp_path: Path, rule: str,
                                                          declared: bool) -> None:
    text = DEMO_MD
    if declared:
        text = DEMO_MD.replace("description:", "includes: [scripts]\ndescription:", 1)
    skill = demo_skill(tmp_path / "demo", {"SKILL.md": text, ".skillignore": rule + "\n"})
    out = tmp_path / "out"
    case = f"skillignore leaves out SKILL.md ({rule!r}, {'includes' if declared else 'walk'})"
    with TALLY.refused("tree", case, "pack", RefusedError, "SKILL.md", ".skillignore:1"):
        no_hang(lambda: pack(skill, out))
    assert files_under(out) == []
    with TALLY.refused("tree", case, "verify folder", RefusedError, "SKILL.md"):
        no_hang(lambda: verify_folder(skill))


def test_a_negated_rule_keeps_skill_md(tmp_path: Path) -> None:
    skill = demo_skill(tmp_path / "demo", {".skillignore": "*.md\n!SKILL.md\n"})
    [archive] = pack(skill, tmp_path / "out")
    assert "demo/SKILL.md" in [m.name for m in members_of(archive.read_bytes())]


# -- an archive carries exactly what pack could have produced -------------------------------------

INCLUDES_MD = DEMO_MD.replace("description:", "includes: [scripts]\ndescription:", 1)

SMUGGLED = {
    "pycache beside the reviewed script": ("demo/scripts/__pycache__/run.cpython-312.pyc",
                                           "__pycache__"),
    "a .pyc file": ("demo/scripts/run.pyc", "*.pyc"),
    "git config": ("demo/.git/config", ".git"),
    "hg folder": ("demo/.hg/hgrc", ".hg"),
    "editor swap file": ("demo/scripts/.run.py.swp", "*.swp"),
    "editor backup file": ("demo/notes.txt~", "*~"),
    "editor lock file": ("demo/.#notes.txt", ".#*"),
    "editor autosave file": ("demo/#notes.txt#", "#*#"),
    ".DS_Store": ("demo/.DS_Store", ".DS_Store"),
    ".skillignore": ("demo/.skillignore", ".skillignore"),
    "x beside x/y": ("demo/notes.txt/inner.txt", "notes.txt"),
    "non-NFC path": ("demo/cafe\u0301.txt", "NFC"),
}


def _smuggled(good: bytes, member: str, skill_md: str | None = None) -> bytes:
    members = members_of(good)
    if skill_md is not None:
        members = [Member(m.name, skill_md.encode()) if m.name == SKILL else m
                   for m in members]
    return build(reseal(insert(members, Member(member, b"print('not reviewed')\n"))))


@pytest.mark.parametrize("case", sorted(SMUGGLED))
def test_an_archive_carrying_what_pack_leaves_out_is_refused(good_archive: bytes,
                                                              case: str) -> None:
    member, fragment = SMUGGLED[case]
    data = _smuggled(good_archive, member)
    with TALLY.refused("archive", f"resealed: {case}", "verify_bytes", IntegrityError,
                       member, fragment):
        no_hang(lambda: verify_bytes(data, source="hostile.skill"))


def test_an_archive_carrying_a_file_outside_its_includes_is_refused(good_archive: bytes
                                                                    ) -> None:
    # the good archive carries notes.txt; a SKILL.md declaring only `scripts` never would
    data = _smuggled(good_archive, "demo/scripts/extra.py", INCLUDES_MD)
    with TALLY.refused("archive", "resealed: a path outside includes", "verify_bytes",
                       IntegrityError, "demo/notes.txt", "includes"):
        no_hang(lambda: verify_bytes(data, source="hostile.skill"))


def test_an_archive_inside_its_includes_verifies(tmp_path: Path) -> None:
    skill = demo_skill(tmp_path / "demo", {"SKILL.md": INCLUDES_MD})
    [archive] = pack(skill, tmp_path / "out")
    report = verify_bytes(archive.read_bytes())
    assert [r.path for r in report.skills[0].files] == ["SKILL.md", "scripts/run.py"]


def test_the_good_archive_still_verifies(good_archive: bytes) -> None:
    assert verify_bytes(good_archive).skills[0].name == "demo"
    assert isinstance(SkillpackError("x"), SkillpackError)
