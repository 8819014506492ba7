"""A deterministic, STORED-only zip writer: the write side of `.skill` archives and bundles.

The same members give the same bytes on every machine, whatever the mtimes, umask, time zone
or locale: members go in the order of their names' UTF-8 bytes, every member is STORED with
the UTF-8 name flag and nothing else, dated 1980-01-01 00:00:00, made by Unix with mode 0644
or 0755, with no extra fields, comments, data descriptors or directory entries. A file under
1 MiB is read whole and written after its header in one go; larger ones stream through in
1 MiB chunks (CRC-32 and BLAKE3 computed while copying, the CRC patched into the local header
afterwards), so memory stays flat. No Zip64: what would need it is
refused. :func:`skillpack.storedzip.reader.read_zip` accepts exactly this output.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO, NoReturn

from blake3 import blake3

from skillpack.errors import ArchiveError, IntegrityError
from skillpack.formats.paths import (
    collision_key,
    collision_reason,
    name_problem,
)
from skillpack.storedzip.layout import (
    CENTRAL,
    CENTRAL_SIG,
    END,
    END_SIG,
    LOCAL,
    LOCAL_SIG,
    UTF8_FLAG,
)

__all__ = ["CHUNK_SIZE", "MAX_MEMBERS", "MAX_SIZE", "ByteComparer", "ZipWriter", "archive_size",
           "central_entry", "end_record", "oversize"]

CHUNK_SIZE = 1 << 20
MAX_SIZE = 0xFFFFFFFF  # sizes and offsets must stay below this (it marks Zip64)
MAX_MEMBERS = 0xFFFF  # member counts must stay below this (it marks Zip64)
_VERSION = 20  # zip 2.0: STORED files
_MADE_BY = (3 << 8) | _VERSION  # Unix
_DOS_TIME = 0  # 00:00:00
_DOS_DATE = (0 << 9) | (1 << 5) | 1  # 1980-01-01
_MODE_FILE = 0o100644 << 16
_MODE_EXEC = 0o100755 << 16
_CRC_AT = 14  # offset of the CRC-32 field in a local header


def archive_size(members: Iterable[tuple[str, int]]) -> int:
    """The exact size of the archive of ``members`` (name, size): each member's local and
    central headers, its name twice and its bytes, and the end record (a name that is no
    UTF-8, which the walk refuses, counted as its bytes on disk)."""
    return 22 + sum(76 + 2 * len(name.encode("utf-8", "surrogateescape")) + size
                    for name, size in members)


def oversize(what: str, members: Iterable[tuple[str, int]]) -> str | None:
    """Why the archive of ``members`` (name, size) is refused as too large for a zip without
    Zip64, naming its largest files; None when it fits."""
    listed = list(members)
    total = archive_size(listed)
    if total < MAX_SIZE:
        return None
    largest = sorted(listed, key=lambda m: -m[1])[:3]
    return (f"{what} would be {total:,} bytes; an archive is at most {MAX_SIZE - 1:,} bytes "
            "(the largest files: " + ", ".join(f"{n} {z:,} bytes" for n, z in largest) + ")")


class ZipWriter:
    """Write a deterministic zip to `fileobj`, a seekable binary file positioned at offset 0.

    Add members in sorted order of their names' UTF-8 bytes, then :meth:`close` (or leave a
    ``with`` block) to write the central directory. The file object stays open: its owner
    (usually :func:`skillpack._atomic.atomic_write`) closes it. After a failed add the writer
    refuses further use; the partial output must be thrown away.
    """

    def __init__(self, fileobj: BinaryIO) -> None:
        if fileobj.tell() != 0:
            raise ArchiveError("ZipWriter must start at offset 0 of its file",
                               hint="give it a new, empty file")
        self._file = fileobj
        self._offset = 0
        self._central: list[bytes] = []
        self._cd_size = 0
        self._last: bytes | None = None
        self._keys: dict[str, str] = {}
        self._closed = False
        self._broken = False

    def __enter__(self) -> ZipWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self._closed = True

    @property
    def count(self) -> int:
        """How many members were added so far."""
        return len(self._central)

    def _usable(self) -> None:
        if self._closed:
            raise ArchiveError("the zip writer is closed: no member can be added")
        if self._broken:
            raise ArchiveError(
                "the zip writer is unusable after a failed add",
                hint="throw the partial archive away and pack again",
            )

    def _admit(self, name: str, size: int) -> bytes:
        """Check the name, order and limits of a new member; return its UTF-8 name."""
        problem = name_problem(name)  # (a name fits a header's 16-bit length: MAX_NAME)
        if problem is not None:
            shown = repr(name) if len(name) <= 200 else f"{name[:60]!r}..."
            raise ArchiveError(f"member {shown}: {problem}", hint="rename the file")
        encoded = name.encode("utf-8")
        if self._last is not None and encoded <= self._last:
            if encoded == self._last:
                raise ArchiveError(f"member {name!r}: duplicate name (added twice)")
            raise ArchiveError(
                f"member {name!r} added after {self._last.decode('utf-8')!r}: members must be "
                "added in sorted order of their names' UTF-8 bytes",
            )
        key = collision_key(name)
        if key in self._keys:
            raise ArchiveError(
                f"member {name!r}: {collision_reason(self._keys[key], name)}",
                hint="rename one of the two files",
            )
        if len(self._central) + 1 >= MAX_MEMBERS:
            raise ArchiveError(
                f"member {name!r}: an archive holds at most {MAX_MEMBERS - 1:,} members "
                "(more would need Zip64, which skillpack does not write)",
                hint="split the skills into several bundles",
            )
        if size < 0:
            raise ArchiveError(f"member {name!r}: negative size {size}")
        cd_size = self._cd_size + CENTRAL.size + len(encoded)
        end = self._offset + LOCAL.size + len(encoded) + size + cd_size + END.size
        if end >= MAX_SIZE:
            raise ArchiveError(
                f"member {name!r} ({size:,} bytes) would take the archive to 4 GiB or more "
                "(that would need Zip64, which skillpack does not write)",
                hint="keep each archive or bundle under 4 GiB; split large bundles",
            )
        self._keys[key] = name
        self._last = encoded
        return encoded

    def _local_header(self, encoded: bytes, crc: int, size: int) -> bytes:
        return LOCAL.pack(LOCAL_SIG, _VERSION, UTF8_FLAG, 0, _DOS_TIME, _DOS_DATE, crc, size,
                          size, len(encoded), 0) + encoded

    def _record(self, encoded: bytes, crc: int, size: int, executable: bool) -> None:
        self._central.append(central_entry(encoded, crc, size, executable, self._offset))
        self._cd_size += CENTRAL.size + len(encoded)
        self._offset += LOCAL.size + len(encoded) + size

    def add_bytes(self, name: str, data: bytes, *, executable: bool = False) -> None:
        """Add a member holding `data`."""
        self._usable()
        encoded = self._admit(name, len(data))
        crc = zlib.crc32(data)
        try:
            self._file.write(self._local_header(encoded, crc, len(data)))
            self._file.write(data)
        except BaseException:
            self._broken = True
            raise
        self._record(encoded, crc, len(data), executable)

    def add_fd(
        self, name: str, fd: int, size: int, *, executable: bool = False,
        expect_blake3: str | None = None, expect_crc: int | None = None,
    ) -> str:
        """Stream `size` bytes from the open descriptor `fd` (from its current position).

        CRC-32 and BLAKE3 are computed while copying. If the descriptor gives more or fewer
        bytes than `size`, or bytes whose BLAKE3 is not `expect_blake3` (or whose CRC-32 is
        not `expect_crc`), the file changed since it was listed: raise IntegrityError naming
        the member. Return the BLAKE3 hex. With `expect_crc` (the CRC-32 of the bytes the
        walk read), a large member's header is written with it at once: the file is written
        front to back, never seeked back into to patch the CRC.
        """
        self._usable()
        encoded = self._admit(name, size)
        if size < CHUNK_SIZE:
            return self._add_small_fd(name, encoded, fd, size, executable, expect_blake3)
        return self._stream(name, encoded, size, _fd_chunks(fd, size), executable,
                            expect_blake3, expect_crc)

    def add_chunks(self, name: str, size: int, chunks: Iterable[bytes | memoryview], *,
                   executable: bool = False, expect_blake3: str | None = None) -> str:
        """Add a member of `size` bytes given a chunk at a time (a member of an archive read
        from a file, `skillpack.storedzip.source.FileSpan.chunks`): memory stays at a chunk.
        The CRC-32 and BLAKE3 are computed while copying, the CRC patched into the local
        header after the data. Bytes other than `size` of them, or whose BLAKE3 is not
        `expect_blake3`, raise IntegrityError naming the member. Return the BLAKE3 hex."""
        self._usable()
        encoded = self._admit(name, size)
        return self._stream(name, encoded, size, chunks, executable, expect_blake3, None)

    def _stream(self, name: str, encoded: bytes, size: int,
                chunks: Iterable[bytes | memoryview], executable: bool,
                expect_blake3: str | None, expect_crc: int | None) -> str:
        """`add_fd` and `add_chunks`: write the header (with `expect_crc`, or a CRC patched
        after the data), then each chunk, hashing and CRC-ing it; more or fewer bytes than
        `size`, another BLAKE3 or CRC raise IntegrityError naming the member."""
        header_at = self._offset
        hasher = blake3()
        crc = 0
        got = 0
        write = self._file.write
        try:
            write(self._local_header(encoded, expect_crc or 0, size))
            for chunk in chunks:
                got += len(chunk)
                if got > size:
                    _changed_size(name, size, None)
                crc = zlib.crc32(chunk, crc)
                hasher.update(chunk)
                write(chunk)
            if got != size:
                _changed_size(name, size, got)
            digest: str = hasher.hexdigest()
            _check_blake3(name, digest, expect_blake3)
            if expect_crc is not None:
                _check_crc(name, crc, expect_crc)
            else:
                end = self._file.tell()
                self._file.seek(header_at + _CRC_AT)
                write(struct.pack("<I", crc))
                self._file.seek(end)
        except BaseException:
            self._broken = True
            raise
        self._record(encoded, crc, size, executable)
        return digest

    def _add_small_fd(self, name: str, encoded: bytes, fd: int, size: int, executable: bool,
                      expect_blake3: str | None) -> str:
        """`add_fd` for a file under CHUNK_SIZE: read whole (asking one byte more, so that a
        file that grew is caught), then header and data written at once, with no CRC patch."""
        try:
            data = os.read(fd, size + 1)  # a short read: read on until the end of the file
            while len(data) < size and (more := os.read(fd, size + 1 - len(data))):
                data += more
            if len(data) != size:
                _changed_size(name, size, len(data) if len(data) < size else None)
            digest: str = blake3(data).hexdigest()
            _check_blake3(name, digest, expect_blake3)
            crc = zlib.crc32(data)
            self._file.write(self._local_header(encoded, crc, size))
            self._file.write(data)
        except BaseException:
            self._broken = True
            raise
        self._record(encoded, crc, size, executable)
        return digest

    def close(self) -> None:
        """Write the central directory and the end record (once; later calls do nothing)."""
        if self._closed:
            return
        self._usable()
        count = len(self._central)
        try:
            # one write: a record is some 80 bytes, and each write is a call through every
            # layer of the sink (a hashing file, a buffered file)
            self._file.write(b"".join(self._central)
                             + end_record(count, self._cd_size, self._offset))
            self._file.flush()
        except BaseException:
            self._broken = True
            raise
        self._closed = True


def central_entry(encoded: bytes, crc: int, size: int, executable: bool, offset: int) -> bytes:
    """The central-directory entry `ZipWriter` writes for a member named `encoded` (UTF-8)
    of `size` bytes with CRC-32 `crc`, its local header at `offset`. Its local header repeats
    bytes 6 to 32 and the name (after its own 4-byte signature)."""
    attrs = _MODE_EXEC if executable else _MODE_FILE
    return CENTRAL.pack(CENTRAL_SIG, _MADE_BY, _VERSION, UTF8_FLAG, 0, _DOS_TIME, _DOS_DATE,
                        crc, size, size, len(encoded), 0, 0, 0, 0, attrs, offset) + encoded


def end_record(count: int, cd_size: int, cd_offset: int) -> bytes:
    """The end record `ZipWriter` writes after a central directory of `count` entries."""
    return END.pack(END_SIG, 0, 0, count, count, cd_size, cd_offset, 0)


def _fd_chunks(fd: int, size: int) -> Iterator[bytes]:
    """`size` bytes of the descriptor `fd`, a chunk at a time, then one byte more if the file
    grew (which `ZipWriter._stream` reports); fewer when it shrank."""
    remaining = size
    while remaining:
        chunk = os.read(fd, min(CHUNK_SIZE, remaining))
        if not chunk:
            return
        remaining -= len(chunk)
        yield chunk
    extra = os.read(fd, 1)
    if extra:
        yield extra


def _changed_size(name: str, size: int, got: int | None) -> NoReturn:
    """Raise: the member gave `got` bytes (None: more than `size`) where `size` was listed."""
    read = "more" if got is None else f"only {got:,}"
    raise IntegrityError(
        f"member {name!r} changed while being packed: it was {size:,} bytes when listed, "
        f"{read} bytes were read",
        hint="stop whatever is writing to the skill's files, then pack again",
    )


def _check_blake3(name: str, digest: str, expect: str | None) -> None:
    if expect is not None and digest != expect.lower():
        raise IntegrityError(
            f"member {name!r} changed while being packed: its BLAKE3 is {digest}, "
            f"{expect} was recorded when it was listed",
            hint="stop whatever is writing to the skill's files, then pack again",
        )


def _check_crc(name: str, crc: int, expect: int) -> None:
    if crc != expect:
        raise IntegrityError(
            f"member {name!r} changed while being packed: its CRC-32 is {crc:08x}, "
            f"{expect:08x} was computed when it was read",
            hint="stop whatever is writing to the skill's files, then pack again",
        )


class ByteComparer:
    """A write-only, seekable file that compares what is written with the bytes already there.

    ``read_at(offset, size)`` gives the existing bytes. A `ZipWriter` writing into it tells,
    without writing anything or holding more than one chunk, whether the archive it would
    write is byte for byte the existing one (`same`). A later write over the same place (the
    CRC patched into a local header) settles the earlier difference there.
    """

    _MAX_DIFFS = 64  # a header being patched differs in 4 bytes; more means another file

    class Differs(Exception):
        """Raised by `write` once the bytes differ too much to be settled later: stop early."""

    def __init__(self, read_at: Callable[[int, int], bytes | memoryview], size: int) -> None:
        self._read_at = read_at
        self._size = size
        self._pos = 0
        self.end = 0
        self.diffs: set[int] = set()

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        self._pos = offset if whence == os.SEEK_SET else self._pos + offset
        return self._pos

    def flush(self) -> None:
        pass

    def write(self, data: bytes | memoryview) -> int:
        start, size = self._pos, len(data)
        if self.diffs:
            self.diffs = {o for o in self.diffs if not start <= o < start + size}
        old = self._read_at(start, size) if start < self._size else b""
        if old != data:
            for i in range(size):
                if i >= len(old) or old[i] != data[i]:
                    self.diffs.add(start + i)
                    if len(self.diffs) > self._MAX_DIFFS:
                        raise ByteComparer.Differs
        self._pos += size
        self.end = max(self.end, self._pos)
        return size

    @property
    def same(self) -> bool:
        """True when everything written equals the existing bytes, and covers them all."""
        return not self.diffs and self.end == self._size

