"""`verify`: folders, archives and bundles, alone or against a lock or a digest.

Tampered archives are made here from real packs: bytes flipped in place, or members changed
and the zip rewritten with skillpack's own writer so that only the change is wrong. Every
one must be refused with exit 1 and a message naming what is wrong, never a traceback.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import struct
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from blake3 import blake3
from helpers.cli import cli
from helpers.paths import NOTES, WAITLIST
from helpers.skills import copy_skill, make_skill, rich_skill
from helpers.zips import zip_members
from helpers.zips import zip_of as zip_of

from skillpack.approve.compare import diff_files
from skillpack.approve.lock import read_lock, write_lock
from skillpack.errors import SkillpackError
from skillpack.formats.digest import FileRecord, digest_records
from skillpack.formats.manifest import canonical_json
from skillpack.packing.bundle import write_bundle
from skillpack.packing.pack import pack
from skillpack.packing.verify import (
    digest,
    verify_bytes,
    verify_file,
    verify_folder,
    verify_target,
)
from skillpack.runtime import load

MANIFEST = "waitlist/.skillpack/manifest.json"
SCRIPT = "waitlist/scripts/waitlist.py"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The two fixtures packed, and bundled."""
    root = tmp_path_factory.mktemp("verify")
    waitlist, notes = pack([WAITLIST, NOTES], root / "out")
    bundle = write_bundle([WAITLIST, NOTES], root / "two.bundle").path
    return {"waitlist": waitlist, "notes": notes, "bundle": bundle, "root": root}


@pytest.fixture
def good(built: dict[str, Path]) -> bytes:
    return built["waitlist"].read_bytes()


def flip(data: bytes, at: int) -> bytes:
    out = bytearray(data)
    out[at] ^= 0x01
    return bytes(out)


def with_manifest(data: bytes, change: Callable[[dict[str, Any]], None]) -> bytes:
    """The archive with its manifest changed by ``change`` and written back canonically."""
    members = zip_members(data)
    manifest = json.loads(members[MANIFEST][0])
    change(manifest)
    members[MANIFEST] = (canonical_json(manifest), False)
    return zip_of(members)


def refused(tmp_path: Path, data: bytes, *needles: str) -> str:
    """Verify ``data`` as a file, through the library and the command; return stderr."""
    target = tmp_path / "tampered.skill"
    target.write_bytes(data)
    with pytest.raises(SkillpackError):
        verify_bytes(data)
    result = cli("verify", target)
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert result.stderr.startswith(f"skillpack: error: {target}")
    for needle in needles:
        assert needle in result.stderr, (needle, result.stderr)
    return result.stderr


# -- what verifies ------------------------------------------------------------------------------

def test_a_folder_an_archive_and_a_bundle_verify(built: dict[str, Path], tmp_path: Path) -> None:
    result = cli("verify", WAITLIST, built["waitlist"], built["bundle"])
    assert result.exit_code == 0, result.output
    wd, nd = digest(WAITLIST), digest(NOTES)
    assert result.stdout.splitlines() == [
        f"ok        {wd}  waitlist  ({WAITLIST})",
        f"ok        {wd}  waitlist  ({built['waitlist']})",
        f"ok        {nd}  release-notes  ({built['bundle']})",
        f"ok        {wd}  waitlist  ({built['bundle']})",
    ]
    assert [verify_target(t).kind for t in (WAITLIST, built["waitlist"], built["bundle"])] == [
        "folder", "archive", "bundle"]
    report = verify_file(built["bundle"])
    assert [(s.name, s.digest) for s in report.skills] == [("release-notes", nd),
                                                           ("waitlist", wd)]
    group = tmp_path / "skills"  # a folder of skills: each reported from its own folder
    for name in ("zeta", "alpha", "mid"):
        rich_skill(group / name, name)
    found = verify_folder(group).skills
    assert [s.name for s in found] == ["alpha", "mid", "zeta"]
    assert [s.source for s in found] == [str(group / s.name) for s in found]
    assert [s.digest for s in found] == [digest(group / s.name) for s in found]


def test_verify_json(built: dict[str, Path]) -> None:
    result = cli("verify", "--json", built["waitlist"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == [{"target": str(built["waitlist"]), "name": "waitlist",
                                          "digest": digest(WAITLIST), "ok": True}]


def test_a_refused_folder_fails_verify(tmp_path: Path) -> None:
    leaky = make_skill(tmp_path / "leaky", {"conf/.e" + "nv": "TOKEN=1\n"})
    result = cli("verify", leaky)
    assert result.exit_code == 1
    assert "[secret]" in result.stderr and "conf/.e" + "nv" in result.stderr


# -- against a digest ---------------------------------------------------------------------------

def test_against_a_digest(built: dict[str, Path]) -> None:
    wd = digest(WAITLIST)
    assert cli("verify", "--digest", wd, WAITLIST, built["waitlist"]).exit_code == 0
    other = digest(NOTES)
    result = cli("verify", "--digest", other, built["waitlist"])
    assert result.exit_code == 1
    assert result.stdout == (f"MISMATCH  {wd}  waitlist  ({built['waitlist']}): digest differs "
                             f"from {other}\n")
    [item] = json.loads(cli("verify", "--json", "--digest", other, built["waitlist"]).stdout)
    assert (item["ok"], item["code"]) == (False, "digest-mismatch")  # a code, as every failure


def test_a_verdict_that_holds_carries_no_code(built: dict[str, Path]) -> None:
    [item] = json.loads(cli("verify", "--json", "--digest", digest(WAITLIST),
                            built["waitlist"]).stdout)
    assert item["ok"] is True and "code" not in item


def test_a_bundle_against_its_own_digest(built: dict[str, Path]) -> None:
    bundle_digest = verify_file(built["bundle"]).digest
    assert bundle_digest is not None
    ok = cli("verify", "--digest", bundle_digest, built["bundle"])
    assert ok.exit_code == 0, ok.output
    assert ok.stdout == f"ok        {bundle_digest}  bundle of 2 skill(s)  ({built['bundle']})\n"
    wrong = cli("verify", "--digest", digest(WAITLIST), built["bundle"])
    assert wrong.exit_code == 1 and "bundle digest differs" in wrong.stdout


@pytest.mark.parametrize("args", [
    ["--digest", "blake3:1234"],
    ["--digest", "sha256:" + "0" * 64],
    ["--digest", "blake3:" + "A" * 64],
    ["--digest", "0" * 64],
    ["--digest", "blake3:" + "0" * 64, "--lock", "LOCK"],
    ["--no-such-option"],
])
def test_misuse_exits_2(built: dict[str, Path], args: list[str]) -> None:
    lock = built["root"] / "misuse.lock"
    if not lock.exists():
        write_lock([], lock)
    args = [str(lock) if a == "LOCK" else a for a in args]
    result = cli("verify", *args, built["waitlist"])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""


def test_missing_target_or_none_exits_2(tmp_path: Path) -> None:
    assert cli("verify", tmp_path / "missing.skill").exit_code == 2
    assert cli("verify").exit_code == 2


# -- against a lock -----------------------------------------------------------------------------

def test_against_a_lock_lists_added_removed_and_changed(tmp_path: Path) -> None:
    lock = tmp_path / "skills.lock"
    assert cli("lock", NOTES, WAITLIST, "-o", lock).exit_code == 0
    assert cli("verify", "--lock", lock, NOTES, WAITLIST).exit_code == 0
    edited = copy_skill(NOTES, tmp_path / "edited" / "release-notes")
    (edited / "references" / "extra.md").write_text("# More\n")
    (edited / "references" / "style.md").unlink()
    with (edited / "scripts" / "collect.py").open("a") as handle:
        handle.write("# changed\n")
    [archive] = pack(edited, tmp_path / "out")
    for target in (edited, archive):
        result = cli("verify", "--lock", lock, target, WAITLIST)
        assert result.exit_code == 1
        head, *lines, waitlist = result.stdout.splitlines()
        assert waitlist.startswith("ok        ")
        assert head == (f"MISMATCH  {digest(edited)}  release-notes  ({target}): skill "
                        f"'release-notes' has digest {digest(edited)}, but the approved digest "
                        f"is {digest(NOTES)}")
        assert lines == ["  added:   references/extra.md", "  removed: references/style.md",
                         "  changed: scripts/collect.py"]
    as_json = json.loads(cli("verify", "--json", "--lock", lock, edited, WAITLIST).stdout)
    assert as_json[0]["ok"] is False
    assert (as_json[0]["added"], as_json[0]["removed"], as_json[0]["changed"]) == (
        ["references/extra.md"], ["references/style.md"], ["scripts/collect.py"])


def test_a_mode_change_shows_as_changed(tmp_path: Path) -> None:
    lock = tmp_path / "skills.lock"
    assert cli("lock", NOTES, "-o", lock).exit_code == 0
    edited = copy_skill(NOTES, tmp_path / "edited" / "release-notes")
    (edited / "scripts" / "collect.py").chmod(0o644)
    result = cli("verify", "--lock", lock, edited)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[1:] == ["  changed: scripts/collect.py"]


def test_a_skill_missing_from_the_lock_is_a_mismatch(tmp_path: Path) -> None:
    lock = tmp_path / "skills.lock"
    assert cli("lock", NOTES, "-o", lock).exit_code == 0
    result = cli("verify", "--lock", lock, NOTES, WAITLIST)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[1].endswith(
        f"skill 'waitlist' (digest {digest(WAITLIST)}) is not approved")


def test_an_approved_skill_missing_from_the_targets_is_refused_as_load_refuses_it(
        tmp_path: Path) -> None:
    lock = tmp_path / "skills.lock"
    assert cli("lock", NOTES, WAITLIST, "-o", lock).exit_code == 0
    one = write_bundle([NOTES], tmp_path / "one.bundle").path
    words = (f"skill 'waitlist' is approved with digest {digest(WAITLIST)}, but it is "
             "missing (digest: none)")
    result = cli("verify", "--lock", lock, one)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"ok        {digest(NOTES)}  release-notes  ({one})",
        f"MISMATCH  {digest(WAITLIST)}  waitlist  (in none of the targets): {words}"]
    as_json = json.loads(cli("verify", "--json", "--lock", lock, one).stdout)
    assert as_json[-1] == {"target": None, "name": "waitlist", "digest": digest(WAITLIST),
                           "ok": False, "code": "expect-missing", "reason": words}
    with pytest.raises(SkillpackError) as refused:
        load(one.read_bytes(), expect=read_lock(lock).digests())
    assert [(p.code, p.message) for p in refused.value.problems] == [("expect-missing", words)]
    # both targets together hold every approved skill: no mismatch
    other = write_bundle([WAITLIST], tmp_path / "other.bundle").path
    assert cli("verify", "--lock", lock, one, other).exit_code == 0


def test_a_lock_whose_programs_were_edited_is_a_mismatch(tmp_path: Path) -> None:
    lock = tmp_path / "skills.lock"
    assert cli("lock", WAITLIST, "-o", lock).exit_code == 0
    data = json.loads(lock.read_text())
    data["skills"]["waitlist"]["programs"] = [
        p for p in data["skills"]["waitlist"]["programs"] if p["name"] != "awk"]
    lock.write_text(json.dumps(data, indent=2))
    read_lock(lock)  # the file lines still hash to the digest: the lock reads fine
    result = cli("verify", "--lock", lock, WAITLIST)
    assert result.exit_code == 1
    assert "programs it runs differ" in result.stdout


def test_a_tampered_lock_is_refused(tmp_path: Path) -> None:
    lock = tmp_path / "skills.lock"
    assert cli("lock", WAITLIST, "-o", lock).exit_code == 0
    lock.write_text(lock.read_text().replace(" data/waitlist.csv", " data/other.csv"))
    result = cli("verify", "--lock", lock, WAITLIST)
    assert result.exit_code == 1
    assert "do not hash to its digest" in result.stderr


def test_diff_files() -> None:
    a = FileRecord("a", "100644", 1, "0" * 64)
    b = FileRecord("b", "100644", 1, "1" * 64)
    b2 = FileRecord("b", "100755", 1, "1" * 64)
    c = FileRecord("\u00e9", "100644", 1, "2" * 64)
    z = FileRecord("z", "100644", 1, "3" * 64)
    d = diff_files([a, b, z], [b2, c, z])
    assert (d.added, d.removed, d.changed) == (("\u00e9",), ("a",), ("b",))
    assert d.lines() == ["  added:   \u00e9", "  removed: a", "  changed: b"]


# -- tampered archives --------------------------------------------------------------------------

def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(manifest: dict[str, Any]) -> None:
        target: Any = manifest
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


MANIFEST_CHANGES: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "description": (lambda m: m.update(description=m["description"].replace("waitlist",
                                                                              "wait list")),
                    "manifest field 'description' of 'waitlist'"),
    "tool schema": (_set(["tools", 2, "schema", "properties", "operation", "enum"],
                         ["accept", "reject", "delete"]), "manifest field 'tools'"),
    "tool run": (_set(["tools", 0, "run"], "rm -rf $email"), "manifest field 'tools'"),
    "programs removed": (lambda m: m.update(programs=[p for p in m["programs"]
                                                      if p["name"] != "awk"]),
                         "manifest field 'programs'"),
    "programs renamed": (_set(["programs", 1, "name"], "python2"), "manifest field 'programs'"),
    "allowances": (_set(["allowances"], ["data/waitlist.csv"]), "manifest field 'allowances'"),
    "digest": (_set(["digest"], "blake3:" + "0" * 64), "hash to"),
    "name": (_set(["name"], "other"), "not its folder's name 'waitlist'"),
    "future format": (_set(["format"], "1.9"), "newer than this skillpack"),
    "other major": (_set(["format"], "2.0"), "format 1.x only"),
    "file size": (_set(["files", 1, "size"], 98), "data/waitlist.csv"),
    "file mode": (_set(["files", 2, "mode"], "100644"), "scripts/waitlist.py"),
    "extra field": (lambda m: m.update(signed_by="someone"), "unexpected or missing fields"),
}


@pytest.mark.parametrize("case", list(MANIFEST_CHANGES))
def test_an_altered_manifest_is_refused(tmp_path: Path, good: bytes, case: str) -> None:
    change, needle = MANIFEST_CHANGES[case]
    refused(tmp_path, with_manifest(good, change), needle)


def test_one_byte_of_the_description_changed_in_place(tmp_path: Path, good: bytes) -> None:
    at = good.index(b"Manage a product waitlist")
    tampered = good[:at] + b"N" + good[at + 1:]  # still valid JSON, same length
    refused(tmp_path, tampered, "manifest field 'description' of 'waitlist'")


def test_non_canonical_whitespace_in_the_manifest(tmp_path: Path, good: bytes) -> None:
    members = zip_members(good)
    raw = members[MANIFEST][0]
    members[MANIFEST] = (json.dumps(json.loads(raw), indent=1).encode(), False)
    refused(tmp_path, zip_of(members), "not in canonical form")
    # one byte, in place: the closing newline made a space (valid JSON, same length)
    at = good.index(raw) + len(raw) - 1
    refused(tmp_path, good[:at] + b" " + good[at + 1:], "not in canonical form")


def test_one_byte_of_a_member_is_refused(tmp_path: Path, good: bytes) -> None:
    at = good.index(b"#!/usr/bin/env python3") + 30
    refused(tmp_path, flip(good, at), "scripts/waitlist.py")
    members = zip_members(good)  # the same change with a right CRC: BLAKE3 still catches it
    data, executable = members[SCRIPT]
    members[SCRIPT] = (flip(data, 30), executable)
    refused(tmp_path, zip_of(members), "scripts/waitlist.py", "hash")


def test_skill_md_and_a_script_altered_with_their_crcs_are_said_for_their_hashes_alone(
        tmp_path: Path, good: bytes) -> None:
    """SKILL.md and an executable (its `#!` line read for the programs) changed in one
    byte, each with a right CRC-32: their BLAKE3 differs, said alone, before anything their
    changed text would make verify say."""
    members = zip_members(good)
    for member, at in (("waitlist/SKILL.md", 40), (SCRIPT, 2)):
        data, executable = members[member]
        members[member] = (flip(data, at), executable)
    stderr = refused(tmp_path, zip_of(members), "'SKILL.md': its bytes hash to",
                     "'scripts/waitlist.py': its bytes hash to", "(and 1 more files)")
    assert "manifest field" not in stderr


def test_members_and_manifest_must_agree(tmp_path: Path, good: bytes) -> None:
    members = zip_members(good)
    members["waitlist/extra.txt"] = (b"smuggled\n", False)
    refused(tmp_path, zip_of(members), "waitlist/extra.txt", "not in the manifest")
    members = zip_members(good)
    del members["waitlist/data/waitlist.csv"]
    refused(tmp_path, zip_of(members), "data/waitlist.csv", "no member")
    members = zip_members(good)
    members[SCRIPT] = (members[SCRIPT][0], False)
    refused(tmp_path, zip_of(members), "scripts/waitlist.py", "not executable")


def _local(data: bytes, name: str) -> int:
    """Offset of the local header of member ``name``."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return zf.getinfo(name).header_offset


def _central(data: bytes, name: str) -> int:
    """Offset of the central-directory entry of member ``name``."""
    cd_offset = struct.unpack("<IHHHHIIH", data[-22:])[6]
    return data.index(name.encode(), cd_offset) - 46


def test_modes_other_than_0644_and_0755_are_refused(tmp_path: Path, good: bytes) -> None:
    """The reader looks at the execute bit only; unzip applies the whole mode."""
    at = _central(good, "waitlist/data/waitlist.csv") + 38
    assert good[at:at + 4] == struct.pack("<I", 0o100644 << 16)
    for mode in (0o100664, 0o100600, 0o100645):
        tampered = good[:at] + struct.pack("<I", mode << 16) + good[at + 4:]
        refused(tmp_path, tampered, "waitlist/data/waitlist.csv", "external attributes")
    made_by = _central(good, "waitlist/data/waitlist.csv") + 4  # Unix -> MS-DOS: no modes
    refused(tmp_path, good[:made_by + 1] + b"\x00" + good[made_by + 2:], "version made by")


def test_a_crc_altered_in_both_headers_is_refused(tmp_path: Path, good: bytes) -> None:
    name = b"waitlist/data/waitlist.csv"
    local, central = _local(good, name.decode()), _central(good, name.decode())
    wrong = struct.pack("<I", zlib.crc32(b"something else"))
    tampered = bytearray(good)
    tampered[local + 14:local + 18] = wrong
    tampered[central + 16:central + 20] = wrong
    refused(tmp_path, bytes(tampered), "waitlist/data/waitlist.csv", "CRC-32")


def test_crcs_are_checked_across_members_larger_than_a_read(tmp_path: Path) -> None:
    """Each member's CRC-32 is computed over its bytes read a MiB at a time: members that
    straddle the reads verify, and a CRC altered in one of them (in both headers, so that
    only the CRC is wrong) is refused, naming the member and the field, from a file or bytes."""
    big = bytes(range(256)) * (5 << 12)  # 5 MiB, not a secret's shape
    folder = make_skill(tmp_path / "src" / "large", {
        "assets/a.bin": big[: (3 << 19) + 7], "assets/b.bin": big, "notes.txt": "notes\n"})
    [archive] = pack(folder, tmp_path / "out")
    data = archive.read_bytes()
    assert verify_file(archive).skills[0].name == "large"
    assert verify_bytes(data).skills[0].name == "large"
    name = "large/assets/b.bin"
    local, central = _local(data, name), _central(data, name)
    wrong = struct.pack("<I", zlib.crc32(b"something else"))
    tampered = bytearray(data)
    tampered[local + 14:local + 18] = wrong
    tampered[central + 16:central + 20] = wrong
    stderr = refused(tmp_path, bytes(tampered), f"member {name!r}: local header field "
                     f"'CRC-32' differs from what skillpack writes (byte {local + 14})")
    assert "assets/a.bin" not in stderr


def test_every_single_byte_flip_is_refused_without_a_traceback(good: bytes) -> None:
    for at in range(len(good)):
        with pytest.raises(SkillpackError):
            verify_bytes(flip(good, at))


def test_byte_flips_through_the_command(tmp_path: Path, good: bytes) -> None:
    target = tmp_path / "flipped.skill"
    for at in range(0, len(good), 101):
        target.write_bytes(flip(good, at))
        result = cli("verify", target)
        assert result.exit_code == 1, at
        assert result.stderr.startswith("skillpack: error: "), at


def test_a_tampered_bundle_is_refused(tmp_path: Path, built: dict[str, Path]) -> None:
    data = built["bundle"].read_bytes()
    at = data.index(b"Manage a product waitlist", data.index(b"waitlist/SKILL.md") + 17)
    refused(tmp_path, flip(data, at), "waitlist", "SKILL.md")
    members = zip_members(data)
    index = json.loads(members[".skillpack/bundle.json"][0])
    members[".skillpack/bundle.json"] = (json.dumps(index).encode(), False)
    refused(tmp_path, zip_of(members), "bundle index", "canonical")


# -- hand-made archives that pack would refuse --------------------------------------------------

def hand_made(tmp_path: Path, extra: dict[str, bytes], skill_md: bytes | None = None) -> bytes:
    """A real pack of a small skill, with ``extra`` files added (and SKILL.md replaced)
    and a manifest made to match them: files, digest, everything self-consistent."""
    folder = make_skill(tmp_path / "src" / "smuggler", {"notes.txt": "plain notes\n"})
    [archive] = pack(folder, tmp_path / "honest")
    members = zip_members(archive.read_bytes())
    key = "smuggler/.skillpack/manifest.json"
    manifest = json.loads(members[key][0])
    changed = dict(extra)
    if skill_md is not None:
        changed["SKILL.md"] = skill_md
    records = {f["path"]: FileRecord.from_dict(f) for f in manifest["files"]}
    for rel, data in changed.items():
        members[f"smuggler/{rel}"] = (data, False)
        records[rel] = FileRecord(rel, "100644", len(data), blake3(data).hexdigest())
    ordered = sorted(records.values(), key=lambda r: r.path.encode())
    manifest["files"] = [r.to_dict() | {"sha256": hashlib.sha256(
        members[f"smuggler/{r.path}"][0]).hexdigest()} for r in ordered]
    manifest["digest"] = digest_records(ordered)
    if skill_md is not None:
        manifest["description"] = skill_md.split(b"description: ")[1].split(b"\n")[0].decode()
    members[key] = (canonical_json(manifest), False)
    return zip_of(members)


@pytest.mark.parametrize("path", [".e" + "nv", "config/.e" + "nv.production", "keys/id_" + "rsa",
                                  "deploy/server." + "key", ".aws/" + "credentials"])
def test_a_hand_made_archive_carrying_a_secret_file_is_refused(tmp_path: Path, path: str) -> None:
    data = hand_made(tmp_path, {path: b"harmless looking\n"})
    with pytest.raises(SkillpackError) as info:
        verify_bytes(data)
    assert [p.code for p in info.value.problems] == ["secret"]
    refused(tmp_path, data, f"'{path}' is a secret file")


def test_a_hand_made_archive_carrying_a_private_key_is_refused(tmp_path: Path) -> None:
    pem = (b"-----BEGIN " + b"OPENSSH PRIVATE KEY-----\nAAAA\n-----END " + b"OPENSSH PRIVATE "
           b"KEY-----\n")
    data = hand_made(tmp_path, {"docs/readme.txt": b"see below\n" + pem})
    with pytest.raises(SkillpackError) as info:
        verify_bytes(data)
    assert [p.code for p in info.value.problems] == ["secret"]
    refused(tmp_path, data, "docs/readme.txt", "PEM private key")


def test_members_of_every_size_are_checked_from_a_file_as_from_bytes(tmp_path: Path) -> None:
    """A file is checked in one pass: a skill's members read at once while they are under
    1 MiB together, else one by one, a member of 1 MiB or more read whole, one of 4 MiB or
    more a chunk at a time. Each way finds what the archive held in memory gives."""
    pem = (b"-----BEGIN " + b"OPENSSH PRIVATE KEY-----\nAAAA\n-----END " + b"OPENSSH PRIVATE "
           b"KEY-----\n")
    data = hand_made(tmp_path, {"docs/a.txt": b"see below\n" + pem,
                                "docs/b.txt": b"y" * (2 << 20) + b"\n" + pem,
                                "docs/c.txt": b"z\n" * (5 << 19) + pem})
    target = tmp_path / "large.skill"
    target.write_bytes(data)
    with pytest.raises(SkillpackError) as in_memory:
        verify_bytes(data)
    with pytest.raises(SkillpackError) as from_file:
        verify_file(target)
    assert [(p.code, p.file) for p in from_file.value.problems] == [
        ("secret", f"smuggler/docs/{name}.txt") for name in "abc"]
    assert from_file.value.problems == in_memory.value.problems


def test_a_hand_made_archive_with_an_invalid_skill_md_is_refused(tmp_path: Path) -> None:
    long = b"x" * 1100
    data = hand_made(tmp_path, {}, b"---\nname: smuggler\ndescription: " + long + b"\n---\nBody\n")
    with pytest.raises(SkillpackError) as info:
        verify_bytes(data)
    assert [p.code for p in info.value.problems] == ["description-too-long"]
    refused(tmp_path, data, "description-too-long")


def test_a_hand_made_archive_whose_skill_md_names_another_skill(tmp_path: Path) -> None:
    data = hand_made(tmp_path, {}, b"---\nname: someone-else\ndescription: Other.\n---\nBody\n")
    refused(tmp_path, data, "someone-else")


def test_two_copies_of_a_skill_are_each_judged_and_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A repository holding the approved skill and a changed copy of it (build/): each row
    was the changed copy's verdict, under the target `.`, so the approved copy read as a
    MISMATCH and no row said which folder drifted. Now each skill is itself, named by its
    folder, and the copy fails as `lock` refuses it: two skills of one name."""
    approved = rich_skill(tmp_path / ".claude" / "skills" / "alpha", "alpha ")
    copy = tmp_path / "build" / "skills" / "alpha"
    shutil.copytree(approved, copy)
    with open(copy / "SKILL.md", "a") as f:
        f.write("An edit.\n")
    monkeypatch.chdir(tmp_path)
    assert cli("lock", ".", "-o", "skills.lock", "-k").exit_code == 1  # the copy skipped
    result = cli("verify", "--json", "--lock", "skills.lock", ".")
    assert result.exit_code == 1
    items = json.loads(result.stdout)
    assert [(i["path"], i["ok"], i.get("code")) for i in items] == [
        (".claude/skills/alpha", True, None), ("build/skills/alpha", False, "duplicate-name")]
    assert items[1]["reason"] == ("two different skills are named 'alpha': "
                                  ".claude/skills/alpha and build/skills/alpha; rename one, "
                                  "or leave one out (--exclude)")
    text = cli("verify", "--lock", "skills.lock", ".").stdout.splitlines()
    assert text[0].startswith("ok ") and text[0].endswith("alpha  (.claude/skills/alpha)")
    assert text[1].startswith("MISMATCH ") and "(build/skills/alpha): two different" in text[1]
