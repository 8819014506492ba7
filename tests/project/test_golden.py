"""Digests and archive bytes do not move: the fixtures and the corpus pack to the digests the
code wrote before the restructuring into layers, and to the archive bytes recorded in
tests/golden/archives.json (re-recorded once for the 1.1 manifest, digests unchanged; the
root layout's once more when it stopped carrying the manifest, SPEC section 3b)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from helpers.paths import CORPUS, FIXTURES, REPO

import skillpack

GOLDEN = json.loads((REPO / "tests" / "golden" / "archives.json").read_text())


def _pack(folder: Path, out: Path) -> tuple[str, str, str]:
    """(digest, archive name, SHA-256 of the archive) of `folder` packed into `out`."""
    [archive] = skillpack.pack([folder], out)
    return skillpack.digest(folder), archive.name, hashlib.sha256(archive.read_bytes()).hexdigest()


@pytest.mark.parametrize("rel", sorted(GOLDEN["fixtures"]))
def test_fixture_archives_are_byte_identical(rel: str, tmp_path: Path) -> None:
    want = GOLDEN["fixtures"][rel]
    assert _pack(REPO / rel, tmp_path) == (want["digest"], want["archive"], want["sha256"])


@pytest.mark.parametrize("rel", sorted(GOLDEN["fixtures_root"]))
def test_root_layout_archives_are_byte_identical(rel: str, tmp_path: Path) -> None:
    want = GOLDEN["fixtures_root"][rel]
    [archive] = skillpack.pack([REPO / rel], tmp_path, layout="root")
    assert want["digest"] == GOLDEN["fixtures"][rel]["digest"]  # one digest, both layouts
    assert (skillpack.digest(archive), archive.name) == (want["digest"], want["archive"])
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == want["sha256"]


@pytest.mark.parametrize("rel", sorted(GOLDEN["fixtures_host"]))
def test_host_archives_are_byte_identical(rel: str, tmp_path: Path) -> None:
    want = GOLDEN["fixtures_host"][rel]
    [archive] = skillpack.pack([REPO / rel], tmp_path, targets=["openai-api"])
    assert want["digest"] == GOLDEN["fixtures"][rel]["digest"]  # the digest of the files
    assert (skillpack.digest(archive), archive.name) == (want["digest"], want["archive"])
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == want["sha256"]


def test_the_fixture_bundle_is_byte_identical(tmp_path: Path) -> None:
    want = GOLDEN["bundle"]
    result = skillpack.write_bundle([REPO / s for s in want["skills"]], tmp_path / "b.bundle")
    assert result.digest == want["digest"]
    assert hashlib.sha256((tmp_path / "b.bundle").read_bytes()).hexdigest() == want["sha256"]
    assert FIXTURES.is_dir()


@pytest.mark.corpus
@pytest.mark.slow
def test_corpus_archives_are_byte_identical(tmp_path: Path) -> None:
    changed = []
    for rel, want in sorted(GOLDEN["corpus"].items()):
        folder = CORPUS / rel
        if "sha256" not in want:  # refused before the restructuring: still refused
            with pytest.raises(skillpack.SkillpackError):
                skillpack.pack([folder], tmp_path / "refused")
            continue
        got = _pack(folder, tmp_path / rel.replace("/", "_"))
        if got != (want["digest"], want["archive"], want["sha256"]):
            changed.append(rel)
    assert changed == []
    assert len(GOLDEN["corpus"]) == 182
