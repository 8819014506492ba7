"""Hard skills that travel as far as they can: `new --hard` writes `name:` beside `skill:`, so
the exports and other tools read it; a hard skill with `skill:` alone is refused by `export
well-known` and `export mcp` with the very words `check --target` gives; skills-ref refuses
the scaffold only for the dialect's own key."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import cli

CODE = "[target-name-key-missing]"



def scaffold(tmp_path: Path, name: str = "demo-tool") -> Path:
    assert cli("new", "--hard", name, "-o", tmp_path).exit_code == 0
    return tmp_path / name


def without_name(tmp_path: Path) -> Path:
    folder = scaffold(tmp_path, "old-tool")
    text = (folder / "SKILL.md").read_text()
    (folder / "SKILL.md").write_text(text.replace("name: old-tool\n", "", 1))
    return folder


def message(output: str, host: str) -> str:
    [line] = [line for line in output.splitlines() if CODE in line and f"] {host}:" in line]
    return line.split(CODE, 1)[1].strip()


def test_new_hard_writes_name_and_skill_and_every_export_takes_it(tmp_path: Path) -> None:
    folder = scaffold(tmp_path)
    head = (folder / "SKILL.md").read_text().split("---")[1]
    assert "\nname: demo-tool\n" in head and "\nskill: demo-tool\n" in head
    assert cli("check", folder, "--target", "mcp").exit_code == 0
    assert cli("export", "mcp", folder, "-o", tmp_path / "mcp.json").exit_code == 0
    assert cli("export", "well-known", folder, "-o", tmp_path / "site").exit_code == 0


@pytest.mark.parametrize("host", ["mcp", "well-known"])
def test_an_export_refuses_skill_alone_with_the_words_of_check(tmp_path: Path,
                                                                host: str) -> None:
    folder = without_name(tmp_path)
    assert cli("check", folder).exit_code == 0  # a valid hard skill, for skillpack
    checked = cli("check", folder, "--target", host)
    assert checked.exit_code == 1
    out = tmp_path / ("mcp.json" if host == "mcp" else "site")
    exported = cli("export", host, folder, "-o", out)
    assert exported.exit_code == 1 and not out.exists()
    said = message(checked.output, host)
    assert said == message(exported.output, host)
    assert "add 'name: old-tool' beside 'skill: old-tool'" in said
    assert "export-frontmatter" not in exported.output  # said once, not twice


def test_skills_ref_refuses_the_hard_scaffold_only_for_its_own_key(tmp_path: Path) -> None:
    tool = Path(sys.executable).with_name("agentskills")
    if not tool.exists():
        found = shutil.which("agentskills")
        if found is None:
            pytest.fail("skills-ref (agentskills) is a test dependency: pip install skills-ref")
        tool = Path(found)
    folder = scaffold(tmp_path)
    done = subprocess.run([str(tool), "validate", str(folder)], capture_output=True, text=True,
                          check=False, timeout=120)
    said = (done.stdout + done.stderr).strip().splitlines()
    assert done.returncode == 1
    problems = [line for line in said if line.lstrip().startswith("- ")]
    assert len(problems) == 1, said
    assert re.search(r"Unexpected fields in frontmatter: skill\.", problems[0]), said
    # the control: without the dialect's key the same scaffold passes
    text = (folder / "SKILL.md").read_text()
    (folder / "SKILL.md").write_text(text.replace("skill: demo-tool\n", "", 1))
    done = subprocess.run([str(tool), "validate", str(folder)], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_target_agentskills_named_warns_of_the_dialect_keys_skills_ref_refuses(
        tmp_path: Path) -> None:
    """The default check reads both dialects and says nothing of `skill:` or `includes:`;
    `--target agentskills`, asked for by name, warns of each, as skills-ref refuses them."""
    folder = without_name(tmp_path)
    text = (folder / "SKILL.md").read_text()
    (folder / "SKILL.md").write_text(text.replace("skill: old-tool\n",
                                                  "skill: old-tool\nincludes: scripts\n", 1))
    plain = cli("check", folder)
    assert plain.exit_code == 0 and "target-hard-skill-key" not in plain.output
    named = cli("check", folder, "--target", "agentskills")
    assert named.exit_code == 0  # warnings: skillpack reads both dialects
    said = [line for line in named.output.splitlines() if "[target-hard-skill-key]" in line]
    assert len(said) == 2
    assert ("'skill:' is a key of skillpack's hard-skill dialect" in said[0]
            and "without 'name:', reads no name" in said[0]
            and "write 'name: old-tool' in its place" in said[0])
    assert "'includes:'" in said[1] and "carry the whole folder" in said[1]
    scaffolded = cli("check", scaffold(tmp_path), "--target", "agentskills")
    [line] = [x for x in scaffolded.output.splitlines() if "[target-hard-skill-key]" in x]
    assert "drop it: skillpack reads 'name:' alone" in line
