"""The argument lists read without click: ``skillpack check PATH... [--strict] [--json]`` and
``skillpack digest PATH... [--json]``.

A pre-commit hook and a CI step run `check` (and a script `digest`) on every commit, where
start-up is most of the cost and click's import alone is about 30 ms (issue 12's budget is
60 over a bare interpreter). So the argument lists that need no parser are read here, and
only those: a command of `QUICK` followed by existing, readable paths that do not start with
``-`` and that command's flags. Anything else (an option with a value, ``--lint``,
``--help``, ``--``, a path that does not exist or cannot be read, a shell-completion request,
another system than POSIX) returns None and goes to click, which answers as it always does;
click's ``Path(exists=True)`` refuses exactly the paths refused here, so every list read here
is one click reads the same way. tests/test_cli_quick_check.py and
tests/test_cli_quick_digest.py run both on the same lists and compare what they print and
exit with.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from skillpack._record import Record

__all__ = ["QUICK", "QuickCommand", "parse_quick"]

#: The commands read here, and for each its flags and the parameter of its click-free body
#: (`skillpack.cli.check_report.check_report`, `skillpack.cli.digest_report.digest_report`)
#: each sets.
QUICK: dict[str, dict[str, str]] = {
    "check": {"--strict": "strict", "--json": "as_json"},
    "digest": {"--json": "as_json"},
}
#: click's shell completion runs when this is set (``_{PROG}_COMPLETE``): click's business.
_COMPLETE = "_SKILLPACK_COMPLETE"


class QuickCommand(Record):
    """An argument list read without click: the command (a key of `QUICK`), its PATHs and
    its flags (each of the command's, True when given)."""

    command: str
    paths: tuple[str, ...]
    flags: dict[str, bool]


def parse_quick(args: Sequence[str], environ: Mapping[str, str]) -> QuickCommand | None:
    """`args` (``sys.argv[1:]``) as a `QuickCommand`, or None when click must read them."""
    if os.name != "posix" or _COMPLETE in environ or not args or args[0] not in QUICK:
        return None
    known = QUICK[args[0]]
    flags = dict.fromkeys(known.values(), False)
    paths: list[str] = []
    for arg in args[1:]:
        if arg in known:
            flags[known[arg]] = True
        elif arg.startswith("-") or not _readable(arg):
            return None
        else:
            paths.append(arg)
    return QuickCommand(command=args[0], paths=tuple(paths), flags=flags) if paths else None


def _readable(path: str) -> bool:
    """What click's ``Path(exists=True)`` accepts: `path` can be stat'ed (links followed)
    and read."""
    try:
        os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return False
    return os.access(path, os.R_OK)
