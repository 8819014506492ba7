"""One helper thread running jobs in turn: work that releases the GIL (an RE2 search, a
hash) then runs on the other core while the caller goes on.

A `Background` starts its daemon thread on first use. `run(job)` queues `job` and returns a
`Pending` whose `result()` waits for it and returns what it returned or raises what it
raised. Jobs run one after the other, in the order queued: a job must never wait for another
job of the same `Background` (that would wait for ever); give each kind of work its own.
What a one-thread ``concurrent.futures`` pool does, without its import. A child process forked
after the thread started gets a thread of its own on its first job.
"""

from __future__ import annotations

import os
import signal
from _queue import SimpleQueue  # queue's own, without queue's imports (start-up)
from _thread import allocate_lock
from collections.abc import Callable

__all__ = ["Background", "Pending", "quiet_helper"]

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from typing import Generic as _Generic
    from typing import TypeVar

    T = TypeVar("T")
else:  # `Pending` is generic to the checker only (importing typing costs start-up)
    T = None

    class _Generic:
        def __class_getitem__(cls, item: object) -> type:
            return object


class Pending(_Generic[T]):
    """A queued job's outcome: `result` waits for it (once)."""

    __slots__ = ("_done",)

    def __init__(self) -> None:
        self._done: SimpleQueue[tuple[T | None, BaseException | None]] = SimpleQueue()

    def result(self) -> T:
        value, error = self._done.get()
        if error is not None:
            raise error
        return value  # type: ignore[return-value]  # None only with an error


class Background:
    """One daemon thread, named `name`, started on first use, running queued jobs in turn."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._todo: SimpleQueue[tuple[Callable[[], object], Pending[object]]] = SimpleQueue()
        self._started = 0  # the pid of the process whose thread runs the jobs (0: none)
        self._lock = allocate_lock()

    def run(self, job: Callable[[], T]) -> Pending[T]:
        pid = os.getpid()
        if self._started != pid:  # not yet, or in a child forked since: no thread there
            with self._lock:
                if self._started != pid:
                    import threading  # start-up: the thread's module, only when one starts

                    self._todo = SimpleQueue()
                    threading.Thread(target=self._loop, name=self._name, daemon=True).start()
                    self._started = pid
        pending: Pending[T] = Pending()
        self._todo.put((job, pending))  # type: ignore[arg-type]
        return pending

    def _loop(self) -> None:
        quiet_helper()
        todo = self._todo
        while True:
            job, pending = todo.get()
            try:
                value = job()
            except BaseException as err:  # handed to the caller by `result`
                pending._done.put((None, err))
            else:
                pending._done.put((value, None))
            del job, pending  # free the job's data before waiting for the next one


def quiet_helper() -> None:
    """Block SIGINT and SIGTERM in the calling thread, a helper: the kernel then delivers
    them to the main thread, whose Python handler runs at once even while that thread waits
    in a system call (a worker's pipe, a helper's result), instead of to a helper, which
    would leave the handler waiting until the main thread next runs Python code. Threads a
    helper starts (BLAKE3's) inherit the mask."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
