"""Hashing and the skill digest v1 (SPEC section 2), checked against an independent
few-line implementation on every corpus skill."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from blake3 import blake3
from helpers.cli import cli
from helpers.paths import CORPUS_SKILLS, FIXTURES
from helpers.skills import make_tree as make
from helpers.skills import rich_skill
from helpers.syscalls import deny_open

from skillpack.errors import ArchiveError, RefusedError
from skillpack.formats.digest import FileRecord, bundle_digest, digest_records
from skillpack.packing.verify import digest
from skillpack.source.readfile import LARGE_FILE, READ_CHUNK
from skillpack.source.records import record_files
from skillpack.source.walk import walk

SKILL_MD = "---\nname: demo\ndescription: A demo skill.\n---\n\nBody.\n"
KEY_HEADER = b"-----BEGIN " + b"RSA PRIVATE" + b" KEY-----"


def reference_digest(folder: Path, includes: tuple[str, ...] | None = None) -> str:
    """Digest v1 as SPEC section 2 words it, over os.walk, sharing no code with skillpack."""
    lines = []
    for dirpath, _, names in os.walk(folder):
        for name in names:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, folder).replace(os.sep, "/")
            top = rel.split("/")[0]
            if includes is not None and rel != "SKILL.md" and not any(
                rel == e or rel.startswith(e + "/") for e in includes
            ):
                continue
            if top in (".skillignore", ".skillpack"):
                continue
            st = os.stat(full)
            mode = "100755" if st.st_mode & 0o100 else "100644"
            data = Path(full).read_bytes()
            lines.append((rel.encode(), f"{mode} {len(data)} {blake3(data).hexdigest()} {rel}\n"))
    body = "".join(line for _, line in sorted(lines))
    return "blake3:" + blake3(b"skillpack-digest-v1\n" + body.encode()).hexdigest()


@pytest.mark.corpus
def test_digest_agrees_with_independent_implementation_on_the_corpus() -> None:
    from skillpack.source.load import load_skill

    assert len(CORPUS_SKILLS) == 182
    for folder in CORPUS_SKILLS:
        includes = load_skill(folder).include_list
        assert digest(folder) == reference_digest(folder, includes), folder


def test_a_reading_walk_records_what_a_names_only_walk_and_a_read_record(tmp_path: Path) -> None:
    """`digest` and `pack` hash each small file while walking (`walk(read=True)`); the
    records must be those of the two-step path (`walk`, then `record_files` opening every
    file again), and the walk must really have read the files."""
    from skillpack.source.load import load_skill, skill_fileset

    read = 0
    folders = [*CORPUS_SKILLS, FIXTURES / "waitlist", FIXTURES / "release-notes",
               rich_skill(tmp_path / "rich")]
    for folder in folders:
        skill = load_skill(folder)
        reading = skill_fileset(skill, read=True)
        names_only = skill_fileset(skill)
        assert reading.files == names_only.files and names_only.hashed == {}
        assert set(reading.hashed) == {f.path for f in reading.files if f.size < LARGE_FILE}
        assert record_files(reading) == record_files(names_only), folder
        read += len(reading.hashed)
    assert read > (2000 if CORPUS_SKILLS else 10)


def test_same_name_different_content_differ(twins: tuple[Path, Path]) -> None:
    a, b = (digest(folder) for folder in twins)
    assert a != b
    assert a == reference_digest(twins[0]) and b == reference_digest(twins[1])


@pytest.mark.parametrize("folder", [FIXTURES / "waitlist", FIXTURES / "release-notes"],
                         ids=lambda p: p.name)
def test_digest_of_folder_and_of_skill_md_agree(folder: Path) -> None:
    assert digest(folder) == digest(folder / "SKILL.md") == digest(str(folder))
    assert digest(folder) == reference_digest(folder)


def test_digest_format(rich: Path) -> None:
    for folder in (rich, FIXTURES / "waitlist"):
        value = digest(folder)
        assert value.startswith("blake3:") and len(value) == 7 + 64
        assert value[7:] == value[7:].lower() and int(value[7:], 16) >= 0
        assert value == reference_digest(folder)


# -- records ----------------------------------------------------------------------------------


def test_file_record_line_and_round_trip() -> None:
    record = FileRecord("scripts/run.py", "100755", 12, "a" * 64)
    assert record.line() == f"100755 12 {'a' * 64} scripts/run.py\n"
    assert FileRecord.from_dict(json.loads(json.dumps(record.to_dict()))) == record


@pytest.mark.parametrize(
    "bad",
    [
        {"path": "a", "mode": "100600", "size": 1, "blake3": "a" * 64},
        {"path": "a", "mode": "100644", "size": -1, "blake3": "a" * 64},
        {"path": "a", "mode": "100644", "size": True, "blake3": "a" * 64},
        {"path": "a", "mode": "100644", "size": 1, "blake3": "A" * 64},
        {"path": "a\nb", "mode": "100644", "size": 1, "blake3": "a" * 64},
        {"path": "", "mode": "100644", "size": 1, "blake3": "a" * 64},
    ],
)
def test_file_record_from_dict_refuses_bad_values(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        FileRecord.from_dict(bad)


def test_digest_records_is_order_independent_and_exact() -> None:
    records = [FileRecord("b", "100644", 1, "b" * 64), FileRecord("a", "100755", 2, "c" * 64)]
    expected = blake3(
        b"skillpack-digest-v1\n"
        + f"100755 2 {'c' * 64} a\n100644 1 {'b' * 64} b\n".encode()
    ).hexdigest()
    assert digest_records(records) == "blake3:" + expected
    assert digest_records(reversed(records)) == "blake3:" + expected


def test_paths_sort_by_utf8_bytes_not_code_points() -> None:
    # U+FF21 sorts before U+10000 by code point... and also by UTF-8; use a case that differs:
    # "\uffff" (EF BF BF) and "\U00010000" (F0 90 80 80): same order either way, so compare
    # against the bytes order explicitly, with "Z" < "a" < "é" as well.
    paths = ["é", "a", "Z", "\U00010000", "\uffff"]
    records = [FileRecord(p, "100644", 0, "0" * 64) for p in paths]
    body = "".join(r.line() for r in sorted(records, key=lambda r: r.path.encode()))
    assert digest_records(records) == "blake3:" + blake3(
        b"skillpack-digest-v1\n" + body.encode()
    ).hexdigest()


def test_small_large_and_empty_files_are_hashed_whole(tmp_path: Path) -> None:
    data = os.urandom(1024) * ((LARGE_FILE * 2 + 4096) // 1024) + b"tail"
    make(tmp_path, {"SKILL.md": SKILL_MD, "small": b"hello", "large": data, "empty": b""})
    hashed = {r.path: (r.size, r.blake3) for r in record_files(walk(tmp_path))}
    assert hashed["small"] == (5, blake3(b"hello").hexdigest())
    assert hashed["large"] == (len(data), blake3(data).hexdigest())
    assert hashed["empty"] == (0, blake3(b"").hexdigest())


@pytest.mark.parametrize("offset", [0, READ_CHUNK - 20, 2 * READ_CHUNK - 5, READ_CHUNK + 3])
def test_private_key_found_in_a_large_file_even_across_a_chunk_seam(
    tmp_path: Path, offset: int
) -> None:
    data = bytearray(LARGE_FILE + 3 * READ_CHUNK)
    data[offset : offset + len(KEY_HEADER)] = KEY_HEADER
    make(tmp_path, {"SKILL.md": SKILL_MD, "blob.bin": bytes(data)})
    with pytest.raises(RefusedError) as info:
        record_files(walk(tmp_path))
    assert [(p.code, p.file) for p in info.value.problems] == [("secret", "blob.bin")]


def test_digest_refuses_a_small_file_holding_a_key_found_by_the_walk(tmp_path: Path) -> None:
    """`digest` takes its lines straight from what the walk read, unless a file holds a key:
    then it refuses, as `record_files` does."""
    make(tmp_path, {"SKILL.md": SKILL_MD, "notes.txt": b"x\n" + KEY_HEADER + b"\nAAAA\n"})
    with pytest.raises(RefusedError) as info:
        digest(tmp_path)
    assert [(p.code, p.file) for p in info.value.problems] == [("secret", "notes.txt")]
    allowed = SKILL_MD.replace("---\n\n", 'metadata:\n  skillpack-allow-secrets: "notes.txt"\n'
                               "---\n\n")
    (tmp_path / "SKILL.md").write_text(allowed)
    assert digest(tmp_path) == reference_digest(tmp_path)


def test_allowed_private_key_passes_the_content_check(tmp_path: Path) -> None:
    make(tmp_path, {"SKILL.md": SKILL_MD, "test.txt": KEY_HEADER + b"\n"})
    records = record_files(walk(tmp_path, allow=["test.txt"]))
    assert [r.path for r in records] == ["SKILL.md", "test.txt"]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_memory_stays_flat_for_a_1_gib_file(tmp_path: Path) -> None:
    """A sparse 1 GiB file hashed in a fresh process keeps its peak RSS under 64 MiB."""
    make(tmp_path, {"SKILL.md": SKILL_MD})
    big = tmp_path / "big.bin"
    with big.open("wb") as handle:
        handle.truncate(1 << 30)
    # VmHWM is this process's peak RSS (ru_maxrss would include the forked pytest's)
    code = (
        "import sys\n"
        "from skillpack.source.records import record_files\n"
        "from skillpack.source.walk import walk\n"
        "[record] = [r for r in record_files(walk(sys.argv[1])) if r.path == 'big.bin']\n"
        "size, hexd = record.size, record.blake3\n"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
        "print(size, hexd, hwm.split()[1])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    ).stdout.split()
    assert int(out[0]) == 1 << 30
    expected = blake3(max_threads=blake3.AUTO)
    zeros = bytes(1 << 24)
    for _ in range(64):
        expected.update(zeros)
    assert out[1] == expected.hexdigest()
    assert int(out[2]) < 64 * 1024  # in KiB


# -- the file changes between the walk and the read -------------------------------------------


def test_file_replaced_after_the_walk_is_refused(tmp_path: Path) -> None:
    make(tmp_path, {"SKILL.md": SKILL_MD, "a.txt": "one"})
    fileset = walk(tmp_path)
    (tmp_path / "new.txt").write_text("one")  # same bytes, another inode
    os.replace(tmp_path / "new.txt", tmp_path / "a.txt")
    with pytest.raises(RefusedError) as info:
        record_files(fileset)
    [problem] = info.value.problems
    assert (problem.code, problem.file) == ("changed", "a.txt")
    assert "changed while being read" in problem.message


def test_file_grown_after_the_walk_is_refused(tmp_path: Path) -> None:
    make(tmp_path, {"SKILL.md": SKILL_MD, "a.txt": "one"})
    fileset = walk(tmp_path)
    with (tmp_path / "a.txt").open("a") as handle:
        handle.write("more")
    with pytest.raises(RefusedError) as info:
        record_files(fileset)
    assert [p.code for p in info.value.problems] == ["changed"]


def test_file_swapped_for_a_fifo_does_not_block(tmp_path: Path) -> None:
    make(tmp_path, {"SKILL.md": SKILL_MD, "a.txt": "one"})
    fileset = walk(tmp_path)
    (tmp_path / "a.txt").unlink()
    os.mkfifo(tmp_path / "a.txt")
    with pytest.raises(RefusedError) as info:
        record_files(fileset)
    assert [(p.code, p.file) for p in info.value.problems] == [("changed", "a.txt")]


def test_file_swapped_for_a_symlink_is_not_followed(tmp_path: Path) -> None:
    make(tmp_path, {"SKILL.md": SKILL_MD, "a.txt": "one", "b.txt": "one"})
    fileset = walk(tmp_path)
    (tmp_path / "a.txt").unlink()
    (tmp_path / "a.txt").symlink_to(tmp_path / "b.txt")
    with pytest.raises(RefusedError) as info:
        record_files(fileset)
    assert [(p.code, p.file) for p in info.value.problems] == [("symlink", "a.txt")]


def test_unreadable_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make(tmp_path, {"SKILL.md": SKILL_MD, "locked.txt": "x", "other.txt": "y"})
    fileset = walk(tmp_path)
    if os.geteuid() != 0:
        (tmp_path / "locked.txt").chmod(0)
    else:  # root opens anything: simulate the permission error
        deny_open(monkeypatch, lambda path, _: path.endswith("locked.txt"))
    with pytest.raises(RefusedError) as info:
        record_files(fileset)
    [problem] = info.value.problems
    assert (problem.code, problem.file) == ("unreadable", "locked.txt")
    assert "Permission denied" in problem.message


# -- determinism ------------------------------------------------------------------------------

TREE: dict[str, str | bytes] = {
    "SKILL.md": SKILL_MD,
    "scripts/run.sh": "#!/bin/sh\necho hi\n",
    "references/a.md": "A\n",
    "references/deep/b.md": "B\n",
    "data.bin": bytes(range(256)) * 3,
    "Zeta.txt": "z",
    "éclair.md": "e",
}


def build(root: Path, order: list[str], umask: int) -> Path:
    old = os.umask(umask)
    try:
        for rel in order:
            make(root, {rel: TREE[rel]})
        (root / "scripts" / "run.sh").chmod(0o744 if umask else 0o755)
    finally:
        os.umask(old)
    return root


def test_digest_is_deterministic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names = list(TREE)
    first = digest(build(tmp_path / "one", names, 0o022))
    second_root = build(tmp_path / "two", list(reversed(names)), 0o077)
    for dirpath, _, files in os.walk(second_root):
        for name in files:
            os.utime(os.path.join(dirpath, name), (1_000_000, 1_000_000))
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    time.tzset()
    try:
        assert digest(second_root) == first
    finally:
        monkeypatch.undo()
        time.tzset()


def test_digest_changes_with_content_mode_or_name(tmp_path: Path) -> None:
    root = build(tmp_path / "s", list(TREE), 0o022)
    base = digest(root)
    (root / "references" / "a.md").write_text("A!\n")
    changed_content = digest(root)
    (root / "references" / "a.md").chmod(0o755)
    changed_mode = digest(root)
    (root / "references" / "a.md").rename(root / "references" / "c.md")
    changed_name = digest(root)
    assert len({base, changed_content, changed_mode, changed_name}) == 4


def test_digest_ignores_left_out_files(tmp_path: Path) -> None:
    root = build(tmp_path / "s", list(TREE), 0o022)
    base = digest(root)
    make(root, {".skillpack/manifest.json": "{}", "scripts/__pycache__/x.pyc": "x",
                ".skillignore": "*.log\n", "run.log": "x"})
    assert digest(root) == base


# -- bundles ----------------------------------------------------------------------------------


def test_bundle_digest() -> None:
    a, b = "blake3:" + "1" * 64, "blake3:" + "2" * 64
    expected = blake3(
        b"skillpack-bundle-v1\n" + f"{b} alpha\n{a} beta\n".encode()
    ).hexdigest()
    assert bundle_digest([("beta", a), ("alpha", b)]) == "blake3:" + expected
    assert bundle_digest([("alpha", b), ("beta", a)]) == "blake3:" + expected
    assert bundle_digest([("alpha", a), ("beta", b)]) != "blake3:" + expected


@pytest.mark.parametrize(
    "pairs",
    [
        [("a", "blake3:" + "1" * 64), ("a", "blake3:" + "2" * 64)],
        [("a b", "blake3:" + "1" * 64)],
        [("a", "sha256:" + "1" * 64)],
    ],
)
def test_bundle_digest_refuses_bad_pairs(pairs: list[tuple[str, str]]) -> None:
    with pytest.raises(ArchiveError):
        bundle_digest(pairs)


# -- the command -----------------------------------------------------------------------------


def test_digest_command(tmp_path: Path) -> None:

    folder = tmp_path / "skills"  # a folder of skills, found in it
    for name in ("zeta", "alpha", "mid"):
        rich_skill(folder / name, name)
    result = cli("digest", folder)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines == [f"{digest(folder / n)}  {n}" for n in ("alpha", "mid", "zeta")]
    first = sorted(folder.iterdir())[0]
    assert lines[0] == f"{digest(first)}  {first.name}"
    as_json = json.loads(cli("digest", "--json", first).output)
    assert as_json == [{"name": first.name, "path": str(first), "digest": digest(first)}]


def test_digest_command_exit_codes(tmp_path: Path) -> None:

    assert cli("digest", tmp_path / "missing").exit_code == 2
    assert cli("digest", tmp_path).exit_code == 1
    make(tmp_path / "s", {"SKILL.md": SKILL_MD, "id_" + "rsa": "k"})
    refused = cli("digest", tmp_path / "s")
    assert refused.exit_code == 1 and "[secret]" in refused.output


def test_digest_of_a_packed_archive_matches_its_folder(tmp_path: Path) -> None:
    from skillpack.packing.pack import pack

    folder = rich_skill(tmp_path / "web-artifacts-builder")
    [archive] = pack(folder, tmp_path / "out")
    assert digest(archive) == digest(folder)
    result = cli("digest", archive)
    assert result.exit_code == 0
    assert result.output == f"{digest(folder)}  web-artifacts-builder\n"


def test_a_reading_walk_keeps_no_more_bytes_than_asked(tmp_path: Path) -> None:
    """`pack` keeps the bytes its walk read (to write them without reading again) within a
    budget: never more than `keep` in all, never a file over 1 MiB."""
    files = {f"part{i}.bin": os.urandom(300 << 10) for i in range(10)}
    files["large.bin"] = os.urandom(3 << 19)  # 1.5 MiB: read and hashed, never kept
    make(tmp_path, {"SKILL.md": SKILL_MD, **files})
    for keep in (0, 1 << 20, 64 << 20):
        fileset = walk(tmp_path, read=True, keep=keep)
        kept = {path: h.data for path, h in fileset.hashed.items() if h.data is not None}
        assert sum(map(len, kept.values())) <= keep
        assert "large.bin" not in kept and "large.bin" in fileset.hashed
        assert all(files.get(path, data) == data for path, data in kept.items())
        assert record_files(fileset) == record_files(walk(tmp_path))
    assert len(kept) == 11  # with room for them, every small file (SKILL.md too)
