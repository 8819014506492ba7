"""How the suite finds the corpus (tests/conftest.py): a corpus asked for but unusable stops
the run with one line naming the path, before any test is collected; never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import REPO
from helpers.skills import write_skill

MINIMAL = "---\nname: {}\ndescription: A skill of a corpus written at test time.\n---\n\nBody.\n"


def collect(**env: str) -> subprocess.CompletedProcess[str]:
    """``pytest --collect-only`` of one small test file, under `env`."""
    full = {k: v for k, v in os.environ.items()
            if k not in ("SKILLPACK_CORPUS", "SKILLPACK_REQUIRE_CORPUS")}
    full.update(env, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "--collect-only", "tests/cli/test_main.py"], cwd=REPO, env=full,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("case", ["missing", "empty", "missing-and-required"])
def test_an_unusable_corpus_is_one_line_naming_it(tmp_path: Path, case: str) -> None:
    folder = tmp_path / "corpus"
    if case == "empty":
        folder.mkdir()
        (folder / "notes.txt").write_text("no skill here\n")
    env = {"SKILLPACK_CORPUS": str(folder)}
    if case == "missing-and-required":
        env["SKILLPACK_REQUIRE_CORPUS"] = "1"
    done = collect(**env)
    assert done.returncode == 4, done.stdout + done.stderr  # pytest's usage error
    assert "Traceback" not in done.stdout + done.stderr
    [line] = [line for line in done.stderr.splitlines() if line.strip()]
    why = "holds no skill" if case == "empty" else "no such corpus folder"
    assert line.startswith(f"ERROR: {folder}: {why}"), line
    if case == "missing-and-required":
        assert "SKILLPACK_REQUIRE_CORPUS=1 makes it required" in line


def test_a_corpus_given_by_the_variable_is_used(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    for owner, name in (("someone", "alpha"), ("other", "beta")):
        write_skill(corpus / owner / name, MINIMAL.format(name))
    done = collect(SKILLPACK_CORPUS=str(corpus), SKILLPACK_REQUIRE_CORPUS="1")
    assert done.returncode == 0, done.stdout + done.stderr
    code = ("import sys; sys.path.insert(0, 'tests'); import conftest; "
            "print(conftest.CORPUS, len(conftest.CORPUS_SKILLS), conftest.corpus_problem())")
    shown = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                           text=True, env={**os.environ, "SKILLPACK_CORPUS": str(corpus),
                                           "PYTHONPATH": str(REPO)}, check=True)
    assert shown.stdout == f"{corpus.resolve()} 2 None\n"
