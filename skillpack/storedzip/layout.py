"""The zip discipline of `.skill` archives and bundles, and why a zip breaks it.

Shared by the writer (:mod:`skillpack.storedzip.writer`) and the reader
(:mod:`skillpack.storedzip.reader`): the header layouts and signatures, and the record-level
checks of the reader with their reasons: locating and checking the end record (every read),
and saying precisely why a central-directory entry or its local header is refused (only once
the reader's fast scan has found something wrong). Member names follow
:mod:`skillpack.formats.paths`.

The serverless runtime imports this module at cold start (through the reader): it imports no
more of the standard library than the reader does (`struct`).
"""

from __future__ import annotations

import struct

from skillpack.errors import ArchiveError

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "CENTRAL", "CENTRAL_SIG", "END", "END_SIG", "EXEC_BIT", "LOCAL", "LOCAL_SIG",
    "LOCAL_SIG_BYTES", "MAX_NEED", "UTF8_FLAG", "ZIP64_LOCATOR_SIG", "entry_refusal",
    "find_end", "refuse",
]

# Header layouts (APPNOTE 4.3.7, 4.3.12, 4.3.16), as in CPython's zipfile.
LOCAL = struct.Struct("<IHHHHHIIIHH")  # sig need flags method time date crc csize size nlen xlen
CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")  # sig made need flags method time date crc
#                                                csize size nlen xlen clen disk iattr eattr offset
END = struct.Struct("<IHHHHIIH")  # sig disk cd_disk count_disk count cd_size cd_offset clen
LOCAL_SIG = 0x04034B50
CENTRAL_SIG = 0x02014B50
END_SIG = 0x06054B50
ZIP64_LOCATOR_SIG = 0x07064B50
UTF8_FLAG = 0x0800
MAX_NEED = 20  # "version needed to extract": 2.0; Zip64 needs 4.5, other methods more
EXEC_BIT = 0o100 << 16  # owner-execute bit of the Unix mode in the external attributes
_END_SIG_BYTES = b"PK\x05\x06"
LOCAL_SIG_BYTES = b"PK\x03\x04"
_HINT = "rebuild it with `skillpack pack` or `skillpack bundle`; do not edit archives by hand"


# -- refusals ---------------------------------------------------------------------------------

def refuse(source: str, reason: str, member: str | None = None, hint: str = _HINT) -> ArchiveError:
    """The ArchiveError refusing the zip `source` for `reason` (about `member` when given)."""
    text = reason if member is None else f"member {member!r}: {reason}"
    return ArchiveError(text, path=source, hint=hint)


def find_end(view: memoryview, source: str, *, base: int = 0) -> tuple[int, int, int]:
    """Locate and check the end record; return (entry count, cd size, cd offset).

    `view` is the archive, or its last bytes (at least ``END.size + 0xFFFF`` of them, the
    most an end record and its comment can span) from file offset `base`."""
    n = len(view)
    if n >= END.size:
        pos = n - END.size
        fields = END.unpack_from(view, pos)
        if fields[0] != END_SIG or fields[7] != 0:
            pos = -1
    else:
        pos = -1
    if pos < 0:
        start = max(0, n - END.size - 0xFFFF)
        found = bytes(view[start:]).rfind(_END_SIG_BYTES)
        if found < 0 or start + found + END.size > n:
            raise refuse(
                source,
                "no end-of-central-directory record: not a zip archive, or truncated",
                hint="check that the file was copied completely; " + _HINT,
            )
        pos = start + found
        clen = END.unpack_from(view, pos)[7]
        tail = n - pos - END.size
        if clen == tail:
            raise refuse(source, f"the archive carries a {clen}-byte comment; ours carry none")
        if clen > tail:
            raise refuse(
                source,
                f"end record's comment length is {clen} but {tail} bytes follow it (truncated)",
            )
        raise refuse(
            source,
            f"{tail - clen} bytes of trailing data after the end record (appended data)",
            hint="strip what was appended, or rebuild the archive",
        )
    _, disk, cd_disk, count_disk, count, cd_size, cd_off, _ = fields
    zip64 = refuse(source, "Zip64 records: archives of 4 GiB or more, or of 65,535 members or "
                    "more, are not supported", hint="split the bundle into smaller ones")
    if 0xFFFF in (disk, cd_disk, count_disk, count) or 0xFFFFFFFF in (cd_size, cd_off):
        raise zip64
    if disk or cd_disk or count_disk != count:
        raise refuse(source, "multi-disk (split) archive", hint="join the parts, then rebuild")
    at = pos  # the end record's offset in `view`; `pos` is its offset in the archive
    pos += base
    if cd_off + cd_size != pos:
        # A Zip64 end record and its locator would sit right there, before the end record.
        if at >= 20 and struct.unpack_from("<I", view, at - 20)[0] == ZIP64_LOCATOR_SIG:
            raise zip64
        if cd_off + cd_size > pos:
            raise refuse(
                source,
                f"central directory (offset {cd_off}, {cd_size} bytes) runs past the end "
                f"record at {pos}: truncated or damaged",
            )
        raise refuse(
            source,
            f"{pos - cd_off - cd_size} bytes between the central directory and the end "
            "record, or data prepended to the archive",
        )
    return count, cd_size, cd_off


def entry_refusal(
    cd: bytes | bytearray | memoryview, pos: int, read_at: Callable[[int, int], bytes],
    source: str, expected: int, cd_off: int,
) -> ArchiveError:
    """Say precisely why the central-directory entry at `pos` of `cd` (the central directory,
    or the whole archive) or its local header is refused; ``read_at(offset, size)`` reads the
    archive (fewer bytes past its end)."""
    (_, _, need, flags, method, time, date, crc, csize, size, nlen, xlen, clen, disk, _, eattr,
     offset) = CENTRAL.unpack_from(cd, pos)
    raw = bytes(cd[pos + CENTRAL.size : pos + CENTRAL.size + nlen])
    member = raw.decode("utf-8", "backslashreplace")
    if flags & 0x0001:
        return refuse(source, "encrypted member", member)
    if flags & 0x0008:
        return refuse(source, "data descriptor flag set (sizes written after the data)", member)
    if flags & ~UTF8_FLAG:
        return refuse(source, f"unsupported general-purpose flags 0x{flags:04x}", member)
    if method != 0:
        return refuse(source, f"compressed member where STORED is promised (method {method})",
                       member)
    if 0xFFFFFFFF in (csize, size, offset):
        return refuse(source, "Zip64 sizes or offset (archives over 4 GiB are not supported)",
                       member, hint="split the bundle into smaller ones")
    if csize != size:
        return refuse(source, f"stored size {csize} differs from its size {size}", member)
    if need > MAX_NEED:
        return refuse(source, f"needs zip version {need // 10}.{need % 10} features "
                       f"(at most {MAX_NEED // 10}.{MAX_NEED % 10} is read)", member)
    if xlen or clen:
        return refuse(source, "extra field or comment in the central directory "
                       "(Zip64, timestamps or another name); ours carry none", member)
    if disk:
        return refuse(source, "member on another disk (multi-disk archive)", member)
    mode = eattr >> 16
    if eattr & 0x10 or mode & 0o170000 == 0o040000:
        return refuse(source, "directory entry; archives carry files only", member)
    if mode & 0o170000 not in (0, 0o100000):
        return refuse(source, f"not a regular file (Unix mode {mode:06o}: a symlink or "
                       "special file)", member)
    if offset < expected:
        return refuse(source, f"overlaps the previous member (its header is at {offset}, "
                       f"the previous member ends at {expected})", member)
    if offset > expected:
        if expected == 0:
            return refuse(source, f"{offset} bytes of prepended data before the first member "
                           "(the first local header must be at offset 0)", member)
        return refuse(source, f"{offset - expected} bytes of unaccounted data before this "
                       "member (a gap after the previous member)", member)
    if offset + LOCAL.size + nlen > cd_off:
        return refuse(source, "local header runs past the start of the central directory "
                       "(truncated)", member)
    (sig, lneed, lflags, lmethod, ltime, ldate, lcrc, lcsize, lsize, lnlen, lxlen) = (
        LOCAL.unpack(read_at(offset, LOCAL.size)))
    if sig != LOCAL_SIG:
        return refuse(source, f"no local header signature at offset {offset}", member)
    lname = read_at(offset + LOCAL.size, lnlen)
    diffs = [
        label
        for label, local, central in (
            ("name", lname, raw), ("method", lmethod, method), ("flags", lflags, flags),
            ("CRC-32", lcrc, crc), ("stored size", lcsize, csize), ("size", lsize, size),
            ("version needed", lneed, need), ("time", ltime, time), ("date", ldate, date),
        )
        if local != central
    ]
    if diffs:
        return refuse(source, "local header differs from the central directory in "
                       + ", ".join(diffs), member)
    if lxlen:
        return refuse(source, "extra field in the local header; ours carry none", member)
    if lneed > MAX_NEED:
        return refuse(source, f"local header needs zip version {lneed // 10}.{lneed % 10}",
                       member)
    data_end = offset + LOCAL.size + nlen + size
    if data_end > cd_off:
        available = cd_off - (offset + LOCAL.size + nlen)
        return refuse(source, f"declares {size} bytes but only {available} lie before the "
                       "central directory (a lying size or truncated data)", member)
    return refuse(source, "malformed entry", member)  # pragma: no cover - unreachable

