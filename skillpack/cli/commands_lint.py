"""`skillpack lint`: what an approver should look at beyond what `check` requires."""

from __future__ import annotations

import os
from collections.abc import Sequence

import click

from skillpack.cli._checks import run_over
from skillpack.cli._common import echo_problem, echo_text, finish
from skillpack.packing.check import CheckResult
from skillpack.packing.lint import lint_skill
from skillpack.packing.targets import Layout

__all__ = ["lint_command", "lint_for_check", "summary"]


def lint_for_check(folder: str | os.PathLike[str], *, strict: bool, targets: Sequence[str],
                   catalog_budget: int | None, layout: Layout | None = None) -> CheckResult:
    """What ``skillpack check --lint`` runs for one skill (through `skillpack.cli.COMMANDS`,
    so that `check` alone does not import the lint rules): check's rules, strict when
    check's ``--strict`` is given, then the lint rules."""
    return lint_skill(folder, strict=strict, check_strict=strict, targets=targets,
                      catalog_budget=catalog_budget, layout=layout)


@click.command("lint")
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(exists=True, file_okay=True, dir_okay=True))
@click.option("--strict", is_flag=True,
              help="Treat program-dynamic and run-code-dynamic warnings as errors.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of results.")
def lint_command(paths: tuple[str, ...], strict: bool, as_json: bool) -> None:
    """Lint skills: check's rules, then paths and links to files the skill does not carry,
    unreferenced files, references more than one level deep, body size, a description that
    does not say when to use the skill, programs chosen by a model argument, shell syntax in
    run words, and invisible characters. PATH is a skill folder, its SKILL.md, or a folder
    searched for skills.

    Exit 0 when no skill has an error (info and warnings do not fail), 1 when one has or a
    PATH holds no SKILL.md, 2 for misuse.
    """
    checked = run_over(paths, lambda folder: lint_skill(folder, strict=strict), as_json)
    if as_json:
        checked.echo_json()
    else:
        for result in checked.results:
            for problem in result.problems:
                echo_problem(problem)
        echo_text(summary("linted", checked.results))
        checked.echo_empty()
    finish(checked.failed)


def summary(verb: str, results: list[CheckResult]) -> str:
    """`linted 3 skills: 2 valid, 1 invalid (1 error, 4 warnings, 2 info)`."""
    found = [p.severity for r in results for p in r.problems]
    errors, warnings, infos = (found.count(s) for s in ("error", "warning", "info"))
    invalid = sum(not r.valid for r in results)
    return (f"{verb} {len(results)} skill{'s' * (len(results) != 1)}: "
            f"{len(results) - invalid} valid, {invalid} invalid "
            f"({errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}, "
            f"{infos} info)")
