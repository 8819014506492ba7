"""`skillpack pack`: its own module, so that its start-up is the build side's alone (not
signing's and verifying's, which `skillpack.cli.commands_build` imports: about 100 ms)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from skillpack.build.pack import PackOptions, pack_prepared, pack_skills, prepare_many
from skillpack.cli._common import echo_json
from skillpack.cli._json_errors import json_errors
from skillpack.cli._stdout import refuse_dash
from skillpack.cli._targets import CATALOG_BUDGET, LAYOUT, TARGET
from skillpack.cli._workers import in_workers

__all__ = ["pack"]

_EXISTING = click.Path(exists=True, file_okay=True, dir_okay=True)
_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
_PROGRESS_FROM = 256 * 1024 * 1024  # show a progress bar from this many bytes on


@contextmanager
def _progress(total: int) -> Iterator[Any]:
    """A progress bar on stderr when stderr is a terminal and the work is long."""
    if total < _PROGRESS_FROM or not sys.stderr.isatty():
        yield None
        return
    with click.progressbar(length=total, label="packing", file=sys.stderr) as bar:
        yield bar.update


@click.command()
@click.argument("paths", nargs=-1, required=True, type=_EXISTING)
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder to write the archives to (created if missing).")
@_JSON
@TARGET
@LAYOUT
@CATALOG_BUDGET
def pack(paths: tuple[str, ...], out_dir: str, as_json: bool, targets: tuple[str, ...],
         layout: str | None, catalog_budget: int | None) -> None:
    """Pack each skill under PATH into OUT as <name>-<digest16>.skill (.zip: --layout root).

    Every skill is checked first, against each --target's limits too: if any is invalid,
    refused or over a host's limit, nothing is written. Prints each archive's path, skill
    digest and the SHA-256 of its bytes.
    """
    with json_errors(as_json):
        refuse_dash(out_dir, "pack's output (one archive per skill)")
        options = PackOptions(targets, "root" if layout == "root" else
                              "wrapped" if layout else None, catalog_budget)
        if sys.stderr.isatty():
            # a progress bar needs the total first: check every skill, then write them all
            prepared = prepare_many(paths, options=options, outputs=[out_dir])
            total = sum(f.size for p in prepared for f in p.manifest.files)
            with _progress(total) as update:
                results = pack_prepared(prepared, out_dir, progress=update, options=options)
        else:  # no bar to show: each skill written as it is checked, its small files read
            # once, many skills shared among worker processes (skillpack.cli._workers)
            results = pack_skills(paths, out_dir, options=options, share=in_workers)
    if as_json:
        echo_json([r.to_dict() for r in results])
        return
    for r in results:
        for problem in r.warnings:
            click.echo(str(problem))
        state = "packed" if r.written else "unchanged, not rewritten"
        click.echo(f"{r.path}  {r.digest}  {r.sha256}  ({state})")


