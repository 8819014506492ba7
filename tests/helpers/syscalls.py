"""System calls watched or made to fail: opens intercepted or denied in this process, and an
audit hook for a child interpreter."""

from __future__ import annotations

import errno
import os
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

#: Source for a child interpreter: ``audit()`` starts recording, in the list it returns, every
#: open, os.*, shutil.*, glob.*, pathlib.* and subprocess.* audit event and every stat, lstat
#: and fstat call (these raise no audit event); ``control(path)`` then opens `path`, lists a
#: folder and stats `path`, accesses the audit must have seen (a blind audit proves nothing).
AUDIT_SOURCE = textwrap.dedent('''
    import os, posix, sys

    def audit():
        events = []
        watched = ("open", "os.", "shutil.", "glob.", "pathlib.", "subprocess.")
        def hook(event, args):
            if event.startswith(watched):
                events.append(f"{event} {args!r:.150}")
        def spy(name, real):
            def wrapper(*args, **kwargs):
                events.append(f"{name} {args!r:.150}")
                return real(*args, **kwargs)
            return wrapper
        for name in ("stat", "lstat", "fstat"):
            setattr(posix, name, spy(name, getattr(posix, name)))
            setattr(os, name, getattr(posix, name))
        sys.addaudithook(hook)
        return events

    def control(path):
        with open(path, "rb"):
            pass
        os.listdir(".")
        os.stat(path)
''')


def intercept_open(monkeypatch: pytest.MonkeyPatch, picks: Callable[[str, int | None], bool],
                   before: Callable[[str], None]) -> None:
    """Call ``before(path)`` just ahead of each ``os.open(path, ..., dir_fd=...)`` that
    ``picks(path, dir_fd)`` chooses; what `before` raises, that open raises."""
    real_open = os.open

    def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if picks(os.fspath(path), kwargs.get("dir_fd")):
            before(os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)


def deny_open(monkeypatch: pytest.MonkeyPatch,
              picks: Callable[[str, int | None], bool]) -> None:
    """The opens `picks` chooses fail with EACCES, as the kernel fails them for a file or
    folder the user may not read (the suite may run as root, which reads anything)."""
    def refuse(path: str) -> None:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)

    intercept_open(monkeypatch, picks, refuse)
