"""`skillpack check PATH... [--strict] [--json]` read from its argument list without click.

A pre-commit hook and a CI step run `check` on every commit, where start-up is most of the
cost and click's import alone is about 30 ms (issue 12's budget is 60 over a bare
interpreter). So the argument lists that need no parser are read here, and only those:
``check`` followed by existing, readable paths that do not start with ``-`` and the flags
``--strict`` and ``--json``. Anything else (an option with a value, ``--lint``, ``--help``,
``--``, a path that does not exist or cannot be read, a shell-completion request, another
system than POSIX) returns None and goes to click, which answers as it always does; click's
``Path(exists=True)`` refuses exactly the paths refused here, so every list read here is one
click reads the same way. tests/test_cli_quick_check.py runs both on the same lists and
compares what they print and exit with.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from skillpack._record import Record

__all__ = ["QuickCheck", "parse_check"]

#: The flags read here, and the parameter of `check_report` each sets.
_FLAGS = {"--strict": "strict", "--json": "as_json"}
#: click's shell completion runs when this is set (``_{PROG}_COMPLETE``): click's business.
_COMPLETE = "_SKILLPACK_COMPLETE"


class QuickCheck(Record):
    """A `check` argument list read without click: its PATHs and flags."""

    paths: tuple[str, ...]
    flags: dict[str, bool]


def parse_check(args: Sequence[str], environ: Mapping[str, str]) -> QuickCheck | None:
    """`args` (``sys.argv[1:]``) as a `QuickCheck`, or None when click must read them."""
    if os.name != "posix" or _COMPLETE in environ or not args or args[0] != "check":
        return None
    flags = dict.fromkeys(_FLAGS.values(), False)
    paths: list[str] = []
    for arg in args[1:]:
        if arg in _FLAGS:
            flags[_FLAGS[arg]] = True
        elif arg.startswith("-") or not _readable(arg):
            return None
        else:
            paths.append(arg)
    return QuickCheck(paths=tuple(paths), flags=flags) if paths else None


def _readable(path: str) -> bool:
    """What click's ``Path(exists=True)`` accepts: `path` can be stat'ed (links followed)
    and read."""
    try:
        os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return False
    return os.access(path, os.R_OK)
