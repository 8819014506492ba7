"""Each archive's SHA-256 is hashed as pack writes it (`HashingFile`), never read back, and is
the SHA-256 of the archive's bytes; an archive whose writer patched a CRC (a member streamed
from disk) is hashed once written instead."""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
import zlib
from pathlib import Path

import pytest

from skillpack.errors import IntegrityError
from skillpack.packing import pack as pack_module
from skillpack.packing.pack import pack_skills
from skillpack.packing.sha256 import HashingFile, archive_sha256
from skillpack.packing.verify import digest
from skillpack.storedzip.writer import CHUNK_SIZE, ZipWriter

MiB = 1 << 20

SKILL_MD = "---\nname: {}\ndescription: A skill whose archive is hashed as it is written.\n---\n"


def make_skill(root: Path, files: dict[str, bytes]) -> Path:
    root.mkdir()
    (root / "SKILL.md").write_text(SKILL_MD.format(root.name))
    for name, data in files.items():
        (root / name).write_bytes(data)
    return root


def count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The archives pack reads back to hash them."""
    read_back: list[str] = []

    def counting(path: str | Path) -> str:
        read_back.append(str(path))
        return archive_sha256(path)

    monkeypatch.setattr(pack_module, "archive_sha256", counting)
    return read_back


def sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_archive_of_small_files_is_hashed_while_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skill = make_skill(tmp_path / "small", {"a.txt": b"alpha\n", "b.bin": bytes(range(256))})
    read_back = count_reads(monkeypatch)
    [result] = pack_skills([skill], tmp_path / "out")
    assert result.written and result.sha256 == sha(result.path)
    assert read_back == []  # never read again


def test_an_archive_with_a_patched_crc_is_hashed_once_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = bytes(range(256)) * (3 * CHUNK_SIZE // 256)  # streamed from disk: CRC patched
    skill = make_skill(tmp_path / "big", {"big.bin": big})
    monkeypatch.setattr(pack_module, "KEEP_BYTES", 0)
    read_back = count_reads(monkeypatch)
    [result] = pack_skills([skill], tmp_path / "out")
    assert result.sha256 == sha(result.path)
    assert read_back == [str(result.path)]


def test_an_archive_left_as_it_was_is_hashed_from_its_bytes(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "again", {"a.txt": b"alpha\n"})
    [first] = pack_skills([skill], tmp_path / "out")
    [second] = pack_skills([skill], tmp_path / "out")
    assert not second.written and second.sha256 == first.sha256 == sha(first.path)


def test_hashing_file_is_exact_until_something_is_written_over() -> None:
    buffer = io.BytesIO()
    hashing = HashingFile(buffer)
    with ZipWriter(hashing) as writer:  # type: ignore[arg-type]
        writer.add_bytes("a.txt", b"alpha\n")
    assert hashing.sha256() == "sha256:" + hashlib.sha256(buffer.getvalue()).hexdigest()
    hashing.seek(0)
    hashing.write(b"P")
    assert hashing.sha256() is None


def test_a_large_file_is_written_front_to_back_and_hashed_while_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file the walk streamed (4 MiB or more) carries its CRC-32 from that read: the writer
    puts it in the header at once, so the archive is never seeked into nor read back."""
    big = bytes(range(256)) * (5 * MiB // 256)
    skill = make_skill(tmp_path / "large", {"big.bin": big})
    read_back = count_reads(monkeypatch)
    [result] = pack_skills([skill], tmp_path / "out")
    assert read_back == [] and result.sha256 == sha(result.path)
    with zipfile.ZipFile(result.path) as archive:
        assert archive.testzip() is None  # every CRC right
        assert archive.read("large/big.bin") == big
    assert digest(result.path) == digest(skill)


def test_a_crc_that_does_not_match_the_bytes_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    data = b"x" * (2 * CHUNK_SIZE)
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(IntegrityError, match="CRC-32"):
            ZipWriter(io.BytesIO()).add_fd("data.bin", fd, len(data),
                                          expect_crc=zlib.crc32(data) ^ 1)
    finally:
        os.close(fd)


def test_an_archive_built_in_memory_is_the_one_written_member_by_member(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Up to `JOIN_BYTES`, an archive of members in memory is joined and written in one call;
    past it, written member by member through `HashingFile`: the same bytes, the same SHA-256,
    and neither read back."""
    files = {f"f{i:02}.txt": bytes([i]) * (i * 997) for i in range(40)}
    skill = make_skill(tmp_path / "joined", {**files, "run.sh": b"#!/bin/sh\necho hi\n"})
    (skill / "run.sh").chmod(0o755)
    read_back = count_reads(monkeypatch)
    [joined] = pack_skills([skill], tmp_path / "one")
    assert pack_module._joinable(
        pack_module.prepare_skill(skill, keep_bytes=pack_module.KEEP_BYTES).members())
    monkeypatch.setattr(pack_module, "JOIN_BYTES", 0)  # every archive member by member
    [streamed] = pack_skills([skill], tmp_path / "two")
    assert joined.path.read_bytes() == streamed.path.read_bytes()
    assert joined.sha256 == streamed.sha256 == sha(joined.path)
    assert read_back == []
    with zipfile.ZipFile(joined.path) as archive:
        assert archive.testzip() is None
        assert archive.read("joined/f39.txt") == files["f39.txt"]
