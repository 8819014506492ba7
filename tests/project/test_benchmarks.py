"""The benchmark suite still runs: benchmarks/repo.py writes the same repository for the same
arguments, and benchmarks/run.py prints every workload's lines beside their peers (a smoke run
on tiny subjects: its times judge nothing, and no test here asserts a time)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import REPO

import skillpack

GENERATOR = [sys.executable, str(REPO / "benchmarks" / "repo.py")]


def tree(root: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_generator_writes_the_same_repository_for_the_same_arguments(
        tmp_path: Path) -> None:
    for out in ("a", "b"):
        done = subprocess.run([*GENERATOR, "--skills", "12", "--broken", "4",
                               str(tmp_path / out)], capture_output=True, text=True, check=True)
        assert f"{tmp_path / out}: 12 skills (4 invalid)" in done.stdout
    first = tree(tmp_path / "a")
    assert first == tree(tmp_path / "b")
    assert any(mode == 0o755 for path, (_, mode) in first.items() if path.count("/scripts/"))
    folders = sorted((tmp_path / "a" / "skills").iterdir())
    assert len(folders) == 12  # every name unique
    verdicts = [skillpack.check_skill(folder) for folder in folders]
    assert all(v.skill == f.name for v, f in zip(verdicts, folders, strict=True) if v.valid)
    codes = {p.code for v in verdicts for p in v.problems if p.severity == "error"}
    assert [v.valid for v in verdicts].count(False) == 4
    assert codes == {"description-missing", "name-mismatch", "yaml-syntax",
                     "description-too-long"}


def test_the_generator_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    done = subprocess.run([*GENERATOR, "--skills", "3", str(tmp_path)], capture_output=True,
                          text=True, check=False)
    assert done.returncode != 0 and "is not empty" in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


@pytest.mark.slow
def test_the_suite_prints_every_workload_beside_its_peer(tmp_path: Path) -> None:
    # three runs, not one: a line measured over a base (the first turn over reading the
    # bundle's bytes, a few ms on 3 skills) is a difference of two medians, and one run of
    # each under the suite's load came out below zero
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "run.py"), "--no-corpus", "--skills", "3",
         "--big-mib", "1", "--runs", "3", "--warmup", "0", "--json", "--tmp", str(tmp_path)],
        capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    found = {row["workload"] for row in rows}
    assert found - {"pull"} == {
        "startup", "first-turn", "check", "lint", "digest", "pack", "bundle", "lock",
        "verify-lock", "review-lock", "verify-bundle", "big-file"}
    if os.environ.get("SKILLPACK_REQUIRE_REGISTRY") == "1":  # the registry is there: pull too
        assert "pull" in found
    for row in rows:
        assert row["beside_seconds"] > 0 and row["peak_rss_bytes"]["new"] > 0, row
        assert math.isclose(row["ratio"], row["seconds"]["new"] / row["beside_seconds"]), row
    assert list(tmp_path.iterdir()) == []  # its temp folder is gone
