"""Atomic writes: no partial file under the final name, no temp file left, WriteError on OS
failures, and clean-up of temp files left by a killed pack."""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from skillpack._atomic import AtomicBatch, atomic_write, clean_stale_temps
from skillpack.errors import SkillpackError, WriteError
from skillpack.storedzip.reader import read_zip
from skillpack.storedzip.writer import ZipWriter

TEMP_NAME = re.compile(r"\.out\.skill\.skillpack-tmp-(\d+)-[0-9a-f]+")


def test_success_replaces_dest_with_mode_0644_whatever_the_umask(tmp_path: Path) -> None:
    dest = tmp_path / "out.skill"
    dest.write_bytes(b"old")
    dest.chmod(0o600)
    old = os.umask(0o077)
    try:
        with atomic_write(dest) as fh:
            fh.write(b"new bytes")
            # While writing, the final name still holds the old file; the temp file is hidden.
            assert dest.read_bytes() == b"old"
            [tmp] = [p.name for p in tmp_path.iterdir() if p.name != "out.skill"]
            match = TEMP_NAME.fullmatch(tmp)
            assert match is not None and int(match.group(1)) == os.getpid()
    finally:
        os.umask(old)
    assert dest.read_bytes() == b"new bytes"
    assert dest.stat().st_mode & 0o7777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["out.skill"]


def test_zip_writer_inside_atomic_write(tmp_path: Path) -> None:
    dest = tmp_path / "out.skill"
    with atomic_write(str(dest)) as fh, ZipWriter(fh) as zw:
        zw.add_bytes("s/SKILL.md", b"# s\n")
        zw.add_bytes("s/run.sh", b"#!/bin/sh\n", executable=True)
    assert read_zip(dest.read_bytes()).names == ("s/SKILL.md", "s/run.sh")


@pytest.mark.parametrize("exc", [RuntimeError("boom"), KeyboardInterrupt(),
                                 FileNotFoundError(errno.ENOENT, "source vanished")])
def test_failure_leaves_no_file_and_reraises_unchanged(tmp_path: Path,
                                                      exc: BaseException) -> None:
    dest = tmp_path / "out.skill"
    with pytest.raises(type(exc)) as info, atomic_write(dest) as fh:
        fh.write(b"partial" * 1000)
        raise exc
    assert info.value is exc  # a caller's own OSError is not turned into a WriteError
    assert list(tmp_path.iterdir()) == []


def test_failure_keeps_the_previous_file(tmp_path: Path) -> None:
    dest = tmp_path / "out.skill"
    dest.write_bytes(b"previous")
    with pytest.raises(RuntimeError), atomic_write(dest) as fh:
        fh.write(b"half")
        raise RuntimeError
    assert dest.read_bytes() == b"previous"
    assert [p.name for p in tmp_path.iterdir()] == ["out.skill"]


def _assert_write_error(err: WriteError, dest: Path) -> None:
    assert isinstance(err, SkillpackError) and isinstance(err, OSError)
    assert str(dest) in str(err)
    assert err.hint


def test_missing_folder_is_a_write_error(tmp_path: Path) -> None:
    dest = tmp_path / "missing" / "out.skill"
    with pytest.raises(WriteError) as info, atomic_write(dest):
        pytest.fail("must not get here")
    _assert_write_error(info.value, dest)
    assert info.value.errno == errno.ENOENT
    assert "create the output folder" in str(info.value)


def test_dest_is_a_folder_is_a_write_error(tmp_path: Path) -> None:
    dest = tmp_path / "out.skill"
    dest.mkdir()
    with pytest.raises(WriteError) as info, atomic_write(dest) as fh:
        fh.write(b"x")
    _assert_write_error(info.value, dest)
    assert [p.name for p in tmp_path.iterdir()] == ["out.skill"] and dest.is_dir()


@pytest.mark.parametrize(("where", "code", "hint"), [
    ("open", errno.EACCES, "make the folder writable"),
    ("open", errno.EROFS, "make the folder writable"),
    ("fsync", errno.ENOSPC, "free some disk space"),
    ("replace", errno.EACCES, "make the folder writable"),
])
def test_os_errors_become_write_errors_with_nothing_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, code: int, hint: str,
) -> None:
    # Tests run as root, which ignores permission bits: inject the error the kernel would give.
    real = getattr(os, where)

    def failing(*args: object, **kwargs: object) -> object:
        if where == "open" and not str(args[0]).startswith(str(tmp_path)):
            return real(*args, **kwargs)
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, where, failing)
    dest = tmp_path / "out.skill"
    with pytest.raises(WriteError) as info, atomic_write(dest) as fh:
        fh.write(b"data")
    monkeypatch.undo()
    _assert_write_error(info.value, dest)
    assert info.value.errno == code and hint in str(info.value)
    assert list(tmp_path.iterdir()) == []


_FILE_TOO_BIG = textwrap.dedent(
    """
    import json, resource, signal, sys
    from skillpack._atomic import atomic_write
    from skillpack.errors import WriteError
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, resource.RLIM_INFINITY))
    try:
        with atomic_write(sys.argv[1]) as fh:
            for _ in range(64):  # past the 1 MiB buffer: the file object's own write fails
                fh.write(b"x" * 65536)
    except WriteError as err:
        print(json.dumps({"type": "WriteError", "errno": err.errno, "message": str(err)}))
    """
)


def test_a_real_failed_write_is_a_write_error(tmp_path: Path) -> None:
    # The kernel refuses writes past RLIMIT_FSIZE (EFBIG), as a full disk refuses (ENOSPC).
    _assert_write_error_leaving_nothing(tmp_path, _FILE_TOO_BIG)


_KILLED = textwrap.dedent(
    """
    import os, signal, sys
    from skillpack._atomic import atomic_write
    with atomic_write(sys.argv[1]) as fh:
        fh.write(b"half an archive")
        fh.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    """
)


def test_clean_stale_temps_removes_what_a_killed_pack_left(tmp_path: Path) -> None:
    dest = tmp_path / "out.skill"
    done = subprocess.run([sys.executable, "-c", _KILLED, str(dest)], check=False)
    assert done.returncode == -9
    [left] = list(tmp_path.iterdir())
    assert TEMP_NAME.fullmatch(left.name) and not dest.exists()
    assert clean_stale_temps(tmp_path) == [str(left)]
    assert list(tmp_path.iterdir()) == []


def test_clean_stale_temps_spares_live_and_unrelated_files(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = tmp_path / f".a.skill.skillpack-tmp-{gone.pid}-0badc0de"
    mine = tmp_path / f".b.skill.skillpack-tmp-{os.getpid()}-0badc0de"
    init = tmp_path / ".c.skill.skillpack-tmp-1-0badc0de"
    folder = tmp_path / f".d.skill.skillpack-tmp-{gone.pid}-0badc0de"
    link = tmp_path / f".e.skill.skillpack-tmp-{gone.pid}-0badc0de"
    other = tmp_path / f"notes-skillpack-tmp-{gone.pid}-x.txt"
    for path in (dead, mine, init, other):
        path.write_bytes(b"x")
    folder.mkdir()
    link.symlink_to(other)
    assert clean_stale_temps(tmp_path) == [str(dead)]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in (mine, init, folder, link, other))
    assert clean_stale_temps(tmp_path / "missing") == []


# -- a batch: several files, all or nothing ------------------------------------------------------

def _batch(tmp_path: Path, count: int, fail_at: int | None = None) -> list[Path]:
    dests = [tmp_path / f"a{i:03d}.skill" for i in range(count)]
    with AtomicBatch() as batch:
        for i, dest in enumerate(dests):
            with batch.write(dest) as handle:
                handle.write(f"archive {i}\n".encode())
                if i == fail_at:
                    raise RuntimeError("the source went away")
    return dests


def test_a_batch_writes_every_file_past_one_sync_round(tmp_path: Path) -> None:
    old_umask = os.umask(0o077)
    try:
        dests = _batch(tmp_path, 300)  # more than one round of parallel fsyncs
    finally:
        os.umask(old_umask)
    assert sorted(tmp_path.iterdir()) == dests
    assert [d.read_text() for d in dests] == [f"archive {i}\n" for i in range(300)]
    assert {stat.S_IMODE(d.stat().st_mode) for d in dests} == {0o644}


def test_a_failed_write_leaves_nothing_of_the_batch(tmp_path: Path) -> None:
    (tmp_path / "a001.skill").write_bytes(b"previous")
    with pytest.raises(RuntimeError):
        _batch(tmp_path, 300, fail_at=200)  # after a round of fsyncs, before the renames
    assert [p.name for p in tmp_path.iterdir()] == ["a001.skill"]
    assert (tmp_path / "a001.skill").read_bytes() == b"previous"


def test_a_failed_fsync_is_a_write_error_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    real, calls = os.fsync, []

    def fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 7:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(WriteError) as info:
        _batch(tmp_path, 20)
    assert info.value.errno == errno.EIO and ".skill" in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_a_rename_failing_part_way_takes_back_what_the_batch_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "a000.skill").write_bytes(b"previous")
    real, calls = os.replace, []

    def replace(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 4:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(WriteError) as info:
        _batch(tmp_path, 10)
    assert "a003.skill" in str(info.value) and "free some disk space" in str(info.value)
    # a000 existed (it was replaced, so it holds the new bytes); a001, a002 were created: gone
    assert [p.name for p in tmp_path.iterdir()] == ["a000.skill"]
    assert (tmp_path / "a000.skill").read_bytes() == b"archive 0\n"


def test_an_interrupt_while_the_batch_waits_for_its_fsyncs_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from concurrent.futures import Future

    real = Future.exception

    def interrupted(self: Future[None], timeout: float | None = None) -> BaseException | None:
        monkeypatch.setattr(Future, "exception", real)  # once: the clean-up waits again
        raise KeyboardInterrupt

    (tmp_path / "a000.skill").write_bytes(b"previous")
    monkeypatch.setattr(Future, "exception", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _batch(tmp_path, 5)
    assert [p.name for p in tmp_path.iterdir()] == ["a000.skill"]
    assert (tmp_path / "a000.skill").read_bytes() == b"previous"


def test_write_parts_writes_every_part_in_order(tmp_path: Path) -> None:
    """Many parts, empty ones among them: the file is their join,
    mode 0644 whatever the umask, once the batch commits (and not before)."""
    parts = [b"" if i % 7 == 0 else f"part {i};".encode() for i in range(2600)]
    dest = tmp_path / "a.skill"
    old_umask = os.umask(0o077)
    try:
        with AtomicBatch() as batch:
            batch.write_parts(dest, parts)
            assert not dest.exists()
    finally:
        os.umask(old_umask)
    assert dest.read_bytes() == b"".join(parts)
    assert stat.S_IMODE(dest.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["a.skill"]


def test_write_parts_goes_on_where_a_short_write_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A write that writes only some bytes (a signal, a full pipe elsewhere) is continued
    from where it stopped: the kernel writes at most 5 bytes a call here."""
    real = os.write

    def short_write(fd: int, data: bytes | memoryview) -> int:
        return real(fd, bytes(data)[:5])

    monkeypatch.setattr(os, "write", short_write)
    parts = [b"PK\x03\x04", b"", b"abcdefghij", b"x", b"0123456789" * 3, b""]
    dest = tmp_path / "a.skill"
    with AtomicBatch() as batch:
        batch.write_parts(dest, parts)
    assert dest.read_bytes() == b"".join(parts)


_PARTS_TOO_BIG = textwrap.dedent(
    """
    import json, resource, signal, sys
    from skillpack._atomic import AtomicBatch
    from skillpack.errors import WriteError
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, resource.RLIM_INFINITY))
    try:
        with AtomicBatch() as batch:
            batch.write_parts(sys.argv[1], [b"x" * 65536] * 4)
    except WriteError as err:
        print(json.dumps({"type": "WriteError", "errno": err.errno, "message": str(err)}))
    """
)




@pytest.mark.parametrize("failure", ["interrupt", "took-nothing"])
def test_write_parts_stopped_part_way_leaves_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str,
) -> None:
    """A write that wrote some bytes, then a Ctrl-C in the next one, or a write that takes
    none of the bytes and reports no error: the interrupt (or a WriteError, EIO) comes out,
    the destination keeps its old bytes and no temp file is left beside it."""
    real = os.write
    calls: list[int] = []

    def failing_write(fd: int, data: bytes | memoryview) -> int:
        calls.append(fd)
        if len(calls) == 1:
            return real(fd, bytes(data)[:3])
        if failure == "interrupt":
            raise KeyboardInterrupt
        return 0

    dest = tmp_path / "a.skill"
    dest.write_bytes(b"old")
    monkeypatch.setattr(os, "write", failing_write)
    expected: type[BaseException] = KeyboardInterrupt if failure == "interrupt" else WriteError
    with pytest.raises(expected) as info, AtomicBatch() as batch:
        batch.write_parts(dest, [b"new bytes", b"and more"])
    if failure == "took-nothing":
        assert getattr(info.value, "errno", None) == errno.EIO and str(dest) in str(info.value)
    assert len(calls) == 2
    assert dest.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.skill"]


def _assert_write_error_leaving_nothing(tmp_path: Path, script: str) -> None:
    """`script` writes past RLIMIT_FSIZE into ``argv[1]``: a WriteError naming the file, and
    nothing left in the folder."""
    dest = tmp_path / "out.skill"
    done = subprocess.run([sys.executable, "-c", script, str(dest)],
                          capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    assert result["type"] == "WriteError" and result["errno"] == errno.EFBIG
    assert str(dest) in result["message"] and "free some disk space" in result["message"]
    assert list(tmp_path.iterdir()) == []


def test_write_parts_failing_in_the_kernel_is_a_write_error_leaving_nothing(
    tmp_path: Path,
) -> None:
    _assert_write_error_leaving_nothing(tmp_path, _PARTS_TOO_BIG)
