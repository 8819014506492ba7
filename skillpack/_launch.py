"""The `skillpack` process (console script and ``python -m skillpack``).

``skillpack --version`` is answered here, without importing click or any command: it runs in
pre-commit hooks and version probes, where start-up is the whole cost. Everything else is
`skillpack.cli.app.outcome`.

Once the command has ended, the process ends at once (`end_process`): its output flushed and
its ``atexit`` functions run, but without the interpreter's teardown, which frees every module
and object one by one (about 13 ms after `digest` or `check`).
"""

from __future__ import annotations

import atexit
import os
import sys
from contextlib import suppress

from skillpack import __version__

__all__ = ["end_process", "run"]


def run() -> None:
    """``skillpack ARGS``: ``--version`` at once (click's wording), else the command line."""
    if sys.argv[1:] == ["--version"]:
        try:
            sys.stdout.write(f"skillpack, version {__version__}\n")
            sys.stdout.flush()
        except BrokenPipeError:  # the reader is gone: quiet, as the command line is
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        raise SystemExit(0)
    # start-up: --version is answered above, without click and the commands
    from skillpack.cli.app import outcome

    end_process(outcome())


def end_process(code: int) -> None:
    """End the process with exit status `code` as ``sys.exit`` would, less the teardown:
    stdout and stderr flushed (a reader gone is quiet), the ``atexit`` functions run (a
    ``weakref.finalize``'s, a temp folder's cleanup), then ``os._exit``. This calls
    ``atexit._run_exitfuncs``, a private function of CPython's `atexit` module: the one way
    to run them without the teardown. While a thread other than this one and not a daemon
    still runs, Python's own exit is kept, which waits for it."""
    threading = sys.modules.get("threading")
    if threading is not None and any(
            t is not threading.current_thread() and not t.daemon for t in threading.enumerate()):
        raise SystemExit(code)
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed pipe or stream: nothing more to say
            stream.flush()
    atexit._run_exitfuncs()
    os._exit(code)
