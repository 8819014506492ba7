"""Pack skills into content-addressed `.skill` archives (SPEC section 3).

`prepare_skill` runs everything that can refuse a skill — parse, the Agent Skills rules, the
walk, hashing and the content checks — before a byte is written. `pack` then writes one
archive per skill, ``<name>-<first 16 hex digits of the digest>.skill``: a STORED zip of
``<name>/.skillpack/manifest.json`` and ``<name>/<path>`` for every carried file, sorted,
with fixed timestamps and 0644/0755 modes, written to a temporary file and renamed. Each
file is streamed and hashed again while it is copied: a file that changed since it was
hashed stops the pack and leaves nothing under the final name.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, cast

from skillpack.errors import (
    ArchiveError,
    IntegrityError,
    Problem,
    RefusedError,
    SkillError,
    SkillpackError,
)
from skillpack.fileset import FileSet, WalkedFile, skill_fileset
from skillpack.hashing import OPEN_FLAGS, digest_records, record_files
from skillpack.manifest import MANIFEST_PATH, Manifest
from skillpack.skill import Skill, parse_skill_file
from skillpack.zipwrite import ZipWriter

__all__ = [
    "ARCHIVE_SUFFIX",
    "ByteComparer",
    "Member",
    "PackResult",
    "PreparedSkill",
    "archive_digest",
    "archive_name",
    "check_limits",
    "pack",
    "pack_prepared",
    "pack_skills",
    "prepare_many",
    "prepare_skill",
    "write_members",
]

ARCHIVE_SUFFIX = ".skill"
Progress = Callable[[int], None]


@dataclass(frozen=True)
class Member:
    """One zip member to write: from memory (``data``) or from a walked file on disk."""

    name: str
    size: int
    executable: bool
    blake3: str | None = None
    data: bytes | memoryview | None = None
    disk: str | None = None
    walked: WalkedFile | None = None


@dataclass(frozen=True)
class PreparedSkill:
    """A skill that passed every check, ready to be written: its manifest and its files."""

    source: str
    skill: Skill
    fileset: FileSet
    manifest: Manifest

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def digest(self) -> str:
        return self.manifest.digest

    def members(self) -> list[Member]:
        """The archive members of this skill, under ``<name>/``."""
        prefix = f"{self.name}/"
        manifest = self.manifest.to_bytes()
        out = [Member(prefix + MANIFEST_PATH, len(manifest), False, data=manifest)]
        walked = {w.path: w for w in self.fileset.files}
        for record in self.manifest.files:
            w = walked[record.path]
            out.append(Member(prefix + record.path, record.size, record.mode == "100755",
                              record.blake3, disk=os.path.join(self.fileset.root, w.disk_path),
                              walked=w))
        return out


@dataclass(frozen=True)
class PackResult:
    """What `pack_skills` did for one skill: the archive path and whether it was written."""

    name: str
    digest: str
    path: Path
    written: bool
    source: str


def archive_name(name: str, digest: str) -> str:
    """``<name>-<first 16 hex digits of the digest>.skill``."""
    return f"{name}-{digest.removeprefix('blake3:')[:16]}{ARCHIVE_SUFFIX}"


def prepare_skill(folder: str | os.PathLike[str]) -> PreparedSkill:
    """Parse, validate, walk and hash the skill in ``folder``; refuse it with every problem.

    Raises `SkillError` when `check` finds an error in it (warnings pass), `RefusedError`
    when its file set is refused.
    """
    from skillpack.program import programs
    from skillpack.validate import validate_skill

    skill = parse_skill_file(Path(folder) / "SKILL.md")
    errors = [p for p in validate_skill(skill) if p.severity == "error"]
    if errors:
        raise SkillError(
            f"skill '{skill.name or Path(folder).name}' is invalid and cannot be packed: "
            f"{errors[0].message}", path=str(folder), problems=errors,
            hint="fix what `skillpack check` reports, then pack again")
    fileset = skill_fileset(skill, read=True)
    records = record_files(fileset)
    manifest = Manifest(
        name=skill.name,
        description=skill.description,
        digest=digest_records(records),
        files=tuple(records),
        programs=tuple(p.to_dict() for p in programs(skill, fileset)),
        tools=tuple(t.to_dict() for t in skill.tools),
        allowances=tuple(fileset.allowed),
    )
    prepared = PreparedSkill(str(folder), skill, fileset, manifest)
    check_limits(prepared.members(), what=f"skill '{skill.name}'")
    return prepared


def prepare_many(paths: Iterable[str | os.PathLike[str]]) -> list[PreparedSkill]:
    """Prepare every skill found under ``paths``; refuse them all at once if any is bad."""
    from skillpack.discover import find_skills

    prepared: list[PreparedSkill] = []
    failures: list[SkillpackError] = []
    for path in paths:
        folders = find_skills(Path(path))
        if not folders:
            raise SkillpackError("no SKILL.md found here", path=str(path),
                                 hint="give a skill folder or a folder holding skills")
        for folder in folders:
            try:
                prepared.append(prepare_skill(folder))
            except (SkillError, RefusedError, ArchiveError) as err:
                failures.append(err)
    if len(failures) == 1:
        raise failures[0]
    if failures:
        problems = [p for err in failures for p in (err.problems or _as_problem(err))]
        raise SkillpackError(
            f"{len(failures)} skills cannot be packed: "
            + "; ".join(str(err.path or err.message) for err in failures),
            problems=problems)
    return prepared


def _as_problem(err: SkillpackError) -> tuple[Problem, ...]:
    return (Problem("error", "refused", err.message, err.path, err.line),)


def check_limits(members: Sequence[Member], *, what: str) -> None:
    """Refuse, before anything is written, members that no archive without Zip64 can hold."""
    from skillpack.zipwrite import MAX_MEMBERS, MAX_SIZE

    if len(members) >= MAX_MEMBERS:
        raise ArchiveError(
            f"{what} would need {len(members):,} zip members; an archive holds at most "
            f"{MAX_MEMBERS - 1:,} members", hint="split the files into several skills")
    total = 22 + sum(76 + 2 * len(m.name.encode("utf-8")) + m.size for m in members)
    if total >= MAX_SIZE:
        raise ArchiveError(
            f"{what} would be {total:,} bytes; an archive is at most {MAX_SIZE - 1:,} bytes",
            hint="move large data out of the skill, or split it into several skills")


def write_members(writer: ZipWriter, members: Sequence[Member],
                  progress: Progress | None = None) -> None:
    """Write ``members`` sorted by the UTF-8 bytes of their names, streaming disk files."""
    check_limits(members, what="the archive")
    for member in sorted(members, key=lambda m: m.name.encode("utf-8")):
        if member.data is not None:
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
                      expect_blake3=member.blake3)
    finally:
        os.close(fd)


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


def _existing_is_current(path: Path, item: PreparedSkill) -> bool:
    """True when ``path`` already holds, byte for byte, the archive ``item`` would write.

    The archive is written into a `ByteComparer` over the existing file: each file of the
    skill is streamed (and checked against its recorded BLAKE3) and compared chunk by chunk,
    so memory stays flat whatever the size. A file that changed since it was hashed raises.
    """
    try:
        fd = os.open(path, OPEN_FLAGS)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return False
        comparer = ByteComparer(lambda offset, size: os.pread(fd, size, offset), st.st_size)
        with ZipWriter(cast(BinaryIO, comparer)) as writer:
            write_members(writer, item.members())
        return comparer.same
    except (OSError, ByteComparer.Differs):
        return False
    finally:
        os.close(fd)


def pack_skills(paths: Iterable[str | os.PathLike[str]], out_dir: str | os.PathLike[str], *,
                progress: Progress | None = None) -> list[PackResult]:
    """Pack every skill under ``paths`` into ``out_dir``; see `pack`."""
    return pack_prepared(prepare_many(paths), out_dir, progress=progress)


def pack_prepared(prepared: Sequence[PreparedSkill], out_dir: str | os.PathLike[str], *,
                  progress: Progress | None = None) -> list[PackResult]:
    """Write an archive for each prepared skill into ``out_dir`` (created if missing)."""
    from skillpack.atomic import AtomicBatch

    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        from skillpack.errors import WriteError

        raise WriteError(f"cannot create the output folder: {err.strerror}", path=str(out),
                         hint="choose a folder you can write to") from None
    results: list[PackResult] = []
    # all or nothing: every archive is written and fsync'd under a temp name before any is
    # renamed onto its final name
    with AtomicBatch() as batch:
        for item in prepared:
            dest = out / archive_name(item.name, item.digest)
            if dest.is_file() and _existing_is_current(dest, item):
                results.append(PackResult(item.name, item.digest, dest, False, item.source))
                if progress is not None:
                    progress(sum(f.size for f in item.manifest.files))
                continue
            with batch.write(dest) as handle, ZipWriter(handle) as writer:
                write_members(writer, item.members(), progress)
            results.append(PackResult(item.name, item.digest, dest, True, item.source))
    return results


def pack(paths: Iterable[str | os.PathLike[str]] | str | os.PathLike[str],
         out_dir: str | os.PathLike[str]) -> list[Path]:
    """Pack each skill found under ``paths`` into ``out_dir``; return the archive paths.

    Every skill is checked first; if any is invalid or refused, nothing is written (and if
    writing one fails, the archives this call created are removed). An archive that already
    holds, byte for byte, what would be written is left as it is.
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    return [r.path for r in pack_skills(paths, out_dir)]


def archive_digest(path: str | os.PathLike[str]) -> str:
    """The digest of a packed `.skill` archive, after verifying it member by member."""
    from skillpack.verify import verify_file

    report = verify_file(path)
    if len(report.skills) != 1:
        raise SkillpackError("this is a bundle of several skills, not one archive",
                             path=os.fspath(path), hint="use `skillpack digest` on a .skill")
    return report.skills[0].digest

