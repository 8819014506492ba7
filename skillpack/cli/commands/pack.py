"""`skillpack pack` (one archive per skill) and `skillpack bundle` (one file of many)."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from typing import cast

import click

from skillpack.cli.many import (
    exit_code,
    report_skipped,
    selection,
    skipped_json,
    summary_line,
    tail,
    with_skipped,
)
from skillpack.cli.options import (
    CATALOG_BUDGET,
    JSON,
    LAYOUT,
    TARGET,
    command,
    json_failures,
    many,
    out_file,
    out_folder,
    paths,
    quiet,
)
from skillpack.cli.output import (
    DASH,
    echo,
    echo_json,
    echo_problem,
    write_to_stdout,
)
from skillpack.errors import SkillpackError
from skillpack.packing.bundle import module_name, write_bundle
from skillpack.packing.members import Progress
from skillpack.packing.pack import PackOptions, pack_skills
from skillpack.packing.targets import Layout

__all__ = ["bundle", "pack"]

#: A progress bar is shown on a terminal for packs of this many bytes or more.
_PROGRESS_FROM = 256 * 1024 * 1024


@command()
@paths()
@out_folder("out_dir", "Folder to write the archives to (created if missing).", required=True)
@JSON
@TARGET
@LAYOUT
@CATALOG_BUDGET
@many
def pack(paths: tuple[str, ...], out_dir: str, as_json: bool, targets: tuple[str, ...],
         layout: str | None, catalog_budget: int | None) -> int:
    """Pack each skill under PATH into OUT as <name>-<digest16>.skill.
    PATH is also a folder of archives, or an archive (verified, or made elsewhere).

    For a host (--target other than agentskills) the archive holds the skill's files only,
    no .skillpack/ manifest, and is named .zip; with --layout root, .root.zip.

    Every skill is checked first, against each --target's limits too: if any is invalid,
    refused or over a host's limit, nothing is written (with --keep-going, every valid skill
    is written and each refused one listed: exit 1). Prints each archive's path, skill
    digest and the SHA-256 of its bytes, then how many were packed.
    """
    options = PackOptions(targets, cast("Layout | None", layout), catalog_budget)
    with ExitStack() as stack:
        bar: list[Progress] = []

        def start(total: int) -> None:  # every skill checked: the bar knows the total
            if total >= _PROGRESS_FROM:
                shown = click.progressbar(length=total, label="packing", file=sys.stderr)
                bar.append(stack.enter_context(shown).update)

        chosen = selection()
        results = pack_skills(paths, out_dir, options=options,
                              progress=lambda size: bar[0](size) if bar else None,
                              total=start if sys.stderr.isatty() else None,
                              selection=chosen)
    if as_json:  # each archive, then each skill skipped ("name": null)
        echo_json([r.to_dict() for r in results]
                  + [{"name": None, "skipped": True} | s for s in skipped_json(chosen)])
        return exit_code(chosen)
    for r in results:
        for problem in r.warnings:
            echo_problem(problem)
        if not quiet():
            state = "packed" if r.written else "unchanged, not rewritten"
            echo(f"{r.path}  {r.digest}  {r.sha256}  ({state})")
    report_skipped(chosen)
    if summary_line(chosen):
        echo(f"packed {len(results)} skill{'s' * (len(results) != 1)} into {out_dir}"
             + tail(chosen))
    return exit_code(chosen)


def _module(value: str | None) -> str | None:
    """A --python-module whose name a module can have (`module_name`), else misuse (2)."""
    if value is not None:
        try:
            module_name(value)
        except SkillpackError as err:
            raise click.BadParameter(err.message) from None
    return value


@command()
@paths()
@out_file("The bundle file to write (atomically); - for stdout.", required=True)
@click.option("--python-module", "module", type=click.Path(dir_okay=False),
              callback=lambda ctx, param, value: _module(value),
              help="Also write a Python module whose DATA is the bundle's bytes.")
@JSON
@TARGET
@CATALOG_BUDGET
@many
def bundle(paths: tuple[str, ...], dest: str, module: str | None, as_json: bool,
           targets: tuple[str, ...], catalog_budget: int | None) -> int:
    """Bundle skill folders, folders of skills or of archives, .skill archives and bundles
    into one file. With --target, every skill is checked against those hosts' limits first
    (an error refuses the bundle). Prints each skill, the catalog's size, and the bundle's
    digest and SHA-256.
    """
    if dest == DASH and as_json:  # stdout is the bundle's: no JSON document there
        json_failures(click.get_current_context(), False)
        raise click.UsageError("-o - writes the bundle to stdout: --json cannot go there too")
    chosen = selection()
    if dest == DASH:
        result = write_to_stdout(
            lambda path: write_bundle(paths, path, python_module=module, targets=targets,
                                      catalog_budget=catalog_budget, selection=chosen),
            "skills.bundle")
        report_skipped(chosen)
        echo(f"bundled {len(result.skills)} skill(s) to stdout ({result.size:,} bytes), "
             f"digest {result.digest}" + tail(chosen), err=True)
        return exit_code(chosen)
    result = write_bundle(paths, dest, python_module=module, targets=targets,
                          catalog_budget=catalog_budget, selection=chosen)
    if as_json:
        echo_json(with_skipped(result.to_dict(), chosen))
        return exit_code(chosen)
    for problem in result.warnings:
        echo(str(problem))
    if not quiet():
        for name, digest, source in result.skills:
            echo(f"{digest}  {name}  ({source})")
        if result.catalog is not None:
            for line in result.catalog.lines():
                echo(line)
    report_skipped(chosen)
    echo(f"bundled {len(result.skills)} skill(s) into {result.path} ({result.size:,} bytes), "
         f"digest {result.digest}, {result.sha256}" + tail(chosen))
    if module:
        echo(f"python module: {module}")
    return exit_code(chosen)
