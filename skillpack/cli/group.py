"""The click group `skillpack` and how it is invoked: its usage errors (2), its form of Ctrl-C.

Imported only when a command needs click (`skillpack.cli` says which do not). Each command is
registered with `add_command` when it is first asked for, so `--help` imports no command
module and a command imports only its own.
"""

from __future__ import annotations

from typing import Any

import click

from skillpack import __version__
from skillpack.cli import COMMANDS, command_module, exit_status, stdout_guard

__all__ = ["LazyGroup", "invoke", "main"]


class LazyGroup(click.Group):
    """A group that imports a command's module only when that command is asked for."""

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        with stdout_guard():  # --help and --version print while the arguments are parsed
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with stdout_guard():
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


def invoke(args: list[str]) -> int:
    """The exit code of the group run on `args`; signals and a closed stdout are left to the
    caller (`skillpack.cli.outcome`)."""
    try:
        done_with = main.main(args=args, prog_name="skillpack", standalone_mode=False)
        return done_with if isinstance(done_with, int) else 0
    except SystemExit as done:  # how every command ends (skillpack.cli._common)
        return exit_status(done)
    except click.exceptions.Abort as abort:  # click's form of Ctrl-C (or EOF at a prompt)
        if isinstance(abort.__cause__, KeyboardInterrupt):
            raise abort.__cause__ from None
        click.echo("skillpack: aborted", err=True)
        return 1
    except click.ClickException as err:  # usage errors: 2
        err.show()
        return err.exit_code
