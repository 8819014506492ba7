"""`bundle` and `verify` of a repository of many skills hold what they need of each skill's
files, not their bytes: the peak memory (tracemalloc) of the library call on two repositories
of the same skills and files, one with files 64 times larger, differs by far less than their
bytes differ (a SKILL.md kept per skill would add them all). A size-based proof, no timing.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.skills import repository

from skillpack.packing.bundle import write_bundle
from skillpack.packing.verify import verify_target

SKILLS = 48
SMALL, LARGE = 2 << 10, 128 << 10  # bytes of each SKILL.md and of each reference file
#: The least the large repository holds over the small one: 48 x 2 x 126 KiB, about 12 MiB.
MORE = SKILLS * 2 * (LARGE - SMALL)
BOUND = 3 << 20  # a few skills' bytes in flight at once, never every skill's


def _peak(call: Callable[[], object]) -> int:
    """The peak of the memory Python allocates while `call` runs."""
    gc.collect()
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def repositories(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("repositories")
    return (repository(root / "small", SKILLS, SMALL),
            repository(root / "large", SKILLS, LARGE))


def _grows_by(make: Callable[[Path, Path], Callable[[], object]],
              repositories: tuple[Path, Path], out: Path) -> int:
    small, large = repositories
    make(small, out / "warm")()  # the first call imports what it runs
    return _peak(make(large, out / "large")) - _peak(make(small, out / "small"))


def test_bundle_of_a_repository_holds_its_files_not_their_bytes(
    repositories: tuple[Path, Path], tmp_path: Path,
) -> None:
    grows = _grows_by(lambda repo, out: lambda: write_bundle([repo], out.with_suffix(".bundle")),
                      repositories, tmp_path)
    assert grows < BOUND, f"bundle: peak {grows >> 10} KiB more for {MORE >> 10} KiB more bytes"


def test_verify_of_a_repository_holds_its_files_not_their_bytes(
    repositories: tuple[Path, Path], tmp_path: Path,
) -> None:
    grows = _grows_by(lambda repo, out: lambda: verify_target(repo), repositories, tmp_path)
    assert grows < BOUND, f"verify: peak {grows >> 10} KiB more for {MORE >> 10} KiB more bytes"


def test_verify_of_a_bundle_holds_its_files_not_their_bytes(
    repositories: tuple[Path, Path], tmp_path: Path,
) -> None:
    small, large = repositories
    bundles = [write_bundle([repo], tmp_path / f"{repo.name}.bundle").path
               for repo in (small, large)]
    verify_target(bundles[0])  # the first call imports what it runs
    grows = _peak(lambda: verify_target(bundles[1])) - _peak(lambda: verify_target(bundles[0]))
    assert grows < BOUND, (f"verify of a bundle: peak {grows >> 10} KiB more for "
                           f"{MORE >> 10} KiB more bytes")
