"""Writing archive members into a `ZipWriter`: from memory, or streamed from a walked file on
disk (opened again without following a link or blocking, checked to be the file the walk
saw, and hashed again while it is copied); and telling whether an existing archive already
holds, byte for byte, what would be written (`ByteComparer`), without writing it.

`skillpack.packing.pack` (pack) and `skillpack.packing.bundle` write through these.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from skillpack.errors import ArchiveError, IntegrityError, Problem, RefusedError
from skillpack.source.fileset import WalkedFile
from skillpack.source.readfile import OPEN_FLAGS
from skillpack.storedzip.source import FileSpan
from skillpack.storedzip.writer import MAX_MEMBERS, ByteComparer, ZipWriter, oversize

__all__ = [
    "Member",
    "Progress",
    "check_limits",
    "existing_is_current",
    "write_members",
]

#: Called with the size of each member once it is written.
Progress = Callable[[int], None]


@dataclass(frozen=True, slots=True)
class Member:
    """One zip member to write: from memory (``data``) or from a walked file on disk."""

    name: str
    size: int
    executable: bool
    blake3: str | None = None
    data: bytes | memoryview | FileSpan | None = None
    disk: str | None = None
    walked: WalkedFile | None = None
    crc32: int | None = None  # of a disk member's bytes as the walk read them, if known


def check_limits(members: Sequence[Member], *, what: str, path: str | None = None) -> None:
    """Refuse, before anything is written, members that no archive without Zip64 can hold
    (`path`: the skill folder they are of, which the refusal names)."""
    if len(members) >= MAX_MEMBERS:
        message = (f"{what} would need {len(members):,} zip members; an archive holds at "
                   f"most {MAX_MEMBERS - 1:,} members")
        raise ArchiveError(message, path=path, hint="split the files into several skills",
                           problems=[Problem("error", "archive-limit", message, path)])
    too_large = oversize(what, ((m.name, m.size) for m in members))
    if too_large is not None:
        raise ArchiveError(too_large, path=path,
                           hint="move large data out of the skill, or split it into several skills",
                           problems=[Problem("error", "archive-limit", too_large, path)])


def write_members(writer: ZipWriter, members: Sequence[Member],
                  progress: Progress | None = None) -> None:
    """Write ``members`` sorted by the UTF-8 bytes of their names, streaming disk files."""
    check_limits(members, what="the archive")
    ordered = sorted(members, key=lambda m: m.name.encode("utf-8"))
    for member in ordered:
        if isinstance(member.data, FileSpan):  # a large member of an archive file
            writer.add_chunks(member.name, member.size, member.data.chunks(),
                              executable=member.executable, expect_blake3=member.blake3)
        elif member.data is not None:
            writer.add_bytes(member.name, bytes(member.data), executable=member.executable)
        else:
            assert member.disk is not None
            _copy_disk_member(writer, member)
        if progress is not None:
            progress(member.size)


def _copy_disk_member(writer: ZipWriter, member: Member) -> None:
    assert member.disk is not None
    try:
        fd = os.open(member.disk, OPEN_FLAGS)
    except OSError as err:
        why = "it became a symlink" if err.errno == errno.ELOOP else err.strerror
        raise RefusedError(f"cannot open {member.name} to pack it: {why}", path=member.disk,
                           hint="stop whatever is changing the skill, then pack again") from None
    try:
        st = os.fstat(fd)
        walked = member.walked
        if not stat.S_ISREG(st.st_mode) or (
            walked is not None and (st.st_dev, st.st_ino) != (walked.dev, walked.ino)
        ):
            raise IntegrityError(f"{member.name} was replaced while being packed",
                                 path=member.disk,
                                 hint="stop whatever is changing the skill, then pack again")
        writer.add_fd(member.name, fd, member.size, executable=member.executable,
                      expect_blake3=member.blake3, expect_crc=member.crc32)
    finally:
        os.close(fd)


def existing_is_current(path: str | os.PathLike[str], members: Sequence[Member]) -> bool:
    """True when ``path`` already holds, byte for byte, the archive of ``members``, as a file
    `pack` could have written: a regular file of one link, owned by this user, mode 0644.

    The archive is written into a `ByteComparer` over the existing file: each file of the
    skill is streamed (and checked against its recorded BLAKE3) and compared chunk by chunk,
    so memory stays flat whatever the size. A file that changed since it was hashed raises.
    A file with the right bytes but another owner, a writable or executable mode, or another
    name linked to it was planted (its owner could change it after it is trusted): it is not
    current, and is replaced.
    """
    try:
        fd = os.open(path, OPEN_FLAGS)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not (stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid()
                and stat.S_IMODE(st.st_mode) == 0o644 and st.st_nlink == 1):
            return False  # not as an atomic write by this user leaves it
        comparer = ByteComparer(lambda offset, size: os.pread(fd, size, offset), st.st_size)
        sink: BinaryIO = comparer  # type: ignore[assignment]  # writes, tells, seeks
        with ZipWriter(sink) as writer:
            write_members(writer, members)
        return comparer.same
    except (OSError, ByteComparer.Differs):
        return False
    finally:
        os.close(fd)
