"""An archive read from an open file by offset, in bounded memory: `FileBytes` and `FileSpan`.

`skillpack.storedzip.reader.read_zip_file` reads a zip's end record, central directory and
local headers through a `FileBytes`; the build side (`skillpack verify`, `inspect`, `digest`,
`bundle` and `lock` of an archive file) then serves the members through it. Nothing is mapped
(a writer truncating the file would make a mapped read fault): every read is an ``os.pread``
of at most `CHUNK` bytes, so memory stays at a chunk whatever the archive's size. A small read
is served from the last chunk read for one (read again from its offset when it falls outside):
members read in archive order cost one ``os.pread`` a MiB, not one a member.

A slice of a `FileBytes` smaller than `CHUNK` is read at once and given as a ``memoryview``
(what the runtime serves from bytes); a larger one is a lazy `FileSpan`, read a chunk at a
time (`chunks`, `blake3_hex`, `sha256_hex`) or whole only when asked (`tobytes`).

A file that changes while it is read is refused, never half-trusted: a read that comes back
short (the file shrank), or a file whose size, modification or change time differs from when
it was opened (`check_unchanged`, run after each whole pass), raises `IntegrityError`.

Not imported by the runtime (`skillpack.runtime` serves from bytes): only by the reader's
file path and the build side.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator

from blake3 import blake3

from skillpack.errors import IntegrityError

__all__ = ["CHUNK", "FileBytes", "FileSpan"]

#: A read is at most this many bytes; a slice at least this large is a lazy `FileSpan`.
CHUNK = 1 << 20

_HINT = "stop whatever is writing to the archive, then run the command again"


def _stamp(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class FileBytes:
    """The bytes of an open regular file, read by offset (``os.pread``), never mapped.

    Owns `fd` (closed by `close`, or when the object is collected). ``len()`` is the size
    the file had when it was given; a slice ``fb[a:b]`` is a ``memoryview`` of the bytes
    read (under `CHUNK` bytes) or a `FileSpan` (from `CHUNK` bytes on).
    """

    __slots__ = ("_at", "_fd", "_size", "_stamp", "_window", "source")

    def __init__(self, fd: int, source: str) -> None:
        self._fd = fd
        self.source = source
        st = os.fstat(fd)
        self._stamp = _stamp(st)
        self._size = st.st_size
        # The last `CHUNK` read for small reads, and where it starts: a pass over the members
        # in archive order (each a few KiB) is then one read a MiB, not one a member.
        self._window = b""
        self._at = 0

    def __len__(self) -> int:
        return self._size

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        self._window = b""
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        self.close()

    def __enter__(self) -> FileBytes:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def changed(self, why: str) -> IntegrityError:
        """The error refusing the file because it changed while being read."""
        return IntegrityError(f"the archive changed while it was being read ({why}); "
                              "nothing read from it is trusted", path=self.source, hint=_HINT)

    def check_unchanged(self) -> None:
        """Raise `IntegrityError` if the file's size, modification or change time (or the
        file itself) differ from when it was opened: it was written to meanwhile."""
        if self._fd < 0:
            raise ValueError(f"{self.source} is closed")
        if _stamp(os.fstat(self._fd)) != self._stamp:
            raise self.changed("its size or modification time changed")

    def read(self, offset: int, size: int, *, exact: bool = True) -> bytes:
        """`size` bytes from `offset` (fewer only past the end when not `exact`)."""
        if offset + size > self._size and exact:
            raise self.changed(f"{size} bytes asked at offset {offset}, past its end")
        if size < CHUNK:
            at = offset - self._at
            if at < 0 or at + size > len(self._window):
                self._window = os.pread(self._fd, CHUNK, offset)
                self._at, at = offset, 0
            if at + size <= len(self._window):
                return self._window[at : at + size]
        data = os.pread(self._fd, size, offset)
        if len(data) < size:
            parts = [data]
            got = len(data)
            while got < size:  # a short read: read on, up to the end of the file
                more = os.pread(self._fd, size - got, offset + got)
                if not more:
                    break
                parts.append(more)
                got += len(more)
            data = b"".join(parts)
            if exact and len(data) < size:
                raise self.changed(f"it shrank: {len(data)} of {size} bytes at offset "
                                   f"{offset} could be read")
        return data

    def span(self, offset: int = 0, size: int | None = None) -> FileSpan:
        """`size` bytes from `offset` (to the end by default), always lazy: read when asked."""
        return FileSpan(self, offset, self._size - offset if size is None else size)

    def __getitem__(self, where: slice) -> memoryview | FileSpan:
        start, stop, _ = where.indices(self._size)
        size = max(stop - start, 0)
        if size < CHUNK:
            return memoryview(self.read(start, size)).toreadonly()
        return FileSpan(self, start, size)


class FileSpan:
    """`size` bytes of a `FileBytes` from `offset`, read only when asked, a chunk at a time."""

    __slots__ = ("_file", "offset", "size")

    def __init__(self, file: FileBytes, offset: int, size: int) -> None:
        self._file = file
        self.offset = offset
        self.size = size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, where: slice) -> memoryview | FileSpan:
        start, stop, _ = where.indices(self.size)
        return self._file[self.offset + start : self.offset + max(stop, start)]

    def chunks(self, size: int = CHUNK) -> Iterator[bytes]:
        """The bytes, `size` at a time; then checks the file did not change meanwhile."""
        read = self._file.read
        end = self.offset + self.size
        for at in range(self.offset, end, size):
            yield read(at, min(size, end - at))
        self._file.check_unchanged()

    def tobytes(self) -> bytes:
        """All the bytes at once (memory: their size): for what needs them whole."""
        return b"".join(self.chunks())

    def blake3_hex(self) -> str:
        hasher = blake3()
        for chunk in self.chunks():
            hasher.update(chunk)
        digest: str = hasher.hexdigest()
        return digest

    def sha256_hex(self) -> str:
        import hashlib  # start-up: OpenSSL's SHA-256 (about 3 ms), loaded only when asked

        hasher = hashlib.sha256()
        for chunk in self.chunks():
            hasher.update(chunk)
        return hasher.hexdigest()

    def crc32(self) -> int:
        crc = 0
        for chunk in self.chunks():
            crc = zlib.crc32(chunk, crc)
        return crc
