"""The argument lists read without click: ``skillpack check PATH... [--strict] [--json]``,
``skillpack digest PATH... [--json]`` and ``skillpack pack PATH... -o DIR [--json]`` (off a
terminal: on one, pack shows click's progress bar).

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

__all__ = ["QUICK", "VALUES", "QuickCommand", "parse_quick"]

#: The commands read here, and for each its flags and the parameter of its click-free body
#: (`skillpack.cli.check_report.check_report`, `skillpack.cli.digest_report.digest_report`)
#: each sets.
QUICK: dict[str, dict[str, str]] = {
    "check": {"--strict": "strict", "--json": "as_json"},
    "digest": {"--json": "as_json"},
    "pack": {"--json": "as_json"},
}
#: The options with a value read here, for each command: the spellings of each, and its
#: parameter. Each is required (given once), its value a folder or a path to none: pack's
#: ``-o DIR`` (click's ``Path(file_okay=False)``), never ``-`` nor another option.
VALUES: dict[str, dict[str, str]] = {"pack": {"-o": "out_dir", "--out": "out_dir"}}
#: click's shell completion runs when this is set (``_{PROG}_COMPLETE``): click's business.
_COMPLETE = "_SKILLPACK_COMPLETE"


class QuickCommand(Record):
    """An argument list read without click: the command (a key of `QUICK`), its PATHs and
    its flags (each of the command's, True when given)."""

    command: str
    paths: tuple[str, ...]
    flags: dict[str, bool | str]


def parse_quick(args: Sequence[str], environ: Mapping[str, str]) -> QuickCommand | None:
    """`args` (``sys.argv[1:]``) as a `QuickCommand`, or None when click must read them."""
    if os.name != "posix" or _COMPLETE in environ or not args or args[0] not in QUICK:
        return None
    known, valued = QUICK[args[0]], VALUES.get(args[0], {})
    if args[0] == "pack" and _on_terminal():  # the progress bar is click's
        return None
    flags: dict[str, bool | str] = dict.fromkeys(known.values(), False)
    paths: list[str] = []
    rest = iter(args[1:])
    for arg in rest:
        if arg in known:
            flags[known[arg]] = True
        elif arg in valued:
            value = next(rest, None)
            if valued[arg] in flags or value is None or not _folder_or_none(value):
                return None
            flags[valued[arg]] = value
        elif arg.startswith("-") or not _readable(arg):
            return None
        else:
            paths.append(arg)
    if not paths or any(name not in flags for name in valued.values()):
        return None
    return QuickCommand(command=args[0], paths=tuple(paths), flags=flags)


def _folder_or_none(path: str) -> bool:
    """What click's ``Path(file_okay=False)`` accepts, and not ``-`` nor an option: a folder,
    or a path to nothing yet."""
    if not path or path.startswith("-"):
        return False
    try:
        return os.path.isdir(path) or not os.path.lexists(path)
    except ValueError:  # a NUL in the name
        return False


def _on_terminal() -> bool:
    """Whether stderr is a terminal (`pack` then shows a progress bar: click's)."""
    try:
        return os.isatty(2)
    except OSError:
        return False


def _readable(path: str) -> bool:
    """What click's ``Path(exists=True)`` accepts: `path` can be stat'ed (links followed)
    and read."""
    try:
        os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return False
    return os.access(path, os.R_OK)
