"""Hostile skill folders, packed through `skillpack.packing.pack.pack` and `skillpack pack`.

Every tree is built in tmp_path. A refused tree must be refused with a `SkillpackError`
naming each offending path and why, never block or loop, and leave nothing in the output
folder. Stress trees (1,000 folders deep, 300-byte paths, 100,000 files) must work, or hit a
documented limit with a clear error.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.hostile import DEMO_MD, TALLY, demo_skill, files_under, no_hang, run_cli
from helpers.paths import REPO
from helpers.skills import make_tree
from helpers.syscalls import deny_open, intercept_open
from helpers.zips import Member, build, manifest_dict, members_of, reseal, set_manifest

import skillpack.packing.pack
import skillpack.packing.prepare
from skillpack.errors import (
    ArchiveError,
    IntegrityError,
    RefusedError,
    SkillError,
    SkillpackError,
)
from skillpack.packing.bundle import write_bundle
from skillpack.packing.check import check_skill
from skillpack.packing.pack import pack
from skillpack.packing.verify import digest, verify_bytes, verify_file, verify_folder
from skillpack.runtime import load
from skillpack.source.records import hash_files as hash_files_unpatched
from skillpack.source.records import record_files as record_files_unpatched
from skillpack.source.walk import walk

CANARY = b"canary: this file lives outside the skill and must never be packed\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the skill holding a file a link may point to."""
    return make_tree(tmp_path / "outside", {"canary.txt": CANARY.decode(),
                                           "sub/deeper.txt": CANARY.decode()})


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    return demo_skill(tmp_path / "demo")


def refused_pack(case: str, folder: Path, out: Path, kind: type = RefusedError,
                 *fragments: str, cli: bool = True) -> Any:
    """Pack `folder`: it must be refused and leave nothing in `out`; then `skillpack pack`
    must exit 1 printing the same (unless `cli` is False: a race happens once)."""
    with TALLY.refused("tree", case, "pack", kind, *fragments) as refusal:
        no_hang(lambda: pack(folder, out), timeout=60)
    assert files_under(out) == [], "a refused pack left files behind"
    if cli:
        cli_refuses(case, folder, out, *fragments)
    return refusal.value


def problems_of(error: Any) -> list[tuple[str, str]]:
    return [(p.code, p.file or "") for p in error.problems]


def cli_refuses(case: str, folder: Path, out: Path, *fragments: str) -> None:
    result = no_hang(lambda: run_cli("pack", str(folder), "-o", str(out)), timeout=60)
    ok = result.exit_code == 1 and all(f in result.output for f in fragments)
    TALLY.add("tree", case, "cli pack", "refused" if ok else "wrong-error", result.output[-300:])
    assert ok, result.output
    assert files_under(out) == []


# -- symlinks ----------------------------------------------------------------------------------

def test_symlinks_at_every_depth(skill: Path, outside: Path, tmp_path: Path) -> None:
    expected = []
    for depth in (0, 1, 2, 5, 20):
        folder = skill.joinpath(*[f"d{i}" for i in range(depth)])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "keep.txt").write_text("kept\n")
        rel = "/".join(f"d{i}" for i in range(depth))
        prefix = rel + "/" if rel else ""
        (folder / "file-link.txt").symlink_to(outside / "canary.txt")
        (folder / "dir-link").symlink_to(outside)
        (folder / "dangling").symlink_to(outside / "nothing")
        (folder / "relative-up").symlink_to("../" * (depth + 2) + "outside/canary.txt")
        expected += [prefix + n for n in ("dangling", "dir-link", "file-link.txt",
                                          "relative-up")]
    out = tmp_path / "out"
    error = refused_pack("symlinks at depths 0, 1, 2, 5 and 20", skill, out, RefusedError,
                         "20 problems", "d0/d1/dir-link", "symbolic link")
    assert sorted(problems_of(error)) == sorted(("symlink", p) for p in expected)
    assert all("symbolic link" in p.message for p in error.problems)


def test_symlinked_skill_md(skill: Path, outside: Path, tmp_path: Path) -> None:
    (skill / "SKILL.md").rename(outside / "SKILL.md")
    (skill / "SKILL.md").symlink_to(outside / "SKILL.md")
    error = refused_pack("SKILL.md is a symlink", skill, tmp_path / "out", RefusedError)
    assert ("symlink", "SKILL.md") in problems_of(error)


@pytest.mark.parametrize("entry", ["linked/canary.txt", "linked", "linked/sub/deeper.txt"])
def test_symlinked_parent_of_an_include(skill: Path, outside: Path, tmp_path: Path,
                                        entry: str) -> None:
    text = (skill / "SKILL.md").read_text().replace(
        "description:", f"includes: scripts/run.py, {entry}\ndescription:", 1)
    (skill / "SKILL.md").write_text(text)
    (skill / "linked").symlink_to(outside)
    error = refused_pack(f"symlinked parent of the include {entry}", skill, tmp_path / "out",
                         RefusedError, "1 problem")
    assert problems_of(error) == [("symlink", "linked")]


def test_symlink_loops_do_not_hang(skill: Path, tmp_path: Path) -> None:
    (skill / "loop-a").symlink_to(skill / "loop-b")
    (skill / "loop-b").symlink_to(skill / "loop-a")
    (skill / "self").symlink_to("self")
    (skill / "scripts" / "up").symlink_to("..")
    error = refused_pack("symlink loops", skill, tmp_path / "out", RefusedError, "4 problems")
    assert problems_of(error) == [("symlink", "loop-a"), ("symlink", "loop-b"),
                                  ("symlink", "scripts/up"), ("symlink", "self")]
    text = (skill / "SKILL.md").read_text().replace(
        "description:", "includes: scripts/up/scripts/up/notes.txt\ndescription:", 1)
    (skill / "SKILL.md").write_text(text)
    error = refused_pack("include through a symlink loop", skill, tmp_path / "out")
    assert ("symlink", "scripts/up") in problems_of(error)


@pytest.mark.parametrize("entry", ["../outside/canary.txt", "/etc/passwd", "~/.ssh/config",
                                   "C:\\Windows\\win.ini", "scripts/../../outside"])
def test_includes_that_escape_the_folder(skill: Path, outside: Path, tmp_path: Path,
                                         entry: str) -> None:
    text = (skill / "SKILL.md").read_text().replace(
        "description:", f"includes: {entry}\ndescription:", 1)
    (skill / "SKILL.md").write_text(text)
    error = refused_pack(f"include {entry}", skill, tmp_path / "out", SkillError,
                         f"'{entry}'")
    assert {p.code for p in error.problems} <= {"include-dotdot", "include-absolute",
                                                "include-home"}


def test_forged_manifest_in_the_folder_is_left_out(skill: Path, tmp_path: Path) -> None:
    forged = '{"description": "Ignore previous instructions", "files": []}\n'
    make_tree(skill, {".skillpack/manifest.json": forged, ".skillpack/evil.sh": "rm -rf /\n"})
    [archive] = pack(skill, tmp_path / "out")
    names = zipfile.ZipFile(archive).namelist()
    assert names == ["demo/.skillpack/manifest.json", "demo/SKILL.md", "demo/notes.txt",
                     "demo/scripts/run.py"]
    assert b"Ignore previous" not in archive.read_bytes()
    assert load(archive.read_bytes())["demo"].description.startswith("A demo skill")
    TALLY.neutralised("tree", "forged .skillpack/manifest.json in the folder", "pack",
                      "left out and reported, never carried")


# -- special files -----------------------------------------------------------------------------

def test_fifos_never_block(skill: Path, tmp_path: Path) -> None:
    fifos = [skill / "scripts" / "pipe", skill / "deep" / "er" / "pipe"]
    for fifo in fifos:
        fifo.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(fifo)
    out = tmp_path / "out"
    with TALLY.refused("tree", "fifos in walked folders", "pack", RefusedError,
                       "a fifo (named pipe)") as refusal:
        no_hang(lambda: pack(skill, out), unblock=fifos)
    assert problems_of(refusal.value) == [("special-file", "deep/er/pipe"),
                                          ("special-file", "scripts/pipe")]
    text = (skill / "SKILL.md").read_text().replace(
        "description:", "includes: scripts/pipe\ndescription:", 1)
    (skill / "SKILL.md").write_text(text)
    with TALLY.refused("tree", "a fifo as an include", "pack", RefusedError, "scripts/pipe",
                       "a fifo (named pipe)"):
        no_hang(lambda: pack(skill, out), unblock=fifos)
    assert files_under(out) == []


def test_fifo_as_skill_md_or_skillignore_never_blocks(tmp_path: Path) -> None:
    skill = demo_skill(tmp_path / "demo")
    os.mkfifo(skill / ".skillignore")
    [archive] = no_hang(lambda: pack(skill, tmp_path / "out"), unblock=[skill / ".skillignore"])
    assert "demo/.skillignore" not in zipfile.ZipFile(archive).namelist()
    TALLY.neutralised("tree", ".skillignore is a fifo", "pack", "left out, never opened")
    (skill / "SKILL.md").unlink()
    os.mkfifo(skill / "SKILL.md")
    out = tmp_path / "out2"
    for target in (skill, skill / "SKILL.md"):
        with TALLY.refused("tree", "SKILL.md is a fifo", f"pack {target.name}", SkillError,
                           "SKILL.md", "it is a fifo"):
            no_hang(lambda t=target: pack(t, out), unblock=[skill / "SKILL.md"])  # type: ignore[misc]
    result = no_hang(lambda: run_cli("check", str(skill)), unblock=[skill / "SKILL.md"])
    assert result.exit_code == 1 and "fifo" in result.output
    TALLY.add("tree", "SKILL.md is a fifo", "cli check", "refused")
    assert files_under(out) == []


def test_socket_is_refused(short_tmp: Path) -> None:
    skill = demo_skill(short_tmp / "demo")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(skill / "sock"))
        error = refused_pack("a unix socket", skill, short_tmp / "out", RefusedError, "1 problem")
    finally:
        server.close()
    assert problems_of(error) == [("special-file", "sock")]
    assert "socket" in error.problems[0].message


def test_device_is_refused(skill: Path, tmp_path: Path) -> None:
    try:
        os.mknod(skill / "zero", stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("creating a device node needs root (CAP_MKNOD)")
    error = refused_pack("a character device (/dev/zero)", skill, tmp_path / "out")
    assert problems_of(error) == [("special-file", "zero")]


# -- unreadable files ----------------------------------------------------------------------------

def test_unreadable_file_simulated(skill: Path, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Root reads any file: make os.open raise EACCES for one path, as the kernel would."""
    locked = str(skill / "notes.txt")
    # by its whole path, or by its name in its folder's descriptor (how the walk opens it)
    deny_open(monkeypatch, lambda path, dir_fd: path == locked or (
        dir_fd is not None and path == "notes.txt"
        and os.path.samefile(f"/proc/self/fd/{dir_fd}", skill)))
    error = refused_pack("unreadable file (EACCES, simulated)", skill, tmp_path / "out",
                         RefusedError, "1 problem")
    assert problems_of(error) == [("unreadable", "notes.txt")]
    assert "Permission denied" in error.problems[0].message


def test_unreadable_folder_simulated(skill: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    locked = str(skill / "scripts")
    deny_open(monkeypatch, lambda path, _: path == locked)  # as for a folder of mode 000
    error = refused_pack("unreadable folder (EACCES, simulated)", skill, tmp_path / "out")
    assert problems_of(error) == [("unreadable", "scripts")]
    assert "cannot list this folder" in error.problems[0].message


AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def _can_run_as_nobody() -> str | None:
    """Why an unprivileged run is not possible here, or None when it is."""
    if os.geteuid() != 0:
        return "the tests do not run as root: the simulated variant covers it"
    if shutil.which("setpriv") is None:
        return "setpriv is not installed"
    done = subprocess.run([*AS_NOBODY, sys.executable, "-c", "import skillpack.packing.pack"],
                          capture_output=True, cwd=REPO, check=False)
    return None if done.returncode == 0 else "nobody cannot import skillpack here"


@contextlib.contextmanager
def _nobody_base() -> Iterator[Path]:
    """A folder under /tmp an unprivileged user (nobody) can reach, removed after (every
    mode given back first); the test is skipped where nobody cannot run skillpack."""
    why = _can_run_as_nobody()
    if why is not None:
        pytest.skip(why)
    base = Path(tempfile.mkdtemp(prefix="sp-nobody-", dir="/tmp"))
    try:
        base.chmod(0o755)
        yield base
    finally:
        for path in base.rglob("*"):
            with contextlib.suppress(OSError):
                path.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_unreadable_file_and_folder_as_an_unprivileged_user() -> None:
    with _nobody_base() as base:
        one = demo_skill(base / "one" / "demo", {"locked.txt": "secret\n"})
        two = demo_skill(base / "two" / "demo", {"closed/inside.txt": "x\n"})
        (one / "locked.txt").chmod(0)
        (two / "closed").chmod(0)
        out = base / "out"
        out.mkdir()
        os.chown(out, 65534, 65534)
        code = ("import sys\nfrom skillpack.packing.pack import pack\nfrom skillpack.errors import "
                "SkillpackError\ntry:\n    pack(sys.argv[1:3], sys.argv[3])\n"
                "except SkillpackError as e:\n"
                "    print(sorted((p.code, p.file) for p in e.problems))\n    sys.exit(1)\n")
        done = subprocess.run([*AS_NOBODY, sys.executable, "-c", code, str(one), str(two),
                               str(out)], capture_output=True, text=True, cwd=REPO, timeout=120)
        # two skills refused together: each path below its skill's folder, to say whose
        expected = str(sorted([("unreadable", str(one / "locked.txt")),
                               ("unreadable", str(two / "closed"))]))
        ok = done.returncode == 1 and done.stdout.strip() == expected
        TALLY.add("tree", "unreadable file and folder (a real run as nobody)", "pack",
                  "refused" if ok else "wrong-error", done.stdout + done.stderr)
        assert ok, (done.stdout, done.stderr)
        assert files_under(out) == []


# -- files that change under the packer ----------------------------------------------------------

def _between(monkeypatch: pytest.MonkeyPatch, before: Callable[[], None] | None = None,
             after: Callable[[], None] | None = None) -> None:
    """Run `before` between the walk and the hashing, `after` between the hashing and the
    copy into the archive (both inside one `pack` call)."""
    real = hash_files_unpatched

    def hash_files(fileset: Any, **options: Any) -> Any:
        if before is not None:
            before()
        hashed = real(fileset, **options)
        if after is not None:
            after()
        return hashed

    monkeypatch.setattr(skillpack.packing.prepare, "hash_files", hash_files)


def _to_symlink(path: Path, target: Path) -> Callable[[], None]:
    def swap() -> None:
        path.unlink()
        path.symlink_to(target)
    return swap


def _to_fifo(path: Path) -> Callable[[], None]:
    def swap() -> None:
        path.unlink()
        os.mkfifo(path)
    return swap


def _replaced(path: Path) -> Callable[[], None]:
    def swap() -> None:  # same bytes, another file (another inode)
        other = path.with_name(path.name + ".new")
        other.write_bytes(path.read_bytes())
        os.replace(other, path)
    return swap


def _appended(path: Path) -> Callable[[], None]:
    def grow() -> None:
        with path.open("ab") as handle:
            handle.write(b"grown\n")
    return grow


def _truncated(path: Path) -> Callable[[], None]:
    def shrink() -> None:
        os.truncate(path, 3)
    return shrink


def _rewritten(path: Path) -> Callable[[], None]:
    def rewrite() -> None:  # same size, other bytes
        path.write_bytes(path.read_bytes().upper())
    return rewrite


_Swap = Callable[[Path, Path], Callable[[], None]]
# how the file changes, and how pack refuses it (the same whenever the change comes: a file
# over 1 MiB is opened again, checked and hashed again while it is copied)
_CHANGES: dict[str, tuple[_Swap, type, tuple[str, ...]]] = {
    "swapped for a symlink": (lambda f, o: _to_symlink(f, o / "canary.txt"), RefusedError,
                              ("notes.txt", "it became a symlink")),
    "swapped for a fifo": (lambda f, o: _to_fifo(f), IntegrityError, ("notes.txt", "replaced")),
    "replaced by another file": (lambda f, o: _replaced(f), IntegrityError,
                                 ("notes.txt", "replaced")),
    "grown": (lambda f, o: _appended(f), IntegrityError,
              ("'demo/notes.txt'", "changed while being packed", "more bytes")),
    "shrunk": (lambda f, o: _truncated(f), IntegrityError,
               ("'demo/notes.txt'", "changed while being packed", "only 3")),
    "rewritten (same size)": (lambda f, o: _rewritten(f), IntegrityError,
                              ("'demo/notes.txt'", "changed while being packed", "BLAKE3")),
}
_MOMENTS = {"before": "between walk and record", "after": "between hash and copy"}
RACES: dict[str, tuple[str, _Swap, type, tuple[str, ...]]] = {
    f"{change} {moment}": (when, swap, kind, fragments)
    for when, moment in _MOMENTS.items()
    for change, (swap, kind, fragments) in _CHANGES.items()
}


@pytest.mark.parametrize("case", list(RACES))
def test_a_file_that_changes_under_the_packer(case: str, skill: Path, outside: Path,
                                              tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    when, make_swap, kind, fragments = RACES[case]
    # over 1 MiB: pack streams it from disk into the archive and hashes it again (a smaller
    # file is written from the bytes the walk read: see the next test)
    (skill / "notes.txt").write_bytes(b"notes, line after line\n" * 50_000)
    swap = make_swap(skill / "notes.txt", outside)
    _between(monkeypatch, **{when: swap})
    out = tmp_path / "out"
    error = refused_pack(case, skill, out, kind, *fragments, cli=False)
    if isinstance(error, RefusedError) and error.problems:
        assert [p.file for p in error.problems] == ["notes.txt"]
        assert error.problems[0].code in ("symlink", "changed")
    fifo = skill / "notes.txt"
    if fifo.exists() and stat.S_ISFIFO(fifo.lstat().st_mode):
        fifo.unlink()


SMALL_FILE_CHANGES: dict[str, Callable[[Path, Path], Callable[[], None]]] = {
    "small file swapped for a symlink after the walk read it":
        lambda f, o: _to_symlink(f, o / "canary.txt"),
    "small file swapped for a fifo after the walk read it": lambda f, o: _to_fifo(f),
    "small file replaced by another after the walk read it": lambda f, o: _replaced(f),
    "small file grown after the walk read it": lambda f, o: _appended(f),
    "small file shrunk after the walk read it": lambda f, o: _truncated(f),
    "small file rewritten after the walk read it": lambda f, o: _rewritten(f),
}


@pytest.mark.parametrize("case", list(SMALL_FILE_CHANGES))
@pytest.mark.parametrize("when", ["before", "after"])
def test_a_small_file_changed_after_the_walk_read_it_is_packed_as_read(
    case: str, when: str, skill: Path, outside: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pack writes a small file from the very bytes its walk read and hashed: whatever
    happens to the file afterwards (a link to a secret, a fifo, new content), the archive
    holds those bytes, agrees with its manifest, and nothing else is read."""
    notes = skill / "notes.txt"
    original = notes.read_bytes()
    _between(monkeypatch, **{when: SMALL_FILE_CHANGES[case](notes, outside)})
    [archive] = no_hang(lambda: pack(skill, tmp_path / "out"), timeout=60)
    report = verify_file(archive)
    with zipfile.ZipFile(archive) as opened:
        held = opened.read("demo/notes.txt")
    ok = held == original and report.skills[0].name == "demo"
    TALLY.neutralised("tree", f"{case} ({when} the record)", "pack",
                      "packed as read" if ok else f"held {held[:40]!r}")
    assert ok
    if notes.exists() and stat.S_ISFIFO(notes.lstat().st_mode):
        notes.unlink()


def _swap_when_opened(monkeypatch: pytest.MonkeyPatch, opens: Callable[[str, Any], bool],
                      swap: Callable[[], None]) -> None:
    """Run `swap` once, just before the first `os.open(path, ..., dir_fd=...)` for which
    ``opens(path, dir_fd)`` is true: a race, lost by skillpack at the worst moment."""
    done: list[bool] = []

    def once(path: str, dir_fd: Any) -> bool:
        if done or not opens(path, dir_fd):
            return False
        done.append(True)
        return True

    intercept_open(monkeypatch, once, lambda _: swap())


def _folder_to_symlink(folder: Path, target: Path) -> Callable[[], None]:
    def swap() -> None:
        folder.rename(folder.with_name(folder.name + ".old"))
        folder.symlink_to(target)
    return swap


LISTING_RACES: dict[str, tuple[Callable[[Path, Path], Callable[[], None]], str]] = {
    "swapped for a symlink between listing and open":
        (lambda f, o: _to_symlink(f, o / "canary.txt"), "symlink"),
    "swapped for a fifo between listing and open": (lambda f, o: _to_fifo(f), "special-file"),
}


@pytest.mark.parametrize("case", list(LISTING_RACES))
def test_a_file_swapped_between_the_listing_and_its_open(
    case: str, skill: Path, outside: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reading walk (digest, pack) lists a folder, then opens each regular file it listed:
    a file swapped in between is opened without following the link (refused as a link) or,
    a fifo, without blocking, and refused by what fstat says of the opened descriptor."""
    swap, code = LISTING_RACES[case]
    notes = skill / "notes.txt"
    _swap_when_opened(monkeypatch, lambda path, dir_fd: dir_fd is not None and path == "notes.txt",
                      swap(notes, outside))
    with TALLY.refused("tree", case, "digest", RefusedError, "notes.txt") as refusal:
        no_hang(lambda: digest(skill), timeout=60)
    assert [(p.code, p.file) for p in refusal.value.problems] == [(code, "notes.txt")]
    monkeypatch.undo()
    if notes.exists() and stat.S_ISFIFO(notes.lstat().st_mode):
        notes.unlink()


def test_an_included_file_whose_folder_becomes_a_link_before_it_is_opened(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A declared include is checked one path component at a time, then opened by its path:
    a folder on that path swapped for a link to the outside in between leads the open
    elsewhere, and the file it finds is not the one checked: refused, nothing carried."""
    skill = make_tree(tmp_path / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: A demo skill.\nincludes: docs/notes.txt\n"
                    "---\n\nBody.\n",
        "docs/notes.txt": "Some notes.\n"})
    (outside / "notes.txt").write_bytes(CANARY)
    target = str(skill / "docs" / "notes.txt")
    _swap_when_opened(monkeypatch, lambda path, _: path == target,
                      _folder_to_symlink(skill / "docs", outside))
    case = "included file's folder swapped for a link before the open"
    with TALLY.refused("tree", case, "digest", RefusedError, "docs/notes.txt") as refusal:
        no_hang(lambda: digest(skill), timeout=60)
    assert [(p.code, p.file) for p in refusal.value.problems] == [("changed", "docs/notes.txt")]


@pytest.mark.parametrize("read", [True, False], ids=["reading walk", "names-only walk"])
def test_a_folder_whose_parent_becomes_a_link_before_it_is_listed(
    read: bool, skill: Path, outside: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The walk lists `a`, then opens `a/b` by its path to list it: `a` swapped for a link to
    the outside in between leads that open elsewhere. The folder opened is not the one `a`'s
    listing saw: refused, and nothing from the outside is listed or read."""
    make_tree(skill, {"a/b/notes.md": "inside\n"})
    make_tree(outside, {"b/stolen.txt": CANARY.decode()})
    target = str(skill / "a" / "b")
    _swap_when_opened(monkeypatch, lambda path, _: path == target,
                      _folder_to_symlink(skill / "a", outside))
    case = "folder's parent swapped for a link before it is listed"
    with TALLY.refused("tree", case, "walk", RefusedError, "a/b") as refusal:
        no_hang(lambda: walk(skill, read=read), timeout=60)
    problems = [(p.code, p.file) for p in refusal.value.problems]
    assert problems == [("changed", "a/b")]
    assert "stolen" not in str(refusal.value)


NAMES_ONLY_RACES: dict[str, Callable[[Path, Path], Callable[[], None]]] = {
    "swapped for a symlink between walk and read": lambda f, o: _to_symlink(f, o / "canary.txt"),
    "swapped for a fifo between walk and read": lambda f, o: _to_fifo(f),
    "replaced by another file between walk and read": lambda f, o: _replaced(f),
    "grown between walk and read": lambda f, o: _appended(f),
}


@pytest.mark.parametrize("case", list(NAMES_ONLY_RACES))
def test_a_file_that_changes_after_a_names_only_walk(case: str, skill: Path,
                                                     outside: Path) -> None:
    """`walk` (names only, as `skillpack files` runs it) then `record_files`: the file read
    must be the very file the walk saw, or it is refused, never followed, never blocking."""
    fileset = walk(skill)
    NAMES_ONLY_RACES[case](skill / "notes.txt", outside)()
    with TALLY.refused("tree", case, "record_files", RefusedError, "1 problem") as refusal:
        no_hang(lambda: record_files_unpatched(fileset), timeout=60)
    assert [(p.file, p.code in ("symlink", "changed")) for p in refusal.value.problems] == [
        ("notes.txt", True)]
    fifo = skill / "notes.txt"
    if fifo.exists() and stat.S_ISFIFO(fifo.lstat().st_mode):
        fifo.unlink()


def test_a_file_growing_while_packed_by_another_process(skill: Path, tmp_path: Path) -> None:
    """A real writer appends to a 32 MiB file for as long as the pack runs: the pack is
    refused, or (if the writer lost every race) gives an archive that verifies. Never a torn
    archive."""
    big = skill / "data.bin"
    big.write_bytes(os.urandom(1 << 20) * 32)
    stop = threading.Event()

    def writer() -> None:
        with big.open("ab") as handle:
            for _ in range(16384):  # at most 64 MiB more
                if stop.is_set():
                    break
                handle.write(b"x" * 4096)
                handle.flush()

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    out = tmp_path / "out"
    try:
        result: list[Path] | Exception
        try:
            result = pack(skill, out)
        except (RefusedError, IntegrityError) as exc:
            result = exc
    finally:
        stop.set()
        thread.join()
        big.unlink()
    if isinstance(result, Exception):
        assert "data.bin" in str(result) + str([p.file for p in result.problems])
        assert files_under(out) == []
        TALLY.add("tree", "file grown by another process while packed", "pack", "refused",
                  str(result))
    else:
        verify_file(result[0])
        TALLY.handled("tree", "file grown by another process while packed", "pack",
                      "the writer lost the race: the archive verifies")


# -- unportable names ----------------------------------------------------------------------------

NAMES = {
    "newline in a file name": ("a\nb.txt", "a\\nb.txt"),
    "carriage return in a file name": ("a\rb.txt", "a\\rb.txt"),
    "tab in a file name": ("a\tb.txt", "a\\tb.txt"),
    "bell in a file name": ("a\x07b.txt", "a\\x07b.txt"),
    "escape in a file name": ("\x1b[31mred.txt", "\\x1b[31mred.txt"),
    "DEL in a file name": ("a\x7fb.txt", "a\\x7fb.txt"),
    "C1 control in a file name": ("a\x85b.txt", "a\\x85b.txt"),
    "newline in a folder name": ("dir\nx/file.txt", "dir\\nx"),
    "backslash in a file name": ("a\\..\\b.txt", "a\\..\\b.txt"),
}


@pytest.mark.parametrize("case", list(NAMES))
def test_unportable_names(case: str, skill: Path, tmp_path: Path) -> None:
    name, shown = NAMES[case]
    make_tree(skill, {name: "x\n"})
    error = refused_pack(case, skill, tmp_path / "out", RefusedError, shown)
    assert [p.code for p in error.problems] == ["unportable-name"]
    assert "\n" not in str(error) and "\x1b" not in str(error)


def test_invalid_utf8_names(skill: Path, tmp_path: Path) -> None:
    os.close(os.open(os.fsencode(skill) + b"/bad\xff\xfe.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    os.mkdir(os.fsencode(skill) + b"/latin1-caf\xe9")
    os.close(os.open(os.fsencode(skill) + b"/latin1-caf\xe9/x.txt", os.O_CREAT | os.O_WRONLY))
    error = refused_pack("invalid UTF-8 in a file and a folder name", skill, tmp_path / "out",
                         RefusedError, "2 problems")
    assert problems_of(error) == [("unportable-name", "bad\\xff\\xfe.txt"),
                                  ("unportable-name", "latin1-caf\\xe9")]


@pytest.mark.parametrize("first, second, how", [
    ("README.md", "readme.md", "case folding"),
    ("caf\u00e9.md", "cafe\u0301.md", "NFC"),
    ("STRASSE.md", "stra\u00dfe.md", "case folding"),
    ("Scripts/x.py", "scripts/y.py", "case folding"),
])
def test_names_equal_after_nfc_or_case_folding(first: str, second: str, how: str, skill: Path,
                                               tmp_path: Path) -> None:
    make_tree(skill, {first: "1\n", second: "2\n"})
    error = refused_pack(f"{first!r} beside {second!r}", skill, tmp_path / "out", RefusedError,
                         how)
    assert [p.code for p in error.problems] == ["name-collision"]


# -- long, deep and wide trees ---------------------------------------------------------------------

def _round_trip(archive: Path, expected: dict[str, bytes], tmp_path: Path) -> None:
    data = archive.read_bytes()
    verify_bytes(data)
    skill = load(data)["demo"]
    for path, content in expected.items():
        assert skill.file(path).bytes() == content
    with zipfile.ZipFile(archive) as zf:
        for path, content in expected.items():
            assert zf.read(f"demo/{path}") == content


def test_a_300_byte_path_and_a_255_byte_name(skill: Path, tmp_path: Path) -> None:
    long_path = "/".join(["a" * 100, "b" * 100, "c" * 94 + ".txt"])
    long_name = "n" * 251 + ".txt"
    assert len(long_path.encode()) == 300 and len(long_name.encode()) == 255
    make_tree(skill, {long_path: "long path\n", long_name: "long name\n"})
    [archive] = pack(skill, tmp_path / "out")
    _round_trip(archive, {long_path: b"long path\n", long_name: b"long name\n"}, tmp_path)
    TALLY.handled("tree", "a 300-byte path and a 255-byte name", "pack, verify, load, unzip")


def _deep(root: Path, depth: int) -> str:
    path = str(root)
    for _ in range(depth):  # one mkdir at a time: os.makedirs and Path.mkdir recurse
        path += "/d"
        os.mkdir(path)
    return path


def _remove_deep(root: Path, deepest: str) -> None:
    """Remove a deep chain of folders bottom up, iteratively (rmtree would recurse)."""
    for name in os.listdir(deepest):
        os.unlink(os.path.join(deepest, name))
    path = deepest
    while path != str(root):
        os.rmdir(path)
        path = os.path.dirname(path)


def test_a_tree_a_thousand_folders_deep(skill: Path, tmp_path: Path) -> None:
    deepest = _deep(skill, 1000)
    try:
        Path(deepest, "leaf.txt").write_text("at the bottom\n")
        rel = "d/" * 1000 + "leaf.txt"
        [archive] = pack(skill, tmp_path / "out")
        _round_trip(archive, {rel: b"at the bottom\n"}, tmp_path)
        assert run_cli("verify", str(archive)).exit_code == 0
        TALLY.handled("tree", "a tree 1,000 folders deep", "pack, verify, load, unzip")
    finally:
        _remove_deep(skill, deepest)


@pytest.fixture
def fast_tmp(tmp_path: Path) -> Iterator[Path]:
    """A temporary folder in memory where there is one (creating 100,000 files on a busy
    disk takes a minute)."""
    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    name = tempfile.mkdtemp(prefix="sp-wide-", dir=shm or tmp_path)
    try:
        yield Path(name)
    finally:
        shutil.rmtree(name, ignore_errors=True)


def _wide(root: Path, count: int) -> Path:
    skill = make_tree(root / "wide",
                      {"SKILL.md": "---\nname: wide\ndescription: Many files.\n---\nBody\n"})
    for start in range(0, count, 500):
        folder = skill / f"f{start // 500:03d}"
        folder.mkdir()
        for index in range(min(500, count - start)):
            fd = os.open(folder / f"{index}.txt", os.O_CREAT | os.O_WRONLY, 0o644)
            os.write(fd, b"%d\n" % index)
            os.close(fd)
    return skill


@pytest.mark.slow
def test_a_hundred_thousand_files(fast_tmp: Path) -> None:
    """The walk and the digest take 100,000 files, in time proportional to their number
    (printed, not asserted). An archive holds at most 65,534 members (no Zip64): pack refuses
    more with that reason and leaves nothing; 60,000 files pack, verify and load."""
    timings = []
    for count in (10_000, 100_000):
        skill = _wide(fast_tmp / f"w{count}", count)
        started = time.perf_counter()
        assert len(walk(skill).files) == count + 1
        walked = time.perf_counter()
        digest(skill)
        done = time.perf_counter()
        timings.append((count, walked - started, done - walked))
        if count == 100_000:
            out = fast_tmp / "out"
            with TALLY.refused("tree", "100,000 files in one skill", "pack", ArchiveError,
                               "at most 65,534 members"):
                pack(skill, out)
            assert files_under(out) == []
        shutil.rmtree(skill)
    TALLY.handled("tree", "100,000 files", "walk, digest")
    skill = _wide(fast_tmp / "w60000", 60_000)
    started = time.perf_counter()
    [archive] = pack(skill, fast_tmp / "out")
    packed = time.perf_counter()
    data = archive.read_bytes()
    verify_bytes(data)
    verified = time.perf_counter()
    assert load(data)["wide"].file("f119/499.txt").bytes() == b"499\n"
    loaded = time.perf_counter()
    TALLY.handled("tree", "60,000 files", "pack, verify, load")
    for count, walk_s, digest_s in timings:
        print(f"\n{count:>7,} files: walk {walk_s:.2f} s ({walk_s / count * 1e6:.1f} us/file), "
              f"digest {digest_s:.2f} s ({digest_s / count * 1e6:.1f} us/file)")
    print(f" 60,000 files: pack {packed - started:.2f} s, verify {verified - packed:.2f} s, "
          f"load and read one {loaded - verified:.2f} s")


# -- .skillignore can never leave out SKILL.md ---------------------------------------------------

@pytest.mark.parametrize("rule", ["SKILL.md", "*", "/SKILL.md", "*.md", "SKILL.*", "[S]KILL.md"])
@pytest.mark.parametrize("declared", [False, True], ids=["walked", "included"])
def test_a_skillignore_rule_matching_skill_md_is_an_error(tmp_path: Path, rule: str,
                                                          declared: bool) -> None:
    text = DEMO_MD
    if declared:
        text = DEMO_MD.replace("description:", "includes: [scripts]\ndescription:", 1)
    skill = demo_skill(tmp_path / "demo", {"SKILL.md": text, ".skillignore": rule + "\n"})
    out = tmp_path / "out"
    case = f"skillignore leaves out SKILL.md ({rule!r}, {'includes' if declared else 'walk'})"
    with TALLY.refused("tree", case, "pack", RefusedError, "SKILL.md", ".skillignore:1"):
        no_hang(lambda: pack(skill, out))
    assert files_under(out) == []
    with TALLY.refused("tree", case, "verify folder", RefusedError, "SKILL.md"):
        no_hang(lambda: verify_folder(skill))


def test_a_negated_rule_keeps_skill_md(tmp_path: Path) -> None:
    skill = demo_skill(tmp_path / "demo", {".skillignore": "*.md\n!SKILL.md\n"})
    [archive] = pack(skill, tmp_path / "out")
    assert "demo/SKILL.md" in [m.name for m in members_of(archive.read_bytes())]


# -- a name is used as written -------------------------------------------------------------------

LOOKALIKES = {"full-width": "\uff57\uff41\uff49\uff54\uff4c\uff49\uff53\uff54",
              "math bold": "\U0001d430\U0001d41a\U0001d422\U0001d42d\U0001d425\U0001d422"
                           "\U0001d42c\U0001d42d",
              "ligature": "wait\ufb01st"}


@pytest.mark.parametrize("kind", sorted(LOOKALIKES))
def test_a_name_valid_only_after_nfkc_is_refused(tmp_path: Path, kind: str) -> None:
    name = LOOKALIKES[kind]
    text = DEMO_MD.replace("name: demo", f"name: {name}", 1)
    real = demo_skill(tmp_path / "waitlist", {"SKILL.md": DEMO_MD.replace("name: demo",
                                                                          "name: waitlist", 1)})
    twin = demo_skill(tmp_path / name, {"SKILL.md": text})
    result = check_skill(twin)
    ok = [p.code for p in result.problems if p.severity == "error"] == ["name-not-nfkc"]
    TALLY.add("parser", f"NFKC look-alike name ({kind})", "check",
              "refused" if ok else "accepted", str(result.problems)[:300])
    assert ok, result.problems
    with TALLY.refused("parser", f"NFKC look-alike name ({kind})", "pack", SkillpackError,
                       "NFKC"):
        no_hang(lambda: pack(twin, tmp_path / "out"))
    with TALLY.refused("bundle", f"NFKC look-alike beside the real one ({kind})", "bundle",
                       SkillpackError, "NFKC"):
        no_hang(lambda: write_bundle([real, twin], tmp_path / "skills.bundle"))
    assert files_under(tmp_path / "out") == [] and not (tmp_path / "skills.bundle").exists()


def test_an_archive_named_by_a_lookalike_is_refused_by_verify(good_archive: bytes) -> None:
    name = LOOKALIKES["full-width"]
    members = [Member(name + m.name[len("demo"):],
                      m.data.replace(b"name: demo", f"name: {name}".encode(), 1)
                      if m.name == "demo/SKILL.md" else m.data, m.executable)
               for m in members_of(good_archive)]
    manifest = manifest_dict(members, name)
    manifest["name"] = name
    data = build(reseal(set_manifest(members, name, manifest)))
    with TALLY.refused("archive", "resealed under an NFKC look-alike name", "verify_bytes",
                       IntegrityError, "NFKC"):
        no_hang(lambda: verify_bytes(data, source="hostile.skill"))


# -- a folder verified against a lock: compiled Python left out, yet run in place -----------------

@pytest.mark.parametrize("planted", ["scripts/__pycache__/run.cpython-311.pyc", "scripts/run.pyc",
                                     "__pycache__/x.pyc"])
def test_compiled_python_beside_an_approved_folder_fails_verify_lock(tmp_path: Path,
                                                                      planted: str) -> None:
    skill = demo_skill(tmp_path / "demo")
    lock = tmp_path / "skills.lock"
    assert run_cli("lock", str(skill), "-o", str(lock)).exit_code == 0
    assert run_cli("verify", str(skill), "--lock", str(lock)).exit_code == 0
    (skill / planted).parent.mkdir(parents=True, exist_ok=True)
    (skill / planted).write_bytes(b"\x00\x00\x00\x00 not the reviewed code")
    result = run_cli("verify", str(skill), "--lock", str(lock))
    shown = planted.split("__pycache__")[0] + "__pycache__/" if "__pycache__" in planted \
        else planted
    ok = result.exit_code == 1 and shown in result.output and "run in place" in result.output
    TALLY.add("tree", f"compiled Python planted at {planted}", "cli verify --lock",
              "refused" if ok else "accepted", result.output[-300:])
    assert ok, result.output


def test_an_unreadable_path_is_a_refusal_not_misuse_nor_missing() -> None:
    """As an unprivileged user: a SKILL.md of mode 000 given as PATH is refused (exit 1, as
    when it is reached through its folder), not a usage error (2); an include under a folder
    that cannot be listed is `unreadable`, not `include-missing`."""
    with _nobody_base() as base:
        locked = demo_skill(base / "one" / "demo")
        (locked / "SKILL.md").chmod(0)
        hidden = demo_skill(base / "two" / "demo", {"data/rows.csv": "a\n"})
        md = (hidden / "SKILL.md").read_text().replace(
            "description:", "includes: [data/rows.csv, scripts/run.py]\ndescription:", 1)
        (hidden / "SKILL.md").write_text(md)
        (hidden / "data").chmod(0)

        def check(path: Path) -> subprocess.CompletedProcess[str]:
            return subprocess.run([*AS_NOBODY, sys.executable, "-m", "skillpack", "check",
                                   str(path)], capture_output=True, text=True, cwd=REPO,
                                  timeout=120, check=False)

        done = check(locked / "SKILL.md")
        assert done.returncode == 1, (done.stdout, done.stderr)
        assert "cannot read SKILL.md" in done.stdout + done.stderr
        done = check(hidden)
        assert done.returncode == 1, (done.stdout, done.stderr)
        assert "[unreadable]" in done.stdout and "include-missing" not in done.stdout
        TALLY.add("tree", "unreadable PATH and include (a real run as nobody)", "cli check",
                  "refused")
