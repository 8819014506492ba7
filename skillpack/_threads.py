"""What every helper thread of the build does first: leave SIGINT and SIGTERM to the main
thread (`quiet_helper`)."""

from __future__ import annotations

import signal

__all__ = ["quiet_helper"]


def quiet_helper() -> None:
    """Block SIGINT and SIGTERM in the calling thread, a helper: the kernel then delivers
    them to the main thread, whose Python handler runs at once even while that thread waits
    in a system call (a helper's result), instead of to a helper, which would leave the
    handler waiting until the main thread next runs Python code. Threads a helper starts
    (BLAKE3's) inherit the mask."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
