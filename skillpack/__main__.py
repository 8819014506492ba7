"""``python -m skillpack``: the same process as the `skillpack` console script; and
``skillpack-pre-commit-check``, the entry of the pre-commit hook ``skillpack-check`` (see
.pre-commit-hooks.yaml).

pre-commit passes the files a commit touches; a skill is checked as a whole, so each file is
mapped to the skill folder holding it (its nearest folder, itself included, that
`skillpack.source.discover` finds as a skill) and those folders are checked, each once.
Files in no skill are left out.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from skillpack._launch import run
from skillpack.cli.app import outcome
from skillpack.source.discover import is_skill_folder

__all__ = ["precommit_check", "skill_folders"]


def skill_folders(files: Sequence[str]) -> list[str]:
    """The skill folders holding `files`, sorted, each once; a file in no skill gives none."""
    found: set[str] = set()
    for name in files:
        path = Path(name)
        for folder in (path, *path.parents) if path.is_dir() else path.parents:
            if is_skill_folder(folder):
                found.add(str(folder))
                break
    return sorted(found)


def precommit_check(argv: Sequence[str] | None = None) -> int:
    """``skillpack check [OPTIONS] FOLDER...`` on the skills holding the files in `argv`
    (arguments starting with ``-`` are passed on as options); 0 when no file is in a skill."""
    args = list(sys.argv[1:] if argv is None else argv)
    options = [a for a in args if a.startswith("-")]
    folders = skill_folders([a for a in args if not a.startswith("-")])
    if not folders:
        return 0
    return outcome(["check", *options, *folders])


if __name__ == "__main__":
    run()
