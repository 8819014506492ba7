"""`skillpack check` and `skillpack lint`: one per-skill check over every skill under each
PATH, every problem printed (or the JSON list), and the PATHs that failed as a whole."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import click

from skillpack.cli.many import selection
from skillpack.cli.options import (
    CATALOG_BUDGET,
    EXCLUDE,
    IGNORE,
    JSON,
    LAYOUT,
    TARGET,
    command,
    jobs,
    paths,
)
from skillpack.cli.output import (
    echo,
    echo_json,
    echo_problem,
    echo_text,
    item_failure,
)
from skillpack.errors import NoSkillError, Problem, SkillpackError
from skillpack.packing.check import (
    CheckResult,
    catalog_report,
    check_skill,
    check_skills,
    with_clashes,
)
from skillpack.packing.lint import lint_skill
from skillpack.packing.targets import Layout, default_layout
from skillpack.packing.verify import as_skill_folders
from skillpack.source.classify import Exclude, Input, classify, no_skill

__all__ = ["check", "lint", "summary"]


@dataclass
class Checked:
    """The results of one per-skill check over PATHs, and the PATHs that failed as a whole."""

    results: list[CheckResult] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)  # PATHs holding no skill
    excluded: list[str] = field(default_factory=list)  # what --exclude left out
    broken: list[dict[str, Any]] = field(default_factory=list)  # with --json, failed PATHs

    @property
    def code(self) -> int:
        return int(bool(self.empty or self.broken or any(not r.valid for r in self.results)))

    def echo_json(self) -> None:
        """One JSON list: each skill's result, then each PATH that failed as a whole."""
        echo_json([r.to_dict() for r in self.results] + self.broken + [
            item_failure(path, no_skill(path)) | {"valid": False} for path in self.empty])

    def echo_empty(self) -> None:
        """On stderr: each PATH holding no skill, then how many --exclude left out (the
        note of every many-skill command)."""
        for path in self.empty:
            echo_text(f"skillpack: no SKILL.md found in {path}", err=True)
        if self.excluded:
            count = len(self.excluded)
            echo(f"skillpack: excluded {count} skill{'s' * (count != 1)} or archive"
                 f"{'s' * (count != 1)} (--exclude)", err=True)


def run_over(paths: Iterable[str], check: Callable[[str], CheckResult],
             as_json: bool, exclude: Exclude | None = None, strict: bool = False) -> Checked:
    """`check` on every skill under each PATH (an archive's: verified, then written out),
    each once, those `exclude` matches left out; the skill folders shared among processes
    (`check_skills`); two skills with one name reported (`with_clashes`). A PATH that
    cannot be read ends the command (exit 1), or with `as_json` becomes a failed item of the
    list; one holding no skill is listed apart."""
    checked = Checked()
    seen: set[str] = set()
    found: list[Input] = []
    for path in paths:
        try:
            inputs = classify(path, seen=seen, exclude=exclude or Exclude())
        except NoSkillError:
            checked.empty.append(path)
        except SkillpackError as err:
            if not as_json:
                raise
            checked.broken.append(item_failure(path, err) | {"valid": False})
        else:
            found += inputs.items
            checked.excluded += inputs.excluded
    folders = iter(check_skills([i.path for i in found if i.kind == "folder"], check,
                                jobs=jobs()))
    for item in found:
        checked.results += [next(folders)] if item.kind == "folder" else _archive(item, check)
    checked.results = with_clashes(checked.results, strict=strict)
    return checked


def _archive(item: Input, check: Callable[[str], CheckResult]) -> list[CheckResult]:
    """`check` of each skill of an archive, named as the user knows them; an archive that
    does not verify or unpack is one result, its problems."""
    try:
        with as_skill_folders([item]) as folders:
            return [_shown(check(f.path), f) for f in folders]
    except SkillpackError as err:
        problems = err.as_problems(item.path)
        return [CheckResult(os.path.basename(item.path), item.path, tuple(problems))]


def _shown(result: CheckResult, folder: Input) -> CheckResult:
    """`result` of a skill written out from an archive, its paths below the archive."""
    return CheckResult(result.skill, folder.shown(result.path), tuple(
        p if p.file is None else Problem(p.severity, p.code, p.message, folder.shown(p.file),
                                         p.line) for p in result.problems),
        result.description, result.digest)


def summary(verb: str, results: list[CheckResult], *, infos: bool = True) -> str:
    """``checked 3 skills: 2 valid, 1 invalid (1 error, 4 warnings)`` (and ``, 2 info``)."""
    found = [p.severity for r in results for p in r.problems]
    errors, warnings, info = (found.count(s) for s in ("error", "warning", "info"))
    invalid = sum(not r.valid for r in results)
    return (f"{verb} {len(results)} skill{'s' * (len(results) != 1)}: "
            f"{len(results) - invalid} valid, {invalid} invalid "
            f"({errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
            + (f", {info} info)" if infos else ")"))


@command()
@paths()
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@JSON
@click.option("--lint", "with_lint", is_flag=True,
              help="Also run the rules of `skillpack lint` (see its --help).")
@TARGET
@LAYOUT
@CATALOG_BUDGET
@click.option("--advice", is_flag=True,
              help="Also report, as info, what a --target advises but its host does not "
                   "enforce (docs/TARGETS.md).")
@EXCLUDE
@IGNORE
def check(paths: tuple[str, ...], strict: bool, as_json: bool, with_lint: bool,
          targets: tuple[str, ...], layout: str | None, catalog_budget: int | None,
          advice: bool) -> int:
    """Validate skills. PATH is a skill folder, its SKILL.md, a folder searched for skills,
    a folder of archives, or an archive (verified, then checked as the folder it holds).

    The verdict `pack` gives with the same --target, --layout and --catalog-budget, and
    two skills with one name (which bundle, lock, catalog and export refuse); each
    description's catalog length. Exit 0 when no skill has an error, 1 when one has or a
    PATH holds no SKILL.md, 2 for misuse. `validate` is another name for it.
    """
    chosen = cast("Layout | None", layout)
    if chosen is None:  # targets that want different layouts: refused as pack does
        default_layout(targets)
    picked = selection()
    hosts: dict[str, Any] = {"targets": targets, "catalog_budget": catalog_budget,
                             "layout": chosen, "ignore": picked.ignore, "advice": advice}
    one = (functools.partial(lint_skill, strict=strict, check_strict=strict, **hosts)
           if with_lint else functools.partial(check_skill, strict=strict, **hosts))
    checked = run_over(paths, one, as_json, picked.excluder, strict)
    if as_json:
        checked.echo_json()
        return checked.code
    results = checked.results
    for result in results:
        for problem in result.problems:
            echo_problem(problem)
    catalog = catalog_report([(r.skill, r.description) for r in results
                              if r.description is not None])
    if catalog.descriptions:  # what each description costs in the catalog, as bundle says
        for line in catalog.lines():
            echo(line)
    echo(summary("checked", results, infos=False))
    checked.echo_empty()
    return checked.code


@command()
@paths()
@click.option("--strict", is_flag=True,
              help="Treat program-dynamic and run-code-dynamic warnings as errors.")
@JSON
@EXCLUDE
@IGNORE
def lint(paths: tuple[str, ...], strict: bool, as_json: bool) -> int:
    """Lint skills: check's rules, then paths and links to files the skill does not carry,
    unreferenced files, references more than one level deep, body size, a description that
    does not say when to use the skill, programs chosen by a model argument, shell syntax in
    run words, and invisible characters. PATH is what `check` takes.

    Exit 0 when no skill has an error (info and warnings do not fail), 1 when one has or a
    PATH holds no SKILL.md, 2 for misuse.
    """
    picked = selection()
    checked = run_over(paths, functools.partial(lint_skill, strict=strict,
                                                ignore=picked.ignore), as_json,
                       picked.excluder)
    if as_json:
        checked.echo_json()
        return checked.code
    for result in checked.results:
        for problem in result.problems:
            echo_problem(problem)
    echo_text(summary("linted", checked.results))
    checked.echo_empty()
    return checked.code
