"""Fixtures of the runtime's tests: bundles built member by member (tests/helpers/bundles.py)."""

from __future__ import annotations

import pytest
from helpers.bundles import BUNDLE_SKILLS, build_bundle, bundle_members
from helpers.paths import NOTES, WAITLIST
from helpers.zips import Members


@pytest.fixture(scope="session")
def corpus_bundle() -> bytes:
    """One bundle of every corpus skill a bundle can hold (built once a session)."""
    return build_bundle(BUNDLE_SKILLS)


@pytest.fixture
def small() -> Members:
    """A bundle of the two fixtures, as members to alter."""
    return bundle_members([WAITLIST, NOTES])
