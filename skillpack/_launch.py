"""The `skillpack` process (console script and ``python -m skillpack``), started cheaply.

``skillpack --version`` is answered here, without importing click or any command: it runs in
pre-commit hooks and version probes, where start-up is the whole cost. Everything else is
`skillpack.cli.run`, imported only then.
"""

from __future__ import annotations

import os
import sys

from skillpack import __version__

__all__ = ["run"]


def run() -> None:
    """``skillpack ARGS``: ``--version`` at once (click's wording), else the command line."""
    if sys.argv[1:] == ["--version"]:
        try:
            sys.stdout.write(f"skillpack, version {__version__}\n")
            sys.stdout.flush()
        except BrokenPipeError:  # the reader is gone: quiet, as skillpack.cli.run is
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        raise SystemExit(0)
    # start-up: the command line (click, unless `check` runs without it): --version saves it
    from skillpack.cli import run as run_cli

    run_cli()
