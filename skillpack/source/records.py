"""What a walked file set holds: each file hashed and checked once, and what follows from
those bytes — the digest records (SPEC section 2) and the programs the skill runs.

A walk that read a file (`walk(read=True)`, what `digest` and `pack` run) already hashed it
through the descriptor that classified it; any other file is opened now, without following a
link or blocking, relative to its folder, and checked to be the very regular file the walk
saw (same device, inode, size and mode) before it is read (`skillpack.source.readfile`: BLAKE3
and the content check of `skillpack.content.scan` on the same bytes). A `#!` line is taken from
those same bytes, never from a second open.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field

from skillpack.content.scan import (
    Allowances,
    ContentScan,
    unused_rule_message,
)
from skillpack.content.secret_rules import Finding
from skillpack.errors import Problem, RefusedError
from skillpack.formats.digest import FileRecord, digest_records
from skillpack.formats.shebang import shebang_line
from skillpack.skillmd.programs import Program, derive_programs
from skillpack.skillmd.skill import Skill
from skillpack.source.fileset import FileSet
from skillpack.source.load import load_skill, require_valid, skill_fileset
from skillpack.source.readfile import (
    DIR_FLAGS,
    HEAD,
    MODE_BITS,
    OPEN_FLAGS,
    ROOT_FLAGS,
    Changed,
    read_carried,
)

__all__ = [
    "HashedSet",
    "digest_skill",
    "hash_files",
    "included_files",
    "programs",
    "record_files",
    "record_skill",
]


@dataclass(frozen=True, slots=True)
class HashedSet:
    """A file set hashed: each file's record, in order, and each executable's `#!` line."""

    records: list[FileRecord]
    shebangs: dict[str, str]
    #: each record's SHA-256 hex, in order, when `hash_files` was asked for them (else ())
    sha256: tuple[str, ...] = ()
    #: The findings an allowance (``PATH#RULE-ID``) let through, by path: carried, and shown
    #: to an approver.
    allowed: dict[str, tuple[Finding, ...]] = field(default_factory=dict)


def hash_files(fileset: FileSet, *, sha256: bool = False) -> HashedSet:
    """Hash every file of `fileset` and check its content; one record per file, in order,
    and the `#!` line of each executable file, from the very bytes hashed (with `sha256`,
    each file's SHA-256 from those bytes too: a file the walk read without it is read here).

    Raises `RefusedError` once, listing every file that could not be read, changed since the
    walk, or holds a private key (unless allowed).
    """
    records: list[FileRecord] = []
    shebangs: dict[str, str] = {}
    shas: list[str] = []
    problems: list[Problem] = []
    base = os.path.join(fileset.root, "")  # the root and one separator: base + relative path
    allow = Allowances.parse(fileset.allowed)
    used: dict[str, frozenset[str]] = {}
    allowed: dict[str, tuple[Finding, ...]] = {}
    already = fileset.hashed  # what the walk hashed through the descriptor it classified by
    # Each file is opened relative to its folder, kept open while the next files share it (as
    # sorted paths mostly do): the kernel then resolves one name a file, not the whole path.
    # A folder is opened without following a link (the root may be one), like the walk.
    folder, folder_fd = "\0", -1  # "\0": no folder open
    try:
        for walked in fileset.files:
            path = walked.path
            found = already.get(path)
            if found is not None and found.walked is walked and (found.sha256 or not sha256):
                used[path] = _note(path, found.content, allowed)
                if found.content.refused:
                    problems.extend(found.content.problems(path))
                else:
                    records.append(FileRecord(path, walked.mode, walked.size, found.blake3))
                    shas.append(found.sha256)
                    if found.shebang is not None:
                        shebangs[path] = found.shebang
                continue
            parent, _, name = (path if walked.fs_path is None else walked.fs_path).rpartition("/")
            try:
                if parent != folder:
                    if folder_fd >= 0:
                        os.close(folder_fd)
                    folder, folder_fd = "\0", -1
                    folder_fd = os.open(base + parent, DIR_FLAGS) if parent else os.open(
                        fileset.root, ROOT_FLAGS)
                    folder = parent
                fd = os.open(name, OPEN_FLAGS, dir_fd=folder_fd)
            except OSError as err:
                code = "symlink" if err.errno == errno.ELOOP else "unreadable"  # now a link
                problems.append(Problem("error", code, f"cannot open it ({err.strerror})", path))
                continue
            try:
                st = os.fstat(fd)
                size = st.st_size
                # the very file the walk saw: same inode and size, still regular, same mode
                if (st.st_ino != walked.ino or st.st_dev != walked.dev or size != walked.size
                        or st.st_mode & 0o170100 != MODE_BITS[walked.mode]):
                    raise Changed
                got = read_carried(fd, st, path, allow.allow(path), sha256)
            except Changed:
                problems.append(Problem("error", "changed", _CHANGED, path))
                continue
            except OSError as err:
                problems.append(
                    Problem("error", "unreadable", f"cannot read it ({err.strerror})", path)
                )
                continue
            finally:
                os.close(fd)
            used[path] = _note(path, got.content, allowed)
            if got.content.refused:
                problems.extend(got.content.problems(path))
                continue
            records.append(FileRecord(path, walked.mode, size, got.blake3))
            shas.append(got.sha256)
            if walked.mode == "100755":
                line = shebang_line(got.head[:HEAD])
                if line is not None:
                    shebangs[path] = line
    finally:
        if folder_fd >= 0:
            os.close(folder_fd)
    for entry in allow.unused(used):
        problems.append(Problem("error", "allow-unused", unused_rule_message(entry),
                                entry.rpartition("#")[0]))
    if problems:
        count = len(problems)
        raise RefusedError(
            f"the file set was refused: {count} problem{'s' if count > 1 else ''}",
            path=fileset.root,
            hint="fix every listed path, then try again",
            problems=problems,
        )
    return HashedSet(records, shebangs, tuple(shas) if sha256 else (), allowed)


def _note(path: str, content: ContentScan, allowed: dict[str, tuple[Finding, ...]]
          ) -> frozenset[str]:
    """Keep the allowed findings of `path`; return the allowed rules its check used."""
    kept = tuple(f for f in content.findings if f.allowed)
    if kept:
        allowed[path] = kept
    return content.allowed_rules


def record_files(fileset: FileSet) -> list[FileRecord]:
    """The records of `hash_files` alone."""
    return hash_files(fileset).records


_CHANGED = "changed while being read (it is not the file the walk saw); try again"


def record_skill(
    skill: Skill | str | os.PathLike[str],
) -> tuple[Skill, FileSet, list[FileRecord]]:
    """Parse (when given a path), walk and record a skill."""
    if isinstance(skill, str | os.PathLike):
        skill = load_skill(skill)
    fileset = skill_fileset(skill, read=True)
    return skill, fileset, record_files(fileset)


def digest_skill(skill: Skill | str | os.PathLike[str]) -> tuple[Skill, str]:
    """The skill (parsed, when given a path to a folder or its SKILL.md) and its digest."""
    skill, _, records = record_skill(skill)
    return skill, digest_records(records)


def included_files(skill: Skill | str | os.PathLike[str]) -> list[str]:
    """The paths `pack` would carry for `skill`, after every check pack runs: validation,
    the walk, and the content check. Raises `SkillError` or `RefusedError` when pack would
    refuse the skill."""
    if isinstance(skill, str | os.PathLike):
        skill = load_skill(skill)
    require_valid(skill)
    fileset = skill_fileset(skill, read=True)  # every refusal at once, as pack lists them
    record_files(fileset)
    return list(fileset.paths)


def programs(skill: Skill, files: FileSet | None = None) -> list[Program]:
    """Every program `skill` runs, merged by name and sorted by code point.

    `files` is the skill's file set, for the `#!` lines of its executable files (read from
    the bytes hashed, as pack reads them); when None and the skill was read from a folder,
    the folder is walked (which may raise `RefusedError`).
    """
    if files is None and skill.workdir is not None:
        files = skill_fileset(skill, read=True)
    shebangs = hash_files(files).shebangs if files is not None else {}
    return derive_programs(skill, shebangs)
