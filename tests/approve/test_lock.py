"""Lock files: sorted, stable, one line per file, the digest recomputable, written atomically."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from blake3 import blake3
from helpers.cli import cli
from helpers.paths import NOTES, TOO_LONG, WAITLIST
from helpers.skills import make_skill, rich_skill, write_skill
from helpers.syscalls import intercept_open

import skillpack.runtime as rt
from skillpack import _atomic as atomic
from skillpack.approve.lock import Lock, LockEntry, read_lock, write_lock
from skillpack.errors import FormatVersionError, IntegrityError, SkillpackError, WriteError
from skillpack.formats.digest import digest_records
from skillpack.packing.bundle import write_bundle
from skillpack.packing.pack import pack
from skillpack.packing.verify import digest, verify_folder
from skillpack.skillmd.skill import parse_skill
from skillpack.source.load import parse_skill_file


def lock_of(tmp_path: Path, *paths: Path, name: str = "skills.lock") -> Path:
    dest = tmp_path / name
    result = cli("lock", *paths, "-o", dest)
    assert result.exit_code == 0, result.output
    count = len(json.loads(dest.read_text())["skills"])
    assert result.stdout == f"locked {count} skill(s) in {dest}\n"
    return dest


def test_reading_a_lock_does_not_import_the_stage_of_skills_on_disk(tmp_path: Path) -> None:
    """`expect=read_lock(path).digests()` is a cold start's second way to pin a bundle: it must
    not pull in `skillpack.source` (pathspec, the content checks) to read one file."""
    lock = lock_of(tmp_path, WAITLIST)
    code = (f"import sys, skillpack\nskillpack.read_lock({str(lock)!r}).digests()\n"
            "print(sorted(m for m in sys.modules if m.startswith(('skillpack.source', "
            "'pathspec'))))")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, timeout=60)
    assert found.stdout.strip() == "[]"


def test_the_lock_is_sorted_with_one_line_per_file(tmp_path: Path) -> None:
    group = tmp_path / "group"  # a folder of skills, found in it, named out of order
    for name in ("zeta", "alpha", "mid"):
        rich_skill(group / name, name)
    lock = lock_of(tmp_path, WAITLIST, NOTES, group)
    text = lock.read_text(encoding="utf-8")
    data = json.loads(text)
    assert list(data) == ["format", "skills"] and data["format"] == "1.1"
    names = list(data["skills"])
    assert names == sorted(names) and len(names) == 5
    assert text.endswith("}\n")
    for name, entry in data["skills"].items():
        folder = group / name if name not in (
            "waitlist", "release-notes") else (WAITLIST if name == "waitlist" else NOTES)
        parsed = parse_skill_file(folder)
        declared = ["allowed-tools"] if parsed.allowed_tools is not None else []
        assert list(entry) == [*declared, "archive", "description", "digest", "files",
                               "mentions", "programs", "tools"]
        # the SHA-256 of the archive `pack` writes for it, computed without writing it
        [packed] = pack(folder, tmp_path / "packed" / name)
        assert entry["archive"] == "sha256:" + hashlib.sha256(packed.read_bytes()).hexdigest()
        assert entry["description"] == parsed.description
        assert entry["tools"] == [{"id": t.id, "run": list(t.words)}
                                  for t in sorted(parsed.tools, key=lambda t: t.id)]
        report = verify_folder(folder)
        [skill] = report.skills
        assert entry["files"] == [r.line().rstrip("\n") for r in skill.files]
        assert entry["programs"] == list(skill.programs)
        for line in entry["files"]:  # each file on a line of its own, in the file
            assert f'\n        "{line}"' in text
    waitlist = data["skills"]["waitlist"]
    assert waitlist["files"][0].startswith("100644 ") and waitlist["files"][0].endswith(
        " SKILL.md")
    assert waitlist["files"][2].startswith("100755 ")


def test_the_digest_is_recomputable_from_the_lines_alone(tmp_path: Path, rich: Path) -> None:
    lock = lock_of(tmp_path, rich, WAITLIST)
    for name, entry in json.loads(lock.read_text())["skills"].items():
        lines = "".join(line + "\n" for line in entry["files"])
        own = "blake3:" + blake3(b"skillpack-digest-v1\n" + lines.encode()).hexdigest()
        assert own == entry["digest"], name
    assert read_lock(lock).digests()["waitlist"] == digest(WAITLIST)


def test_locking_again_gives_the_same_bytes(tmp_path: Path) -> None:
    one = lock_of(tmp_path, WAITLIST, NOTES, name="one.lock")
    two = lock_of(tmp_path, NOTES, WAITLIST, name="two.lock")
    three = lock_of(tmp_path, WAITLIST, NOTES, WAITLIST, name="three.lock")
    assert one.read_bytes() == two.read_bytes() == three.read_bytes()
    lock = read_lock(one)
    assert lock.to_bytes() == one.read_bytes()
    assert Lock.from_dict(lock.to_dict()) == lock


def test_archives_and_bundles_lock_like_their_folders(tmp_path: Path) -> None:
    folders = lock_of(tmp_path, WAITLIST, NOTES, name="folders.lock")
    archives = pack([WAITLIST, NOTES], tmp_path / "out")
    from_archives = lock_of(tmp_path, *archives, name="archives.lock")
    bundle = write_bundle([WAITLIST, NOTES], tmp_path / "two.bundle").path
    from_bundle = lock_of(tmp_path, bundle, name="bundle.lock")
    assert folders.read_bytes() == from_archives.read_bytes() == from_bundle.read_bytes()


def test_the_lock_pins_a_bundle_at_load(tmp_path: Path) -> None:
    lock = lock_of(tmp_path, WAITLIST, NOTES)
    data = write_bundle([WAITLIST, NOTES], tmp_path / "two.bundle").path.read_bytes()
    assert rt.load(data, expect=json.loads(lock.read_text())).names == ("release-notes",
                                                                         "waitlist")
    assert rt.load(data, expect=read_lock(lock).digests()).digest
    only_one = lock_of(tmp_path, WAITLIST, name="one.lock")
    with pytest.raises(IntegrityError) as info:
        rt.load(data, expect=json.loads(only_one.read_text()))
    assert "release-notes" in str(info.value)


# -- a lock that was edited ---------------------------------------------------------------------

def _edit(lock: Path, change: Any) -> None:
    data = json.loads(lock.read_text())
    change(data["skills"]["waitlist"])
    lock.write_text(json.dumps(data, indent=2))


@pytest.mark.parametrize(("case", "kind", "needle"), [
    ("size", IntegrityError, "do not hash to its digest"),
    ("blake3", IntegrityError, "do not hash to its digest"),
    ("mode", IntegrityError, "do not hash to its digest"),
    ("path", IntegrityError, "do not hash to its digest"),
    ("line dropped", IntegrityError, "do not hash to its digest"),
    ("line added", IntegrityError, "do not hash to its digest"),
    ("digest", IntegrityError, "do not hash to its digest"),
    ("malformed line", SkillpackError, "bad file line"),
    ("bad mode", SkillpackError, "invalid mode"),
    ("bad digest", SkillpackError, "invalid digest"),
    ("files not a list", SkillpackError, "'files' must be a list"),
])
def test_a_tampered_line_is_refused(tmp_path: Path, case: str, kind: type[Exception],
                                    needle: str) -> None:
    lock = lock_of(tmp_path, WAITLIST)
    good = read_lock(lock)

    def change(entry: dict[str, Any]) -> None:
        files = entry["files"]
        mode, size, hexd, path = files[1].split(" ", 3)
        edits = {
            "size": f"{mode} {int(size) + 1} {hexd} {path}",
            "blake3": f"{mode} {size} {'0' * 64} {path}",
            "mode": f"100755 {size} {hexd} {path}",
            "path": f"{mode} {size} {hexd} data/other.csv",
            "malformed line": f"{mode} {size} {hexd}",
            "bad mode": f"100777 {size} {hexd} {path}",
        }
        if case in edits:
            files[1] = edits[case]
        elif case == "line dropped":
            del files[1]
        elif case == "line added":
            files.append(f"100644 1 {'1' * 64} zzz.txt")
        elif case == "digest":
            entry["digest"] = "blake3:" + "1" * 64
        elif case == "bad digest":
            entry["digest"] = "sha256:" + "1" * 64
        else:
            entry["files"] = "\n".join(files)

    _edit(lock, change)
    with pytest.raises(kind) as info:
        read_lock(lock)
    assert needle in str(info.value)
    assert "waitlist" in str(info.value) and str(lock) in str(info.value)
    assert good.digests() == {"waitlist": digest(WAITLIST)}


@pytest.mark.parametrize(("text", "needle"), [
    ("{", "not valid JSON"),
    ("[]", "is a JSON object"),
    ('{"format": "1.0"}', "no 'skills'"),
    ('{"format": "2.0", "skills": {}}', "format 1.x only"),
    ('{"format": "1.7", "skills": {}}', "newer than this skillpack"),
    ('{"skills": {}}', "no readable format version"),
])
def test_a_malformed_lock_is_refused(tmp_path: Path, text: str, needle: str) -> None:
    lock = tmp_path / "bad.lock"
    lock.write_text(text)
    with pytest.raises(SkillpackError) as info:
        read_lock(lock)
    assert needle in str(info.value)
    if "format" in needle:
        assert isinstance(info.value, FormatVersionError)
    result = cli("verify", "--lock", lock, WAITLIST)
    assert result.exit_code == 1 and needle in result.stderr


# -- one name, two skills -----------------------------------------------------------------------

def test_two_different_skills_with_one_name_name_both_sources(tmp_path: Path,
                                                              twins: tuple[Path, Path]) -> None:
    one, two = twins  # two different skills named skill-creator
    dest = tmp_path / "skills.lock"
    result = cli("lock", one, two, "-o", dest)
    assert result.exit_code == 1
    assert "two different skills are named 'skill-creator'" in result.stderr
    assert str(one) in result.stderr and str(two) in result.stderr
    assert not dest.exists()
    # found inside folders of skills: still the skills' own folders, not the folders given
    result = cli("lock", two.parent, one, "-o", dest)
    assert result.exit_code == 1
    assert str(one) in result.stderr and str(two) in result.stderr
    assert not dest.exists()


def test_the_same_skill_twice_is_one_entry(tmp_path: Path) -> None:
    [archive] = pack(WAITLIST, tmp_path / "out")
    lock = lock_of(tmp_path, WAITLIST, archive)
    assert list(read_lock(lock).skills) == ["waitlist"]


def test_write_lock_refuses_a_clash_naming_both_sources(tmp_path: Path) -> None:
    a = make_skill(tmp_path / "a" / "twin", {"one.txt": "1\n"})
    b = make_skill(tmp_path / "b" / "twin", {"two.txt": "2\n"})
    entries = []
    for folder in (a, b):
        [skill] = verify_folder(folder).skills
        entries.append((skill.name, LockEntry(skill.digest, skill.files, skill.programs),
                        skill.source))
    with pytest.raises(SkillpackError) as info:
        write_lock(entries, tmp_path / "skills.lock")
    assert str(a) in str(info.value) and str(b) in str(info.value)
    assert not (tmp_path / "skills.lock").exists()


# -- atomic -------------------------------------------------------------------------------------

def test_the_lock_is_written_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = lock_of(tmp_path, WAITLIST)
    before = lock.read_bytes()

    def refuse(*_: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "replace", refuse)
    result = cli("lock", WAITLIST, NOTES, "-o", lock)
    assert result.exit_code == 1 and "No space left on device" in result.stderr
    with pytest.raises(WriteError):
        write_lock([], lock)
    monkeypatch.undo()
    assert lock.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["skills.lock"]  # no temp file left behind


def test_an_invalid_skill_is_not_locked(tmp_path: Path) -> None:
    dest = tmp_path / "skills.lock"
    result = cli("lock", WAITLIST, TOO_LONG, "-o", dest)
    assert result.exit_code == 1 and "[description-too-long]" in result.stderr
    assert not dest.exists()


def test_the_lock_lists_the_programs_skill_md_mentions(tmp_path: Path) -> None:
    """An approver sees what the body tells the model to run, apart from the tool programs."""
    folder = write_skill(tmp_path / "docs-tool", "---\nname: docs-tool\ndescription: Convert "
                         "documents. Use when asked to convert a file.\n---\n\n```bash\n"
                         "pandoc in.md -o out.docx\nsudo env A=1 timeout 5 python3 "
                         "scripts/x.py\n```\n\n!`git status`\n")
    data = json.loads(lock_of(tmp_path, folder).read_text(encoding="utf-8"))
    mentions = data["skills"]["docs-tool"]["mentions"]
    assert [(m["program"], m["kind"]) for m in mentions] == [
        ("pandoc", "mentioned"), ("python3", "mentioned"), ("git", "runs-at-load")]
    assert [m["line"] for m in mentions] == [7, 8, 11]
    assert read_lock(tmp_path / "skills.lock").skills["docs-tool"].mentions == tuple(mentions)


def test_a_lock_is_written_a_skill_at_a_time_as_one_json_text_would_be() -> None:
    entry = LockEntry.for_skill(parse_skill(
        "---\nname: café-notes\ndescription: Notes « au café ». Use when asked.\n---\n\n"
        "```bash\npython3 scripts/run.py \"$1\" | sort\n```\n", file="SKILL.md"),
        digest_records([]), [], [{"name": "python3"}], "sha256:" + "0" * 64)
    for skills in ({}, {"café-notes": entry}, {"b": entry, "a": entry, "é": entry}):
        lock = Lock(skills)
        text = json.dumps(lock.to_dict(), indent=2, sort_keys=True, ensure_ascii=False)
        assert lock.to_bytes() == text.encode("utf-8") + b"\n"


def test_lock_reads_each_file_once_and_pins_the_archive_pack_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The archive's SHA-256 is hashed from the very bytes the walk read and hashed: no file
    is opened a second time for it, and the SHA-256 is that of the archive `pack` writes."""
    skill = make_skill(tmp_path / "once", {"references/a.md": "# A\n",
                                           "data/b.csv": "x,y\n1,2\n"})
    opened: list[str] = []
    intercept_open(monkeypatch, lambda path, _: os.path.basename(path) in ("a.md", "b.csv"),
                   lambda path: opened.append(os.path.basename(path)))
    lock = lock_of(tmp_path, skill)
    monkeypatch.undo()
    assert sorted(opened) == ["a.md", "b.csv"]
    [packed] = pack(skill, tmp_path / "packed")
    [entry] = json.loads(lock.read_text(encoding="utf-8"))["skills"].values()
    assert entry["archive"] == "sha256:" + hashlib.sha256(packed.read_bytes()).hexdigest()
