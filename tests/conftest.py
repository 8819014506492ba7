"""Shared paths and helpers for the test suite.

``REPO`` is the repository root, ``FIXTURES`` its ``fixtures/`` folder, ``CORPUS`` the
read-only corpus of real skills (``../shared/corpus`` beside the repository), and
``CORPUS_SKILLS`` every skill folder in it, sorted. Import them (``from conftest import
CORPUS``) or use the fixtures of the same names in lower case.
"""

from __future__ import annotations

from pathlib import Path

import pytest

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


def zip_of(members: Members) -> bytes:
    """A zip of ``members`` written by skillpack's own writer (valid, self-consistent)."""
    import io

    from skillpack.zipwrite import ZipWriter

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
