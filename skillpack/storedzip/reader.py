"""A strict zip reader that works from bytes only: the read side of `.skill` archives and bundles.

``read_zip`` accepts exactly the discipline :mod:`skillpack.storedzip.writer` writes: every member
STORED, no encryption, no data descriptors, no extra fields or comments, no Zip64, no
directory entries, members packed one after the other from offset 0 with the central
directory right behind the last one and the end record closing the file. Anything else is
refused with an :class:`~skillpack.errors.ArchiveError` naming the member and the reason, so
that what this reader sees is what any other unzip sees (no parser differentials).

It never touches the filesystem and never copies member data: ``ZipIndex.data`` is a slice
of the caller's buffer. It imports the standard library only, since the serverless runtime
calls it at cold start (~2,300 members in a few milliseconds).

This module is the reader: the fast scan of the central directory (`read_zip`), the name
screen, and the index over the buffer (`ZipIndex`). The discipline itself (header layouts,
the end record, and the precise reason for a refused entry) is in
:mod:`skillpack.storedzip.layout`; the name rules are :mod:`skillpack.formats.paths`.
"""

from __future__ import annotations

import struct

from skillpack._record import Record
from skillpack.errors import IntegrityError
from skillpack.formats.paths import (
    MAX_NAME,
    collision_key,
    collision_reason,
    may_be_unportable,
    name_problem,
)
from skillpack.storedzip.layout import (
    CENTRAL,
    CENTRAL_SIG,
    END,
    EXEC_BIT,
    LOCAL,
    LOCAL_SIG_BYTES,
    MAX_NEED,
    entry_refusal,
    find_end,
    refuse,
)

# Not imported here, to keep the runtime's cold start short: `zlib` (check_crc), `typing`,
# `dataclasses` (and, in skillpack.storedzip.layout, `re` and `unicodedata`).
TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from skillpack.storedzip.source import FileBytes, FileSpan

__all__ = ["FileZipIndex", "ZipEntry", "ZipIndex", "listed_names", "read_zip", "read_zip_file"]

# The central-directory fields read_zip checks: sig, need, flags, method, csize, size, nlen,
# xlen, clen, disk, external attributes, offset (made-by, time, date, CRC, internal skipped:
# the local header must repeat them byte for byte, and ZipIndex reads the CRC when needed).
_CENTRAL_USED = struct.Struct("<I2xHHH8xIIHHHH2xII")
# What ZipIndex.facts reads of a central-directory entry: size, name length, external
# attributes, local header offset.
_CENTRAL_FACTS = struct.Struct("<24xIH8xII")
# What listed_names reads of one: signature, name, extra field and comment lengths.
_CENTRAL_LENGTHS = struct.Struct("<I24xHHH")


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


class FileZipIndex(ZipIndex):
    """A `ZipIndex` of an archive read from a file (:func:`read_zip_file`): the central
    directory is in memory, the members are read from the file when asked for."""

    __slots__ = ("file",)

    def __init__(self, cd: memoryview, rows: dict[str, int], source: str,
                 file: FileBytes) -> None:
        super().__init__(cd, rows, source)
        self.file = file

    def data(self, entry: ZipEntry) -> memoryview:
        """The member's bytes, read whole (for the small members: manifests, the index)."""
        if self._made.get(entry.name) is not entry and self.get(entry.name) != entry:
            raise ValueError(f"{entry.name!r} is not an entry of {self.source}")
        return memoryview(self.file.read(entry.data_offset, entry.size))

    def span(self, entry: ZipEntry) -> memoryview | FileSpan:
        """The member's bytes as `FileBytes` slices them: read if small, else a lazy span."""
        return self.file[entry.data_offset : entry.data_offset + entry.size]


def _screen_names(names: dict[str, int], source: str) -> None:
    """Refuse the first bad or colliding name; fast over a whole list of good ones."""
    # Wrap every name in '/' and join with '\\' (itself refused in names): a few scans of the
    # joined text find any empty, '.' or '..' segment, absolute or directory name, backslash,
    # drive letter (':') or control character in any of them; only then look name by name.
    # An empty, '.' or '..' segment, once wrapped in '/', is one of '//', '/./', '/../'; the
    # last two hold './', which may_be_unportable() looks for (a trailing dot): not looked
    # for twice (each look scans the whole text).
    joined = "/" + "/\\/".join(names) + "/"
    if (
        "//" in joined or ":" in joined
        or joined.count("\\") != max(len(names) - 1, 0) or not joined.isprintable()
        or may_be_unportable(joined) or max(map(len, names), default=0) > MAX_NAME // 4
    ):
        for name in names:
            problem = name_problem(name)
            if problem is not None:
                raise refuse(source, problem, name)
    keys = set(map(str.lower, names)) if joined.isascii() else set(map(collision_key, names))
    if len(keys) != len(names):
        seen: dict[str, str] = {}
        for name in names:
            key = collision_key(name)
            if key in seen:
                raise refuse(source, collision_reason(seen[key], name), name)
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
    count, cd_size, cd_off = find_end(view, source)

    def read_at(offset: int, size: int) -> bytes:
        return bytes(view[offset : offset + size])

    rows = _scan(buf, 0, buf, read_at, count, cd_off, cd_size, source)
    return ZipIndex(view, rows, source)


def _central_directory(file: FileBytes) -> tuple[int, int, int, bytes]:
    """The entry count, size and offset the end record of the archive `file` gives (looked
    for in its last 64 KiB; `find_end` refuses a bad one), and its central directory's bytes."""
    n = len(file)
    tail_at = max(0, n - END.size - 0xFFFF)
    count, cd_size, cd_off = find_end(memoryview(file.read(tail_at, n - tail_at)),
                                      file.source, base=tail_at)
    return count, cd_size, cd_off, file.read(cd_off, cd_size)


def read_zip_file(file: FileBytes) -> FileZipIndex:
    """:func:`read_zip` of an archive read by offset from an open file (`file`), in memory
    bounded by its central directory: the end record is looked for in the file's last
    64 KiB, the central directory read whole, each local header read where its entry says.
    The checks and the refusals are those of `read_zip`, word for word."""
    source = file.source
    count, cd_size, cd_off, cd = _central_directory(file)
    def read_at(offset: int, size: int) -> bytes:
        return file.read(offset, size, exact=False)

    rows = _scan(cd, cd_off, _Headers(file), read_at, count, cd_off, cd_size, source)
    return FileZipIndex(memoryview(cd), rows, source, file)


def listed_names(file: FileBytes) -> list[bytes]:
    """The raw names the central directory of the archive `file` lists, in order, read
    without the other checks of `read_zip_file` (no local header is read): what tells an
    archive of ours from one made elsewhere before the strict read. Raises `ArchiveError`
    for an end record `read_zip_file` refuses, or a directory that cannot be walked."""
    source = file.source
    count, cd_size, _, cd = _central_directory(file)
    lengths = _CENTRAL_LENGTHS.unpack_from
    names: list[bytes] = []
    pos = 0
    for _ in range(count):
        if pos + CENTRAL.size > cd_size:
            break
        sig, nlen, xlen, clen = lengths(cd, pos)
        name_at = pos + CENTRAL.size
        if sig != CENTRAL_SIG or name_at + nlen > cd_size:
            break
        names.append(cd[name_at : name_at + nlen])
        pos = name_at + nlen + xlen + clen
    else:
        return names
    raise refuse(source, "the central directory cannot be walked")


class _Headers:
    """`FileBytes` as `_scan` slices it for local headers: ``headers[a:b]`` is bytes read."""

    __slots__ = ("_read",)

    def __init__(self, file: FileBytes) -> None:
        self._read = file.read

    def __getitem__(self, where: slice) -> bytes:
        start, stop = where.start, where.stop
        return self._read(start, stop - start)


def _scan(
    cd: bytes | bytearray | memoryview, base: int, headers: bytes | bytearray | memoryview
    | _Headers, read_at: Callable[[int, int], bytes], count: int, cd_off: int, cd_size: int,
    source: str,
) -> dict[str, int]:
    """The checks of every central-directory entry and its local header: the one scan of
    `read_zip` and `read_zip_file`. `cd` holds the central directory from file offset `base`
    (the whole archive from 0, or the central directory alone); ``headers[a:b]`` gives the
    archive's bytes from `a` to `b`; `read_at` (offset, size) reads what a refusal quotes.
    Returns each name's central-directory entry, as an offset into `cd`."""
    cd_end = cd_off + cd_size - base
    unpack = _CENTRAL_USED.unpack_from
    rows: dict[str, int] = {}
    expected = 0
    pos = cd_off - base
    for _ in range(count):
        if pos + 46 > cd_end:
            raise refuse(source, "central directory is truncated: it holds fewer entries "
                          f"than the {count} its end record announces")
        (sig, need, flags, method, csize, size, nlen, xlen, clen, disk, eattr,
         offset) = unpack(cd, pos)
        name_end = pos + 46 + nlen
        if sig != CENTRAL_SIG or name_end > cd_end:
            raise refuse(source, f"central directory entry at offset {pos + base} is damaged "
                          "(bad signature or runs out of bounds)")
        raw = cd[pos + 46 : name_end]
        data_offset = offset + 30 + nlen
        # Any flag but UTF-8, a method, an extra field or comment, another disk, a DOS
        # directory attribute or a Unix file type other than regular (0o10 or none), an offset
        # other than right after the previous member, or sizes that differ: refuse.
        if (
            (flags & 0xF7FF) | method | xlen | clen | disk | (eattr & 0x70000010)
            | (offset ^ expected) | (csize ^ size) or need > MAX_NEED
        ):
            raise entry_refusal(cd, pos, read_at, source, expected, cd_off)
        # A local header repeats, byte for byte and in the same layout, the central entry's
        # version needed, flags, method, time, date, CRC-32, sizes, name length, extra
        # length (0) and name: compare them in one go.
        expected = data_offset + size
        if expected > cd_off or headers[offset:data_offset] != (
            LOCAL_SIG_BYTES + cd[pos + 6 : pos + 32] + raw
        ):
            raise entry_refusal(cd, pos, read_at, source, offset, cd_off)
        try:
            name = str(raw, "utf-8")
        except UnicodeDecodeError:
            raise refuse(source, "name is not valid UTF-8",
                          bytes(raw).decode("utf-8", "backslashreplace")) from None
        if not flags and not name.isascii():
            raise refuse(source, "non-ASCII name without the UTF-8 flag (bit 11): other "
                          "unzips would read it in another encoding", name)
        if name in rows:
            raise refuse(source, f"duplicate name (appears twice): {name!r}", name)
        rows[name] = pos
        pos = name_end
    if pos != cd_end:
        raise refuse(source, f"central directory holds more than the {count} entries its end "
                      "record announces (or trailing bytes)")
    if expected != cd_off:
        raise refuse(source, f"{cd_off - expected} bytes of unaccounted data between the last "
                      "member and the central directory (a gap)")
    _screen_names(rows, source)
    return rows
