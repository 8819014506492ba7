"""Pack refuses a skill over the archive's member limit right after listing its tree, before
it opens a single file (issue 18, item 5); under the limit, the deferred reads give the same
archive and digest as the walk that reads while it lists."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillpack.errors import ArchiveError, SkillpackError
from skillpack.packing.pack import pack_skills
from skillpack.packing.verify import digest
from skillpack.source import walk as walk_module
from skillpack.source.readfile import OPEN_FLAGS
from skillpack.source.walk import walk
from skillpack.storedzip.writer import MAX_MEMBERS

SKILL_MD = "---\nname: {}\ndescription: A skill holding many files, to be packed.\n---\n\nBody.\n"


def make_skill(root: Path, folders: int, per_folder: int, data: bytes = b"") -> Path:
    root.mkdir()
    (root / "SKILL.md").write_text(SKILL_MD.format(root.name))
    for f in range(folders):
        folder = root / f"d{f:03d}"
        folder.mkdir()
        for i in range(per_folder):
            (folder / f"f{i:04d}.txt").write_bytes(data)
    return root


def count_file_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every regular file the walk opens (by its flags), recorded by name."""
    opened: list[str] = []
    real: Callable[..., int] = os.open

    def counting(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags == OPEN_FLAGS:
            opened.append(os.fspath(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting)
    return opened


@pytest.mark.slow  # writes 70,000 files: the longest test of the default run (36 s, loaded machine)
def test_a_skill_over_the_member_limit_is_refused_before_any_file_is_opened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folders, per_folder = 200, 350  # 70,000 files
    assert folders * per_folder + 1 > MAX_MEMBERS
    skill = make_skill(tmp_path / "many", folders, per_folder)
    out = tmp_path / "out"
    opened = count_file_opens(monkeypatch)
    with pytest.raises(ArchiveError) as caught:
        pack_skills([skill], out)
    assert opened == []  # not even SKILL.md's walk entry: parsing it reads it by path
    message = caught.value.message
    assert "70,001 files" in message and "70,002 zip members" in message
    assert f"at most {MAX_MEMBERS - 1:,} members" in message
    assert caught.value.path == str(skill)
    assert not out.exists()


def test_the_limit_counts_what_the_archive_would_hold(tmp_path: Path) -> None:
    """65,533 files and the manifest fill the archive exactly: listed, not refused by the
    walk (the check counts the manifest); one file more is refused after listing."""
    skill = make_skill(tmp_path / "edge", 1, 0)
    files = walk(skill, read=True, member_limit=3)  # SKILL.md + manifest = 2 members
    assert [f.path for f in files.files] == ["SKILL.md"]
    (skill / "d000" / "a.txt").write_bytes(b"a")
    assert len(walk(skill, read=True, member_limit=3).files) == 2
    (skill / "d000" / "b.txt").write_bytes(b"b")
    with pytest.raises(ArchiveError, match="3 files: with its manifest, 4 zip members"):
        walk(skill, read=True, member_limit=3)
    assert len(walk(skill, read=True).files) == 3  # no limit: digest carries them all


def test_a_file_listed_twice_by_includes_counts_once(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "inc", 1, 2)
    files = walk(skill, ["d000", "d000/f0000.txt", "d000/"], read=True, member_limit=4)
    assert [f.path for f in files.files] == ["SKILL.md", "d000/f0000.txt", "d000/f0001.txt"]


def test_deferred_reads_give_the_archive_of_the_listing_walk(tmp_path: Path) -> None:
    """Every folder opened again, checked, and read once all are listed; the archive's
    digest is the digest of the folder (which reads while it lists)."""
    skill = make_skill(tmp_path / "wide", 40, 2, b"x\n")
    [result] = pack_skills([skill], tmp_path / "out")
    assert result.digest == digest(skill) == digest(result.path)
    with zipfile.ZipFile(result.path) as archive:
        assert len(archive.namelist()) == 40 * 2 + 2


def test_a_folder_replaced_after_listing_is_refused(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder swapped between the listing and the reads is not read from."""
    skill = make_skill(tmp_path / "swap", 3, 1, b"x\n")
    real = walk_module.Walker.read_pending

    def swap_then_read(self: walk_module.Walker) -> None:
        last = self.pending[-1][0]
        os.rename(skill / last, tmp_path / "gone")
        (skill / last).mkdir()
        (skill / last / "f0000.txt").write_bytes(b"y\n")
        real(self)

    monkeypatch.setattr(walk_module.Walker, "read_pending", swap_then_read)
    with pytest.raises(SkillpackError) as caught:
        walk(skill, read=True, member_limit=MAX_MEMBERS - 1)
    assert any(p.code == "changed" for p in caught.value.problems)
