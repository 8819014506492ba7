"""`bundle` and `verify` of a repository of many skills hold what they need of each skill's
files, not their bytes: the peak memory (tracemalloc) of the library call on two repositories
of the same skills and files, one with files 64 times larger, differs by far less than their
bytes differ (a SKILL.md kept per skill would add them all). A size-based proof, no timing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.memory import BOUND, MORE, grows_by, peak, two_repositories

from skillpack.packing.bundle import write_bundle
from skillpack.packing.verify import verify_target


@pytest.fixture(scope="module")
def repositories(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return two_repositories(tmp_path_factory.mktemp("repositories"))



def test_bundle_of_a_repository_holds_its_files_not_their_bytes(
    repositories: tuple[Path, Path], tmp_path: Path,
) -> None:
    grows = grows_by(lambda repo, out: lambda: write_bundle([repo], out.with_suffix(".bundle")),
                      repositories, tmp_path)
    assert grows < BOUND, f"bundle: peak {grows >> 10} KiB more for {MORE >> 10} KiB more bytes"


def test_verify_of_a_repository_holds_its_files_not_their_bytes(
    repositories: tuple[Path, Path], tmp_path: Path,
) -> None:
    grows = grows_by(lambda repo, out: lambda: verify_target(repo), repositories, tmp_path)
    assert grows < BOUND, f"verify: peak {grows >> 10} KiB more for {MORE >> 10} KiB more bytes"


def test_verify_of_a_bundle_holds_its_files_not_their_bytes(
    repositories: tuple[Path, Path], tmp_path: Path,
) -> None:
    small, large = repositories
    bundles = [write_bundle([repo], tmp_path / f"{repo.name}.bundle").path
               for repo in (small, large)]
    verify_target(bundles[0])  # the first call imports what it runs
    grows = peak(lambda: verify_target(bundles[1])) - peak(lambda: verify_target(bundles[0]))
    assert grows < BOUND, (f"verify of a bundle: peak {grows >> 10} KiB more for "
                           f"{MORE >> 10} KiB more bytes")
