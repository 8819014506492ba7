"""What a skill leaves out: `.skillignore` at its root and the built-in ignore list.

SPEC section 1: names matched by `.skillignore` (gitignore syntax, through pathspec) or by
the built-in list (version-control folders, `__pycache__`, `*.pyc`, `.DS_Store`, editor swap
and backup files) are left out and reported with the rule that matched; `.skillignore`
itself and `.skillpack/` at the root are never carried. The walk (skillpack.build.fileset) asks
`left_out_rule` about every entry it meets.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from skillpack.build.readfile import OPEN_FLAGS

__all__ = [
    "BUILTIN_DIRS",
    "MANIFEST_DIR",
    "SKILLIGNORE",
    "SkillIgnore",
    "left_out_rule",
    "read_skillignore",
]

SKILLIGNORE = ".skillignore"
MANIFEST_DIR = ".skillpack"
BUILTIN_DIRS = (".git", ".hg", ".svn", ".bzr", "__pycache__")
_BUILTIN_NAMES = {".DS_Store": "built-in: .DS_Store"}
_BUILTIN_SUFFIXES = (
    (".pyc", "built-in: *.pyc"),
    (".swp", "built-in: *.swp (editor swap file)"),
    (".swo", "built-in: *.swo (editor swap file)"),
    ("~", "built-in: *~ (editor backup file)"),
)
# the same rules, arranged for one lookup each on the hot path of `_Walker.rule`
_BUILTIN_EXACT = {**{name: f"built-in: {name}/" for name in BUILTIN_DIRS}, **_BUILTIN_NAMES}
_BUILTIN_SUFFIX_ONLY = tuple(suffix for suffix, _ in _BUILTIN_SUFFIXES)


class SkillIgnore:
    """The root `.skillignore`, compiled one line at a time so a match names its line."""

    def __init__(self, text: str) -> None:
        import pathspec  # only when a skill has a .skillignore

        patterns: list[Any] = []
        self._lines: list[tuple[int, str]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            for pattern in pathspec.GitIgnoreSpec.from_lines([line]).patterns:
                if pattern.include is not None:
                    patterns.append(pattern)
                    self._lines.append((number, line.strip()))
        self._spec = pathspec.GitIgnoreSpec(patterns)

    def rule(self, path: str, is_dir: bool) -> str | None:
        result = self._spec.check_file(path + "/" if is_dir else path)
        if result.include is not True or result.index is None:
            return None
        number, line = self._lines[result.index]
        return f"{SKILLIGNORE}:{number}: {line}"


def read_skillignore(root: str) -> tuple[SkillIgnore | None, tuple[str, str, str] | None]:
    """The root `.skillignore` of ``root`` compiled, or None when there is none; and the
    problem (code, path, message) that stops it being read, if any. It is opened without
    following a link or blocking, and never read past 1 MiB."""
    full = os.path.join(root, SKILLIGNORE)
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        return None, None
    except OSError as err:
        return None, ("unreadable", SKILLIGNORE, f"cannot read it: {err.strerror}")
    if stat.S_ISLNK(st.st_mode):
        return None, ("symlink", SKILLIGNORE, "is a symbolic link; make it a regular file")
    if not stat.S_ISREG(st.st_mode):
        return None, None  # a folder or other thing by that name is left out, never read
    try:
        fd = os.open(full, OPEN_FLAGS)
        try:
            data = os.read(fd, 1 << 20)
        finally:
            os.close(fd)
        text = data.decode("utf-8-sig")
    except OSError as err:
        return None, ("unreadable", SKILLIGNORE, f"cannot read it: {err.strerror}")
    except UnicodeDecodeError:
        return None, ("unreadable", SKILLIGNORE, "is not valid UTF-8; save it as UTF-8")
    return SkillIgnore(text), None


def left_out_rule(rel: str, name: str, is_dir: bool, ignore: SkillIgnore | None) -> str | None:
    """Why the entry ``rel`` (last component ``name``) is left out, or None when it is walked:
    `.skillignore` and `.skillpack/` at the root, the built-in list, then `.skillignore`."""
    if "/" not in rel:
        if name == SKILLIGNORE:
            return f"{SKILLIGNORE} (never carried)"
        if name == MANIFEST_DIR:
            return f"built-in: {MANIFEST_DIR}/ (manifest of a packed skill)"
    builtin = _BUILTIN_EXACT.get(name)
    if builtin is not None:
        return builtin
    if name.endswith(_BUILTIN_SUFFIX_ONLY):
        for suffix, why in _BUILTIN_SUFFIXES:
            if name.endswith(suffix):
                return why
    if name.startswith((".#", "#")):
        if name.startswith(".#"):
            return "built-in: .#* (editor lock file)"
        if len(name) > 1 and name.endswith("#"):
            return "built-in: #*# (editor autosave file)"
    if ignore is not None:
        return ignore.rule(rel, is_dir)
    return None
