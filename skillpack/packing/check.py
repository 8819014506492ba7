"""`skillpack check`: parse and validate a skill on disk, every problem as a `Problem`.

The library form of the command: nothing is raised for a bad skill, every problem comes back
in a `CheckResult` (the rules themselves are `skillpack.skillmd.validate`; the hosts' limits
`skillpack.packing.targets`). `check_skills` checks many, shared among processes when asked
(`in_processes`: read-only work, results in order, the same as one process gives).
`catalog_report` measures what a set of skills costs in a model's context: each description
and the whole `catalog_text()` of their bundle.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from skillpack.errors import Problem, SkillpackError
from skillpack.formats.catalog_text import catalog_of
from skillpack.formats.paths import SKILL_MD
from skillpack.packing.prepare import PackOptions, judge_skill
from skillpack.packing.targets import Layout, default_layout, get_targets
from skillpack.skillmd.skill import Skill

__all__ = ["DUPLICATE_NAME", "MIN_SHARE", "CatalogReport", "CheckResult", "catalog_report",
           "check_skill", "check_skills", "in_processes", "name_clashes",
           "with_clashes"]

#: The code of two different skills with one name (`name_clashes`).
DUPLICATE_NAME = "duplicate-name"

T = TypeVar("T")
R = TypeVar("R")

#: The fewest skills worth a process of their own (starting one costs about as much as
#: checking a few skills).
MIN_SHARE = 8


@dataclass(frozen=True, slots=True)
class CheckResult:
    """What `check_skill` found in one skill folder; ``description`` when it has one (its
    length is what the skill costs in the catalog), ``digest`` when its files were hashed
    (two skills with one name and one digest are one skill: `name_clashes`)."""

    skill: str
    path: str
    problems: tuple[Problem, ...]
    description: str | None = None
    digest: str | None = field(default=None, compare=False)

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
                targets: Sequence[str] = (), catalog_budget: int | None = None,
                layout: Layout | None = None, ignore: Iterable[str] = (),
                advice: bool = False) -> CheckResult:
    """Parse and validate the skill at ``path`` (its folder or its SKILL.md).

    The verdict `pack` gives (`skillpack.packing.prepare.judge_skill`, with the same
    ``targets``, ``layout`` and ``catalog_budget``): parse errors, rule violations, what the
    walk, the content checks and the limits refuse and, for each of ``targets`` (host names
    of `skillpack.packing.targets.TARGETS`; none: the spec only), the host's limits measured
    on the archive pack would write, all together as problems; nothing is raised for a bad
    skill. Keys every target documents draw no unknown-key warning. ``catalog_budget`` is
    the per-skill listing budget in characters (``--catalog-budget``). With ``strict``
    every warning becomes an error. A warning whose code is in ``ignore`` is left out
    (``--ignore``). With ``advice``, what a target advises but its host does not enforce is
    reported too, as info (``--advice``). An unknown target name, or targets that want
    different layouts when ``layout`` is None, raise `SkillError` (as `pack` does).
    """
    return check_parsed(path, strict=strict, targets=targets, catalog_budget=catalog_budget,
                        layout=layout, ignore=ignore, advice=advice)[0]


def check_parsed(path: str | os.PathLike[str], *, strict: bool = False,
                 targets: Sequence[str] = (), catalog_budget: int | None = None,
                 layout: Layout | None = None, ignore: Iterable[str] = (),
                 advice: bool = False) -> tuple[CheckResult, Skill | None]:
    """`check_skill`, and the skill it parsed (None when SKILL.md does not parse), for
    what reads the skill further (`skillpack.packing.lint`)."""
    options = PackOptions(tuple(targets), layout, catalog_budget, frozenset(ignore), advice)
    get_targets(targets)  # an unknown name is the caller's mistake: raised, not reported
    if layout is None:  # so are targets that disagree on the layout
        default_layout(targets)
    where = Path(path)
    if where.name == SKILL_MD and not where.is_dir():
        where = where.parent
    folder = str(where)
    verdict = judge_skill(folder, options=options, sha256=False)  # measured, not written
    skill = verdict.skill
    if skill is None:
        return CheckResult(where.name, folder, tuple(_strict(verdict.problems, strict))), None
    description = skill.frontmatter.get("description")
    return CheckResult(skill.name or where.name, folder,
                       tuple(_strict(verdict.problems, strict)),
                       description if isinstance(description, str) else None,
                       verdict.digest), skill


def check_skills(folders: Sequence[str], check: Callable[[str], CheckResult] = check_skill, *,
                 jobs: int = 1) -> list[CheckResult]:
    """``[check(folder) for folder in folders]``, shared among up to `jobs` processes
    (`in_processes`; `check` must pickle: a module function, or a `functools.partial` of
    one)."""
    done = in_processes(check, folders, jobs)
    return [check(folder) if result is None else result
            for result, folder in zip(done, folders, strict=True)]


def in_processes(work: Callable[[T], R], items: Sequence[T], jobs: int) -> list[R | None]:
    """``work(item)`` of each item, in order, done by up to `jobs` processes
    (`concurrent.futures`, at least `MIN_SHARE` items each, forked only while this process
    runs no other thread); None for an item to do here: every item when one process is all
    it takes, and an item whose work raised there (done again here, where it raises).
    Read-only work: what the items write is this process's business."""
    workers = min(jobs, len(items) // MIN_SHARE)
    if workers <= 1 or threading.active_count() > 1:
        return [None] * len(items)
    pool = ProcessPoolExecutor(workers)
    try:
        return list(pool.map(functools.partial(_or_none, work), items,
                             chunksize=max(1, len(items) // (workers * 8))))
    finally:  # an interrupt: the items not started are dropped, not waited for
        pool.shutdown(cancel_futures=True)


def _or_none(work: Callable[[T], R], item: T) -> R | None:
    try:
        return work(item)
    except SkillpackError:
        return None


@dataclass(frozen=True, slots=True)
class CatalogReport:
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


def _strict(problems: Sequence[Problem], strict: bool) -> list[Problem]:
    if not strict:
        return list(problems)
    return [
        Problem("error", p.code, p.message, p.file, p.line) if p.severity == "warning" else p
        for p in problems
    ]


def name_clashes(skills: Iterable[tuple[str, str | None, str]]) -> list[Problem]:
    """Two different skills with one name, which `check` reports and `bundle`, `lock`,
    `catalog` and the exports refuse (an agent could not tell them apart): one error
    (`DUPLICATE_NAME`) for each skill whose name an earlier one has, naming both paths.
    `skills` gives each skill's name, digest (None: not known, never the same as another)
    and where it is; the same skill (name and digest) found twice is no clash."""
    first: dict[str, tuple[str | None, str]] = {}
    problems: list[Problem] = []
    for name, digest, where in skills:
        if name not in first:
            first[name] = (digest, where)
            continue
        known, there = first[name]
        if digest is not None and digest == known:
            continue
        problems.append(Problem(
            "error", DUPLICATE_NAME, f"two different skills are named '{name}': {there} "
            f"and {where}; rename one, or leave one out (--exclude)", where))
    return problems


def with_clashes(results: Sequence[CheckResult], *, strict: bool = False
                 ) -> list[CheckResult]:
    """`results` with each skill whose name an earlier (different) one has carrying that
    clash (`name_clashes`): what `bundle`, `lock`, `catalog` and the exports refuse, `check`
    reports. A warning (each skill still packs on its own; `strict`: an error)."""
    clashes = {p.file: p for p in name_clashes((r.skill, r.digest, r.path) for r in results)}
    return [r if r.path not in clashes else
            CheckResult(r.skill, r.path, (*r.problems, _clash(clashes[r.path], strict)),
                        r.description, r.digest) for r in results]


def _clash(problem: Problem, strict: bool) -> Problem:
    return Problem("error" if strict else "warning", problem.code,
                   problem.message.replace("; rename one", ", which bundle, lock, catalog "
                                           "and export refuse; rename one"), problem.file)
