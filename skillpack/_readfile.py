"""Reading a carried file's bytes: whole when small, streamed through one buffer when large;
hashed with BLAKE3 and scanned for a PEM private-key block on the same bytes.

Small files are read whole, in one ``read`` call when they can be (the hot path of a tree
of many small files). Large ones stream through one fixed buffer, so memory stays flat
whatever the file size (a buffer rather than mmap: a file truncated under an mmap kills the
process with SIGBUS, and mapped pages would count in the process's RSS); each chunk is hashed
with multi-threaded BLAKE3 (which releases the GIL) while a helper thread scans it for the
key header, the two costing about the same.

`skillpack.hashing` (file records, the digest) and the walk use these; nothing here is
imported at cold start by the runtime.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from skillpack.hashing import LARGE_FILE, READ_CHUNK
from skillpack.secrets import PRIVATE_KEY_HEADER_MAX, PRIVATE_KEY_MARKER, contains_private_key

__all__ = [
    "DIR_FLAGS",
    "ROOT_FLAGS",
    "Changed",
    "KeyScan",
    "hash_fd",
    "hash_large",
    "read_small",
    "small_file_reader",
]

#: How a folder holding carried files is opened: as a folder only, never through a link
#: (the skill's root folder may be one) and never blocking.
ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | os.O_CLOEXEC
DIR_FLAGS = ROOT_FLAGS | os.O_NOFOLLOW


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
    from blake3 import blake3

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


def hash_large(fd: int, size: int) -> tuple[str, bool]:
    """`hash_fd` for a large file: one buffer; hash and key scan of a chunk run together."""
    from concurrent.futures import ThreadPoolExecutor

    from blake3 import blake3

    hasher = blake3(max_threads=blake3.AUTO)
    buf = bytearray(READ_CHUNK)
    scan = KeyScan(buf)
    view = memoryview(buf)
    total = 0
    try:
        # the scan (bytes.find holds the GIL) runs in the helper while this thread hashes
        # (BLAKE3 releases the GIL); both finish before the buffer is read into again
        with ThreadPoolExecutor(1, thread_name_prefix="skillpack-keyscan") as helper:
            while True:
                n = os.readv(fd, [buf])
                if n == 0:
                    break
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
    return hasher.hexdigest(), scan.found


def hash_fd(fd: int, size: int) -> tuple[str, bool]:
    """BLAKE3 hex of the open file `fd` of expected `size`, and whether it holds a private key.

    Raises `Changed` when the bytes read do not add up to `size`.
    """
    if size < LARGE_FILE:
        from blake3 import blake3

        data = read_small(fd, size)
        return blake3(data).hexdigest(), contains_private_key(data)
    return hash_large(fd, size)
