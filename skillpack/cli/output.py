"""What the command line prints: text for a person, JSON, problems, errors and notes.

Exit codes (SPEC section 4): 0 done and valid, 1 a skill is invalid / a digest does not
match / a check failed, 2 the command was used wrongly (click's usage errors). A command
returns its code; a `SkillpackError` it lets through is printed by `failed` (on stderr, or
as one JSON document on stdout with ``--json``), which `skillpack.cli.options.Command` calls in
one place. The library's notes (a folder discovery skipped, an output left out of a pack) are
printed on stderr as ``skillpack: NOTE`` and never change the exit code.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from typing import Any, TypeVar

import click

from skillpack.errors import (
    Problem,
    SkillpackError,
)
from skillpack.skillmd.invisible import escape_for_terminal, visible_escape
from skillpack.source.notes import listen

__all__ = ["DASH", "EXIT_FAILED", "EXIT_USAGE", "echo", "echo_json", "echo_problem",
           "echo_text", "error_code", "failed", "failure_document", "item_failure", "json_safe",
           "report_error", "write_to_stdout"]

EXIT_FAILED = 1
EXIT_USAGE = 2
#: ``-o -``: the one file a command produces goes to stdout.
DASH = "-"
T = TypeVar("T")


def echo(text: str, *, err: bool = False) -> None:
    """Print one line of our own text to stdout (or stderr), flushed; a skill's text goes
    through `echo_text`, which escapes it."""
    stream = sys.stderr if err else sys.stdout
    stream.write(f"{text}\n")
    stream.flush()


def echo_text(text: str, *, err: bool = False) -> None:
    """Print `text` for a person: control, ANSI and bidi characters (and the other invisible
    ones) escaped, so a skill's text cannot redraw or reorder the terminal. JSON output is
    printed by `echo_json`, which escapes on its own."""
    echo(escape_for_terminal(text), err=err)


def echo_json(data: Any) -> None:
    """Print `data` as indented JSON with a trailing newline (stable key order as given),
    UTF-8 whatever it holds: a lone surrogate (a byte of a file name that is not UTF-8) is
    written as the text of its escape (``caf\\xe9``), as the text output shows it."""
    text = json.dumps(data, indent=2, ensure_ascii=False)
    if _SURROGATE.search(text):
        text = _SURROGATE.sub(lambda m: json.dumps(visible_escape(m.group()))[1:-1], text)
    echo(text)


#: A lone surrogate: no character, not UTF-8 (from a name decoded with surrogateescape).
_SURROGATE = re.compile("[\ud800-\udfff]")


def json_safe(value: Any) -> Any:
    """`value` as JSON holds it: what YAML gives beyond JSON's types (a date) as its text."""
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))


def echo_problem(problem: Problem) -> None:
    """One line per problem: `path:line: severity: [code] message`, to stdout, escaped."""
    echo_text(str(problem))


def _print_note(message: str) -> None:
    echo(f"skillpack: {message}", err=True)


listen(_print_note)  # the command line is the application: it says what the library notes


def report_error(err: SkillpackError) -> None:
    """Print an error and every problem it carries to stderr, never a traceback; each once:
    the problem an error restates (a parse error: the same message at the same place) is
    its first line, with its code, not a second one."""
    problems = err.located()
    same = next((p for p in problems if p.message == err.message
                 and p.file in (None, err.path) and p.line in (None, err.line)), None)
    if same is None:
        echo_text(f"skillpack: error: {err}", err=True)
    else:
        where = "" if err.path is None else (
            f"{err.path}: " if err.line is None else f"{err.path}:{err.line}: ")
        hint = f" ({err.hint})" if err.hint else ""
        echo_text(f"skillpack: error: {where}[{same.code}] {err.message}{hint}", err=True)
    for problem in problems:
        if problem is not same:
            echo_text(f"  {problem}", err=True)


def error_code(err: SkillpackError) -> str:
    """A stable code for an error that carries no problem of its own (`SkillpackError.code`)."""
    return err.code


def failure_document(err: SkillpackError | click.UsageError) -> dict[str, Any]:
    """What ``--json`` prints when a command fails: ``{"ok": false, "error", "hint",
    "problems"}``; an error that carries no problem becomes one, its code named for the
    error's kind (a usage error's: ``usage``)."""
    if not isinstance(err, SkillpackError):
        problem = Problem("error", "usage", err.format_message())
        return {"ok": False, "error": err.format_message(), "hint": None,
                "problems": [problem.to_dict()]}
    problems = err.as_problems()
    return {"ok": False, "error": str(err), "hint": err.hint,
            "problems": [p.to_dict() for p in problems]}


def item_failure(path: str, err: SkillpackError) -> dict[str, Any]:
    """One failed item of a command that prints a list (``check``, ``files``, ``digest``,
    ``programs``, ``lint``, ``verify``): ``{"name": null, "path": PATH}`` and the
    `failure_document`."""
    return {"name": None, "path": path} | failure_document(err)


def failed(err: SkillpackError | click.UsageError, as_json: bool) -> int:
    """Print a failure of the command, as JSON (`as_json`) or as text, and return its exit
    code: 1 for a `SkillpackError`, 2 for a usage error (only printed here with JSON: click
    prints its own)."""
    if as_json:
        echo_json(failure_document(err))
    elif isinstance(err, SkillpackError):
        report_error(err)
    return EXIT_FAILED if isinstance(err, SkillpackError) else EXIT_USAGE


def write_to_stdout(write: Callable[[str], T], name: str) -> T:
    """``-o -``: call ``write(path)`` with a path in a private temp folder, then copy that
    file to stdout (binary); return what `write` returned. The file is written as always
    (atomically, by the library), so stdout gets the whole file or, when the command
    fails, nothing."""
    with tempfile.TemporaryDirectory(prefix="skillpack-stdout-") as folder:
        path = os.path.join(folder, name)
        result = write(path)
        sys.stdout.flush()  # what was printed before, then the file's bytes
        stdout = sys.stdout.buffer
        with open(path, "rb") as handle:
            shutil.copyfileobj(handle, stdout)
        stdout.flush()
    return result
