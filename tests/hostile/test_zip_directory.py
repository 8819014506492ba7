"""A foreign zip's central directory (issue 28): the member cap read from the end record and
a walk that stops at the cap, before zipfile builds an object for every entry; members whose
bytes overlap refused, as docs/ARCHIVES.md says.

Bounds are shown by sizes: the peak memory (tracemalloc) of refusing 20,000 to 320,000
entries stays the same (it grew with the entries: 400,000 cost 259 MiB).
"""

from __future__ import annotations

import io
import struct
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest
from helpers.hostile import TALLY, run_cli

from skillpack.content.inflate import Caps, read_zip
from skillpack.errors import ArchiveError

MD = b"---\nname: demo\ndescription: Demo skill. Use it for tests.\n---\n\nBody.\n"


def many_entries(count: int, *, says: int | None = None) -> bytes:
    """A zip of `count` empty STORED files; its end record says `says` entries (default:
    the truth, capped at 0xFFFF as the field holds)."""
    local, central = [], []
    offset = 0
    for i in range(count):
        name = f"demo/f{i:06d}".encode()
        head = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0)
        central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0, 0, 0,
                                   0, len(name), 0, 0, 0, 0, 0o100644 << 16, offset) + name)
        local.append(head + name)
        offset += len(head) + len(name)
    directory = b"".join(central)
    listed = min(count if says is None else says, 0xFFFF)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, listed, listed, len(directory), offset, 0)
    return b"".join(local) + directory + end


def peak_of_refusal(data: bytes, caps: Caps) -> tuple[int, ArchiveError]:
    tracemalloc.start()
    try:
        read_zip(data, caps)
    except ArchiveError as exc:
        raised = exc
    else:
        pytest.fail("accepted")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, raised


@pytest.mark.parametrize("lies", [False, True], ids=["true-count", "lying-count"])
def test_the_member_cap_is_applied_before_the_directory_is_parsed(lies: bool) -> None:
    peaks = []
    for count in (20_000, 80_000, 320_000):
        data = many_entries(count, says=1 if lies else None)
        with TALLY.refused("foreign-archive", f"zip-{count}-entries-{lies}", "read_zip",
                           ArchiveError, "more than the cap of 10000 members"):
            read_zip(data)
        peak, err = peak_of_refusal(data, Caps())
        assert err.problems[-1].code == "archive-too-many"
        peaks.append(peak)
    # what zipfile allocates is about 500 bytes an entry: 10 MB for 20,000, 160 MB for 320,000
    assert max(peaks) < 1 << 20, peaks


def test_a_zip_within_the_member_cap_is_still_read() -> None:
    data = many_entries(500)
    assert len(read_zip(data, Caps(members=500))) == 500
    with pytest.raises(ArchiveError, match="cap of 499 members"):
        read_zip(data, Caps(members=499))


def test_unpack_refuses_a_zip_of_too_many_entries(tmp_path: Path) -> None:
    archive = tmp_path / "many.zip"
    archive.write_bytes(many_entries(20_000))
    result = run_cli("unpack", str(archive), "-o", str(tmp_path / "out"))
    assert result.exit_code == 1 and "more than the cap of 10000 members" in result.output
    assert not (tmp_path / "out").exists()


# -- 15. overlapping members ----------------------------------------------------------------

def good_zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("demo/SKILL.md", MD)
        archive.writestr("demo/a.txt", b"A" * 100)
        archive.writestr("demo/b.txt", b"B" * 100)
    return out.getvalue()


def _entries(data: bytes) -> list[int]:
    at, found = 0, []
    while (at := data.find(b"PK\x01\x02", at)) >= 0:
        found.append(at)
        at += 4
    return found


def overlapped(data: bytes, how: str) -> bytes:
    """`data` with the central entry of demo/b.txt pointed into another member's bytes:
    at demo/a.txt's local header (a shared member, names differ), or inside a.txt's data."""
    entries = _entries(data)
    last = entries[2]
    a_offset = struct.unpack_from("<I", data, entries[1] + 42)[0]
    target = a_offset if how == "shared" else a_offset + 40
    patched = bytearray(data)
    struct.pack_into("<I", patched, last + 42, target)
    if how == "shared":  # the same name in both headers, so only the overlap is wrong
        name_len = struct.unpack_from("<H", data, last + 28)[0]
        patched[last + 46:last + 46 + name_len] = b"demo/a.txt"
        crc = zlib.crc32(b"A" * 100)
        struct.pack_into("<I", patched, last + 16, crc)
    return bytes(patched)


@pytest.mark.parametrize("how", ["shared", "inside"])
def test_overlapping_members_are_refused(how: str, tmp_path: Path) -> None:
    data = overlapped(good_zip(), how)
    with TALLY.refused("foreign-archive", f"zip-overlap-{how}", "read_zip", ArchiveError,
                       "overlap") as refusal:
        read_zip(data)
    assert refusal.value is not None
    assert "archive-overlap" in {p.code for p in refusal.value.problems}
    archive = tmp_path / "overlap.zip"
    archive.write_bytes(data)
    result = run_cli("unpack", str(archive), "-o", str(tmp_path / "out"))
    assert result.exit_code == 1 and "overlap" in result.output
    assert not (tmp_path / "out").exists()


def test_a_zip_with_prepended_data_is_not_an_overlap() -> None:
    """A self-extracting zip (a stub before the first member) is no overlap."""
    assert [m.path for m in read_zip(b"#!stub\n" * 100 + good_zip())] == [
        "demo/SKILL.md", "demo/a.txt", "demo/b.txt"]
