"""`skillpack files`, `skillpack digest` and `skillpack programs` (what `digest` does is
`skillpack.cli.digest_report`)."""

from __future__ import annotations

import os
import shutil
from typing import Any

import click

from skillpack.cli._common import echo_json, echo_text, finish, mention_lines
from skillpack.cli._folders import report_failure, skill_folders
from skillpack.cli.digest_report import digest_report
from skillpack.errors import SkillpackError
from skillpack.skillmd.mentions import mentioned_programs
from skillpack.source.fileset import display_path
from skillpack.source.load import load_skill, require_valid, skill_fileset
from skillpack.source.records import programs as skill_programs
from skillpack.source.records import record_files

_PATHS = click.argument(
    "paths", nargs=-1, required=True, type=click.Path(exists=True, file_okay=True, dir_okay=True)
)
_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


@click.command()
@_PATHS
@_JSON
def files(paths: tuple[str, ...], as_json: bool) -> None:
    """List what a skill carries, then what was left out and by which rule.

    PATH is a skill folder, its SKILL.md, or a folder searched for skills. The skill is
    checked as pack checks it (validation, the walk, every file's content): exit 1 when pack
    would refuse it, listing every problem.
    """
    results: list[dict[str, Any]] = []
    folders, failed = skill_folders(paths, failures=results if as_json else None)
    for index, folder in enumerate(folders):
        try:
            skill = load_skill(folder)
            require_valid(skill)
            fileset = skill_fileset(skill)
            records = record_files(fileset)
        except SkillpackError as err:
            failed = True
            report_failure(folder, err, results if as_json else None)
            continue
        if as_json:
            data = fileset.to_dict()
            data["files"] = [r.to_dict() for r in records]
            results.append({"name": skill.name, "path": str(folder), **data})
            continue
        if len(folders) > 1:
            echo_text(("\n" if index else "") + f"# {skill.name} ({folder})")
        for record in records:
            echo_text(record.path)
        if fileset.left_out:
            echo_text(f"\nleft out ({len(fileset.left_out)}):")
            for item in fileset.left_out:
                echo_text(f"  {display_path(item.path)}  ({item.rule})")
        if fileset.allowed:
            echo_text(f"\nallowed past the secret filter ({len(fileset.allowed)}):")
            for path in fileset.allowed:
                echo_text(f"  {path}")
    if as_json:
        echo_json(results)
    finish(bool(failed))


@click.command()
@_PATHS
@_JSON
def digest(paths: tuple[str, ...], as_json: bool) -> None:
    """Print `<digest>  <name>` for each skill (folder, SKILL.md, folder of skills, archive
    or bundle: an archive or bundle is verified member by member first)."""
    digest_report(paths, as_json=as_json)


def _missing(name: str, workdir: str | None) -> str | None:
    """Why program `name` cannot run here, or None when it can."""
    if "/" not in name:
        return None if shutil.which(name) else f"needs {name}, which is not on PATH"
    if os.path.isabs(name):
        ok = os.path.isfile(name) and os.access(name, os.X_OK)
        return None if ok else f"needs {name}, which is not an executable file"
    full = os.path.join(workdir or ".", name)
    ok = os.path.isfile(full) and os.access(full, os.X_OK)
    return None if ok else f"needs {name}, which is not an executable file in the skill"


@click.command()
@_PATHS
@_JSON
@click.option(
    "--check", is_flag=True, help="Look every program up on PATH; exit 1 if one is missing."
)
def programs(paths: tuple[str, ...], as_json: bool, check: bool) -> None:
    """List the programs each skill runs: tool commands (past wrappers such as env, timeout,
    sudo, shown as `via`), allowed Bash commands, `#!` lines; then, apart, the programs its
    SKILL.md mentions in shell code blocks and the `!`command`` lines Claude Code runs at load.

    Dynamic programs (named by a tool argument) are listed but never looked up; neither are
    mentioned ones.
    """
    results: list[dict[str, Any]] = []
    folders, failed = skill_folders(paths, failures=results if as_json else None)
    for folder in folders:
        try:
            skill = load_skill(folder)
            found = skill_programs(skill, skill_fileset(skill))
            mentions = mentioned_programs(skill.body, skill.body_line)
        except SkillpackError as err:
            report_failure(folder, err, results if as_json else None)
            failed = True
            continue
        missing = [
            why
            for program in found
            if check and not program.dynamic
            for why in [_missing(program.name, skill.workdir)]
            if why is not None
        ]
        failed = failed or bool(missing)
        if as_json:
            entry: dict[str, Any] = {
                "name": skill.name,
                "path": str(folder),
                "programs": [p.to_dict() for p in found],
                "mentioned": [m.to_dict() for m in mentions],
            }
            if check:
                entry["missing"] = missing
            results.append(entry)
            continue
        none = " (no tool or #! line runs a program)" if mentions else " (runs no program)"
        echo_text(f"{skill.name}:" + ("" if found else none))
        for program in found:
            kind = "  (dynamic: named by a tool argument)" if program.dynamic else ""
            via = f"  via {', '.join(program.via)}" if program.via else ""
            echo_text(f"  {program.name}{kind}{via}  [{', '.join(program.sources)}]")
        if mentions:
            echo_text("  mentioned in SKILL.md (no tool runs them; the model may):")
            for line in mention_lines(mentions):
                echo_text(f"    {line}")
        for why in missing:
            echo_text(f"skillpack: {skill.name} {why}", err=True)
    if as_json:
        echo_json(results)
    finish(bool(failed))

