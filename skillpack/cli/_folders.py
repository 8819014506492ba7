"""What `files`, `digest` and `programs` share: the skill folders (and, for `digest`, the
archives) under each PATH, and how a PATH or a skill that fails is reported: on stderr, or
as an item of the ``--json`` list. Click-free: `digest` may run without click
(`skillpack.cli.quick_argv`)."""

from __future__ import annotations

import os

from skillpack.cli._common import echo_text, report_error
from skillpack.cli._json_errors import item_failure, no_skill_error
from skillpack.errors import SkillpackError
from skillpack.source.discover import archives_in, find_skill_folders, first_seen
from skillpack.source.pathtext import spelling

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from typing import Any

__all__ = ["report_failure", "skill_folders"]


def skill_folders(paths: tuple[str, ...], *, archives: set[str] | None = None,
                  failures: list[dict[str, Any]] | None = None) -> tuple[list[str], bool]:
    """The skill folders under every PATH, spelt as pathlib spells them, and whether some
    PATH held none: said on stderr, or added to `failures` (``--json``). With an `archives`
    set, archive files (a PATH, or the archives of a folder of them) are kept among the
    folders as they are, and each kept one is added to the set: the caller tells them apart
    without asking the filesystem again."""
    found: list[str] = []
    seen: set[str] = set()  # a skill (or archive) under two PATHs: read and reported once
    empty = False
    for path in paths:
        if (archives is not None and os.path.isfile(path)
                and os.path.basename(path).lower() != "skill.md"):
            kept = first_seen([spelling(path)], seen)
            archives.update(kept)
            found.extend(kept)
            continue
        try:
            folders = find_skill_folders(path)
        except SkillpackError as err:
            report_failure(path, err, failures)
            empty = True
            continue
        held = archives_in(path) if not folders and archives is not None else []
        if held and archives is not None:  # a folder of archives (listed once)
            kept = first_seen([spelling(p) for p in held], seen)
            archives.update(kept)
            found.extend(kept)
            continue
        if not folders:
            if failures is None:
                echo_text(f"skillpack: no SKILL.md found in {path}", err=True)
            else:
                failures.append(item_failure(path, no_skill_error(path)))
            empty = True
        found.extend(first_seen(folders, seen))
    return found, empty


def report_failure(path: str, err: SkillpackError,
                   failures: list[dict[str, Any]] | None) -> None:
    """Report a failed PATH or skill: on stderr, or as an item of the JSON list
    (``failures``)."""
    if failures is None:
        report_error(err)
    else:
        failures.append(item_failure(str(path), err))
