"""Finding skills under a path: a SKILL.md, a skill folder, or a folder of skills.

The search never enters what holds someone else's files rather than skills, and says so:
version-control folders (``.git``, ``.hg``, ``.svn``, ``.bzr``), ``node_modules/``,
virtualenvs (``.venv``, ``venv``, and any folder holding ``pyvenv.cfg``), besides
``__pycache__`` and ``.skillpack`` (skipped without a word: they never hold a skill). Each
skipped folder is in `Discovery.skipped` and is noted (`skillpack.source.notes`: the command
line prints it on stderr).

A folder holding ``skill.md`` (or any other case of it) but no ``SKILL.md`` is found as a
skill too, so that reading it says what to do (rename it: Linux hosts are case-sensitive)
instead of "no SKILL.md found"; `Discovery.miscased` lists those files.

A folder in which the search finds no skill but that holds archives directly (``pack -o
out``'s output) is a folder of archives: `archives_in` lists them, by name, reading none
(`skillpack.source.inputs` reads them).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable

from skillpack._record import Record
from skillpack.errors import MissingPathError, SkillpackError
from skillpack.formats.paths import SKILL_MD
from skillpack.source.ignore import BUILTIN_DIRS, MANIFEST_DIR
from skillpack.source.notes import note
from skillpack.source.pathtext import parent_spelling, path_order, spelling

__all__ = [
    "ARCHIVE_SUFFIXES",
    "SKIP_DIRS",
    "Discovery",
    "Skipped",
    "archives_in",
    "discover",
    "find_skill_folders",
    "find_skills",
    "first_seen",
    "miscased_skill_md",
]

#: Folders the search never enters: those the walk leaves out.
SKIP_DIRS = frozenset({*BUILTIN_DIRS, MANIFEST_DIR})
_QUIET = frozenset({"__pycache__", MANIFEST_DIR})  # never hold a skill: not worth a word
_VCS = frozenset(BUILTIN_DIRS) - {"__pycache__"}
_VENV_NAMES = frozenset({".venv", "venv"})
_LOWER = SKILL_MD.lower()

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from pathlib import Path
    from typing import TypeVar

    #: A path as text or as a Path (`first_seen` keeps what it is given).
    P = TypeVar("P", bound="str | os.PathLike[str]")


class Skipped(Record):
    """A folder the search did not enter: its path (ending in ``/``) and why."""

    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: dict[str, str]) -> Skipped:
        return cls(str(data["path"]), str(data["reason"]))


class Discovery(Record):
    """What a search found: skill folders (sorted), folders skipped, mis-cased SKILL.md files."""

    skills: tuple[Path, ...]
    skipped: tuple[Skipped, ...] = ()
    miscased: tuple[Path, ...] = ()


def miscased_skill_md(folder: str | os.PathLike[str]) -> str | None:
    """The name of an entry of `folder` that is SKILL.md in another case (``skill.md``,
    ``Skill.md``...) when `folder` holds no entry named exactly SKILL.md; else None. Names
    are compared as listed, so this holds on case-insensitive filesystems (macOS) too."""
    try:
        names = os.listdir(folder)
    except OSError:
        return None
    if SKILL_MD in names:
        return None
    others = sorted(n for n in names if n.lower() == _LOWER)
    return others[0] if others else None


def _skip_reason(entry: os.DirEntry[str]) -> str | None:
    name = entry.name
    if name in _VCS:
        return "version control"
    if name == "node_modules":
        return "node packages"
    if name in _VENV_NAMES or os.path.isfile(os.path.join(entry.path, "pyvenv.cfg")):
        return "a Python virtualenv"
    return None


def _is_skill_dir(path: str) -> bool:
    """A folder holding an entry named SKILL.md that is not a folder. A SKILL.md that is a
    symlink, a fifo or a device still makes a skill, so that its checks refuse it saying
    why, rather than it being skipped in silence (and the search never follows it)."""
    try:  # one lstat: a link is not a folder here, whatever it points to
        return not stat.S_ISDIR(os.lstat(os.path.join(path, SKILL_MD)).st_mode)
    except (OSError, ValueError):  # as os.path.lexists says: there is none
        return False


def discover(path: str | os.PathLike[str]) -> Discovery:
    """The skill folders at `path`, what the search skipped, and mis-cased SKILL.md files.

    A SKILL.md gives its folder; a folder holding SKILL.md (or a mis-cased one) is one skill
    (not searched further); any other folder is searched, without following symlinks and
    skipping the folders the module text lists. Raises `MissingPathError` (a
    FileNotFoundError) when `path` does not exist.
    """
    # start-up: pathlib (about 5 ms) for the public Path results only; the command line
    # takes the same search's text (`find_skill_folders`)
    from pathlib import Path

    found, skipped, wrong_case = _search(os.fspath(path))
    return Discovery(tuple(map(Path, found)), skipped, tuple(map(Path, wrong_case)))


def find_skill_folders(path: str | os.PathLike[str]) -> list[str]:
    """``[str(p) for p in find_skills(path)]``, without building a Path: the skill folders at
    `path`, spelt and sorted as `find_skills` gives them."""
    return _search(os.fspath(path))[0]


def _search(text: str) -> tuple[list[str], tuple[Skipped, ...], list[str]]:
    """`discover`, as text: the skill folders and the mis-cased SKILL.md files (spelt as
    pathlib spells them, sorted as Paths sort), and the folders skipped (as the listing spelt
    them), each noted."""
    try:  # one stat where os.path.lexists and os.path.isdir would take two
        is_dir = stat.S_ISDIR(os.stat(text).st_mode)
    except (OSError, ValueError):  # ValueError: a NUL in the path, which lexists says is none
        if not os.path.lexists(text):
            raise MissingPathError(
                "no such file or folder", path=text, hint="give a skill folder, its SKILL.md, "
                "or a folder of skills"
            ) from None
        is_dir = False  # a link to nothing, or a path this user cannot stat
    if not is_dir:  # a SKILL.md (even a fifo or a link: its checks say why)
        name = os.path.basename(text)
        if name == SKILL_MD:
            return [parent_spelling(text)], (), []
        if name.lower() == _LOWER:
            return [parent_spelling(text)], (), [spelling(text)]
        return [], (), []
    if _is_skill_dir(text):
        return [spelling(text)], (), []
    found: list[str] = []
    wrong_case: list[str] = []
    skipped: list[Skipped] = []
    stack = [text]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name, reverse=True)
        except OSError as err:
            raise SkillpackError(
                f"cannot list this folder ({err.strerror})", path=folder
            ) from None
        odd = [e for e in entries if e.name.lower() == _LOWER and e.name != SKILL_MD
               and not e.is_dir(follow_symlinks=False)]
        if odd:  # a skill whose SKILL.md is mis-cased: found, so that reading it says so
            found.append(spelling(folder))
            wrong_case.append(spelling(min(odd, key=lambda e: e.name).path))
            continue
        for entry in entries:
            if entry.name in _QUIET or not entry.is_dir(follow_symlinks=False):
                continue
            if _is_skill_dir(entry.path):
                found.append(spelling(entry.path))
                continue
            reason = _skip_reason(entry)
            if reason is not None:
                skipped.append(Skipped(entry.path + "/", reason))
            else:
                stack.append(entry.path)
    skipped.sort(key=lambda s: s.path)
    for item in skipped:
        note(f"skipped {item.path} ({item.reason}: never searched for skills)")
    return (sorted(found, key=path_order), tuple(skipped),
            sorted(wrong_case, key=path_order))


def find_skills(path: str | os.PathLike[str]) -> list[Path]:
    """The skill folders at `path`, sorted by path (see `discover`). Returns [] when there is
    none; raises `MissingPathError` (a FileNotFoundError) when `path` does not exist."""
    return list(discover(path).skills)


def same_file_key(path: str | os.PathLike[str]) -> str:
    """What tells one file or folder from another, whatever path leads to it: its device and
    inode (one ``stat``, following links as `os.path.realpath` does, which takes an
    ``lstat`` of every component of the path), or its real path when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return os.path.realpath(path)
    return f"{st.st_dev}:{st.st_ino}"


def first_seen(paths: Iterable[P], seen: set[str], *,
               realpath: Callable[[P], str] = same_file_key) -> list[P]:
    """The `paths` (skill folders, archives) not yet in `seen`, compared by what `realpath`
    makes of them (by default, `same_file_key`: the folder or file itself, however it is
    reached), each added to it: a skill found under two PATHs of one command (``pack .
    sub``, ``check a a``) is read, and each of its problems reported, once."""
    fresh: list[P] = []
    for path in paths:
        real = realpath(path)
        if real not in seen:
            seen.add(real)
            fresh.append(path)
    return fresh


#: The file names a folder of archives is made of.
ARCHIVE_SUFFIXES = (".skill", ".bundle", ".zip", ".tar.gz", ".tgz")


def archives_in(folder: str | os.PathLike[str]) -> list[str]:
    """The archives directly in `folder`, sorted, when discovery finds no skill under it;
    else (or when it holds none) []."""
    if not os.path.isdir(folder):
        return []
    with os.scandir(folder) as entries:
        found = [e.path for e in entries
                 if e.name.lower().endswith(ARCHIVE_SUFFIXES) and e.is_file(follow_symlinks=False)]
    if not found or find_skill_folders(folder):  # a folder with skills is a folder of skills
        return []
    return sorted(found, key=lambda p: p.encode("utf-8", "surrogateescape"))
