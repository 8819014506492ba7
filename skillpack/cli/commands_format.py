"""`skillpack check`: parse and validate skills of both dialects."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from skillpack.build.check import CheckResult, catalog_report, check_skill
from skillpack.build.prepare import PackOptions
from skillpack.build.targets import Layout
from skillpack.cli import command_module
from skillpack.cli._checks import run_over
from skillpack.cli._common import echo_problem, finish
from skillpack.cli._json_errors import json_errors
from skillpack.cli._targets import CATALOG_BUDGET, LAYOUT, TARGET


@click.command()
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(exists=True, file_okay=True, dir_okay=True))
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of results.")
@click.option("--lint", "with_lint", is_flag=True,
              help="Also run the rules of `skillpack lint` (see its --help).")
@TARGET
@LAYOUT
@CATALOG_BUDGET
def check(paths: tuple[str, ...], strict: bool, as_json: bool, with_lint: bool,
          targets: tuple[str, ...], layout: str | None, catalog_budget: int | None) -> None:
    """Validate skills. PATH is a skill folder, its SKILL.md, or a folder searched for skills.

    The verdict `pack` gives with the same --target, --layout and --catalog-budget: exit 0
    when no skill has an error, 1 when one has or a PATH holds no SKILL.md, 2 for misuse.
    """
    chosen: Layout | None = "root" if layout == "root" else "wrapped" if layout else None
    with json_errors(as_json):  # targets that want different layouts: refused as pack does
        PackOptions(targets, chosen, catalog_budget).chosen_layout  # noqa: B018
    # --lint: the lint command's per-skill function, its module loaded only now
    run: Callable[..., CheckResult] = (command_module("lint").lint_for_check if with_lint
                                       else check_skill)

    def one(folder: Path) -> CheckResult:
        return run(folder, strict=strict, targets=targets, catalog_budget=catalog_budget,
                   layout=chosen)

    checked = run_over(paths, one, as_json)
    results = checked.results
    catalog = catalog_report([(r.skill, r.description) for r in results
                              if r.description is not None])
    if as_json:
        checked.echo_json()
    else:
        for result in results:
            for problem in result.problems:
                echo_problem(problem)
        if catalog.descriptions:  # measured: --target or --catalog-budget given
            for line in catalog.lines():
                click.echo(line)
        errors = sum(p.severity == "error" for r in results for p in r.problems)
        warnings = sum(p.severity == "warning" for r in results for p in r.problems)
        invalid = sum(not r.valid for r in results)
        click.echo(
            f"checked {len(results)} skill{'s' * (len(results) != 1)}: "
            f"{len(results) - invalid} valid, {invalid} invalid "
            f"({errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)})"
        )
    if not as_json:
        checked.echo_empty()
    finish(checked.failed)
