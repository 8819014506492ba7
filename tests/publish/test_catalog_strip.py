"""`catalog` text and XML give names and descriptions stripped, as skills-ref's `to-prompt`
does (``.strip()`` then HTML escape); the JSON form keeps them as the frontmatter gives them."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from helpers.skills import write_skill

from skillpack.cli import main

FOLDED = ("---\nname: bids\ndescription: >\n  Reads BIDS datasets & checks\n  <them>. Use when "
          "asked.\n---\nBody.\n")


def _catalog(*args: str) -> str:
    result = CliRunner().invoke(main, ["catalog", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_xml_strips_the_newline_a_folded_description_ends_with(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "bids", FOLDED)
    xml = _catalog("--format", "xml", str(folder))
    location = (folder / "SKILL.md").resolve()
    assert xml == ("<available_skills>\n<skill>\n<name>\nbids\n</name>\n<description>\n"
                   "Reads BIDS datasets &amp; checks &lt;them&gt;. Use when asked.\n"
                   f"</description>\n<location>\n{location}\n</location>\n</skill>\n"
                   "</available_skills>\n")


def test_text_folds_and_strips(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "bids", FOLDED)
    assert _catalog(str(folder)) == ("## Available skills\n\n- bids: Reads BIDS datasets & "
                                     "checks <them>. Use when asked.\n")


def test_json_keeps_the_description_verbatim(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "bids", FOLDED)
    [entry] = json.loads(_catalog("--format", "json", str(folder)))["skills"]
    assert entry["description"] == "Reads BIDS datasets & checks <them>. Use when asked.\n"
