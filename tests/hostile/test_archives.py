"""Hostile `.skill` archives: a good archive made by `skillpack.packing.pack.pack`, spoiled one
promise at a time, tried through every entry point a user touches.

* `load` (the runtime), `verify_bytes`, and the CLI's `verify`, `inspect`, `digest` and
  `bundle` must each refuse it with its own `SkillpackError` subclass and a message naming
  the member and the reason, never a traceback, and `bundle` must write nothing;
* a member altered by one byte loads, but its first read fails and `verify` fails;
* a manifest altered by one byte is refused by `verify`, and at runtime never changes what a
  model is told or what runs: description, body and tools come from the verified SKILL.md;
* every single-byte change anywhere in the archive is refused by `verify`;
* the runtime reads nothing but the archive's bytes while it refuses all of the above
  (a subprocess with an audit hook).
"""

from __future__ import annotations

import io
import json
import os
import zlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helpers.hostile import (
    DEMO_MD,
    TALLY,
    audited_outcomes,
    demo_skill,
    files_under,
    no_hang,
    run_cli,
    same_refusal,
)
from helpers.skills import make_tree
from helpers.zips import (
    MANIFEST,
    MODE_EXEC,
    Member,
    build,
    central_offset,
    change,
    drop,
    find,
    flip,
    insert,
    manifest_dict,
    members_of,
    reseal,
    set_manifest,
)
from hypothesis import given
from hypothesis import strategies as st

from skillpack.approve.lock import read_lock
from skillpack.errors import (
    ArchiveError,
    FormatVersionError,
    IntegrityError,
    RefusedError,
    SkillpackError,
)
from skillpack.formats.digest import FileRecord, digest_records
from skillpack.formats.paths import may_be_unportable, name_problem, windows_problem
from skillpack.model.calls import resolve
from skillpack.packing.bundle import write_bundle
from skillpack.packing.pack import pack
from skillpack.packing.verify import verify_bytes
from skillpack.runtime import load
from skillpack.storedzip.writer import ZipWriter

M = f"demo/{MANIFEST}"
NOTES, RUN, SKILL = "demo/notes.txt", "demo/scripts/run.py", "demo/SKILL.md"

Ms = list[Member]
Case = tuple[Callable[[Ms, bytes], bytes], type[SkillpackError], tuple[str, ...]]


def _renamed(new: str) -> Callable[[Ms, bytes], bytes]:
    return lambda ms, _: build(change(ms, NOTES, name=new))


Edit = Callable[[dict[str, Any]], None]


def _manifest(edit: Edit, *, seal: bool = False) -> Callable[[Ms, bytes], bytes]:
    """Edit the manifest; with `seal`, also set its digest to that of its (edited) files, as
    an attacker who knows the digest algorithm would."""
    def make(ms: Ms, _: bytes) -> bytes:
        manifest = manifest_dict(ms, "demo")
        edit(manifest)
        if seal:
            manifest["digest"] = digest_records(FileRecord.from_dict(f)
                                                for f in manifest["files"])
        return build(set_manifest(ms, "demo", manifest))
    return make


def _offset_of(ms: Ms, name: str) -> int:
    at = 0
    for m in ms:
        if m.name == name:
            return at
        at += 30 + len(m.encoded) + len(m.data)
    raise KeyError(name)


def _overlap(ms: Ms, _: bytes) -> bytes:
    return build(change(ms, NOTES, central={"offset": _offset_of(ms, SKILL)}))


def _deflated(method: int) -> Callable[[Ms, bytes], bytes]:
    def make(ms: Ms, _: bytes) -> bytes:
        plain = ms[find(ms, NOTES)].data * 50
        packed = zlib.compress(plain)[2:-4]
        return build(change(ms, NOTES, data=packed, both={
            "method": method, "crc": zlib.crc32(plain), "csize": len(packed),
            "size": len(plain)}))
    return make


def _files(edit: Callable[[list[Any]], None]) -> Edit:
    return lambda manifest: edit(manifest["files"])


def _set(key: str, value: object) -> Edit:
    return lambda manifest: manifest.__setitem__(key, value)


def _one_hex(text: str) -> str:
    return ("1" if text[0] != "1" else "2") + text[1:]


LIE = 0x7FFF0000

# Each case: how to spoil the good archive, the error class, and what its message must say.
REFUSED_AT_LOAD: dict[str, Case] = {
    # -- member names --------------------------------------------------------------------------
    "name with ..": (_renamed("demo/../notes.txt"), ArchiveError,
                     ("'demo/../notes.txt'", "'..'")),
    "name starting with ..": (_renamed("../../etc/cron.d/x"), ArchiveError,
                              ("'../../etc/cron.d/x'", "'..'")),
    "absolute name": (_renamed("/etc/cron.d/evil"), ArchiveError,
                      ("'/etc/cron.d/evil'", "absolute")),
    "drive-letter name": (_renamed("C:/Windows/evil.txt"), ArchiveError,
                          ("'C:/Windows/evil.txt'", "drive-letter")),
    "drive-relative name": (_renamed("C:evil.txt"), ArchiveError, ("'C:evil.txt'", "drive-letter")),
    "backslash name": (_renamed("demo\\notes.txt"), ArchiveError, ("demo", "backslash")),
    "backslash escape": (_renamed("demo\\..\\..\\evil.txt"), ArchiveError, ("backslash",)),
    "dot segment": (_renamed("demo/./notes.txt"), ArchiveError, ("'demo/./notes.txt'", "'.'")),
    "empty segment": (_renamed("demo//notes.txt"), ArchiveError, ("'demo//notes.txt'", "empty")),
    "control character in name": (_renamed("demo/no\ntes.txt"), ArchiveError,
                                  ("control character",)),
    "invalid UTF-8 name": (lambda ms, _: build(change(ms, NOTES, raw_name=b"demo/\xff\xfe.txt")),
                           ArchiveError, ("not valid UTF-8",)),
    "non-ASCII name without the UTF-8 flag": (
        lambda ms, _: build(insert(ms, Member("demo/caf\u00e9.txt", b"x", both={"flags": 0}))),
        ArchiveError, ("'demo/caf\u00e9.txt'", "without the UTF-8 flag")),
    "duplicate member": (lambda ms, _: build(insert(ms, Member(NOTES, b"other bytes\n"))),
                         ArchiveError, ("'demo/notes.txt'", "duplicate name")),
    "NFC-equal names": (lambda ms, _: build(insert(insert(ms, Member("demo/cafe\u0301.txt", b"a")),
                                                   Member("demo/caf\u00e9.txt", b"b"))),
                        ArchiveError, ("caf", "NFC")),
    "case-equal names": (lambda ms, _: build(insert(ms, Member("demo/NOTES.txt", b"x"))),
                         ArchiveError, ("'demo/NOTES.txt'", "differ only by case")),
    "casefold-equal names": (
        lambda ms, _: build(insert(insert(ms, Member("demo/STRASSE.md", b"a")),
                                   Member("demo/stra\u00dfe.md", b"b"))),
        ArchiveError, ("'demo/stra\u00dfe.md'", "differ only by case")),
    "local header name differs": (
        lambda ms, _: build(change(ms, NOTES, local_name=b"demo/notez.txt")),
        ArchiveError, ("'demo/notes.txt'", "local header differs", "name")),
    "local header name escapes": (
        lambda ms, _: build(change(ms, NOTES, local_name=b"../../evil.txt")),
        ArchiveError, ("'demo/notes.txt'", "local header differs", "name")),
    "directory entry": (lambda ms, _: build(insert(ms, Member("demo/scripts/", b""))),
                        ArchiveError, ("'demo/scripts/'", "directory entry")),
    "symlink member": (lambda ms, _: build(change(ms, NOTES, central={"eattr": 0o120777 << 16})),
                       ArchiveError, ("'demo/notes.txt'", "not a regular file")),
    # -- layout ----------------------------------------------------------------------------------
    "overlapping members": (_overlap, ArchiveError, ("'demo/notes.txt'", "overlaps")),
    "gap between members": (lambda ms, _: build(change(ms, NOTES, gap=b"hidden payload")),
                            ArchiveError, ("'demo/notes.txt'", "unaccounted data")),
    "members out of order": (lambda ms, _: build([ms[0], ms[2], ms[1], ms[3]]), ArchiveError,
                             ("'demo/SKILL.md'", "out of order")),
    "member outside the skill's folder": (
        lambda ms, _: build(insert(ms, Member("README", b"x"))), ArchiveError,
        ("'README'", "outside the skill's folder")),
    "second top folder": (
        lambda ms, _: build(insert(ms, Member("other/SKILL.md", b"x"))), ArchiveError,
        ("one top folder", "demo, other")),
    # -- members against the manifest ----------------------------------------------------------
    "member not in the manifest": (
        lambda ms, _: build(insert(ms, Member("demo/scripts/extra.sh", b"#!/bin/sh\n", True))),
        ArchiveError, ("'demo/scripts/extra.sh'", "not in the manifest")),
    "manifest entry with no member": (lambda ms, _: build(drop(ms, NOTES)), ArchiveError,
                                      ("'notes.txt'", "no member 'demo/notes.txt'")),
    "manifest path escaping the skill": (
        _manifest(_files(lambda f: f.insert(0, {**f[0], "path": "../../etc/passwd"})), seal=True),
        ArchiveError, ("'../../etc/passwd'", "no member")),
    "manifest lists the manifest": (
        _manifest(_files(lambda f: f.insert(0, {**f[0], "path": MANIFEST})), seal=True),
        ArchiveError, (f"lists '{MANIFEST}'",)),
    "member size differs from the manifest": (
        _manifest(_files(lambda f: f[1].__setitem__("size", 10**12)), seal=True),
        IntegrityError, ("'demo/notes.txt'", "1000000000000")),
    "executable bit differs from the manifest": (
        lambda ms, _: build(change(ms, NOTES, central={"eattr": MODE_EXEC})),
        IntegrityError, ("'demo/notes.txt'", "is executable", "100644")),
    "manifest names another skill": (_manifest(_set("name", "other")), ArchiveError,
                                     ("names the skill 'other'", "'demo'")),
    "no SKILL.md": (
        lambda ms, _: build(reseal(drop(ms, SKILL))), ArchiveError, ("carries no SKILL.md",)),
    # -- the manifest altered by one byte ------------------------------------------------------
    "manifest file hash altered": (
        _manifest(_files(lambda f: f[1].__setitem__("blake3", _one_hex(f[1]["blake3"])))),
        IntegrityError, ("manifest of 'demo'", "not to its digest")),
    "manifest digest altered": (
        _manifest(lambda m: m.__setitem__("digest", "blake3:" + _one_hex(m["digest"][7:]))),
        IntegrityError, ("manifest of 'demo'", "not to its digest")),
    "manifest file size altered": (
        _manifest(_files(lambda f: f[1].__setitem__("size", f[1]["size"] + 1))),
        IntegrityError, ("manifest of 'demo'", "not to its digest")),
    "manifest not JSON": (lambda ms, _: build(change(ms, M, data=b'{"format": "1.0",')),
                          ArchiveError, (M, "not valid UTF-8 JSON")),
    # -- format versions ----------------------------------------------------------------------
    "manifest of a newer minor format": (_manifest(_set("format", "1.2")), FormatVersionError,
                                         ("format 1.2", "newer")),
    "manifest of a future major format": (_manifest(_set("format", "2.0")), FormatVersionError,
                                          ("format 2.0", "reads format 1.x")),
    "manifest of a foreign major format": (_manifest(_set("format", "0.9")), FormatVersionError,
                                           ("format 0.9", "reads format 1.x")),
    "manifest with no readable format": (_manifest(_set("format", "v1")), FormatVersionError,
                                         ("'v1'", "no readable format version")),
    # -- sizes, truncation, appended data -------------------------------------------------------
    "declared size far beyond the real one": (
        lambda ms, _: build(change(ms, NOTES, both={"size": LIE, "csize": LIE})), ArchiveError,
        ("'demo/notes.txt'", f"declares {LIE} bytes")),
    "size lie in the central directory only": (
        lambda ms, _: build(change(ms, NOTES, central={"size": LIE, "csize": LIE})),
        ArchiveError, ("'demo/notes.txt'", "local header differs", "size")),
    "stored size differs from size": (
        lambda ms, _: build(change(ms, NOTES, both={"csize": 3})), ArchiveError,
        ("'demo/notes.txt'", "stored size 3 differs")),
    "empty file": (lambda ms, good: b"", ArchiveError, ("no end-of-central-directory",)),
    "truncated by one byte": (lambda ms, good: good[:-1], ArchiveError,
                              ("no end-of-central-directory",)),
    "truncated in the central directory": (
        lambda ms, good: good[: central_offset(good) + 50], ArchiveError,
        ("no end-of-central-directory",)),
    "truncated in half": (lambda ms, good: good[: len(good) // 2], ArchiveError,
                          ("no end-of-central-directory",)),
    "appended bytes": (lambda ms, good: good + b"\0" * 100, ArchiveError,
                       ("100 bytes of trailing data",)),
    "appended archive": (lambda ms, good: good + good, ArchiveError, ("prepended",)),
    "prepended stub": (lambda ms, good: b"#!/bin/sh\nexec evil\n" + good, ArchiveError,
                       ("prepended",)),
    "archive comment": (lambda ms, good: build(ms, clen=7, tail=b"comment"), ArchiveError,
                        ("7-byte comment",)),
    "Zip64 count": (lambda ms, good: build(ms, count=0xFFFF, count_disk=0xFFFF), ArchiveError,
                    ("Zip64",)),
    # -- encrypted or compressed members where STORED is promised ------------------------------
    "encrypted member": (lambda ms, _: build(change(ms, NOTES, both={"flags": 0x0801})),
                         ArchiveError, ("'demo/notes.txt'", "encrypted member")),
    "deflated member": (_deflated(8), ArchiveError,
                        ("'demo/notes.txt'", "compressed member where STORED is promised",
                         "method 8")),
    "deflated member, sizes equal": (
        lambda ms, _: build(change(ms, NOTES, both={"method": 8})), ArchiveError,
        ("'demo/notes.txt'", "compressed member", "method 8")),
    "bzip2 member": (_deflated(12), ArchiveError, ("'demo/notes.txt'", "method 12")),
    "zstd member": (_deflated(93), ArchiveError, ("'demo/notes.txt'", "method 93")),
    "data descriptor": (lambda ms, _: build(change(ms, NOTES, both={"flags": 0x0808})),
                        ArchiveError, ("'demo/notes.txt'", "data descriptor")),
    "strong encryption flag": (lambda ms, _: build(change(ms, NOTES, both={"flags": 0x0841})),
                               ArchiveError, ("'demo/notes.txt'", "encrypted")),
}

# Alterations that change nothing served (the runtime checks what it serves, not zip fields a
# deployment never unpacks) but leave an archive that is not what `pack` writes: `verify`
# refuses them, since a standard unzip would honour them.
REFUSED_BY_VERIFY: dict[str, tuple[Callable[[Ms, bytes], bytes], tuple[str, ...]]] = {
    "CRC-32 altered": (lambda ms, _: build(change(ms, NOTES, both={"crc": 0x12345678})),
                       ("'demo/notes.txt'", "CRC-32")),
    "world-writable mode": (
        lambda ms, _: build(change(ms, NOTES, central={"eattr": 0o100666 << 16})),
        ("'demo/notes.txt'", "external attributes")),
    "setuid script": (lambda ms, _: build(change(ms, RUN, central={"eattr": 0o104755 << 16})),
                      ("'demo/scripts/run.py'", "external attributes")),
    "made by MS-DOS": (lambda ms, _: build(change(ms, RUN, central={"made": 0x0014})),
                       ("'demo/scripts/run.py'", "version made by")),
    "internal attributes": (lambda ms, _: build(change(ms, NOTES, central={"iattr": 1})),
                            ("'demo/notes.txt'", "internal attributes")),
    "timestamp": (lambda ms, _: build(change(ms, NOTES, both={"time": 0x6000, "date": 0x5821})),
                  ("'demo/notes.txt'", "time")),
    "manifest description altered": (
        _manifest(lambda m: m.__setitem__("description", "B" + m["description"][1:])),
        ("manifest field 'description'",)),
    "manifest tool run altered": (
        _manifest(lambda m: m["tools"][0].__setitem__("run", m["tools"][0]["run"].replace(
            "--who", "--wh0"))),
        ("manifest field 'tools'",)),
    "manifest program altered": (
        _manifest(lambda m: m["programs"][0].__setitem__("name", "python4")),
        ("manifest field 'programs'",)),
    "manifest allowance added": (_manifest(_set("allowances", ["notes.txt"])),
                                 ("manifest field 'allowances'",)),
    "manifest not canonical": (
        lambda ms, _: build(change(ms, M, data=ms[find(ms, M)].data.replace(b'","', b'", "', 1))),
        ("not in canonical form",)),
}


@pytest.fixture(scope="module")
def good_members(good_archive: bytes) -> Ms:
    return members_of(good_archive)


def test_the_builder_models_the_writer(good_archive: bytes, good_members: Ms) -> None:
    assert build(good_members) == good_archive
    assert verify_bytes(good_archive).skills[0].name == "demo"
    assert load(good_archive)["demo"].file("notes.txt").text() == "Some notes.\n"


def _load_everything(data: bytes) -> None:
    """What a deployment does: load, check every file, read every file and what SKILL.md says."""
    bundle = load(data, source="hostile.skill")
    bundle.verify_all()
    for name in bundle.names:
        skill = bundle[name]
        for path in skill.files():
            skill.file(path).bytes()
        _ = skill.description, skill.tools, skill.programs


@pytest.mark.parametrize("case", list(REFUSED_AT_LOAD))
def test_refused_at_load_and_by_verify(case: str, good_archive: bytes, good_members: Ms) -> None:
    make, kind, fragments = REFUSED_AT_LOAD[case]
    data = make(good_members, good_archive)
    with TALLY.refused("archive", case, "load", kind, *fragments):
        _load_everything(data)
    with TALLY.refused("archive", case, "verify_bytes", kind, *fragments):
        verify_bytes(data, source="hostile.skill")


@pytest.mark.parametrize("case", list(REFUSED_AT_LOAD))
def test_refused_by_every_command(case: str, good_archive: bytes, good_members: Ms,
                                  tmp_path: Path) -> None:
    make, _, fragments = REFUSED_AT_LOAD[case]
    target = tmp_path / "in" / "hostile.skill"
    target.parent.mkdir()
    target.write_bytes(make(good_members, good_archive))
    out = tmp_path / "out"
    out.mkdir()
    for command in (["verify", str(target)], ["inspect", str(target)],
                    ["digest", str(target)], ["bundle", str(target), "-o", str(out / "b")]):
        result = run_cli(*command)
        text = result.output
        ok = result.exit_code == 1 and all(f in text for f in fragments) and str(target) in text
        TALLY.add("archive", case, f"cli {command[0]}", "refused" if ok else "wrong-error",
                  text.strip()[-300:])
        assert result.exit_code == 1, text
        assert ok, f"{command}: {text!r} lacks {fragments}"
    assert files_under(out) == []  # no bundle, no temp file


@pytest.mark.parametrize("case", list(REFUSED_BY_VERIFY))
def test_alterations_verify_refuses_change_nothing_served(
    case: str, good_archive: bytes, good_members: Ms, tmp_path: Path,
) -> None:
    make, fragments = REFUSED_BY_VERIFY[case]
    data = make(good_members, good_archive)
    with TALLY.refused("archive", case, "verify_bytes", IntegrityError, *fragments):
        verify_bytes(data, source="hostile.skill")
    target = tmp_path / "hostile.skill"
    target.write_bytes(data)
    result = run_cli("verify", str(target))
    assert result.exit_code == 1 and all(f in result.output for f in fragments), result.output
    TALLY.add("archive", case, "cli verify", "refused")
    # the runtime: what it serves and runs comes from the verified files, so nothing changes
    assert_serves_the_good_skill(load(data), good_archive)
    TALLY.neutralised("archive", case, "load")


def assert_serves_the_good_skill(bundle: object, good_archive: bytes) -> None:
    from skillpack.runtime import Bundle

    assert isinstance(bundle, Bundle)
    good = load(good_archive)["demo"]
    skill = bundle["demo"]
    bundle.verify_all()
    assert skill.digest == good.digest
    assert [skill.file(p).bytes() for p in skill.files()] == [
        good.file(p).bytes() for p in good.files()]
    assert (skill.description, skill.body, skill.tools, skill.programs) == (
        good.description, good.body, good.tools, good.programs)
    assert bundle.catalog_text() == load(good_archive).catalog_text()
    call = resolve(skill, '{"tool": "hello", "args": {"who": "Ada"}}')
    assert call is not None and call.argv == ["python3", "scripts/run.py", "--who", "Ada"]


# -- a member altered by one byte ---------------------------------------------------------------

@pytest.mark.parametrize("member, crc", [(NOTES, "stale"), (NOTES, "fixed"), (RUN, "fixed"),
                                         (SKILL, "stale")])
def test_member_altered_by_one_byte_fails_its_first_read(
    member: str, crc: str, good_archive: bytes, good_members: Ms, tmp_path: Path,
) -> None:
    at = find(good_members, member)
    altered = flip(good_members[at].data, len(good_members[at].data) // 2)
    members = list(good_members)
    members[at] = replace(members[at], data=altered)
    data = build(members)
    if crc == "stale":  # the attacker did not recompute the zip's CRC-32
        stale = replace(members[at], both={"crc": zlib.crc32(good_members[at].data)})
        data = build([*members[:at], stale, *members[at + 1:]])
    case = f"one byte of {member} altered, CRC-32 {crc}"
    path = member.removeprefix("demo/")
    bundle = load(data)  # the index and the manifest are intact: it loads
    skill = bundle["demo"]
    for other in skill.files():
        if other != path:
            skill.file(other).bytes()  # the other files are served
    with TALLY.refused("archive", case, "first read", IntegrityError, f"file '{path}'",
                       "altered"):
        if path == "SKILL.md":
            _ = skill.description
        else:
            skill.file(path).bytes()
    with TALLY.refused("archive", case, "second read", IntegrityError, f"file '{path}'"):
        skill.file(path).text()
    with TALLY.refused("archive", case, "verify_all", IntegrityError, f"file '{path}'"):
        load(data).verify_all()
    with TALLY.refused("archive", case, "verify_bytes", IntegrityError, f"'{path}'"):
        verify_bytes(data)
    target = tmp_path / "altered.skill"
    target.write_bytes(data)
    result = run_cli("verify", str(target))
    assert result.exit_code == 1 and f"'{path}'" in result.output
    TALLY.add("archive", case, "cli verify", "refused")


# -- the manifest altered by one byte ------------------------------------------------------------

def test_every_one_byte_manifest_change_is_refused_by_verify_and_changes_nothing_served(
    good_archive: bytes, good_members: Ms,
) -> None:
    at = find(good_members, M)
    manifest = good_members[at].data
    refused_at_load = neutralised = 0
    for pos in range(len(manifest)):
        members = list(good_members)
        members[at] = replace(members[at], data=flip(manifest, pos))
        data = build(members)
        with pytest.raises(SkillpackError):
            verify_bytes(data)
        try:
            bundle = load(data)
        except (ArchiveError, IntegrityError):
            refused_at_load += 1
            continue
        assert_serves_the_good_skill(bundle, good_archive)
        neutralised += 1
    assert refused_at_load and neutralised  # both kinds of byte are in a manifest
    TALLY.add("archive", "one-byte manifest changes (every position)", "verify_bytes",
              "refused", count=len(manifest))
    TALLY.add("archive", "one-byte manifest changes (every position)", "load", "refused",
              count=refused_at_load)
    TALLY.add("archive", "one-byte manifest changes (every position)", "load", "neutralised",
              count=neutralised)


def test_every_one_byte_change_of_the_archive_is_refused_by_verify(good_archive: bytes) -> None:
    kinds: dict[str, int] = {}
    for pos in range(len(good_archive)):
        for xor in (0x01, 0x80):
            with pytest.raises(SkillpackError) as info:
                verify_bytes(flip(good_archive, pos, xor))
            kinds[type(info.value).__name__] = kinds.get(type(info.value).__name__, 0) + 1
    assert set(kinds) <= {"ArchiveError", "IntegrityError", "FormatVersionError"}
    TALLY.add("archive", "one-byte changes (every position, 2 flips each)", "verify_bytes",
              "refused", json.dumps(kinds), count=sum(kinds.values()))


# -- nothing but the archive's bytes is read ----------------------------------------------------

def test_the_runtime_reads_nothing_but_the_archive_bytes(
    good_archive: bytes, good_members: Ms, tmp_path: Path,
) -> None:
    cases = {name: make(good_members, good_archive)
             for name, (make, _, _) in REFUSED_AT_LOAD.items()}
    cases.update({name: make(good_members, good_archive)
                  for name, (make, _) in REFUSED_BY_VERIFY.items()})
    at = find(good_members, NOTES)
    altered = f"one byte of {NOTES} altered, CRC-32 fixed"  # as in the test above
    cases[altered] = build(change(good_members, NOTES, data=flip(
        good_members[at].data, len(good_members[at].data) // 2)))
    second = audited_outcomes(cases, tmp_path)
    for name, (_, kind, _) in REFUSED_AT_LOAD.items():
        assert second[name] == [kind.__name__, kind.__name__], name
    for name in REFUSED_BY_VERIFY:
        assert second[name] == ["loaded", "IntegrityError"], name
    assert second[altered] == ["IntegrityError", "IntegrityError"]
    for name in cases:
        TALLY.add("archive", name, "load, audited: no file touched",
                  "neutralised" if name in REFUSED_BY_VERIFY else "refused")



# -- something other than a file where an archive or a lock file is named -------------------------

def test_a_fifo_or_a_device_named_as_an_archive_or_lock_never_blocks(tmp_path: Path) -> None:
    from skillpack.packing.verify import verify_file

    fifo = tmp_path / "incoming.skill"
    os.mkfifo(fifo)
    for target in (fifo, Path("/dev/zero")):
        case = f"{'a fifo' if target == fifo else '/dev/zero'} named as the archive"
        with TALLY.refused("archive", case, "verify_file", SkillpackError, "not a regular file"):
            no_hang(lambda t=target: verify_file(t), unblock=[fifo])  # type: ignore[misc]
        with TALLY.refused("archive", case, "read_lock", SkillpackError, "not a regular file"):
            no_hang(lambda t=target: read_lock(t), unblock=[fifo])  # type: ignore[misc]
        for command, said in ((["inspect", str(target)], "not a regular file"),
                              (["digest", str(target)], "not a regular file"),
                              (["verify", "--lock", str(target), str(tmp_path)],
                               "not a regular file")):
            result = no_hang(lambda c=command: run_cli(*c), unblock=[fifo])  # type: ignore[misc]
            ok = result.exit_code == 1 and said in result.output
            TALLY.add("archive", case, f"cli {command[0]}", "refused" if ok else "wrong-error",
                      result.output[-300:])
            assert ok, (command, result.output)


# -- the same refusals, from a file (`verify_file`) ------------------------------------------------

@pytest.mark.parametrize("case", list(REFUSED_AT_LOAD))
def test_archive_refused_at_load_is_refused_from_a_file(
    case: str, good_archive: bytes, good_members: Ms, tmp_path: Path,
) -> None:
    make, kind, fragments = REFUSED_AT_LOAD[case]
    data = make(good_members, good_archive)
    with TALLY.refused("archive", case, "verify_file", kind, *fragments):
        raise same_refusal(data, tmp_path / "hostile.skill")


@pytest.mark.parametrize("case", list(REFUSED_BY_VERIFY))
def test_archive_refused_by_verify_is_refused_from_a_file(
    case: str, good_archive: bytes, good_members: Ms, tmp_path: Path,
) -> None:
    make, fragments = REFUSED_BY_VERIFY[case]
    data = make(good_members, good_archive)
    with TALLY.refused("archive", case, "verify_file", IntegrityError, *fragments):
        raise same_refusal(data, tmp_path / "hostile.skill")


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
                                                              tmp_path: Path, case: str) -> None:
    member, fragment = SMUGGLED[case]
    data = _smuggled(good_archive, member)
    with TALLY.refused("archive", f"resealed: {case}", "verify_bytes", IntegrityError,
                       member, fragment):
        no_hang(lambda: verify_bytes(data, source="hostile.skill"))
    archive = tmp_path / "hostile.skill"
    archive.write_bytes(data)
    with TALLY.refused("archive", f"resealed: {case}", "bundle", IntegrityError, member):
        no_hang(lambda: write_bundle([archive], tmp_path / "out.bundle"))
    assert not (tmp_path / "out.bundle").exists()
    for command in (["verify", str(archive)], ["lock", str(archive), "-o",
                                               str(tmp_path / "skills.lock")]):
        result = run_cli(*command)
        ok = result.exit_code == 1 and member in result.output
        TALLY.add("archive", f"resealed: {case}", f"cli {command[0]}",
                  "refused" if ok else "accepted", result.output[-300:])
        assert ok, result.output
    assert not (tmp_path / "skills.lock").exists()


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


# -- names that collide on Windows or macOS ------------------------------------------------------

WINDOWS_NAMES = {
    "SKILL.md.": "trailing dot",
    "SKILL.md ": "trailing space",
    "notes.txt..": "trailing dot",
    "scripts./run2.py": "trailing dot",
    "CON": "reserved",
    "con": "reserved",
    "aux.txt": "reserved",
    "Nul.tar.gz": "reserved",
    "COM1": "reserved",
    "lpt9.log": "reserved",
    "COM\u00b9.txt": "reserved",
    "PRN/inner.txt": "reserved",
    "a:b": "':'",
    "what?.txt": "'?'",
    "star*.txt": "'*'",
    "less<than": "'<'",
    "more>than": "'>'",
    'quote".txt': "'\"'",
    "pipe|name": "'|'",
}


@pytest.mark.parametrize("name", sorted(WINDOWS_NAMES))
def test_a_name_windows_refuses_is_refused_by_pack(tmp_path: Path, name: str) -> None:
    skill = demo_skill(tmp_path / "demo", {name: "replaces the reviewed file on Windows\n"})
    out = tmp_path / "out"
    shown = name.split("/")[0]
    with TALLY.refused("tree", f"windows name {name!r}", "pack", RefusedError, shown,
                       WINDOWS_NAMES[name]):
        no_hang(lambda: pack(skill, out))
    assert files_under(out) == []


@pytest.mark.parametrize("name", sorted(WINDOWS_NAMES))
def test_a_name_windows_refuses_is_refused_in_an_archive(good_archive: bytes, name: str
                                                         ) -> None:
    member = f"demo/{name}"
    data = build(reseal(insert(members_of(good_archive), Member(member, b"other bytes\n"))))
    for entry, call in (("load", lambda: load(data, source="hostile.skill")),
                        ("verify_bytes", lambda: verify_bytes(data, source="hostile.skill"))):
        with TALLY.refused("archive", f"windows name {name!r}", entry, ArchiveError, member,
                           WINDOWS_NAMES[name]):
            no_hang(call)
    with (TALLY.refused("archive", f"windows name {name!r}", "ZipWriter", ArchiveError,
                        member, WINDOWS_NAMES[name]), ZipWriter(io.BytesIO()) as writer):
        writer.add_bytes(member, b"x")


@pytest.mark.parametrize("name", ["\ud800", "x\udc80", "x\u202ey", "tab\there"])
def test_a_root_layout_manifest_naming_no_text_is_refused(good_archive: bytes, name: str,
                                                           tmp_path: Path) -> None:
    """A root-layout archive is named by its manifest's `name`: a lone surrogate (from a
    JSON escape) made `load` raise UnicodeEncodeError and `verify`, `inspect`, `digest`
    print a traceback; a name that is no printable text is refused as an ArchiveError."""
    root = []
    for m in members_of(good_archive):
        rest = m.name.split("/", 1)[1]
        data = m.data
        if rest == MANIFEST:
            fields = json.loads(data)
            fields["name"] = name
            data = json.dumps(fields, sort_keys=True, separators=(",", ":")).encode() + b"\n"
        root.append(Member(rest, data, m.executable))
    data = build(sorted(root, key=lambda m: m.encoded))
    for entry, call in (("load", lambda: load(data, source="root.skill")),
                        ("verify_bytes", lambda: verify_bytes(data, source="root.skill"))):
        with TALLY.refused("archive", f"root-layout manifest named {name!r}", entry,
                           ArchiveError, "names no skill"):
            no_hang(call)
    (tmp_path / "root.skill").write_bytes(data)
    for command in ("verify", "inspect", "digest"):
        result = run_cli(command, str(tmp_path / "root.skill"))
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        assert "names no skill" in result.output


@pytest.mark.parametrize("folders", [2_100, 32_000])
def test_a_name_longer_than_any_path_is_refused_before_its_folders_are_listed(
        good_archive: bytes, folders: int) -> None:
    """"a/a/a/.../x": 4,200 to 64,000 bytes, under a zip header's 65,535. Listing its folders
    one by one cost its length squared (32,000 folders: about 2 GB in `verify_bytes`); over
    4,096 bytes (PATH_MAX) it is refused first, by the one name rule, in every reader."""
    member = "demo/" + "a/" * folders + "x.md"
    data = build(reseal(insert(members_of(good_archive), Member(member, b"deep\n"))))
    for entry, call in (("load", lambda: load(data, source="hostile.skill")),
                        ("verify_bytes", lambda: verify_bytes(data, source="hostile.skill"))):
        with TALLY.refused("archive", f"a name of {len(member):,} bytes", entry, ArchiveError,
                           f"a name of {len(member):,} bytes", "4,096"):
            no_hang(call)
    assert name_problem(member[: 4096]) is None  # 4,096 bytes is still a name


@pytest.mark.parametrize("name", ["CONSOLE.txt", "auxiliary", "com10", "lpt0.log", "nul_x",
                                  "a.b.c", ".hidden", "x-y_z+1", "COM", "lpt"])
def test_names_windows_allows_still_pack(tmp_path: Path, name: str) -> None:
    skill = demo_skill(tmp_path / "demo", {name: "fine\n"})
    [archive] = pack(skill, tmp_path / "out")
    assert verify_bytes(archive.read_bytes()).skills[0].name == "demo"


@given(st.lists(st.text(alphabet="aCcOoNnMmLlPpTtUuXx1\u00b9. :?/", min_size=1, max_size=8),
                min_size=1, max_size=4))
def test_the_fast_screen_never_misses_a_windows_name(names: list[str]) -> None:
    """The reader and the walk ask about each name only when the screen says one may be bad:
    the screen must say so whenever `windows_problem` refuses a segment, and `name_problem`
    (the writer's and the reader's rule) must refuse exactly those."""
    for name in names:
        segments = name.split("/")
        if any(seg in ("", ".", "..") for seg in segments):
            continue
        windows = any(windows_problem(seg) is not None for seg in segments)
        if windows:
            assert may_be_unportable("/" + "/\\/".join(names) + "/")
        assert (name_problem(name) is not None) == windows, name


# -- a missed resource on a skill of many long names -----------------------------------------------

def test_a_missed_resource_costs_the_same_on_a_skill_of_many_long_names(tmp_path: Path) -> None:
    files = {f"f{i % 40:02d}/n{i:05d}" + "x" * 200 + ".txt": "x" for i in range(12_000)}
    skill = make_tree(tmp_path / "many", {"SKILL.md": "---\nname: many\ndescription: Many "
                                          "files.\n---\nbody\n", **files})
    [archive] = pack(skill, tmp_path / "out")
    loaded = load(archive.read_bytes())["many"]
    misses = ["f01/n00001" + "y" * 200 + ".txt", "f01/" + "x" * 230, "nowhere/" + "x" * 220,
              "f02/n00002" + "x" * 200 + ".tx"] * 10  # 40 misses: before, about a second each
    def miss_all() -> list[str]:
        hints = []
        for path in misses:
            try:
                loaded.file(path)
            except SkillpackError as err:
                hints.append(err.hint or "")
        return hints
    hints = no_hang(miss_all, timeout=30)
    assert len(hints) == len(misses)
    assert "n00002" in hints[3]  # a close name in its folder is still suggested
    TALLY.handled("archive", "40 misses on 12,000 long names", "LoadedSkill.file")
