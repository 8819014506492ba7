"""The strict zip reader: agreement with zipfile, and one refusal per broken promise.

Hostile archives are built here, byte by byte, with `raw_zip` (struct.pack): a member is a
dict of header fields that a test overrides to break exactly one rule.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import struct
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import CORPUS, FIXTURES
from helpers.skills import make_tree
from helpers.zips import zip_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillpack.errors import ArchiveError, IntegrityError
from skillpack.storedzip.reader import ZipEntry, ZipIndex, listed_names, read_zip, read_zip_file
from skillpack.storedzip.source import FileBytes
from skillpack.storedzip.writer import ZipWriter

LOCAL = struct.Struct("<IHHHHHIIIHH")
CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")
END = struct.Struct("<IHHHHIIH")


def member(name: str | bytes, data: bytes = b"data", **over: Any) -> dict[str, Any]:
    """A member as ZipWriter writes it; `over` changes fields of both headers (`l_`/`c_`
    prefixes for one header only, `gap` for bytes put before its local header, `no_local`
    to leave its local header and data out)."""
    raw = name.encode() if isinstance(name, str) else name
    return {"name": raw, "data": data, **over}


def raw_zip(members: list[dict[str, Any]], *, prefix: bytes = b"", shift: int = 0,
            before_cd: bytes = b"", before_end: bytes = b"", tail: bytes = b"",
            **end_over: int) -> bytes:
    out = bytearray(prefix)
    central = bytearray()
    for m in members:
        out += m.get("gap", b"")
        name, data = m["name"], m["data"]
        f = {"need": 20, "flags": 0x800, "method": 0, "time": 0, "date": 0x21,
             "crc": zlib.crc32(data), "csize": len(data), "size": len(data), "nlen": len(name),
             "xlen": len(m.get("extra", b""))}
        f.update({k: v for k, v in m.items() if k in f})
        loc = {**f, **{k[2:]: v for k, v in m.items() if k.startswith("l_")}}
        cen = {**f, "made": 0x0314, "clen": len(m.get("comment", b"")), "disk": 0, "iattr": 0,
               "eattr": m.get("eattr", 0o100644 << 16), "offset": len(out) - len(prefix) + shift}
        cen.update({k[2:]: v for k, v in m.items() if k.startswith("c_")})
        lname = m.get("l_name", name)
        if not m.get("no_local"):
            out += LOCAL.pack(loc.get("sig", 0x04034B50), loc["need"], loc["flags"],
                              loc["method"], loc["time"], loc["date"], loc["crc"], loc["csize"],
                              loc["size"], loc["nlen"], loc["xlen"]) + lname + m.get(
                                  "extra", b"") + data
        central += CENTRAL.pack(
            cen.get("sig", 0x02014B50), cen["made"], cen["need"], cen["flags"], cen["method"],
            cen["time"], cen["date"], cen["crc"], cen["csize"], cen["size"], cen["nlen"],
            cen["xlen"], cen["clen"], cen["disk"], cen["iattr"], cen["eattr"], cen["offset"],
        ) + name + m.get("extra", b"") + m.get("comment", b"")
    out += before_cd
    cd_off = len(out) - len(prefix) + shift
    out += central + before_end
    e = {"disk": 0, "cd_disk": 0, "count_disk": len(members), "count": len(members),
         "cd_size": len(central), "cd_off": cd_off, "clen": 0, **end_over}
    out += END.pack(0x06054B50, e["disk"], e["cd_disk"], e["count_disk"], e["count"],
                    e["cd_size"], e["cd_off"], e["clen"]) + tail
    return bytes(out)


GOOD = [member("s/SKILL.md", b"# skill\n"), member("s/a.txt", b"aaaa"),
        member("s/run.sh", b"#!/bin/sh\n", eattr=0o100755 << 16)]


def test_raw_builder_models_the_writer() -> None:
    assert raw_zip(GOOD) == zip_of(
        {"s/SKILL.md": (b"# skill\n", False), "s/a.txt": (b"aaaa", False),
         "s/run.sh": (b"#!/bin/sh\n", True)})


def test_index_api_and_zero_copy() -> None:
    data = raw_zip(GOOD)
    index = read_zip(data, source="good.skill")
    assert index.names == ("s/SKILL.md", "s/a.txt", "s/run.sh")
    assert len(index) == 3 and "s/a.txt" in index and "s/b.txt" not in index
    assert index.get("nope") is None
    entry = index.get("s/run.sh")
    assert entry is not None
    assert entry == ZipEntry("s/run.sh", entry.header_offset, entry.header_offset + 30 + 8,
                             10, zlib.crc32(b"#!/bin/sh\n"), True)
    assert index.get("s/run.sh") is entry
    assert [e.executable for e in index.entries] == [False, False, True]
    assert list(index) == list(index.entries)
    view = index.data(entry)
    assert view.obj is data and bytes(view) == b"#!/bin/sh\n"
    for e in index:
        index.check_crc(e)
    other = read_zip(raw_zip([member("s/run.sh", b"other")]))
    with pytest.raises(ValueError, match="not an entry"):
        index.data(other.entries[0])


def test_memoryview_and_bytearray_inputs() -> None:
    data = raw_zip(GOOD)
    for given_data in (memoryview(data), bytearray(data), memoryview(b"xx" + data)[2:]):
        index = read_zip(given_data)
        assert index.names == read_zip(data).names
        assert bytes(index.data(index.entries[1])) == b"aaaa"


def test_check_crc_names_the_altered_member() -> None:
    data = bytearray(raw_zip(GOOD))
    index = read_zip(data)
    entry = index.get("s/a.txt")
    assert entry is not None
    data[entry.data_offset] ^= 0x01
    with pytest.raises(IntegrityError, match=r"'s/a\.txt'.*CRC-32"):
        index.check_crc(entry)
    index.check_crc(index.entries[0])


def round_trip(root: Path, out: Path) -> tuple[ZipIndex, list[Path]]:
    """Every file under `root` written by ZipWriter to `out`, then read back by read_zip and
    by zipfile: both must give every member, byte for byte; returns the index and the files."""
    files = sorted((p for p in root.rglob("*") if p.is_file()),
                   key=lambda p: p.relative_to(root).as_posix().encode())
    with open(out, "wb") as fh, ZipWriter(fh) as zw:
        for path in files:
            fd = os.open(path, os.O_RDONLY)
            try:
                st_ = os.fstat(fd)
                zw.add_fd(path.relative_to(root).as_posix(), fd, st_.st_size,
                          executable=bool(st_.st_mode & 0o100))
            finally:
                os.close(fd)
    data = out.read_bytes()
    index = read_zip(data, source=str(out))
    with zipfile.ZipFile(out) as zf:
        assert list(index.names) == zf.namelist()
        for entry in index:
            assert bytes(index.data(entry)) == zf.read(entry.name)
            index.check_crc(entry)
    return index, files


def test_the_fixtures_round_trip_agrees_with_zipfile(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "tree", {f"deep/{i % 7}/{i}.bin": os.urandom(i * 37)
                                         for i in range(200)})
    shutil.copytree(FIXTURES, root / "fixtures")
    (root / "deep" / "0" / "0.bin").chmod(0o755)
    index, files = round_trip(root, tmp_path / "tree.zip")
    assert len(index) == len(files) > 200
    assert sum(e.executable for e in index) == sum(
        bool(p.stat().st_mode & 0o100) for p in files) >= 1


@pytest.mark.corpus
def test_corpus_round_trip_agrees_with_zipfile(tmp_path: Path) -> None:
    index, files = round_trip(CORPUS, tmp_path / "corpus.zip")
    assert len(index) == len(files) > 2000
    assert sum(e.executable for e in index) == 60  # PROVENANCE.md: 60 executable files


def test_other_disciplined_writers_are_accepted() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name, mode in (("s/SKILL.md", 0o644), ("s/r\u00e9sum\u00e9.md", 0o600),
                           ("s/x.py", 0o755)):
            info = zipfile.ZipInfo(name, (2024, 5, 6, 7, 8, 10))
            info.external_attr = (0o100000 | mode) << 16
            zf.writestr(info, name.encode())
    index = read_zip(buf.getvalue())
    assert index.names == ("s/SKILL.md", "s/r\u00e9sum\u00e9.md", "s/x.py")
    assert [e.executable for e in index] == [False, False, True]


# Each case: the archive, then words the message must hold (the member's name among them).
def _case(**kw: Any) -> bytes:
    return raw_zip([GOOD[0], member("s/bad.md", b"payload", **kw)])


def _prepend_shifted() -> bytes:
    return raw_zip(GOOD, prefix=b"MZ" + b"\0" * 98, shift=100)


HOSTILE: dict[str, tuple[bytes, list[str]]] = {
    "empty file": (b"", ["no end-of-central-directory"]),
    "not a zip": (b"hello, this is not a zip archive at all", ["no end-of-central-directory"]),
    "end record cut off": (raw_zip(GOOD)[:-5], ["no end-of-central-directory"]),
    "truncated in the data": (raw_zip(GOOD)[:40], ["no end-of-central-directory"]),
    "appended data": (raw_zip(GOOD) + b"appended!", ["9 bytes of trailing data"]),
    "archive comment": (raw_zip(GOOD, clen=5, tail=b"hello"), ["5-byte comment"]),
    "comment length too long": (raw_zip(GOOD, clen=50, tail=b"abc"),
                                ["comment length is 50 but 3 bytes follow"]),
    "comment length too short": (raw_zip(GOOD, clen=1, tail=b"abc"),
                                 ["2 bytes of trailing data"]),
    "prepended data": (b"#!/bin/sh\nexit 0\n" + raw_zip(GOOD), ["prepended"]),
    "prepended stub, offsets shifted": (_prepend_shifted(), ["'s/SKILL.md'", "100 bytes of "
                                                             "prepended data"]),
    "multi-disk": (raw_zip(GOOD, disk=1), ["multi-disk"]),
    "multi-disk counts": (raw_zip(GOOD, count_disk=2), ["multi-disk"]),
    "zip64 count": (raw_zip(GOOD, count=0xFFFF, count_disk=0xFFFF), ["Zip64"]),
    "zip64 offset": (raw_zip(GOOD, cd_off=0xFFFFFFFF), ["Zip64"]),
    "zip64 locator": (raw_zip(GOOD, before_end=b"PK\x06\x06" + b"\0" * 52 + b"PK\x06\x07"
                              + b"\0" * 16), ["Zip64"]),
    "zip64 member size": (_case(csize=0xFFFFFFFF, size=0xFFFFFFFF), ["'s/bad.md'", "Zip64"]),
    "central directory out of bounds": (raw_zip(GOOD, cd_size=10_000), ["runs past"]),
    "count too high": (raw_zip(GOOD, count=4, count_disk=4), ["fewer entries than the 4"]),
    "count too low": (raw_zip(GOOD, count=2, count_disk=2), ["more than the 2 entries"]),
    "deflated": (_case(method=8), ["'s/bad.md'", "compressed member where STORED is promised"]),
    "encrypted": (_case(flags=0x801), ["'s/bad.md'", "encrypted"]),
    "data descriptor": (_case(flags=0x808), ["'s/bad.md'", "data descriptor"]),
    "other flag": (_case(flags=0x2800), ["'s/bad.md'", "unsupported general-purpose flags"]),
    "csize differs": (_case(csize=3), ["'s/bad.md'", "stored size 3 differs from its size 7"]),
    "lying size": (_case(size=10**6, csize=10**6), ["'s/bad.md'", "declares 1000000 bytes"]),
    "lying size, central only": (_case(c_size=10**6, c_csize=10**6),
                                 ["'s/bad.md'", "local header differs", "size"]),
    "overlap": (_case(c_offset=0), ["'s/bad.md'", "overlaps the previous member"]),
    "gap between members": (_case(gap=b"\0" * 16), ["'s/bad.md'", "16 bytes of unaccounted"]),
    "gap before central directory": (raw_zip(GOOD, before_cd=b"hidden"),
                                     ["6 bytes of unaccounted data between the last member"]),
    "missing local header": (_case(no_local=True), ["'s/bad.md'", "local header runs past"]),
    "local signature": (_case(l_sig=0x08074B50), ["'s/bad.md'", "no local header signature"]),
    "local name": (_case(l_name=b"s/BAD.md"), ["'s/bad.md'", "differs", "name"]),
    "local method": (_case(l_method=8), ["'s/bad.md'", "differs", "method"]),
    "local flags": (_case(l_flags=0), ["'s/bad.md'", "differs", "flags"]),
    "local crc": (_case(l_crc=0), ["'s/bad.md'", "differs", "CRC-32"]),
    "local sizes": (_case(l_size=3, l_csize=3), ["'s/bad.md'", "differs", "stored size, size"]),
    "local extra": (_case(l_xlen=4), ["'s/bad.md'", "extra field in the local header"]),
    "central extra (zip64)": (_case(extra=b"\x01\x00\x00\x00"), ["'s/bad.md'", "extra field"]),
    "member comment": (_case(comment=b"hi"), ["'s/bad.md'", "comment"]),
    "version 4.5": (_case(need=45), ["'s/bad.md'", "needs zip version 4.5"]),
    "symlink": (_case(eattr=0o120777 << 16), ["'s/bad.md'", "not a regular file", "120777"]),
    "fifo": (_case(eattr=0o010644 << 16), ["'s/bad.md'", "not a regular file"]),
    "dos directory attribute": (_case(eattr=0x10), ["'s/bad.md'", "directory entry"]),
    "invalid utf-8": (raw_zip([member(b"s/\xff\xfe.md")]), ["not valid UTF-8"]),
    "non-ascii without the flag": (raw_zip([member("s/\u00e9.md", flags=0)]),
                                   ["'s/\u00e9.md'", "without the UTF-8 flag"]),
    "absolute": (raw_zip([member("/etc/passwd")]), ["'/etc/passwd'", "absolute"]),
    "drive letter": (raw_zip([member("C:evil.md")]), ["'C:evil.md'", "drive-letter"]),
    "drive letter slash": (raw_zip([member("C:/evil.md")]), ["'C:/evil.md'", "drive-letter"]),
    "backslash": (raw_zip([member("s\\..\\evil.md")]), ["backslash"]),
    "dot-dot": (raw_zip([member("s/../../evil.md")]), ["'s/../../evil.md'", "'..'"]),
    "leading dot-dot": (raw_zip([member("../evil.md")]), ["'../evil.md'", "'..'"]),
    "dot segment": (raw_zip([member("s/./a.md")]), ["'s/./a.md'", "'.'"]),
    "empty segment": (raw_zip([member("s//a.md")]), ["'s//a.md'", "empty segment"]),
    "empty name": (raw_zip([member("")]), ["empty name"]),
    "control character": (raw_zip([member("s/a\nb.md")]), ["control character"]),
    "del character": (raw_zip([member("s/a\x7fb.md")]), ["control character"]),
    "directory entry": (raw_zip([member("s/", b""), member("s/a.md")]),
                        ["'s/'", "directory entry"]),
    "duplicate": (raw_zip([member("s/a.md"), member("s/a.md")]), ["'s/a.md'", "duplicate"]),
    "nfc twins": (raw_zip([member("s/e\u0301.md"), member("s/\u00e9.md")]),
                  ["'s/\u00e9.md'", "NFC"]),
    "case twins": (raw_zip([member("s/README.md"), member("s/readme.md")]),
                   ["'s/readme.md'", "differ only by case"]),
    "casefold twins": (raw_zip([member("s/STRASSE.md"), member("s/Stra\u00dfe.md")]),
                       ["'s/Stra\u00dfe.md'", "differ only by case"]),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_archive_is_refused(case: str) -> None:
    data, words = HOSTILE[case]
    with pytest.raises(ArchiveError) as info:
        read_zip(data, source="hostile.skill")
    message = str(info.value)
    assert message.startswith("hostile.skill: ")
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    assert info.value.hint  # says what to do


def test_hostile_cases_differ_from_a_good_archive_by_one_rule() -> None:
    # The builder's defaults are accepted: each refusal above comes from the broken rule.
    read_zip(raw_zip(GOOD))
    read_zip(_case())
    read_zip(raw_zip([member("s/\u00e9.md")]))


GOOD_BYTES = raw_zip(GOOD)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=600))
def test_arbitrary_bytes_raise_only_archive_errors(data: bytes) -> None:
    with contextlib.suppress(ArchiveError):
        read_zip(data)


def _read_all(data: bytes) -> None:
    try:
        index = read_zip(data)
    except ArchiveError:
        return
    for entry in index:
        assert 0 <= entry.data_offset <= entry.data_offset + entry.size <= len(data)
        assert len(index.data(entry)) == entry.size
        with contextlib.suppress(IntegrityError):
            index.check_crc(entry)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(GOOD_BYTES) - 1), st.integers(1, 255)),
                min_size=1, max_size=4))
def test_byte_flips_raise_only_archive_or_integrity_errors(
    flips: list[tuple[int, int]],
) -> None:
    data = bytearray(GOOD_BYTES)
    for at, xor in flips:
        data[at] ^= xor
    _read_all(bytes(data))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(GOOD_BYTES) - 1), st.binary(max_size=40))
def test_truncations_and_splices_raise_only_archive_errors(cut: int, junk: bytes) -> None:
    _read_all(GOOD_BYTES[:cut])
    _read_all(GOOD_BYTES[:cut] + junk + GOOD_BYTES[cut:])


def _listed_and_read(data: bytes) -> tuple[list[bytes] | None, list[bytes] | None]:
    """What `listed_names` and `read_zip_file` say of the archive file holding `data`: the
    names (raw), or None for an ArchiveError."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "a.zip")
        with open(path, "wb") as handle:
            handle.write(data)
        with FileBytes(os.open(path, os.O_RDONLY), path) as file:
            try:
                listed: list[bytes] | None = listed_names(file)
            except ArchiveError:
                listed = None
            try:
                read: list[bytes] | None = [n.encode() for n in read_zip_file(file).names]
            except ArchiveError:
                read = None
    return listed, read


def test_listed_names_are_the_names_the_strict_reader_reads() -> None:
    listed, read = _listed_and_read(GOOD_BYTES)
    assert listed == read == [m["name"] for m in GOOD]
    # what the strict reader refuses may still be listed: a local header that differs
    listed, read = _listed_and_read(raw_zip([member("a.txt", l_crc=1)]))
    assert (listed, read) == ([b"a.txt"], None)
    assert _listed_and_read(b"PK\x03\x04 not a zip") == (None, None)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(GOOD_BYTES) - 1), st.integers(1, 255)),
                min_size=1, max_size=4))
def test_listed_names_of_damaged_archives(flips: list[tuple[int, int]]) -> None:
    """`listed_names` raises only ArchiveError, and lists what the strict reader reads of
    every archive the strict reader accepts."""
    data = bytearray(GOOD_BYTES)
    for at, xor in flips:
        data[at] ^= xor
    listed, read = _listed_and_read(bytes(data))
    assert read is None or listed == read
