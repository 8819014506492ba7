"""Regular files read without blocking on a fifo or reading a device forever.

The one way the build side reads a file it was named (a SKILL.md, a lock, a signature, an
archive): here, below every stage, so that a reader such as `skillpack.approve.lock` does not
import the stage of skills on disk (`skillpack.source`, with pathspec and the content checks:
over 100 ms of a fresh interpreter) to read one file.
"""

from __future__ import annotations

import errno
import os
import stat

__all__ = ["open_regular", "read_regular"]


def open_regular(path: str | os.PathLike[str], *, follow: bool = True) -> int:
    """A descriptor of the regular file at `path`, for reading. Opened without blocking and
    checked before a byte is read: a fifo would block forever, a device (``/dev/zero``) never
    ends. Raises `OSError` (EINVAL, saying what it is, for anything but a regular file; with
    `follow` False, ELOOP for a symbolic link, which is then not followed)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags if follow else flags | os.O_NOFOLLOW)
    except OSError as err:
        if not follow and err.errno == errno.ELOOP and os.path.islink(path):
            raise OSError(errno.ELOOP, "it is a symbolic link, not a regular file") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a folder" if stat.S_ISDIR(mode) else "a fifo" if stat.S_ISFIFO(mode)
                    else "a device or socket")
            raise OSError(errno.EINVAL, f"it is {kind}, not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: str | os.PathLike[str], *, limit: int | None = None,
                 follow: bool = True) -> bytes:
    """The bytes of the regular file at `path` (opened as `open_regular` opens it, a link
    refused unless `follow`). With `limit`, a file of more bytes raises `OSError` (EFBIG)
    before it is read, or as soon as it has grown past `limit` while being read."""
    fd = open_regular(path, follow=follow)
    chunks = []
    size = 0
    try:
        if limit is not None and os.fstat(fd).st_size > limit:
            raise OSError(errno.EFBIG, f"it holds over {limit:,} bytes")
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if limit is not None and size > limit:
                raise OSError(errno.EFBIG, f"it holds over {limit:,} bytes")
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)
