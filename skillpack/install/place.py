"""Putting one skill folder into an agent folder, and taking one out, so that no reader ever
sees half of one.

A skill is written into a temp folder beside its place, ``.NAME.skillpack-tmp-PID-HEX``:
every file checked against its record (size and BLAKE3: the bytes written are the bytes
approved), modes 0644/0755, fsync'd; then renamed into place. A skill already there is
first renamed aside (``.NAME.skillpack-old-PID-HEX``) and removed after, so the place holds
either the old skill or the new one, whole. Temp and old folders left by a process that is
gone (SIGKILL, power loss) are removed by `clean_stale` before the next write: under the
folder's lock (`skillpack._atomic.folder_lock`, which every install holds while it writes
there) every one is left over, whatever its pid says (pid 1 is always alive).

Ctrl-C or SIGTERM while the temp folder is written abandons it (removed); from the rename
into place to the skill recorded as done, they wait (`held_signals`), so that an install
stopped by a signal can say exactly which skills it placed.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from blake3 import blake3

from skillpack._atomic import fsync_folder, make_folders, pid_alive, remove_tree
from skillpack._regular import read_regular
from skillpack.errors import IntegrityError, SkillpackError, WriteError
from skillpack.formats.digest import FileRecord

__all__ = ["TEMP_RE", "clean_stale", "held_signals", "place_skill", "remove_skill", "stage_skill",
           "swap_in"]

#: The names of the temp and old folders of this module (group 1: the writer's pid).
TEMP_RE = re.compile(r"\..+\.skillpack-(?:tmp|old)-(\d+)-[0-9a-f]+\Z", re.DOTALL)


def _aside(folder: str, name: str, kind: str) -> str:
    return os.path.join(folder, f".{name}.skillpack-{kind}-{os.getpid()}-"
                                f"{secrets.token_hex(4)}")

    return True


def clean_stale(folder: str, *, alone: bool = False) -> list[str]:
    """Remove the temp and old folders of writers that are gone; return their paths.
    `alone`: the caller holds the folder's lock, so no install is at work there and every
    entry named as theirs (a folder, a file, a link: never followed) is left over."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    removed = []
    for name in names:
        match = TEMP_RE.match(name)
        path = os.path.join(folder, name)
        if match is None or (not alone and pid_alive(int(match.group(1)))):
            continue
        try:
            if not alone and not stat.S_ISDIR(os.lstat(path).st_mode):
                continue
        except OSError:
            continue
        remove_tree(path)
        removed.append(path)
    return removed


def _write_files(temp: str, root: str, files: Iterable[tuple[FileRecord, str]]) -> None:
    """Each file (its record, and its path below `root` on disk) into `temp`, checked;
    then each folder made 0755 and fsynced (known from the paths, not walked: a walk
    recurses once a folder)."""
    folders: set[str] = set()
    for record, disk in files:
        source = os.path.join(root, disk)
        try:
            data = read_regular(source)
        except OSError as err:
            raise WriteError(f"cannot read it: {err.strerror}", path=source) from None
        if len(data) != record.size or blake3(data).hexdigest() != record.blake3:
            raise IntegrityError("changed since it was verified (not the bytes approved)",
                                 path=source, hint="nothing was installed from it; try again")
        parts = record.path.split("/")
        dest = os.path.join(temp, *parts)
        make_folders(os.path.dirname(dest), 0o755)
        folders.update("/".join(parts[:depth]) for depth in range(1, len(parts)))
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, 0o755 if record.mode == "100755" else 0o644)
            os.fsync(fd)
        finally:
            os.close(fd)
    for sub in sorted(folders):
        path = os.path.join(temp, *sub.split("/"))
        os.chmod(path, 0o755)
        fsync_folder(path)


def stage_skill(folder: str, name: str, root: str,
                files: Iterable[tuple[FileRecord, str]]) -> str:
    """Write skill `name` into a temp folder beside its place in `folder` (see the module
    text) and return its path: `files` are its records with their paths below `root`. On
    any failure (a signal too) nothing of it is left."""
    temp = _aside(folder, name, "tmp")
    try:
        os.mkdir(temp, 0o700)
        _write_files(temp, root, files)
        os.chmod(temp, 0o755)
        fsync_folder(temp)
    except BaseException as err:
        if os.path.lexists(temp):
            remove_tree(temp)
        if isinstance(err, OSError) and not isinstance(err, SkillpackError):
            raise _cannot("install", name, folder, err) from None
        raise
    return temp


def swap_in(folder: str, name: str, temp: str) -> None:
    """Rename the staged `temp` (`stage_skill`) to ``folder/name``: a skill already there is
    renamed aside first and removed after, so the place holds the old skill or the new one,
    whole. Call it under `held_signals`, so that a signal cannot land between the renames;
    on a failure the place holds what it held before (`temp` is the caller's to remove)."""
    dest = os.path.join(folder, name)
    try:
        if os.path.lexists(dest):
            old = _aside(folder, name, "old")
            os.rename(dest, old)
            try:
                os.rename(temp, dest)
            except BaseException:
                os.rename(old, dest)  # put the old skill back
                raise
            remove_tree(old)
        else:
            os.rename(temp, dest)
        fsync_folder(folder)
    except OSError as err:
        if isinstance(err, SkillpackError):
            raise
        raise _cannot("install", name, folder, err) from None


def place_skill(folder: str, name: str, root: str,
                files: Iterable[tuple[FileRecord, str]]) -> None:
    """Write skill `name` into ``folder/name`` atomically (`stage_skill`, then `swap_in`):
    `files` are its records with their paths below `root`. On any failure nothing of it is
    left beside and the place holds what it held before."""
    temp = stage_skill(folder, name, root, files)
    try:
        with held_signals():
            swap_in(folder, name, temp)
    finally:
        if os.path.lexists(temp):
            remove_tree(temp)


def remove_skill(folder: str, name: str) -> None:
    """Remove ``folder/name``: renamed aside first (a reader sees it whole or not at all),
    then deleted. Call it under `held_signals`, so that no signal leaves the copy aside."""
    dest = os.path.join(folder, name)
    old = _aside(folder, name, "old")
    try:
        os.rename(dest, old)
        remove_tree(old)
        fsync_folder(folder)
    except FileNotFoundError:
        return
    except OSError as err:
        raise WriteError(f"cannot remove skill '{name}': {err.strerror}", path=dest) from None


def _cannot(doing: str, name: str, folder: str, err: OSError) -> WriteError:
    return WriteError(f"cannot {doing} skill '{name}': {err.strerror}",
                      path=os.path.join(folder, name),
                      hint="check that the folder is writable and has room")


#: The signals `held_signals` holds: Ctrl-C, and SIGTERM (what `kill` and a service
#: manager send).
_HELD = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def held_signals() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM off for the block, then let the first that arrived through
    (its handler as before the block: `KeyboardInterrupt`, the command line's `Terminated`,
    or the default action), so that a step that must not be cut in two (a skill renamed
    into place and recorded as done) is finished first. Bounded by the block: renames and
    the removal of one skill's old copy. Outside the main thread signals are not this
    process's to handle, and nothing is held."""
    arrived: list[signal.Signals] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        arrived.append(signal.Signals(signum))

    try:
        previous = [(signum, signal.signal(signum, hold)) for signum in _HELD]
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous:
            signal.signal(signum, handler)
        if arrived:
            _deliver(arrived[0], dict(previous)[arrived[0]])


def _deliver(signum: int, handler: Any) -> None:
    """Signal `signum` as its `handler` takes it: called, ignored, or (the default action,
    or a handler not set from Python) sent again to this process."""
    if callable(handler):
        handler(signum, None)
    elif handler != signal.SIG_IGN:
        signal.raise_signal(signum)
