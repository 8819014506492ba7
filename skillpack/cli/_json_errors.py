"""Failures as one JSON document, for the commands whose `--json` covers failure too.

`json_errors(as_json)` is `errors_exit` with a JSON branch: with ``as_json`` a
`SkillpackError` (or a usage error raised by the command itself) is printed to stdout as
``{"ok": false, "error": ..., "hint": ..., "problems": [...]}`` and the command ends with
the exit code `skillpack.cli._common.exit_code` gives it; without it the error is printed
as every other command prints it. Each problem has ``severity``, ``code``, ``message``,
``file`` and ``line``; an error that carries no problems becomes one, its code named for
the error's kind (`error_code`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from skillpack.cli._common import echo_json, errors_exit, exit_code, usage_errors
from skillpack.errors import (
    ArchiveError,
    FormatVersionError,
    IntegrityError,
    Problem,
    RefusedError,
    ResourceError,
    SkillError,
    SkillpackError,
    WriteError,
)

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:  # a type only: `check` runs without click (skillpack.cli.quick_argv)
    from typing import Any

    from click import UsageError

__all__ = ["error_code", "failure_document", "item_failure", "json_errors", "no_skill_error"]

# most specific first: FormatVersionError is an ArchiveError
_CODES: tuple[tuple[type[SkillpackError], str], ...] = (
    (FormatVersionError, "format-version"),
    (ArchiveError, "archive"),
    (IntegrityError, "integrity"),
    (RefusedError, "refused"),
    (SkillError, "invalid-skill"),
    (ResourceError, "resource"),
    (WriteError, "write"),
)


def error_code(err: SkillpackError) -> str:
    """A stable code for an error that carries no problem of its own."""
    for kind, code in _CODES:
        if isinstance(err, kind):
            return code
    return "error"


def failure_document(err: SkillpackError | UsageError) -> dict[str, Any]:
    """What `--json` prints when a command fails."""
    if not isinstance(err, SkillpackError):
        problem = Problem("error", "usage", err.format_message())
        return {"ok": False, "error": err.format_message(), "hint": None,
                "problems": [problem.to_dict()]}
    problems = list(err.located()) or [
        Problem("error", error_code(err), err.message, err.path, err.line)]
    return {"ok": False, "error": str(err), "hint": err.hint,
            "problems": [p.to_dict() for p in problems]}


def item_failure(path: str, err: SkillpackError) -> dict[str, Any]:
    """One failed item of a command that prints a list (``check``, ``files``, ``digest``,
    ``programs``, ``lint``): ``{"name": null, "path": PATH}`` and the `failure_document`."""
    return {"name": None, "path": path} | failure_document(err)


def no_skill_error(path: str) -> SkillpackError:
    """A PATH that holds no SKILL.md (code ``no-skill``)."""
    message = f"no SKILL.md found in {path}"
    return SkillpackError(message, path=path, hint="give a skill folder or a folder of skills",
                          problems=[Problem("error", "no-skill", message, path)])


@contextmanager
def json_errors(as_json: bool) -> Iterator[None]:
    """Print a failure as JSON (``as_json``) or as text, and end with its exit code."""
    if not as_json:
        with errors_exit():
            yield
        return
    try:
        yield
    except Exception as err:
        if not isinstance(err, SkillpackError) and not isinstance(err, usage_errors()):
            raise
        echo_json(failure_document(err))
        raise SystemExit(exit_code(err)) from None
