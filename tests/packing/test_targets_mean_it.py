"""Targets that mean what they say: under --target, what the host refuses is an error (a
reserved word in the name, an XML tag in the name or description, file count and size
counting every member the archive holds); advice the host does not enforce is a note, off
by default."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from helpers.cli import cli

from skillpack.packing.targets import SkillFacts, check_targets

DESCRIPTION = "Tidy a folder of notes. Use when the user asks to tidy notes."



def skill(folder: Path, name: str, description: str = DESCRIPTION,
          files: int = 0) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {json.dumps(description)}"
                                     f"\n---\n\n# {name}\n\nSee the files in notes/.\n")
    for i in range(files):
        (folder / "notes").mkdir(exist_ok=True)
        (folder / "notes" / f"n{i:03}.txt").write_text(f"note {i}\n")
    return folder


def test_what_the_claude_api_refuses_is_an_error_and_nothing_is_written(
        tmp_path: Path) -> None:
    folder = skill(tmp_path / "claude-helper", "claude-helper",
                   "Helps with <b>bold</b> things. Use when asked.")
    out = tmp_path / "out"
    result = cli("pack", "--target", "claude-api", folder, "-o", out)
    assert result.exit_code == 1 and not out.exists()
    assert "[target-reserved-word] claude-api: refuses a name holding the reserved word " \
           "'claude'" in result.stderr
    assert "[target-xml-tag] claude-api: refuses an XML tag in the description ('<b>')" \
           in result.stderr
    checked = cli("check", "--target", "claude-api", folder)
    assert checked.exit_code == 1 and "target-reserved-word" in checked.output
    # the control: without a target the spec's rules only warn, and the archive is written
    assert cli("pack", folder, "-o", out).exit_code == 0


def test_anthropic_in_a_name_is_refused_by_claude_ai_too(tmp_path: Path) -> None:
    folder = skill(tmp_path / "my-anthropic-tool", "my-anthropic-tool")
    result = cli("check", "--target", "claude-ai", folder)
    assert result.exit_code == 1
    assert "[target-reserved-word] claude-ai:" in result.output and "'anthropic'" in result.output


def test_the_file_limit_counts_every_member_the_archive_holds(tmp_path: Path) -> None:
    # 200 files of the skill's own and SKILL.md: 201 members (the archive for a host carries
    # no manifest: what is counted is what is uploaded)
    folder = skill(tmp_path / "many", "many", files=200)
    result = cli("pack", "--target", "claude-ai", folder, "-o", tmp_path / "out")
    assert result.exit_code == 1 and not (tmp_path / "out").exists()
    assert ("[target-too-many-files] claude-ai: 201 files (every member of the archive); the "
            "limit is 200 files") in result.stderr
    fewer = skill(tmp_path / "fewer", "fewer", files=199)
    [packed] = json.loads(cli("pack", "--json", "--target", "claude-ai", fewer,
                              "-o", tmp_path / "out").stdout)
    with zipfile.ZipFile(packed["archive"]) as uploaded:
        assert len(uploaded.namelist()) == 200  # exactly the limit, every member counted


def test_advice_the_host_does_not_enforce_is_a_note_off_by_default(tmp_path: Path) -> None:
    long = "Tidy a folder of notes, " * 10 + "Use when asked."
    folder = skill(tmp_path / "tidy", "tidy", long)
    result = cli("check", "--target", "claude-ai", folder)
    assert result.exit_code == 0 and "200 characters" not in result.output
    facts = SkillFacts.from_files("tidy", {"name": "tidy", "description": long},
                                  [("SKILL.md", 400)])
    assert check_targets(["claude-ai"], facts) == []
    [note] = check_targets(["claude-ai"], facts, notes=True)
    assert note.severity == "info" and note.code == "target-description-too-long"
    assert "not enforced as far as we know" in note.message
    asked = cli("check", "--target", "claude-ai", "--advice", folder)
    assert asked.exit_code == 0
    assert "info: [target-description-too-long] claude-ai: " in asked.output
    assert "not enforced as far as we know" in asked.output
