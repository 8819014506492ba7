"""Memory bounds proved by size, not time: the peak Python allocates while a call runs
(`peak`), and two repositories of the same skills and files whose bytes differ 64-fold
(`two_repositories`), so that a command holding each file's bytes shows it in `grows_by`."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from helpers.skills import repository

SKILLS = 48
SMALL, LARGE = 2 << 10, 128 << 10  # bytes of each SKILL.md and of each reference file
#: The least the large repository holds over the small one: 48 x 2 x 126 KiB, about 12 MiB.
MORE = SKILLS * 2 * (LARGE - SMALL)
BOUND = 3 << 20  # a few skills' bytes in flight at once, never every skill's


def peak(call: Callable[[], object]) -> int:
    """The peak of the memory Python allocates while `call` runs."""
    gc.collect()
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def two_repositories(root: Path) -> tuple[Path, Path]:
    """The small and the large repository (`SKILLS` skills each) under `root`."""
    return (repository(root / "small", SKILLS, SMALL),
            repository(root / "large", SKILLS, LARGE))


def grows_by(make: Callable[[Path, Path], Callable[[], object]],
             repositories: tuple[Path, Path], out: Path) -> int:
    """How much more the peak of ``make(large, out)()`` is than that of ``make(small,
    out)()``, after one unmeasured call (the first imports what it runs)."""
    small, large = repositories
    make(small, out / "warm")()
    return peak(make(large, out / "large")) - peak(make(small, out / "small"))
