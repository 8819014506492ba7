"""Reading a carried file's bytes: whole when small, streamed through one buffer when large;
hashed with BLAKE3 and scanned for a PEM private-key block on the same bytes.

Small files are read whole, in one ``read`` call when they can be (the hot path of a tree
of many small files). Large ones stream through one fixed buffer, so memory stays flat
whatever the file size (a buffer rather than mmap: a file truncated under an mmap kills the
process with SIGBUS, and mapped pages would count in the process's RSS); each chunk is hashed
with multi-threaded BLAKE3 (which releases the GIL) while a helper thread scans it for the
key header, the two costing about the same.

The walk (`skillpack.build.walk`) and the file records (`skillpack.build.records`) read
through these, and every carried file is opened with `OPEN_FLAGS`; the runtime never imports
this module (it reads no file).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from blake3 import blake3

from skillpack.build.secrets import (
    PRIVATE_KEY_HEADER_MAX,
    PRIVATE_KEY_MARKER,
    contains_private_key,
)
from skillpack.errors import SkillpackError
from skillpack.spec.shebang import SHEBANG_MAX

__all__ = [
    "DIR_FLAGS",
    "HEAD",
    "LARGE_FILE",
    "MODE_BITS",
    "OPEN_FLAGS",
    "READ_CHUNK",
    "ROOT_FLAGS",
    "Changed",
    "KeyScan",
    "hash_fd",
    "hash_file",
    "hash_large",
    "read_small",
    "small_file_reader",
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


class Changed(Exception):
    """The file is not the one the walk saw, or changed while being read."""


def read_small(fd: int, size: int, data: bytes | None = None) -> bytes:
    """The `size` bytes of the open regular file `fd`, read whole; raises `Changed` otherwise.

    One byte more than expected is asked for: a regular file's read comes back short only at
    its end, so exactly `size` bytes from one read is the whole file, as measured (four system
    calls a file in all, the hot path of a tree of many small files). Otherwise the reads go
    on until the end, and any other total means the file changed. `data` is what a first
    ``os.read(fd, size + 1)`` of the caller's gave, if it made one.
    """
    if data is None:
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


class KeyScan:
    """The private-key check of a file streamed in chunks (the header may straddle two)."""

    def __init__(self, buf: bytearray) -> None:
        self.buf = buf
        self.view = memoryview(buf)
        self.tail = b""
        self.found = False

    def chunk(self, n: int) -> bool:
        """Scan the first `n` bytes of the buffer, the next chunk of the file."""
        if not self.found:
            view = self.view
            seam = self.tail + bytes(view[: min(n, PRIVATE_KEY_HEADER_MAX)])
            self.found = contains_private_key(seam) or (
                self.buf.find(PRIVATE_KEY_MARKER, 0, n) >= 0 and contains_private_key(view[:n])
            )
            self.tail = bytes(view[max(0, n - PRIVATE_KEY_HEADER_MAX) : n])
        return self.found


def small_file_reader() -> Callable[[int, int], tuple[str, bool, bytes] | None]:
    """A function reading a small file (under `LARGE_FILE`) whole from its open descriptor
    `fd` of expected `size`: (BLAKE3 hex, whether it holds a private key, the bytes), or None
    when the bytes do not add up to `size`. Read errors raise `OSError`."""
    read, marker = os.read, PRIVATE_KEY_MARKER
    hasher = blake3()  # one hasher, reset after each file: cheaper than a new one each time
    update, finish, reset = hasher.update, hasher.digest, hasher.reset

    def read_small_file(fd: int, size: int) -> tuple[str, bool, bytes] | None:
        data = read(fd, size + 1)  # one byte more: see read_small
        if len(data) != size:
            try:
                data = read_small(fd, size, data)
            except Changed:
                return None
        reset()
        update(data)
        return finish().hex(), marker in data and contains_private_key(data), data

    return read_small_file


def hash_large(fd: int, size: int) -> tuple[str, bool, bytes]:
    """`hash_fd` for a large file: one buffer; hash and key scan of a chunk run together.
    Also returns the first `HEAD` bytes read (for its `#!` line)."""
    hasher = blake3(max_threads=blake3.AUTO)
    buf = bytearray(READ_CHUNK)
    scan = KeyScan(buf)
    view = memoryview(buf)
    total = 0
    head = b""
    try:
        # the scan (bytes.find holds the GIL) runs in the helper while this thread hashes
        # (BLAKE3 releases the GIL); both finish before the buffer is read into again
        with ThreadPoolExecutor(1, thread_name_prefix="skillpack-keyscan") as helper:
            while True:
                n = os.readv(fd, [buf])
                if n == 0:
                    break
                if not total:
                    head = bytes(view[: min(n, HEAD)])
                total += n
                if total > size:
                    raise Changed
                scanned = helper.submit(scan.chunk, n) if not scan.found else None
                hasher.update(view[:n])
                if scanned is not None:
                    scanned.result()
    finally:
        view.release()
        scan.view.release()
    if total != size:
        raise Changed
    return hasher.hexdigest(), scan.found, head


def hash_fd(fd: int, size: int) -> tuple[str, bool]:
    """BLAKE3 hex of the open file `fd` of expected `size`, and whether it holds a private key.

    Raises `Changed` when the bytes read do not add up to `size`.
    """
    if size < LARGE_FILE:
        data = read_small(fd, size)
        return blake3(data).hexdigest(), contains_private_key(data)
    hex_digest, has_key, _ = hash_large(fd, size)
    return hex_digest, has_key


def hash_file(path: str | os.PathLike[str]) -> tuple[int, str]:
    """(size, BLAKE3 hex) of the regular file at `path`, opened without following a link."""
    name = os.fspath(path)
    fd = os.open(name, OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SkillpackError("not a regular file", path=name)
        try:
            hex_digest, _ = hash_fd(fd, st.st_size)
        except Changed:
            raise SkillpackError(
                "changed while being read", path=name, hint="try again once it is written"
            ) from None
        return st.st_size, hex_digest
    finally:
        os.close(fd)

