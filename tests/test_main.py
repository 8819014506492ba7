"""`python -m skillpack`, and the pre-commit hook's entry (`skillpack.__main__`)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, TOO_LONG, rich_skill

from skillpack.__main__ import precommit_check, skill_folders


def test_python_dash_m_skillpack_runs_the_command_line() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "skillpack", "--version"], capture_output=True,
                          text=True, env=env, cwd=REPO)
    assert (done.returncode, done.stdout) == (0, "skillpack, version 0.1.0\n")
    done = subprocess.run([sys.executable, "-m", "skillpack", "check", "fixtures/waitlist"],
                          capture_output=True, text=True, env=env, cwd=REPO)
    assert done.returncode == 0
    assert done.stdout == "checked 1 skill: 1 valid, 0 invalid (0 errors, 0 warnings)\n"


def test_python_dash_m_skillpack_version_imports_no_pathlib() -> None:
    """`python -m skillpack --version` answers without pathlib (and the fnmatch, re and
    urllib.parse it imports: about 15 ms); only the pre-commit hook's files need it. Run
    without `site`, whose editable-install finder would import pathlib first."""
    script = (f"import runpy, sys; sys.path[:0] = [{str(REPO)!r}]; sys.argv = ['skillpack', "
              "'--version']\ntry:\n    runpy.run_module('skillpack', run_name='__main__')\n"
              "except SystemExit:\n    pass\nprint(sorted(sys.modules))")
    done = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True,
                          text=True, cwd=REPO, check=True, timeout=60)
    first, last = done.stdout.splitlines()[0], done.stdout.splitlines()[-1]
    assert first == "skillpack, version 0.1.0"
    loaded = set(ast.literal_eval(last))
    assert "skillpack._launch" in loaded
    assert not loaded & {"pathlib", "fnmatch", "re", "urllib.parse"}, sorted(loaded)


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
    assert skill_folders(files) == ["skills/one", "skills/one/assets/inner", "two"]
    assert skill_folders(["README.md"]) == [] == skill_folders([])


def test_the_hook_entry_checks_whole_skills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    good = rich_skill(tmp_path / "good")
    bad = tmp_path / TOO_LONG.name
    (bad / "notes").mkdir(parents=True)
    (bad / "SKILL.md").write_bytes((TOO_LONG / "SKILL.md").read_bytes())
    (bad / "notes" / "x.md").write_text("x\n")
    assert precommit_check(["good/scripts/run.py", "good/assets/logo.bin"]) == 0
    assert capsys.readouterr().out == "checked 1 skill: 1 valid, 0 invalid (0 errors, 0 warnings)\n"
    # only a note changed, but the skill holding it is checked: its SKILL.md is invalid
    assert precommit_check([f"{bad.name}/notes/x.md", f"{good.name}/SKILL.md"]) == 1
    out = capsys.readouterr().out
    assert f"{bad.name}/SKILL.md:3: error: [description-too-long]" in out
    assert out.endswith("checked 2 skills: 1 valid, 1 invalid (1 error, 0 warnings)\n")
    assert precommit_check(["README.md"]) == 0 and capsys.readouterr().out == ""
    assert precommit_check(["--json", "good/SKILL.md"]) == 0
    assert '"valid": true' in capsys.readouterr().out
