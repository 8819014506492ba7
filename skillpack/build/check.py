"""`skillpack check`: parse and validate a skill on disk, every problem as a `Problem`.

The library form of the command: nothing is raised for a bad skill, every problem comes back
in a `CheckResult` (the rules themselves are `skillpack.skillmd.validate`; the hosts' limits
`skillpack.build.targets`). `catalog_report` measures what a set of skills costs in a
model's context: each description and the whole `catalog_text()` of their bundle.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillpack._record import Record
from skillpack.build.load import parse_skill_file, skill_fileset
from skillpack.build.prepare import prepare_parsed
from skillpack.build.records import hash_files
from skillpack.build.targets import (
    DEFAULT_TARGET,
    SkillFacts,
    accepted_keys,
    check_targets,
    get_targets,
)
from skillpack.errors import Problem, SkillError, SkillpackError
from skillpack.skillmd.skill import Skill
from skillpack.skillmd.validate import validate_skill
from skillpack.spec.catalog_text import catalog_of
from skillpack.spec.paths import SKILL_MD

__all__ = ["CatalogReport", "CheckResult", "catalog_report", "check_skill", "pack_problems",
           "target_problems"]


class CheckResult(Record):
    """What `check_skill` found in one skill folder; ``description`` when checked for hosts
    (``targets`` or ``catalog_budget`` given) and it has one."""

    skill: str
    path: str
    problems: tuple[Problem, ...]
    description: str | None = None

    @property
    def valid(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"name": self.skill, "path": self.path, "valid": self.valid}
        if self.description is not None:
            found["description_chars"] = len(self.description)
        found["problems"] = [p.to_dict() for p in self.problems]
        return found


def check_skill(path: str | os.PathLike[str], *, strict: bool = False,
                targets: Sequence[str] = (), catalog_budget: int | None = None) -> CheckResult:
    """Parse and validate the skill at ``path`` (its folder or its SKILL.md).

    Parse errors, rule violations and, for each of ``targets`` (host names of
    `skillpack.build.targets.TARGETS`; none: the spec only), the host's limits come back
    together as problems; nothing is raised for a bad skill. Keys every target documents
    draw no unknown-key warning. ``catalog_budget`` is the per-skill listing budget in
    characters (``--catalog-budget``). With ``strict`` every warning becomes an error. An
    unknown target name raises `SkillError`.
    """
    get_targets(targets)  # an unknown name is the caller's mistake: raised, not reported
    folder = Path(path)
    if folder.name == SKILL_MD and not folder.is_dir():
        folder = folder.parent
    try:
        skill = parse_skill_file(folder)
    except SkillError as err:
        problems = err.problems or (Problem("error", "parse", err.message, err.path, err.line),)
        return CheckResult(folder.name, str(folder), tuple(_strict(problems, strict)))
    found = validate_skill(skill, accepted_keys(targets))
    refused = pack_problems(skill, folder,
                            valid=not any(p.severity == "error" for p in found))
    found.extend(refused)
    if not refused and ([t for t in targets if t != DEFAULT_TARGET]
                        or catalog_budget is not None):
        found.extend(target_problems(skill, targets, catalog_budget=catalog_budget))
    description = skill.frontmatter.get("description")
    measured = bool(targets) or catalog_budget is not None  # the catalog is a host's concern
    return CheckResult(skill.name or folder.name, str(folder), tuple(_strict(found, strict)),
                       description if measured and isinstance(description, str) else None)


def pack_problems(skill: Skill, folder: str | os.PathLike[str], *,
                  valid: bool = True) -> list[Problem]:
    """What `pack` would refuse in a parsed skill's files: the very walk, hashing, content
    checks and limits `skillpack.build.pack.prepare_parsed` runs (a `valid` skill goes
    through all of it; an invalid one through the walk and the hashing, for every problem in
    one report). Each problem's file is the path below ``folder``, as a person finds it."""
    try:
        if valid:
            prepare_parsed(skill, folder)
        else:
            hash_files(skill_fileset(skill, read=True))
    except SkillpackError as err:
        problems = err.problems or (Problem("error", "refused", err.message, err.path,
                                            err.line),)
        return [Problem(p.severity, p.code, p.message, os.path.join(folder, p.file), p.line)
                if p.file is not None and not os.path.isabs(p.file) else p
                for p in problems]
    return []


def target_problems(skill: Skill, targets: Sequence[str], *,
                    catalog_budget: int | None = None) -> list[Problem]:
    """The hosts' problems with a parsed skill on disk (its files walked, names and sizes
    only), each target checked in its own layout: no archive is made here. A walk that
    refuses the skill (a secret, a link) is a problem too."""
    try:
        fileset = skill_fileset(skill)
    except SkillpackError as err:
        return list(err.problems or (Problem("error", "refused", err.message, err.path),))
    facts = SkillFacts.from_files(skill.name, skill.frontmatter,
                                  [(f.path, f.size) for f in fileset.files], file=skill.file,
                                  lines=skill.lines)
    problems: list[Problem] = []
    for target in get_targets(targets) or get_targets([DEFAULT_TARGET]):
        problems.extend(check_targets([target.name],
                                      facts.with_layout(target.layout or "wrapped"),
                                      catalog_budget=catalog_budget))
    return problems


class CatalogReport(Record):
    """What a set of skills costs in a model's context on every turn: each description's
    length and the characters of the catalog their bundle's ``catalog_text()`` gives."""

    descriptions: tuple[tuple[str, int], ...]  # (name, characters), sorted by name
    total: int

    def to_dict(self) -> dict[str, Any]:
        return {"total_chars": self.total,
                "skills": [{"name": n, "description_chars": c} for n, c in self.descriptions]}

    def lines(self) -> list[str]:
        out = [f"catalog: {c:>6,} characters  {n}" for n, c in self.descriptions]
        out.append(f"catalog: {self.total:,} characters in all (catalog_text() of "
                   f"{len(self.descriptions)} skill{'s' * (len(self.descriptions) != 1)})")
        return out


def catalog_report(skills: Sequence[tuple[str, str]]) -> CatalogReport:
    """The catalog of these (name, description) pairs, in the bundle's order (UTF-8 bytes
    of the names); a name given twice counts once (the first)."""
    chosen: dict[str, str] = {}
    for name, description in skills:
        chosen.setdefault(name, description)
    ordered = sorted(chosen.items(), key=lambda item: item[0].encode("utf-8"))
    return CatalogReport(tuple((n, len(d)) for n, d in ordered), len(catalog_of(ordered)))


def _strict(problems: tuple[Problem, ...] | list[Problem], strict: bool) -> list[Problem]:
    if not strict:
        return list(problems)
    return [
        Problem("error", p.code, p.message, p.file, p.line) if p.severity == "warning" else p
        for p in problems
    ]
