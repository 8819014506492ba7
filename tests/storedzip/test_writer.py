"""The deterministic zip writer: what standard unzips see, byte identity, names, limits."""

from __future__ import annotations

import functools
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from blake3 import blake3
from helpers.zips import zip_of

from skillpack.errors import ArchiveError, IntegrityError, SkillpackError
from skillpack.storedzip.reader import read_zip
from skillpack.storedzip.writer import CHUNK_SIZE, MAX_MEMBERS, ZipWriter

MEMBERS: list[tuple[str, bytes, bool]] = [
    ("demo/SKILL.md", b"---\nname: demo\ndescription: d\n---\nBody\n", False),
    ("demo/empty.txt", b"", False),
    ("demo/scripts/run.sh", b"#!/bin/sh\necho hi\n", True),
    ("demo/\u00e9t\u00e9.md", "\u00e9t\u00e9\n".encode(), False),
]


def build(members: list[tuple[str, bytes, bool]]) -> bytes:
    """`zip_of` for a list of (name, data, executable)."""
    return zip_of({name: (data, executable) for name, data, executable in members})


def test_stdlib_zipfile_sees_members_modes_dates_and_stored() -> None:
    data = build(MEMBERS)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.testzip() is None
        infos = zf.infolist()
        assert [i.filename for i in infos] == [m[0] for m in MEMBERS]
        for info, (_, content, executable) in zip(infos, MEMBERS, strict=True):
            assert zf.read(info) == content
            assert info.external_attr >> 16 == (0o100755 if executable else 0o100644)
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
            assert info.compress_type == zipfile.ZIP_STORED
            assert info.flag_bits == 0x800
            assert info.create_system == 3
            assert info.extra == b""
            assert info.comment == b""
        assert zf.comment == b""


def test_python_zipfile_cli_tests_it(tmp_path: Path) -> None:
    path = tmp_path / "demo.skill"
    path.write_bytes(build(MEMBERS))
    done = subprocess.run([sys.executable, "-m", "zipfile", "-t", str(path)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "Done testing" in done.stdout


@pytest.mark.skipif(shutil.which("unzip") is None, reason="Info-ZIP unzip not installed")
def test_unzip_lists_tests_and_extracts_with_0644_0755(tmp_path: Path) -> None:
    path = tmp_path / "demo.skill"
    path.write_bytes(build(MEMBERS))
    listed = subprocess.run(["unzip", "-l", str(path)], capture_output=True, text=True,
                            check=True).stdout
    assert len(re.findall(r"(?:1980-01-01|01-01-1980) 00:00", listed)) == len(MEMBERS)
    for name, _, _ in MEMBERS:
        assert name in listed
    tested = subprocess.run(["unzip", "-t", str(path)], capture_output=True, text=True,
                            check=False)
    assert tested.returncode == 0 and "No errors detected" in tested.stdout
    zi = subprocess.run(["zipinfo", str(path)], capture_output=True, text=True,
                        check=True).stdout
    assert "-rwxr-xr-x  2.0 unx       18 b- stor 80-Jan-01 00:00 demo/scripts/run.sh" in zi
    assert "-rw-r--r--  2.0 unx        0 b- stor 80-Jan-01 00:00 demo/empty.txt" in zi
    out = tmp_path / "out"
    subprocess.run(["unzip", "-q", str(path), "-d", str(out)], check=True,
                   preexec_fn=lambda: os.umask(0o022))
    assert (out / "demo" / "SKILL.md").read_bytes() == MEMBERS[0][1]
    assert (out / "demo" / "SKILL.md").stat().st_mode & 0o7777 == 0o644
    assert (out / "demo" / "scripts" / "run.sh").stat().st_mode & 0o7777 == 0o755
    assert (out / "demo" / "\u00e9t\u00e9.md").read_bytes() == MEMBERS[3][1]


def test_format_is_pinned() -> None:
    # Any change to these bytes changes every archive's bytes: it must be deliberate.
    data = build(MEMBERS)
    assert hashlib.sha256(data).hexdigest() == (
        "933a497c57e5ce596326c65a67040b9355357515799dc7542ec6893f4d2d0540"
    )


_REBUILD = textwrap.dedent(
    """
    import os, sys
    from skillpack.storedzip.writer import ZipWriter
    root, out = sys.argv[1], sys.argv[2]
    names = []
    for folder, _, files in os.walk(root):
        for f in files:
            names.append(os.path.relpath(os.path.join(folder, f), root))
    names.sort(key=lambda n: n.encode())
    with open(out, "wb") as fh, ZipWriter(fh) as zw:
        for rel in names:
            fd = os.open(os.path.join(root, rel), os.O_RDONLY)
            st = os.fstat(fd)
            zw.add_fd(rel, fd, st.st_size, executable=bool(st.st_mode & 0o100))
            os.close(fd)
    """
)


def _make_tree(root: Path, umask: int, mtime: int) -> None:
    old = os.umask(umask)
    try:
        for rel, data, executable in MEMBERS:
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            if executable:
                path.chmod(0o777 & ~umask)
            os.utime(path, (mtime, mtime))
    finally:
        os.umask(old)


def test_byte_identical_across_umask_tz_locale_and_mtimes(tmp_path: Path) -> None:
    outs = []
    for i, (umask, mtime, tz, lang) in enumerate(
        [(0o022, 1_000_000_000, "UTC", "C"), (0o002, 1_700_000_000, "Asia/Kolkata", "tr_TR.UTF-8")]
    ):
        root = tmp_path / f"tree{i}"
        _make_tree(root, umask, mtime)
        out = tmp_path / f"out{i}.skill"
        env = {**os.environ, "TZ": tz, "LC_ALL": lang, "LANG": lang}
        subprocess.run([sys.executable, "-c", _REBUILD, str(root), str(out)], env=env,
                       check=True, preexec_fn=functools.partial(os.umask, umask))
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert outs[0] == build(MEMBERS)
    modes = [(root / MEMBERS[0][0]).stat().st_mode & 0o777
             for root in (tmp_path / "tree0", tmp_path / "tree1")]
    assert modes == [0o644, 0o664]  # the trees really differed


def test_add_fd_streams_in_chunks_and_returns_blake3(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    content = os.urandom(2 * CHUNK_SIZE + 12345)
    src = tmp_path / "big.bin"
    src.write_bytes(content)
    reads: list[int] = []
    real_read = os.read

    def spy(fd: int, n: int) -> bytes:
        reads.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", spy)
    buf = io.BytesIO()
    fd = os.open(src, os.O_RDONLY)
    try:
        with ZipWriter(buf) as zw:
            digest = zw.add_fd("big.bin", fd, len(content), executable=True,
                               expect_blake3=blake3(content).hexdigest().upper())
    finally:
        os.close(fd)
    assert digest == blake3(content).hexdigest()
    assert max(reads) <= CHUNK_SIZE and len(reads) >= 3
    with zipfile.ZipFile(buf) as zf:
        assert zf.testzip() is None  # the CRC patched into the local header is right
        assert zf.read("big.bin") == content
        assert zf.getinfo("big.bin").external_attr >> 16 == 0o100755
    assert buf.getvalue() == build([("big.bin", content, True)])


@pytest.mark.parametrize(
    ("declared", "expect"),
    [(10, "only 6 bytes were read"), (3, "more bytes were read"), (0, "more bytes were read")],
)
def test_add_fd_size_mismatch_is_changed_while_packed(tmp_path: Path, declared: int,
                                                      expect: str) -> None:
    src = tmp_path / "f.txt"
    src.write_bytes(b"abcdef")
    fd = os.open(src, os.O_RDONLY)
    zw = ZipWriter(io.BytesIO())
    try:
        with pytest.raises(IntegrityError, match="changed while being packed") as info:
            zw.add_fd("skill/f.txt", fd, declared)
    finally:
        os.close(fd)
    assert "'skill/f.txt'" in str(info.value) and expect in str(info.value)
    with pytest.raises(ArchiveError, match="unusable after a failed add"):
        zw.add_bytes("skill/g.txt", b"")


def test_add_fd_blake3_mismatch_is_changed_while_packed(tmp_path: Path) -> None:
    src = tmp_path / "f.txt"
    src.write_bytes(b"new content")
    fd = os.open(src, os.O_RDONLY)
    try:
        with pytest.raises(IntegrityError, match="changed while being packed") as info:
            ZipWriter(io.BytesIO()).add_fd("skill/f.txt", fd, 11,
                                           expect_blake3=blake3(b"old content").hexdigest())
    finally:
        os.close(fd)
    assert "'skill/f.txt'" in str(info.value)
    assert isinstance(info.value, SkillpackError)


@pytest.mark.parametrize(
    ("first", "second", "reason"),
    [
        ("b.md", "a.md", "sorted order"),
        ("a/z.md", "a.md", "sorted order"),  # '/' (0x2f) sorts after '.' (0x2e)
        ("a.md", "a.md", "duplicate"),
        ("A.md", "a.md", "differ only by case"),
        ("e\u0301.md", "\u00e9.md", "NFC"),
        ("STRASSE.md", "Stra\u00dfe.md", "differ only by case"),
    ],
)
def test_order_and_collisions_are_refused(first: str, second: str, reason: str) -> None:
    zw = ZipWriter(io.BytesIO())
    zw.add_bytes(first, b"1")
    with pytest.raises(ValueError, match=reason) as info:
        zw.add_bytes(second, b"2")
    assert isinstance(info.value, ArchiveError)
    assert repr(second) in str(info.value)


def test_byte_order_not_locale_or_case_order() -> None:
    # 'B' (0x42) before 'a' (0x61); U+FF61 (EF BD A1) before U+1F600 (F0 9F 98 80).
    data = build([("B.md", b"", False), ("a.md", b"", False), ("\uff61", b"", False),
                  ("\U0001f600", b"", False)])
    assert read_zip(data).names == ("B.md", "a.md", "\uff61", "\U0001f600")


@pytest.mark.parametrize(
    "name",
    ["", "/abs.md", "C:x.md", "c:/x.md", "a\\b.md", "../x.md", "a/../b.md", "./x.md", "a/./b",
     "a//b.md", "dir/", "a/.", "a/..", "x\ny.md", "x\x00.md", "x\x7f.md", "x\x85.md", "tab\t.md"],
)
def test_bad_names_are_refused(name: str) -> None:
    with pytest.raises(ArchiveError) as info:
        ZipWriter(io.BytesIO()).add_bytes(name, b"x")
    assert repr(name) in str(info.value)


def test_names_other_zips_allow_are_kept() -> None:
    names = [".hidden", "a b/c d.md", "dots...x/y", "\u00e9.md", "emoji-\U0001f600.md"]
    names.sort(key=lambda n: n.encode())
    data = build([(n, n.encode(), False) for n in names])
    index = read_zip(data)
    assert list(index.names) == names
    assert [bytes(index.data(e)) for e in index.entries] == [n.encode() for n in names]


def test_zip64_size_is_refused_before_writing(tmp_path: Path) -> None:
    src = tmp_path / "f.bin"
    src.write_bytes(b"x")
    buf = io.BytesIO()
    zw = ZipWriter(buf)
    fd = os.open(src, os.O_RDONLY)
    try:
        with pytest.raises(ArchiveError, match="4 GiB") as info:
            zw.add_fd("huge.bin", fd, 4 * 1024**3)
    finally:
        os.close(fd)
    assert "Zip64" in str(info.value) and "'huge.bin'" in str(info.value)
    assert buf.getvalue() == b""  # nothing written: the writer stays usable
    zw.add_bytes("small.txt", b"ok")
    zw.close()
    assert read_zip(buf.getvalue()).names == ("small.txt",)


def test_zip64_member_count_is_refused() -> None:
    buf = io.BytesIO()
    zw = ZipWriter(buf)
    for i in range(MAX_MEMBERS - 1):
        zw.add_bytes(f"{i:05d}", b"")
    with pytest.raises(ArchiveError, match="65,534 members"):
        zw.add_bytes("99999", b"")
    zw.close()
    assert len(read_zip(buf.getvalue())) == MAX_MEMBERS - 1 == 65534


def test_failed_with_block_writes_no_central_directory() -> None:
    buf = io.BytesIO()
    with pytest.raises(RuntimeError), ZipWriter(buf) as zw:
        zw.add_bytes("a.md", b"x")
        raise RuntimeError("boom")
    with pytest.raises(ArchiveError):
        read_zip(buf.getvalue())


def test_empty_archive_and_double_close() -> None:
    buf = io.BytesIO()
    zw = ZipWriter(buf)
    zw.close()
    zw.close()
    assert buf.getvalue() == b"PK\x05\x06" + b"\x00" * 18
    assert len(read_zip(buf.getvalue())) == 0
    with pytest.raises(ValueError, match="closed"):
        zw.add_bytes("a", b"")


def test_writer_must_start_at_offset_zero() -> None:
    buf = io.BytesIO(b"prefix")
    buf.seek(0, io.SEEK_END)
    with pytest.raises(ValueError, match="offset 0"):
        ZipWriter(buf)


SCREEN_BAD = ["", "/abs.md", "C:x.md", "a\\b.md", "../x.md", "a/../b.md", "./x.md", "a/./b",
              "a//b.md", "dir/", "a/.", "a/..", "x\ny.md", "x\x00.md", "x\x7f.md", "x\x85.md",
              "a<b.md", 'q"x.md', "p|x", "what?.md", "star*.md", "gt>.md", "con", "CON.txt",
              "d/aux.tar.gz", "com1", "LPT9.log", "com\u00b9.md", "trail.", "trail /x",
              "dot./x"]


@pytest.mark.parametrize("bad", SCREEN_BAD)
def test_a_bad_name_among_good_ones_is_refused(bad: str) -> None:
    """A bad name among good ones is refused, naming it; the good ones before it are added."""
    names = sorted({"a.md", "m/n.md", "z/zz.md", "\u00e9.md", bad}, key=lambda n: n.encode())
    zw = ZipWriter(io.BytesIO())
    with pytest.raises(ArchiveError) as info:
        for name in names:
            zw.add_bytes(name, b"x")
    assert repr(bad) in str(info.value)
    assert zw.count == names.index(bad)


SCREEN_CLASHES = [
    (["a.md", "a.md"], "duplicate name (added twice)"),
    (["A.md", "a.md"], "A.md"),  # the same name on a case-insensitive disk
    (["Caf\u00e9.md", "cafe\u0301.md"], "Caf\u00e9.md"),  # NFC and NFD of one name, folded
    (["K.md", "\u212a.md"], "K.md"),  # KELVIN SIGN folds to k
    (["stra\u00dfe.md", "strasse.md"], "stra\u00dfe.md"),  # casefold: sharp s is ss
]


@pytest.mark.parametrize(("names", "said"), SCREEN_CLASHES)
def test_names_that_clash_are_refused_naming_the_first(names: list[str], said: str) -> None:
    """Names each portable alone but clashing with one before them (a duplicate, another
    case, another normal form, a fold beyond ASCII): the second is refused, naming the
    first."""
    names = sorted(names, key=lambda n: n.encode())
    zw = ZipWriter(io.BytesIO())
    with pytest.raises(ArchiveError) as info:
        for name in names:
            zw.add_bytes(name, b"x")
    assert zw.count == 1 and said in str(info.value)


def test_a_name_longer_than_any_system_takes_is_refused() -> None:
    """A member name of more than 4,096 UTF-8 bytes (PATH_MAX; a zip header would take
    65,535) is an ArchiveError saying so, and nothing is written; one of 4,096 is a member."""
    long = "d/" * 1500 + "\u00e9" * 549  # 3,000 + 1,098 = 4,098 bytes
    assert len(long.encode()) == 4098
    buf = io.BytesIO()
    zw = ZipWriter(buf)
    with pytest.raises(ArchiveError, match=re.escape(
            "a name of 4,098 bytes (no system takes a path over 4,096)")):
        zw.add_bytes(long, b"x")
    assert buf.getvalue() == b"" and zw.count == 0
    ok = long[:-2] + "xx"
    assert len(ok.encode()) == 4096
    zw = ZipWriter(io.BytesIO())
    zw.add_bytes(ok, b"x")
    assert zw.count == 1
