"""The pre-commit hooks of .pre-commit-hooks.yaml, run by the real ``pre-commit try-repo`` on a
throwaway git repository of skills: each passes on good skills and fails on a broken one.

pre-commit builds the hooks' environment from this checkout (pip, from the package index), so
the first run takes a while; the environments live under the test's own temp folder
(``PRE_COMMIT_HOME``), never in the user's cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import REPO, TOO_LONG
from helpers.skills import rich_skill

pytestmark = pytest.mark.slow


def pre_commit() -> list[str]:
    try:
        import pre_commit  # noqa: F401 - only whether it is installed
    except ImportError:
        pytest.skip("pre-commit is not installed (it is in the test extra: "
                    "pip install -e '.[test]')")
    if shutil.which("git") is None:
        pytest.skip("no git command")
    return [sys.executable, "-m", "pre_commit"]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """PRE_COMMIT_HOME shared by the module's runs (the hook environment is built once)."""
    return tmp_path_factory.mktemp("pre-commit-home")


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def try_repo(repo: Path, home: Path, hook: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("PYTHONPATH", None)  # the hook runs the skillpack pre-commit installed, not ours
    git(repo, "add", "-A")
    return subprocess.run([*pre_commit(), "try-repo", str(REPO), hook, "--all-files"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository holding two good skills, a README, and a skills.lock of them."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q")
    rich_skill(root / "skills" / "alpha", "alpha ")
    rich_skill(root / "skills" / "beta", "beta ")
    (root / "README.md").write_text("A project with skills.\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-m", "skillpack", "lock", "skills", "-o", "skills.lock"],
                   cwd=root, env=env, check=True, capture_output=True)
    return root


def test_skillpack_check_hook(repo: Path, home: Path) -> None:
    good = try_repo(repo, home, "skillpack-check")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "skillpack check" in good.stdout and "Passed" in good.stdout
    # a skill made invalid: its SKILL.md's description is over the limit
    text = (TOO_LONG / "SKILL.md").read_text(encoding="utf-8")
    (repo / "skills" / "beta" / "SKILL.md").write_text(
        text.replace("name: description-too-long", "name: beta"), encoding="utf-8")
    bad = try_repo(repo, home, "skillpack-check")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "Failed" in bad.stdout
    assert "skills/beta/SKILL.md:3: error: [description-too-long]" in bad.stdout
    assert "checked 2 skills: 1 valid, 1 invalid" in bad.stdout


def test_skillpack_verify_lock_hook(repo: Path, home: Path) -> None:
    good = try_repo(repo, home, "skillpack-verify-lock")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Passed" in good.stdout
    # the skill stays valid, but a file changed since the lock was written
    with open(repo / "skills" / "alpha" / "references" / "guide.md", "a") as f:
        f.write("An edit nobody approved.\n")
    bad = try_repo(repo, home, "skillpack-verify-lock")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "Failed" in bad.stdout
    assert "MISMATCH" in bad.stdout and "alpha" in bad.stdout
    assert "changed: references/guide.md" in bad.stdout
