"""The `skillpack` command line: one click group, one module per command family.

The library raises; only this package prints and picks exit codes (SPEC section 4):
0 done and valid, 1 a skill is invalid / a digest does not match / a check failed,
2 the command was used wrongly (click's own usage errors exit 2 as well).
"""

from __future__ import annotations

import click

from skillpack import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="skillpack")
def main() -> None:
    """Validate, digest, pack, bundle and verify agent skills."""


# Each module registers its commands on `main` when imported.
from skillpack.cli import commands_build as _commands_build  # noqa: E402,F401
from skillpack.cli import commands_format as _commands_format  # noqa: E402,F401
from skillpack.cli import commands_model as _commands_model  # noqa: E402,F401
from skillpack.cli import commands_walk as _commands_walk  # noqa: E402,F401
