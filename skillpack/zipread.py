"""A strict zip reader that works from bytes only: the read side of `.skill` archives and bundles.

``read_zip`` accepts exactly the discipline :mod:`skillpack.zipwrite` writes: every member
STORED, no encryption, no data descriptors, no extra fields or comments, no Zip64, no
directory entries, members packed one after the other from offset 0 with the central
directory right behind the last one and the end record closing the file. Anything else is
refused with an :class:`~skillpack.errors.ArchiveError` naming the member and the reason, so
that what this reader sees is what any other unzip sees (no parser differentials).

It never touches the filesystem and never copies member data: ``ZipIndex.data`` is a slice
of the caller's buffer. It imports the standard library only, since the serverless runtime
calls it at cold start (~2,300 members in a few milliseconds).
"""

from __future__ import annotations

import struct

from skillpack._record import Record
from skillpack.errors import ArchiveError, IntegrityError

# Not imported here, to keep the runtime's cold start short: `re` (for names only once a name
# is refused), `unicodedata` (non-ASCII names), `zlib` (check_crc), `typing`, `dataclasses`.
TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    import re
    from collections.abc import Iterator

__all__ = ["ZipEntry", "ZipIndex", "collision_key", "name_problem", "read_zip"]

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

# The central-directory fields read_zip checks: sig, need, flags, method, csize, size, nlen,
# xlen, clen, disk, external attributes, offset (made-by, time, date, CRC, internal skipped:
# the local header must repeat them byte for byte, and ZipIndex reads the CRC when needed).
_CENTRAL_USED = struct.Struct("<I2xHHH8xIIHHHH2xII")
# What ZipIndex.facts reads of a central-directory entry: size, name length, external
# attributes, local header offset.
_CENTRAL_FACTS = struct.Struct("<24xIH8xII")
_END_SIG_BYTES = b"PK\x05\x06"
LOCAL_SIG_BYTES = b"PK\x03\x04"
_HINT = "rebuild it with `skillpack pack` or `skillpack bundle`; do not edit archives by hand"

# Anything a portable member name must not have: an absolute path, a drive letter, a
# backslash, a control character (C0, DEL, C1), an empty, `.` or `..` segment, a trailing `/`.
# Compiled on first use (read_zip screens names without it).
_BAD_NAME = r"\A/|\A[A-Za-z]:|\\|[\x00-\x1f\x7f-\x9f]|(?:\A|/)\.{0,2}(?:/|\Z)"
_bad_name: re.Pattern[str] | None = None


def _compile_bad_name() -> re.Pattern[str]:
    global _bad_name
    import re

    _bad_name = re.compile(_BAD_NAME)
    return _bad_name


def name_problem(name: str) -> str | None:
    """Why `name` is not a portable member name, or None when it is."""
    if not (_bad_name or _compile_bad_name()).search(name):
        return None
    import re

    if name == "":
        return "empty name"
    if name.endswith("/"):
        return "directory entry (name ends with '/'); archives carry files only"
    if name.startswith("/"):
        return "absolute name (starts with '/')"
    if re.match(r"[A-Za-z]:", name):
        return "drive-letter name (like 'C:x')"
    if "\\" in name:
        return "backslash in name (only '/' separates folders)"
    if re.search(r"[\x00-\x1f\x7f-\x9f]", name):
        return "control character in name"
    return "'..', '.' or empty segment in name (names must not escape or be ambiguous)"


def collision_key(name: str) -> str:
    """The key two names collide on: case folding of the NFC form (ASCII: lower case)."""
    if name.isascii():
        return name.lower()
    import unicodedata

    return unicodedata.normalize("NFC", name).casefold()


def collision_reason(first: str, second: str) -> str:
    """Say how two names with the same `collision_key` collide."""
    if first == second:
        return f"duplicate name (appears twice): {second!r}"
    import unicodedata

    if unicodedata.normalize("NFC", first) == unicodedata.normalize("NFC", second):
        return f"{second!r} and {first!r} are the same name after Unicode NFC normalisation"
    return f"{second!r} and {first!r} differ only by case (they collide on case-insensitive disks)"


class ZipEntry(Record):
    """One member: its name, where its local header and data are, and what it declares."""

    name: str
    header_offset: int
    data_offset: int
    size: int
    crc32: int
    executable: bool


class ZipIndex:
    """The members of a zip read by :func:`read_zip`, over the caller's buffer (no copy).

    Every check is done by :func:`read_zip`, which keeps only where each member's
    central-directory entry is; a :class:`ZipEntry` is made from it on first use (``get``
    makes one, ``entries`` all of them), so that a cold start that looks up a few members
    does not pay for thousands of records.
    """

    __slots__ = ("_entries", "_made", "_names", "_positions", "_rows", "_view", "source")

    def __init__(self, view: memoryview, rows: dict[str, int], source: str) -> None:
        self._view = view
        self._rows = rows  # name -> offset of its central-directory entry
        self._made: dict[str, ZipEntry] = {}
        self._entries: tuple[ZipEntry, ...] | None = None
        self._names: tuple[str, ...] | None = None
        self._positions: tuple[int, ...] | None = None
        self.source = source

    def _make(self, name: str, pos: int) -> ZipEntry:
        fields = CENTRAL.unpack_from(self._view, pos)
        crc, size, nlen, eattr, offset = fields[7], fields[9], fields[10], fields[15], fields[16]
        entry = ZipEntry(name, offset, offset + LOCAL.size + nlen, size, crc,
                         bool(eattr & EXEC_BIT))
        self._made[name] = entry
        return entry

    @property
    def entries(self) -> tuple[ZipEntry, ...]:
        """Every member, in archive order."""
        if self._entries is None:
            made = self._made
            self._entries = tuple(
                made.get(name) or self._make(name, pos) for name, pos in self._rows.items()
            )
        return self._entries

    @property
    def names(self) -> tuple[str, ...]:
        """Member names, in archive order."""
        if self._names is None:
            self._names = tuple(self._rows)
        return self._names

    def facts(self, start: int, end: int) -> tuple[list[int], list[bool], list[int]]:
        """The sizes, executable bits and data offsets of the members ``names[start:end]``,
        as three lists, without making a ZipEntry for each (what a bundle's load checks)."""
        if self._positions is None:
            self._positions = tuple(self._rows.values())
        unpack, view = _CENTRAL_FACTS.unpack_from, self._view
        rows = [unpack(view, pos) for pos in self._positions[start:end]]
        return ([size for size, _, _, _ in rows],
                [bool(eattr & EXEC_BIT) for _, _, eattr, _ in rows],
                [offset + LOCAL.size + nlen for _, nlen, _, offset in rows])

    def get(self, name: str) -> ZipEntry | None:
        """The member named `name`, or None."""
        entry = self._made.get(name)
        if entry is None:
            pos = self._rows.get(name)
            if pos is None:
                return None
            entry = self._make(name, pos)
        return entry

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[ZipEntry]:
        return iter(self.entries)

    def __contains__(self, name: object) -> bool:
        return name in self._rows

    def data(self, entry: ZipEntry) -> memoryview:
        """The member's bytes: a zero-copy slice of the buffer given to :func:`read_zip`."""
        if self._made.get(entry.name) is not entry and self.get(entry.name) != entry:
            raise ValueError(f"{entry.name!r} is not an entry of {self.source}")
        return self._view[entry.data_offset : entry.data_offset + entry.size]

    def check_crc(self, entry: ZipEntry) -> None:
        """Raise IntegrityError naming the member if its bytes do not match its CRC-32."""
        import zlib

        actual = zlib.crc32(self.data(entry))
        if actual != entry.crc32:
            raise IntegrityError(
                f"member {entry.name!r}: CRC-32 is {actual:08x}, the archive records "
                f"{entry.crc32:08x}: its bytes were altered or damaged",
                path=self.source,
                hint="do not use this archive; rebuild it or fetch it again",
            )


def _refuse(source: str, reason: str, member: str | None = None, hint: str = _HINT) -> ArchiveError:
    text = reason if member is None else f"member {member!r}: {reason}"
    return ArchiveError(text, path=source, hint=hint)


def _find_end(view: memoryview, source: str) -> tuple[int, int, int]:
    """Locate and check the end record; return (entry count, cd size, cd offset)."""
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
            raise _refuse(
                source,
                "no end-of-central-directory record: not a zip archive, or truncated",
                hint="check that the file was copied completely; " + _HINT,
            )
        pos = start + found
        clen = END.unpack_from(view, pos)[7]
        tail = n - pos - END.size
        if clen == tail:
            raise _refuse(source, f"the archive carries a {clen}-byte comment; ours carry none")
        if clen > tail:
            raise _refuse(
                source,
                f"end record's comment length is {clen} but {tail} bytes follow it (truncated)",
            )
        raise _refuse(
            source,
            f"{tail - clen} bytes of trailing data after the end record (appended data)",
            hint="strip what was appended, or rebuild the archive",
        )
    _, disk, cd_disk, count_disk, count, cd_size, cd_off, _ = fields
    zip64 = _refuse(source, "Zip64 records: archives of 4 GiB or more, or of 65,535 members or "
                    "more, are not supported", hint="split the bundle into smaller ones")
    if 0xFFFF in (disk, cd_disk, count_disk, count) or 0xFFFFFFFF in (cd_size, cd_off):
        raise zip64
    if disk or cd_disk or count_disk != count:
        raise _refuse(source, "multi-disk (split) archive", hint="join the parts, then rebuild")
    if cd_off + cd_size != pos:
        # A Zip64 end record and its locator would sit right there, before the end record.
        if pos >= 20 and struct.unpack_from("<I", view, pos - 20)[0] == ZIP64_LOCATOR_SIG:
            raise zip64
        if cd_off + cd_size > pos:
            raise _refuse(
                source,
                f"central directory (offset {cd_off}, {cd_size} bytes) runs past the end "
                f"record at {pos}: truncated or damaged",
            )
        raise _refuse(
            source,
            f"{pos - cd_off - cd_size} bytes between the central directory and the end "
            "record, or data prepended to the archive",
        )
    return count, cd_size, cd_off


def _entry_refusal(
    view: memoryview, source: str, pos: int, expected: int, cd_off: int
) -> ArchiveError:
    """Say precisely why the central-directory entry at `pos` or its local header is refused."""
    (_, _, need, flags, method, time, date, crc, csize, size, nlen, xlen, clen, disk, _, eattr,
     offset) = CENTRAL.unpack_from(view, pos)
    raw = bytes(view[pos + CENTRAL.size : pos + CENTRAL.size + nlen])
    member = raw.decode("utf-8", "backslashreplace")
    if flags & 0x0001:
        return _refuse(source, "encrypted member", member)
    if flags & 0x0008:
        return _refuse(source, "data descriptor flag set (sizes written after the data)", member)
    if flags & ~UTF8_FLAG:
        return _refuse(source, f"unsupported general-purpose flags 0x{flags:04x}", member)
    if method != 0:
        return _refuse(source, f"compressed member where STORED is promised (method {method})",
                       member)
    if 0xFFFFFFFF in (csize, size, offset):
        return _refuse(source, "Zip64 sizes or offset (archives over 4 GiB are not supported)",
                       member, hint="split the bundle into smaller ones")
    if csize != size:
        return _refuse(source, f"stored size {csize} differs from its size {size}", member)
    if need > MAX_NEED:
        return _refuse(source, f"needs zip version {need // 10}.{need % 10} features "
                       f"(at most {MAX_NEED // 10}.{MAX_NEED % 10} is read)", member)
    if xlen or clen:
        return _refuse(source, "extra field or comment in the central directory "
                       "(Zip64, timestamps or another name); ours carry none", member)
    if disk:
        return _refuse(source, "member on another disk (multi-disk archive)", member)
    mode = eattr >> 16
    if eattr & 0x10 or mode & 0o170000 == 0o040000:
        return _refuse(source, "directory entry; archives carry files only", member)
    if mode & 0o170000 not in (0, 0o100000):
        return _refuse(source, f"not a regular file (Unix mode {mode:06o}: a symlink or "
                       "special file)", member)
    if offset < expected:
        return _refuse(source, f"overlaps the previous member (its header is at {offset}, "
                       f"the previous member ends at {expected})", member)
    if offset > expected:
        if expected == 0:
            return _refuse(source, f"{offset} bytes of prepended data before the first member "
                           "(the first local header must be at offset 0)", member)
        return _refuse(source, f"{offset - expected} bytes of unaccounted data before this "
                       "member (a gap after the previous member)", member)
    if offset + LOCAL.size + nlen > cd_off:
        return _refuse(source, "local header runs past the start of the central directory "
                       "(truncated)", member)
    (sig, lneed, lflags, lmethod, ltime, ldate, lcrc, lcsize, lsize, lnlen, lxlen) = (
        LOCAL.unpack_from(view, offset))
    if sig != LOCAL_SIG:
        return _refuse(source, f"no local header signature at offset {offset}", member)
    lname = bytes(view[offset + LOCAL.size : offset + LOCAL.size + lnlen])
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
        return _refuse(source, "local header differs from the central directory in "
                       + ", ".join(diffs), member)
    if lxlen:
        return _refuse(source, "extra field in the local header; ours carry none", member)
    if lneed > MAX_NEED:
        return _refuse(source, f"local header needs zip version {lneed // 10}.{lneed % 10}",
                       member)
    data_end = offset + LOCAL.size + nlen + size
    if data_end > cd_off:
        available = cd_off - (offset + LOCAL.size + nlen)
        return _refuse(source, f"declares {size} bytes but only {available} lie before the "
                       "central directory (a lying size or truncated data)", member)
    return _refuse(source, "malformed entry", member)  # pragma: no cover - unreachable


def _screen_names(names: dict[str, int], source: str) -> None:
    """Refuse the first bad or colliding name; fast over a whole list of good ones."""
    # Wrap every name in '/' and join with '\\' (itself refused in names): a few scans of the
    # joined text find any empty, '.' or '..' segment, absolute or directory name, backslash,
    # drive letter (':') or control character in any of them; only then look name by name.
    # An empty, '.' or '..' segment, once wrapped in '/', is one of '//', '/./', '/../'.
    joined = "/" + "/\\/".join(names) + "/"
    if (
        "//" in joined or "/./" in joined or "/../" in joined or ":" in joined
        or joined.count("\\") != max(len(names) - 1, 0) or not joined.isprintable()
    ):
        for name in names:
            problem = name_problem(name)
            if problem is not None:
                raise _refuse(source, problem, name)
    keys = set(map(str.lower, names)) if joined.isascii() else set(map(collision_key, names))
    if len(keys) != len(names):
        seen: dict[str, str] = {}
        for name in names:
            key = collision_key(name)
            if key in seen:
                raise _refuse(source, collision_reason(seen[key], name), name)
            seen[key] = name


def read_zip(data: bytes | bytearray | memoryview, *, source: str = "<bytes>") -> ZipIndex:
    """Parse and check a zip held in memory; raise ArchiveError on anything not allowed.

    Every member's central-directory entry and local header are checked against each other
    and against the discipline above; CRCs are not computed here (see
    :meth:`ZipIndex.check_crc`). `source` names the archive in error messages.
    """
    view = memoryview(data)
    if view.ndim != 1 or view.itemsize != 1:
        view = view.cast("B")
    # Slicing bytes is about twice as fast as slicing a memoryview; both give a bytes-like.
    buf: bytes | bytearray | memoryview = data if isinstance(data, bytes | bytearray) else view
    count, cd_size, cd_off = _find_end(view, source)
    cd_end = cd_off + cd_size
    unpack = _CENTRAL_USED.unpack_from
    rows: dict[str, int] = {}
    expected = 0
    pos = cd_off
    for _ in range(count):
        if pos + 46 > cd_end:
            raise _refuse(source, "central directory is truncated: it holds fewer entries "
                          f"than the {count} its end record announces")
        (sig, need, flags, method, csize, size, nlen, xlen, clen, disk, eattr,
         offset) = unpack(buf, pos)
        name_end = pos + 46 + nlen
        if sig != CENTRAL_SIG or name_end > cd_end:
            raise _refuse(source, f"central directory entry at offset {pos} is damaged "
                          "(bad signature or runs out of bounds)")
        raw = buf[pos + 46 : name_end]
        data_offset = offset + 30 + nlen
        # Any flag but UTF-8, a method, an extra field or comment, another disk, a DOS
        # directory attribute or a Unix file type other than regular (0o10 or none), an offset
        # other than right after the previous member, or sizes that differ: refuse.
        if (
            (flags & 0xF7FF) | method | xlen | clen | disk | (eattr & 0x70000010)
            | (offset ^ expected) | (csize ^ size) or need > MAX_NEED
        ):
            raise _entry_refusal(view, source, pos, expected, cd_off)
        # A local header repeats, byte for byte and in the same layout, the central entry's
        # version needed, flags, method, time, date, CRC-32, sizes, name length, extra
        # length (0) and name: compare them in one go.
        expected = data_offset + size
        if expected > cd_off or buf[offset:data_offset] != (
            LOCAL_SIG_BYTES + buf[pos + 6 : pos + 32] + raw
        ):
            raise _entry_refusal(view, source, pos, offset, cd_off)
        try:
            name = str(raw, "utf-8")
        except UnicodeDecodeError:
            raise _refuse(source, "name is not valid UTF-8",
                          bytes(raw).decode("utf-8", "backslashreplace")) from None
        if not flags and not name.isascii():
            raise _refuse(source, "non-ASCII name without the UTF-8 flag (bit 11): other "
                          "unzips would read it in another encoding", name)
        if name in rows:
            raise _refuse(source, f"duplicate name (appears twice): {name!r}", name)
        rows[name] = pos
        pos = name_end
    if pos != cd_end:
        raise _refuse(source, f"central directory holds more than the {count} entries its end "
                      "record announces (or trailing bytes)")
    if expected != cd_off:
        raise _refuse(source, f"{cd_off - expected} bytes of unaccounted data between the last "
                      "member and the central directory (a gap)")
    _screen_names(rows, source)
    return ZipIndex(view, rows, source)
