"""`skillpack check`: parse and validate skills of both dialects (the command's options;
what it does is `skillpack.cli.check_report`)."""

from __future__ import annotations

import click

from skillpack.cli._targets import CATALOG_BUDGET, LAYOUT, TARGET
from skillpack.cli.check_report import check_report


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
    check_report(paths, strict=strict, as_json=as_json, with_lint=with_lint,
                 targets=targets, layout=layout, catalog_budget=catalog_budget)
