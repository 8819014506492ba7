"""What every command is made of, declared once: the command class (its exit code, its
failures), and the arguments and options more than one command takes."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from skillpack.cli.output import failed
from skillpack.errors import SkillpackError
from skillpack.install.agents import AGENTS
from skillpack.packing.targets import DEFAULT_TARGET, TARGETS

__all__ = ["AGENT", "CATALOG_BUDGET", "EXISTING", "GLOBAL", "JOBS_ENV", "JSON", "LAYOUT",
           "TARGET", "Command", "Group", "command", "jobs", "json_failures",
           "out_file", "out_folder", "paths", "signed_lock", "wants_json"]

F = TypeVar("F", bound=Callable[..., Any])

#: A path that must exist: a skill folder, its SKILL.md, a folder of skills or of archives,
#: an archive (what `skillpack.source.classify` reads).
EXISTING = click.Path(exists=True, file_okay=True, dir_okay=True)
_JSON_KEY = "skillpack.json"
#: The environment variable that sets how many processes `check` uses (``1``: this one).
JOBS_ENV = "SKILLPACK_JOBS"
_MAX_JOBS = 8


def jobs() -> int:
    """How many processes share the skills of `check`: ``SKILLPACK_JOBS`` (a whole number),
    else one a usable core; at most 8."""
    asked = os.environ.get(JOBS_ENV, "")
    wanted = int(asked) if asked.isdecimal() and int(asked) >= 1 else len(
        os.sched_getaffinity(0))
    return min(wanted, _MAX_JOBS)


class Command(click.Command):
    """A skillpack command: its callback returns the exit code; a `SkillpackError` it raises
    is printed (`failed`: on stderr, or as one JSON document when the command was asked for
    JSON), exit 1; a usage error it raises itself is printed as a JSON document too then,
    exit 2 (otherwise click prints it)."""

    def invoke(self, ctx: click.Context) -> int:
        try:
            code = super().invoke(ctx)
        except SkillpackError as err:
            return failed(err, wants_json(ctx))
        except click.UsageError as err:
            if not wants_json(ctx):
                raise
            return failed(err, True)
        return code if isinstance(code, int) else 0


class Group(click.Group):
    """A group of skillpack commands (``export``)."""

    command_class = Command


def command(name: str | None = None) -> Callable[[Callable[..., int]], Command]:
    """``@command()``: a skillpack `Command`, its callback returning the exit code."""
    return click.command(name, cls=Command)


def paths(name: str = "paths") -> Callable[[F], F]:
    """PATH...: one or more existing paths (a missing one is a usage error: 2)."""
    return click.argument(name, nargs=-1, required=True, type=EXISTING)


def json_failures(ctx: click.Context, value: bool = True) -> bool:
    """Whether a failure of this command is printed as one JSON document (`value`): what
    `skillpack.cli.app` reads when the command raises."""
    ctx.meta[_JSON_KEY] = value
    return value


def wants_json(ctx: click.Context) -> bool:
    """Whether the running command asked for its failures as JSON (`json_failures`)."""
    return bool(ctx.meta.get(_JSON_KEY, False))


JSON = click.option("--json", "as_json", is_flag=True,
                    callback=lambda ctx, _, value: json_failures(ctx, value),
                    help="Print JSON on stdout (on failure too).")
TARGET = click.option(
    "--target", "targets", multiple=True, type=click.Choice(list(TARGETS)),
    help=f"Check against this host's limits too (repeatable; default {DEFAULT_TARGET}: the "
         "spec only). Each problem names its host. See docs/TARGETS.md.")
CATALOG_BUDGET = click.option(
    "--catalog-budget", type=click.IntRange(min=1), metavar="CHARS",
    help="Warn when a skill's description (+ when_to_use) is over CHARS characters: the "
         "per-skill listing budget (claude-code's default: 1,536).")
LAYOUT = click.option(
    "--layout", type=click.Choice(["wrapped", "root"]),
    help="wrapped: one top folder named after the skill; root: SKILL.md at the archive root "
         "(default: what the targets want, wrapped without one).")


def out_file(help: str, **extra: Any) -> Callable[[F], F]:
    """``-o/--out FILE``: the one file a command writes."""
    return click.option("-o", "--out", "dest", type=click.Path(dir_okay=False), help=help,
                        **extra)


def out_folder(name: str, help: str, **extra: Any) -> Callable[[F], F]:
    """``-o/--out DIR``: the folder a command writes into."""
    return click.option("-o", "--out", name, type=click.Path(file_okay=False), help=help,
                        **extra)


AGENT = click.option(
    "--agent", "agents", multiple=True, metavar="NAME",
    help="An agent's skills folder: its project folder under the working folder, or its "
         "user folder with --global (repeatable; " + ", ".join(AGENTS) + "). See "
         "docs/DEPLOY.md for each folder and its source.")
GLOBAL = click.option("--global", "user", is_flag=True,
                      help="--agent names the agent's folder in your home, not the project's.")


def signed_lock(f: F) -> F:
    """``--lock LOCK [--signature ENVELOPE (--signer KEY... | --signers FILE)]``: a lock,
    required to be signed by a trusted signer when --signature is given
    (`skillpack.cli.commands.verify.given_lock` reads it)."""
    for option in reversed((
        click.option("--lock", "lock_file", type=click.Path(exists=True, dir_okay=False),
                     help="The lock file: the digests an approver pinned."),
        click.option("--signature", type=click.Path(exists=True, dir_okay=False),
                     help="Require the lock to be signed: its DSSE envelope "
                          "(LOCK.intoto.json)."),
        click.option("--signer", "signers", multiple=True,
                     type=click.Path(exists=True, dir_okay=False),
                     help="A trusted signer's Ed25519 public key (PEM or OpenSSH; "
                          "repeatable)."),
        click.option("--signers", "signers_file", type=click.Path(exists=True, dir_okay=False),
                     help="A trusted-signers file: one 'ssh-ed25519 AAAA... name' line per "
                          "signer."),
    )):
        f = option(f)
    return f

