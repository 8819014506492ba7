"""Skill archives made elsewhere: recognise one from its bytes, and unpack it to a folder.

Accepted (every one read through :mod:`skillpack.content.inflate`, with its caps and refusals):

* a zip (``.skill`` or ``.zip``) with one top folder holding ``SKILL.md``: what Anthropic's
  ``package_skill.py`` writes (DEFLATE, ``<name>/SKILL.md``, ...), and what skillpack itself
  writes (STORED, plus ``<name>/.skillpack/manifest.json``: ``kind="skillpack"``, which a
  caller routes to the strict reader of our own archives);
* a zip with ``SKILL.md`` at its root;
* a tar or tar.gz with ``SKILL.md`` at its root (the archive layout of the
  ``.well-known/agent-skills`` discovery index: "the archive root corresponds to the skill
  directory") or in one top folder (``./`` prefixes, as ``tar -C dir .`` writes, are dropped).

The skill's name is the frontmatter's ``name`` (or ``skill``, for a hard skill); in a top
folder whose SKILL.md names no usable one, the folder's name. A top folder named otherwise
than its skill (``react-best-practices-v2/`` holding ``name: react-best-practices``, as some
publishers version their zips) is no error: the skill is unpacked under its own name, which
``check`` wants of a skill folder, and a note says so (`skillpack.source.notes`).

Left out of the skill's files, and reported in ``ForeignSkill.left_out``: ``.skillpack/`` at
the skill's root (SPEC section 1: a folder never carries it, so the unpacked folder packs
again to the same digest; a stale manifest beside files that may be edited would only
mislead), ``__MACOSX/`` at the archive's top (Finder's resource forks), and version-control
folders (``.git``, ``.hg``, ``.svn``: a ``.git/config`` from elsewhere can run commands when
git is used inside the folder; the digest's walk leaves them out anyway).
"""

from __future__ import annotations

import os
import stat
import tempfile
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from skillpack._atomic import fsync_folder, make_folders, remove_tree
from skillpack.content.inflate import DEFAULT_CAPS, Caps, Format, Member, read_archive
from skillpack.errors import ArchiveError, Problem, SkillError, WriteError
from skillpack.formats.paths import name_problem
from skillpack.skillmd.frontmatter import normalise_text, split_frontmatter
from skillpack.source.notes import note

__all__ = ["ForeignFile", "ForeignSkill", "read_foreign", "unpack", "unpacked"]

MANIFEST = ".skillpack/manifest.json"
_VCS = frozenset({".git", ".hg", ".svn"})
_HINT = "a skill archive holds SKILL.md at its root or in its one top folder"

Kind = Literal["foreign", "skillpack"]
Layout = Literal["folder", "root"]


@dataclass(frozen=True, slots=True)
class ForeignFile:
    """One file of the skill: its path inside the skill folder, bytes and execute bit."""

    path: str
    data: bytes
    executable: bool


@dataclass(frozen=True, slots=True)
class ForeignSkill:
    """What an archive holds: one skill, where it was found, and what was left out.

    ``kind`` is ``"skillpack"`` when the archive is one of ours (it carries
    ``<name>/.skillpack/manifest.json``; read it with the strict verifier), else
    ``"foreign"``. ``files`` are sorted by the UTF-8 bytes of their paths. ``left_out`` are
    archive member names (files) not carried into the skill folder, sorted. ``top`` is the
    archive's top folder as the archive names it (``""`` at the root layout): `name`, or
    another name when the archive's folder is not named as its skill.
    """

    name: str
    kind: Kind
    format: Format
    layout: Layout
    files: tuple[ForeignFile, ...]
    left_out: tuple[str, ...]
    top: str = ""

    @property
    def renamed(self) -> bool:
        """Whether the archive's top folder is named otherwise than the skill."""
        return self.layout == "folder" and _nfc(self.top) != self.name

    def to_dict(self) -> dict[str, object]:
        """A summary for ``--json`` (no file bytes)."""
        return {
            "name": self.name,
            "kind": self.kind,
            "format": self.format,
            "layout": self.layout,
            "files": [{"path": f.path, "size": len(f.data),
                       "mode": "100755" if f.executable else "100644"} for f in self.files],
            "left_out": list(self.left_out),
            "top": self.top or None,
        }


def read_foreign(data: bytes, *, caps: Caps = DEFAULT_CAPS,
                 source: str = "<archive>") -> ForeignSkill:
    """Recognise the skill archive `data` (zip, tar or tar.gz); raise ArchiveError if not."""
    fmt, members = read_archive(data, caps, source=source)
    files = [m for m in members if m.kind == "file"]
    left_out = [m.path for m in files if m.path.split("/", 1)[0] == "__MACOSX"]
    files = [m for m in files if m.path.split("/", 1)[0] != "__MACOSX"]
    paths = {m.path for m in files}
    if "SKILL.md" in paths:
        layout: Layout = "root"
        top = prefix = ""
        name = _root_name(_skill_md(files, "SKILL.md"), source)
    else:
        layout = "folder"
        top = _top_folder(files, paths, source)
        prefix = top + "/"
        name = _folder_skill_name(top, _skill_md(files, prefix + "SKILL.md"), source)
    kind: Kind = "skillpack" if layout == "folder" and prefix + MANIFEST in paths else "foreign"
    carried: list[ForeignFile] = []
    for member in files:
        rel = member.path[len(prefix):]
        if rel.startswith(".skillpack/") or not _VCS.isdisjoint(rel.split("/")):
            left_out.append(member.path)
        else:
            carried.append(ForeignFile(_nfc(rel), member.data, member.executable))
    carried.sort(key=lambda f: f.path.encode("utf-8"))
    return ForeignSkill(_nfc(name), kind, fmt, layout, tuple(carried),
                        tuple(sorted(left_out, key=lambda p: p.encode("utf-8"))), top)


def _nfc(text: str) -> str:
    """Paths are written NFC-normalised (SPEC section 1), as the walk reads them."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def _skill_md(files: list[Member], path: str) -> bytes:
    return next(m.data for m in files if m.path == path)


def _top_folder(files: list[Member], paths: set[str], source: str) -> str:
    tops = sorted({m.path.split("/", 1)[0] for m in files})
    if len(tops) == 1 and tops[0] + "/SKILL.md" in paths:
        return tops[0]
    named = sorted(p for p in paths if p.rsplit("/", 1)[-1].lower() == "skill.md")
    other_case = [p for p in named if not p.endswith("SKILL.md")]
    if not files:
        why = "the archive holds no files"
    elif other_case:
        why = (f"no SKILL.md at the root or in the one top folder; found {other_case[0]!r} "
               "(the name is case-sensitive: rename it SKILL.md)")
    elif len(tops) > 1:
        shown = ", ".join(repr(t) for t in tops[:5]) + (", ..." if len(tops) > 5 else "")
        why = (f"no SKILL.md at the root, and {len(tops)} top-level entries ({shown}) "
               "instead of one skill folder (one skill per archive)")
    else:
        deeper = f"; found {named[0]!r}, too deep" if named else ""
        why = f"no SKILL.md at the root or in the top folder {tops[0]!r}{deeper}"
    raise _refused("not-a-skill-archive", f"not a skill archive: {why}", source, _HINT)


def _frontmatter_name(text: bytes, file: str) -> str | None:
    """The name SKILL.md gives (``name``, else ``skill``); raise SkillError if unreadable."""
    try:
        source = text.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillError("SKILL.md is not valid UTF-8", path=file,
                         hint="save it as UTF-8") from None
    data = split_frontmatter(normalise_text(source), file=file).data
    value = data.get("name", data.get("skill"))
    return value.strip() if isinstance(value, str) and value.strip() else None


def _root_name(text: bytes, source: str) -> str:
    try:
        name = _frontmatter_name(text, "SKILL.md")
    except SkillError as exc:
        raise _refused("name-missing", f"SKILL.md at the archive root cannot be read for the "
                       f"skill's name: {exc}", source, "fix its frontmatter; the root layout "
                       "takes the name from it") from None
    if name is None:
        raise _refused("name-missing", "SKILL.md at the archive root has no 'name' in its "
                       "frontmatter, so the skill folder cannot be named", source,
                       "add 'name: <skill-name>' to the frontmatter")
    why = _folder_name_problem(name)
    if why is not None:
        raise _refused("name-invalid-characters", f"the frontmatter's name {name!r} cannot "
                       f"name a folder: {why}", source,
                       "use lowercase letters, digits and hyphens")
    return name


def _refused(code: str, message: str, source: str, hint: str) -> ArchiveError:
    return ArchiveError(message, path=source, hint=hint,
                        problems=[Problem("error", code, message, None)])


def _folder_name_problem(name: str) -> str | None:
    if "/" in name:
        return "it holds '/'"
    if name.startswith("."):
        return "it starts with '.'"
    if len(name.encode("utf-8")) > 255:
        return "it is longer than 255 bytes"
    return name_problem(name)


def _folder_skill_name(folder: str, text: bytes, source: str) -> str:
    """The name of the skill in the top folder `folder`: the one its SKILL.md gives when that
    can name a folder (the folder's own name when the two agree after NFKC), else the
    folder's, which must then be usable."""
    try:
        name = _frontmatter_name(text, f"{folder}/SKILL.md")
    except SkillError:
        name = None  # named by its folder; `check` of the unpacked folder reports the frontmatter
    if name is not None and _folder_name_problem(name) is None and (
            unicodedata.normalize("NFKC", name) != unicodedata.normalize("NFKC", folder)):
        return name
    why = _folder_name_problem(folder)
    if why is not None:
        raise _refused("name-invalid-characters",
                       f"the top folder {folder!r} cannot name a skill folder: {why}", source,
                       _HINT)
    return folder


# -- unpack ------------------------------------------------------------------------------------

def unpack(data: bytes, out_dir: str | os.PathLike[str], *, caps: Caps = DEFAULT_CAPS,
           source: str = "<archive>") -> tuple[Path, ForeignSkill]:
    """Write the skill in the archive `data` to ``out_dir/NAME/``; return it and the skill.

    Everything is read and checked before anything is written. The folder is built in a
    temp folder beside the target, then renamed onto it (``os.replace``); files get mode
    0644 (0755 when executable), folders 0755. An existing target that is not an empty
    folder is refused. On any failure nothing is left behind, folders created for
    `out_dir` included. An archive whose folder is not named as its skill is written under
    the skill's name, and noted.
    """
    skill = read_foreign(data, caps=caps, source=source)
    if skill.renamed:
        note(f"{source}: its folder {skill.top + '/'!r} is not named as its skill: read as "
             f"{skill.name + '/'!r}, the name SKILL.md gives")
    out = Path(out_dir)
    target = out / skill.name
    _refuse_existing(target)
    created = _make_parents(out)
    tmp: str | None = None
    try:
        tmp = tempfile.mkdtemp(prefix=f".{skill.name}.skillpack-unpack-", dir=out)
        os.chmod(tmp, 0o755)
        for file in skill.files:
            _write(tmp, file)
        _refuse_existing(target)
        os.replace(tmp, target)
        tmp = None
        fsync_folder(out)
    except WriteError:
        raise
    except OSError as exc:
        message = f"could not unpack: {exc.strerror or exc}; nothing was written"
        raise WriteError(message, path=str(target), hint="check the output folder and the "
                         "disk, then run the command again",
                         problems=[Problem("error", "write-failed", message, str(target))]
                         ) from None
    finally:
        if tmp is not None:
            remove_tree(tmp)
            _remove_created(created)
    return target, skill


@contextmanager
def unpacked(data: bytes, *, caps: Caps = DEFAULT_CAPS,
             source: str = "<archive>") -> Iterator[tuple[Path, ForeignSkill]]:
    """``with unpacked(data) as (folder, skill):`` the skill unpacked in a temp folder.

    For commands that take an archive where they take a folder (digest, verify, bundle,
    inspect, check): they run on `folder` with every rule of the walk (ignore lists,
    ``includes:``), so the digest is the one the folder it was made from has. The temp
    folder is removed on leaving the block.
    """
    tmp = tempfile.mkdtemp(prefix="skillpack-unpacked-")
    try:
        yield unpack(data, tmp, caps=caps, source=source)
    finally:  # a level at a time: a tree 1,000 folders deep is removed too
        remove_tree(tmp)


def _refuse_existing(target: Path) -> None:
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode) and not os.listdir(target):
        return  # an empty folder: os.replace puts the skill in its place
    what = "a folder that is not empty" if stat.S_ISDIR(info.st_mode) else "not a folder"
    message = f"the target {str(target)!r} already exists and is {what}; nothing was written"
    raise WriteError(message, path=str(target),
                     hint="remove it, or unpack into another folder with -o",
                     problems=[Problem("error", "target-exists", message, str(target))])


def _make_parents(out: Path) -> list[Path]:
    """Create `out` and its missing parents; return those created, deepest last."""
    missing: list[Path] = []
    folder = out
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    created: list[Path] = []
    try:
        for folder in reversed(missing):
            os.mkdir(folder, 0o755)
            created.append(folder)
    except OSError as exc:
        _remove_created(created)
        message = f"could not create the output folder: {exc.strerror or exc}"
        raise WriteError(message, path=str(out), hint="check the output path",
                         problems=[Problem("error", "write-failed", message, str(out))]
                         ) from None
    return created


def _remove_created(created: list[Path]) -> None:
    for folder in reversed(created):
        try:
            os.rmdir(folder)
        except OSError:
            return


def _write(root: str, file: ForeignFile) -> None:
    path = os.path.join(root, *file.path.split("/"))
    parent = os.path.dirname(path)
    make_folders(parent, 0o755)
    mode = 0o755 if file.executable else 0o644
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                 mode)
    try:
        os.fchmod(fd, mode)  # whatever the umask
        view = memoryview(file.data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    _chmod_parents(root, parent)


def _chmod_parents(root: str, folder: str) -> None:
    while len(folder) > len(root):
        os.chmod(folder, 0o755)
        folder = os.path.dirname(folder)
