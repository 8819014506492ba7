"""Fixtures and session hooks of the hostile suite (issue 5): every refusal skillpack promises,
tried on inputs built at test time through the entry points a user touches (pack, verify,
load, bundle, the CLI). docs/SECURITY.md names each test that holds a promise;
benchmarks/hostile_counts.py prints how many hostile inputs the suite tried, refused and
accepted.

At the end of the session the tally of hostile inputs is written as JSON (see
tests/helpers/hostile.py) and its counts are printed in the terminal summary.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.hostile import TALLY, Tally, demo_skill, helper_skill, tally_path


@pytest.fixture(scope="session")
def tally() -> Tally:
    return TALLY


def _tally_path(config: pytest.Config) -> Path:
    basetemp = config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    return tally_path(basetemp)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if TALLY.records:
        _tally_path(session.config).write_text(json.dumps({"counts": TALLY.counts(),
                                            "records": TALLY.records}, indent=1) + "\n")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if TALLY.records:
        counts = TALLY.counts()
        shown = ", ".join(f"{n} {outcome}" for outcome, n in counts.items())
        terminalreporter.write_line(f"hostile inputs: {sum(counts.values())} tried: {shown} "
                                    f"(records in {_tally_path(terminalreporter.config)})")


@pytest.fixture(scope="session")
def good_archive(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The bytes `skillpack.packing.pack.pack` writes for the demo skill."""
    from skillpack.packing.pack import pack

    root = tmp_path_factory.mktemp("good-archive")
    [path] = pack(demo_skill(root / "demo"), root / "out")
    return path.read_bytes()


@pytest.fixture(scope="session")
def good_bundle(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The bytes `skillpack.packing.bundle.write_bundle` writes for the demo and helper skills."""
    from skillpack.packing.bundle import write_bundle

    root = tmp_path_factory.mktemp("good-bundle")
    result = write_bundle([demo_skill(root / "demo"), helper_skill(root / "helper")],
                          root / "skills.bundle")
    return result.path.read_bytes()


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A folder with a short path (a unix socket's path is limited to about 100 bytes)."""
    name = tempfile.mkdtemp(prefix="sph", dir="/tmp")
    try:
        yield Path(name)
    finally:
        shutil.rmtree(name, ignore_errors=True)
