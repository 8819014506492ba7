"""`skillpack pack`: its own module, so that its start-up is the build side's alone (not
signing's and verifying's, which `skillpack.cli.commands_build` imports: about 100 ms). Off
a terminal it runs `skillpack.cli.pack_report`, as the quick path does without click."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from skillpack.cli._json_errors import json_errors
from skillpack.cli._targets import CATALOG_BUDGET, LAYOUT, TARGET
from skillpack.cli.pack_report import options_for, pack_report, print_packed
from skillpack.packing.pack import pack_prepared, prepare_many

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
    if not sys.stderr.isatty():  # no bar to show: what the quick path runs as well
        pack_report(paths, out_dir, as_json=as_json, targets=targets, layout=layout,
                    catalog_budget=catalog_budget)
        return
    with json_errors(as_json):  # a progress bar needs the total first: every skill checked
        options = options_for(out_dir, targets, layout, catalog_budget)
        prepared = prepare_many(paths, options=options, outputs=[out_dir])
        total = sum(f.size for p in prepared for f in p.manifest.files)
        with _progress(total) as update:
            results = pack_prepared(prepared, out_dir, progress=update, options=options)
    print_packed(results, as_json)
