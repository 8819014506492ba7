"""What every command shares: printing errors, JSON output, and the exit codes.

`exit_code` is the one place that decides which exit code an outcome gets (SPEC section 4);
every command ends through `finish`, `fail`, `usage` or `errors_exit`, which ask it. The codes
of a process ended by a signal (130 Ctrl-C, 143 SIGTERM) and of a closed stdout (0) are not
outcomes of a command: `skillpack.cli.run` picks them, without importing this module (it
costs `skillpack --version` the json import).

Click-free (`check` and `digest` run without click, `skillpack.cli.quick_argv`): text goes out
through `echo`, which writes as ``click.echo`` does (the line, then a flush); a usage error
is click's, and click is imported only when one is raised, which only a command read by
click does.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from skillpack.errors import Problem, SkillpackError
from skillpack.skillmd.invisible import escape_for_terminal
from skillpack.source.notes import listen

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:  # types only: `check` prints no mentions (no mention rules), and may run
    # without click (skillpack.cli.quick_argv)
    from typing import Any, NoReturn

    from click import UsageError

    from skillpack.skillmd.mentions import Mention

__all__ = [
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "echo",
    "echo_json",
    "echo_problem",
    "echo_text",
    "errors_exit",
    "exit_code",
    "fail",
    "finish",
    "mention_lines",
    "report_error",
    "usage",
    "usage_errors",
]


def echo(text: str, *, err: bool = False) -> None:
    """Print one line to stdout (or stderr), flushed, as ``click.echo`` prints it; the text
    is ours (a skill's text goes through `echo_text`, which escapes it)."""
    stream = sys.stderr if err else sys.stdout
    stream.write(f"{text}\n")
    stream.flush()


def usage_errors() -> tuple[type[UsageError], ...]:
    """The usage errors that can exist now: click's ``UsageError`` once click is loaded,
    none before (an instance cannot exist until its class does)."""
    click = sys.modules.get("click")
    return () if click is None else (click.UsageError,)


def _print_note(message: str) -> None:
    """A note of the library (a folder discovery skipped, an output left out of a pack),
    printed on stderr; it never changes the exit code."""
    echo(f"skillpack: {message}", err=True)


listen(_print_note)  # the command line is the application: it says what the library notes

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def exit_code(outcome: BaseException | None) -> int:
    """The exit code of an outcome: None (done, all valid) 0; a usage error 2; a
    `SkillpackError` (invalid, refused, not matching) or any other failure 1."""
    if outcome is None:
        return EXIT_OK
    if isinstance(outcome, usage_errors()):
        return EXIT_USAGE
    return EXIT_FAILED


def echo_json(data: Any) -> None:
    """Print `data` as indented JSON with a trailing newline (stable key order as given)."""
    import json  # start-up: only --json prints JSON (json and its decoder: about 2 ms)

    echo(json.dumps(data, indent=2, ensure_ascii=False))


def echo_text(text: str, *, err: bool = False) -> None:
    """Print `text` for a person: control, ANSI and bidi characters (and the other invisible
    ones) escaped, so a skill's text cannot redraw or reorder the terminal. JSON output is
    printed by `echo_json`, which escapes on its own."""
    echo(escape_for_terminal(text), err=err)


def echo_problem(problem: Problem) -> None:
    """One line per problem: `path:line: severity: [code] message`, to stdout, escaped."""
    echo_text(str(problem))


def finish(failed: bool) -> NoReturn:
    """End the command: 0 when nothing failed, else 1 (what failed was printed)."""
    raise SystemExit(exit_code(SkillpackError("failed") if failed else None))


def fail(message: str) -> NoReturn:
    """Print `skillpack: message` to stderr and end the command as failed (1)."""
    echo_text(f"skillpack: {message}", err=True)
    raise SystemExit(exit_code(SkillpackError(message)))


def usage(message: str) -> NoReturn:
    """End the command as used wrongly (2), with click's usage message."""
    import click  # start-up: only a command click read gets here, with click loaded

    raise click.UsageError(message)


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


@contextmanager
def errors_exit() -> Iterator[None]:
    """Turn any SkillpackError raised inside into a printed message and its exit code."""
    try:
        yield
    except SkillpackError as err:
        report_error(err)
        raise SystemExit(exit_code(err)) from None

def mention_lines(mentions: list[Mention]) -> list[str]:
    """One line a mentioned program and kind, in order of first mention: ``pandoc  mentioned
    in SKILL.md:12, 40`` or ``python  scripts: a.py, b.py  mentioned in SKILL.md:3``."""
    grouped: dict[tuple[str, str], tuple[list[int], list[str]]] = {}
    for m in mentions:
        lines, scripts = grouped.setdefault((m.program, m.kind), ([], []))
        lines.append(m.line)
        if m.script and m.script not in scripts:
            scripts.append(m.script)
    out = []
    for (program, kind), (lines, scripts) in grouped.items():
        at = ", ".join(str(n) for n in dict.fromkeys(lines))
        where = (f"runs at load in claude-code (SKILL.md:{at})" if kind == "runs-at-load"
                 else f"mentioned in SKILL.md:{at}")
        runs = f"  scripts: {', '.join(scripts)}" if scripts else ""
        out.append(f"{program}{runs}  {where}")
    return out
