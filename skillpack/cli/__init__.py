"""The `skillpack` command line: one click group, one module per command family.

The library raises; only this package prints and picks exit codes (SPEC section 4):
0 done and valid, 1 a skill is invalid / a digest does not match / a check failed,
2 the command was used wrongly (click's own usage errors exit 2 as well). Which exception
means which code is decided in one place, `skillpack.cli._common.exit_code`.

Each command is registered with `add_command` when it is first asked for: `skillpack
--version` and `--help` import no command module, and a command imports only its own.

The console script (and ``python -m skillpack``) is `run`, not the group itself: it adds what
a process needs around the group. Ctrl-C exits 130 and SIGTERM 143 (128 + the signal), each
after the write in progress removed its temp files (SIGTERM raises `Terminated`, a
BaseException, so every ``finally`` and context manager runs); a closed stdout (``| head``)
ends quietly, exit 0 and nothing on stderr.
"""

from __future__ import annotations

import errno
import importlib
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from types import FrameType, ModuleType
from typing import Any, NoReturn

import click

from skillpack import __version__

__all__ = ["COMMANDS", "EXIT_INTERRUPTED", "EXIT_TERMINATED", "StdoutClosed",
           "Terminated", "command_module", "main", "run"]

#: Exit codes of a process ended by a signal: 128 + SIGINT (2), 128 + SIGTERM (15).
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

#: Every command: its name, and the module and function that define it.
COMMANDS: dict[str, tuple[str, str]] = {
    "bundle": ("skillpack.cli.commands_build", "bundle"),
    "catalog": ("skillpack.cli.commands_author", "catalog_command"),
    "check": ("skillpack.cli.commands_format", "check"),
    "compile": ("skillpack.cli.commands_model", "compile_command"),
    "digest": ("skillpack.cli.commands_walk", "digest"),
    "export": ("skillpack.cli.commands_export", "export"),
    "files": ("skillpack.cli.commands_walk", "files"),
    "inspect": ("skillpack.cli.commands_build", "inspect"),
    "lint": ("skillpack.cli.commands_lint", "lint_command"),
    "lock": ("skillpack.cli.commands_build", "lock"),
    "new": ("skillpack.cli.commands_author", "new_command"),
    "pack": ("skillpack.cli.commands_build", "pack"),
    "programs": ("skillpack.cli.commands_walk", "programs"),
    "pull": ("skillpack.cli.commands_oci", "pull_command"),
    "push": ("skillpack.cli.commands_oci", "push_command"),
    "resolve": ("skillpack.cli.commands_model", "resolve_command"),
    "review": ("skillpack.cli.commands_sign", "review"),
    "sign": ("skillpack.cli.commands_sign", "sign"),
    "tools": ("skillpack.cli.commands_author", "tools_command"),
    "unpack": ("skillpack.cli.commands_author", "unpack_command"),
    "verify": ("skillpack.cli.commands_build", "verify"),
}


def command_module(command: str) -> ModuleType:
    """The module that defines `command` (a key of `COMMANDS`), imported now if it was not:
    how one command runs another's per-skill function (``check --lint`` runs lint's) without
    importing it for every run (``check`` alone never loads the lint rules)."""
    return importlib.import_module(COMMANDS[command][0])


class StdoutClosed(BaseException):
    """Whoever read stdout is gone (``skillpack files x | head -1``). Not an OSError, so that
    click's own handling of a broken pipe (exit 1, "invalid") never sees it."""


@contextmanager
def _stdout_guard() -> Iterator[None]:
    try:
        yield
    except OSError as err:
        if err.errno != errno.EPIPE:
            raise
        raise StdoutClosed from None


class LazyGroup(click.Group):
    """A group that imports a command's module only when that command is asked for."""

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        with _stdout_guard():  # --help and --version print while the arguments are parsed
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with _stdout_guard():
            return super().invoke(ctx)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            command: Any = getattr(command_module(cmd_name), COMMANDS[cmd_name][1])
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="skillpack")
def main() -> None:
    """Validate, digest, pack, bundle and verify agent skills."""


class Terminated(BaseException):
    """SIGTERM arrived. A BaseException (as KeyboardInterrupt is), so no ``except
    Exception`` swallows it and every cleanup on the way out runs."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def _quiet_stdout() -> None:
    """Point stdout at /dev/null: the reader is gone, and the interpreter's final flush of
    what is still buffered must not print a BrokenPipeError on stderr."""
    with suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _run(args: Sequence[str] | None) -> int:
    try:
        previous: Any = signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread: signals are not ours to handle
        previous = None
    try:
        try:
            outcome = main.main(args=list(args) if args is not None else None,
                                prog_name="skillpack", standalone_mode=False)
            code = outcome if isinstance(outcome, int) else 0
        except SystemExit as done:  # how every command ends (skillpack.cli._common)
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        except click.exceptions.Abort as abort:  # click's form of Ctrl-C (or EOF at a prompt)
            if isinstance(abort.__cause__, KeyboardInterrupt):
                raise abort.__cause__ from None
            click.echo("skillpack: aborted", err=True)
            code = 1
        except click.ClickException as err:  # usage errors: 2
            err.show()
            code = err.exit_code
        sys.stdout.flush()  # a closed pipe shows here at the latest, not at interpreter exit
        return code
    except KeyboardInterrupt:
        _say("interrupted")
        return EXIT_INTERRUPTED
    except Terminated:
        _say("terminated")
        return EXIT_TERMINATED
    except StdoutClosed:
        _quiet_stdout()
        return 0
    except OSError as err:  # the final flush
        if err.errno != errno.EPIPE:
            raise
        _quiet_stdout()
        return 0
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _say(what: str) -> None:
    with suppress(OSError):
        click.echo(f"skillpack: {what}", err=True)


def run(args: Sequence[str] | None = None) -> NoReturn:
    """The `skillpack` process: the command group, with exit 130 on Ctrl-C, 143 on SIGTERM,
    and a quiet exit 0 when stdout is closed early. `args` defaults to ``sys.argv[1:]``."""
    sys.exit(_run(args))
