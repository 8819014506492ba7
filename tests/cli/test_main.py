"""`python -m skillpack`, and the pre-commit hook's entry (`skillpack.__main__`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import REPO, TOO_LONG
from helpers.skills import rich_skill

from skillpack.__main__ import precommit_check
from skillpack.cli.app import hook_arguments, skill_folders


def test_python_dash_m_skillpack_runs_the_command_line() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "skillpack", "--version"], capture_output=True,
                          text=True, env=env, cwd=REPO)
    assert (done.returncode, done.stdout) == (0, "skillpack, version 0.1.0\n")
    done = subprocess.run([sys.executable, "-m", "skillpack", "check", "fixtures/waitlist"],
                          capture_output=True, text=True, env=env, cwd=REPO)
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1] == (
        "checked 1 skill: 1 valid, 0 invalid (0 errors, 0 warnings)")


def test_files_map_to_the_skill_folders_holding_them(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    rich_skill(tmp_path / "skills" / "one")
    rich_skill(tmp_path / "skills" / "one" / "assets" / "inner")  # a skill inside a skill
    rich_skill(tmp_path / "two")
    (tmp_path / "README.md").write_text("not in a skill\n")
    files = ["skills/one/scripts/tools/deep/fix.sh", "skills/one/SKILL.md", "README.md",
             "skills/one/assets/inner/references/guide.md", "two/assets/logo.bin",
             "skills/one/references/guide.md"]
    # the outermost skill, as `check .` finds it: the inner one is part of skills/one
    assert skill_folders(files) == ["skills/one", "two"]
    assert skill_folders(["README.md"]) == [] == skill_folders([])
    # never below a folder the search does not enter: a vendored package's skill is not ours
    rich_skill(tmp_path / "node_modules" / "pkg" / "skills" / "vendored")
    rich_skill(tmp_path / ".venv" / "lib" / "skill")
    assert skill_folders(["node_modules/pkg/skills/vendored/SKILL.md",
                          ".venv/lib/skill/SKILL.md"]) == []


def test_the_hook_entry_checks_whole_skills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    good = rich_skill(tmp_path / "good")
    bad = tmp_path / TOO_LONG.name
    (bad / "notes").mkdir(parents=True)
    (bad / "SKILL.md").write_bytes((TOO_LONG / "SKILL.md").read_bytes())
    (bad / "notes" / "x.md").write_text("x\n")
    assert precommit_check(["good/scripts/run.py", "good/assets/logo.bin"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "checked 1 skill: 1 valid, 0 invalid (0 errors, 0 warnings)")
    # only a note changed, but the skill holding it is checked: its SKILL.md is invalid
    assert precommit_check([f"{bad.name}/notes/x.md", f"{good.name}/SKILL.md"]) == 1
    out = capsys.readouterr().out
    assert f"{bad.name}/SKILL.md:3: error: [description-too-long]" in out
    assert out.endswith("checked 2 skills: 1 valid, 1 invalid (1 error, 0 warnings)\n")
    assert precommit_check(["README.md"]) == 0 and capsys.readouterr().out == ""
    assert precommit_check(["--json", "good/SKILL.md"]) == 0
    assert '"valid": true' in capsys.readouterr().out


def test_the_hook_takes_an_option_with_its_value(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``args: [--exclude, template/]`` took ``template/`` for a file and the first changed
    skill for the pattern: that skill was left out, and a broken skill passed the hook."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "skills" / "alpha").mkdir(parents=True)
    (tmp_path / "skills" / "alpha" / "SKILL.md").write_text("---\nname: alpha\n---\nbody\n")
    rich_skill(tmp_path / "skills" / "beta")
    changed = ["skills/alpha/SKILL.md", "skills/beta/SKILL.md"]
    assert hook_arguments(["--exclude", "template/", "--target", "claude-code", "-q", *changed]
                          ) == (["--exclude", "template/", "--target", "claude-code", "-q"],
                                changed)
    assert precommit_check(["--exclude", "template/", *changed]) == 1
    out = capsys.readouterr().out
    assert "skills/alpha/SKILL.md:1: error: [description-missing]" in out
    assert "checked 2 skills: 1 valid, 1 invalid" in out
    assert precommit_check(["--target", "claude-code", *changed]) == 1  # not a usage error
    assert "checked 2 skills" in capsys.readouterr().out


# -- the end of the process ------------------------------------------------------------------

_ENDS = '''
import atexit, sys, threading, time
from skillpack._launch import end_process
atexit.register(lambda: sys.stdout.write("atexit ran\\n"))
sys.stdout.write("said, still buffered")  # a pipe: block-buffered, not yet written
if sys.argv[1] == "thread":
    def late() -> None:
        time.sleep(0.3)
        sys.stdout.write(" and the thread's last word")
    threading.Thread(target=late).start()
end_process(3)
sys.stdout.write("never reached")
'''


@pytest.mark.parametrize(("how", "said"), [
    ("alone", "said, still buffered"),
    ("thread", "said, still buffered and the thread's last word"),  # waited for
])
def test_the_process_ends_with_its_output_and_atexit_but_no_teardown(how: str,
                                                                    said: str) -> None:
    """`end_process` skips the interpreter's teardown (about 13 ms after a command), not what
    a user sees: the exit code, everything written to stdout, the ``atexit`` functions; a
    thread still running (not a daemon) is waited for, as Python's own exit does."""
    done = subprocess.run([sys.executable, "-c", _ENDS, how], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (3, said + "atexit ran\n", "")


def test_a_command_ends_through_end_process(tmp_path: Path) -> None:
    """The console script's command ends by `end_process` (its ``atexit`` functions run, the
    teardown does not): a module finalizer that teardown would call never runs."""
    script = ("import sys, atexit\n"
              "class Witness:\n"
              "    def __del__(self):\n"
              "        sys.__stderr__.write('torn down\\n')\n"
              "sys.modules['skillpack'].witness = Witness()\n"
              "atexit.register(lambda: sys.__stderr__.write('atexit ran\\n'))\n"
              "sys.argv = ['skillpack', 'digest', sys.argv[1]]\n"
              "from skillpack._launch import run\n"
              "run()\n")
    done = subprocess.run([sys.executable, "-c", f"import skillpack\n{script}",
                           str(REPO / "fixtures" / "waitlist")], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.endswith("  waitlist\n"), done
    assert done.stderr == "atexit ran\n"


def test_a_committed_file_named_like_an_option_is_a_file(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    """pre-commit appends the files after the hook's args, with no `--`: a committed file
    named `--exclude` took the next changed file as its value, one named `-h` made check
    print its help, and the hook passed a broken skill."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "skills" / "alpha").mkdir(parents=True)
    (tmp_path / "skills" / "alpha" / "SKILL.md").write_text("---\nname: alpha\n---\nbody\n")
    for name in ("--exclude", "-h", "--help"):
        (tmp_path / name).write_text("x\n")
        assert hook_arguments([name, "skills/alpha/SKILL.md"]) == (
            [], [name, "skills/alpha/SKILL.md"])
        assert precommit_check(["--strict", name, "skills/alpha/SKILL.md"]) == 1
        assert "[description-missing]" in capsys.readouterr().out
    # the files begin at the first one: an option-like argument after it is a file too
    assert hook_arguments(["--target", "codex", "skills/alpha/SKILL.md", "--json"]) == (
        ["--target", "codex"], ["skills/alpha/SKILL.md", "--json"])
