"""Install's state file (``.skillpack-installed.json``) as the hostile input a cloned
repository can make it (nested deeply, a fifo, a link), and two installs writing it at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers.hostile import no_hang
from helpers.install import cli


def install(*args: object) -> Any:
    return cli("install", "skills", "--lock", "skills.lock", *args)


def _state(project: Path) -> Path:
    (project / ".claude" / "skills").mkdir(parents=True, exist_ok=True)
    return project / ".claude" / "skills" / ".skillpack-installed.json"


def test_a_state_file_nested_deeply_is_an_error_naming_it(project: Path) -> None:
    _state(project).write_text('{"format": "1", "skills": ' + "[" * 100_000 + "]" * 100_000
                               + "}")
    result = install("--agent", "claude-code")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert ".skillpack-installed.json: not valid JSON: it is nested too deeply" in result.stderr
    assert sorted(os.listdir(project / ".claude" / "skills")) == [".skillpack-installed.json"]


@pytest.mark.parametrize("kind", ["fifo", "link to a fifo", "link to a file"])
def test_a_state_file_that_is_no_regular_file_is_refused_at_once(project: Path,
                                                                 kind: str) -> None:
    state = _state(project)
    fifo = project / "elsewhere.fifo"
    os.mkfifo(fifo)
    if kind == "fifo":
        os.unlink(fifo)
        os.mkfifo(state)
        fifo = state
    elif kind == "link to a fifo":
        os.symlink(fifo, state)
    else:
        (project / "real.json").write_text('{"format": "1", "skills": {}}\n')
        os.symlink(project / "real.json", state)
    result = no_hang(lambda: install("--agent", "claude-code"), timeout=20, unblock=[fifo])
    assert result.exit_code == 1 and "Traceback" not in result.output
    said = "a fifo" if kind == "fifo" else "a symbolic link"
    assert f".skillpack-installed.json: cannot read what was installed here: it is {said}, " \
           "not a regular file" in result.stderr
    assert sorted(os.listdir(project / ".claude" / "skills")) == [".skillpack-installed.json"]


_RACER = textwrap.dedent("""\
    import os, sys, time
    import skillpack.install.pipeline as pipeline
    mine, theirs = sys.argv[1], sys.argv[2]
    real, calls = pipeline.read_state, []
    def read_state(folder):
        got = real(folder)
        if not calls:  # planned: wait until the other install has planned too
            calls.append(folder)
            open(mine, "w").close()
            for _ in range(2000):  # at most 20 s: never a hang, whatever goes wrong
                if os.path.exists(theirs):
                    break
                time.sleep(0.01)
        return got
    pipeline.read_state = read_state
    from skillpack._launch import run
    sys.argv = ["skillpack", *sys.argv[3:]]
    run()
    """)


def test_two_installs_into_one_folder_at_once_both_stay_recorded(project: Path) -> None:
    """Both processes read the state file before either writes (each waits for the other
    to have planned): each must still find the other's skill recorded afterwards."""
    (project / ".claude" / "skills").mkdir(parents=True)
    racer = project / "racer.py"
    racer.write_text(_RACER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    runs = [subprocess.Popen([sys.executable, str(racer), f"planned-{me}",
                              f"planned-{other}", "install", f"skills/{me}", "--agent",
                              "claude-code", "--lock", "skills.lock"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for me, other in (("alpha", "beta"), ("beta", "alpha"))]
    for run in runs:
        _, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
    state = json.loads(_state(project).read_text())
    assert sorted(state["skills"]) == ["alpha", "beta"]
    assert cli("verify", "--lock", "skills.lock", "--agent", "claude-code").exit_code == 0
