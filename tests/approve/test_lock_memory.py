"""`lock` and `verify --lock` of a repository of many skills hold what the lock records of
each skill, not its files' bytes: the peak memory (tracemalloc) of the library calls on two
repositories of the same skills and files, one with files 64 times larger, differs by far
less than their bytes differ. A size-based proof, no timing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.memory import BOUND, MORE, SKILLS, grows_by, peak, two_repositories

from skillpack.approve.approval import lock_entries
from skillpack.approve.compare import verify_against
from skillpack.approve.lock import Lock, read_lock, write_lock


@pytest.fixture(scope="module")
def repositories(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return two_repositories(tmp_path_factory.mktemp("repositories"))


def _lock(repo: Path, out: Path) -> Callable[[], object]:
    return lambda: write_lock(lock_entries([repo]).entries, out)


def test_lock_of_a_repository_holds_its_entries_not_its_bytes(
    repositories: tuple[Path, Path], tmp_path: Path,
) -> None:
    grows = grows_by(lambda repo, out: _lock(repo, out.with_suffix(".lock")), repositories,
                     tmp_path)
    assert grows < BOUND, f"lock: peak {grows >> 10} KiB more for {MORE >> 10} KiB more bytes"
    assert len(read_lock(tmp_path / "large.lock").skills) == SKILLS


def _verify(repo: Path, lock: Lock) -> Callable[[], object]:
    def run() -> None:
        verdicts = verify_against([repo], lock=lock)
        assert len(verdicts) == SKILLS and all(v.ok for v in verdicts)
    return run


def test_verify_against_a_lock_holds_its_files_not_their_bytes(
    repositories: tuple[Path, Path], tmp_path: Path,
) -> None:
    small, large = repositories
    locks = []
    for repo in (small, large):
        write_lock(lock_entries([repo]).entries, tmp_path / f"{repo.name}.lock")
        locks.append(read_lock(tmp_path / f"{repo.name}.lock"))
    _verify(small, locks[0])()  # the first call imports what it runs
    grows = peak(_verify(large, locks[1])) - peak(_verify(small, locks[0]))
    assert grows < BOUND, (f"verify --lock: peak {grows >> 10} KiB more for {MORE >> 10} KiB "
                           "more bytes")
