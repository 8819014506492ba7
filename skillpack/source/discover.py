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

A symbolic link to a folder is followed when the folder lies inside the working folder (the
layout vercel's ``skills`` writes: each agent's folder linking to one copy in
``.agents/skills``; `verify` follows the same links): a skill found through a link is found
at its own path, once. A link out of the working folder, to a folder holding the folder
searched (``skills/up -> ..``: following it, a search of ``skills`` read the whole
repository), to nothing, or that loops, is skipped and noted, once.

Archives (`ARCHIVE_SUFFIXES`) directly in the folder searched are listed in
`Discovery.archives`, read by no one here (`skillpack.source.classify` decides what they
are); one in a folder below it that holds no skill is skipped, and noted, like a folder.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from skillpack.errors import MissingPathError, Problem, SkillpackError
from skillpack.formats.paths import SKILL_MD
from skillpack.source.ignore import BUILTIN_DIRS, MANIFEST_DIR
from skillpack.source.notes import note

__all__ = [
    "ARCHIVE_SUFFIXES",
    "CARRIED_CODES",
    "SKIP_DIRS",
    "Discovery",
    "Skipped",
    "carried_strangers",
    "discover",
    "find_skills",
    "is_archive_name",
    "is_skill_folder",
    "miscased_skill_md",
    "never_searched",
    "skill_holding",
]

#: Folders the search never enters: those the walk leaves out.
SKIP_DIRS = frozenset({*BUILTIN_DIRS, MANIFEST_DIR})
#: The file names of archives (lower case): what `pack -o out` writes, and what others make.
ARCHIVE_SUFFIXES = (".skill", ".bundle", ".zip", ".tar.gz", ".tgz")
_QUIET = frozenset({"__pycache__", MANIFEST_DIR})  # never hold a skill: not worth a word
_VCS = frozenset(BUILTIN_DIRS) - {"__pycache__"}
_VENV_NAMES = frozenset({".venv", "venv"})
_LOWER = SKILL_MD.lower()
_DEEP_ARCHIVE = "an archive below the folder given: give it, or its folder, to read it"


@dataclass(frozen=True, slots=True)
class Skipped:
    """What the search did not read: a folder (its path ending in ``/``) or an archive below
    the folder searched, and why."""

    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Discovery:
    """What a search found: skill folders (sorted), what it skipped, mis-cased SKILL.md
    files, and the archives directly in the folder searched (sorted; none in a skill)."""

    skills: tuple[Path, ...]
    skipped: tuple[Skipped, ...] = ()
    miscased: tuple[Path, ...] = ()
    archives: tuple[Path, ...] = ()


def is_archive_name(name: str) -> bool:
    """Whether a file named `name` is an archive by its name (`ARCHIVE_SUFFIXES`)."""
    return name.lower().endswith(ARCHIVE_SUFFIXES)


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


def _skip_reason(path: str) -> str | None:
    """Why the search never enters the folder at `path`, or None when it does."""
    name = os.path.basename(path)
    if name in _VCS:
        return "version control"
    if name == "node_modules":
        return "node packages"
    if name in _VENV_NAMES or os.path.isfile(os.path.join(path, "pyvenv.cfg")):
        return "a Python virtualenv"
    return None


def never_searched(path: str) -> bool:
    """Whether the search never enters the folder at `path` (the folders the module text
    lists: version control, node packages, virtualenvs, ``__pycache__``, ``.skillpack``)."""
    return os.path.basename(path) in _QUIET or _skip_reason(path) is not None


def _is_skill_dir(path: str) -> bool:
    """A folder holding an entry named SKILL.md that is not a folder. A SKILL.md that is a
    symlink, a fifo or a device still makes a skill, so that its checks refuse it saying
    why, rather than it being skipped in silence (and the search never follows it)."""
    try:  # one lstat: a link is not a folder here, whatever it points to
        return not stat.S_ISDIR(os.lstat(os.path.join(path, SKILL_MD)).st_mode)
    except (OSError, ValueError):  # as os.path.lexists says: there is none
        return False


def is_skill_folder(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a skill folder as the search finds one: it holds SKILL.md (even a
    link or a fifo: its checks refuse it), or SKILL.md in another case (reading it says to
    rename it)."""
    return _is_skill_dir(os.fspath(path)) or (
        os.path.isdir(path) and miscased_skill_md(path) is not None)


def skill_holding(file: str | os.PathLike[str]) -> Path | None:
    """The skill folder a search of the working folder puts `file` in (a path relative to
    it, as pre-commit passes a commit's files; an absolute one is searched from its root):
    its outermost folder that is a skill, the working folder itself included, as `discover`
    finds it (it searches no further inside a skill). None for a file in no skill, or below
    a folder the search never enters (``node_modules/``, a virtualenv, ``.git/``...)."""
    path = Path(file)
    folders = [*reversed(path.parents)]
    if os.path.isdir(path):
        folders.append(path)
    for folder in folders:
        text = os.fspath(folder)
        if folder.name in _QUIET or (folder.name and _skip_reason(text) is not None):
            return None
        if is_skill_folder(text):
            return folder
    return None


#: A folder as the search tells it from another, however reached: its device and inode.
_Ident = tuple[int, int]


def _ident(st: os.stat_result) -> _Ident:
    return st.st_dev, st.st_ino


def _linked_folder(link: str, project: str, visited: set[_Ident],
                   searched: tuple[str, str]) -> tuple[str, _Ident] | Skipped | None:
    """Where the symbolic link `link` of a folder searched leads: the folder it names, as a
    path relative to the working folder `project`, with its identity, when that folder lies
    inside it and was not searched yet (vercel's ``skills`` links each agent's folder to one
    copy in ``.agents/skills``: `verify` follows such links too); a `Skipped` (noted) for a
    link to a folder outside it, to a folder holding the folder searched (`searched`: as
    given, and its real path; ``skills/up -> ..`` would read every skill around
    ``skills/``), to nothing, or that loops; None for a link to a file, or to a folder
    already searched (each skill is found once)."""
    try:
        st = os.stat(link)
    except OSError as err:
        return Skipped(link, "a symbolic link that loops" if err.errno == errno.ELOOP
                       else "a symbolic link to nothing")
    if not stat.S_ISDIR(st.st_mode):
        return None  # a link to a file
    real = os.path.realpath(link)
    if real != project and not real.startswith(project + os.sep):
        return Skipped(link, f"a symbolic link to {real}, outside the working folder: give "
                       "that folder to read it")
    given, given_real = searched
    if given_real.startswith(real.rstrip(os.sep) + os.sep):
        above = os.path.relpath(real, project)
        return Skipped(link, "a symbolic link to " + (
            "the working folder" if above == "." else above) + f", which holds {given}, the "
            f"folder searched: following it would read skills outside {given}; give that "
            "folder to read them")
    if _ident(st) in visited:
        return None
    visited.add(_ident(st))
    return os.path.relpath(real, project), _ident(st)


def discover(path: str | os.PathLike[str]) -> Discovery:
    """The skill folders at `path`, what the search skipped, mis-cased SKILL.md files and
    the archives directly in `path`.

    A SKILL.md gives its folder; a folder holding SKILL.md (or a mis-cased one) is one skill
    (not searched further); any other folder is searched, skipping the folders the module
    text lists. A symbolic link is followed to a folder inside the working folder
    (`_linked_folder`), each folder and skill found once; any other is skipped, and noted.
    Raises `MissingPathError` (a FileNotFoundError) when `path` does not exist.
    """
    given = Path(path)
    try:
        is_dir = stat.S_ISDIR(os.stat(given).st_mode)
    except (OSError, ValueError):  # ValueError: a NUL in the path, which lexists says is none
        if not os.path.lexists(given):
            raise MissingPathError(
                "no such file or folder", path=os.fspath(path), hint="give a skill folder, "
                "its SKILL.md, a folder of skills, or an archive") from None
        is_dir = False  # a link to nothing, or a path this user cannot stat
    if not is_dir:  # a SKILL.md (even a fifo or a link: its checks say why)
        if given.name == SKILL_MD:
            return Discovery((given.parent,))
        if given.name.lower() == _LOWER:
            return Discovery((given.parent,), miscased=(given,))
        return Discovery(())
    if _is_skill_dir(os.fspath(given)):
        return Discovery((given,))
    found: list[Path] = []
    wrong_case: list[Path] = []
    skipped: list[Skipped] = []
    archives: list[Path] = []
    root = os.fspath(given)
    stack = [root]
    project = os.path.realpath(os.getcwd())
    searched = (root, os.path.realpath(root))
    visited = {_ident(os.stat(root))}  # each folder searched once, however it is reached
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name, reverse=True)
        except OSError as err:
            raise SkillpackError(f"cannot list this folder ({err.strerror})",
                                 path=folder) from None
        odd = [e for e in entries if e.name.lower() == _LOWER and e.name != SKILL_MD
               and not e.is_dir(follow_symlinks=False)]
        if odd:  # a skill whose SKILL.md is mis-cased: found, so that reading it says so
            found.append(Path(folder))
            wrong_case.append(Path(min(odd, key=lambda e: e.name).path))
            continue
        for entry in entries:
            if entry.is_file(follow_symlinks=False) and is_archive_name(entry.name):
                if folder == root:
                    archives.append(Path(entry.path))
                else:
                    skipped.append(Skipped(entry.path, _DEEP_ARCHIVE))
                continue
            if entry.is_symlink():
                linked = _linked_folder(entry.path, project, visited, searched)
                if isinstance(linked, Skipped):
                    skipped.append(linked)
                elif linked is not None and _is_skill_dir(linked[0]):
                    if os.path.basename(linked[0]) == entry.name:
                        found.append(Path(linked[0]))
                    else:  # an agent reads it by the link's name: judged by that name
                        visited.discard(linked[1])
                        found.append(Path(entry.path))
                elif linked is not None:
                    stack.append(linked[0])
                continue
            if entry.name in _QUIET or not entry.is_dir(follow_symlinks=False):
                continue
            if _is_skill_dir(entry.path):
                ident = _ident(entry.stat(follow_symlinks=False))
                if ident not in visited:  # not found through a link already
                    visited.add(ident)
                    found.append(Path(entry.path))
                continue
            reason = _skip_reason(entry.path)
            if reason is not None:
                skipped.append(Skipped(entry.path + "/", reason))
            elif (ident := _ident(entry.stat(follow_symlinks=False))) not in visited:
                visited.add(ident)  # searched once, whether reached through a link or not
                stack.append(entry.path)
    skipped.sort(key=lambda s: s.path)
    _say_skipped(skipped)
    return Discovery(tuple(sorted(found)), tuple(skipped), tuple(sorted(wrong_case)),
                     tuple(sorted(archives)))


def _say_skipped(skipped: list[Skipped]) -> None:
    """A note for each folder or link skipped, and one for the archives of each folder (a
    `pack -o dist` run again over its repository finds a thousand of its own archives)."""
    archives: dict[str, list[str]] = {}
    for item in skipped:
        if item.reason == _DEEP_ARCHIVE:
            archives.setdefault(os.path.dirname(item.path), []).append(item.path)
        elif item.path.endswith("/"):  # a folder (its path ends so): one of SKIP_DIRS
            note(f"skipped {item.path} ({item.reason}: never searched for skills)")
        else:  # a symbolic link: its reason says where it leads
            note(f"skipped {item.path} ({item.reason})")
    for folder, paths in archives.items():
        if len(paths) == 1:
            note(f"skipped {paths[0]} ({_DEEP_ARCHIVE})")
        else:
            note(f"skipped {len(paths):,} archives in {folder}/ (archives below the folder "
                 "given: give them, or their folder, to read them)")


#: The code of each kind of folder a skill carries that the search never reads as the
#: skill's (`carried_strangers`).
CARRIED_CODES = {"virtualenv": "carries-virtualenv", "node packages": "carries-node-modules",
                 "skill": "carries-nested-skill"}
_NODE = "node_modules"
_VENV_MARK = "pyvenv.cfg"


def carried_strangers(paths: Sequence[str]) -> list[Problem]:
    """A warning for each folder below the skill's root among `paths` (the skill's carried
    files, relative ``/`` paths) that the search tells apart from a skill's own files: a
    Python virtualenv (a folder holding ``pyvenv.cfg``) and ``node_modules/``, which it never
    searches, and a folder holding its own SKILL.md (in any case), which it finds as a skill
    of its own. Each is carried all the same (SPEC section 1 fixes the file set): the
    warning names the folder, how many files it carries, and the ``.skillignore`` line that
    leaves it out. Only the outermost such folder is named; each problem's file is the
    folder's path, ending with ``/``."""
    kinds: dict[str, str] = {}
    for path in paths:
        folder, _, name = path.rpartition("/")
        if not folder:
            continue
        if name == _VENV_MARK:
            kinds.setdefault(folder, "virtualenv")
        if name.lower() == _LOWER:
            kinds.setdefault(folder, "skill")
        if _NODE in folder:
            parts = folder.split("/")
            if _NODE in parts:
                kinds.setdefault("/".join(parts[:parts.index(_NODE) + 1]), "node packages")
    if not kinds:
        return []
    outer: list[str] = []
    for folder in sorted(kinds, key=lambda f: f.split("/")):  # each below its parent
        if not outer or not folder.startswith(outer[-1] + "/"):
            outer.append(folder)
    counts = dict.fromkeys(outer, 0)
    for path in paths:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            above = "/".join(parts[:depth])
            if above in counts:
                counts[above] += 1
                break
    problems = []
    for folder in outer:
        count = counts[folder]
        files = f"{count:,} file{'s' * (count != 1)}"
        kind = kinds[folder]
        if kind == "skill":
            what = (f"'{folder}/', a skill of its own ({files}, its own SKILL.md): an agent "
                    "reads them as files of this skill, while a search of the folder above "
                    "it finds it as a skill; move it out of this skill, or leave it out with "
                    f"the line '/{folder}/' in .skillignore")
        elif kind == "virtualenv":
            what = (f"a Python virtualenv, '{folder}/' ({files}), a folder the search for "
                    "skills never enters: installed packages, not the skill's own files; "
                    f"leave it out with the line '/{folder}/' in .skillignore")
        else:
            what = (f"'{folder}/' ({files}), installed node packages, a folder the search "
                    "for skills never enters: not the skill's own files; leave it out with "
                    f"the line '{_NODE}/' in .skillignore")
        problems.append(Problem("warning", CARRIED_CODES[kind], f"the skill carries {what}",
                                folder + "/"))
    return problems


def find_skills(path: str | os.PathLike[str]) -> list[Path]:
    """The skill folders at `path`, sorted by path (see `discover`). Returns [] when there is
    none; raises `MissingPathError` (a FileNotFoundError) when `path` does not exist."""
    return list(discover(path).skills)
