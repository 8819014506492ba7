"""Finding skills under a path: a SKILL.md, a skill folder, or a folder of skills."""

from __future__ import annotations

import os
from pathlib import Path

from skillpack.build.ignore import BUILTIN_DIRS, MANIFEST_DIR
from skillpack.errors import SkillpackError
from skillpack.spec.paths import SKILL_MD

__all__ = ["SKIP_DIRS", "find_skills"]

#: Folders the search never enters: those the walk leaves out.
SKIP_DIRS = frozenset({*BUILTIN_DIRS, MANIFEST_DIR})


def _is_skill_dir(path: str) -> bool:
    """A folder holding an entry named SKILL.md that is not a folder. A SKILL.md that is a
    symlink, a fifo or a device still makes a skill, so that its checks refuse it saying
    why, rather than it being skipped in silence (and the search never follows it)."""
    skill_md = os.path.join(path, SKILL_MD)
    return os.path.lexists(skill_md) and (os.path.islink(skill_md)
                                          or not os.path.isdir(skill_md))


def find_skills(path: str | os.PathLike[str]) -> list[Path]:
    """The skill folders at `path`, sorted by path.

    A SKILL.md gives its folder; a folder holding SKILL.md is one skill (not searched further);
    any other folder is searched, without following symlinks and skipping version-control and
    ``__pycache__`` folders. Returns [] when there is none; raises `SkillpackError` when
    `path` does not exist.
    """
    text = os.fspath(path)
    if not os.path.lexists(text):
        raise SkillpackError(
            "no such file or folder", path=text, hint="give a skill folder, its SKILL.md, or "
            "a folder of skills"
        )
    if not os.path.isdir(text):  # a SKILL.md (even a fifo or a link: its checks say why)
        return [Path(text).parent] if os.path.basename(text) == SKILL_MD else []
    if _is_skill_dir(text):
        return [Path(text)]
    found: list[Path] = []
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
        for entry in entries:
            if entry.name in SKIP_DIRS or not entry.is_dir(follow_symlinks=False):
                continue
            if _is_skill_dir(entry.path):
                found.append(Path(entry.path))
            else:
                stack.append(entry.path)
    return sorted(found)
