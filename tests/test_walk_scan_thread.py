"""The reading walk checks the content of the small files it reads on a helper thread, in
batches (issue 18): the file sets, digests and refusals are those of checking each file on
the spot, in the order read, whatever the batch size and however many bytes may wait.

Fake secrets are built at test time by concatenation.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from conftest import CORPUS_SKILLS

from skillpack.build import walk as walk_module
from skillpack.build.background import Background
from skillpack.build.fileset import FileSet
from skillpack.build.records import digest_skill
from skillpack.build.walk import walk
from skillpack.errors import Problem, RefusedError

#: (batch bytes, bytes that may wait): on the spot (one batch, checked on this thread at the
#: end), one file a batch, one file a batch waited for at once, and the default.
SETTINGS = [(1 << 62, 1 << 62), (1, 1 << 62), (1, 0), (walk_module.SCAN_BATCH,
                                                      walk_module.SCAN_QUEUED)]


def outcome(root: Path, allow: tuple[str, ...] = ()) -> tuple[object, ...]:
    """What a user sees of a reading walk: the file set's paths, hashes and content checks,
    or the refusal's problems, in order."""
    try:
        files: FileSet = walk(root, read=True, allow=allow, sha256=True, keep=1 << 30)
    except RefusedError as err:
        return ("refused", tuple(err.problems))
    return ("ok", files.paths, tuple(
        (p, h.blake3, h.sha256, h.content, h.data, h.shebang)
        for p, h in sorted(files.hashed.items())))


def every_setting(root: Path, monkeypatch: pytest.MonkeyPatch,
                  allow: tuple[str, ...] = ()) -> list[tuple[object, ...]]:
    seen = []
    for batch, queued in SETTINGS:
        with monkeypatch.context() as patch:
            patch.setattr(walk_module, "SCAN_BATCH", batch)
            patch.setattr(walk_module, "SCAN_QUEUED", queued)
            seen.append(outcome(root, allow))
    return seen


def make_tree(root: Path, rng: random.Random, secrets: int) -> None:
    """A skill of about 60 files of 0 to 200 KB (text and random bytes) in a few folders,
    `secrets` of them holding a PEM private key block or an AWS key id (made here)."""
    (root / "SKILL.md").write_text("---\nname: t\ndescription: d\n---\nbody\n")
    key = ("-----BEGIN RSA " + "PRIVATE KEY-----\n" + "MIIEow" * 20 + "\n").encode()
    aws = ("AK" + "IA" + "QWERTYUIOPASDFGH").encode()
    for i in range(60):
        folder = root / f"d{i % 4}"
        folder.mkdir(exist_ok=True)
        size = rng.choice([0, 10, 1000, 50_000, 200_000])
        data = rng.randbytes(size) if i % 2 else (b"line of text\n" * (size // 13 + 1))[:size]
        if i < secrets:
            data += b"\n" + (key if i % 2 else b"id = " + aws + b"\n")
        (folder / f"f{i:02d}.txt").write_bytes(data)
    os.chmod(root / "d1" / "f01.txt", 0o755)


@pytest.mark.parametrize("secrets", [0, 1, 7, 60])
def test_generated_trees_walk_the_same_whatever_the_batches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secrets: int) -> None:
    make_tree(tmp_path, random.Random(secrets), secrets)
    seen = every_setting(tmp_path, monkeypatch)
    assert seen[0][0] == ("refused" if secrets else "ok")
    assert all(s == seen[0] for s in seen), secrets
    if secrets:
        problems = seen[0][1]
        assert isinstance(problems, tuple)
        assert len({p.file for p in problems if isinstance(p, Problem)}) == secrets


def test_allowances_are_checked_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    """A file allowed whole, one allowed one rule (used), and one allowed a rule that finds
    nothing (allow-unused): the same refusal in every setting."""
    make_tree(tmp_path, random.Random(1), 4)
    allow = ("d0/f00.txt#aws-access-key-id", "d1/f01.txt", "d2/f02.txt#github-token")
    seen = every_setting(tmp_path, monkeypatch, allow)
    assert all(s == seen[0] for s in seen)
    codes = [p.code for p in seen[0][1] if isinstance(p, Problem)]  # type: ignore[union-attr]
    assert "allow-unused" in codes and codes.count("secret") == 2


def test_a_token_in_a_file_of_each_batch_is_reported_with_its_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "SKILL.md").write_text("---\nname: t\ndescription: d\n---\nbody\n")
    token = "AK" + "IA" + "QWERTYUIOPASDFGH"
    for i in range(20):
        (tmp_path / f"n{i:02d}.md").write_bytes(b"x\n" * i + b"t = " + token.encode() + b"\n")
    for seen in every_setting(tmp_path, monkeypatch):
        assert seen[0] == "refused"
        lines = [(p.file, p.line) for p in seen[1] if isinstance(p, Problem)]  # type: ignore
        assert lines == [(f"n{i:02d}.md", i + 1) for i in range(20)]


@pytest.mark.corpus
def test_corpus_digests_are_the_same_whatever_the_batches(
        monkeypatch: pytest.MonkeyPatch) -> None:
    skills = [str(s) for s in CORPUS_SKILLS]
    assert len(skills) > 100
    seen = []
    for batch, queued in SETTINGS:
        with monkeypatch.context() as patch:
            patch.setattr(walk_module, "SCAN_BATCH", batch)
            patch.setattr(walk_module, "SCAN_QUEUED", queued)
            seen.append([digest_skill(s)[1] for s in skills])
    assert all(s == seen[0] for s in seen)


def test_a_background_job_returns_or_raises_in_order() -> None:
    helper = Background("skillpack-test")
    done = [helper.run(lambda i=i: i * i) for i in range(50)]
    failed = helper.run(lambda: 1 // 0)
    after = helper.run(lambda: "still running")
    assert [d.result() for d in done] == [i * i for i in range(50)]
    with pytest.raises(ZeroDivisionError):
        failed.result()
    assert after.result() == "still running"
