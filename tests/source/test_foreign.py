"""Skill archives made elsewhere (skillpack.source.foreign): Anthropic's packager, zips with
SKILL.md at the root, tar.gz of the .well-known/agent-skills layouts, and our own archives.

Each archive is made at test time from fixtures/waitlist the way its tool makes it, then
unpacked; the unpacked folder must have the fixture's digest (SPEC section 2).
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest
from helpers.paths import CORPUS_SKILLS, WAITLIST
from helpers.skills import make_tree
from helpers.syscalls import deny_open, intercept_open
from helpers.zips import anthropic_zip

from skillpack import digest
from skillpack.content.inflate import Caps, read_zip
from skillpack.errors import ArchiveError, SkillpackError, WriteError
from skillpack.packing.pack import pack
from skillpack.source.foreign import read_foreign, unpack, unpacked
from skillpack.source.notes import listen, unlisten

WAITLIST_FILES = ["SKILL.md", "data/waitlist.csv", "scripts/waitlist.py"]


def root_zip(folder: Path) -> bytes:
    """A zip of a skill's contents: SKILL.md at the archive's root."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zipf:
        for file_path in sorted(folder.rglob("*")):
            zipf.write(file_path, file_path.relative_to(folder))  # folders too
    return out.getvalue()


def tar_gz(folder: Path, *, top: bool) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        archive.add(folder, arcname=folder.name if top else ".")
    return out.getvalue()


def modes(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): stat.S_IMODE(p.stat().st_mode)
            for p in sorted(folder.rglob("*"))}


WAITLIST_MODES = {"SKILL.md": 0o644, "data": 0o755, "data/waitlist.csv": 0o644,
                  "scripts": 0o755, "scripts/waitlist.py": 0o755}


def test_fixture_has_an_executable_script() -> None:
    assert os.stat(WAITLIST / "scripts" / "waitlist.py").st_mode & stat.S_IXUSR


@pytest.mark.parametrize("make, fmt, layout", [
    (anthropic_zip, "zip", "folder"),
    (root_zip, "zip", "root"),
    (lambda f: tar_gz(f, top=False), "tar.gz", "root"),
    (lambda f: tar_gz(f, top=True), "tar.gz", "folder"),
], ids=["anthropic-skill", "zip-root", "tar.gz-root", "tar.gz-folder"])
def test_unpacked_archive_has_the_folders_digest(tmp_path: Path, make, fmt: str,
                                                 layout: str) -> None:
    data = make(WAITLIST)
    skill = read_foreign(data, source="w.archive")
    assert (skill.name, skill.kind, skill.format, skill.layout) == ("waitlist", "foreign",
                                                                     fmt, layout)
    assert [f.path for f in skill.files] == WAITLIST_FILES
    assert [f.executable for f in skill.files] == [False, False, True]
    target, again = unpack(data, tmp_path / "out")
    assert target == tmp_path / "out" / "waitlist" and again == skill
    assert digest(target) == digest(WAITLIST)
    assert modes(target) == WAITLIST_MODES
    assert os.listdir(tmp_path / "out") == ["waitlist"]  # no temp folder left beside it


def test_modes_do_not_depend_on_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        target, _ = unpack(anthropic_zip(WAITLIST), tmp_path)
    finally:
        os.umask(old)
    assert modes(target) == WAITLIST_MODES


def test_real_zip_and_unzip_agree(tmp_path: Path) -> None:
    if not (shutil.which("zip") and shutil.which("unzip")):
        pytest.skip("the zip and unzip binaries are not installed")
    shutil.copytree(WAITLIST, tmp_path / "waitlist")
    made = tmp_path / "w.zip"
    subprocess.run(["zip", "-qr", str(made), "waitlist"], cwd=tmp_path, check=True)
    data = made.read_bytes()
    listed = subprocess.run(["unzip", "-Z1", str(made)], capture_output=True, text=True,
                            check=True).stdout.split()
    ours = [m.path + ("/" if m.kind == "dir" else "") for m in read_zip(data)]
    assert ours == listed and "waitlist/scripts/" in ours  # folder entries as unzip lists
    subprocess.run(["unzip", "-q", str(made), "-d", str(tmp_path / "by-unzip")], check=True)
    target, _ = unpack(data, tmp_path / "by-us")
    assert digest(target) == digest(tmp_path / "by-unzip" / "waitlist") == digest(WAITLIST)
    # and unzip reads what Anthropic's packager writes the way we do
    anthropic = tmp_path / "a.skill"
    anthropic.write_bytes(anthropic_zip(WAITLIST))
    listed = subprocess.run(["unzip", "-Z1", str(anthropic)], capture_output=True, text=True,
                            check=True).stdout.split()
    assert listed == [m.path for m in read_zip(anthropic.read_bytes())]


def test_real_tar_root_layout(tmp_path: Path) -> None:
    if not shutil.which("tar"):
        pytest.skip("tar is not installed")
    made = tmp_path / "w.tar.gz"
    subprocess.run(["tar", "-czf", str(made), "-C", str(WAITLIST), "."], check=True)
    skill = read_foreign(made.read_bytes())
    assert (skill.name, skill.layout) == ("waitlist", "root")
    target, _ = unpack(made.read_bytes(), tmp_path / "out")
    assert digest(target) == digest(WAITLIST)


def test_plain_tar(tmp_path: Path) -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        archive.add(WAITLIST, arcname="waitlist")
    skill = read_foreign(out.getvalue())
    assert skill.format == "tar" and [f.path for f in skill.files] == WAITLIST_FILES


def test_our_own_archive_is_reported_as_skillpack(tmp_path: Path) -> None:
    [archive] = pack(WAITLIST, tmp_path / "dist")
    data = archive.read_bytes()
    skill = read_foreign(data)
    assert (skill.kind, skill.format, skill.layout) == ("skillpack", "zip", "folder")
    assert skill.left_out == ("waitlist/.skillpack/manifest.json",)
    target, _ = unpack(data, tmp_path / "out")
    assert not (target / ".skillpack").exists()  # a folder never carries it (SPEC 1)
    assert digest(target) == digest(WAITLIST)


def test_mac_and_vcs_folders_are_left_out_and_reported(tmp_path: Path) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zipf:
        zipf.writestr("waitlist/SKILL.md", (WAITLIST / "SKILL.md").read_bytes())
        zipf.writestr("waitlist/.git/config", "[core]\n\tfsmonitor = touch /tmp/owned\n")
        zipf.writestr("__MACOSX/waitlist/._SKILL.md", b"\x00\x05\x16\x07")
    skill = read_foreign(out.getvalue())
    assert [f.path for f in skill.files] == ["SKILL.md"]
    assert skill.left_out == ("__MACOSX/waitlist/._SKILL.md", "waitlist/.git/config")
    target, _ = unpack(out.getvalue(), tmp_path)
    assert sorted(os.listdir(target)) == ["SKILL.md"]


def skill_zip(files: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zipf:
        for name, text in files.items():
            zipf.writestr(name, text)
    return out.getvalue()


MD = "---\nname: {name}\ndescription: Does a thing. Use it when asked.\n---\n\nBody.\n"


def test_a_folder_named_otherwise_than_its_skill_is_unpacked_under_the_skill_name(
        tmp_path: Path) -> None:
    # as two of Vercel's official zips: react-best-practices-v2/ holding that skill
    data = skill_zip({"alpha-v2/SKILL.md": MD.format(name="alpha"), "alpha-v2/notes.md": "x"})
    noted: list[str] = []
    listen(noted.append)
    try:
        skill = read_foreign(data, source="a.zip")
        assert noted == []  # reading says nothing; unpacking does, once
        target, _ = unpack(data, tmp_path / "out", source="a.zip")
    finally:
        unlisten(noted.append)
    assert (skill.name, skill.top, skill.renamed) == ("alpha", "alpha-v2", True)
    assert skill.to_dict()["top"] == "alpha-v2"
    assert target == tmp_path / "out" / "alpha"
    assert sorted(os.listdir(target)) == ["SKILL.md", "notes.md"]
    assert noted == ["a.zip: its folder 'alpha-v2/' is not named as its skill: read as "
                     "'alpha/', the name SKILL.md gives"]


def test_a_folder_named_as_its_skill_is_not_renamed() -> None:
    skill = read_foreign(skill_zip({"alpha/SKILL.md": MD.format(name="alpha")}))
    assert (skill.name, skill.top, skill.renamed) == ("alpha", "alpha", False)
    root = read_foreign(skill_zip({"SKILL.md": MD.format(name="alpha")}))
    assert (root.top, root.renamed, root.to_dict()["top"]) == ("", False, None)


def test_a_frontmatter_name_that_cannot_name_a_folder_leaves_the_folder_name() -> None:
    skill = read_foreign(skill_zip({"alpha/SKILL.md": MD.format(name="../beta")}))
    assert (skill.name, skill.renamed) == ("alpha", False)  # `check` reports the name


def test_names_are_written_nfc(tmp_path: Path) -> None:
    data = skill_zip({"caf\u0065\u0301/SKILL.md": MD.format(name="caf\u00e9"),
                      "caf\u0065\u0301/notes/r\u0065\u0301sum\u0065\u0301.md": "x"})
    skill = read_foreign(data)
    assert skill.name == "caf\u00e9"
    assert not skill.renamed  # the same name, spelt otherwise
    assert [f.path for f in skill.files] == ["SKILL.md", "notes/r\u00e9sum\u00e9.md"]
    target, _ = unpack(data, tmp_path)
    assert os.listdir(tmp_path) == ["caf\u00e9"]
    assert os.listdir(target / "notes") == ["r\u00e9sum\u00e9.md"]


def test_folder_names_the_skill_when_frontmatter_is_broken() -> None:
    skill = read_foreign(skill_zip({"alpha/SKILL.md": "no frontmatter\n"}))
    assert skill.name == "alpha"  # `check` of the unpacked folder reports the frontmatter


def test_root_layout_needs_a_name() -> None:
    with pytest.raises(ArchiveError, match="no 'name'"):
        read_foreign(skill_zip({"SKILL.md": "---\ndescription: x\n---\n"}))
    with pytest.raises(ArchiveError, match="frontmatter"):
        read_foreign(skill_zip({"SKILL.md": "no frontmatter\n"}))
    with pytest.raises(ArchiveError, match="cannot name a folder"):
        read_foreign(skill_zip({"SKILL.md": MD.format(name="../up")}))


@pytest.mark.parametrize("files, fragment", [
    ({}, "holds no files"),
    ({"a/skill.md": "x"}, "'a/skill.md'"),
    ({"a/SKILL.md": "x", "b/SKILL.md": "x"}, "2 top-level entries ('a', 'b')"),
    ({"a/b/SKILL.md": "x"}, "top folder 'a'"),
])
def test_not_a_skill_archive(files: dict[str, str], fragment: str) -> None:
    with pytest.raises(ArchiveError, match="not a skill archive") as caught:
        read_foreign(skill_zip(files))
    assert fragment in str(caught.value)
    assert [p.code for p in caught.value.problems] == ["not-a-skill-archive"]


def test_not_an_archive() -> None:
    with pytest.raises(ArchiveError, match=r"not a zip, tar or tar\.gz"):
        read_foreign(b"just some text\n")


def test_existing_target_is_refused_and_untouched(tmp_path: Path) -> None:
    make_tree(tmp_path / "waitlist", {"mine.txt": "keep me\n"})
    with pytest.raises(WriteError, match="already exists") as caught:
        unpack(anthropic_zip(WAITLIST), tmp_path)
    assert [p.code for p in caught.value.problems] == ["target-exists"]
    assert sorted(os.listdir(tmp_path)) == ["waitlist"]
    assert os.listdir(tmp_path / "waitlist") == ["mine.txt"]
    (tmp_path / "file").mkdir()
    (tmp_path / "file" / "waitlist").write_text("a file\n")
    with pytest.raises(WriteError, match="not a folder"):
        unpack(anthropic_zip(WAITLIST), tmp_path / "file")


def test_empty_target_folder_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "waitlist").mkdir()
    target, _ = unpack(anthropic_zip(WAITLIST), tmp_path)
    assert digest(target) == digest(WAITLIST)


def test_missing_output_folders_are_made_and_removed_on_failure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target, _ = unpack(anthropic_zip(WAITLIST), tmp_path / "a" / "b")
    assert target.is_dir()
    deny_open(monkeypatch, lambda path, _fd: path.endswith("waitlist.py"))
    with pytest.raises(WriteError, match="nothing was written"):
        unpack(anthropic_zip(WAITLIST), tmp_path / "c" / "d")
    assert sorted(os.listdir(tmp_path)) == ["a"]  # c/, c/d/ and the temp folder are gone


def test_interrupt_while_writing_leaves_nothing(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(_path: str) -> None:
        raise KeyboardInterrupt

    intercept_open(monkeypatch, lambda path, _fd: path.endswith("waitlist.csv"), interrupt)
    with pytest.raises(KeyboardInterrupt):
        unpack(anthropic_zip(WAITLIST), tmp_path / "out")
    assert os.listdir(tmp_path) == []


def test_refused_archive_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError):
        unpack(skill_zip({"a/SKILL.md": "x", "a/../../evil": "x"}), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_unpacked_gives_a_temp_folder_with_the_digest() -> None:
    with unpacked(root_zip(WAITLIST), source="w.zip") as (folder, skill):
        assert skill.name == folder.name == "waitlist"
        assert digest(folder) == digest(WAITLIST)
    assert not folder.exists() and not folder.parent.exists()


def test_caps_are_checked_and_round_trip() -> None:
    assert Caps() == Caps(total=1 << 30, members=10_000, ratio=200)
    assert Caps.from_dict(Caps(total=5).to_dict()) == Caps(total=5)
    for bad in ({"total": 0}, {"members": -1}, {"ratio": True}, {"ratio": 1.5}):
        with pytest.raises(ValueError, match="positive integer"):
            Caps(**bad)  # type: ignore[arg-type]


def test_to_dict_lists_files_without_bytes() -> None:
    summary = read_foreign(anthropic_zip(WAITLIST)).to_dict()
    assert summary["name"] == "waitlist" and summary["kind"] == "foreign"
    assert summary["files"][2] == {"path": "scripts/waitlist.py", "size": os.path.getsize(
        WAITLIST / "scripts" / "waitlist.py"), "mode": "100755"}


@pytest.mark.corpus
@pytest.mark.parametrize("index", range(0, 200, 10))
def test_corpus_skills_packed_like_anthropic_unpack_to_their_digest(tmp_path: Path,
                                                                    index: int) -> None:
    """Every tenth corpus skill (all 182 pass; the sample keeps the suite short)."""
    if index >= len(CORPUS_SKILLS):
        pytest.skip("the corpus has fewer skills")
    folder = CORPUS_SKILLS[index]
    try:
        want = digest(folder)
    except SkillpackError as exc:
        pytest.skip(f"the corpus skill itself has no digest: {exc}")
    target, skill = unpack(anthropic_zip(folder), tmp_path)
    assert skill.name == folder.name and digest(target) == want
