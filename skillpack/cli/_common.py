"""What every command shares: printing errors, JSON output, exit codes."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import click

from skillpack.errors import Problem, SkillpackError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def echo_json(data: Any) -> None:
    """Print `data` as indented JSON with a trailing newline (stable key order as given)."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def echo_problem(problem: Problem) -> None:
    """One line per problem: `path:line: severity: [code] message`, to stdout."""
    click.echo(str(problem))


def fail(message: str, code: int = EXIT_FAILED) -> NoReturn:
    """Print `skillpack: message` to stderr and exit with `code`."""
    click.echo(f"skillpack: {message}", err=True)
    sys.exit(code)


def report_error(err: SkillpackError) -> None:
    """Print an error and every problem it carries to stderr, never a traceback."""
    click.echo(f"skillpack: error: {err}", err=True)
    for problem in err.problems:
        click.echo(f"  {problem}", err=True)


@contextmanager
def errors_exit(code: int = EXIT_FAILED) -> Iterator[None]:
    """Turn any SkillpackError raised inside into a printed message and exit `code`."""
    try:
        yield
    except SkillpackError as err:
        report_error(err)
        sys.exit(code)


def guarded(func: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator form of `errors_exit` for click commands."""
    import functools

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with errors_exit():
            return func(*args, **kwargs)

    return wrapper
