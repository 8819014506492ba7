"""Hostile tar members (issue 28): sparse members whose holes tarfile fills itself, every
inflated byte of a nested archive asset against one budget, chains of extended headers, and
the gzip framings real tools write (several members, zero padding).

Bounds are shown by sizes, never by a clock: the peak memory (tracemalloc) and the bytes the
error says were produced stay the same while the declared size grows 256-fold.
"""

from __future__ import annotations

import gzip
import re
import tarfile
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.hostile import TALLY, demo_skill, run_cli
from helpers.secrets import tar

from skillpack.content.inflate import Caps, gunzip, read_tar
from skillpack.content.scan import scan_content
from skillpack.errors import ArchiveError

MIB = 1 << 20


def _num(value: int) -> bytes:
    return tarfile.itn(value, 12, tarfile.GNU_FORMAT)


def _checksummed(block: bytearray) -> bytes:
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


def gnu_sparse(declared: int, name: str = "demo/big.bin", stored: bytes = b"x" * 512) -> bytes:
    """A tar holding one GNU sparse member (type ``S``, what ``tar --sparse`` writes): a
    hole of ``declared - len(stored)`` bytes, then `stored`."""
    info = tarfile.TarInfo(name)
    info.type = tarfile.GNUTYPE_SPARSE
    info.size = len(stored)
    block = bytearray(info.tobuf(format=tarfile.GNU_FORMAT))
    block[386:410] = _num(declared - len(stored)) + _num(len(stored))  # one map entry
    block[483:495] = _num(declared)  # realsize
    padded = stored + bytes(-len(stored) % 512)
    return _checksummed(block) + padded + bytes(1024)


def pax_sparse(declared: int, name: str = "demo/big.bin", stored: bytes = b"x" * 512) -> bytes:
    """A tar holding one pax sparse member, format 1.0 (``GNU.sparse.*`` records, the map at
    the start of the data)."""
    sparse_map = f"1\n{declared - len(stored)}\n{len(stored)}\n".encode()
    sparse_map += bytes(-len(sparse_map) % 512)
    info = tarfile.TarInfo("demo/GNUSparseFile.0/big.bin")
    info.size = len(sparse_map) + len(stored)
    info.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                        "GNU.sparse.name": name, "GNU.sparse.realsize": str(declared)}
    head = info.tobuf(format=tarfile.PAX_FORMAT)
    body = sparse_map + stored
    return head + body + bytes(-len(body) % 512) + bytes(1024)


def peak_of(func: Callable[[], object]) -> tuple[int, BaseException | None]:
    """The peak of memory allocated while `func` runs (tracemalloc), and what it raised."""
    tracemalloc.start()
    raised: BaseException | None = None
    try:
        func()
    except BaseException as exc:
        raised = exc
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, raised


def stopped_after(err: BaseException | None) -> int:
    assert isinstance(err, ArchiveError), err
    found = re.search(r"stopped after (\d+) bytes", str(err))
    assert found, str(err)
    return int(found.group(1))


# -- 1. sparse members -----------------------------------------------------------------------

SPARSE = {"gnu": gnu_sparse, "pax": pax_sparse}


@pytest.mark.parametrize("kind", sorted(SPARSE))
def test_a_sparse_member_counts_its_holes_against_the_caps(kind: str) -> None:
    """2 KB declaring 1 MiB to 256 MiB: refused after the same bytes, in the same memory."""
    seen = []
    for declared in (MIB, 16 * MIB, 256 * MIB):
        data = SPARSE[kind](declared)
        with TALLY.refused("foreign-archive", f"sparse-{kind}-{declared}", "read_tar", ArchiveError,
                           "demo/big.bin", "decompresses to more than 2 times"):
            read_tar(data, Caps(total=MIB, ratio=2))
        peak, raised = peak_of(lambda data=data: read_tar(data, Caps(total=MIB, ratio=2)))
        seen.append((len(data), stopped_after(raised), peak))
    sizes = {size for size, _, _ in seen}
    produced = {n for _, n, _ in seen}
    assert len(sizes) == 1 and len(produced) == 1, seen  # nothing grows with the declared size
    assert produced.pop() <= 2 * sizes.pop() + 1
    assert max(peak for _, _, peak in seen) < 256 * 1024, seen


@pytest.mark.parametrize("kind", sorted(SPARSE))
def test_a_sparse_member_within_the_caps_is_read_whole(kind: str) -> None:
    members = read_tar(SPARSE[kind](4096, stored=b"tail" * 128))
    assert [(m.path, m.data) for m in members] == [("demo/big.bin",
                                                    bytes(4096 - 512) + b"tail" * 128)]


@pytest.mark.parametrize("kind", sorted(SPARSE))
def test_a_skill_carrying_a_sparse_tar_is_refused_in_bounded_memory(kind: str,
                                                                     tmp_path: Path) -> None:
    """The secret scan of a carried 2 KB .tar declaring 16 MiB to 512 MiB: the same
    refusal after the same bytes, in the same memory (it was 1 GB resident)."""
    seen = []
    for declared in (16 * MIB, 512 * MIB):
        data = SPARSE[kind](declared)
        peak, _ = peak_of(lambda data=data: scan_content("big.tar", data, frozenset()))
        found = scan_content("big.tar", data, frozenset())
        assert found.refused and found.unscannable[0].code == "archive-ratio"
        seen.append((stopped_after(ArchiveError(found.unscannable[0].message)), peak))
    assert len({n for n, _ in seen}) == 1, seen
    assert max(peak for _, peak in seen) < 4 * MIB, seen
    skill = demo_skill(tmp_path / "demo", {"assets/big.tar": SPARSE[kind](512 * MIB)})
    for command in ("check", "pack", "digest"):
        result = run_cli(command, str(skill), *(["-o", str(tmp_path / "out")]
                                                if command == "pack" else []))
        assert result.exit_code == 1, result.output
        assert "assets/big.tar" in result.output and "decompression bomb" in result.output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    unpacked = run_cli("unpack", str(tmp_path / "demo" / "assets" / "big.tar"), "-o",
                       str(tmp_path / "unpacked"), "--max-total", "1MiB", "--max-ratio", "2")
    assert unpacked.exit_code == 1 and "decompression bomb" in unpacked.output
    assert not (tmp_path / "unpacked").exists()



# -- 8. chains of extended headers ------------------------------------------------------------

def header_chain(kind: str, links: int) -> bytes:
    """`links` pax (``x``) or GNU long-name (``L``) headers, each naming the member that
    follows, then one empty file: tarfile reads each by recursing into the next."""
    name = b"demo/" + b"n" * 120 + b"\0"
    if kind == "pax":
        record = b" path=demo/" + b"n" * 120 + b"\n"
        record = str(len(record) + 3).encode() + record  # the length counts its own digits
        head = tarfile.TarInfo("././@PaxHeader")
        head.type = tarfile.XHDTYPE
        body = record
    else:
        head = tarfile.TarInfo("././@LongLink")
        head.type = tarfile.GNUTYPE_LONGNAME
        body = name
    head.size = len(body)
    link = head.tobuf(format=tarfile.GNU_FORMAT) + body + bytes(-len(body) % 512)
    last = tarfile.TarInfo("demo/SKILL.md")
    return link * links + last.tobuf(format=tarfile.GNU_FORMAT) + bytes(1024)


@pytest.mark.parametrize("kind", ["pax", "gnu"])
def test_a_chain_of_extended_headers_is_refused_not_a_traceback(kind: str) -> None:
    assert [m.path for m in read_tar(header_chain(kind, 3))] == ["demo/" + "n" * 120]
    peaks = []
    for links in (3_000, 30_000):
        data = header_chain(kind, links)
        with TALLY.refused("foreign-archive", f"{kind}-chain-{links}", "read_tar", ArchiveError,
                           "extended headers", "chained"):
            read_tar(data)
        peaks.append(peak_of(lambda data=data: read_tar(data))[0])
    assert max(peaks) < 2 * MIB, peaks  # the same refusal at 1.5 and 15 MB


@pytest.mark.parametrize("kind", ["pax", "gnu"])
def test_every_command_refuses_a_chain_of_extended_headers(kind: str, tmp_path: Path) -> None:
    archive = tmp_path / "chain.tar"
    archive.write_bytes(header_chain(kind, 3_000))
    good = demo_skill(tmp_path / "good" / "demo")
    approved = tmp_path / "approved.lock"
    assert run_cli("lock", str(good), "-o", str(approved)).exit_code == 0
    out = str(tmp_path / "out")
    for command in (["unpack", str(archive), "-o", out], ["digest", str(archive)],
                    ["check", str(archive)], ["files", str(archive)],
                    ["pack", str(archive), "-o", out], ["lock", str(archive), "-o", out],
                    ["review", str(archive), "--lock", str(approved), "-o", out]):
        result = run_cli(*command)  # a traceback fails the test
        assert result.exit_code == 1, (command, result.output)
        assert "chain.tar" in result.output, (command, result.output)
        # a tar is never an archive of ours: every command gives the tar reader's words
        assert "extended headers" in result.output, (command, result.output)
    skill = demo_skill(tmp_path / "demo", {"assets/chain.tar": archive.read_bytes()})
    result = run_cli("check", str(skill))
    assert result.exit_code == 1 and "assets/chain.tar" in result.output
    assert "extended headers" in result.output


# -- 16. the gzip framings real tools write ----------------------------------------------------

SKILL_TAR = {"demo/SKILL.md": b"---\nname: demo\ndescription: Demo skill. Use it for tests.\n"
                              b"---\n\nBody.\n",
             "demo/data.bin": bytes(range(256)) * 400}


def framings() -> dict[str, bytes]:
    raw = tar(SKILL_TAR)
    return {
        "two members (gzip a >> b)": gzip.compress(raw[:1536]) + gzip.compress(raw[1536:]),
        "two members, the first inflating past 64 KiB": gzip.compress(raw[:-1024])
        + gzip.compress(raw[-1024:]),
        "a member per 512-byte block": b"".join(gzip.compress(raw[i:i + 512])
                                                 for i in range(0, len(raw), 512)),
        "an empty member at the end (bgzip's end block)": gzip.compress(raw)
        + gzip.compress(b""),
        "zero padding to a 10,240-byte record (dd conv=sync)": gzip.compress(raw)
        + bytes(-len(gzip.compress(raw)) % 10240),
        "one zero byte of padding": gzip.compress(raw) + b"\0",
        "members, then zero padding": gzip.compress(raw[:512]) + gzip.compress(raw[512:])
        + bytes(4096),
    }


@pytest.mark.parametrize("case", sorted(framings()))
def test_a_valid_gzip_framing_is_read(case: str, tmp_path: Path) -> None:
    data = framings()[case]
    assert gzip.decompress(data) == tar(SKILL_TAR)  # what Python's gzip reads
    assert {m.path: m.data for m in read_tar(data)} == SKILL_TAR
    archive = tmp_path / "demo.tar.gz"
    archive.write_bytes(data)
    result = run_cli("unpack", str(archive), "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "demo" / "data.bin").read_bytes() == SKILL_TAR["demo/data.bin"]
    skill = demo_skill(tmp_path / "carrier" / "demo", {"assets/demo.tar.gz": data})
    checked = run_cli("check", str(skill))
    assert checked.exit_code == 0, checked.output


def test_trailing_bytes_that_are_not_padding_are_still_refused() -> None:
    data = gzip.compress(tar(SKILL_TAR)) + bytes(100) + b"junk"
    with TALLY.refused("foreign-archive", "gzip-trailing-junk", "gunzip", ArchiveError,
                       "trailing data"):
        gunzip(data)
