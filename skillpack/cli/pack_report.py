"""What `skillpack pack` does once its arguments are read, when stderr is not a terminal (no
progress bar): pack every skill under each PATH into the output folder, print each archive (or
the JSON list) and end. Click-free: the click command (`skillpack.cli.commands_pack.pack`) and
the quick path for plain argument lists (``pack PATH... -o DIR [--json]``,
`skillpack.cli.quick_argv`) both end here, so they print the same bytes."""

from __future__ import annotations

from collections.abc import Sequence

from skillpack.cli._common import echo, echo_json, echo_problem
from skillpack.cli._json_errors import json_errors
from skillpack.cli._stdout import refuse_dash
from skillpack.cli._workers import in_workers
from skillpack.packing.pack import PackOptions, PackResult, pack_skills
from skillpack.packing.targets import Layout

__all__ = ["options_for", "pack_report", "print_packed"]


def options_for(out_dir: str, targets: tuple[str, ...], layout: str | None,
                catalog_budget: int | None) -> PackOptions:
    """The options of ``pack``'s flags, after refusing ``-o -`` (a usage error: 2)."""
    refuse_dash(out_dir, "pack's output (one archive per skill)")
    chosen: Layout | None = "root" if layout == "root" else "wrapped" if layout else None
    return PackOptions(targets, chosen, catalog_budget)


def pack_report(paths: tuple[str, ...], out_dir: str, *, as_json: bool = False,
                targets: tuple[str, ...] = (), layout: str | None = None,
                catalog_budget: int | None = None) -> None:
    """Pack the skills under `paths` into `out_dir`, each written as it is checked (its small
    files read once), many shared among worker processes (`skillpack.cli._workers`), and
    print what was written; a failure is printed and ends the command (1, or 2 for a usage
    error)."""
    with json_errors(as_json):
        options = options_for(out_dir, targets, layout, catalog_budget)
        results = pack_skills(paths, out_dir, options=options, share=in_workers)
    print_packed(results, as_json)


def print_packed(results: Sequence[PackResult], as_json: bool) -> None:
    """Each archive's path, skill digest, SHA-256 and whether it was written, after its
    targets' warnings (or the JSON list)."""
    if as_json:
        echo_json([r.to_dict() for r in results])
        return
    for r in results:
        for problem in r.warnings:
            echo_problem(problem)
        state = "packed" if r.written else "unchanged, not rewritten"
        echo(f"{r.path}  {r.digest}  {r.sha256}  ({state})")
