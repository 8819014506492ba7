"""The `skillpack` command line: the click group (`skillpack.cli.app`), the options every
command shares (`skillpack.cli.options`), what it prints (`skillpack.cli.output`) and the
commands, a module per family (`skillpack.cli.commands`).

The library raises; only this package prints and picks exit codes (SPEC section 4): 0 done
and valid, 1 a skill is invalid / a digest does not match / a check failed, 2 the command was
used wrongly; 130 and 143 for a process ended by Ctrl-C or SIGTERM.
"""

from __future__ import annotations

from skillpack.cli.app import main, outcome

__all__ = ["main", "outcome"]
