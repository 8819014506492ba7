"""Shared paths and helpers for the test suite.

``REPO`` is the repository root, ``FIXTURES`` its ``fixtures/`` folder, ``CORPUS`` the
read-only corpus of real skills (``$SKILLPACK_CORPUS``, else ``../shared/corpus`` beside the
repository), and ``CORPUS_SKILLS`` every skill folder in it, sorted (empty when there is no
corpus). Import them (``from conftest import CORPUS``) or use the fixtures of the same names in
lower case.

The corpus
----------
A test whose subject is the real corpus is marked ``@pytest.mark.corpus`` (a whole module:
``pytestmark = pytest.mark.corpus``). Without a corpus those tests skip, all with the one reason
`CORPUS_REASON`, so a fresh clone runs everything else. ``SKILLPACK_REQUIRE_CORPUS=1`` (CI sets
it) makes a missing corpus an error instead. A ``SKILLPACK_CORPUS`` that does not exist or holds
no skill is a usage error naming the path, never a skip.
"""

from __future__ import annotations

import errno
import importlib.util
import os
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _registry import Registry, need, serve, which

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
CORPUS_ENV = "SKILLPACK_CORPUS"
REQUIRE_ENV = "SKILLPACK_REQUIRE_CORPUS"
CORPUS = Path(os.environ.get(CORPUS_ENV) or REPO.parent / "shared" / "corpus").resolve()
CORPUS_SKILLS = sorted(p.parent for p in CORPUS.glob("*/*/SKILL.md"))
CORPUS_REASON = (f"needs the corpus of real skills, absent at {CORPUS}: set "
                 f"{CORPUS_ENV}=/path/to/corpus, or put it at ../shared/corpus beside the checkout")


def corpus_problem() -> str | None:
    """Why the corpus cannot be used, when it was asked for (by the variable, by
    ``SKILLPACK_REQUIRE_CORPUS=1``, or by a folder at the default place); None otherwise."""
    explicit = bool(os.environ.get(CORPUS_ENV))
    required = os.environ.get(REQUIRE_ENV, "") not in ("", "0")
    if not CORPUS.is_dir():
        if explicit or required:
            return (f"{CORPUS}: no such corpus folder (from "
                    f"{'$' + CORPUS_ENV if explicit else 'the default ../shared/corpus'}"
                    f"{', and $' + REQUIRE_ENV + '=1 makes it required' if required else ''})")
        return None
    if not CORPUS_SKILLS:
        return f"{CORPUS}: holds no skill (no */*/SKILL.md); point ${CORPUS_ENV} at the corpus"
    return None


def pytest_configure(config: pytest.Config) -> None:
    problem = corpus_problem()
    if problem:
        raise pytest.UsageError(problem)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a corpus test when there is no corpus, before its fixtures read it; the skip is
    raised here, so the summary shows it once (one location, one reason)."""
    if not CORPUS_SKILLS and item.get_closest_marker("corpus") is not None:
        pytest.skip(CORPUS_REASON)


def load_benchmark(name: str) -> ModuleType:
    """The script ``benchmarks/NAME.py`` as a module (benchmarks/ is not a package), so that
    a test runs the very code a benchmark or a doc's table comes from."""
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


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
    """The corpus folder; skips the test (with `CORPUS_REASON`) when there is none."""
    if not CORPUS_SKILLS:
        pytest.skip(CORPUS_REASON)
    return CORPUS


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


# -- skills the suite writes itself (what a fresh clone tests with, in place of the corpus) ------

#: The fixture that is invalid for its description alone (1,025 characters; the limit is 1,024).
TOO_LONG = FIXTURES / "broken" / "description-too-long"


def rich_skill(folder: Path, flavour: str = "") -> Path:
    """A valid skill named after ``folder``, deep and wide: three executable scripts (one two
    folders down), references, a ``.gitignore``, a binary asset and a file whose name needs
    UTF-8; ``flavour`` varies the bytes, so two rich skills of one name differ."""
    name = folder.name
    write_skill(folder, f"---\nname: {name}\ndescription: A rich {flavour}skill written at test "
                f"time, deep and wide.\n---\n\nRun `scripts/run.py`; see references/.\n", {
                    "scripts/run.py": f"#!/usr/bin/env python3\nprint('{flavour}run')\n",
                    "scripts/tools/deep/fix.sh": f"#!/bin/sh\necho '{flavour}fix'\n",
                    "scripts/build.py": f"#!/usr/bin/env python3\nprint('{flavour}build')\n",
                    "scripts/helper.py": "def helper() -> int:\n    return 1\n",
                    "references/guide.md": f"# Guide {flavour}\n\n" + "Some prose. " * 200,
                    "references/nested/a/b/c.md": "deep\n",
                    "references/caf\u00e9.md": "accent\n",
                    ".gitignore": "*.tmp\n",
                })
    (folder / "assets").mkdir()
    (folder / "assets" / "logo.bin").write_bytes(bytes(range(256)) * 8)
    for rel in ("scripts/run.py", "scripts/tools/deep/fix.sh", "scripts/build.py"):
        (folder / rel).chmod(0o755)
    return folder


#: How many files of a `rich_skill` carry the execute bit.
RICH_EXECUTABLES = 3


@pytest.fixture(scope="session")
def twins(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two different skills both named ``skill-creator``, each alone in a folder of skills
    (``one/`` and ``two/``), as the corpus has one in anthropics-skills and one in
    openai-skills."""
    root = tmp_path_factory.mktemp("twins")
    return (rich_skill(root / "one" / "skill-creator", "one "),
            rich_skill(root / "two" / "skill-creator", "two "))


@pytest.fixture(scope="session")
def rich(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One `rich_skill` named ``rich`` (do not change it: copy it first)."""
    return rich_skill(tmp_path_factory.mktemp("rich") / "rich")


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
