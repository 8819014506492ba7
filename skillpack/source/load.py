"""A skill on disk: its SKILL.md read and parsed, its file set walked, its validity gated.

`load_skill` (a skill folder or its SKILL.md) and `parse_skill_file` resolve a path to its
SKILL.md in one way (`skill_md_path`), reading it with `skillpack._regular.read_regular`
(no blocking on a fifo, no device read forever); `require_valid` is the one gate `pack`,
`bundle`, `lock` and `included_files` put a skill through (the errors `skillpack check`
reports).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from skillpack._regular import read_regular
from skillpack.errors import MissingPathError, Problem, SkillError, SkillpackError
from skillpack.formats.paths import SKILL_MD
from skillpack.skillmd.skill import Skill, parse_skill
from skillpack.skillmd.validate import validate_skill
from skillpack.source.discover import miscased_skill_md
from skillpack.source.fileset import FileSet
from skillpack.source.walk import walk

__all__ = [
    "load_skill",
    "parse_skill_file",
    "require_valid",
    "skill_fileset",
    "skill_md_path",
]


def skill_md_path(path: str | os.PathLike[str]) -> str:
    """The SKILL.md a path names: the path itself, or the SKILL.md of the folder it names
    (a SKILL.md that is itself a folder is named as it is, to be refused when read), spelt
    as `pathlib` spells it."""
    spelt = Path(path)
    if spelt.name != SKILL_MD and os.path.isdir(spelt):
        return str(spelt / SKILL_MD)
    return str(spelt)


def load_skill(path: str | os.PathLike[str]) -> Skill:
    """Parse the skill at `path`: a skill folder or its SKILL.md."""
    text = os.fspath(path)
    if not os.path.lexists(text):
        raise MissingPathError("no such file or folder", path=text,
                               hint="give a skill folder or its SKILL.md")
    where = skill_md_path(text)
    if not os.path.isfile(where) and _miscased(where) is None:
        raise SkillpackError("no SKILL.md here", path=text,
                             hint="give a skill folder or its SKILL.md")
    return parse_skill_file(where)


def _miscased(where: str) -> SkillError | None:
    """The error for a SKILL.md spelt in another case (``skill.md``), or None."""
    folder, name = os.path.split(where)
    if name != SKILL_MD and name.lower() == SKILL_MD.lower():
        found: str | None = name
    else:
        found = miscased_skill_md(folder or ".")
    if found is None:
        return None
    file = os.path.join(folder, found)
    message = (f"the skill's file is named {found!r}, not 'SKILL.md': rename it to SKILL.md "
               "(skill hosts on Linux are case-sensitive: it works on a Mac and nowhere else)")
    return SkillError(message, path=file, hint=f"mv {found} SKILL.md",
                      problems=[Problem("error", "skill-md-case", message, file)])


def parse_skill_file(path: str | os.PathLike[str]) -> Skill:
    """Read and parse a SKILL.md (or the SKILL.md of a skill folder); a path that does not
    exist raises `MissingPathError` (a `FileNotFoundError`)."""
    text = os.fspath(path)
    where = skill_md_path(text)
    wrong_case = _miscased(where)
    if wrong_case is not None:
        raise wrong_case
    if not os.path.lexists(text):
        raise MissingPathError("no such file or folder", path=text,
                               hint="give a skill folder or its SKILL.md")
    try:
        raw = read_regular(where)
    except FileNotFoundError:
        raise SkillError("there is no SKILL.md here", path=where,
                         hint="a skill is a folder holding SKILL.md") from None
    except OSError as exc:
        raise SkillError(f"cannot read SKILL.md: {exc.strerror}", path=where) from None
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        message = f"SKILL.md is not valid UTF-8 (byte {exc.start}); save it as UTF-8"
        raise SkillError(message, path=where, line=line,
                         problems=[Problem("error", "encoding", message, where, line)]) from None
    return parse_skill(source, file=where, workdir=str(Path(where).parent))


def skill_fileset(
    skill: Skill | str | os.PathLike[str], *, read: bool = False, keep: int = 0,
    outputs: Mapping[str, str] | None = None, sha256: bool = False,
    member_limit: int | None = None, size_limit: int | None = None,
) -> FileSet:
    """The file set of a parsed skill (or of the skill at a path), walked with its includes
    and secret allowances. Names only (unless `read`, see `walk`): the content check is
    `skillpack.source.records.hash_files`. `outputs`: what the running command writes inside
    the skill folder, left out (see `walk`); `member_limit`: refused right after listing
    when the files and the manifest are more zip members than that, `size_limit` when they
    make an archive that large (see `walk`)."""
    if isinstance(skill, str | os.PathLike):
        skill = load_skill(skill)
    if skill.workdir is None:
        raise SkillpackError(
            f"skill {skill.name!r} was not read from a folder, so it has no file set",
            hint="parse it with parse_skill_file",
        )
    return walk(skill.workdir, skill.include_list, allow=skill.secret_allowances, read=read,
                keep=keep, outputs=outputs, sha256=sha256, member_limit=member_limit,
                size_limit=size_limit)


def require_valid(skill: Skill, *, what: str = "packed", source: str | None = None) -> None:
    """Raise `SkillError` with every error `skillpack check` finds in `skill`."""
    errors = [p for p in validate_skill(skill) if p.severity == "error"]
    if errors:
        name = skill.name or os.path.basename(os.path.normpath(source or skill.workdir or ""))
        raise SkillError(
            f"skill '{name}' is invalid and cannot be {what}: {errors[0].message}",
            path=source or skill.workdir, problems=errors,
            hint="fix what `skillpack check` reports, then try again",
        )
