"""The suite's shared fixtures and session hooks (builders and paths are in tests/helpers/).

The corpus
----------
A test whose subject is the real corpus is marked ``@pytest.mark.corpus`` (a whole module:
``pytestmark = pytest.mark.corpus``). Without a corpus those tests skip, all with the one reason
`CORPUS_REASON`, so a fresh clone runs everything else. ``SKILLPACK_REQUIRE_CORPUS=1`` (CI sets
it) makes a missing corpus an error instead. A ``SKILLPACK_CORPUS`` that does not exist or holds
no skill is a usage error naming the path, never a skip.

Slow tests
----------
A test marked ``@pytest.mark.slow`` runs only with ``--run-slow`` (``.ci/run`` passes it), so
that the README's test command stays within a few minutes on a 2-core machine.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.paths import (
    CORPUS,
    CORPUS_ENV,
    CORPUS_REASON,
    CORPUS_SKILLS,
    FIXTURES,
    REQUIRE_ENV,
)
from helpers.registry import Registry, need, serve, which
from helpers.skills import rich_skill


def corpus_problem() -> str | None:
    """Why the corpus cannot be used, when it was asked for (by the variable, by
    ``SKILLPACK_REQUIRE_CORPUS=1``, or by a folder at the default place); None otherwise."""
    explicit = bool(os.environ.get(CORPUS_ENV))
    required = os.environ.get(REQUIRE_ENV, "") not in ("", "0")
    if not CORPUS.is_dir():
        if explicit or required:
            return (f"{CORPUS}: no such corpus folder (from "
                    f"{'$' + CORPUS_ENV if explicit else 'the default ../shared/corpus'}"
                    f"{', and $' + REQUIRE_ENV + '=1 makes it required' if required else ''})")
        return None
    if not CORPUS_SKILLS:
        return f"{CORPUS}: holds no skill (no */*/SKILL.md); point ${CORPUS_ENV} at the corpus"
    return None


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run the tests marked slow (.ci/run does)")


def pytest_configure(config: pytest.Config) -> None:
    problem = corpus_problem()
    if problem:
        raise pytest.UsageError(problem)


SLOW_REASON = "slow: run with --run-slow (.ci/run does)"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without --run-slow, a slow-marked test is skipped, with one reason for all."""
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason=SLOW_REASON)
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a corpus test when there is no corpus, before its fixtures read it; the skip is
    raised here, so the summary shows it once (one location, one reason)."""
    if not CORPUS_SKILLS and item.get_closest_marker("corpus") is not None:
        pytest.skip(CORPUS_REASON)


@pytest.fixture
def corpus() -> Path:
    """The corpus folder; skips the test (with `CORPUS_REASON`) when there is none."""
    if not CORPUS_SKILLS:
        pytest.skip(CORPUS_REASON)
    return CORPUS


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def twins(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two different skills both named ``skill-creator``, each alone in a folder of skills
    (``one/`` and ``two/``), as the corpus has one in anthropics-skills and one in
    openai-skills."""
    root = tmp_path_factory.mktemp("twins")
    return (rich_skill(root / "one" / "skill-creator", "one "),
            rich_skill(root / "two" / "skill-creator", "two "))


@pytest.fixture(scope="session")
def rich(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One `rich_skill` named ``rich`` (do not change it: copy it first)."""
    return rich_skill(tmp_path_factory.mktemp("rich") / "rich")


@pytest.fixture(scope="session")
def reg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """One real registry for the session (tests/helpers/registry.py); skips without one."""
    with serve(tmp_path_factory.mktemp("registry")) as running:
        yield running


@pytest.fixture
def skopeo() -> str:
    """The path of the `skopeo` binary; skips without it."""
    path = which("skopeo")
    need("skopeo", path is not None)
    assert path is not None
    return path
