"""`skillpack install`: approved skills into agents' skills folders (`skillpack.install`)."""

from __future__ import annotations

import os
from typing import Any

import click

from skillpack.approve.signing import SignedLock
from skillpack.cli.app import Terminated
from skillpack.cli.commands.publish import DEADLINE, TIMEOUT, timeouts
from skillpack.cli.commands.verify import given_lock
from skillpack.cli.many import selection
from skillpack.cli.options import AGENT, EXCLUDE, GLOBAL, JSON, command, signed_lock
from skillpack.cli.output import echo, echo_json, echo_text
from skillpack.errors import Problem, SkillpackError
from skillpack.install.agents import agent_folders
from skillpack.install.pipeline import InstallReport, Step
from skillpack.install.pipeline import install as install_skills
from skillpack.install.remote import OCI_PREFIX, is_remote
from skillpack.publish.oci import parse_ref

__all__ = ["install"]


@command()
@click.argument("sources", nargs=-1)
@AGENT
@click.option("--into", "into", multiple=True, metavar="DIR",
              help="A skills folder given by path (repeatable): each skill lands in DIR/NAME.")
@GLOBAL
@signed_lock
@click.option("--frozen", is_flag=True,
              help="Refuse any difference between the sources and the lock: a skill it does "
                   "not list, one it lists that the sources lack.")
@click.option("--skill", "only", multiple=True, metavar="NAME",
              help="Install only this skill (repeatable).")
@click.option("--prune", is_flag=True,
              help="Remove the skills install put in the folders that the lock no longer "
                   "lists (with no SOURCE: only that).")
@click.option("--plain-http", is_flag=True,
              help="Pull oci:// sources over HTTP instead of HTTPS (a registry on loopback).")
@TIMEOUT
@DEADLINE
@EXCLUDE
@JSON
def install(sources: tuple[str, ...], agents: tuple[str, ...], into: tuple[str, ...],
            user: bool, lock_file: str | None, signature: str | None,
            signers: tuple[str, ...], signers_file: str | None, frozen: bool,
            only: tuple[str, ...], prune: bool, plain_http: bool, timeout: float | None,
            deadline: float, as_json: bool) -> int:
    """Install skills into agents' skills folders, each as FOLDER/NAME.

    A SOURCE is a skill folder, its SKILL.md, a folder of skills or of archives, an archive
    (.skill, bundle, .zip, .tar.gz), a site serving /.well-known/agent-skills/ (http:// or
    https://, or the URL of its index or of that folder; each archive checked against the
    index's sha256; an entry of a type skillpack does not read skipped, and said so) or
    oci://REGISTRY/REPO:TAG, each fetched within --deadline.
    With --lock only the skills it approves, as they are, are installed. Each skill is
    written beside its place and renamed into it; the same digest again writes nothing;
    FOLDER/.skillpack-installed.json records what install put there, and a skill it did not
    put there is never touched. With --prune and --lock and no SOURCE, only what the lock no
    longer lists is removed. Exit 0 when installed, 1 when refused (nothing written),
    2 for misuse; stopped by Ctrl-C (130) or SIGTERM (143), it lists what it did before.
    """
    if not sources and not prune:
        raise click.UsageError("give the SOURCES to install (or, to only remove what the "
                               "lock no longer lists, --prune --lock FILE)")
    if not sources and (frozen or only):
        raise click.UsageError(f"--{'frozen' if frozen else 'skill'} is about the SOURCES: "
                               "give them (--prune alone takes none)")
    if not agents and not into:
        raise click.UsageError("give where to install: --agent NAME or --into DIR")
    if user and not agents:
        raise click.UsageError("--global names the agents' folders in your home: give --agent")
    if (frozen or prune) and lock_file is None:
        raise click.UsageError(f"--{'frozen' if frozen else 'prune'} compares with a lock: "
                               "give it with --lock")
    missing = [s for s in sources if not is_remote(s) and not os.path.lexists(s)]
    if missing:
        raise click.UsageError(f"no such source: {', '.join(missing)}")
    for source in sources:
        if source.startswith(OCI_PREFIX):
            try:
                parse_ref(source.removeprefix(OCI_PREFIX))
            except SkillpackError as err:
                raise click.UsageError(f"{source}: not an OCI reference ({err.message})"
                                       ) from None
    given = given_lock(lock_file, signature, signers, signers_file)
    lock = given.lock if isinstance(given, SignedLock) else given
    if isinstance(given, SignedLock) and not as_json:
        echo(f"signed    {lock_file}: by {given.signer.source} (keyid "
             f"{given.signer.keyid[:16]})")
    folders = agent_folders(agents, into, user=user)
    done: list[Step] = []

    def progress(step: Step) -> None:  # each line as soon as its step is done
        done.append(step)
        if not as_json:
            _echo_step(step)

    try:
        report = install_skills(sources, folders, lock=lock, frozen=frozen, only=only,
                                prune=prune, plain_http=plain_http,
                                project=os.path.expanduser("~") if user else None,
                                timeouts=timeouts(timeout, deadline),
                                exclude=selection().excluder, progress=progress,
                                lock_file=lock_file)
    except (KeyboardInterrupt, Terminated) as signal:  # said here, exit code in `outcome`
        _interrupted(InstallReport(tuple(folders), tuple(done)),
                     "terminated" if isinstance(signal, Terminated) else "interrupted",
                     as_json)
        raise
    if as_json:
        echo_json(_document(report))
        return 0
    echo_text(f"{report.written} written, {len(report.steps) - report.written} unchanged, "
              f"in {len(report.folders)} folder(s)")
    return 0


def _echo_step(step: Step) -> None:
    why = f" ({step.reason})" if step.reason else ""
    echo_text(f"{step.action:<9}  {step.digest}  {step.name}  -> {step.folder}{why}")


def _document(report: InstallReport) -> dict[str, Any]:
    return {"folders": [{"path": f.path, "agents": list(f.agents),
                         "targets": list(f.targets)} for f in report.folders],
            "skills": [s.to_dict() for s in report.steps],
            "written": report.written, "skipped": list(report.skipped)}


def _interrupted(report: InstallReport, how: str, as_json: bool) -> None:
    """Say what an install stopped by a signal (`how`: ``interrupted``, ``terminated``) did
    before it: the steps carried out (each skill in place and recorded, or removed) stay;
    every folder none reached is as it was. Text: after the lines of those steps; JSON: the
    one document, the failure document with the report's keys and ``"interrupted": true``."""
    reached = {s.folder for s in report.steps}
    untouched = [f.path for f in report.folders if f.path not in reached]
    message = (f"{how} after {report.written} skill(s) written and "
               f"{len(report.steps) - report.written} unchanged, in {len(reached)} of "
               f"{len(report.folders)} folder(s); those listed stay, recorded"
               + (f"; nothing was written in {', '.join(untouched)}" if untouched else ""))
    hint = "run the same install again to finish: what is in place is left as it is"
    if as_json:
        problem = (Problem("error", "interrupted", message) if how == "interrupted"
                   else Problem("error", "terminated", message))
        echo_json({"ok": False, "interrupted": True, "error": f"{message} ({hint})",
                   "hint": hint, "problems": [problem.to_dict()]} | _document(report))
    else:
        echo_text(f"{message} ({hint})")
