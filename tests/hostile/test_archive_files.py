"""Hostile archives and bundles read from a FILE: `verify_file` (what `verify`, `inspect`,
`digest`, `bundle` and `lock` of an archive run) reads them by offset, a chunk at a time
(`skillpack.storedzip.source`, `read_zip_file`), never whole. Every refusal the in-memory
path makes (`verify_bytes`, and every one-byte change) must happen through the file path too,
with the same error kind and the same words (the tables of test_archives.py and
test_bundles.py are tried from a file there); and a file that changes while it is read is
refused, never half-trusted.
"""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest
from helpers.hostile import TALLY, demo_skill, same_refusal
from helpers.zips import flip

from skillpack._regular import open_regular
from skillpack.errors import (
    IntegrityError,
)
from skillpack.packing.pack import pack
from skillpack.packing.verify import verify_bytes, verify_file
from skillpack.storedzip.reader import read_zip_file
from skillpack.storedzip.source import FileBytes


def test_every_one_byte_change_is_refused_from_a_file_in_the_same_words(
    good_archive: bytes, tmp_path: Path,
) -> None:
    path = tmp_path / "flipped.skill"
    for pos in range(len(good_archive)):
        same_refusal(flip(good_archive, pos, 0x80), path)
    TALLY.add("archive", "one-byte changes (every position)", "verify_file", "refused",
              "same error as verify_bytes", count=len(good_archive))


def test_truncated_and_appended_files_are_refused_in_the_same_words(
    good_archive: bytes, tmp_path: Path,
) -> None:
    path = tmp_path / "cut.skill"
    for data in (good_archive[:-1], good_archive[:22], good_archive[:21], b"",
                 good_archive + b"x", b"x" * 70_000 + good_archive, good_archive + b"\0" * 70_000):
        same_refusal(data, path)


def test_the_good_archive_and_bundle_verify_the_same_from_a_file(
    good_archive: bytes, good_bundle: bytes, tmp_path: Path,
) -> None:
    for data, name in ((good_archive, "good.skill"), (good_bundle, "good.bundle")):
        path = tmp_path / name
        path.write_bytes(data)
        from_file, in_memory = verify_file(path), verify_bytes(data, source=str(path))
        assert from_file.skills == in_memory.skills
        assert from_file.digest == in_memory.digest and from_file.kind == in_memory.kind


# -- a file that changes while it is read --------------------------------------------------------

def _big_archive(tmp_path: Path) -> Path:
    """An archive with a 3 MiB member (served from a file as a lazy span, read by chunks)."""
    from skillpack.packing.pack import pack

    skill = tmp_path / "big"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: big\ndescription: Carries one large data "
                                    "file.\n---\n# Big\n")
    (skill / "data.bin").write_bytes(bytes(range(256)) * (3 * 4096))
    [archive] = pack(skill, tmp_path / "out")
    return archive


def test_a_file_truncated_after_verifying_is_refused_when_served(tmp_path: Path) -> None:
    archive = _big_archive(tmp_path)
    report = verify_file(archive)
    assert report.loaded is not None
    os.truncate(archive, os.path.getsize(archive) // 2)
    with pytest.raises(IntegrityError, match="changed while it was being read"):
        report.loaded.verify_all()
    with pytest.raises(IntegrityError, match="changed while it was being read"):
        report.loaded["big"].file("data.bin").bytes()


def test_a_file_rewritten_in_place_while_read_is_refused(tmp_path: Path) -> None:
    archive = _big_archive(tmp_path)
    data = archive.read_bytes()
    os.utime(archive, ns=(0, 0))  # any write from now on changes its modification time
    with FileBytes(open_regular(archive), str(archive)) as file:
        index = read_zip_file(file)
        entry = index.get("big/data.bin")
        assert entry is not None
        span = file.span(entry.data_offset, entry.size)
        # the same size, other bytes: the size and the BLAKE3 of the member still agree with
        # what was listed when the read began, only the file's times tell
        with open(archive, "r+b") as handle:
            handle.seek(entry.data_offset)
            handle.write(b"\xff" * 16)
        with pytest.raises(IntegrityError, match="size or modification time changed"):
            span.blake3_hex()
    archive.write_bytes(data)
    assert verify_file(archive).skills[0].name == "big"


def test_large_text_files_are_served_from_a_file_as_from_bytes(tmp_path: Path) -> None:
    """A SKILL.md and a text file of 1 MiB or more are lazy spans of the file: the runtime
    decodes them (frontmatter, `text()`) the same as from bytes."""
    from skillpack.packing.pack import pack

    skill = tmp_path / "wordy"
    skill.mkdir()
    body = "Words and more words.\n" * 60_000  # 1.3 MB
    (skill / "SKILL.md").write_text("---\nname: wordy\ndescription: A long SKILL.md.\n---\n"
                                    + body)
    (skill / "notes.txt").write_text("é" * (1 << 20))
    [archive] = pack(skill, tmp_path / "out")
    report = verify_file(archive)
    assert report.loaded is not None
    loaded = report.loaded["wordy"]
    assert loaded.body.strip() == body.strip()
    assert loaded.file("notes.txt").text() == "é" * (1 << 20)
    assert report.skills == verify_bytes(archive.read_bytes(), source=str(archive)).skills


def test_a_folder_of_archives_holds_no_descriptor_open(good_archive: bytes,
                                                       tmp_path: Path) -> None:
    from skillpack.packing.verify import verify_target

    folder = tmp_path / "archives"
    folder.mkdir()
    for n in range(40):
        (folder / f"demo-{n:02}.skill").write_bytes(good_archive)
    before = len(os.listdir("/proc/self/fd"))
    report = verify_target(folder)
    assert report.kind == "archives" and len(report.skills) == 40
    assert len(os.listdir("/proc/self/fd")) <= before  # not one per archive


# -- memory: verify copies no member ---------------------------------------------------------------

def test_verify_of_an_archive_copies_no_member(tmp_path: Path) -> None:
    size = 48 << 20
    skill = demo_skill(tmp_path / "demo", {"big.bin": b"\x00" * size})
    [archive] = pack(skill, tmp_path / "out")
    data = archive.read_bytes()  # the archive itself: what verify is given
    tracemalloc.start()
    try:
        report = verify_bytes(data, source="big.skill")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.skills[0].name == "demo"
    ok = peak < size // 4  # no copy of the 48 MiB member (before: one for the secret scan)
    TALLY.add("archive", "verify of a 48 MiB member, memory", "verify_bytes",
              "handled" if ok else "accepted", f"peak {peak:,} bytes")
    assert ok, f"verify_bytes allocated {peak:,} bytes for a {size:,}-byte member"
