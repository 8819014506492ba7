"""What a skill leaves out: `.skillignore` at its root and the built-in ignore list.

SPEC section 1: names matched by `.skillignore` (gitignore syntax, through pathspec) or by
the built-in list (version-control folders, `__pycache__`, `*.pyc`, `.DS_Store`, editor swap
and backup files) are left out and reported with the rule that matched; `.skillignore`
itself and `.skillpack/` at the root are never carried. The walk (skillpack.source.fileset) asks
`left_out_rule` about every entry it meets.
"""

from __future__ import annotations

import os
import stat
from typing import Any

import pathspec

__all__ = [
    "BUILTIN_DIRS",
    "MANIFEST_DIR",
    "MAX_SKILLIGNORE",
    "SKILLIGNORE",
    "SkillIgnore",
    "exclude_problem",
    "left_out_rule",
    "pattern_problem",
    "read_skillignore",
]

#: How .skillignore is opened: as every carried file is (`skillpack.source.readfile`'s
#: OPEN_FLAGS), without importing the reader (the command line's options read patterns here).
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

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


#: The largest `.skillignore` read; a larger one is refused, never read in part.
MAX_SKILLIGNORE = 1 << 20
#: The longest pattern (PATH_MAX): a longer line cannot name a path.
MAX_PATTERN = 4096
#: Wildcards a pattern may hold: `*` runs in one segment, in the whole pattern, and `**`
#: segments besides a leading `**/` (see `pattern_problem`).
MAX_STARS_PER_SEGMENT, MAX_STARS, MAX_DOUBLE_STARS = 2, 3, 1


def pattern_problem(line: str) -> str | None:
    """Why the `.skillignore` line `line` is refused, or None.

    pathspec compiles a pattern to a backtracking regular expression: each `*` run becomes
    `[^/]*` and each `**` segment `(?:/.+)?`, and k of them that can stretch over the same
    text cost up to n^k/k! steps on a name or path of n characters (`a*a*a*a*a*a*a*a*a*b`
    hangs on a 60-character name). Bounding k bounds the work: at most 2 `*` runs in one
    segment (n is then a name, at most 255 bytes), at most 3 in the pattern, and at most one
    `**` segment besides a leading `**/` (which means what a pattern without `/` means). A
    `*` escaped as `\\*` is literal and not counted."""
    if len(line) > MAX_PATTERN:
        return f"the pattern is {len(line):,} characters long, over {MAX_PATTERN:,}"
    body = line.strip().removeprefix("!").lstrip("/")
    if "*" not in body:
        return None
    plain = []
    at = 0
    while at < len(body):  # drop escaped characters: `\*` is a literal star
        if body[at] == "\\":
            at += 2
            continue
        plain.append(body[at])
        at += 1
    segments = "".join(plain).split("/")
    if segments and segments[0] == "**":
        segments = segments[1:]
    runs = [_star_runs(segment) for segment in segments]
    doubles = sum(1 for segment in segments if segment == "**")
    if max(runs, default=0) > MAX_STARS_PER_SEGMENT:
        return (f"a segment holds {max(runs)} '*' wildcards, over {MAX_STARS_PER_SEGMENT}: "
                "matching it could take exponential time")
    if sum(runs) > MAX_STARS:
        return (f"the pattern holds {sum(runs)} '*' wildcards, over {MAX_STARS}: matching it "
                "could take exponential time")
    if doubles > MAX_DOUBLE_STARS:
        return (f"the pattern holds {doubles} '**' segments after its start, over "
                f"{MAX_DOUBLE_STARS}: matching it could take exponential time")
    return None


def exclude_problem(pattern: str) -> str | None:
    """Why the ``--exclude`` glob `pattern` is refused (empty, or one whose matching could
    take exponential time: `pattern_problem`), or None."""
    if not pattern.strip():
        return "an empty pattern matches nothing"
    return pattern_problem(pattern)


def _star_runs(segment: str) -> int:
    """How many runs of `*` a segment holds (`**` is one)."""
    runs, previous = 0, ""
    for char in segment:
        if char == "*" and previous != "*":
            runs += 1
        previous = char
    return runs


class SkillIgnore:
    """The root `.skillignore`, compiled one line at a time so a match names its line.

    `problems` lists each line refused by `pattern_problem` (code, path, message, line); such a
    line is not compiled, and the walk refuses the skill."""

    def __init__(self, text: str) -> None:
        patterns: list[Any] = []
        self._lines: list[tuple[int, str]] = []
        self.problems: list[tuple[str, str, str, int | None]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            why = pattern_problem(line)
            if why is not None:
                shown = line.strip() if len(line) <= 60 else line.strip()[:57] + "..."
                self.problems.append((
                    "skillignore-pattern", SKILLIGNORE, f"{SKILLIGNORE}:{number}: {shown!r}: "
                    f"{why}; use fewer wildcards (or several simpler lines)", number))
                continue
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


def read_skillignore(
    root: str,
) -> tuple[SkillIgnore | None, list[tuple[str, str, str, int | None]]]:
    """The root `.skillignore` of ``root`` compiled, or None when there is none; and the
    problems (code, path, message, line) that stop it being used, if any. It is opened without
    following a link or blocking; one over `MAX_SKILLIGNORE` bytes is refused (reading part
    of it would drop rules silently)."""
    full = os.path.join(root, SKILLIGNORE)
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        return None, []
    except OSError as err:
        return None, [("unreadable", SKILLIGNORE, f"cannot read it: {err.strerror}", None)]
    if stat.S_ISLNK(st.st_mode):
        return None, [("symlink", SKILLIGNORE, "is a symbolic link; make it a regular file",
                      None)]
    if not stat.S_ISREG(st.st_mode):
        return None, []  # a folder or other thing by that name is left out, never read
    try:
        fd = os.open(full, _OPEN_FLAGS)
        try:
            chunks: list[bytes] = []
            size = 0
            while size <= MAX_SKILLIGNORE:  # one byte more than allowed tells it is too big
                chunk = os.read(fd, MAX_SKILLIGNORE + 1 - size)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        finally:
            os.close(fd)
        if size > MAX_SKILLIGNORE:
            return None, [("skillignore-too-large", SKILLIGNORE, f"is over 1 MiB "
                           f"({MAX_SKILLIGNORE:,} bytes); skillpack never reads part of it "
                           "(that would drop rules). Shorten it", None)]
        text = b"".join(chunks).decode("utf-8-sig")
    except OSError as err:
        return None, [("unreadable", SKILLIGNORE, f"cannot read it: {err.strerror}", None)]
    except UnicodeDecodeError:
        return None, [("unreadable", SKILLIGNORE, "is not valid UTF-8; save it as UTF-8",
                      None)]
    ignore = SkillIgnore(text)
    return ignore, list(ignore.problems)


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
