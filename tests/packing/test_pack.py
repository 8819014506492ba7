"""`pack`: content-addressed `.skill` archives that keep every promise of SPEC section 3.

Real trees only: the corpus (read-only; copied to tmp_path when a test must change a skill),
fixtures/, and skills built here (tests/helpers/skills.py).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path
from typing import Any

import pytest
from blake3 import blake3
from helpers.cli import cli, only_archive
from helpers.paths import CLAUDE_API, CORPUS, CORPUS_SKILLS, NOTES, TOO_LONG, WAITLIST
from helpers.skills import MINIMAL, RICH_EXECUTABLES, copy_skill, make_skill, tree
from helpers.zips import zip_members

from skillpack import _atomic as atomic
from skillpack.errors import (
    ArchiveError,
    IntegrityError,
    SkillError,
    SkillpackError,
    WriteError,
)
from skillpack.packing.members import Member, check_limits
from skillpack.packing.pack import (
    archive_name,
    pack,
    pack_prepared,
    pack_skills,
    prepare_many,
    prepare_skill,
)
from skillpack.packing.verify import digest
from skillpack.storedzip.writer import ZipWriter

VALID = [folder for folder in CORPUS_SKILLS if folder != CLAUDE_API]
ARCHIVE_RE = re.compile(r"(?P<name>[a-z0-9-]+)-(?P<hex>[0-9a-f]{16})\.skill")

# -- the archive and its name -------------------------------------------------------------------

def test_archive_is_named_by_its_digest(tmp_path: Path) -> None:
    [result] = pack_skills([WAITLIST], tmp_path)
    match = ARCHIVE_RE.fullmatch(result.path.name)
    assert match is not None, result.path.name
    assert match["name"] == "waitlist"
    assert result.digest == digest(WAITLIST)
    assert "blake3:" + match["hex"] == result.digest[:23]
    assert result.path.name == archive_name("waitlist", result.digest)
    assert result.written and result.path.parent == tmp_path
    assert sorted(p.name for p in tmp_path.iterdir()) == [result.path.name]  # no temp left
    assert stat.S_IMODE(result.path.stat().st_mode) == 0o644


def test_stdlib_zipfile_reads_the_skill_folder_with_its_modes(tmp_path: Path, rich: Path) -> None:
    [archive] = pack(rich, tmp_path)
    source = tree(rich)
    with zipfile.ZipFile(archive) as zf:
        assert zf.testzip() is None  # every CRC-32 right
        infos = zf.infolist()
        names = [i.filename for i in infos]
        assert names == sorted(names, key=lambda n: n.encode("utf-8"))
        files = sorted((f"rich/{p}" for p in [*source, ".skillpack/manifest.json"]),
                       key=lambda n: n.encode("utf-8"))
        assert names == files
        for info in infos:
            assert info.compress_type == zipfile.ZIP_STORED
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
            assert not info.is_dir()
            rel = info.filename.removeprefix("rich/")
            if rel == ".skillpack/manifest.json":
                assert info.external_attr >> 16 == 0o100644
                continue
            data, mode = source[rel]
            assert zf.read(info) == data
            assert info.external_attr >> 16 == (0o100755 if mode & 0o100 else 0o100644)
        zf.extractall(tmp_path / "x")
    extracted = tree(tmp_path / "x" / "rich")
    assert {p: d for p, (d, _) in extracted.items() if not p.startswith(".skillpack/")} == {
        p: d for p, (d, _) in source.items()}


def test_unzip_command_gives_the_folder_with_0644_and_0755(tmp_path: Path, rich: Path) -> None:
    if shutil.which("unzip") is None:
        pytest.skip("no unzip command")
    [archive] = pack(rich, tmp_path / "out")
    subprocess.run(["unzip", "-q", str(archive), "-d", str(tmp_path / "x")], check=True)
    top = [p.name for p in (tmp_path / "x").iterdir()]
    assert top == ["rich"]
    extracted = tree(tmp_path / "x" / "rich")
    source = tree(rich)
    assert set(extracted) == set(source) | {".skillpack/manifest.json"}
    executables = 0
    for rel, (data, mode) in extracted.items():
        if rel == ".skillpack/manifest.json":
            assert mode == 0o644
            continue
        assert data == source[rel][0], rel
        want = 0o755 if source[rel][1] & 0o100 else 0o644
        assert mode == want, (rel, oct(mode))
        executables += want == 0o755
    assert executables == RICH_EXECUTABLES


def test_manifest_holds_every_promised_field(tmp_path: Path) -> None:
    [archive] = pack(WAITLIST, tmp_path)
    raw = zip_members(archive.read_bytes())["waitlist/.skillpack/manifest.json"][0]
    manifest = json.loads(raw)
    # canonical JSON: sorted keys, no insignificant whitespace, UTF-8, one newline
    assert raw == json.dumps(manifest, sort_keys=True, separators=(",", ":"),
                             ensure_ascii=False).encode() + b"\n"
    assert set(manifest) == {"format", "name", "description", "digest", "files", "programs",
                             "tools", "allowances"}
    assert manifest["format"] == "1.1"
    assert manifest["name"] == "waitlist"
    assert manifest["description"].startswith("Manage a product waitlist kept in a CSV file.")
    assert manifest["digest"] == digest(WAITLIST)
    # every file's path, size, mode, blake3 and sha256, computed here independently
    expected = []
    for rel in ["SKILL.md", "data/waitlist.csv", "scripts/waitlist.py"]:
        path = WAITLIST / rel
        data = path.read_bytes()
        expected.append({"path": rel, "size": len(data), "blake3": blake3(data).hexdigest(),
                         "sha256": hashlib.sha256(data).hexdigest(),
                         "mode": "100755" if path.stat().st_mode & 0o100 else "100644"})
    assert manifest["files"] == expected
    lines = "".join(f"{f['mode']} {f['size']} {f['blake3']} {f['path']}\n" for f in expected)
    own = blake3(b"skillpack-digest-v1\n" + lines.encode()).hexdigest()
    assert manifest["digest"] == "blake3:" + own
    programs = {p["name"]: p for p in manifest["programs"]}
    assert set(programs) == {"awk", "python3"}
    assert programs["awk"]["tools"] == ["count"] and not programs["awk"]["dynamic"]
    assert "shebang:scripts/waitlist.py" in programs["python3"]["sources"]
    tools = {t["id"]: t for t in manifest["tools"]}
    assert list(tools) == ["join", "list", "access", "count"]
    schema = tools["access"]["schema"]
    assert schema["type"] == "object"
    assert schema["properties"]["operation"]["enum"] == ["accept", "reject"]
    assert schema["required"] == ["email", "operation"]
    assert tools["list"]["schema"]["properties"]["limit"] == {
        "type": "integer", "description": "How many entries to show.", "default": 20}
    assert manifest["allowances"] == []


def test_allowance_is_recorded_in_the_manifest(tmp_path: Path) -> None:
    folder = tmp_path / "certs"
    make_skill(folder, {"public.pem": "-----BEGIN CERTIFICATE-----\nMIIB\n"})
    with pytest.raises(SkillpackError) as info:
        prepare_skill(folder)
    assert [p.code for p in info.value.problems] == ["secret"]
    text = MINIMAL.format(name="certs").replace(
        "---\n\n", 'metadata:\n  skillpack-allow-secrets: "public.pem"\n---\n\n')
    (folder / "SKILL.md").write_text(text)
    [archive] = pack(folder, tmp_path / "out")
    manifest = json.loads(zip_members(archive.read_bytes())["certs/.skillpack/manifest.json"][0])
    assert manifest["allowances"] == ["public.pem"]


@pytest.mark.parametrize("which", ["waitlist", "release-notes", "rich"])
def test_unpacked_archive_packs_again_to_the_same_bytes(tmp_path: Path, which: str,
                                                        rich: Path) -> None:
    source = {"waitlist": WAITLIST, "release-notes": NOTES, "rich": rich}[which]
    [first] = pack(source, tmp_path / "one")
    with zipfile.ZipFile(first) as zf:
        zf.extractall(tmp_path / "unpacked")
    unpacked = tmp_path / "unpacked" / source.name
    for info in zipfile.ZipFile(first).infolist():  # zipfile does not restore modes
        (unpacked.parent / info.filename).chmod(info.external_attr >> 16 & 0o777)
    assert (unpacked / ".skillpack" / "manifest.json").is_file()
    assert digest(unpacked) == digest(source)
    [second] = pack(unpacked, tmp_path / "two")
    assert second.name == first.name
    assert second.read_bytes() == first.read_bytes()


# -- packing again ------------------------------------------------------------------------------

def test_packing_an_unchanged_skill_again_rewrites_nothing(tmp_path: Path) -> None:
    [first] = pack_skills([WAITLIST, NOTES], tmp_path)[:1]
    os.utime(first.path, ns=(1_000_000_000, 1_000_000_000))  # so that a rewrite would show
    before = first.path.stat()
    again = pack_skills([WAITLIST, NOTES], tmp_path)
    assert [r.written for r in again] == [False, False]
    after = first.path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, 1_000_000_000)
    assert again[0].path == first.path and again[0].digest == first.digest


def test_the_command_says_when_nothing_was_rewritten(tmp_path: Path) -> None:
    first = cli("pack", WAITLIST, "-o", tmp_path)
    assert first.exit_code == 0 and first.stdout.endswith("(packed)\n")
    archive = only_archive(tmp_path)
    inode = archive.stat().st_ino
    second = cli("pack", WAITLIST, "-o", tmp_path)
    assert second.exit_code == 0
    sha = "sha256:" + hashlib.sha256(archive.read_bytes()).hexdigest()
    assert second.stdout == (f"{archive}  {digest(WAITLIST)}  {sha}  "
                             "(unchanged, not rewritten)\n")
    as_json = json.loads(cli("pack", "--json", WAITLIST, "-o", tmp_path).stdout)
    assert as_json == [{"name": "waitlist", "digest": digest(WAITLIST), "archive": str(archive),
                        "sha256": sha, "layout": "wrapped", "manifest": True,
                        "written": False,
                        "source": str(WAITLIST), "warnings": []}]
    assert archive.stat().st_ino == inode


def _flip(data: bytes, at: int) -> bytes:
    out = bytearray(data)
    out[at] ^= 0x01
    return bytes(out)


@pytest.mark.parametrize("damage", ["data byte", "mode bits", "truncated", "appended", "empty"])
def test_a_damaged_archive_under_the_final_name_is_rewritten(tmp_path: Path, damage: str) -> None:
    [archive] = pack(WAITLIST, tmp_path)
    good = archive.read_bytes()
    central = good.rindex(b"PK\x01\x02")  # the last central-directory entry: the script
    assert good[central + 40:central + 42] == b"\xed\x81"  # 0100755
    bad = {
        "data byte": _flip(good, good.index(b"#!/usr/bin/env python3") + 3),
        "mode bits": good[:central + 40] + b"\xfd\x81" + good[central + 42:],  # 0755 -> 0775
        "truncated": good[:-1],
        "appended": good + b"\0",
        "empty": b"",
    }[damage]
    assert bad != good
    archive.write_bytes(bad)
    [result] = pack_skills([WAITLIST], tmp_path)
    assert result.written
    assert archive.read_bytes() == good


def test_an_existing_folder_under_the_final_name_is_an_error(tmp_path: Path) -> None:
    (tmp_path / archive_name("waitlist", digest(WAITLIST))).mkdir()
    with pytest.raises(WriteError):
        pack(WAITLIST, tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [archive_name("waitlist", digest(WAITLIST))]


# -- refusals: check errors, nothing written ----------------------------------------------------

@pytest.mark.corpus
def test_the_181_valid_corpus_skills_pack_without_refusal(tmp_path: Path) -> None:
    results = pack_skills(VALID, tmp_path)
    assert len(results) == len(VALID) == 181
    assert all(r.written for r in results)
    assert [Path(r.source) for r in results] == VALID
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(r.path.name for r in results)  # two skill-creators, two digests
    assert all(ARCHIVE_RE.fullmatch(n) for n in names)
    creators = [r for r in results if r.name == "skill-creator"]
    assert len(creators) == 2 and creators[0].digest != creators[1].digest


@pytest.mark.corpus
def test_pack_refuses_exactly_what_check_finds_in_error() -> None:
    result = cli("check", "--json", CORPUS)
    assert result.exit_code == 1
    invalid = [Path(r["path"]) for r in json.loads(result.stdout) if not r["valid"]]
    assert invalid == [CLAUDE_API]


@pytest.mark.corpus
def test_claude_api_is_refused_for_its_description_alone() -> None:
    with pytest.raises(SkillError) as info:
        prepare_skill(CLAUDE_API)
    assert [p.code for p in info.value.problems] == ["description-too-long"]
    assert "1068 characters" in info.value.problems[0].message
    assert "1068" not in str(info.value)  # said once: in the problem, not the header too


def test_nothing_is_written_when_an_invalid_skill_is_among_the_inputs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(SkillError):
        pack_skills([WAITLIST, TOO_LONG, NOTES], out)
    assert not out.exists()
    out.mkdir()
    group = tmp_path / "group"  # a folder of skills, one of them invalid
    shutil.copytree(TOO_LONG, group / TOO_LONG.name)
    make_skill(group / "fine")
    result = cli("pack", WAITLIST, group, NOTES, "-o", out)
    assert result.exit_code == 1
    assert "[description-too-long]" in result.stderr
    assert "description-too-long/SKILL.md" in result.stderr
    assert list(out.iterdir()) == []


def test_every_refused_skill_is_listed_at_once(tmp_path: Path) -> None:
    secret = make_skill(tmp_path / "leaky", {".e" + "nv": "TOKEN=x\n"})
    for refuse in (prepare_many, lambda paths: pack_skills(paths, tmp_path / "out")):
        with pytest.raises(SkillpackError) as info:
            refuse([WAITLIST, secret, TOO_LONG, NOTES])
        codes = sorted(p.code for p in info.value.problems)
        assert codes == ["description-too-long", "secret"]
        assert str(secret) in str(info.value) and str(TOO_LONG) in str(info.value)
    assert not (tmp_path / "out").exists()


# -- where it is written ------------------------------------------------------------------------

def test_packing_into_a_file_leaves_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_bytes(b"not a folder")
    for out in (blocker, blocker / "sub"):
        with pytest.raises(WriteError) as info:
            pack(WAITLIST, out)
        assert str(out) in str(info.value)
    assert blocker.read_bytes() == b"not a folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker"]
    result = cli("pack", WAITLIST, "-o", blocker / "sub")
    assert result.exit_code == 1 and "skillpack: error:" in result.stderr


@pytest.mark.parametrize("failing", ["create", "sync", "rename"])
def test_an_unwritable_destination_leaves_nothing_under_the_final_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    real_open, real_replace = os.open, os.replace

    def refuse(*_: Any, **__: Any) -> Any:
        raise OSError(errno.EACCES if failing != "sync" else errno.ENOSPC, "simulated")

    if failing == "create":
        def fake_open(path: Any, flags: int, *rest: Any, **kw: Any) -> int:
            if flags & os.O_CREAT:
                refuse()
            return real_open(path, flags, *rest, **kw)
        monkeypatch.setattr(atomic.os, "open", fake_open)
    elif failing == "sync":
        monkeypatch.setattr(atomic.os, "fsync", refuse)
    else:
        monkeypatch.setattr(atomic.os, "replace", refuse)
    with pytest.raises(WriteError) as info:
        pack_skills([WAITLIST, NOTES], tmp_path)
    assert "nothing was written" in str(info.value)
    monkeypatch.setattr(atomic.os, "open", real_open)
    monkeypatch.setattr(atomic.os, "replace", real_replace)
    assert list(tmp_path.iterdir()) == []  # no archive, no temp file


def test_a_failure_on_a_later_skill_removes_the_archives_of_this_call(tmp_path: Path) -> None:
    one = copy_skill(WAITLIST, tmp_path / "src" / "waitlist")
    two = make_skill(tmp_path / "src" / "two", {"notes.txt": "some text\n"})
    out = tmp_path / "out"
    [kept] = pack(NOTES, out)  # there before: never removed
    prepared = prepare_many([one, two])
    (two / "notes.txt").write_text("some text, and more\n")
    with pytest.raises(IntegrityError):
        pack_prepared(prepared, out)
    assert sorted(p.name for p in out.iterdir()) == [kept.name]


# -- a file that changes while it is packed -----------------------------------------------------

@pytest.mark.parametrize("change", ["grow", "shrink", "same size", "replace"])
def test_a_file_changed_between_prepare_and_write_is_refused(tmp_path: Path, change: str) -> None:
    folder = make_skill(tmp_path / "moving", {"data.txt": "0123456789\n"})
    [item] = prepare_many([folder])
    target = folder / "data.txt"
    if change == "grow":
        with target.open("ab") as handle:
            handle.write(b"more\n")
    elif change == "shrink":
        os.truncate(target, 3)
    elif change == "same size":
        target.write_bytes(b"9876543210\n")
    else:
        (folder / "new.tmp").write_bytes(b"0123456789\n")  # same bytes, another file
        os.replace(folder / "new.tmp", target)
    with pytest.raises(IntegrityError) as info:
        pack_prepared([item], tmp_path / "out")
    assert "moving/data.txt" in str(info.value)
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize("change", ["grow", "shrink"])
def test_a_file_changed_while_it_is_copied_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    big = os.urandom(3 << 20)  # several chunks of the writer
    folder = make_skill(tmp_path / "moving", {"big.bin": big})
    real_add_fd = ZipWriter.add_fd

    def add_fd(self: ZipWriter, name: str, fd: int, size: int, **kw: Any) -> str:
        if name.endswith("big.bin"):  # the file is open: change it under the reader
            if change == "grow":
                with (folder / "big.bin").open("ab") as handle:
                    handle.write(b"x")
            else:
                os.truncate(folder / "big.bin", len(big) // 2)
        return real_add_fd(self, name, fd, size, **kw)

    monkeypatch.setattr(ZipWriter, "add_fd", add_fd)
    with pytest.raises(IntegrityError) as info:
        pack(folder, tmp_path / "out")
    assert "changed while being packed" in str(info.value)
    assert not (tmp_path / "out").exists()  # nothing left, not even the folder pack made


# -- memory ----------------------------------------------------------------------------------

_MEASURE = textwrap.dedent("""
    import json, resource, sys
    from skillpack.packing.pack import pack_skills
    runs = [pack_skills([sys.argv[1]], sys.argv[2])[0].written for _ in range(2)]
    hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")]
    print(json.dumps({"written": runs, "maxrss_kib":
                      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                      "hwm_kib": int(hwm[0].split()[1]) if hwm else 0}))
""")
# ru_maxrss of a process started by pytest would carry pytest's own peak across the exec:
# a small launcher starts the measured process, and reports its children's ru_maxrss too.
_LAUNCH = textwrap.dedent("""
    import json, resource, subprocess, sys
    out = subprocess.run([sys.executable, "-c", sys.argv[1], *sys.argv[2:]],
                         capture_output=True, text=True, check=True).stdout
    result = json.loads(out)
    result["children_maxrss_kib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps(result))
""")


@pytest.mark.slow
def test_a_1_gib_file_packs_in_well_under_64_mib(tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "huge")
    big = folder / "blob.bin"
    out = tmp_path / "out"
    try:
        with big.open("wb") as handle:  # sparse: fast to make, real bytes in the archive
            handle.seek((1 << 30) - 1)
            handle.write(b"\n")
        done = subprocess.run([sys.executable, "-c", _LAUNCH, _MEASURE, str(folder), str(out)],
                              capture_output=True, text=True, check=True)
        result = json.loads(done.stdout)
        assert result["written"] == [True, False]  # packed, then compared and left alone
        assert result["children_maxrss_kib"] < 64 * 1024
        assert result["maxrss_kib"] < 64 * 1024
        if result["hwm_kib"]:
            assert result["hwm_kib"] < 64 * 1024
        archive = only_archive(out)
        assert archive.stat().st_size > 1 << 30
        with zipfile.ZipFile(archive) as zf:
            info = zf.getinfo("huge/blob.bin")
            assert info.file_size == 1 << 30
    finally:
        big.unlink(missing_ok=True)
        for leftover in out.glob("*") if out.exists() else []:
            leftover.unlink()


def test_paths_resolved_once_still_find_the_output_and_the_twin_through_links(
    tmp_path: Path,
) -> None:
    """pack resolves each path once for the command (`ResolvedOutputs`): an output folder
    named through a link into the skill is still left out of it, and a skill named twice
    (itself and a link to it) is still packed once."""
    skill = copy_skill(WAITLIST, tmp_path / "src" / "waitlist")
    (skill / "dist").mkdir()
    (skill / "dist" / "old.txt").write_text("an earlier pack's output\n")
    (tmp_path / "out").symlink_to(skill / "dist")
    (tmp_path / "again").symlink_to(skill)
    (result,) = pack_skills([skill, tmp_path / "again"], tmp_path / "out")
    assert result.path.parent == tmp_path / "out" and result.digest == digest(WAITLIST)
    names = sorted(p.name for p in (skill / "dist").iterdir())
    assert names == sorted([result.path.name, "old.txt"])


def _bytes_read() -> int:
    """What this process has read so far, by any read call (``rchar`` of /proc/self/io)."""
    with open("/proc/self/io") as io:
        return int(next(line for line in io if line.startswith("rchar:")).split()[1])


@pytest.mark.parametrize("command", ["check", "pack"])
def test_a_skill_no_archive_can_hold_is_refused_without_reading_its_large_files(
        tmp_path: Path, command: str) -> None:
    """A skill of 5 GiB (sparse files: no disk) was read whole before `check` and `pack`
    refused it as over the archive size (about 27 s). Its files' sizes are known from the
    listing: now it is refused having read less than a megabyte of them, whether one file is
    that large, or several together, or the file is named by a declared include."""
    make_skill(tmp_path / "s" / "one", {"data/model.bin": b""})
    os.truncate(tmp_path / "s" / "one" / "data" / "model.bin", 5 << 30)
    make_skill(tmp_path / "s" / "three", {f"data/{x}.bin": b"" for x in "abc"})
    for x in "abc":
        os.truncate(tmp_path / "s" / "three" / "data" / f"{x}.bin", 1536 << 20)
    included = tmp_path / "s" / "included"
    (included / "data").mkdir(parents=True)
    (included / "SKILL.md").write_text(
        "---\nname: included\ndescription: Carries a model. Use when testing.\n"
        "includes:\n  - data/model.bin\n---\nSee data/model.bin.\n")
    (included / "data" / "model.bin").write_bytes(b"")
    os.truncate(included / "data" / "model.bin", 5 << 30)
    before = _bytes_read()
    result = cli(command, tmp_path / "s", *(["-o", tmp_path / "out"] if command == "pack" else []))
    read = _bytes_read() - before
    assert result.exit_code == 1, result.output
    for name, largest in (("one", "data/model.bin 5,368,709,120 bytes"),
                          ("three", "data/a.bin 1,610,612,736 bytes"),
                          ("included", "data/model.bin 5,368,709,120 bytes")):
        assert re.search(rf"s/{name}: error: \[archive-limit\] the skill's files would be "
                         rf"[0-9,]+ bytes; an archive is at most 4,294,967,294 bytes \(the "
                         rf"largest files: {re.escape(largest)}", result.output), result.output
    assert read < 1 << 20, f"{read:,} bytes read"
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_skill_over_the_archive_size_names_its_folder_and_largest_files() -> None:
    """A skill of 5 GiB was refused as `<skill>: [archive-limit] ...`, naming neither the
    skill's folder nor the file to move out."""
    members = [Member("huge/SKILL.md", 45, False), Member("huge/model.bin", 5 << 30, False),
               Member("huge/notes.md", 10, False)]
    with pytest.raises(ArchiveError) as caught:
        check_limits(members, what="skill 'huge'", path="skills/huge")
    [problem] = caught.value.problems
    assert (problem.code, problem.file, caught.value.path) == (
        "archive-limit", "skills/huge", "skills/huge")
    assert "(the largest files: huge/model.bin 5,368,709,120 bytes, huge/SKILL.md 45 bytes, " \
           "huge/notes.md 10 bytes)" in problem.message
