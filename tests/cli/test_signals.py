"""The `skillpack` process: Ctrl-C exits 130, SIGTERM 143, each leaving no temp file of the
write in progress; a closed stdout ends quietly (exit 0, nothing on stderr).

Every test runs a real interpreter. To stop a write half way without guessing at timings, the
child's `write_members` is wrapped: it writes the real members, one at a time, and after the
first one says so on stderr and waits; the parent then sends the signal to a process holding
a half-written temp file (checked before the signal is sent).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from helpers.paths import FIXTURES, REPO
from helpers.signals import stopped
from helpers.skills import make_tree

from skillpack._atomic import TEMP_MARK
from skillpack._threads import quiet_helper

_HELD = textwrap.dedent('''
    import os, sys, time
    import skillpack.packing.bundle, skillpack.packing.pack
    real = skillpack.packing.pack.write_members

    def held(writer, members, progress=None):
        said = []
        def after(size):
            if not said:
                said.append(1)
                os.write(2, b"HALF-WRITTEN\\n")
                time.sleep(120)
        real(writer, members, after)

    skillpack.packing.pack.write_members = held
    skillpack.packing.bundle.write_members = held
    from skillpack.cli import outcome
    sys.exit(outcome(sys.argv[1:]))
''')


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _big_skill(root: Path) -> Path:
    """A skill of several files, the last one large (a few MiB): a write worth stopping."""
    return make_tree(root, {
        "SKILL.md": "---\nname: big\ndescription: A large skill to stop half way.\n---\n# Big\n",
        "a.txt": "first member\n",
        "data/large.bin": os.urandom(4 << 20),
    })


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if TEMP_MARK in p.name)


def _stop_half_way(args: list[str], out: Path, signum: int,
                   env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    child = subprocess.Popen([sys.executable, "-c", _HELD, *args], env={**_env(), **(env or {})},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stderr is not None
    stderr = child.stderr

    def half_written() -> None:
        line = stderr.readline()
        assert line == "HALF-WRITTEN\n", line + stderr.read()
        assert _temps(out), "the write in progress has no temp file: nothing would be proven"

    return stopped(child, signum, half_written)


@pytest.mark.parametrize(("signum", "code", "said"), [
    (signal.SIGTERM, 143, "skillpack: terminated\n"),
    (signal.SIGINT, 130, "skillpack: interrupted\n"),
])
def test_a_signal_mid_pack_exits_128_plus_it_and_leaves_no_temp_file(
        tmp_path: Path, signum: int, code: int, said: str) -> None:
    skill = _big_skill(tmp_path / "big")
    out = tmp_path / "out"
    out.mkdir()
    done = _stop_half_way(["pack", str(skill), "-o", str(out)], out, signum)
    assert done.returncode == code, done.stderr
    assert done.stderr.endswith(said) and "Traceback" not in done.stderr
    assert list(out.iterdir()) == []  # no archive, no temp file


def test_sigterm_mid_bundle_leaves_no_temp_file_and_the_old_bundle(tmp_path: Path) -> None:
    skill = _big_skill(tmp_path / "big")
    out = tmp_path / "out"
    out.mkdir()
    old = out / "skills.bundle"
    old.write_bytes(b"the bundle of yesterday")
    done = _stop_half_way(["bundle", str(skill), "-o", str(old)], out, signal.SIGTERM)
    assert done.returncode == 143, done.stderr
    assert _temps(out) == []
    assert old.read_bytes() == b"the bundle of yesterday"


def _closed_stdout(args: list[str]) -> subprocess.CompletedProcess[bytes]:
    read, write = os.pipe()
    os.close(read)  # whoever reads is gone before a byte is written
    try:
        return subprocess.run([sys.executable, "-m", "skillpack", *args], env=_env(),
                              stdout=write, stderr=subprocess.PIPE, timeout=60, check=False)
    finally:
        os.close(write)


@pytest.mark.parametrize("args", [
    ["files", str(FIXTURES / "waitlist")],
    ["check", str(FIXTURES / "waitlist")],
    ["--help"],
    ["--version"],
    ["check", "--help"],
])
def test_a_closed_stdout_ends_quietly(args: list[str]) -> None:
    done = _closed_stdout(args)
    assert (done.returncode, done.stderr) == (0, b"")


def test_stdout_open_still_gives_the_verdict(tmp_path: Path) -> None:
    """The quiet exit is for a closed pipe only: an open one keeps exit 1 for invalid."""
    bad = make_tree(tmp_path / "bad", {"SKILL.md": "---\nname: Bad Name\n---\n"})
    done = subprocess.run([sys.executable, "-m", "skillpack", "check", str(bad)], env=_env(),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1 and "invalid" in done.stdout


def test_the_console_script_is_the_process_entry() -> None:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert 'skillpack = "skillpack._launch:run"' in text  # --version without click
    done = subprocess.run([sys.executable, "-m", "skillpack", "--version"], env=_env(),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.startswith("skillpack, version ")
    via_click = subprocess.run([sys.executable, "-m", "skillpack", "--version", "--help"],
                               env=_env(), capture_output=True, text=True, timeout=60,
                               check=False)
    assert via_click.stdout == done.stdout  # the same words as click's version option


# -- -o - ----------------------------------------------------------------------------------------

def _skillpack(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "skillpack", *map(str, args)], env=_env(),
                          capture_output=True, timeout=120, check=False, cwd=cwd)


def test_bundle_and_lock_to_stdout_are_the_files_they_write(tmp_path: Path) -> None:
    skills = [FIXTURES / "waitlist", FIXTURES / "release-notes"]
    to_file = _skillpack("bundle", *skills, "-o", tmp_path / "skills.bundle")
    to_stdout = _skillpack("bundle", *skills, "-o", "-", cwd=tmp_path)
    assert to_file.returncode == to_stdout.returncode == 0, to_stdout.stderr
    assert to_stdout.stdout == (tmp_path / "skills.bundle").read_bytes()
    assert to_stdout.stderr.decode().startswith("bundled 2 skill(s) to stdout (")
    lock_file = _skillpack("lock", *skills, "-o", tmp_path / "skills.lock")
    lock_stdout = _skillpack("lock", *skills, "-o", "-", cwd=tmp_path)
    assert lock_file.returncode == lock_stdout.returncode == 0
    assert lock_stdout.stdout == (tmp_path / "skills.lock").read_bytes()
    assert lock_stdout.stderr == b"locked 2 skill(s) in stdout\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["skills.bundle", "skills.lock"]


def test_a_failed_bundle_to_stdout_prints_no_byte(tmp_path: Path) -> None:
    bad = make_tree(tmp_path / "bad", {"SKILL.md": "---\nname: Bad\ndescription: d\n---\n"})
    done = _skillpack("bundle", bad, "-o", "-", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, b"")
    assert b"name-not-lowercase" in done.stderr


@pytest.mark.parametrize("args", [
    ["pack", FIXTURES / "waitlist", "-o", "-"],
    ["bundle", FIXTURES / "waitlist", "-o", "-", "--json"],
    ["new", "x", "-o", "-"],
    ["unpack", FIXTURES / "waitlist" / "SKILL.md", "-o", "-"],
    ["export", "oci", FIXTURES / "waitlist", "-o", "-"],
    ["export", "well-known", FIXTURES / "waitlist", "-o", "-"],
    ["pull", "127.0.0.1:1/skills:v1", "-o", "-"],
])
def test_dash_where_no_single_file_is_made_is_a_usage_error(
        tmp_path: Path, args: list[object]) -> None:
    done = _skillpack(*args, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == b""
    assert b"-o - writes" in done.stderr
    assert list(tmp_path.iterdir()) == []


_IGNORED_THEN_SENT = textwrap.dedent('''
    import _thread, functools, sys, time, weakref
    from skillpack.cli import app as cli
    import signal
    signal.signal(signal.SIGTERM, cli._terminate)
    sys.unraisablehook = functools.partial(cli._signal_again, sys.unraisablehook,
                                           _thread.get_ident())
    class Held:
        pass
    held = Held()
    def collected(ref):
        raise cli.Terminated  # where Python only prints it: "Exception ignored in ..."
    watch = weakref.ref(held, collected)
    try:
        del held
        time.sleep(30)
        print("the signal was lost")
    except cli.Terminated:
        print("terminated")
''')


def test_a_signal_raised_where_python_ignores_it_is_sent_again() -> None:
    """A SIGTERM whose exception lands in a weakref callback (Python prints it and goes on)
    is sent again, and ends what the main thread was doing (a sleep here)."""
    done = subprocess.run([sys.executable, "-c", _IGNORED_THEN_SENT], env=_env(),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout == "terminated\n", done.stderr
    assert "Exception ignored" not in done.stderr


def test_helper_threads_leave_signals_to_the_main_thread() -> None:
    """SIGINT and SIGTERM are blocked in the build's helper threads (the kernel then delivers
    them to the main thread, whose handler runs even while it waits on a helper)."""
    with ThreadPoolExecutor(1, initializer=quiet_helper) as pool:
        mask = pool.submit(signal.pthread_sigmask, signal.SIG_BLOCK, [])
    assert {signal.SIGINT, signal.SIGTERM} <= mask.result()
    assert signal.SIGTERM not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
