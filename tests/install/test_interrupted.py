"""An install stopped by Ctrl-C or SIGTERM says what it did before the signal: the skills it
placed (in place and recorded) and the folders it never reached, in text and as the one JSON
document of ``--json``.

Every test runs a real interpreter and sends it a real signal. To stop it between two
folders without guessing at timings, the test holds the second folder's lock (the `flock`
every install takes before it writes into a folder): the install places its skills in the
first folder, then waits on that lock; the signal is sent once the first folder holds every
skill, and whether it lands before or during that wait, the second folder is untouched.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers.install import cli, make_skill
from helpers.signals import stopped

import skillpack
from skillpack.install.place import held_signals
from skillpack.install.state import read_state

#: The child runs the skillpack this test imports.
_ENV = {**os.environ, "PYTHONPATH": str(Path(skillpack.__file__).resolve().parents[1])}


@contextmanager
def _held(folder: Path) -> Iterator[None]:
    """`folder`'s install lock, held by this process for the block."""
    folder.mkdir(parents=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _stop_between_folders(proj: Path, signum: int, *args: str
                          ) -> subprocess.CompletedProcess[str]:
    """``skillpack install`` of alpha and beta for claude-code and codex, stopped by `signum`
    once .claude/skills holds both, while .agents/skills is locked by this process."""
    first = proj / ".claude" / "skills"
    with _held(proj / ".agents" / "skills"):
        child = subprocess.Popen(
            [sys.executable, "-m", "skillpack", "install", "skills", "--agent", "claude-code",
             "--agent", "codex", "--lock", "skills.lock", *args], cwd=proj,
            env=_ENV, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)

        def both_placed() -> None:  # the first folder's skills there; each recorded first
            while not ((first / "alpha").is_dir() and (first / "beta").is_dir()):
                assert child.poll() is None, child.communicate()
                time.sleep(0.01)

        return stopped(child, signum, both_placed)


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    """A project with two skills and their lock; nothing installed."""
    proj = tmp_path / "proj"
    make_skill(proj / "skills", "alpha", scripts={"scripts/run.sh": "#!/bin/sh\necho\n"})
    make_skill(proj / "skills", "beta", files={"notes.md": "notes\n"})
    done = subprocess.run([sys.executable, "-m", "skillpack", "lock", "skills", "-o",
                           "skills.lock"], cwd=proj, env=_ENV,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return proj


@pytest.mark.parametrize(("signum", "code", "how"), [
    (signal.SIGTERM, 143, "terminated"),
    (signal.SIGINT, 130, "interrupted"),
])
def test_a_stopped_install_prints_one_json_document_of_what_it_did(
        proj: Path, signum: int, code: int, how: str) -> None:
    done = _stop_between_folders(proj, signum, "--json")
    assert done.returncode == code, done.stderr
    assert done.stderr.strip() == f"skillpack: {how}"  # (click says Ctrl-C with a newline)
    document = json.loads(done.stdout)  # one JSON document, nothing else
    assert (document["ok"], document["interrupted"]) == (False, True)
    assert document["problems"][0]["code"] == how
    assert [(s["folder"], s["name"], s["action"]) for s in document["skills"]] == [
        (".claude/skills", "alpha", "installed"), (".claude/skills", "beta", "installed")]
    assert document["written"] == 2
    assert "nothing was written in .agents/skills" in document["error"]
    # what it says is what is on disk
    assert sorted(read_state(str(proj / ".claude" / "skills"))) == ["alpha", "beta"]
    assert os.listdir(proj / ".agents" / "skills") == []


def test_a_stopped_install_lists_in_text_what_it_placed_and_where_it_wrote_nothing(
        proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    done = _stop_between_folders(proj, signal.SIGTERM)
    assert done.returncode == 143, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] + " " + line.split()[2] for line in lines[:2]] == [
        "installed alpha", "installed beta"]
    assert lines[2].startswith("terminated after 2 skill(s) written and 0 unchanged, in 1 of "
                               "2 folder(s)")
    assert "nothing was written in .agents/skills" in lines[2]
    assert "run the same install again" in lines[2]
    # and so it does: the second run finishes the job
    monkeypatch.chdir(proj)
    again = cli("install", "skills", "--agent", "claude-code", "--agent", "codex", "--lock",
                "skills.lock")
    assert again.exit_code == 0, again.output
    assert "2 written, 2 unchanged, in 2 folder(s)" in again.output


def test_a_signal_during_a_step_that_cannot_be_cut_is_let_through_after_it() -> None:
    """`held_signals` (the rename into place and the record of a skill): Ctrl-C raised
    inside waits for the end of the block, and is then raised as before."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
    reached = []
    try:
        with pytest.raises(KeyboardInterrupt), held_signals():
            signal.raise_signal(signal.SIGINT)
            reached.append("the end of the block")
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)
    assert reached == ["the end of the block"]
