"""A command's independent per-skill work spread over the machine's cores: worker processes
forked from this one, each taking the next item when done with the last (this process too),
sending back what it found when there is none left.

Only where forking is safe and pays: on Linux, with no other thread running in this process
(a thread's locks would be copied held), and with enough items that each process gets
`MIN_SHARE` of them (a fork and its reply cost about a millisecond; a skill, about as much):
as many processes as there are usable cores, at most `MAX_WORKERS`. ``SKILLPACK_JOBS=N``
asks for N processes in all instead, whatever the cores (``1``: none forked, every item in
this one), within the same bounds; anything else that is not a whole number of one or more
is ignored.

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
    from typing import TypeVar, cast

    T = TypeVar("T")
    R = TypeVar("R")
else:
    def cast(kind: object, value: object) -> object:  # typing.cast, without importing typing
        return value

__all__ = ["JOBS_ENV", "MAX_WORKERS", "MIN_SHARE", "TICKETS", "in_workers", "worker_count"]

#: The environment variable that bounds the processes a command uses (``1``: no worker).
JOBS_ENV = "SKILLPACK_JOBS"
#: The fewest items worth a worker of their own.
MIN_SHARE = 4
#: The most processes a command uses, this one included.
MAX_WORKERS = 8
#: The most tickets dealt (`in_workers`): 4 bytes each, 4 KiB in all, what a pipe holds.
TICKETS = 1024


def worker_count(items: int) -> int:
    """How many processes (this one included) share `items` items: 1 when none is forked."""
    if sys.platform != "linux" or not hasattr(os, "fork"):
        return 1
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return 1
    asked = os.environ.get(JOBS_ENV, "")
    if asked.isdecimal() and int(asked) >= 1:
        wanted = int(asked)
    else:
        try:
            wanted = len(os.sched_getaffinity(0))
        except OSError:
            return 1
    return max(min(wanted, MAX_WORKERS, items // MIN_SHARE), 1)


def in_workers(work: Callable[[T], R | None], items: Sequence[T]) -> list[R | None] | None:
    """``[work(item) for item in items]``, the items shared among `worker_count` processes;
    None when that is one (no worker would be forked: the caller does the items in its own
    loop, once each). None in the list: do that item again (it failed, or its worker did).
    `work` must not raise for an input that can fail (it returns None), nor print.

    The items are dealt as they go: a pipe holds one ticket (4 bytes: a run of items, at most
    `TICKETS` runs) for each, and every process, this one included, takes the next ticket when
    it is done with the last (a read of 4 bytes from a pipe is one whole ticket: no two
    processes take the same). So a process that drew a big skill takes fewer, and all end at
    about the same time."""
    count = worker_count(len(items))
    if count == 1:
        return None
    results: list[R | None] = [None] * len(items)
    run = -(-len(items) // TICKETS)  # items a ticket
    tickets, dealer = os.pipe()
    workers: list[tuple[int, int]] = []  # pid, read end of its answer
    try:
        try:  # at most TICKETS x 4 bytes = 4 KiB: what any pipe holds, written at once
            os.write(dealer, b"".join(at.to_bytes(4, "little")
                                      for at in range(0, len(items), run)))
        finally:
            os.close(dealer)
        for _ in range(1, count):
            read_end, write_end = os.pipe()
            try:
                pid = os.fork()
            except OSError:  # no process to spare: the others take its tickets
                os.close(read_end)
                os.close(write_end)
                break
            if pid == 0:  # the worker: never returns
                _worker(work, items, run, tickets, write_end,
                        [end for _, end in workers] + [read_end])
            os.close(write_end)
            workers.append((pid, read_end))
        for at, value in _take(work, items, run, tickets):
            results[at] = value
        while workers:
            pid, read_end = workers[0]
            reply = _read_all(read_end)  # interrupted: the worker is still listed, and ended
            del workers[0]
            os.close(read_end)
            _, status = os.waitpid(pid, 0)  # it closed its end: it is exiting
            for at, answered in _answer(reply, status, len(items)):
                results[at] = cast("R | None", answered)  # what `work` returned, marshalled
    finally:
        os.close(tickets)
        for pid, read_end in workers:  # this process failed or was interrupted
            _end(pid, read_end)
    return results


def _take(work: Callable[[T], R | None], items: Sequence[T], run: int,
          tickets: int) -> list[tuple[int, R | None]]:
    """Take tickets until there is none left, doing each one's items: (index, value) each."""
    done: list[tuple[int, R | None]] = []
    while ticket := os.read(tickets, 4):
        first = int.from_bytes(ticket, "little")
        done.extend((at, work(items[at])) for at in range(first, min(first + run, len(items))))
    return done


def _worker(work: Callable[[T], R | None], items: Sequence[T], run: int, tickets: int,
            write_end: int, inherited: list[int]) -> None:
    """Do the items of the tickets this process takes and write (index, value) of each to
    `write_end`; exit, never return."""
    code = 1
    try:
        for fd in inherited:
            os.close(fd)
        view = memoryview(marshal.dumps(_take(work, items, run, tickets)))
        while view:
            view = view[os.write(write_end, view):]
        code = 0
    except BaseException:  # whatever it was: its items stay None, done again by the caller
        pass
    finally:
        os._exit(code)


def _read_all(read_end: int) -> bytes:
    """Everything a worker wrote to its end of the pipe `read_end`, until it closed it."""
    chunks: list[bytes] = []
    while chunk := os.read(read_end, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _answer(reply: bytes, status: int, items: int) -> list[tuple[int, object]]:
    """What a worker that ended with `status` answered (`reply`): (index, value) each, an
    index of one of `items`; nothing when it failed."""
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return []
    try:
        answer = marshal.loads(reply)
    except (EOFError, ValueError, TypeError):
        return []
    if not isinstance(answer, list) or not all(
            isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], int)
            and 0 <= pair[0] < items for pair in answer):
        return []
    return answer


def _end(pid: int, read_end: int) -> None:
    """Stop and reap the worker `pid` (this process is leaving without its answer)."""
    with suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    os.close(read_end)
    with suppress(OSError):
        os.waitpid(pid, 0)
