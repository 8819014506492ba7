"""`verify --agent` reads every folder of the project the agents load skills from: an
agent's folder spelt in another case (one folder on a case-insensitive checkout, two on
this Linux tmp_path), and the nested agent folders Claude Code, Codex and OpenCode load."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers.install import cli, failures, make_skill, verify

from skillpack.install.agents import AGENTS


def skills(answer: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    """Each skill's verdict: (folder, name, code)."""
    return [(a["target"], a["name"], a.get("code")) for a in answer if a.get("name")]


@pytest.fixture
def installed(project: Path) -> Path:
    """The project with alpha and beta installed for claude-code and codex."""
    assert cli("install", "skills", "--lock", "skills.lock", "--agent", "claude-code",
               "--agent", "codex").exit_code == 0
    return project


def test_an_agent_folder_spelt_in_another_case_fails(installed: Path) -> None:
    """QA round 6, finding 3: a macOS or Windows checkout writes each of these into the one
    agent folder, which the agent loads; CI on Linux reads only the folder spelt exactly."""
    for spelt in (".Claude/skills", ".claude/Skills", ".CLAUDE/SKILLS", ".agents/Skills"):
        make_skill(installed / spelt, "evil")
    (installed / ".Claude" / "settings.json").write_text("{}\n")  # no skills folder: fine
    code, answer = verify("--agent", "claude-code", "--agent", "codex")
    assert code == 1
    assert failures(answer) == dict.fromkeys(
        [".CLAUDE/SKILLS", ".Claude/skills", ".agents/Skills", ".claude/Skills"],
        "agent-folder-case")
    assert skills(answer) == [(".claude/skills", "alpha", None), (".claude/skills", "beta", None),
                              (".agents/skills", "alpha", None), (".agents/skills", "beta", None)]
    item = next(a for a in answer if a.get("path") == ".agents/Skills")
    assert "case-insensitive checkout" in item["error"] and ".agents/skills" in item["error"]
    text = cli("verify", "--lock", "skills.lock", "--agent", "claude-code")
    assert text.exit_code == 1 and "Traceback" not in text.output
    assert ".Claude/skills: [agent-folder-case] the agent's folder .claude/skills spelt in " \
           "another case" in text.stderr
    assert ".agents/Skills" not in text.stderr  # codex not asked: its folder not read


def test_only_the_folders_of_the_agents_asked_for_count(installed: Path) -> None:
    """Claude Code's folder spelt otherwise is nothing to Codex (nor to a continue user)."""
    make_skill(installed / ".Claude" / "skills", "evil")
    make_skill(installed / ".Agents" / "skills", "evil4")
    code, answer = verify("--agent", "codex")
    assert code == 1
    assert failures(answer) == {".Agents/skills": "agent-folder-case"}


@pytest.mark.parametrize("spelt", [".claude/\u017fkills",  # LATIN SMALL LETTER LONG S
                                   ".clau\u200cde/skills",  # a code point HFS+ ignores
                                   ".claude/s\u212aills"])  # KELVIN SIGN
def test_unicode_spellings_fold_too(installed: Path, spelt: str) -> None:
    make_skill(installed / spelt, "evil")
    code, answer = verify("--agent", "claude-code")
    assert code == 1
    assert failures(answer) == {spelt: "agent-folder-case"}


def test_nested_claude_folders_are_verified_as_subsets(installed: Path) -> None:
    """Claude Code loads pkg/sub/.claude/skills when it works in pkg/sub: an unapproved
    skill there fails, an approved one verifies (the others are not expected there), and
    what the search for skills never enters is not read (node_modules, a virtualenv); a
    nested folder linked to the top one is that folder, verified once."""
    make_skill(installed / "pkg" / "sub" / ".claude" / "skills", "evil3")
    (installed / "lib").mkdir()
    os.symlink("../.claude", installed / "lib" / ".claude")
    shutil.copytree(installed / "skills" / "alpha",
                    installed / "apps" / "web" / ".claude" / "skills" / "alpha")
    make_skill(installed / "pkg" / ".Claude" / "skills", "evil6")
    for skipped in ("node_modules/x", ".venv/lib", ".git/x"):
        make_skill(installed / skipped / ".claude" / "skills", "never-read")
    code, answer = verify("--agent", "claude-code")
    assert code == 1
    assert skills(answer) == [
        (".claude/skills", "alpha", None), (".claude/skills", "beta", None),
        ("apps/web/.claude/skills", "alpha", None),
        ("pkg/sub/.claude/skills", "evil3", "expect-extra")]
    assert failures(answer) == {"pkg/.Claude/skills": "agent-folder-case"}
    text = cli("verify", "--lock", "skills.lock", "--agent", "claude-code").stdout
    assert "evil3  (pkg/sub/.claude/skills): skill 'evil3'" in text
    assert "is not approved" in text


def test_nested_folders_follow_each_agents_documentation(installed: Path) -> None:
    """Codex loads .agents/skills from the working folder up to the repository's root;
    OpenCode also .claude/skills and .opencode/skills; Claude Code none of .agents."""
    make_skill(installed / "svc" / ".agents" / "skills", "evil-codex")
    make_skill(installed / "svc" / ".opencode" / "skills", "evil-opencode")
    code, answer = verify("--agent", "codex")
    assert code == 1
    assert ("svc/.agents/skills", "evil-codex", "expect-extra") in skills(answer)
    assert not any(t.startswith("svc/.opencode") for t, _, _ in skills(answer))
    code, answer = verify("--agent", "opencode")
    assert code == 1
    assert {t for t, _, c in skills(answer) if c} == {
        "svc/.agents/skills", "svc/.opencode/skills"}
    # OpenCode reads the project's .claude/skills too: verified as a subset, all approved
    assert (".claude/skills", "alpha", None) in skills(answer)
    assert verify("--agent", "claude-code")[0] == 0
    assert {n for n, a in AGENTS.items() if a.nested} == {"claude-code", "codex", "opencode"}


def test_a_nested_folder_leading_out_of_the_project_is_refused(installed: Path,
                                                               tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    make_skill(outside / "skills", "evil")
    (installed / "pkg").mkdir()
    os.symlink(outside, installed / "pkg" / ".claude")
    code, answer = verify("--agent", "claude-code")
    assert code == 1
    assert failures(answer) == {"pkg/.claude/skills": "outside-project"}

