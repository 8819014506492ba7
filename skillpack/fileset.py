"""The file set of a skill (SPEC section 1): what it carries, what it leaves out, and why.

The walk (`skillpack._walker`) is iterative (a tree 1,000 folders deep is fine) and never
follows a symlink: each entry is classified from its directory entry and ``lstat`` (or, in a
walk that reads, ``fstat`` of the descriptor it was opened by without following a link or
blocking), so a fifo cannot block it and a symlink loop cannot trap it. Every problem of the
skill is collected, then raised once as a `RefusedError`. Nothing is left out silently:
ignored names come back in `FileSet.left_out` with the rule that matched.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillpack.errors import RefusedError, SkillpackError
from skillpack.ignore import (
    BUILTIN_DIRS,
    MANIFEST_DIR,
    SKILLIGNORE,
)

if TYPE_CHECKING:
    from skillpack.skill import Skill

__all__ = [
    "BUILTIN_DIRS",
    "FileSet",
    "LeftOut",
    "WalkedFile",
    "display_path",
    "included_files",
    "load_skill",
    "require_valid",
    "skill_fileset",
    "walk",
]

@dataclass(frozen=True)
class LeftOut:
    """A path the walk saw and did not carry; a folder's path ends with ``/``."""

    path: str
    rule: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "rule": self.rule}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LeftOut:
        return cls(path=str(data["path"]), rule=str(data["rule"]))


@dataclass(frozen=True, slots=True)  # slots: made once a file, 10,000 times in a big tree
class WalkedFile:
    """A carried regular file, with the ``lstat`` facts the reader checks again on open.

    ``fs_path`` is the name on disk when it differs from ``path`` (a name that is not NFC).
    """

    path: str
    size: int
    mode: str
    dev: int
    ino: int
    fs_path: str | None = None

    @property
    def disk_path(self) -> str:
        """The relative path to open, as the filesystem spells it."""
        return self.fs_path if self.fs_path is not None else self.path


@dataclass(frozen=True)
class FileSet:
    """What a skill carries: ``files`` sorted by UTF-8 bytes of their path, and what was left out.

    ``allowed`` lists the secret allowances that named a carried file.
    """

    root: str
    files: tuple[WalkedFile, ...]
    left_out: tuple[LeftOut, ...]
    allowed: tuple[str, ...] = ()
    #: What a walk with ``read=True`` learnt of a small file through the descriptor that it
    #: classified the file by: path -> (that `WalkedFile`, BLAKE3 hex, holds a private key,
    #: the bytes hashed when the walk kept them, else None). `hashing.record_files` uses it
    #: instead of opening the file again, and `pack` writes the kept bytes.
    read: Mapping[str, tuple[WalkedFile, str, bool, bytes | None]] = field(
        default_factory=dict, compare=False, repr=False)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "files": [{"path": f.path, "size": f.size, "mode": f.mode} for f in self.files],
            "left_out": [item.to_dict() for item in self.left_out],
            "allowed": list(self.allowed),
        }


def display_path(path: str) -> str:
    """`path` made safe to print on one line: undecodable bytes and control characters escaped."""
    if path.isprintable():
        return path
    out = []
    for char in path:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 or 0x7F <= code < 0xA0:
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(char, f"\\x{code:02x}"))
        else:
            out.append(char)
    return "".join(out)


def walk(
    root: str | os.PathLike[str],
    includes: Sequence[str] | None = None,
    *,
    allow: Sequence[str] = (),
    read: bool = False,
    keep: int = 0,
) -> FileSet:
    """The file set of the skill folder `root` (SPEC section 1).

    `includes` is the frontmatter's declared entries (None: carry every file). `allow` lists
    paths let past the secret checks. Raises `RefusedError` listing every problem at once.
    With `read`, each small regular file found by listing a folder is opened as it is found,
    described by ``fstat`` instead of ``lstat``, and hashed on the spot (`FileSet.read`):
    what `digest` and `pack` do, saving a second look at every file. Up to `keep` bytes of
    those files (each of at most 1 MiB) are kept in `FileSet.read` for `pack` to write.
    """
    root_str = os.fspath(root)
    if not os.path.isdir(root_str):
        raise SkillpackError(
            "not a folder", path=root_str, hint="give the path of a skill folder"
        )
    from skillpack._walker import Walker, sort_key

    walker = Walker(root_str, read, keep)
    walker.load_skillignore()
    if includes is None:
        walker.walk_tree("")
    else:
        for name in (SKILLIGNORE, MANIFEST_DIR):
            full = os.path.join(root_str, name)
            if os.path.lexists(full):
                is_dir = os.path.isdir(full) and not os.path.islink(full)
                why = walker.rule(name, name, is_dir)
                assert why is not None
                walker.leave_out(name + "/" if is_dir else name, why)
        seen: set[str] = set()
        for entry in ("SKILL.md", *includes):
            entry = entry.strip()
            if entry not in seen:
                seen.add(entry)
                walker.walk_include(entry)
    walker.check_names()
    allowed = walker.check_secrets(allow)
    if walker.problems:
        problems = sorted(walker.problems.values(), key=lambda p: (sort_key(p.file or ""), p.code))
        count = len(problems)
        raise RefusedError(
            f"the file set was refused: {count} problem{'s' if count > 1 else ''}",
            path=root_str,
            hint="fix every listed path, then try again",
            problems=problems,
        )
    paths = list(walker.files)
    if "".join(paths).isascii():  # ASCII strings sort as their UTF-8 bytes do
        paths.sort()
    else:
        paths.sort(key=sort_key)
    files = tuple(map(walker.files.__getitem__, paths))
    left_out = tuple(sorted(walker.left_out.values(), key=lambda x: sort_key(x.path)))
    return FileSet(root=root_str, files=files, left_out=left_out, allowed=allowed,
                   read=walker.read)


def load_skill(path: str | os.PathLike[str]) -> Skill:
    """Parse the skill at `path`: a skill folder or its SKILL.md."""
    from skillpack.skill import parse_skill_file

    text = os.fspath(path)
    skill_md = os.path.join(text, "SKILL.md") if os.path.isdir(text) else text
    if not os.path.isfile(skill_md):
        what = "no such file or folder" if not os.path.lexists(text) else "no SKILL.md here"
        raise SkillpackError(what, path=text, hint="give a skill folder or its SKILL.md")
    return parse_skill_file(skill_md)


def skill_fileset(
    skill: Skill | str | os.PathLike[str], *, read: bool = False, keep: int = 0,
) -> FileSet:
    """The file set of a parsed skill (or of the skill at a path), walked with its includes
    and secret allowances. Names only (unless `read`, see `walk`): the content check is
    `hashing.record_files`."""
    if isinstance(skill, str | os.PathLike):
        skill = load_skill(skill)
    if skill.workdir is None:
        raise SkillpackError(
            f"skill {skill.name!r} was not read from a folder, so it has no file set",
            hint="parse it with parse_skill_file",
        )
    return walk(skill.workdir, skill.include_list, allow=skill.secret_allowances, read=read,
                keep=keep)


def require_valid(skill: Skill) -> None:
    """Raise `SkillError` with every error `skillpack check` finds in `skill`, as pack does."""
    from skillpack.errors import SkillError
    from skillpack.validate import validate_skill

    errors = [p for p in validate_skill(skill) if p.severity == "error"]
    if errors:
        raise SkillError(
            f"skill '{skill.name}' is invalid and cannot be packed: {errors[0].message}",
            path=skill.workdir, problems=errors,
            hint="fix what `skillpack check` reports, then try again",
        )


def included_files(skill: Skill | str | os.PathLike[str]) -> list[str]:
    """The paths `pack` would carry for `skill`, after every check pack runs: validation,
    the walk, and the content check. Raises `SkillError` or `RefusedError` when pack would
    refuse the skill."""
    from skillpack.hashing import record_files

    if isinstance(skill, str | os.PathLike):
        skill = load_skill(skill)
    require_valid(skill)
    fileset = skill_fileset(skill)
    record_files(fileset)
    return list(fileset.paths)
