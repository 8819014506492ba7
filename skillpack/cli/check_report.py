"""What `skillpack check` does once its arguments are read: check every skill under each
PATH, print the report (or the JSON list) and end with the exit code. Click-free: the click
command (`skillpack.cli.commands_format.check`) and the quick path for plain argument lists
(`skillpack.cli.quick_argv`) both end here, so they print the same bytes."""

from __future__ import annotations

from collections.abc import Callable

from skillpack.cli import command_module
from skillpack.cli._checks import run_over
from skillpack.cli._common import echo, echo_problem, finish
from skillpack.cli._json_errors import json_errors
from skillpack.packing.check import CheckResult, catalog_report, check_skill
from skillpack.packing.prepare import PackOptions
from skillpack.packing.targets import Layout

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from typing import NoReturn

__all__ = ["check_report"]


def check_report(paths: tuple[str, ...], *, strict: bool = False, as_json: bool = False,
                 with_lint: bool = False, targets: tuple[str, ...] = (),
                 layout: str | None = None, catalog_budget: int | None = None) -> NoReturn:
    """Check the skills under `paths` and end the command: 0 when no skill has an error,
    1 when one has or a PATH holds no SKILL.md (2 for options that contradict each other)."""
    chosen: Layout | None = "root" if layout == "root" else "wrapped" if layout else None
    with json_errors(as_json):  # targets that want different layouts: refused as pack does
        PackOptions(targets, chosen, catalog_budget).chosen_layout  # noqa: B018
    # --lint: the lint command's per-skill function, its module loaded only now
    run: Callable[..., CheckResult] = (command_module("lint").lint_for_check if with_lint
                                       else check_skill)

    def one(folder: str) -> CheckResult:
        return run(folder, strict=strict, targets=targets, catalog_budget=catalog_budget,
                   layout=chosen)

    checked = run_over(paths, one, as_json, workers=not with_lint)  # lint: its own results
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
                echo(line)
        errors = sum(p.severity == "error" for r in results for p in r.problems)
        warnings = sum(p.severity == "warning" for r in results for p in r.problems)
        invalid = sum(not r.valid for r in results)
        echo(
            f"checked {len(results)} skill{'s' * (len(results) != 1)}: "
            f"{len(results) - invalid} valid, {invalid} invalid "
            f"({errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)})"
        )
    if not as_json:
        checked.echo_empty()
    finish(checked.failed)
