"""The file set of a skill (SPEC section 1): what it carries, what it leaves out, and why.

The walk is iterative (a tree 1,000 folders deep is fine), never follows a symlink and never
opens anything but `.skillignore`: each entry is classified from ``lstat`` facts alone, so a
fifo cannot block it and a symlink loop cannot trap it. Every problem of the skill is
collected, then raised once as a `RefusedError`. Nothing is left out silently: ignored names
come back in `FileSet.left_out` with the rule that matched.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillpack import secrets
from skillpack.errors import Problem, RefusedError, SkillpackError
from skillpack.ignore import (
    BUILTIN_DIRS,
    MANIFEST_DIR,
    SKILLIGNORE,
    SkillIgnore,
    left_out_rule,
    read_skillignore,
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

_LEAVE_OUT_HINT = "or leave it out with a line in .skillignore"


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


@dataclass(frozen=True)
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


def _sort_key(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


def _fold(name: str) -> str:
    if name.isascii():  # the common case: NFC leaves ASCII alone, casefold is lower there
        return name.lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


class _Walker:
    def __init__(self, root: str) -> None:
        self.root = root
        self.files: dict[str, WalkedFile] = {}
        self.left_out: dict[str, LeftOut] = {}
        self.problems: dict[tuple[str, str], Problem] = {}
        self.ignore: SkillIgnore | None = None
        # parent (disk path) -> folded child name -> child names as on disk
        self._children: dict[str, dict[str, set[str]]] = {}
        self._seen_dirs: set[str] = {""}

    # -- bookkeeping -------------------------------------------------------------------------

    def problem(self, code: str, path: str, message: str) -> None:
        shown = display_path(path)
        self.problems.setdefault((code, shown), Problem("error", code, message, file=shown))

    def leave_out(self, path: str, rule: str) -> None:
        self.left_out.setdefault(path, LeftOut(display_path(path), rule))

    def _full(self, rel: str) -> str:
        return os.path.join(self.root, rel) if rel else self.root

    # -- rules -------------------------------------------------------------------------------

    def load_skillignore(self) -> None:
        self.ignore, problem = read_skillignore(self.root)
        if problem is not None:
            self.problem(*problem)

    def rule(self, rel: str, name: str, is_dir: bool) -> str | None:
        """Why `rel` is left out, or None when it is walked."""
        return left_out_rule(rel, name, is_dir, self.ignore)

    # -- entries -----------------------------------------------------------------------------

    def _check_name(self, rel: str, name: str) -> None:
        if name.isascii() and name.isprintable() and "\\" not in name:
            return  # the common case, and a fast one: nothing below can apply
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            self.problem(
                "unportable-name", rel, "the name is not valid UTF-8; rename it with UTF-8 text"
            )
            return
        if not name.isprintable() and any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in name):
            self.problem(
                "unportable-name", rel, "the name holds a control character; rename it"
            )
        if "\\" in name:
            self.problem(
                "unportable-name", rel, "the name holds a backslash, a folder separator on "
                "Windows; rename it"
            )

    def _register(self, rel: str) -> None:
        """Check the name of `rel` and of each parent not seen yet; index them for collisions."""
        while rel not in self._seen_dirs:
            parent, _, name = rel.rpartition("/")
            self._check_name(rel, name)
            self._children.setdefault(parent, {}).setdefault(_fold(name), set()).add(name)
            self._seen_dirs.add(rel)
            rel = parent

    def add_file(self, rel: str, st: os.stat_result) -> None:
        self._register(rel)
        path = rel if rel.isascii() else unicodedata.normalize("NFC", rel)
        mode = "100755" if st.st_mode & stat.S_IXUSR else "100644"
        self.files[path] = WalkedFile(
            path, st.st_size, mode, st.st_dev, st.st_ino, None if path == rel else rel
        )

    def other(self, rel: str, st_mode: int) -> None:
        """A walked entry that is neither a regular file nor a folder."""
        if stat.S_ISLNK(st_mode):
            self.problem(
                "symlink", rel, "is a symbolic link; skillpack never carries or follows links. "
                f"Replace it with a copy of its target, {_LEAVE_OUT_HINT}"
            )
            return
        kind = (
            "a fifo (named pipe)" if stat.S_ISFIFO(st_mode)
            else "a socket" if stat.S_ISSOCK(st_mode)
            else "a character device" if stat.S_ISCHR(st_mode)
            else "a block device" if stat.S_ISBLK(st_mode)
            else "not a regular file or folder"
        )
        self.problem(
            "special-file", rel, f"is {kind}; a skill carries regular files only. "
            f"Remove it, {_LEAVE_OUT_HINT}"
        )

    def walk_tree(self, start: str) -> None:
        """Every file under folder `start` ('' for the root), without recursion."""
        stack = [start]
        while stack:
            rel = stack.pop()
            try:
                with os.scandir(self._full(rel)) as listing:
                    entries = list(listing)
            except OSError as err:
                self.problem(
                    "unreadable", rel or ".", f"cannot list this folder ({err.strerror}); "
                    f"make it readable, {_LEAVE_OUT_HINT}"
                )
                continue
            rule, add_file, is_reg = self.rule, self.add_file, stat.S_ISREG
            for entry in entries:
                name = entry.name
                child = f"{rel}/{name}" if rel else name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)  # False for a symlink
                    why = rule(child, name, is_dir)
                    if why is not None:
                        self.leave_out(child + "/" if is_dir else child, why)
                    elif is_dir:
                        stack.append(child)
                    else:
                        st = entry.stat(follow_symlinks=False)
                        if is_reg(st.st_mode):
                            add_file(child, st)
                        else:
                            self.other(child, st.st_mode)
                except OSError as err:
                    self.problem("unreadable", child, f"cannot stat it ({err.strerror})")

    def walk_include(self, entry: str) -> None:
        """One declared include: a file, or every file under a folder."""
        shown = entry
        if not entry:
            self.problem("include-missing", shown, "an include entry is empty; remove it")
            return
        if entry.startswith("~"):
            self.problem(
                "include-home", shown, "an include may not start with '~'; name a path "
                "inside the skill folder"
            )
            return
        if entry.startswith(("/", "\\")) or (len(entry) > 1 and entry[1] == ":"):
            self.problem(
                "include-absolute", shown, "an include must be a path relative to the skill "
                "folder, not an absolute path"
            )
            return
        if "\\" in entry:
            self.problem("unportable-name", shown, "write include paths with '/', not '\\'")
            return
        segments = entry.split("/")
        if ".." in segments:
            self.problem(
                "include-dotdot", shown, "an include may not contain a '..' segment; a skill "
                "carries only what is inside its folder"
            )
            return
        parts = [s for s in segments if s not in ("", ".")]
        rel = ""
        for index, name in enumerate(parts):
            rel = f"{rel}/{name}" if rel else name
            last = index == len(parts) - 1
            try:
                st = os.lstat(self._full(rel))
            except (FileNotFoundError, NotADirectoryError):
                self.problem(
                    "include-missing", shown, f"the declared include {entry!r} does not exist "
                    "in the skill folder; fix the path or remove it from includes"
                )
                return
            except OSError as err:
                self.problem("unreadable", rel, f"cannot stat it ({err.strerror})")
                return
            is_dir = stat.S_ISDIR(st.st_mode)
            why = self.rule(rel, name, is_dir)
            if why is not None:
                self.leave_out(rel + "/" if is_dir else rel, why)
                return
            if is_dir:
                if last:
                    self.walk_tree(rel)
                continue
            if last and stat.S_ISREG(st.st_mode):
                self.add_file(rel, st)
            elif stat.S_ISLNK(st.st_mode) or last:
                self.other(rel, st.st_mode)
            else:
                self.problem(
                    "include-missing", shown, f"{rel!r} is not a folder, so the declared "
                    f"include {entry!r} does not exist; fix the path"
                )
            return
        if not parts:
            self.walk_tree("")

    # -- whole-set checks --------------------------------------------------------------------

    def check_collisions(self) -> None:
        for parent, folded in self._children.items():
            for names in folded.values():
                if len(names) < 2:
                    continue
                a, b = sorted(names, key=_sort_key)[:2]
                same_nfc = unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b)
                how = "after Unicode NFC normalisation" if same_nfc else "after case folding"
                path_a = f"{parent}/{a}" if parent else a
                path_b = f"{parent}/{b}" if parent else b
                self.problem(
                    "name-collision", path_b, f"names the same path as {display_path(path_a)!r} "
                    f"{how}; they would overwrite each other on macOS or Windows. Rename one"
                )

    def check_secrets(self, allow: Sequence[str]) -> tuple[str, ...]:
        allowed: set[str] = set()
        for raw in allow:
            path = unicodedata.normalize("NFC", raw.strip().removeprefix("./"))
            if path in self.files:
                allowed.add(path)
            else:
                self.problem(
                    "allow-unused", path, "skillpack-allow-secrets names a path the skill does "
                    "not carry; fix the path or remove it from the allowance"
                )
        for path in self.files:
            if path in allowed:
                continue
            reason = secrets.secret_name_reason(path)
            if reason is not None:
                self.problem(
                    "secret", path, f"{reason}; skillpack refuses to carry secrets. Remove it, "
                    f"{_LEAVE_OUT_HINT}; if it holds no secret, allow it in the frontmatter "
                    f"with metadata: {{skillpack-allow-secrets: \"{path}\"}}"
                )
        return tuple(sorted(allowed, key=_sort_key))


def walk(
    root: str | os.PathLike[str],
    includes: Sequence[str] | None = None,
    *,
    allow: Sequence[str] = (),
) -> FileSet:
    """The file set of the skill folder `root` (SPEC section 1).

    `includes` is the frontmatter's declared entries (None: carry every file). `allow` lists
    paths let past the secret checks. Raises `RefusedError` listing every problem at once.
    """
    root_str = os.fspath(root)
    if not os.path.isdir(root_str):
        raise SkillpackError(
            "not a folder", path=root_str, hint="give the path of a skill folder"
        )
    walker = _Walker(root_str)
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
    walker.check_collisions()
    allowed = walker.check_secrets(allow)
    if walker.problems:
        problems = sorted(walker.problems.values(), key=lambda p: (_sort_key(p.file or ""), p.code))
        count = len(problems)
        raise RefusedError(
            f"the file set was refused: {count} problem{'s' if count > 1 else ''}",
            path=root_str,
            hint="fix every listed path, then try again",
            problems=problems,
        )
    files = tuple(sorted(walker.files.values(), key=lambda f: _sort_key(f.path)))
    left_out = tuple(sorted(walker.left_out.values(), key=lambda x: _sort_key(x.path)))
    return FileSet(root=root_str, files=files, left_out=left_out, allowed=allowed)


def load_skill(path: str | os.PathLike[str]) -> Skill:
    """Parse the skill at `path`: a skill folder or its SKILL.md."""
    from skillpack.skill import parse_skill_file

    text = os.fspath(path)
    skill_md = os.path.join(text, "SKILL.md") if os.path.isdir(text) else text
    if not os.path.isfile(skill_md):
        what = "no such file or folder" if not os.path.lexists(text) else "no SKILL.md here"
        raise SkillpackError(what, path=text, hint="give a skill folder or its SKILL.md")
    return parse_skill_file(skill_md)


def skill_fileset(skill: Skill | str | os.PathLike[str]) -> FileSet:
    """The file set of a parsed skill (or of the skill at a path), walked with its includes
    and secret allowances. Names only: the content check is `digest.record_files`."""
    if isinstance(skill, str | os.PathLike):
        skill = load_skill(skill)
    if skill.workdir is None:
        raise SkillpackError(
            f"skill {skill.name!r} was not read from a folder, so it has no file set",
            hint="parse it with parse_skill_file",
        )
    return walk(skill.workdir, skill.include_list, allow=skill.secret_allowances)


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
