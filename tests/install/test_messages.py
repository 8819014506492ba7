"""What install and verify say about an agent's folder: each refusal worded for what it is
(a file in the way is a file; a lock's refusal names the skill once; an approved skill no
source holds is named by the lock), and each hint one that helps there."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.install import cli, make_skill


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working folder: skills/alpha and skills/beta, skills.lock approving both."""
    monkeypatch.chdir(tmp_path)
    make_skill(tmp_path / "skills", "alpha", files={"data/table.csv": "a,b\n1,2\n"},
               scripts={"scripts/run.sh": "#!/bin/sh\necho alpha\n"})
    make_skill(tmp_path / "skills", "beta", files={"notes.md": "beta notes\n"})
    assert cli("lock", "skills", "-o", "skills.lock").exit_code == 0
    return tmp_path


def test_a_lock_refusal_names_the_skill_once(repo: Path) -> None:
    assert cli("lock", "skills/alpha", "-o", "alpha.lock").exit_code == 0
    result = cli("install", "skills/beta", "--into", "out", "--lock", "alpha.lock", "--json")
    assert result.exit_code == 1
    [problem] = json.loads(result.stdout)["problems"]
    assert problem["code"] == "expect-extra"
    assert problem["message"].startswith("skill 'beta' (digest blake3:")
    assert problem["message"].count("'beta'") == 1
    assert problem["file"] == "skills/beta"


def test_frozen_names_an_approved_skill_no_source_holds_by_the_lock(repo: Path) -> None:
    result = cli("install", "skills/alpha", "--into", "out", "--lock", "skills.lock",
                 "--frozen", "--json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    [problem] = document["problems"]
    assert problem["code"] == "expect-missing"
    assert problem["message"].startswith("skill 'beta' is approved (digest blake3:")
    assert problem["message"].endswith("but no source holds it")
    assert problem["file"] == "skills.lock"  # not the bare name: no such path exists
    assert document["error"].startswith("skills.lock: the sources lack 1 skill(s) the lock "
                                        "approves (--frozen): 'beta'")
    assert "does not approve" not in document["error"]
    assert not (repo / "out").exists()


@pytest.mark.parametrize(("make", "said"), [
    (lambda p: p.write_text("a note\n"), "is a file that skillpack did not install there"),
    (lambda p: p.mkdir(), "is a folder without SKILL.md that skillpack did not install there"),
    (lambda p: os.symlink("elsewhere", p), "is a symbolic link skillpack did not install there"),
    (lambda p: make_skill(p.parent, p.name, body="another beta\n"),
     "holds a skill, of other content, that skillpack did not install there"),
])
def test_what_holds_a_skills_place_is_called_what_it_is(
        repo: Path, make: Callable[[Path], object], said: str) -> None:
    out = repo / "out"
    out.mkdir()
    make(out / "beta")
    result = cli("install", "skills", "--into", "out")
    assert result.exit_code == 1
    assert f"[not-ours] out/beta {said}; it is left as it is" in result.stderr
    assert "remove it (or move it) first" in result.stderr
    assert sorted(os.listdir(out)) == ["beta"]  # nothing written


def test_a_link_in_an_installed_skill_is_answered_with_install_it_again(repo: Path) -> None:
    assert cli("install", "skills", "--agent", "claude-code").exit_code == 0
    script = repo / ".claude" / "skills" / "alpha" / "scripts" / "run.sh"
    script.unlink()
    os.symlink(repo / "skills" / "alpha" / "scripts" / "run.sh", script)
    for target in (["--agent", "claude-code"], [".claude/skills/alpha"]):
        result = cli("verify", "--lock", "skills.lock", *target, "--json")
        assert result.exit_code == 1
        [failure] = [a for a in json.loads(result.stdout) if a["name"] is None]
        [problem] = failure["problems"]
        assert problem["code"] == "symlink"
        assert ".skillignore" not in problem["message"] + failure["hint"]
        assert "install the skill again (skillpack install)" in problem["message"]
        assert failure["hint"].startswith("install the skill again")
    # the skill's authoring folder keeps the authoring advice
    os.symlink("SKILL.md", repo / "skills" / "alpha" / "link.md")
    result = cli("verify", "--lock", "skills.lock", "skills/alpha", "--json")
    [failure] = [a for a in json.loads(result.stdout) if a["name"] is None]
    assert ".skillignore" in failure["problems"][0]["message"]


def test_a_changed_file_hidden_by_a_skillignore_in_an_installed_skill_is_changed(
        repo: Path) -> None:
    """Not an added and a removed file of one path, which hides that its bytes changed."""
    assert cli("install", "skills", "--agent", "claude-code").exit_code == 0
    alpha = repo / ".claude" / "skills" / "alpha"
    (alpha / "data" / "table.csv").write_text("a,b\n1,999\n")
    (alpha / ".skillignore").write_text("data/\nscripts/\n")  # scripts/ hidden, as approved
    for target in (["--agent", "claude-code"], [".claude/skills/alpha"]):
        result = cli("verify", "--lock", "skills.lock", *target, "--json")
        assert result.exit_code == 1
        [verdict] = [a for a in json.loads(result.stdout) if a["name"] == "alpha"]
        assert (verdict["added"], verdict["removed"], verdict["changed"]) == (
            [".skillignore"], [], ["data/table.csv"])



def test_a_refused_skill_cannot_be_installed_not_packed(repo: Path) -> None:
    """install's refusals used pack's verb: "skill 'beta' is invalid and cannot be packed",
    and for a host "cannot be packed for codex"."""
    skill_md = repo / "skills" / "beta" / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("name: beta", "name: other"))
    result = cli("install", "skills/beta", "--into", "out")
    assert result.exit_code == 1
    assert "skill 'other' is invalid and cannot be installed: 1 error" in result.stderr
    assert "packed" not in result.stderr
    skill_md.write_text(skill_md.read_text().replace("name: other\n", ""))  # no name: codex
    skill_md.write_text(skill_md.read_text().replace("---\n", "---\nskill: beta\n", 1))
    result = cli("install", "skills/beta", "--agent", "codex")
    assert result.exit_code == 1, result.output
    assert "cannot be installed for codex" in result.stderr, result.stderr
    assert "packed" not in result.stderr
