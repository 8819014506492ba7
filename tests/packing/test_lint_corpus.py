"""`skillpack lint --json` over the corpus prints the findings recorded in
golden/lint_corpus.json (paths relative to the corpus): a faster lint finds the same."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers.cli import cli
from helpers.paths import CORPUS

pytestmark = pytest.mark.corpus

GOLDEN = Path(__file__).parent / "golden" / "lint_corpus.json"


def relative(value: object) -> object:
    """`value` (the --json page) with every mention of the corpus folder written as ``.``."""
    if isinstance(value, str):
        return value.replace(str(CORPUS) + os.sep, "").replace(str(CORPUS), ".")
    if isinstance(value, list):
        return [relative(v) for v in value]
    if isinstance(value, dict):
        return {k: relative(v) for k, v in value.items()}
    return value


def test_lint_of_the_corpus_finds_the_golden_findings() -> None:
    result = cli("lint", "--json", CORPUS)
    assert result.exit_code == 1  # claude-api's description is too long
    found = relative(json.loads(result.output))
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert found == golden
    codes = {p["code"] for skill in golden for p in skill["problems"]}
    assert {"path-missing", "file-unreferenced", "description-no-when"} <= codes
