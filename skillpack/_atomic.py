"""Atomic file writes: no partial file ever carries the final name.

:func:`atomic_write` writes into a temp file beside the destination, named
``.<name>.skillpack-tmp-<pid>-<random>``; on success it flushes, sets mode 0644, fsyncs,
moves it onto the destination with ``os.replace`` and fsyncs the folder. On any failure,
including KeyboardInterrupt, the temp file is removed and the destination is left as it
was. :class:`AtomicBatch` does the same for several files at once (what `pack` writes): all
fsync'd together on a few threads, then all renamed, then each folder fsync'd once. A pack
killed outright (SIGKILL, power loss) can leave a temp file behind: :func:`clean_stale_temps`
removes those whose process is gone, and the next write into the same folder does so first.

A pid names a process only in its own PID namespace: two containers sharing a volume see each
other's pids as gone. So a writer also holds a shared `flock` on each folder it writes into,
from its first temp file until its last rename (one descriptor per folder, released by the
kernel if the writer dies), and a cleaner removes temp files only while it holds that lock
exclusively: when it cannot take it at once, some writer is at work there, in whatever
namespace, and nothing is removed. Where the filesystem has no `flock`, the pid rule alone
decides, as before.
"""

from __future__ import annotations

import errno
import fcntl
import io
import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, BinaryIO

from skillpack._threads import quiet_helper
from skillpack.errors import WriteError

if TYPE_CHECKING:  # a name for the type checker only: no module holds it at run time
    from _typeshed import ReadableBuffer

__all__ = [
    "TEMP_MARK",
    "AtomicBatch",
    "FolderLease",
    "atomic_write",
    "clean_stale_temps",
    "folder_lock",
    "fsync_folder",
    "make_folders",
    "pid_alive",
    "remove_tree",
    "writer_at_work",
]

TEMP_MARK = ".skillpack-tmp-"
_TEMP_RE = re.compile(r"\..*\.skillpack-tmp-(\d+)-[0-9a-f]+\Z", re.DOTALL)
_MAX_BASE = 180  # keep temp names under NAME_MAX (255) whatever the destination's name
_BUFFER = 1 << 20


_MAX_PENDING = 128  # written files kept open for one parallel fsync round (a descriptor each)


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


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to `fd`, a short write continued where it stopped."""
    view = memoryview(data)
    while view:
        done = os.write(fd, view)
        if done == 0:  # nothing written, no error: never loop on it
            raise OSError(errno.EIO, "the file took none of the bytes written")
        view = view[done:]


def fsync_folder(folder: str | os.PathLike[str]) -> None:
    """fsync a folder, so a rename into it is durable (quietly nothing where the filesystem
    cannot)."""
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


class _Staged:
    """One file of a batch, written to its temp file and waiting to be renamed."""

    __slots__ = ("dest", "existed", "synced", "tmp")

    def __init__(self, tmp: str, dest: str, existed: bool, synced: Future[None] | None) -> None:
        self.tmp, self.dest, self.existed, self.synced = tmp, dest, existed, synced


def _sync_and_close(fd: int, dest: str) -> None:
    try:
        os.fsync(fd)
    except OSError as err:
        raise _write_error(dest, err) from err
    finally:
        os.close(fd)


class AtomicBatch:
    """Several files written all or nothing: each into a temp file beside it, every temp file
    fsync'd (on `sync_threads` threads at once, in rounds of up to 128 files: concurrent
    fsyncs share the filesystem's journal commits, where one after the other each waits for
    its own), then all renamed onto their destinations, then each folder fsync'd once.

    ``with AtomicBatch() as batch:``, then ``with batch.write(dest) as handle:`` for each
    file (or ``batch.write_parts(dest, parts)`` for one whose bytes are all in memory).
    Leaving the batch's block normally commits it; any exception, in a write or after,
    removes every temp file and leaves every destination as it was. Should a rename itself
    fail part way, the destinations this batch created are removed again (one it replaced
    keeps its new content). OS errors raise `WriteError` naming the destination.
    """

    def __init__(self, *, sync_threads: int = 8, leased: bool = True) -> None:
        self._threads = sync_threads
        self._leased = leased  # False: the caller holds the folders' lock (`folder_lock`)
        self._pool: ThreadPoolExecutor | None = None
        self._staged: list[_Staged] = []
        self._pending: list[tuple[int, int, str]] = []  # written, not yet handed to a sync
        self._cleaned: set[str] = set()
        self._leases: list[int] = []  # shared flocks on the folders written into

    def __enter__(self) -> AtomicBatch:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is None:
            self.commit()
        else:
            self.abort()

    def _sync(self, fd: int, dest: str) -> Future[None]:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="skillpack-fsync",
                                            initializer=quiet_helper)
        return self._pool.submit(_sync_and_close, fd, dest)

    def _lease(self, folder: str) -> None:
        if folder not in self._cleaned:  # what killed writes left in this folder
            lease = _folder_lease(folder) if self._leased else None
            if lease is not None:
                if _try_exclusive(lease):  # no writer at work here: clean, then share it
                    _clean(folder, None)
                    _lock(lease, fcntl.LOCK_SH)
                else:
                    _lock(lease, fcntl.LOCK_SH)  # waits only for a cleaner, a moment
                self._leases.append(lease)
            else:
                _clean(folder, None)
            self._cleaned.add(folder)

    def _create(self, dest_path: str) -> tuple[str, int]:
        """A new temp file beside `dest_path` (its folder cleaned of what killed writes left,
        and leased, on first use): its path and descriptor."""
        folder, base = os.path.split(os.path.abspath(dest_path))
        self._lease(folder)
        tmp = os.path.join(
            folder, f".{base[:_MAX_BASE]}{TEMP_MARK}{os.getpid()}-"
            f"{os.urandom(6).hex()}"
        )
        try:
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                         0o600)
        except OSError as err:
            raise _write_error(dest_path, err) from err
        return tmp, fd

    def _stage(self, tmp: str, fd: int, dest_path: str) -> None:
        """The written temp file `tmp` (open as `fd`, mode set) waits for the commit."""
        existed = os.path.lexists(dest_path)
        self._pending.append((len(self._staged), fd, dest_path))
        self._staged.append(_Staged(tmp, dest_path, existed, None))
        if len(self._pending) >= _MAX_PENDING:
            self._sync_pending()

    @contextmanager
    def write(self, dest: str | os.PathLike[str]) -> Iterator[BinaryIO]:
        """Yield a seekable binary file that becomes `dest` (mode 0644) when the batch
        commits. An exception in the block removes its temp file and is raised unchanged."""
        dest_path = os.fspath(dest)
        tmp, fd = self._create(dest_path)
        raw = _TempFile(fd, "r+", closefd=False)
        raw.dest = dest_path
        file = io.BufferedRandom(raw, _BUFFER)
        try:
            yield file
            try:
                file.flush()
                os.fchmod(fd, 0o644)
            except WriteError:
                raise
            except OSError as err:
                raise _write_error(dest_path, err) from err
            file.close()
        except BaseException:
            with suppress(BaseException):  # closing after a failure: the first error wins
                file.close()
            os.close(fd)
            _unlink_quietly(tmp)
            raise
        self._stage(tmp, fd, dest_path)

    def write_parts(self, dest: str | os.PathLike[str], parts: Sequence[bytes]) -> None:
        """`write`, for a file whose bytes are all in memory as `parts`, in order."""
        dest_path = os.fspath(dest)
        tmp, fd = self._create(dest_path)
        try:
            try:
                _write_all(fd, b"".join(parts))
                os.fchmod(fd, 0o644)
            except OSError as err:
                raise _write_error(dest_path, err) from err
        except BaseException:
            os.close(fd)
            _unlink_quietly(tmp)
            raise
        self._stage(tmp, fd, dest_path)

    def _sync_pending(self) -> None:
        for index, fd, dest in self._pending:
            self._staged[index].synced = self._sync(fd, dest)
        self._pending = []

    def _wait(self) -> WriteError | None:
        self._sync_pending()
        first: WriteError | None = None
        for staged in self._staged:
            error = staged.synced.exception() if staged.synced is not None else None
            if first is None and isinstance(error, WriteError):
                first = error
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        return first

    def abort(self) -> None:
        """Remove every temp file; no destination is touched."""
        for _, fd, _ in self._pending:  # never synced: nothing of theirs will be kept
            os.close(fd)
        self._pending = []
        with suppress(BaseException):
            self._wait()
        for staged in self._staged:
            _unlink_quietly(staged.tmp)
        self._staged = []
        self._release()

    def _release(self) -> None:
        for lease in self._leases:  # closing the descriptor drops its lock
            os.close(lease)
        self._leases = []

    def commit(self) -> None:
        """Rename every written file onto its destination, once all are on disk."""
        try:
            error = self._wait()
        except BaseException:  # an interrupt while waiting: as any other failure
            self.abort()
            raise
        if error is not None:
            self.abort()
            raise error
        renamed: list[_Staged] = []
        try:
            for staged in self._staged:
                try:
                    os.replace(staged.tmp, staged.dest)
                except OSError as err:
                    raise _write_error(staged.dest, err) from err
                renamed.append(staged)
        except BaseException:
            for staged in renamed:
                if not staged.existed:
                    _unlink_quietly(staged.dest)
            self.abort()
            raise
        for folder in sorted({os.path.dirname(os.path.abspath(s.dest)) for s in renamed}):
            fsync_folder(folder)
        self._staged = []
        self._release()


@contextmanager
def atomic_write(dest: str | os.PathLike[str], *, leased: bool = True) -> Iterator[BinaryIO]:
    """Yield a seekable binary file; on success it replaces `dest` atomically, mode 0644.

    OS errors while creating, writing, syncing or renaming raise
    :class:`~skillpack.errors.WriteError` naming `dest`; any exception leaves no temp file and
    `dest` untouched. (`AtomicBatch` of one file.) `leased` False: the caller holds the
    folder's lock already (`folder_lock`), so no shared lease is taken (it would wait for
    that lock, held by this very process, forever).
    """
    with AtomicBatch(sync_threads=1, leased=leased) as batch, batch.write(dest) as file:
        yield file


@contextmanager
def folder_lock(folder: str | os.PathLike[str]) -> Iterator[bool]:
    """``with folder_lock(folder) as held:`` one writer at a time in `folder`: the folder's
    lock (the one every writer's lease shares, see the module docstring) held exclusively for
    the block, waiting while another process holds it; released by the kernel if this
    process dies. `held` is False where the filesystem has no `flock` (nothing is waited
    for, nothing is sure). Inside, write with ``atomic_write(..., leased=False)``."""
    fd = _folder_lease(os.fspath(folder))
    if fd is None:
        yield False
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield True
    finally:
        os.close(fd)


def writer_at_work(folder: str | os.PathLike[str]) -> bool | None:
    """Whether some process holds `folder`'s lock now (a writer's lease, a `folder_lock`),
    without waiting; None where that cannot be told (no `flock` there)."""
    fd = _folder_lease(os.fspath(folder))
    if fd is None:
        return None
    try:
        return not _try_exclusive(fd)
    finally:
        os.close(fd)


def pid_alive(pid: int) -> bool:
    """Whether process `pid` may still run (one that is not ours, or cannot be judged, is
    taken as running: its temp files are left alone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's process, or a pid we cannot judge: leave its file
    return True


def _folder_lease(folder: str) -> int | None:
    """A descriptor of `folder` to `flock`, or None where that cannot be done."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # does this filesystem lock at all?
        fcntl.flock(fd, fcntl.LOCK_UN)
    except BlockingIOError:
        pass  # it does: a cleaner holds it now
    except OSError:  # ENOLCK, EOPNOTSUPP...: no flock here
        os.close(fd)
        return None
    return fd


class FolderLease:
    """The writers' lock on a folder (see the module docstring), for a writer that is not an
    `AtomicBatch` (an export writing a temp folder): ``with FolderLease(folder) as lease:``,
    then, if ``lease.alone`` (no other writer at work, in any namespace), clean what dead
    writers left, then ``lease.share()`` before writing; the lock is dropped on leaving.
    Where the filesystem has no `flock`, ``alone`` is True (the pid rule alone decides)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self._fd = _folder_lease(os.fspath(folder))
        self.alone = self._fd is None or _try_exclusive(self._fd)

    def __enter__(self) -> FolderLease:
        return self

    def share(self) -> None:
        """Hold the lock shared, as every writer does (waits only for a cleaner)."""
        if self._fd is not None:
            _lock(self._fd, fcntl.LOCK_SH)

    def __exit__(self, *_: object) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _try_exclusive(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _lock(fd: int, how: int) -> None:
    with suppress(OSError):
        fcntl.flock(fd, how)


def clean_stale_temps(folder: str | os.PathLike[str], *, dest: str | None = None) -> list[str]:
    """Remove temp files of `atomic_write` left in `folder` by processes that are gone.

    Only regular files named ``.<name>.skillpack-tmp-<pid>-<hex>`` whose pid is no longer
    alive are removed, and only while no writer holds the folder's lock (see the module
    docstring: a writer in another PID namespace has a pid that looks gone); with `dest`,
    only those of the destination file named `dest`. Return the paths removed, sorted; a
    missing folder gives [].
    """
    folder_path = os.fspath(folder)
    lease = _folder_lease(folder_path)
    if lease is None:
        return _clean(folder_path, dest)
    try:
        if not _try_exclusive(lease):
            return []  # a writer is at work in this folder: nothing here is stale for sure
        return _clean(folder_path, dest)
    finally:
        os.close(lease)


def _clean(folder_path: str, dest: str | None) -> list[str]:
    """`clean_stale_temps` once the folder's lock is held (or cannot be had): the temp files
    (of `dest` only, when given) whose process is gone."""
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
        if match is None or pid_alive(int(match.group(1))):
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


def make_folders(path: str | os.PathLike[str], mode: int = 0o777) -> list[str]:
    """``os.makedirs(path, mode, exist_ok=True)`` one level at a time, without its
    recursion: a path of 1,000 folders (a few KB in an archive) passes Python's recursion
    limit there. Each missing folder is made from the outermost in; one that is a file raises
    as `os.makedirs` would. Returns the folders it made, outermost first."""
    missing: list[str] = []
    here = os.path.abspath(os.fspath(path))
    while not os.path.isdir(here):
        missing.append(here)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    made: list[str] = []
    for folder in reversed(missing):
        try:
            os.mkdir(folder, mode)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise
        else:
            made.append(folder)
    return made


def remove_tree(path: str | os.PathLike[str], *, ignore_errors: bool = True) -> None:
    """``shutil.rmtree(path, ignore_errors=...)`` one folder at a time, without recursion
    (`make_folders`): every file and link (never followed) removed, then each folder, the
    deepest first. With `ignore_errors` False, the first failure raises (after the rest was
    tried)."""
    failed: list[OSError] = []

    def attempt(remove: Callable[[str], None], target: str) -> None:
        try:
            remove(target)
        except OSError as err:
            failed.append(err)

    root = os.fspath(path)
    if os.path.islink(root) or not os.path.isdir(root):
        attempt(os.unlink, root)
    else:
        folders: list[str] = []
        pending = [root]
        while pending:
            here = pending.pop()
            folders.append(here)
            try:
                with os.scandir(here) as scan:
                    entries = list(scan)
            except OSError as err:
                failed.append(err)
                continue
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                else:
                    attempt(os.unlink, entry.path)
        for folder in reversed(folders):
            attempt(os.rmdir, folder)
    if failed and not ignore_errors:
        raise failed[0]
