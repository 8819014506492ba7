"""The click group `skillpack`, its commands loaded when asked for, and the process around it.

Each command's module is imported only when that command runs (`LazyGroup`, click's
documented pattern): `--help` imports none, and a command only its own (OCI's client alone
costs about 300 ms). A command returns its exit code; a library error it lets through is
printed and turned into exit 1 in one place, `skillpack.cli.options.Command`;
click's usage errors exit 2.

`outcome` runs the group as the process does (`precommit_check` too, for the pre-commit
hook's files): Ctrl-C exits 130 and SIGTERM 143 (128 + the
signal), each after the write in progress removed its temp files (SIGTERM raises
`Terminated`, a BaseException, so every ``finally`` and context manager runs); a closed
stdout (``| head``) ends quietly, exit 0 and nothing on stderr.
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
from types import FrameType
from typing import Any

import click

from skillpack import __version__
from skillpack._threads import quiet_helper
from skillpack.cli.options import Command
from skillpack.cli.output import echo
from skillpack.source.discover import skill_holding

__all__ = [
    "ALIASES",
    "COMMANDS",
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "LazyGroup",
    "StdoutClosed",
    "Terminated",
    "command_named",
    "hook_arguments",
    "main",
    "outcome",
    "precommit_check",
    "skill_folders",
]

#: Exit codes of a process ended by a signal: 128 + SIGINT (2), 128 + SIGTERM (15).
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

_COMMANDS = "skillpack.cli.commands."
#: Every command: its name, and the module and object that define it.
COMMANDS: dict[str, str] = {
    "bundle": "pack.bundle",
    "catalog": "publish.catalog",
    "check": "check.check",
    "compile": "model.compile_command",
    "digest": "walk.digest",
    "export": "publish.export",
    "files": "walk.files",
    "inspect": "verify.inspect",
    "install": "install.install",
    "lint": "check.lint",
    "lock": "approve.lock",
    "new": "author.new",
    "pack": "pack.pack",
    "programs": "walk.programs",
    "pull": "publish.pull_command",
    "push": "publish.push",
    "resolve": "model.resolve_command",
    "review": "approve.review",
    "sign": "approve.sign",
    "tools": "author.tools",
    "unpack": "author.unpack_command",
    "verify": "verify.verify",
}


#: Other names of a command: ``validate`` is skills-ref's and ``gh skill``'s verb for
#: ``check``. Not listed in ``--help`` (the command is, once).
ALIASES: dict[str, str] = {"validate": "check"}


class StdoutClosed(BaseException):
    """Whoever read stdout is gone (``skillpack files x | head -1``). Not an OSError, so that
    click's own handling of a broken pipe (exit 1) never sees it."""


@contextmanager
def _stdout_guard() -> Iterator[None]:
    """A broken pipe inside becomes `StdoutClosed`."""
    try:
        yield
    except OSError as err:
        if err.errno != errno.EPIPE:
            raise
        raise StdoutClosed from None


def command_named(name: str) -> click.Command | None:
    """The command `name` (or an alias of it), its module imported now; None for no such
    command."""
    where = COMMANDS.get(ALIASES.get(name, name))
    if where is None:
        return None
    module, attribute = where.rsplit(".", 1)
    command = getattr(importlib.import_module(_COMMANDS + module), attribute)
    if not isinstance(command, click.Command):
        raise TypeError(f"{_COMMANDS}{where} is not a click command")
    return command


class LazyGroup(click.Group):
    """A group whose commands (`COMMANDS`) are imported when asked for; its invocation ends
    with the command's exit code."""

    command_class = Command

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return command_named(cmd_name)

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        with _stdout_guard():  # --help and --version print while the arguments are parsed
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with _stdout_guard():
            code = super().invoke(ctx)
        ctx.exit(code if isinstance(code, int) else 0)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="skillpack")
def main() -> None:
    """Validate, digest, pack, bundle and verify agent skills."""


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


def _invoke(args: list[str]) -> int:
    """The exit code of the group run on `args`: the command's, or click's for a usage
    error (2); signals and a closed stdout are left to `outcome`."""
    try:
        code = main.main(args=args, prog_name="skillpack", standalone_mode=False)
    except click.exceptions.Abort as abort:  # click's form of Ctrl-C (or EOF at a prompt)
        if isinstance(abort.__cause__, KeyboardInterrupt):
            raise abort.__cause__ from None
        echo("skillpack: aborted", err=True)
        return 1
    except click.ClickException as err:  # usage errors: 2
        err.show()
        return err.exit_code
    return code if isinstance(code, int) else 0


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
        code = _invoke(list(sys.argv[1:] if args is None else args))
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
    a signal that lands in such a callback is lost, and the command runs on."""
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


def skill_folders(files: Sequence[str]) -> list[str]:
    """The skill folders holding `files`, each where a search of the working folder finds it
    (`skill_holding`: the outermost skill, none below ``node_modules/`` or a virtualenv), so
    that the hook checks what ``skillpack check .`` checks; sorted, each once."""
    found = {str(folder) for name in files if (folder := skill_holding(name)) is not None}
    return sorted(found)


def hook_arguments(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """The hook's arguments split into ``check``'s options (each with its value: ``--exclude
    template/`` is one option, not an option and a file) and the files pre-commit passes
    after them. The files begin at the first argument that is no option, or that names a
    path that exists (a committed file named ``--exclude`` or ``-h`` is a file, never an
    option), or after ``--``: from there every argument is a file."""
    check = command_named("check")
    assert check is not None
    valued = {name for param in check.params if isinstance(param, click.Option)
              and not param.is_flag and not param.count
              for name in (*param.opts, *param.secondary_opts)}
    options: list[str] = []
    files: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            files.extend(rest)
        elif not arg.startswith("-") or arg == "-" or os.path.lexists(arg):
            files.append(arg)
            files.extend(rest)
        else:
            options.append(arg)
            value = next(rest, None) if arg in valued else None
            if value is not None:  # its value is the next argument, whatever it looks like
                options.append(value)
    return options, files


def precommit_check(argv: Sequence[str] | None = None) -> int:
    """``skillpack check [OPTIONS] FOLDER...`` on the skills holding the files in `argv`
    (pre-commit passes the files a commit touches, after the hook's ``args``, which are
    ``check``'s options): a skill is checked as a whole, each once; 0 when no file is in a
    skill."""
    options, files = hook_arguments(list(sys.argv[1:] if argv is None else argv))
    folders = skill_folders(files)
    return outcome(["check", *options, "--", *folders]) if folders else 0
