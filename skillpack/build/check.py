"""`skillpack check`: parse and validate a skill on disk, every problem as a `Problem`.

The library form of the command: nothing is raised for a bad skill, every problem comes back
in a `CheckResult` (the rules themselves are `skillpack.skillmd.validate`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillpack.build.load import parse_skill_file
from skillpack.errors import Problem, SkillError
from skillpack.skillmd.validate import validate_skill
from skillpack.spec.paths import SKILL_MD

__all__ = ["CheckResult", "check_skill"]


@dataclass(frozen=True)
class CheckResult:
    """What `check_skill` found in one skill folder."""

    skill: str
    path: str
    problems: tuple[Problem, ...]

    @property
    def valid(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)

    def to_dict(self) -> dict[str, Any]:
        return {
            "skill": self.skill,
            "path": self.path,
            "valid": self.valid,
            "problems": [p.to_dict() for p in self.problems],
        }


def check_skill(path: str | os.PathLike[str], *, strict: bool = False) -> CheckResult:
    """Parse and validate the skill at ``path`` (its folder or its SKILL.md).

    Parse errors and rule violations come back together as problems; nothing is raised for
    a bad skill. With ``strict`` every warning becomes an error.
    """
    folder = Path(path)
    if folder.name == SKILL_MD and not folder.is_dir():
        folder = folder.parent
    try:
        skill = parse_skill_file(folder)
    except SkillError as err:
        problems = err.problems or (Problem("error", "parse", err.message, err.path, err.line),)
        return CheckResult(folder.name, str(folder), tuple(_strict(problems, strict)))
    found = validate_skill(skill)
    return CheckResult(skill.name or folder.name, str(folder), tuple(_strict(found, strict)))


def _strict(problems: tuple[Problem, ...] | list[Problem], strict: bool) -> list[Problem]:
    if not strict:
        return list(problems)
    return [
        Problem("error", p.code, p.message, p.file, p.line) if p.severity == "warning" else p
        for p in problems
    ]

