"""The `skillpack` command line: one click group, one module per command family.

The library raises; only this package prints and picks exit codes (SPEC section 4):
0 done and valid, 1 a skill is invalid / a digest does not match / a check failed,
2 the command was used wrongly (click's own usage errors exit 2 as well). Which exception
means which code is decided in one place, `skillpack.cli._common.exit_code`.

Each command is registered with `add_command` when it is first asked for: `skillpack
--version` and `--help` import no command module, and a command imports only its own.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from skillpack import __version__

__all__ = ["COMMANDS", "main"]

#: Every command: its name, and the module and function that define it.
COMMANDS: dict[str, tuple[str, str]] = {
    "bundle": ("skillpack.cli.commands_build", "bundle"),
    "check": ("skillpack.cli.commands_format", "check"),
    "compile": ("skillpack.cli.commands_model", "compile_command"),
    "digest": ("skillpack.cli.commands_walk", "digest"),
    "files": ("skillpack.cli.commands_walk", "files"),
    "inspect": ("skillpack.cli.commands_build", "inspect"),
    "lint": ("skillpack.cli.commands_lint", "lint_command"),
    "lock": ("skillpack.cli.commands_build", "lock"),
    "pack": ("skillpack.cli.commands_build", "pack"),
    "programs": ("skillpack.cli.commands_walk", "programs"),
    "resolve": ("skillpack.cli.commands_model", "resolve_command"),
    "verify": ("skillpack.cli.commands_build", "verify"),
}


class LazyGroup(click.Group):
    """A group that imports a command's module only when that command is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, name = COMMANDS[cmd_name]
            command: Any = getattr(importlib.import_module(module), name)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="skillpack")
def main() -> None:
    """Validate, digest, pack, bundle and verify agent skills."""
