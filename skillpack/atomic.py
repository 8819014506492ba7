"""Atomic file writes: no partial file ever carries the final name.

:func:`atomic_write` writes into a temp file beside the destination, named
``.<name>.skillpack-tmp-<pid>-<random>``; on success it flushes, fsyncs, sets mode 0644,
moves it onto the destination with ``os.replace`` and fsyncs the folder. On any failure,
including KeyboardInterrupt, the temp file is removed and the destination is left as it
was. A pack killed outright (SIGKILL, power loss) can leave a temp file behind:
:func:`clean_stale_temps` removes those whose process is gone, and the next `atomic_write`
of the same destination does so for its own name.
"""

from __future__ import annotations

import errno
import io
import os
import re
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, BinaryIO

from skillpack.errors import WriteError

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

__all__ = ["TEMP_MARK", "atomic_write", "clean_stale_temps"]

TEMP_MARK = ".skillpack-tmp-"
_TEMP_RE = re.compile(r"\..*\.skillpack-tmp-(\d+)-[0-9a-f]+\Z", re.DOTALL)
_MAX_BASE = 180  # keep temp names under NAME_MAX (255) whatever the destination's name
_BUFFER = 1 << 20


def _hint(err: OSError) -> str:
    if err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return "free some disk space (or raise the quota), then run the command again"
    if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "make the folder writable, or choose another output path"
    if err.errno == errno.ENOENT:
        return "create the output folder first, or choose another output path"
    if err.errno == errno.EISDIR:
        return "the output path is a folder: give a file name"
    return "check the output path and the disk, then run the command again"


def _write_error(dest: str, err: OSError) -> WriteError:
    reason = err.strerror or str(err)
    wrapped = WriteError(f"could not write: {reason}; nothing was written", path=dest,
                         hint=_hint(err))
    wrapped.errno = err.errno
    wrapped.strerror = err.strerror
    return wrapped


class _TempFile(io.FileIO):
    """The raw temp file: a failed write (ENOSPC...) becomes a WriteError naming `dest`.

    Errors raised by the caller's own code in the ``with`` block (reading a source file...)
    are not write errors and pass through unchanged.
    """

    dest = ""

    def write(self, b: ReadableBuffer, /) -> int:
        try:
            return super().write(b)
        except OSError as err:
            raise _write_error(self.dest, err) from err


def _fsync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems cannot fsync a folder; the rename itself is done
    finally:
        os.close(fd)


def _unlink_quietly(path: str) -> None:
    with suppress(OSError):
        os.unlink(path)


@contextmanager
def atomic_write(dest: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """Yield a seekable binary file; on success it replaces `dest` atomically, mode 0644.

    OS errors while creating, writing, syncing or renaming raise
    :class:`~skillpack.errors.WriteError` naming `dest`; any exception leaves no temp file and
    `dest` untouched.
    """
    dest_path = os.fspath(dest)
    folder, base = os.path.split(os.path.abspath(dest_path))
    clean_stale_temps(folder, dest=base)  # what a killed write of this file left behind
    tmp = os.path.join(
        folder, f".{base[:_MAX_BASE]}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(6)}"
    )
    try:
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                     0o600)
    except OSError as err:
        raise _write_error(dest_path, err) from err
    raw = _TempFile(fd, "r+", closefd=True)
    raw.dest = dest_path
    file = io.BufferedRandom(raw, _BUFFER)
    try:
        yield file
        try:
            file.flush()
            os.fsync(fd)
            os.fchmod(fd, 0o644)
            file.close()
            os.replace(tmp, dest_path)
        except WriteError:
            raise
        except OSError as err:
            raise _write_error(dest_path, err) from err
    except BaseException:
        with suppress(BaseException):  # closing after a failure: the first error wins
            file.close()
        _unlink_quietly(tmp)
        raise
    _fsync_folder(folder)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's process, or a pid we cannot judge: leave its file
    return True


def clean_stale_temps(folder: str | os.PathLike[str], *, dest: str | None = None) -> list[str]:
    """Remove temp files of `atomic_write` left in `folder` by processes that are gone.

    Only regular files named ``.<name>.skillpack-tmp-<pid>-<hex>`` whose pid is no longer
    alive are removed; with `dest`, only those of the destination file named `dest`. Return
    the paths removed, sorted; a missing folder gives [].
    """
    folder_path = os.fspath(folder)
    try:
        names = os.listdir(folder_path)
    except OSError:
        return []
    prefix = None if dest is None else f".{dest[:_MAX_BASE]}{TEMP_MARK}"
    removed: list[str] = []
    for name in sorted(names):
        if prefix is not None and not name.startswith(prefix):
            continue
        match = _TEMP_RE.match(name)
        if match is None or _alive(int(match.group(1))):
            continue
        path = os.path.join(folder_path, name)
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            os.unlink(path)
        except OSError:
            continue
        removed.append(path)
    return removed
