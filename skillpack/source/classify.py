"""What a PATH holds: the one answer every command that takes skills reads.

A PATH given to a command is one of:

* a skill folder, or its SKILL.md (the folder it is in): one skill;
* a folder of skills: every skill folder discovery finds in it (`skillpack.source.discover`),
  and the archives directly in it beside them (a mix is taken whole);
* a folder of archives (what ``skillpack pack -o out`` writes): its archives, sorted;
* an archive file: one of ours (a ``.skill`` or a bundle: it carries a manifest or a bundle
  index), which is verified strictly, never re-read as foreign; or one made elsewhere
  (Anthropic's DEFLATE ``.skill``/``.zip``, a zip with SKILL.md at its root, a
  ``.tar.gz``; `skillpack.source.foreign`), read as the folder it unpacks to and named by
  its own path to the user.

A file is an archive when its name says so (`ARCHIVE_SUFFIXES`), its first bytes are a zip's,
a tar's or a gzip's, or it is no regular file (a fifo, a device: refused when read, never
waited on). `classify` returns the `Input` records of a PATH in order (by path, part by part),
each skill folder or archive file once however many PATHs lead to it; a PATH that does not
exist raises `MissingPathError`, one that holds none of the above `NoSkillError`.

``exclude`` (``--exclude GLOB``, gitignore syntax, as `.skillignore`) leaves out the skill
folders and archive files whose path matches: relative to the working folder (or to the
configuration file's folder, for its own patterns) when below it, else absolute; a folder
matched by ``templates/`` leaves out every skill below it. A left-out input is no error:
`Inputs.excluded` lists it, and a PATH whose every input was left out holds nothing more.
"""

from __future__ import annotations

import copy
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from skillpack._atomic import remove_tree
from skillpack._regular import open_regular, read_regular
from skillpack.content.inflate import read_archive, sniff
from skillpack.errors import (
    ArchiveError,
    ArgumentError,
    NoSkillError,
    Problem,
    RefusedError,
    SkillpackError,
)
from skillpack.formats.bundle_index import BUNDLE_INDEX
from skillpack.formats.manifest import MANIFEST_PATH
from skillpack.source.discover import ARCHIVE_SUFFIXES, Skipped, discover, is_archive_name
from skillpack.source.foreign import unpack
from skillpack.source.ignore import exclude_problem
from skillpack.storedzip.reader import listed_names
from skillpack.storedzip.source import FileBytes

__all__ = ["ARCHIVE_SUFFIXES", "Exclude", "Input", "Inputs", "Kind", "classify",
           "classify_all", "no_skill", "read_input", "unpacked_foreign"]

#: What an input is: a skill folder; an archive or bundle of ours (verified strictly); an
#: archive made elsewhere (read as the folder it unpacks to).
Kind = Literal["folder", "archive", "foreign"]

_LOOKED_FOR = ("give a skill folder, its SKILL.md, a folder of skills or of archives, or an "
               "archive (" + ", ".join(ARCHIVE_SUFFIXES) + ")")


@dataclass(frozen=True, slots=True)
class Input:
    """One thing found under a PATH: its `Kind`, its path (the skill folder or the archive
    file, as pathlib spells it) and the PATH it was found under. ``origin`` is the archive a
    skill folder was written from (`unpacked_foreign`, a verified archive's skills): the
    folder is temporary, and the user knows it by that archive (`label`, `shown`), its files
    as the archive's members: ``members`` and the file's path in the skill (``ARCHIVE!`` and
    the top folder's name and a slash, or just ``ARCHIVE!`` for SKILL.md at the root)."""

    kind: Kind
    path: str
    given: str
    origin: str | None = None
    members: str | None = None

    @property
    def label(self) -> str:
        """What to call this input to the user: its path, or the archive it came from."""
        return self.path if self.origin is None else self.origin

    def shown(self, text: str) -> str:
        """`text`, a path at or below this input's folder, as the user knows it: for a
        folder written from an archive, the archive (the folder itself) or
        ``ARCHIVE!MEMBER`` (a file in it, named as the archive names it); any other text as
        it is."""
        if self.origin is None:
            return text
        if text == self.path:
            return self.origin
        if text.startswith(self.path + "/"):
            return self._below + text[len(self.path) + 1:]
        return text

    @property
    def _below(self) -> str:
        return self.members if self.members is not None else f"{self.origin}/"

    def _shown_in(self, text: str) -> str:
        """`text`, a message, with every path below this input's (temporary) folder as the
        user knows it (`shown`)."""
        if self.origin is None or self.path not in text:
            return text
        text = text.replace(self.path + "/", self._below)
        return text.replace(self.path, self.origin)

    def relabel(self, err: SkillpackError) -> SkillpackError:
        """`err` with its path, its message and its problems' files and messages as the user
        knows them (`shown`; a file relative to the error's path is joined to it first)."""
        if self.origin is None:
            return err
        shown = copy.copy(err)
        shown.path = None if err.path is None else self.shown(err.path)
        shown.message = self._shown_in(err.message)
        shown.problems = tuple(Problem(
            p.severity, p.code, self._shown_in(p.message),
            None if p.file is None else self.shown(p.file), p.line) for p in err.located())
        if isinstance(shown, RefusedError):
            shown.joined = True
        return shown


@dataclass(frozen=True, slots=True)
class Inputs:
    """What `classify` found: the inputs in order, what discovery skipped, and the inputs
    ``exclude`` left out (their paths)."""

    items: tuple[Input, ...]
    skipped: tuple[Skipped, ...] = ()
    excluded: tuple[str, ...] = ()


class Exclude:
    """``--exclude`` patterns compiled once: `matches` says whether a skill folder or an
    archive file is left out (see the module text)."""

    def __init__(self, patterns: Iterable[str] = (), *, base: str | None = None) -> None:
        self.base = base  # what paths are matched relative to (None: the working folder)
        # `./skills/x` and an absolute path below that folder are written as a shell writes
        # paths: gitignore syntax matches neither, so each is made the pattern it means
        self.patterns = tuple(_as_pattern(p, base) for p in patterns)
        bad = [(p, why) for p in self.patterns if (why := exclude_problem(p)) is not None]
        if bad:
            raise ArgumentError("--exclude: " + "; ".join(f"{p!r}: {why}" for p, why in bad),
                                hint="give a glob such as 'templates/' or '*-draft'")
        if self.patterns:
            import pathspec  # only when something is excluded

            self._spec: pathspec.GitIgnoreSpec | None = pathspec.GitIgnoreSpec.from_lines(
                self.patterns)
        else:
            self._spec = None

    def __bool__(self) -> bool:
        return self._spec is not None

    def matches(self, path: str, is_dir: bool) -> bool:
        if self._spec is None:
            return False
        absolute = os.path.abspath(path)
        here = os.path.abspath(self.base) if self.base is not None else os.getcwd()
        shown = (os.path.relpath(absolute, here) if absolute.startswith(here + os.sep)
                 else absolute.lstrip(os.sep))
        shown = shown.replace(os.sep, "/")
        return self._spec.match_file(shown + "/" if is_dir else shown)


def _as_pattern(pattern: str, base: str | None) -> str:
    """`pattern` as gitignore syntax means it: ``./x`` is ``/x`` (anchored where matching
    starts), and an absolute path below `base` (default: the working folder) is ``/`` and
    its path relative to it."""
    here = os.path.abspath(base) if base is not None else os.getcwd()
    if pattern.startswith("./"):
        return "/" + pattern[2:].lstrip("/")
    if os.path.isabs(pattern) and pattern.startswith(here.rstrip(os.sep) + os.sep):
        return "/" + os.path.relpath(pattern, here).replace(os.sep, "/") + (
            "/" if pattern.endswith("/") else "")
    return pattern


def no_skill(path: str) -> NoSkillError:
    """The error of a PATH that holds no skill, saying what was looked for (code
    ``no-skill``)."""
    message = f"no SKILL.md found in {path}"
    return NoSkillError(message, path=path, hint=_LOOKED_FOR,
                        problems=[Problem("error", "no-skill", message, path)])


def _same_file(path: str, *, own: bool = False) -> str:
    """What tells one file or folder from another, whatever path leads to it: its device and
    inode, or its real path when it cannot be stat'ed. With `own`, a path that is itself a
    link is its own: a skill a search found through a link named otherwise than its folder
    is judged by that name (`discover`), beside the folder found as itself."""
    try:
        st = os.lstat(path) if own and os.path.islink(path) else os.stat(path)
    except (OSError, ValueError):
        return os.path.realpath(path)
    return f"{st.st_dev}:{st.st_ino}"


def classify(path: str | os.PathLike[str], *, seen: set[str] | None = None,
             exclude: Exclude | Iterable[str] = ()) -> Inputs:
    """The inputs PATH holds (see the module text), in order. With `seen`, an input already
    in it (by the file or folder itself, however reached) is left out, and each one kept is
    added: a skill under two PATHs of one command is read, and reported, once. Those
    `exclude` matches are left out, and listed in `Inputs.excluded`. Raises
    `MissingPathError`, `NoSkillError`, or `SkillpackError` for a folder that cannot be
    listed or an archive that cannot be read."""
    exclude = exclude if isinstance(exclude, Exclude) else Exclude(exclude)
    given = os.fspath(path)
    found = discover(given)
    items: list[Input] = [Input("folder", str(p), given) for p in found.skills]
    if not items:
        if found.archives:  # a folder of archives
            items = [_archive(str(p), given) for p in found.archives]
        elif not os.path.isdir(given):  # a file: an archive, or nothing
            items = [_archive(str(Path(given)), given)] if _archive_file(given) else []
    else:  # a mix is taken whole
        items += [_archive(str(p), given) for p in found.archives]
        items.sort(key=lambda i: Path(i.path).parts)
    if not items:
        raise no_skill(given)
    excluded: list[str] = []
    if exclude:
        kept = []
        for item in items:
            if exclude.matches(item.path, item.kind == "folder"):
                excluded.append(item.path)
            else:
                kept.append(item)
        items = kept
    if seen is not None:
        fresh = []
        for item in items:
            key = _same_file(item.path, own=item.path != given)
            if key not in seen:
                seen.add(key)
                fresh.append(item)
        items = fresh
    return Inputs(tuple(items), found.skipped, tuple(excluded))


def classify_all(paths: Iterable[str | os.PathLike[str]], *,
                 exclude: Exclude | Iterable[str] = ()) -> Inputs:
    """`classify` of every PATH, in order, each input once (those `exclude` matches left
    out); raises for the first PATH that holds nothing or cannot be read."""
    exclude = exclude if isinstance(exclude, Exclude) else Exclude(exclude)
    seen: set[str] = set()
    items: list[Input] = []
    skipped: list[Skipped] = []
    excluded: list[str] = []
    for path in paths:
        found = classify(path, seen=seen, exclude=exclude)
        items += found.items
        skipped += found.skipped
        excluded += found.excluded
    return Inputs(tuple(items), tuple(skipped), tuple(excluded))


def _archive_file(path: str) -> bool:
    """Whether a PATH that is no folder nor SKILL.md is read as an archive: by its name, by
    its first bytes, or because it is no regular file (refused when read)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return True  # a link to nothing, a file this user cannot stat: refused when read
    if not stat.S_ISREG(st.st_mode) or is_archive_name(path):
        return True
    try:
        with open(path, "rb") as handle:
            return sniff(handle.read(512)) is not None
    except OSError:
        return True


def _archive(path: str, given: str) -> Input:
    return Input("archive" if _strictly_ours(path) else "foreign", path, given)


def _is_ours(data: bytes, *, source: str = "<archive>") -> bool:
    """Whether `data` is a skillpack archive or bundle (to be verified strictly): it carries
    a manifest or a bundle index, or it is no archive `skillpack.source.foreign` can read
    (then the strict reader says what is wrong with it)."""
    try:
        _, members = read_archive(data, source=source)
    except ArchiveError:
        return True
    return any(_ours_name(m.path) for m in members)


def _ours_name(name: str) -> bool:
    return name in (BUNDLE_INDEX, MANIFEST_PATH) or name.endswith("/" + MANIFEST_PATH)


_OURS_RAW = (BUNDLE_INDEX.encode(), MANIFEST_PATH.encode())
_OURS_RAW_END = ("/" + MANIFEST_PATH).encode()


def _strictly_ours(path: str) -> bool:
    """Whether the archive file at `path` is one of ours (`_is_ours`), told from its first
    bytes and its central directory (a 1 GiB archive is never read whole here); only an
    archive neither settles is read whole.

    A central directory naming a manifest or a bundle index settles it (ours) without the
    strict read, which `verify` makes next and which refuses what is wrong: whatever the
    strict reader says, `_is_ours` says so of such an archive (it names the same members,
    or it cannot be read). A central directory that can be listed and names none is a
    foreign archive's: what is wrong with it is the foreign reader's to say. Only an
    archive whose names cannot be listed is read whole here."""
    try:
        fd = open_regular(path)  # a fifo named as an archive must not hang
    except OSError as err:
        raise SkillpackError(f"cannot read it: {err.strerror}", path=path,
                             hint="give a readable regular file") from None
    with FileBytes(fd, path) as file:
        kind = sniff(file.read(0, min(512, len(file))))
        if kind is None:
            return True  # no archive foreign reads: the strict reader says what is wrong
        if kind != "zip":
            return False  # a tar or tar.gz is never ours: the foreign reader judges it
        try:
            names = listed_names(file)
        except ArchiveError:
            pass
        else:
            return any(n in _OURS_RAW or n.endswith(_OURS_RAW_END) for n in names)
    return _is_ours(read_input(path), source=path)


def read_input(path: str) -> bytes:
    """The bytes of the archive file of an input (`read_regular`); one that cannot be read
    raises `SkillpackError` saying why."""
    try:
        return read_regular(path)
    except OSError as err:
        raise SkillpackError(f"cannot read it: {err.strerror}", path=path,
                             hint="give a readable regular file") from None


@contextmanager
def unpacked_foreign(items: Iterable[Input]) -> Iterator[list[Input]]:
    """``with unpacked_foreign(inputs) as items:`` the inputs, each archive made elsewhere
    replaced by the skill folder it unpacks to (kind ``folder``, its ``origin`` the archive),
    in a temporary folder removed on leaving the block; the others as they are. An error
    raised in the block names a file of such a folder ``ARCHIVE!MEMBER`` (`Input.relabel`),
    never the temporary folder."""
    made: list[str] = []
    out: list[Input] = []
    try:
        for item in items:
            if item.kind != "foreign":
                out.append(item)
                continue
            data = read_input(item.path)
            made.append(tempfile.mkdtemp(prefix="skillpack-unpacked-"))
            folder, skill = unpack(data, made[-1], source=item.path)
            top = f"{skill.top}/" if skill.layout == "folder" else ""
            out.append(replace(item, kind="folder", path=str(folder), origin=item.path,
                               members=f"{item.path}!{top}"))
        try:
            yield out
        except SkillpackError as err:
            for item in out:
                err = item.relabel(err)
            raise err from err.__cause__
    finally:
        for root in made:
            remove_tree(root)
