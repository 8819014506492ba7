"""`skillpack files`, `skillpack digest` and `skillpack programs`: what each skill under each
PATH carries, its digest, the programs it runs. A PATH or a skill that fails is reported (on
stderr, or as an item of the ``--json`` list) and the others still are."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator
from typing import Any

import click

from skillpack.cli.mentions import mention_lines
from skillpack.cli.options import JSON, command, jobs, paths
from skillpack.cli.output import echo_json, echo_text, item_failure, report_error
from skillpack.errors import NoSkillError, SkillpackError
from skillpack.formats.digest import FileRecord
from skillpack.packing.check import in_processes
from skillpack.packing.prepare import judge_skill
from skillpack.packing.verify import as_skill_folders, verified_archive
from skillpack.skillmd.mentions import mentioned_programs
from skillpack.source.classify import Input, classify, unpacked_foreign
from skillpack.source.fileset import FileSet, display_path
from skillpack.source.load import load_skill, require_valid, skill_fileset
from skillpack.source.records import digest_skill, record_files
from skillpack.source.records import programs as skill_programs

__all__ = ["digest", "files", "programs"]


class Listing:
    """What a listing command prints, and whether something failed: with ``--json`` the
    items of its list (failures among them), else failures on stderr as they come."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.items: list[dict[str, Any]] = []
        self.failed = False

    def fail(self, path: str, err: SkillpackError) -> None:
        self.failed = True
        if self.as_json:
            self.items.append(item_failure(path, err))
        elif isinstance(err, NoSkillError):
            echo_text(f"skillpack: {err.message}", err=True)
        else:
            report_error(err)

    def inputs(self, paths: Iterable[str]) -> Iterator[Input]:
        """What each PATH holds (`skillpack.source.classify`), each once."""
        seen: set[str] = set()
        for path in paths:
            try:
                yield from classify(path, seen=seen).items
            except SkillpackError as err:
                self.fail(path, err)

    def skill_folders(self, paths: Iterable[str]) -> Iterator[Input]:
        """Every skill under the PATHs as a folder on disk: an archive's verified and written
        out, each while it is handled (its temporary folder removed after)."""
        for item in self.inputs(paths):
            if item.kind == "folder":
                yield item
                continue
            try:
                with as_skill_folders([item]) as folders:
                    yield from folders
            except SkillpackError as err:
                self.fail(item.path, err)

    def end(self) -> int:
        if self.as_json:
            echo_json(self.items)
        return int(self.failed)


@command()
@paths()
@JSON
def files(paths: tuple[str, ...], as_json: bool) -> int:
    """List what a skill carries, then what was left out and by which rule.

    PATH is a skill folder, its SKILL.md, a folder searched for skills, a folder of
    archives, or an archive. The skill is checked as pack checks it (validation, the walk,
    every file's content): exit 1 when pack would refuse it, listing every problem.
    """
    listing = Listing(as_json)
    found: list[tuple[str, str, FileSet, list[FileRecord]] | None] = []
    for folder in listing.skill_folders(paths):
        try:
            skill = load_skill(folder.path)
            require_valid(skill)
            fileset = skill_fileset(skill)
            records = record_files(fileset)
        except SkillpackError as err:  # refused: every problem, as `check` and `pack` say
            verdict = judge_skill(folder.path, sha256=False)
            listing.fail(folder.label, folder.relabel(verdict.error or err))
            found.append(None)
            continue
        if as_json:
            data = fileset.to_dict()
            data["root"] = folder.shown(data["root"])
            data["files"] = [r.to_dict() for r in records]
            listing.items.append({"name": skill.name, "path": folder.label, **data})
        found.append((skill.name, folder.label, fileset, records))
    for index, shown in enumerate(found):
        if shown is None or as_json:
            continue
        name, label, fileset, records = shown
        if len(found) > 1:
            echo_text(("\n" if index else "") + f"# {name} ({label})")
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
    return listing.end()


def _folder_digest(path: str) -> list[tuple[str, str]]:
    """The name and digest of the skill folder at `path` (work `in_processes` shares)."""
    skill, value = digest_skill(path)
    return [(skill.name, value)]


def _digests(item: Input) -> list[tuple[str, str]]:
    """The name and digest of each skill of `item`: an archive or bundle verified member by
    member, an archive made elsewhere as the folder it unpacks to."""
    if item.kind == "archive":
        with verified_archive(item.path) as report:
            return [(s.name, s.digest) for s in report.skills]
    with unpacked_foreign([item]) as [folder]:
        skill, value = digest_skill(folder.path)
        return [(skill.name, value)]


@command()
@paths()
@JSON
def digest(paths: tuple[str, ...], as_json: bool) -> int:
    """Print `<digest>  <name>` for each skill (folder, SKILL.md, folder of skills or of
    archives, archive or bundle: an archive or bundle is verified member by member first).

    Exit 1 when a skill cannot be digested (its SKILL.md does not parse, its files are
    refused, an archive does not verify) or a PATH holds no SKILL.md; `digest` does not
    validate.
    """
    listing = Listing(as_json)
    items = list(listing.inputs(paths))
    folders = [i.path for i in items if i.kind == "folder"]  # shared by the usable cores
    shared = dict(zip(folders, in_processes(_folder_digest, folders, jobs()), strict=True))
    for item in items:
        try:
            found = shared.get(item.path) if item.kind == "folder" else None
            found = found if found is not None else _digests(item)
        except SkillpackError as err:
            listing.fail(item.path, err)
            continue
        for name, value in found:
            listing.items.append({"name": name, "path": item.path, "digest": value})
            if not as_json:
                echo_text(f"{value}  {name}")  # a name is the skill's text: escaped
    return listing.end()


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


@command()
@paths()
@JSON
@click.option(
    "--check", is_flag=True, help="Look every program up on PATH; exit 1 if one is missing."
)
def programs(paths: tuple[str, ...], as_json: bool, check: bool) -> int:
    """List the programs each skill runs: tool commands (past wrappers such as env, timeout,
    sudo, shown as `via`), allowed Bash commands, `#!` lines; then, apart, the programs its
    SKILL.md mentions in shell code blocks and the `!`command`` lines Claude Code runs at load.

    Dynamic programs (named by a tool argument) are listed but never looked up; neither are
    mentioned ones.
    """
    listing = Listing(as_json)
    for folder in listing.skill_folders(paths):
        try:
            skill = load_skill(folder.path)
            found = skill_programs(skill, skill_fileset(skill))
            mentions = mentioned_programs(skill.body, skill.body_line)
        except SkillpackError as err:
            listing.fail(folder.label, folder.relabel(err))
            continue
        missing = [why for program in found if check and not program.dynamic
                   for why in [_missing(program.name, skill.workdir)] if why is not None]
        listing.failed = listing.failed or bool(missing)
        if as_json:
            entry: dict[str, Any] = {"name": skill.name, "path": folder.label,
                                     "programs": [p.to_dict() for p in found],
                                     "mentioned": [m.to_dict() for m in mentions]}
            if check:
                entry["missing"] = missing
            listing.items.append(entry)
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
    return listing.end()
