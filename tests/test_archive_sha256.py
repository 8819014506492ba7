"""Each archive's SHA-256 is hashed as pack writes it (`HashingFile`), never read back, and is
the SHA-256 of the archive's bytes; an archive whose writer patched a CRC (a member streamed
from disk) is hashed once written instead."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest

from skillpack.build import pack as pack_module
from skillpack.build.pack import pack_skills
from skillpack.build.sha256 import HashingFile, archive_sha256
from skillpack.storedzip.writer import CHUNK_SIZE, ZipWriter

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
    monkeypatch.setattr(pack_module, "PACK_KEEP_BYTES", 0)
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
