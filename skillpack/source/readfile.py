"""Reading a carried file's bytes: whole when small, streamed through one buffer when large;
hashed with BLAKE3 and checked for secrets (`skillpack.content.scan`) on the same bytes.

Small files are read whole, in one ``read`` call when they can be. Large ones stream
through two fixed buffers (not a map of the file: one truncated under it kills the process
with SIGBUS), so memory stays flat whatever the file size; each chunk is hashed with
multi-threaded BLAKE3 on a helper thread while this one runs the secret rules over it and
reads the next chunk into the other buffer.

The walk (`skillpack.source.walk`) and the file records (`skillpack.source.records`) read
through these, and every carried file is opened with `OPEN_FLAGS`; the runtime never imports
this module (it reads no file).
"""

from __future__ import annotations

import hashlib
import mmap
import os
import stat
import zlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

from blake3 import blake3

from skillpack._threads import quiet_helper
from skillpack.content.scan import ContentScan, ContentStream, scan_content
from skillpack.formats.shebang import SHEBANG_MAX

__all__ = [
    "DIR_FLAGS",
    "HEAD",
    "LARGE_FILE",
    "MODE_BITS",
    "OPEN_FLAGS",
    "READ_CHUNK",
    "ROOT_FLAGS",
    "Changed",
    "Crc32",
    "FileRead",
    "hash_large",
    "read_carried",
    "read_small",
]

#: How every carried file is opened: never through a link, never blocking (a fifo).
OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: How a folder holding carried files is opened: as a folder only, never through a link
#: (the skill's root folder may be one) and never blocking.
ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | os.O_CLOEXEC
DIR_FLAGS = ROOT_FLAGS | os.O_NOFOLLOW
#: How many of a file's first bytes are kept to read its `#!` line (as the runtime reads it).
HEAD = SHEBANG_MAX
LARGE_FILE = 4 * 1024 * 1024  # from this size on: streamed, hashed on several threads
READ_CHUNK = 4 * 1024 * 1024
#: File type and owner-execute bits of ``st_mode`` for each mode of the digest.
MODE_BITS = {"100644": stat.S_IFREG, "100755": stat.S_IFREG | stat.S_IXUSR}


class Crc32:
    """A running CRC-32 (zlib's; it releases the GIL on large buffers), fed like a hashlib
    object: what the zip writer needs to write a large member front to back."""

    def __init__(self) -> None:
        self.value = 0

    def update(self, data: bytes | bytearray | memoryview) -> None:
        self.value = zlib.crc32(data, self.value)


class Changed(Exception):
    """The file is not the one the walk saw, or changed while being read."""


def read_small(fd: int, size: int) -> bytes:
    """The `size` bytes of the open regular file `fd`, read whole; raises `Changed` otherwise.

    One byte more than expected is asked for: a regular file's read comes back short only at
    its end, so exactly `size` bytes from one read is the whole file. Otherwise the reads go
    on until the end, and any other total means the file changed.
    """
    data = os.read(fd, size + 1)
    got = len(data)
    if got == size:
        return data
    chunks = [data]
    while data and got <= size:
        data = os.read(fd, size + 1 - got)
        chunks.append(data)
        got += len(data)
    if got != size:
        raise Changed
    return b"".join(chunks)


class FileRead(NamedTuple):
    """What `read_carried` learnt of one file from a single read of its bytes."""

    blake3: str
    head: bytes  #: the whole bytes of a small file, the first `HEAD` bytes of a large one
    content: ContentScan
    sha256: str  #: its SHA-256 hex when asked for, else ""
    crc32: int | None  #: the CRC-32 of a large file when asked for, else None


def read_carried(fd: int, st: os.stat_result, path: str, allow: frozenset[str] | None,
              sha256: bool = False, crc: bool = False) -> FileRead:
    """Hash the open regular file `fd` (``fstat`` gave `st`) with BLAKE3 (and SHA-256 when
    asked) and check its content for the carried file `path` (`allow`: see
    `skillpack.content.scan.scan_content`), from one read of its bytes: whole when small,
    streamed through `hash_large` from `LARGE_FILE` on (with `crc`, its CRC-32 too). Raises
    `Changed` when the bytes do not add up to its size or it changed meanwhile, `OSError`
    when it cannot be read."""
    size = st.st_size
    if size < LARGE_FILE:
        data = read_small(fd, size)
        return FileRead(blake3(data).hexdigest(), data, scan_content(path, data, allow),
                        hashlib.sha256(data).hexdigest() if sha256 else "", None)
    stream = ContentStream(path, allow)
    sha = hashlib.sha256() if sha256 else None
    crc32 = Crc32() if crc else None
    hex_digest, head = hash_large(fd, size, stream, sha, crc32)
    after = os.fstat(fd)
    if (after.st_size, after.st_mtime_ns) != (size, st.st_mtime_ns):
        raise Changed
    return FileRead(hex_digest, head, stream.finish(), sha.hexdigest() if sha else "",
                    crc32.value if crc32 is not None else None)


def hash_large(fd: int, size: int, scan: ContentStream | None = None,
               sha: Any = None, crc: Crc32 | None = None) -> tuple[str, bytes]:
    """BLAKE3 hex and first `HEAD` bytes (for its `#!` line) of the large open file `fd` of
    expected `size`, read once through two buffers in turn: while a helper thread hashes one
    chunk (BLAKE3 on its threads, then `sha`, a hashlib object, and `crc`, when given: all
    release the GIL), this thread runs the content check `scan` over it and reads the next
    chunk into the other buffer. Raises `Changed` when the bytes do not add up to `size`."""
    hasher = blake3(max_threads=blake3.AUTO)
    bufs = (mmap.mmap(-1, READ_CHUNK), mmap.mmap(-1, READ_CHUNK))  # anonymous: no SIGBUS
    views = (memoryview(bufs[0]), memoryview(bufs[1]))

    def digest(chunk: memoryview) -> None:
        hasher.update(chunk)
        if sha is not None:
            sha.update(chunk)
        if crc is not None:
            crc.update(chunk)

    total = 0
    head = b""
    try:
        with ThreadPoolExecutor(1, "skillpack-hash", initializer=quiet_helper) as helper:
            turn = 0
            n = os.readv(fd, [bufs[turn]])
            while n:
                total += n
                if total > size:
                    raise Changed
                chunk = views[turn][:n]
                if not head:
                    head = bytes(chunk[:HEAD])
                hashed = helper.submit(digest, chunk)
                try:
                    if scan is not None:
                        scan.feed(chunk)
                    turn ^= 1
                    n = os.readv(fd, [bufs[turn]])  # the other buffer: the helper reads chunk
                finally:
                    hashed.result()
                chunk.release()
    finally:
        for view in views:
            view.release()
    if total != size:
        raise Changed
    return hasher.hexdigest(), head
