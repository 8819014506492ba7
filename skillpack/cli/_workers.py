"""A command's independent per-skill work spread over the machine's cores: worker processes
forked from this one, each given every n-th item, sending back what it found when done.

Only where forking is safe and pays: on Linux, with no other thread running in this process
(a thread's locks would be copied held), with two usable cores or more, and with enough
items that each worker gets `MIN_SHARE` of them (a fork and its reply cost about a
millisecond; a skill, about as much). ``SKILLPACK_JOBS=N`` asks for at most N processes in
all (``1``: none forked, every item in this one); anything else that is not a whole number
of one or more leaves the choice to the rules above.

A worker's answer for an item is a value of `marshal` (str, int, tuple, None...) or None
for "redo it here": an item whose work failed (the caller then does it again in this
process, and reports the failure itself, in its place), every item of a worker that died or
answered with something unreadable. So the result is the one a loop in this process gives,
item for item, whatever happened to the workers; only the time differs. A worker never
prints: its stdout and stderr are this process's, and what it says would land out of order.
"""

from __future__ import annotations

import marshal
import os
import signal
import sys
from collections.abc import Callable, Sequence
from contextlib import suppress

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")
    R = TypeVar("R")

__all__ = ["JOBS_ENV", "MAX_WORKERS", "MIN_SHARE", "in_workers", "worker_count"]

#: The environment variable that bounds the processes a command uses (``1``: no worker).
JOBS_ENV = "SKILLPACK_JOBS"
#: The fewest items worth a worker of their own.
MIN_SHARE = 4
#: The most processes a command uses, this one included.
MAX_WORKERS = 8


def worker_count(items: int) -> int:
    """How many processes (this one included) share `items` items: 1 when none is forked."""
    if sys.platform != "linux" or not hasattr(os, "fork"):
        return 1
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except OSError:
        return 1
    count = min(cores, MAX_WORKERS, items // MIN_SHARE)
    asked = os.environ.get(JOBS_ENV, "")
    if asked.isdecimal() and int(asked) >= 1:
        count = min(count, int(asked))
    return max(count, 1)


def in_workers(work: Callable[[T], R | None], items: Sequence[T]) -> list[R | None] | None:
    """``[work(item) for item in items]``, the items shared among `worker_count` processes;
    None when that is one (no worker would be forked: the caller does the items in its own
    loop, once each). None in the list: do that item again (it failed, or its worker did).
    `work` must not raise for an input that can fail (it returns None), nor print."""
    count = worker_count(len(items))
    if count == 1:
        return None
    results: list[R | None] = [None] * len(items)
    workers: list[tuple[int, int, range]] = []  # pid, read end, the items' indexes
    try:
        for first in range(1, count):
            share = range(first, len(items), count)
            read_end, write_end = os.pipe()
            try:
                pid = os.fork()
            except OSError:  # no process to spare: this one does that share
                os.close(read_end)
                os.close(write_end)
                continue
            if pid == 0:  # the worker: never returns
                _worker(work, items, share, write_end, [w[1] for w in workers] + [read_end])
            os.close(write_end)
            workers.append((pid, read_end, share))
        done = {i for _, _, share in workers for i in share}
        for at, item in enumerate(items):
            if at not in done:
                results[at] = work(item)
        for pid, read_end, share in workers:
            answer = _answer(read_end, pid, len(share))
            if answer is not None:
                for at, value in zip(share, answer, strict=True):
                    results[at] = value  # type: ignore[assignment]  # what `work` returned
        workers = []
    finally:
        for pid, read_end, _ in workers:  # this process failed or was interrupted
            _end(pid, read_end)
    return results


def _worker(work: Callable[[T], R | None], items: Sequence[T], share: range, write_end: int,
            inherited: list[int]) -> None:
    """Do `share` of `items` and write the answers to `write_end`; exit, never return."""
    code = 1
    try:
        for fd in inherited:
            os.close(fd)
        reply = marshal.dumps([work(items[at]) for at in share])
        view = memoryview(reply)
        while view:
            view = view[os.write(write_end, view):]
        code = 0
    except BaseException:  # whatever it was, this process redoes the share
        pass
    finally:
        os._exit(code)


def _answer(read_end: int, pid: int, expected: int) -> list[object] | None:
    """What the worker `pid` answered (`expected` values), or None when it failed."""
    chunks: list[bytes] = []
    try:
        while chunk := os.read(read_end, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return None
    try:
        answer = marshal.loads(b"".join(chunks))
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(answer, list) or len(answer) != expected:
        return None
    return answer


def _end(pid: int, read_end: int) -> None:
    """Stop and reap the worker `pid` (this process is leaving without its answer)."""
    with suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    os.close(read_end)
    with suppress(OSError):
        os.waitpid(pid, 0)
