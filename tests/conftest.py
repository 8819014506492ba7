"""Shared paths and helpers for the test suite.

``REPO`` is the repository root, ``FIXTURES`` its ``fixtures/`` folder, ``CORPUS`` the
read-only corpus of real skills (``../shared/corpus`` beside the repository), and
``CORPUS_SKILLS`` every skill folder in it, sorted. Import them (``from conftest import
CORPUS``) or use the fixtures of the same names in lower case.
"""

from __future__ import annotations

import errno
import os
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _registry import Registry, need, serve, which

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
CORPUS = (REPO.parent / "shared" / "corpus").resolve()
CORPUS_SKILLS = sorted(p.parent for p in CORPUS.glob("*/*/SKILL.md"))


def make_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create ``files`` (relative path -> text or bytes) under ``root``; return ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


Members = dict[str, tuple[bytes, bool]]  # zip member name -> (bytes, executable)


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


def zip_of(members: Members) -> bytes:
    """A zip of ``members`` written by skillpack's own writer (valid, self-consistent)."""
    import io

    from skillpack.storedzip.writer import ZipWriter

    out = io.BytesIO()
    with ZipWriter(out) as writer:
        for name in sorted(members, key=lambda n: n.encode("utf-8")):
            data, executable = members[name]
            writer.add_bytes(name, data, executable=executable)
    return out.getvalue()


def write_skill(folder: Path, text: str | bytes, files: dict[str, str] | None = None) -> Path:
    """Create ``folder`` holding a SKILL.md with ``text`` (and ``files``); return the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "SKILL.md"
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text, encoding="utf-8", newline="")
    for rel, content in (files or {}).items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return folder


@pytest.fixture
def corpus() -> Path:
    return CORPUS


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def reg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """One real registry for the session (tests/_registry.py); skips without one."""
    with serve(tmp_path_factory.mktemp("registry")) as running:
        yield running


@pytest.fixture
def skopeo() -> str:
    """The path of the `skopeo` binary; skips without it."""
    path = which("skopeo")
    need("skopeo", path is not None)
    assert path is not None
    return path
