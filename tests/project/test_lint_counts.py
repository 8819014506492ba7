"""benchmarks/lint_counts.py: the table of docs/LINT.md and docs/SECRETS.md, re-made on a tree
built here (two skills, one refused by check, one link out of its folder, a documented PEM
header that is no secret)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.paths import load_benchmark
from helpers.skills import make_tree

lint_counts = load_benchmark("lint_counts")


def test_the_table_counts_problems_skills_verdicts_and_secrets(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "owner+repo"
    make_tree(root / "skills" / "good", {
        "SKILL.md": "---\nname: good\ndescription: Formats tables.\n---\n\n"
                    "See [the reviewer](../Bad/notes.md) and [x](missing.md).\n",
        "sso.md": 'privateKey: "-----BEGIN RSA PRIVATE' + ' KEY-----\\n...",\n',
    })
    make_tree(root / "skills" / "Bad", {
        "SKILL.md": "---\nname: Bad\ndescription: Bad. Use when testing.\n---\n\nBody.\n",
        "notes.md": "n\n",
    })
    out = tmp_path / "all.json"
    assert lint_counts.main([str(root), "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "| code | severity | owner/repo |" in table
    assert "| `link-missing` | warning | 2 (1) |" in table
    assert "| `description-no-when` | warning | 1 (1) |" in table
    assert "| `reference-too-deep` | warning | 0 |" in table  # every approver code is shown
    assert "| `file-unreferenced` | info | 2 (2) |" in table  # sso.md and notes.md
    assert "| valid | 1 |" in table and "| invalid | 1 |" in table
    assert "| refused by `name-not-lowercase` | 1 |" in table
    assert "| files | 4 |" in table and "| content findings | 0 |" in table
    [dumped] = json.loads(out.read_text())
    assert dumped["secret_findings"] == [] and dumped["root"] == "owner/repo"
    assert {p["code"] for p in dumped["problems"]} >= {"link-missing", "name-not-lowercase"}
