"""What every command shares: printing errors, JSON output, and the exit codes.

`exit_code` is the one place that decides which exit code an outcome gets (SPEC section 4);
every command ends through `finish`, `fail`, `usage` or `errors_exit`, which ask it. The codes
of a process ended by a signal (130 Ctrl-C, 143 SIGTERM) and of a closed stdout (0) are not
outcomes of a command: `skillpack.cli.run` picks them, without importing this module (it
costs `skillpack --version` the json import).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import click

from skillpack.build.notes import listen
from skillpack.errors import Problem, SkillpackError

__all__ = [
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "echo_json",
    "echo_problem",
    "errors_exit",
    "exit_code",
    "fail",
    "finish",
    "report_error",
    "usage",
]

def _print_note(message: str) -> None:
    """A note of the library (a folder discovery skipped, an output left out of a pack),
    printed on stderr; it never changes the exit code."""
    click.echo(f"skillpack: {message}", err=True)


listen(_print_note)  # the command line is the application: it says what the library notes

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def exit_code(outcome: BaseException | None) -> int:
    """The exit code of an outcome: None (done, all valid) 0; a usage error 2; a
    `SkillpackError` (invalid, refused, not matching) or any other failure 1."""
    if outcome is None:
        return EXIT_OK
    if isinstance(outcome, click.UsageError):
        return EXIT_USAGE
    return EXIT_FAILED


def echo_json(data: Any) -> None:
    """Print `data` as indented JSON with a trailing newline (stable key order as given)."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def echo_problem(problem: Problem) -> None:
    """One line per problem: `path:line: severity: [code] message`, to stdout."""
    click.echo(str(problem))


def finish(failed: bool) -> NoReturn:
    """End the command: 0 when nothing failed, else 1 (what failed was printed)."""
    raise SystemExit(exit_code(SkillpackError("failed") if failed else None))


def fail(message: str) -> NoReturn:
    """Print `skillpack: message` to stderr and end the command as failed (1)."""
    click.echo(f"skillpack: {message}", err=True)
    raise SystemExit(exit_code(SkillpackError(message)))


def usage(message: str) -> NoReturn:
    """End the command as used wrongly (2), with click's usage message."""
    raise click.UsageError(message)


def report_error(err: SkillpackError) -> None:
    """Print an error and every problem it carries to stderr, never a traceback."""
    click.echo(f"skillpack: error: {err}", err=True)
    for problem in err.problems:
        click.echo(f"  {problem}", err=True)


@contextmanager
def errors_exit() -> Iterator[None]:
    """Turn any SkillpackError raised inside into a printed message and its exit code."""
    try:
        yield
    except SkillpackError as err:
        report_error(err)
        raise SystemExit(exit_code(err)) from None
