"""Writes that fail: an output folder that is not writable, a full disk, a pack killed in the
middle. Whatever happens, no archive, bundle, Python module or lock file is ever left under
its final name holding less than the whole, and a later run removes what a killed one left.

Tests run as root, which ignores permission bits: a folder that is not writable is simulated
(os.open raising EACCES) and, where `setpriv` allows, also met for real by running the
command as `nobody`. A full disk is a 1 MiB tmpfs where mounting is allowed, else a 2 MiB
loop-mounted ext2 image, else (and in every case, in a subprocess) RLIMIT_FSIZE, which makes
the kernel refuse writes with EFBIG as a full disk refuses them with ENOSPC.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.hostile import DEMO_MD, TALLY, demo_skill, files_under, helper_skill, no_hang, run_cli
from helpers.paths import REPO
from helpers.skills import make_tree

from skillpack._atomic import clean_stale_temps
from skillpack.errors import (
    SkillpackError,
    WriteError,
)
from skillpack.packing.bundle import write_bundle
from skillpack.packing.pack import pack, pack_skills
from skillpack.publish.exports import ExportSkill, export_well_known

TEMP = re.compile(r"\..+\.skillpack-tmp-\d+-[0-9a-f]+")
FINAL = re.compile(r".*\.(skill|bundle|lock|py)")


def finals(folder: Path) -> list[str]:
    """Names in `folder` that are final outputs (not temp files)."""
    return [n for n in files_under(folder) if FINAL.fullmatch(n) and not TEMP.fullmatch(n)]


def temps(folder: Path) -> list[str]:
    return [n for n in files_under(folder) if TEMP.fullmatch(n)]


# -- the operations under test, each writing into a folder -----------------------------------

def _pack(src: Path, out: Path) -> object:
    return pack(src / "demo", out)


def _bundle(src: Path, out: Path) -> object:
    return write_bundle([src / "demo", src / "helper"], out / "skills.bundle")


def _module(src: Path, out: Path) -> object:
    """The bundle is written elsewhere; only the Python module goes into `out`."""
    side = src / "side"
    side.mkdir(exist_ok=True)
    return write_bundle([src / "demo", src / "helper"], side / "skills.bundle",
                        python_module=out / "skills_data.py")


def _lock(src: Path, out: Path) -> object:
    result = run_cli("lock", str(src / "demo"), str(src / "helper"), "-o",
                     str(out / "skills.lock"))
    if result.exit_code != 0:
        raise WriteError(result.output)
    return result


OPERATIONS: dict[str, Callable[[Path, Path], object]] = {
    "pack": _pack, "bundle": _bundle, "python module": _module, "lock": _lock,
}


def _refused_write(case: str, operation: str, src: Path, out: Path, reason: str,
                   hint: str) -> Any:
    """Run `operation` (the `lock` command through the CLI, which prints the error and exits
    1): it must be refused for `reason`, with `hint` from the library. The library's error,
    or None for the CLI."""
    if operation == "lock":
        result = run_cli("lock", str(src / "demo"), "-o", str(out / "skills.lock"))
        ok = result.exit_code == 1 and reason in result.output
        TALLY.add("write", case, "cli lock", "refused" if ok else "wrong-error", result.output)
        assert ok, result.output
        return None
    with TALLY.refused("write", case, operation, WriteError, reason, hint) as refusal:
        OPERATIONS[operation](src, out)
    return refusal.value


@pytest.fixture
def src(tmp_path: Path) -> Path:
    """Two skills; `demo` carries a 2 MiB file, more than a full 1 MiB disk can take."""
    root = tmp_path / "src"
    demo_skill(root / "demo", {"data.bin": os.urandom(2 << 20)})
    helper_skill(root / "helper")
    return root


# -- an output folder that is not writable ------------------------------------------------------

@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_output_folder_not_writable_simulated(operation: str, src: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    out.mkdir()
    real_open = os.open

    def fake_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT and os.path.dirname(os.path.abspath(path)) == str(out):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)
    case = "output folder not writable (EACCES, simulated)"
    _refused_write(case, operation, src, out, "Permission denied", "make the folder writable")
    assert files_under(out) == []


AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
CLI = [sys.executable, "-c", "from skillpack.cli import main; main()"]


def test_output_folder_not_writable_as_an_unprivileged_user(tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run the command as nobody")
    base = Path(tempfile.mkdtemp(prefix="sp-ro-", dir="/tmp"))
    try:
        base.chmod(0o755)
        demo_skill(base / "demo")
        out = base / "out"
        out.mkdir(mode=0o755)  # owned by root: nobody cannot create files in it
        for command in (["pack", str(base / "demo"), "-o", str(out)],
                        ["bundle", str(base / "demo"), "-o", str(out / "s.bundle")],
                        ["lock", str(base / "demo"), "-o", str(out / "skills.lock")],
                        ["pack", str(base / "demo"), "-o", str(out / "new" / "dir")]):
            done = subprocess.run([*AS_NOBODY, *CLI, *command], capture_output=True,
                                  text=True, cwd=REPO, timeout=120)
            ok = (done.returncode == 1 and "Permission denied" in done.stderr
                  and "Traceback" not in done.stderr)
            TALLY.add("write", "output folder not writable (a real run as nobody)",
                      f"cli {command[0]}", "refused" if ok else "wrong-error", done.stderr)
            assert ok, done.stderr
            assert files_under(out) == []
    finally:
        shutil.rmtree(base)


# -- a full disk -------------------------------------------------------------------------------

def _run(*command: str) -> bool:
    return subprocess.run(command, capture_output=True, check=False).returncode == 0


def _mount_small(mount: Path, kind: str, tmp_path: Path, options: str = "") -> str | None:
    """Mount a tiny filesystem on `mount`; say how, or None when the machine refuses."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return None
    if kind == "tmpfs":
        opts = ",".join(filter(None, ["size=1m", "mode=0755", options]))
        return "a 1 MiB tmpfs" if _run("mount", "-t", "tmpfs", "-o", opts, "tmpfs",
                                       str(mount)) else None
    if shutil.which("mkfs.ext2") is None:
        return None
    image = tmp_path / "disk.img"
    with image.open("wb") as handle:
        handle.truncate(2 << 20)
    opts = ",".join(filter(None, ["loop", options]))
    if _run("mkfs.ext2", "-q", "-m", "0", str(image)) and _run(
            "mount", "-o", opts, str(image), str(mount)):
        return "a 2 MiB loop-mounted ext2 image"
    return None


@pytest.fixture(params=["tmpfs", "loop"])
def full_disk(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A folder on a tiny filesystem: (folder, how it was made). Skips when the machine
    does not let the tests mount one; the RLIMIT_FSIZE test below covers that case."""
    mount = tmp_path / "disk"
    mount.mkdir()
    how = _mount_small(mount, request.param, tmp_path)
    if how is None:
        pytest.skip(f"cannot mount a small {request.param} filesystem here (not root, or "
                    "not allowed); the RLIMIT_FSIZE variant covers a failed write")
    try:
        yield mount, how
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def _fill(path: Path) -> None:
    """Write to `path` until not one more byte fits."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for chunk in (65536, 4096, 512, 1):
            while True:
                try:
                    os.write(fd, b"\0" * chunk)
                except OSError as err:
                    assert err.errno in (errno.ENOSPC, errno.EDQUOT)
                    break
    finally:
        os.close(fd)


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_full_disk(operation: str, src: Path, full_disk: tuple[Path, str]) -> None:
    disk, how = full_disk
    out = disk / "out"
    out.mkdir()
    if operation in ("lock", "python module"):  # small outputs: fill the disk first
        _fill(disk / "filler")
    case = f"full disk ({how})"
    error = _refused_write(case, operation, src, out, "No space left on device",
                           "free some disk space")
    if operation != "lock":
        assert getattr(error, "errno", None) == errno.ENOSPC
    assert files_under(out) == []
    print(f"\nfull disk: {how}")


def test_full_disk_after_a_first_archive_leaves_none(src: Path,
                                                    full_disk: tuple[Path, str]) -> None:
    """`pack` of two skills: the small one fits, the 2 MiB one does not. All or nothing:
    the first archive is removed again."""
    disk, how = full_disk
    out = disk / "out"
    with TALLY.refused("write", f"full disk after a first archive ({how})", "pack",
                       WriteError, "No space left on device"):
        pack([src / "helper", src / "demo"], out)
    assert files_under(out) == []


def test_read_only_filesystem(src: Path, tmp_path: Path) -> None:
    mount = tmp_path / "ro"
    mount.mkdir()
    how = _mount_small(mount, "tmpfs", tmp_path, "ro")
    if how is None:
        pytest.skip("cannot mount a read-only tmpfs here (not root, or not allowed)")
    try:
        for operation in ("pack", "bundle", "python module"):
            with TALLY.refused("write", "a read-only filesystem (EROFS)", operation,
                               WriteError, "Read-only file system",
                               "make the folder writable"):
                OPERATIONS[operation](src, mount)
        result = run_cli("lock", str(src / "demo"), "-o", str(mount / "skills.lock"))
        assert result.exit_code == 1 and "Read-only file system" in result.output
        TALLY.add("write", "a read-only filesystem (EROFS)", "cli lock", "refused")
        assert files_under(mount) == []
    finally:
        subprocess.run(["umount", str(mount)], check=False)


RLIMIT = textwrap.dedent('''
    import resource, signal, sys
    from pathlib import Path
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.RLIM_INFINITY))
    from skillpack.cli import main
    main(sys.argv[1:])
''')


@pytest.mark.parametrize("command", ["pack", "bundle"])
def test_file_size_limit_in_a_subprocess(command: str, src: Path, tmp_path: Path) -> None:
    """RLIMIT_FSIZE: the kernel refuses a write past 1 MiB with EFBIG, as a full disk would
    with ENOSPC. Runs everywhere, root or not."""
    out = tmp_path / "out"
    out.mkdir()
    target = str(out) if command == "pack" else str(out / "skills.bundle")
    done = subprocess.run([sys.executable, "-c", RLIMIT, command, str(src / "demo"), "-o",
                           target], capture_output=True, text=True, cwd=REPO, timeout=120)
    ok = (done.returncode == 1 and "File too large" in done.stderr
          and "free some disk space" in done.stderr and "Traceback" not in done.stderr)
    TALLY.add("write", "file size limit (RLIMIT_FSIZE, EFBIG)", f"cli {command}",
              "refused" if ok else "wrong-error", done.stderr)
    assert ok, done.stderr
    assert files_under(out) == []


def test_install_past_the_file_size_limit_says_which_skills_stay(tmp_path: Path) -> None:
    """`install` of three skills, the last carrying 2 MiB, under RLIMIT_FSIZE of 1 MiB (as a
    disk that fills midway): the first two stay installed and recorded, and the error says
    so, naming them, where it said only that the third could not be written."""
    repo = tmp_path / "repo"
    for name, size in (("one", 10), ("two", 10), ("zzz-big", 2 << 20)):
        make_tree(repo / name, {"SKILL.md": f"---\nname: {name}\ndescription: Does {name} "
                                f"things when asked.\n---\nbody\n", "data.txt": "x" * size})
    into = tmp_path / "skills"
    done = subprocess.run([sys.executable, "-c", RLIMIT, "install", str(repo), "--into",
                           str(into)], capture_output=True, text=True, cwd=REPO, timeout=120)
    said = ("cannot install skill 'zzz-big': File too large; before it, 2 skills were "
            "written and stay recorded: one (installed), two (installed)")
    ok = done.returncode == 1 and said in done.stderr and "Traceback" not in done.stderr
    TALLY.add("write", "file size limit (RLIMIT_FSIZE, EFBIG)", "cli install",
              "refused" if ok else "wrong-error", done.stderr)
    assert ok, done.stderr
    assert "run the same install again" in done.stderr
    assert sorted(os.listdir(into)) == [".skillpack-installed.json", "one", "two"]


# -- killed in the middle ------------------------------------------------------------------------

KILL_AT_FSYNC = textwrap.dedent('''
    import os, signal, sys
    real = os.fsync
    def fsync(fd):  # every byte is written, nothing renamed yet: the worst moment to die
        if sys.argv[1] in os.readlink(f"/proc/self/fd/{fd}"):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(fd)
    os.fsync = fsync
    from skillpack.cli import main
    main(sys.argv[2:])
''')

COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "pack": lambda src, out: ["pack", str(src / "demo"), "-o", str(out)],
    "bundle": lambda src, out: ["bundle", str(src / "demo"), str(src / "helper"), "-o",
                                str(out / "skills.bundle")],
    "lock": lambda src, out: ["lock", str(src / "demo"), "-o", str(out / "skills.lock")],
    "python module": lambda src, out: ["bundle", str(src / "demo"), "-o",
                                       str(src / "skills.bundle"), "--python-module",
                                       str(out / "skills_data.py")],
}


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="finds the file by /proc")
@pytest.mark.parametrize("command", list(COMMANDS))
def test_killed_before_the_rename_leaves_no_final_file_and_the_next_run_cleans_up(
    command: str, src: Path, tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    args = COMMANDS[command](src, out)
    done = subprocess.run([sys.executable, "-c", KILL_AT_FSYNC, str(out) + "/.", *args],
                          capture_output=True, cwd=REPO, timeout=120)
    assert done.returncode == -signal.SIGKILL
    assert finals(out) == [] and len(temps(out)) == 1
    TALLY.add("write", "killed (SIGKILL) after writing, before the rename", f"cli {command}",
              "refused", f"left {temps(out)}")
    result = run_cli(*args)  # the next run
    assert result.exit_code == 0, result.output
    assert temps(out) == [] and len(finals(out)) == 1
    TALLY.handled("write", "a run after a killed one", f"cli {command}",
                  "removed the temp file and wrote the output")


PACK_BIG = textwrap.dedent('''
    import sys
    from skillpack.cli import main
    main(sys.argv[1:])
''')


@pytest.mark.slow
@pytest.mark.parametrize("command", ["pack", "bundle"])
def test_killed_in_the_middle_of_a_1_gib_file(command: str, tmp_path: Path) -> None:
    src = tmp_path / "src"
    demo = demo_skill(src / "demo")
    with (demo / "big.bin").open("wb") as handle:
        handle.truncate(1 << 30)  # sparse: quick to make, read back as zeros
    helper_skill(src / "helper")
    out = tmp_path / "out"
    out.mkdir()
    args = COMMANDS[command](src, out)
    proc = subprocess.Popen([sys.executable, "-c", PACK_BIG, *args], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = 0
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            left = temps(out)
            if left:
                seen = (out / left[0]).stat().st_size
                if seen > 256 << 20:  # a quarter of the way through the big file
                    break
            time.sleep(0.005)
        assert proc.poll() is None, "finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert finals(out) == [] and len(temps(out)) == 1
    TALLY.add("write", "killed (SIGKILL) in the middle of a 1 GiB file", f"cli {command}",
              "refused", f"killed at {seen:,} bytes written")
    try:
        result = run_cli(*args)
        assert result.exit_code == 0, result.output
        assert temps(out) == [] and len(finals(out)) == 1
        final = out / finals(out)[0]
        assert final.stat().st_size > 1 << 30
        with final.open("rb") as handle:  # a whole zip: its end record closes the file
            handle.seek(-22, os.SEEK_END)
            assert handle.read(4) == b"PK\x05\x06"
    finally:  # pytest keeps the last runs' tmp_path: do not leave gigabytes there
        shutil.rmtree(out)
        shutil.rmtree(src)
    TALLY.handled("write", "a run after one killed mid-file", f"cli {command}")
    print(f"\n{command}: killed after {seen / (1 << 20):.0f} MiB; the next run cleaned up")


# -- a link planted where the output goes ----------------------------------------------------

@pytest.mark.parametrize("command", ["pack", "bundle", "lock"])
def test_a_symlink_planted_at_the_output_name_is_replaced_not_followed(
    command: str, src: Path, tmp_path: Path,
) -> None:
    """Someone who can write to the output folder plants a link at the name the output will
    take, pointing at a file of theirs (or of the victim's). The output replaces the link;
    the file it pointed to is neither read as "already current" nor written through."""
    out = tmp_path / "out"
    out.mkdir()
    args = COMMANDS[command](src, out)
    assert run_cli(*args).exit_code == 0  # learn the final name, keep a valid copy aside
    [name] = finals(out)
    target = tmp_path / "elsewhere" / name
    target.parent.mkdir()
    os.replace(out / name, target)
    good = target.read_bytes()
    (out / name).symlink_to(target)
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    assert not (out / name).is_symlink() and (out / name).read_bytes() == good
    assert target.read_bytes() == good  # the link's target was not written through
    TALLY.neutralised("write", "a symlink planted at the output's final name",
                      f"cli {command}", "replaced by a regular file; its target untouched")


# -- writes: the --python-module name is not code ------------------------------------------------

@pytest.mark.parametrize("name", ['x"""\nimport os; os.system("id")\n""".py', "a-b.py",
                                  "class.py", "mod.txt", "1st.py", "x y.py"])
def test_a_python_module_name_that_is_not_an_identifier_is_refused(tmp_path: Path,
                                                                   name: str) -> None:
    skill = demo_skill(tmp_path / "demo")
    out = tmp_path / "out"
    out.mkdir()
    with TALLY.refused("write", f"python module named {name!r}", "write_bundle",
                       SkillpackError, "Python module"):
        no_hang(lambda: write_bundle([skill], out / "skills.bundle", python_module=out / name))
    assert files_under(out) == []
    result = run_cli("bundle", str(skill), "-o", str(out / "b.bundle"), "--python-module",
                     str(out / name))
    ok = result.exit_code == 2 and "Python module" in result.output  # misuse, as any bad value
    TALLY.add("write", f"python module named {name!r}", "cli bundle",
              "refused" if ok else "accepted", result.output[-300:])
    assert ok and files_under(out) == [], result.output


def test_a_python_module_that_is_the_bundle_itself_is_refused(tmp_path: Path) -> None:
    """`-o x.py --python-module x.py`: the bundle was renamed over its own module, and the
    command said it wrote both."""
    skill = demo_skill(tmp_path / "demo")
    out = tmp_path / "out"
    out.mkdir()
    with TALLY.refused("write", "python module that is the bundle", "cli bundle",
                       SkillpackError, "would be one file"):
        write_bundle([skill], out / "same.py", python_module=out / "same.py")
    result = run_cli("bundle", str(skill), "-o", str(out / "same.py"), "--python-module",
                     str(out / "." / "same.py"))
    assert result.exit_code == 1 and "would be one file" in result.output
    assert files_under(out) == []


# -- writes: a planted archive with the right bytes is not "unchanged" -----------------------------

@pytest.mark.parametrize("plant", ["group-writable", "world-writable", "executable", "owner",
                                   "hard link"])
def test_a_planted_archive_with_the_right_bytes_is_replaced(tmp_path: Path, plant: str) -> None:
    skill = demo_skill(tmp_path / "demo")
    out = tmp_path / "out"
    [first] = pack_skills([skill], out)
    assert first.written
    [again] = pack_skills([skill], out)
    assert not again.written  # the very file pack wrote is current
    path = first.path
    if plant == "owner":
        if os.geteuid() != 0:
            pytest.skip("changing a file's owner needs root")
        os.chown(path, 65534, 65534)
    elif plant == "hard link":
        os.link(path, tmp_path / "attacker-keeps-this-name")
    else:
        path.chmod({"group-writable": 0o664, "world-writable": 0o666,
                    "executable": 0o755}[plant])
    [third] = pack_skills([skill], out)
    st = path.stat()
    ok = third.written and st.st_uid == os.geteuid() and (st.st_mode & 0o777) == 0o644 \
        and st.st_nlink == 1
    TALLY.add("write", f"planted archive, right bytes, {plant}", "pack",
              "refused" if ok else "accepted", f"written={third.written} mode={st.st_mode:o}")
    assert ok


# -- writes: a writer in another PID namespace keeps its temp file ---------------------------------

OTHER_NAMESPACE_WRITER = """
import os, sys
os.getpid = lambda: int(sys.argv[2])  # a pid from another namespace: gone, seen from ours
from skillpack._atomic import AtomicBatch
with AtomicBatch(sync_threads=1) as batch:
    with batch.write(sys.argv[1]) as handle:
        handle.write(b"in flight " * 1000)
        handle.flush()
        print("writing", flush=True)
        sys.stdin.readline()  # until the other pack has run its stale-temp cleanup
print("renamed", flush=True)
"""


def test_a_temp_file_of_a_writer_in_another_pid_namespace_is_not_removed(tmp_path: Path
                                                                          ) -> None:
    out = tmp_path / "out"
    out.mkdir()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead_pid = gone.stdout.strip()  # reaped: no process of ours has it now
    writer = subprocess.Popen([sys.executable, "-c", OTHER_NAMESPACE_WRITER,
                               str(out / "theirs.skill"), dead_pid], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd=REPO,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert writer.stdout is not None and writer.stdin is not None
        assert writer.stdout.readline().strip() == "writing"
        [temp] = [p for p in out.iterdir() if ".skillpack-tmp-" + dead_pid in p.name]
        skill = demo_skill(tmp_path / "demo")
        [ours] = no_hang(lambda: pack(skill, out))  # cleans stale temps in `out` first
        kept = temp.exists()
        writer.stdin.write("go\n")
        writer.stdin.flush()
        finished = writer.stdout.readline().strip() == "renamed" and writer.wait(30) == 0
    finally:
        writer.kill()
        writer.wait()
    ok = kept and finished and (out / "theirs.skill").read_bytes() == b"in flight " * 1000
    TALLY.add("write", "temp file of a writer in another PID namespace", "pack",
              "refused" if ok else "accepted", f"kept={kept} finished={finished}")
    assert ok and ours.exists()
    # once that writer is gone, what a killed one leaves is still cleaned up
    stale = out / f".x.skill.skillpack-tmp-{dead_pid}-0badc0de"
    stale.write_bytes(b"left by a killed pack")
    assert clean_stale_temps(out) == [str(stale)]


# -- writes: an export in another PID namespace keeps its temp folder ----------------------------

OTHER_NAMESPACE_EXPORTER = """
import sys
from skillpack._atomic import FolderLease
with FolderLease(sys.argv[1]) as lease:  # what an export in another PID namespace holds
    lease.share()
    print("writing", flush=True)
    sys.stdin.readline()
"""


def test_an_export_in_another_pid_namespace_keeps_its_temp_folder(tmp_path: Path) -> None:
    parent = tmp_path / "site" / ".well-known"
    theirs = parent / ".agent-skills.skillpack-tmp-99999999-00ff"  # a pid we cannot see
    make_tree(theirs, {"index.json": "{}"})
    skill = ExportSkill.from_files("demo", "A demo skill.", {}, [
        ("SKILL.md", DEMO_MD.encode(), False)])
    writer = subprocess.Popen([sys.executable, "-c", OTHER_NAMESPACE_EXPORTER, str(parent)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert writer.stdout is not None and writer.stdin is not None
        assert writer.stdout.readline().strip() == "writing"
        no_hang(lambda: export_well_known([skill], tmp_path / "site"))
        kept = theirs.exists()
        writer.stdin.write("go\n")
        writer.stdin.flush()
        writer.wait(30)
    finally:
        writer.kill()
        writer.wait()
    TALLY.add("write", "temp folder of an export in another PID namespace", "export",
              "refused" if kept else "accepted")
    assert kept and (parent / "agent-skills" / "index.json").exists()
    export_well_known([skill], tmp_path / "site")  # alone now: what is left is cleaned
    assert not theirs.exists()
