"""The `skillpack` command line: one click group, one module per command family.

The library raises; only this package prints and picks exit codes (SPEC section 4):
0 done and valid, 1 a skill is invalid / a digest does not match / a check failed,
2 the command was used wrongly (click's own usage errors exit 2 as well). Which exception
means which code is decided in one place, `skillpack.cli._common.exit_code`.

Each command is registered with `add_command` when it is first asked for: `skillpack
--version` and `--help` import no command module, and a command imports only its own. The
group itself (`main`, in `skillpack.cli.group`) is imported only when it is used: this
package does not import click. `skillpack check PATH...` with at most ``--strict`` and
``--json`` (the shapes a pre-commit hook and a CI step run) and `skillpack digest PATH...`
with at most ``--json`` are read without click by `skillpack.cli.quick_argv` and run the very
function the click command runs (`QUICK_BODIES`); any other argument list (options with
values, ``--help``, a path click would refuse) goes to click, which gives its usual answer or
usage error.

The console script (and ``python -m skillpack``) is `run`, not the group itself: it adds what
a process needs around the command. Ctrl-C exits 130 and SIGTERM 143 (128 + the signal), each
after the write in progress removed its temp files (SIGTERM raises `Terminated`, a
BaseException, so every ``finally`` and context manager runs); a closed stdout (``| head``)
ends quietly, exit 0 and nothing on stderr.
"""

from __future__ import annotations

import _thread
import errno
import functools
import importlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from types import FrameType, ModuleType

from skillpack._threads import quiet_helper
from skillpack.cli.quick_argv import parse_quick

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from typing import Any, NoReturn

__all__ = ["COMMANDS", "EXIT_INTERRUPTED", "EXIT_TERMINATED", "QUICK_BODIES", "StdoutClosed",
           "Terminated", "command_module", "exit_status", "main", "outcome", "run",
           "stdout_guard"]

#: Exit codes of a process ended by a signal: 128 + SIGINT (2), 128 + SIGTERM (15).
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

#: Every command: its name, and the module and function that define it.
COMMANDS: dict[str, tuple[str, str]] = {
    "bundle": ("skillpack.cli.commands_build", "bundle"),
    "catalog": ("skillpack.cli.commands_author", "catalog_command"),
    "check": ("skillpack.cli.commands_format", "check"),
    "compile": ("skillpack.cli.commands_model", "compile_command"),
    "digest": ("skillpack.cli.commands_walk", "digest"),
    "export": ("skillpack.cli.commands_export", "export"),
    "files": ("skillpack.cli.commands_walk", "files"),
    "inspect": ("skillpack.cli.commands_build", "inspect"),
    "lint": ("skillpack.cli.commands_lint", "lint_command"),
    "lock": ("skillpack.cli.commands_build", "lock"),
    "new": ("skillpack.cli.commands_author", "new_command"),
    "pack": ("skillpack.cli.commands_pack", "pack"),
    "programs": ("skillpack.cli.commands_walk", "programs"),
    "pull": ("skillpack.cli.commands_oci", "pull_command"),
    "push": ("skillpack.cli.commands_oci", "push_command"),
    "resolve": ("skillpack.cli.commands_model", "resolve_command"),
    "review": ("skillpack.cli.commands_sign", "review"),
    "sign": ("skillpack.cli.commands_sign", "sign"),
    "tools": ("skillpack.cli.commands_author", "tools_command"),
    "unpack": ("skillpack.cli.commands_author", "unpack_command"),
    "verify": ("skillpack.cli.commands_build", "verify"),
}

#: The click group, imported only when used.
_GROUP = "skillpack.cli.group"
#: The click-free body of each command `skillpack.cli.quick_argv` reads (a key of its
#: `QUICK`): its module (imported only when used) and function, which the click command
#: calls too.
QUICK_BODIES: dict[str, tuple[str, str]] = {
    "check": ("skillpack.cli.check_report", "check_report"),
    "digest": ("skillpack.cli.digest_report", "digest_report"),
    "pack": ("skillpack.cli.pack_report", "pack_report"),
}


def command_module(command: str) -> ModuleType:
    """The module that defines `command` (a key of `COMMANDS`), imported now if it was not:
    how one command runs another's per-skill function (``check --lint`` runs lint's) without
    importing it for every run (``check`` alone never loads the lint rules)."""
    return importlib.import_module(COMMANDS[command][0])


def __getattr__(name: str) -> Any:
    """`main`, the click group, imported on first use (``from skillpack.cli import main``)."""
    if name == "main":
        return importlib.import_module(_GROUP).main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class StdoutClosed(BaseException):
    """Whoever read stdout is gone (``skillpack files x | head -1``). Not an OSError, so that
    click's own handling of a broken pipe (exit 1, "invalid") never sees it."""


@contextmanager
def stdout_guard() -> Iterator[None]:
    """A broken pipe inside becomes `StdoutClosed`."""
    try:
        yield
    except OSError as err:
        if err.errno != errno.EPIPE:
            raise
        raise StdoutClosed from None


class Terminated(BaseException):
    """SIGTERM arrived. A BaseException (as KeyboardInterrupt is), so no ``except
    Exception`` swallows it and every cleanup on the way out runs."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def _quiet_stdout() -> None:
    """Point stdout at /dev/null: the reader is gone, and the interpreter's final flush of
    what is still buffered must not print a BrokenPipeError on stderr."""
    with suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _command(args: list[str]) -> int:
    """The exit code of the command `args` asks for: `check` or `digest` read by
    `parse_quick` runs without click; everything else through the click group."""
    quick = parse_quick(args, os.environ)
    if quick is None:
        code: int = importlib.import_module(_GROUP).invoke(args)
        return code
    module, function = QUICK_BODIES[quick.command]
    try:
        with stdout_guard():
            getattr(importlib.import_module(module), function)(quick.paths, **quick.flags)
    except SystemExit as done:  # how every command ends (skillpack.cli._common)
        return exit_status(done)
    return 0


def exit_status(done: SystemExit) -> int:
    """The exit code a `SystemExit` ends the process with: its int, 0 for None, else 1."""
    return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)


def outcome(args: Sequence[str] | None = None) -> int:
    """The exit code of ``skillpack ARGS`` (`args` defaults to ``sys.argv[1:]``), run as the
    process runs it: 130 on Ctrl-C, 143 on SIGTERM, 0 (quietly) when stdout is closed."""
    try:
        previous: Any = signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread: signals are not ours to handle
        previous = None
    hook = sys.unraisablehook
    if previous is not None:
        sys.unraisablehook = functools.partial(_signal_again, hook, _thread.get_ident())
    try:
        code = _command(list(sys.argv[1:] if args is None else args))
        sys.stdout.flush()  # a closed pipe shows here at the latest, not at interpreter exit
        return code
    except KeyboardInterrupt:
        _say("interrupted")
        return EXIT_INTERRUPTED
    except Terminated:
        _say("terminated")
        return EXIT_TERMINATED
    except StdoutClosed:
        _quiet_stdout()
        return 0
    except OSError as err:  # the final flush
        if err.errno != errno.EPIPE:
            raise
        _quiet_stdout()
        return 0
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
            sys.unraisablehook = hook


def _signal_again(hook: Callable[[Any], object], main: int, unraisable: Any) -> None:
    """`sys.unraisablehook` while a command runs: a Ctrl-C or SIGTERM whose exception was
    raised where Python can only print it and go on (a weakref callback, a ``__del__``:
    "Exception ignored in ...") is sent again to the thread `main`, a millisecond later,
    from a thread of its own (sent from here, it would be raised here again, and ignored
    again), to be raised where it ends the command; any other goes to `hook`. Without this
    a signal that lands in such a callback is lost, and the command runs on (seen with
    `pack`'s workers, whose threads' objects are collected as it works)."""
    error = unraisable.exc_value
    if isinstance(error, Terminated | KeyboardInterrupt):
        again = signal.SIGTERM if isinstance(error, Terminated) else signal.SIGINT
        _thread.start_new_thread(_send_later, (main, again))
        return
    hook(unraisable)


def _send_later(thread: int, signum: int) -> None:
    quiet_helper()  # a signal for the process goes to the main thread, not to this one
    time.sleep(0.001)
    with suppress(OSError, ValueError):  # the command ended meanwhile
        signal.pthread_kill(thread, signum)


def _say(what: str) -> None:
    with suppress(OSError):
        sys.stderr.write(f"skillpack: {what}\n")
        sys.stderr.flush()


def run(args: Sequence[str] | None = None) -> NoReturn:
    """The `skillpack` process: the command, with exit 130 on Ctrl-C, 143 on SIGTERM, and a
    quiet exit 0 when stdout is closed early. `args` defaults to ``sys.argv[1:]``."""
    sys.exit(outcome(args))
