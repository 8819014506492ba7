"""Hostile archives from elsewhere (zip, tar, tar.gz, gzip): every refusal class of
skillpack.content.inflate, through `unpack` (which must write nothing), and decompression bombs
by ratio, by total and by count, each stopped after what its cap allows (shown by sizes:
the error says how many bytes were produced before it stopped).
"""

from __future__ import annotations

import gzip
import io
import stat
import struct
import subprocess
import tarfile
import warnings
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.hostile import TALLY, run_cli

from skillpack._atomic import remove_tree
from skillpack.content.inflate import CHUNK, Caps, gunzip, read_tar, read_zip
from skillpack.errors import ArchiveError
from skillpack.source.foreign import unpack

MD = b"---\nname: demo\ndescription: Demo skill. Use it for tests.\n---\n\nBody.\n"
ZipEntry = tuple[str, bytes, int, int]  # name, data, Unix mode, compression method
TarEntry = tuple[str, bytes, bytes]  # name, data, tar type (linkname "target")


def zip_bytes(entries: list[ZipEntry]) -> bytes:
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about duplicate names
        with zipfile.ZipFile(out, "w") as archive:
            for name, data, mode, method in entries:
                info = zipfile.ZipInfo(name)
                info.external_attr = mode << 16
                info.compress_type = method
                archive.writestr(info, data)
    return out.getvalue()


def zipped(*entries: tuple[str, int] | tuple[str, int, int] | str) -> bytes:
    """demo/SKILL.md plus `entries` (a name, or (name, Unix mode[, method]))."""
    listed: list[ZipEntry] = [("demo/SKILL.md", MD, 0o100644, zipfile.ZIP_DEFLATED)]
    for entry in entries:
        if isinstance(entry, str):
            listed.append((entry, b"x", 0o100644, zipfile.ZIP_DEFLATED))
        else:
            name, mode, *method = entry
            listed.append((name, b"x", mode, method[0] if method else zipfile.ZIP_DEFLATED))
    return zip_bytes(listed)


def set_zip_flags(data: bytes, flags: int) -> bytes:
    """Set general-purpose flags in every local and central header."""
    raw = bytearray(data)
    for sig, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        pos = raw.find(sig)
        while pos >= 0:
            old = struct.unpack_from("<H", raw, pos + at)[0]
            struct.pack_into("<H", raw, pos + at, old | flags)
            pos = raw.find(sig, pos + 4)
    return bytes(raw)


def tar_bytes(entries: list[TarEntry], *, compress: bool = True) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz" if compress else "w",
                      format=tarfile.GNU_FORMAT) as archive:
        for name, data, kind in entries:
            info = tarfile.TarInfo(name)
            info.type = kind
            info.mode = 0o644
            if kind == tarfile.REGTYPE:
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
            else:
                info.linkname = "target"
                archive.addfile(info)
    return out.getvalue()


def tarred(*entries: str | tuple[str, bytes]) -> bytes:
    """demo/SKILL.md plus `entries` (a file name, or (name, tar type))."""
    listed: list[TarEntry] = [("demo/SKILL.md", MD, tarfile.REGTYPE)]
    for entry in entries:
        name, kind = (entry, tarfile.REGTYPE) if isinstance(entry, str) else entry
        listed.append((name, b"x", kind))
    return tar_bytes(listed)


S_LINK, S_CHR, S_BLK, S_FIFO, S_SOCK = (stat.S_IFLNK | 0o777, stat.S_IFCHR | 0o644,
                                        stat.S_IFBLK | 0o644, stat.S_IFIFO | 0o644,
                                        stat.S_IFSOCK | 0o644)

# case -> (archive bytes, fragments the message must hold)
CASES: dict[str, tuple[Callable[[], bytes], tuple[str, ...]]] = {
    # names
    "zip-absolute": (lambda: zipped("/etc/cron.d/x"), ("[archive-unsafe-name]", "absolute",
                                                       "/etc/cron.d/x")),
    "zip-dotdot": (lambda: zipped("demo/../../x"), ("[archive-unsafe-name]", "'..'",
                                                    "demo/../../x")),
    "zip-backslash": (lambda: zipped("demo\\..\\x"), ("backslash", "demo\\..\\x")),
    "zip-drive": (lambda: zipped("C:/x"), ("drive-letter", "C:/x")),
    "zip-control": (lambda: zipped("demo/a\nb"), ("control character",)),
    "zip-duplicate": (lambda: zipped("demo/a", "demo/a"), ("[archive-duplicate]", "demo/a")),
    "zip-nfc-twin": (lambda: zipped("demo/caf\u00e9", "demo/cafe\u0301"),
                     ("[archive-collision]", "NFC")),
    "zip-case-twin": (lambda: zipped("demo/README.md", "demo/readme.md"),
                      ("[archive-collision]", "differ only by case")),
    "zip-file-and-folder": (lambda: zipped("demo/x", "demo/x/y"),
                            ("[archive-collision]", "a file and a folder")),
    "zip-top-folder-case-twin": (lambda: zipped("Demo/x"), ("[archive-collision]",)),
    # kinds
    "zip-symlink": (lambda: zipped(("demo/link", S_LINK)), ("[archive-link]", "demo/link")),
    "zip-char-device": (lambda: zipped(("demo/dev", S_CHR)), ("[archive-special]",
                                                              "demo/dev")),
    "zip-block-device": (lambda: zipped(("demo/blk", S_BLK)), ("[archive-special]",)),
    "zip-fifo": (lambda: zipped(("demo/fifo", S_FIFO)), ("[archive-special]", "demo/fifo")),
    "zip-socket": (lambda: zipped(("demo/sock", S_SOCK)), ("[archive-special]",)),
    "zip-folder-mode-on-file": (lambda: zipped(("demo/d", stat.S_IFDIR | 0o755)),
                                ("[archive-special]", "folder mode")),
    "zip-encrypted": (lambda: set_zip_flags(zipped(), 0x1), ("[archive-encrypted]",
                                                             "demo/SKILL.md")),
    "zip-bzip2": (lambda: zipped(("demo/b", 0o100644, zipfile.ZIP_BZIP2)),
                  ("[archive-method]", "demo/b")),
    # damage
    "zip-truncated": (lambda: zipped("demo/a")[:-30], ("[archive-corrupt]",)),
    "zip-bad-crc": (lambda: _flip_in_data(zipped()), ("[archive-corrupt]", "demo/SKILL.md")),
    # tar
    "tar-symlink": (lambda: tarred(("demo/link", tarfile.SYMTYPE)), ("[archive-link]",
                                                                     "symbolic", "demo/link")),
    "tar-hardlink": (lambda: tarred(("demo/hard", tarfile.LNKTYPE)), ("[archive-link]",
                                                                      "hard link")),
    "tar-char-device": (lambda: tarred(("demo/dev", tarfile.CHRTYPE)),
                        ("[archive-special]", "character device")),
    "tar-block-device": (lambda: tarred(("demo/blk", tarfile.BLKTYPE)),
                         ("[archive-special]", "block device")),
    "tar-fifo": (lambda: tarred(("demo/fifo", tarfile.FIFOTYPE)), ("[archive-special]",
                                                                   "fifo")),
    "tar-dotdot": (lambda: tarred("../../x"), ("[archive-unsafe-name]", "'..'")),
    "tar-absolute": (lambda: tarred("/etc/x"), ("[archive-unsafe-name]", "absolute")),
    "tar-backslash": (lambda: tarred("demo\\x"), ("backslash",)),
    "tar-duplicate": (lambda: tarred("demo/a", "demo/a"), ("[archive-duplicate]",)),
    "tar-case-twin": (lambda: tarred("demo/A", "demo/a"), ("[archive-collision]",)),
    "tar-not-utf8": (lambda: tarred("demo/\udcff.txt"), ("not valid UTF-8",)),
    "tar-gz-truncated": (lambda: tarred("demo/a")[:-12], ("[archive-corrupt]",)),
    "tar-gz-trailing": (lambda: tarred() + b"appended", ("[archive-corrupt]",
                                                        "trailing data")),
}


def _flip_in_data(data: bytes) -> bytes:
    """Change one byte of the first member's compressed data (just after its header)."""
    name_len = struct.unpack_from("<H", data, 26)[0]
    at = 30 + name_len + 3
    return data[:at] + bytes([data[at] ^ 0x55]) + data[at + 1:]


@pytest.mark.parametrize("case", sorted(CASES))
def test_refused_and_nothing_written(case: str, tmp_path: Path) -> None:
    make, fragments = CASES[case]
    data = make()
    out = tmp_path / "out"
    with TALLY.refused("foreign-archive", case, "unpack", ArchiveError, *fragments):
        unpack(data, out, source="hostile.archive")
    assert not out.exists()


def test_all_problems_are_listed_at_once() -> None:
    data = zipped("/abs", "demo/../x", ("demo/l", S_LINK), "demo/a", "demo/A")
    with TALLY.refused("foreign-archive", "four-problems", "read_zip", ArchiveError,
                       "and 3 more problems", "/abs", "demo/../x", "demo/l",
                       "'demo/A' and 'demo/a'") as refusal:
        read_zip(data)
    assert refusal.value is not None
    assert [p.code for p in refusal.value.problems] == [
        "archive-unsafe-name", "archive-unsafe-name", "archive-link", "archive-collision"]


# -- bombs: stopped after the cap, never after the bomb ---------------------------------------

TEN_MB = 10 << 20


def stopped_after(exc: ArchiveError | None) -> int:
    assert exc is not None
    [problem] = exc.problems
    return int(problem.message.split("stopped after ")[1].split(" ")[0])


def test_gzip_bomb_by_ratio() -> None:
    bomb = gzip.compress(bytes(TEN_MB))
    assert len(bomb) < 20_000  # 10 MB of zeros in about 10 KB
    with TALLY.refused("foreign-archive", "gzip-ratio", "gunzip", ArchiveError,
                       "[archive-ratio]", "200 times") as refusal:
        gunzip(bomb)
    assert stopped_after(refusal.value) <= 200 * len(bomb) + 1 < TEN_MB // 4


def test_gzip_bomb_by_total() -> None:
    bomb = gzip.compress(bytes(TEN_MB))
    caps = Caps(total=1 << 20, ratio=10**6)
    with TALLY.refused("foreign-archive", "gzip-total", "gunzip", ArchiveError,
                       "[archive-too-large]", "1048576") as refusal:
        gunzip(bomb, caps)
    assert stopped_after(refusal.value) == (1 << 20) + 1
    assert len(gunzip(bomb, Caps(ratio=10**6))) == TEN_MB  # under the caps it is read


def test_tar_gz_bomb_by_total_and_ratio(tmp_path: Path) -> None:
    bomb = tar_bytes([("demo/SKILL.md", MD, tarfile.REGTYPE),
                      ("demo/zeros", bytes(TEN_MB), tarfile.REGTYPE)])
    with TALLY.refused("foreign-archive", "tar.gz-ratio", "unpack", ArchiveError,
                       "[archive-ratio]") as refusal:
        unpack(bomb, tmp_path / "out")
    assert stopped_after(refusal.value) <= 200 * len(bomb) + 1
    assert not (tmp_path / "out").exists()
    with TALLY.refused("foreign-archive", "tar.gz-total", "read_tar", ArchiveError,
                       "[archive-too-large]") as refusal:
        read_tar(bomb, Caps(total=1 << 20, ratio=10**6))
    assert stopped_after(refusal.value) == (1 << 20) + 1


def test_tar_gz_header_bomb() -> None:
    """A 10 MB GNU long name: tarfile reads a header's data whole, the cap still stops it."""
    bomb = tar_bytes([("demo/" + "a" * TEN_MB, b"x", tarfile.REGTYPE)])
    assert len(bomb) < 40_000
    with TALLY.refused("foreign-archive", "tar.gz-longname", "read_tar", ArchiveError,
                       "[archive-ratio]") as refusal:
        read_tar(bomb)
    assert stopped_after(refusal.value) <= 200 * len(bomb) + 1 < TEN_MB


def test_zip_bomb_by_ratio_and_total() -> None:
    bomb = zip_bytes([("demo/SKILL.md", MD, 0o100644, zipfile.ZIP_DEFLATED),
                      ("demo/zeros", bytes(TEN_MB), 0o100644, zipfile.ZIP_DEFLATED)])
    with TALLY.refused("foreign-archive", "zip-ratio", "read_zip", ArchiveError,
                       "[archive-ratio]", "demo/zeros") as refusal:
        read_zip(bomb)
    assert stopped_after(refusal.value) <= 200 * len(bomb) + 1 < TEN_MB
    with TALLY.refused("foreign-archive", "zip-total", "read_zip", ArchiveError,
                       "[archive-too-large]") as refusal:
        read_zip(bomb, Caps(total=1 << 20, ratio=10**6))
    assert stopped_after(refusal.value) == (1 << 20) + 1


def test_zip_header_that_lies_about_the_size() -> None:
    """The central directory says 10 bytes; 10 MB would come out: refused after 10 bytes."""
    honest = zip_bytes([("demo/zeros", bytes(TEN_MB), 0o100644, zipfile.ZIP_DEFLATED)])
    raw = bytearray(honest)
    struct.pack_into("<I", raw, 22, 10)  # local header: uncompressed size
    struct.pack_into("<I", raw, raw.find(b"PK\x01\x02") + 24, 10)  # central: the same
    with TALLY.refused("foreign-archive", "zip-lying-size", "read_zip", ArchiveError,
                       "[archive-corrupt]", "demo/zeros"):
        read_zip(bytes(raw), Caps(ratio=10**6))


def test_zip_bomb_by_count() -> None:
    many = zip_bytes([(f"demo/{i}", b"", 0o100644, zipfile.ZIP_STORED) for i in range(10_001)])
    with TALLY.refused("foreign-archive", "zip-count", "read_zip", ArchiveError,
                       "[archive-too-many]", "10000"):
        read_zip(many)
    assert len(read_zip(many, Caps(members=10_001))) == 10_001


def test_tar_bomb_by_count() -> None:
    many = tar_bytes([(f"demo/{i}", b"", tarfile.REGTYPE) for i in range(51)])
    with TALLY.refused("foreign-archive", "tar-count", "read_tar", ArchiveError,
                       "[archive-too-many]", "50"):
        read_tar(many, Caps(members=50))


def test_gzip_members_count_against_the_cap() -> None:
    joined = b"".join(gzip.compress(b"part\n") for _ in range(4))
    assert gunzip(joined) == b"part\n" * 4
    with TALLY.refused("foreign-archive", "gzip-members", "gunzip", ArchiveError,
                       "[archive-too-many]", "gzip members"):
        gunzip(joined, Caps(members=3))


def test_caps_stop_before_chunk_sized_overshoot() -> None:
    """Whatever the input, at most one byte past the cap is ever produced."""
    bomb = gzip.compress(bytes(3 * CHUNK))
    for cap in (1, 100, CHUNK - 1, CHUNK, CHUNK + 1):
        with pytest.raises(ArchiveError) as caught:
            gunzip(bomb, Caps(total=cap, ratio=10**6))
        assert stopped_after(caught.value) == cap + 1


def test_overlapping_entries_bomb() -> None:
    """Many central entries sharing one deflated member (a "non-recursive zip bomb")."""
    one = zip_bytes([("demo/zer000", bytes(1 << 20), 0o100644, zipfile.ZIP_DEFLATED)])
    cd_at = one.find(b"PK\x01\x02")
    end_at = one.find(b"PK\x05\x06")
    entry = one[cd_at:end_at]
    entries = [entry.replace(b"demo/zer000", f"demo/zer{i:03d}".encode()) for i in range(300)]
    central = b"".join(entries)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 300, 300, len(central), cd_at, 0)
    bomb = one[:cd_at] + central + end
    assert len(bomb) < 40_000  # 300 MB if every entry were inflated
    with TALLY.refused("foreign-archive", "zip-overlap", "read_zip", ArchiveError,
                       "demo/zer001") as refusal:
        read_zip(bomb)
    assert refusal.value is not None
    assert {p.code for p in refusal.value.problems} == {"archive-overlap"}


# -- members that say less than an extractor writes ---------------------------------------------

KEY = b"notes\n" + b"-----BEGIN " + b"RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA " \
    + b"PRIVATE KEY-----\n"


def _zip_declaring_a_prefix(method: int) -> bytes:
    """demo/SKILL.md, and demo/notes.txt whose sizes and CRC-32 (local and central) cover its
    first 6 bytes while its data holds all of KEY: zipfile reads 6 bytes; Info-ZIP's unzip
    writes every byte (STORED by the compressed size, DEFLATE to the stream's end)."""
    out, central = bytearray(), bytearray()
    for name, data, kind, size, crc in (
            (b"demo/SKILL.md", MD, 0, len(MD), zlib.crc32(MD)),
            (b"demo/notes.txt", KEY, method, 6, zlib.crc32(KEY[:6]))):
        stored = zlib.compress(data)[2:-4] if kind == 8 else data
        at = len(out)
        out += struct.pack("<4sHHHHHIIIHH", b"PK\3\4", 20, 0x800, kind, 0, 0x21, crc,
                           len(stored), size, len(name), 0) + name + stored
        central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\1\2", 0x314, 20, 0x800, kind, 0,
                               0x21, crc, len(stored), size, len(name), 0, 0, 0, 0,
                               0o100644 << 16, at) + name
    return bytes(out + central + struct.pack("<4sHHHHIIH", b"PK\5\6", 0, 0, 2, 2,
                                             len(central), len(out), 0))


@pytest.mark.parametrize(("method", "said"), [
    (zipfile.ZIP_STORED, f"a STORED member of {len(KEY)} bytes declares 6"),
    (zipfile.ZIP_DEFLATED, "inflates past its declared 6 bytes")])
def test_a_zip_member_declaring_part_of_its_data_is_refused(
        tmp_path: Path, method: int, said: str) -> None:
    """What `unzip` writes (the private key) is what would go unchecked: refused, not cut."""
    data = _zip_declaring_a_prefix(method)
    (tmp_path / "lie.zip").write_bytes(data)
    unzipped = subprocess.run(["unzip", "-o", "-q", "lie.zip"], cwd=tmp_path,
                              capture_output=True, check=False)
    assert unzipped.returncode != 0  # it warns of a bad CRC, and writes the file all the same
    assert b"PRIVATE KEY" in (tmp_path / "demo" / "notes.txt").read_bytes()
    with TALLY.refused("foreign-archive", f"zip-prefix-declared-{method}", "unpack",
                       ArchiveError, "[archive-corrupt]", "demo/notes.txt", said):
        unpack(data, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    # a zip whose names are no skillpack archive's is the foreign reader's to judge: its
    # words, not the strict reader's ("compressed member where STORED is promised")
    result = run_cli("check", str(tmp_path / "lie.zip"))
    assert result.exit_code == 1 and f"[archive-corrupt] {said}" in result.output
    assert f"{tmp_path / 'lie.zip'}!demo/notes.txt: error:" in result.output  # ARCHIVE!MEMBER


def test_a_zip_member_named_with_a_nul_is_refused_not_cut() -> None:
    """zipfile cuts ``filename`` at a NUL (``run.sh\\0.txt`` reads as ``run.sh``)."""
    data = zip_bytes([("demo/SKILL.md", MD, 0o100644, zipfile.ZIP_STORED),
                      ("demo/run.sh", b"echo hi\n", 0o100755, zipfile.ZIP_STORED)])
    data = data.replace(b"demo/run.sh", b"demo/r\0n.sh")
    with TALLY.refused("foreign-archive", "zip-name-nul", "read_zip", ArchiveError,
                       "[archive-unsafe-name]", "control character"):
        read_zip(data)


def _zip_with_unicode_path(other: bytes, where: str) -> bytes:
    """demo/SKILL.md, and demo/notes.txt (holding KEY) whose Info-ZIP Unicode Path extra
    field, in its local header, its central entry or both, names it `other`."""
    name = b"demo/notes.txt"
    field = struct.pack("<BI", 1, zlib.crc32(name)) + other
    extra = struct.pack("<HH", 0x7075, len(field)) + field
    out, central = bytearray(), bytearray()
    for path, data, local, mid in ((b"demo/SKILL.md", MD, b"", b""),
                                   (name, KEY, extra if where != "central" else b"",
                                    extra if where != "local" else b"")):
        at = len(out)
        out += struct.pack("<4sHHHHHIIIHH", b"PK\3\4", 20, 0, 0, 0, 0x21, zlib.crc32(data),
                           len(data), len(data), len(path), len(local)) + path + local + data
        central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\1\2", 0x314, 20, 0, 0, 0, 0x21,
                               zlib.crc32(data), len(data), len(data), len(path), len(mid),
                               0, 0, 0, 0o100644 << 16, at) + path + mid
    return bytes(out + central + struct.pack("<4sHHHHIIH", b"PK\5\6", 0, 0, 2, 2,
                                             len(central), len(out), 0))


@pytest.mark.parametrize("where", ["both", "central", "local"])
def test_a_zip_member_renamed_by_a_unicode_path_field_is_refused(
        tmp_path: Path, where: str) -> None:
    """zipfile ignores the Info-ZIP Unicode Path field (0x7075); unzip names the member by
    the central entry's field when its CRC-32 is the header name's: `notes.txt`, checked as
    such, is written as `.env`."""
    data = _zip_with_unicode_path(b"demo/.env", where)
    (tmp_path / "renamed.zip").write_bytes(data)
    subprocess.run(["unzip", "-o", "-q", "renamed.zip"], cwd=tmp_path, capture_output=True,
                   check=False)
    written = {p.name for p in (tmp_path / "demo").iterdir()}
    # unzip reads the central entry's field; a local one renames the member for an
    # extractor that reads the local headers as it goes (a stream)
    assert written == {"SKILL.md", ".env" if where != "local" else "notes.txt"}
    said = ("a second name in an Info-ZIP Unicode Path field (0x7075), 'demo/.env', which "
            "unzip writes it as")
    with TALLY.refused("foreign-archive", f"zip-unicode-path-{where}", "read_zip",
                       ArchiveError, "demo/notes.txt", said):
        read_zip(data)
    result = run_cli("check", str(tmp_path / "renamed.zip"))
    assert result.exit_code == 1 and said in result.output
    # the field as 7-Zip and Info-ZIP's zip write it, naming the member as its header does
    same = read_zip(_zip_with_unicode_path(b"demo/notes.txt", where))
    assert [m.path for m in same] == ["demo/SKILL.md", "demo/notes.txt"]


def _tar_member(name: str, data: bytes) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o644
    return info.tobuf(format=tarfile.USTAR_FORMAT) + data + bytes(-len(data) % 512)


@pytest.mark.parametrize(("between", "said"), [
    (b"X" * 512, "an unreadable header at byte 1,024"),
    (bytes(512), "data after its end")])
def test_a_tar_block_that_ends_tarfile_early_is_refused(
        tmp_path: Path, between: bytes, said: str) -> None:
    """tarfile stops, without a word, at a header it cannot read or a zero block; GNU tar
    skips the bad header (and `tar -i`, bsdtar read past a zero block) and extracts the
    member after it."""
    raw = (_tar_member("demo/SKILL.md", MD) + between + _tar_member("demo/key.pem", KEY)
           + bytes(1024))
    data = gzip.compress(raw, mtime=0)
    (tmp_path / "x.tar.gz").write_bytes(data)
    subprocess.run(["tar", "-x", "-i", "-z", "-f", "x.tar.gz"], cwd=tmp_path,
                   capture_output=True, check=False)
    assert b"PRIVATE KEY" in (tmp_path / "demo" / "key.pem").read_bytes()
    for case, archive in (("tar.gz", data), ("tar", raw)):
        with TALLY.refused("foreign-archive", f"{case}-early-end-{len(between.strip())}",
                           "read_tar", ArchiveError, "[archive-corrupt]", said):
            read_tar(archive)
    for command in ("verify", "check"):  # the tar reader's words, not the zip reader's
        result = run_cli(command, str(tmp_path / "x.tar.gz"))
        assert result.exit_code == 1 and "[archive-corrupt]" in result.output
        assert said in result.output and "central-directory" not in result.output


def test_a_tar_padded_with_zero_blocks_is_read() -> None:
    """The end of an archive is two zero blocks, then zeros to the record size: no damage."""
    raw = _tar_member("demo/SKILL.md", MD) + bytes(10240)
    assert [m.path for m in read_tar(raw)] == ["demo/SKILL.md"]
    assert [m.path for m in read_tar(gzip.compress(raw))] == ["demo/SKILL.md"]


@pytest.mark.parametrize("folders", [2_100, 32_000])
def test_a_foreign_member_name_longer_than_any_path_is_refused(folders: int) -> None:
    """Each folder of a member's name is claimed in turn (file beside folder, collisions):
    a name of 64 KB, "a/a/a/...", cost 2 GB; over 4,096 bytes it is refused first, shown by
    its start."""
    name = "demo/" + "a/" * folders + "x"
    data = zip_bytes([("demo/SKILL.md", MD, 0o100644, zipfile.ZIP_STORED),
                      (name, b"x", 0o100644, zipfile.ZIP_STORED)])
    with TALLY.refused("foreign-archive", f"a name of {len(name):,} bytes", "read_zip",
                       ArchiveError, "[archive-unsafe-name]", "4,096") as refusal:
        read_zip(data)
    assert refusal.value is not None and len(str(refusal.value)) < 1_000


@pytest.mark.parametrize("depth", [1_000, 1_200])
def test_a_member_a_thousand_folders_deep_is_read_without_recursion(tmp_path: Path,
                                                                    depth: int) -> None:
    """`d/d/d/.../x` 1,000 folders deep is 2 KB of name, under 4,096 bytes: it is a name.
    os.makedirs and shutil.rmtree recurse once a folder, past Python's recursion limit (a
    RecursionError traceback from every command that unpacks it); made and removed a level
    at a time, it unpacks and checks."""
    name = "demo/" + "d/" * depth + "x.txt"
    data = zip_bytes([("demo/SKILL.md", MD, 0o100644, zipfile.ZIP_DEFLATED),
                      (name, b"deep\n", 0o100644, zipfile.ZIP_DEFLATED)])
    (tmp_path / "deep.zip").write_bytes(data)
    result = run_cli("check", str(tmp_path / "deep.zip"))
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    TALLY.handled("foreign-archive", f"a member {depth} folders deep", "cli check")
    try:
        folder, _ = unpack(data, tmp_path / "out")
        assert (Path(folder) / name.removeprefix("demo/")).read_bytes() == b"deep\n"
    finally:  # pytest's own clean-up of tmp_path recurses once a folder
        remove_tree(tmp_path / "out")
