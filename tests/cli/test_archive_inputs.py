"""Inputs a user has: a folder of `.skill` archives, and archives made elsewhere (Anthropic's
packager: DEFLATE, one top folder, no manifest; a .tar.gz), given to digest, verify, bundle
and inspect. An archive made elsewhere is read as the folder it unpacks to: its digest is the
digest of the folder it was made from."""

from __future__ import annotations

import json
import tarfile
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.cli import cli
from helpers.paths import NOTES, WAITLIST

from skillpack.cli import main
from skillpack.packing.verify import digest


def anthropic_skill(folder: Path, dest: Path) -> Path:
    """A .skill as Anthropic's package_skill.py makes it: every file of the folder, DEFLATE,
    under one top folder named after the skill."""
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"{folder.name}/{path.relative_to(folder).as_posix()}")
    return dest


def tar_gz(folder: Path, dest: Path) -> Path:
    with tarfile.open(dest, "w:gz") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.add(path, f"{folder.name}/{path.relative_to(folder).as_posix()}")
    return dest


@pytest.mark.parametrize("make", [anthropic_skill, tar_gz])
def test_a_foreign_archive_has_the_digest_of_its_folder(make: object, tmp_path: Path) -> None:
    suffix = ".skill" if make is anthropic_skill else ".tar.gz"
    archive = make(NOTES, tmp_path / f"release-notes{suffix}")  # type: ignore[operator]
    expected = digest(NOTES)
    shown = cli("digest", archive)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout == f"{expected}  release-notes\n"
    verified = cli("verify", archive)
    assert verified.exit_code == 0, verified.output
    assert verified.stdout == f"ok        {expected}  release-notes  ({archive})\n"
    inspected = json.loads(cli("inspect", "--json", archive).stdout)
    assert [s["digest"] for s in inspected["skills"]] == [expected]
    bundled = json.loads(cli("bundle", archive, "-o", tmp_path / "b.bundle", "--json").stdout)
    assert [(s["name"], s["digest"], s["source"]) for s in bundled["skills"]] == [
        ("release-notes", expected, str(archive))]


def test_a_folder_of_archives_is_its_archives(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli("pack", WAITLIST, NOTES, "-o", out).exit_code == 0
    anthropic_skill(NOTES, out / "elsewhere.zip")  # the same skill from elsewhere: no clash
    want = sorted([f"{digest(NOTES)}  release-notes", f"{digest(WAITLIST)}  waitlist"])
    shown = cli("digest", out)
    assert shown.exit_code == 0, shown.output
    assert sorted(set(shown.stdout.splitlines())) == want
    assert cli("verify", out).exit_code == 0
    assert cli("inspect", out).exit_code == 0
    bundled = cli("bundle", out, "-o", tmp_path / "all.bundle", "--json")
    assert bundled.exit_code == 0, bundled.output
    assert sorted(s["name"] for s in json.loads(bundled.stdout)["skills"]) == [
        "release-notes", "waitlist"]


def test_a_tampered_archive_of_ours_is_refused_not_read_as_foreign(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli("pack", NOTES, "-o", out).exit_code == 0
    [packed] = out.glob("*.skill")
    data = bytearray(packed.read_bytes())
    at = data.find(b"# ")  # a byte of a file's content
    data[at] ^= 1
    packed.write_bytes(bytes(data))
    for command in ("digest", "verify"):
        assert cli(command, packed).exit_code == 1
        assert cli(command, out).exit_code == 1


def test_a_folder_with_skills_and_archives_is_a_folder_of_skills(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "dist").mkdir(parents=True)
    anthropic_skill(NOTES, repo / "dist" / "notes.skill")
    skill = repo / "mine"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: mine\ndescription: Mine.\n---\nx\n")
    shown = cli("digest", repo)
    assert shown.exit_code == 0
    assert [line.split("  ")[1] for line in shown.stdout.splitlines()] == ["mine"]


def test_an_archive_of_ours_rezipped_is_refused_by_the_strict_reader(tmp_path: Path) -> None:
    """A `.skill` unzipped and zipped again (DEFLATE, its manifest kept) is still ours: the
    strict reader says what is wrong with it, it is never read as made elsewhere; a zip
    naming no manifest, STORED or not, is."""
    out = tmp_path / "out"
    assert cli("pack", NOTES, "-o", out).exit_code == 0
    [packed] = out.glob("*.skill")
    rezipped = tmp_path / "rezipped.skill"
    with zipfile.ZipFile(packed) as source, zipfile.ZipFile(rezipped, "w",
                                                             zipfile.ZIP_DEFLATED) as dest:
        for info in source.infolist():
            dest.writestr(info.filename, source.read(info))
    for command in ("digest", "verify"):
        shown = cli(command, rezipped)
        assert shown.exit_code == 1
        assert "compress" in shown.output and "STORED" in shown.output, shown.output
    stored = tmp_path / "stored.zip"
    with zipfile.ZipFile(packed) as source, zipfile.ZipFile(stored, "w") as dest:
        for info in source.infolist():
            if not info.filename.endswith(".skillpack/manifest.json"):
                dest.writestr(info, source.read(info))  # STORED, its mode kept
    shown = cli("digest", stored)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout == f"{digest(NOTES)}  release-notes\n"


def test_an_archive_refused_whole_is_named_where_its_problems_are_shown(tmp_path: Path) -> None:
    """A zip of two skills is no skill archive: the problem is the archive's own, shown at
    its path by every command (it read ``<skill>: error:`` and ``"file": null``)."""
    multi = tmp_path / "multi.zip"
    with zipfile.ZipFile(multi, "w") as archive:
        for folder in (NOTES, WAITLIST):
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    archive.write(path, f"{folder.name}/{path.relative_to(folder)}")
    for command in (["check"], ["catalog"], ["digest"], ["files"]):
        result = cli(*command, multi)
        assert result.exit_code == 1
        assert (f"{multi}: error: [not-a-skill-archive]" in result.output  # a problem
                or f"error: {multi}: [not-a-skill-archive]" in result.output), result.output
        assert "<skill>" not in result.output
    [item] = json.loads(cli("check", "--json", multi).stdout)
    assert [p["file"] for p in item["problems"]] == [str(multi)]


def test_compile_tools_and_resolve_read_an_archive_as_its_folder(tmp_path: Path) -> None:
    """One PATH, one meaning: a .skill of the skill gives what its folder gives (it read the
    zip as a SKILL.md: "not valid UTF-8"); a file that is no SKILL.md and a folder of several
    skills are refused, saying what they hold."""
    [archive] = [Path(line.split()[0]) for line in cli(
        "pack", WAITLIST, "-o", tmp_path / "out").stdout.splitlines()]
    call = '{"tool": "join", "args": {"email": "ada@example.com"}}'
    for command in (["compile"], ["tools", "--format", "openai"], ["resolve"]):
        from_folder = CliRunner().invoke(main, [*command, str(WAITLIST)], input=call)
        from_archive = CliRunner().invoke(main, [*command, str(archive)], input=call)
        assert from_folder.exit_code == from_archive.exit_code == 0, from_archive.output
        assert from_archive.stdout == from_folder.stdout
    notes = tmp_path / "notes.md"
    notes.write_text((WAITLIST / "SKILL.md").read_text())
    result = cli("compile", notes)
    assert result.exit_code == 1 and "[no-skill]" in result.stderr
    result = cli("compile", WAITLIST.parent)
    assert result.exit_code == 1 and "and this command reads one" in result.stderr
