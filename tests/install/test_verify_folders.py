"""`skillpack verify --lock` of agents' folders, whoever filled them: drift of every kind,
--partial, and skills installed as symbolic links."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers.install import cli, make_skill


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project (the working folder) with two skills, their lock, and a hand copy of them
    in .claude/skills."""
    monkeypatch.chdir(tmp_path)
    make_skill(tmp_path / "skills", "alpha", scripts={"scripts/run.sh": "#!/bin/sh\necho\n"})
    make_skill(tmp_path / "skills", "beta", files={"notes.md": "notes\n"})
    assert cli("lock", "skills", "-o", "skills.lock").exit_code == 0
    shutil.copytree(tmp_path / "skills", tmp_path / ".claude" / "skills")
    return tmp_path


def verify(*args: object) -> tuple[int, list[dict[str, Any]]]:
    result = cli("verify", "--lock", "skills.lock", "--json", *args)
    return result.exit_code, json.loads(result.stdout)


def test_a_hand_copy_verifies(project: Path) -> None:
    code, answer = verify("--agent", "claude-code")
    assert code == 0
    assert answer == [  # an ok item carries no code, as `verify --lock` of any target
        {"target": ".claude/skills", "name": name, "digest": answer[i]["digest"], "ok": True}
        for i, name in enumerate(["alpha", "beta"])]


def test_every_kind_of_drift_is_caught(project: Path) -> None:
    skills = project / ".claude" / "skills"
    (skills / "beta" / "notes.md").write_text("changed\n")
    (skills / "beta" / "added.md").write_text("added\n")
    shutil.rmtree(skills / "alpha")
    make_skill(skills, "gamma")
    code, answer = verify("--agent-folders", ".claude/skills")
    assert code == 1
    by_name = {a["name"]: a for a in answer}
    assert by_name["beta"]["code"] == "expect-mismatch"
    assert (by_name["beta"]["added"], by_name["beta"]["changed"]) == (["added.md"],
                                                                      ["notes.md"])
    assert by_name["gamma"]["code"] == "expect-extra"
    assert by_name["alpha"] == {"target": ".claude/skills", "name": "alpha",
                                "digest": by_name["alpha"]["digest"], "ok": False,
                                "code": "expect-missing", "reason": by_name["alpha"]["reason"]}
    assert "missing" in by_name["alpha"]["reason"]
    text = cli("verify", "--lock", "skills.lock", "--agent", "claude-code").stdout
    assert "MISMATCH" in text and "  added:   added.md" in text


def test_what_a_walk_would_pass_over_fails_an_installed_skill(project: Path) -> None:
    """An agent reads every file of the folder: a file a `.skillignore` line, `includes:`
    or the built-in list would leave out of an authoring walk is a file nobody approved
    (even with the approved digest), and install writes the approved copy again."""
    shutil.rmtree(project / ".claude")
    assert cli("install", "skills", "--agent", "claude-code", "--lock", "skills.lock"
               ).exit_code == 0
    skills = project / ".claude" / "skills"
    (skills / "alpha" / "scripts" / "json.py").write_text('print("shadowed")\n')
    (skills / "alpha" / ".skillignore").write_text("scripts/json.py\n")
    (skills / "beta" / ".git" / "hooks").mkdir(parents=True)
    (skills / "beta" / ".git" / "hooks" / "post-checkout").write_text("#!/bin/sh\n")
    (skills / "beta" / "__pycache__").mkdir()
    (skills / "beta" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (skills / "beta" / "notes.md").write_text("changed\n")
    (skills / "beta" / "empty").mkdir()  # an empty folder holds nothing to read
    code, answer = verify("--agent", "claude-code")
    assert code == 1
    alpha, beta = answer
    assert (alpha["ok"], alpha["code"], alpha["added"], alpha["changed"]) == (
        False, "unlisted-files", [".skillignore", "scripts/json.py"], [])
    assert "the folder holds 2 entries its file set lacks" in alpha["reason"]
    assert "skillpack install" in alpha["reason"]
    assert (beta["code"], beta["added"], beta["changed"]) == (
        "expect-mismatch", [".git/hooks/post-checkout", "__pycache__/x.cpython-311.pyc"],
        ["notes.md"])
    assert beta["reason"].startswith("skill 'beta' has digest")
    text = cli("verify", "--lock", "skills.lock", "--agent", "claude-code").stdout
    assert "  added:   scripts/json.py" in text
    result = cli("install", "skills", "--agent", "claude-code", "--lock", "skills.lock",
                 "--json")
    assert [s["action"] for s in json.loads(result.stdout)["skills"]] == ["updated",
                                                                         "updated"]
    assert not (skills / "alpha" / "scripts" / "json.py").exists()
    assert not (skills / "beta" / ".git").exists()
    assert verify("--agent", "claude-code")[0] == 0


def test_a_removed_file_and_a_lost_execute_bit(project: Path) -> None:
    skills = project / ".claude" / "skills"
    (skills / "beta" / "notes.md").unlink()
    (skills / "alpha" / "scripts" / "run.sh").chmod(0o644)
    code, answer = verify("--agent", "claude-code")
    assert code == 1
    by_name = {a["name"]: a for a in answer}
    assert by_name["beta"]["removed"] == ["notes.md"]
    assert by_name["alpha"]["changed"] == ["scripts/run.sh"]
    assert "only the execute bit differs (scripts/run.sh)" in by_name["alpha"]["reason"]


def test_partial_expects_a_subset(project: Path) -> None:
    shutil.rmtree(project / ".claude" / "skills" / "alpha")
    assert verify("--agent", "claude-code")[0] == 1
    code, answer = verify("--agent", "claude-code", "--partial")
    assert code == 0
    assert [a["name"] for a in answer] == ["beta"]


def test_each_folder_must_hold_every_approved_skill(project: Path) -> None:
    agents = project / ".agents" / "skills"
    agents.mkdir(parents=True)
    shutil.copytree(project / "skills" / "beta", agents / "beta")
    code, answer = verify("--agent", "claude-code", "--agent", "codex")
    assert code == 1
    assert [(a["target"], a["name"], a["ok"]) for a in answer] == [
        (".claude/skills", "alpha", True), (".claude/skills", "beta", True),
        (".agents/skills", "beta", True), (".agents/skills", "alpha", False)]


def test_a_link_inside_the_project_is_verified_at_its_target(project: Path) -> None:
    canonical = project / ".agents" / "skills"
    canonical.mkdir(parents=True)
    claude = project / ".claude" / "skills"
    for name in ("alpha", "beta"):
        shutil.move(claude / name, canonical / name)
        os.symlink(os.path.join("..", "..", ".agents", "skills", name), claude / name)
    code, answer = verify("--agent", "claude-code")
    assert code == 0
    assert [a["link"] for a in answer] == [str(canonical / "alpha"), str(canonical / "beta")]
    text = cli("verify", "--lock", "skills.lock", "--agent", "claude-code").stdout
    assert f"(.claude/skills, a link to {canonical / 'alpha'})" in text
    (canonical / "beta" / "notes.md").write_text("changed through the link\n")
    code, answer = verify("--agent", "claude-code")
    assert code == 1
    assert [a["changed"] for a in answer if a["name"] == "beta"] == [["notes.md"]]


def test_a_link_out_of_the_project_is_refused(project: Path, tmp_path_factory:
                                              pytest.TempPathFactory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    claude = project / ".claude" / "skills"
    shutil.move(claude / "beta", elsewhere / "beta")
    os.symlink(elsewhere / "beta", claude / "beta")
    code, answer = verify("--agent", "claude-code", "--partial")
    assert code == 1
    [refused] = [a for a in answer if a["target"] == ".claude/skills/beta"]
    assert "outside the project" in refused["error"]
    os.symlink(project / "nothing", claude / "dangling")
    code, answer = verify("--agent", "claude-code", "--partial")
    assert any(a["target"] == ".claude/skills/dangling" and "no folder" in a["error"]
               for a in answer)


def test_skillpacks_own_install_verifies_and_its_state_file_is_no_skill(project: Path) -> None:
    shutil.rmtree(project / ".claude")
    result = cli("install", "skills", "--agent", "claude-code", "--lock", "skills.lock")
    assert result.exit_code == 0, result.output
    code, answer = verify("--agent", "claude-code")
    assert code == 0
    assert [a["name"] for a in answer] == ["alpha", "beta"]


def test_misuse_exits_2(project: Path) -> None:
    assert cli("verify", "--agent", "claude-code").exit_code == 2  # no lock
    assert cli("verify", "--partial", "skills").exit_code == 2
    assert cli("verify").exit_code == 2
    result = cli("verify", "--lock", "skills.lock", "--agent", "vim")
    assert result.exit_code == 2  # a bad option value, as --format gemini
    assert "unknown agent 'vim'" in result.stderr
    assert "--agent-folders" in result.stderr and "--into" not in result.stderr
    result = cli("verify", "--lock", "skills.lock", "--agent", "vim", "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["problems"][0]["code"] == "usage"


def test_agent_folders_given_by_path_are_read_as_agent_folders(project: Path) -> None:
    """`verify --lock LOCK .claude/skills .agents/skills` (the issue's form): folders an agent
    reads, by their place, are agents' folders without --agent-folders; a folder of skills
    elsewhere is read as before."""
    agents = project / ".agents" / "skills"
    agents.mkdir(parents=True)
    shutil.copytree(project / "skills" / "beta", agents / "beta")
    code, answer = verify(".claude/skills", ".agents/skills")
    assert code == 1
    assert [(a["target"], a["name"], a["ok"]) for a in answer] == [
        (".claude/skills", "alpha", True), (".claude/skills", "beta", True),
        (".agents/skills", "beta", True), (".agents/skills", "alpha", False)]
    code, answer = verify("--partial", ".claude/skills", ".agents/skills")
    assert code == 0
    other = project / "other"
    shutil.copytree(project / "skills" / "alpha", other / "alpha")
    code, answer = verify("other")  # a folder of skills elsewhere: read as before
    assert code == 1
    assert [(a["target"], a["name"], a["ok"]) for a in answer] == [
        ("other", "alpha", True), (None, "beta", False)]


def test_an_installed_skill_that_does_not_verify_is_that_failure_not_missing(
        project: Path) -> None:
    (project / ".claude" / "skills" / "beta" / "SKILL.md").write_text("---\nnam: beta\n---\n")
    code, answer = verify("--agent", "claude-code")
    assert code == 1
    assert [(a["target"], a.get("code")) for a in answer if not a["ok"]] == [
        (".claude/skills/beta", None)]  # its error, once; not also "expect-missing"
    assert answer[0]["problems"]


def test_unlisted_names_are_shown_escaped(project: Path) -> None:
    """A file named with a newline cannot forge a line of the answer, nor a byte that is not
    UTF-8 break its JSON: each is escaped, as `check` shows such names."""
    hidden = project / ".claude" / "skills" / "alpha" / ".git"  # what the walk passes over
    hidden.mkdir()
    (hidden / "x\nok        blake3:fake  beta").write_text("x\n")
    os.close(os.open(os.fsencode(hidden) + b"/bad\xff", os.O_CREAT | os.O_WRONLY, 0o644))
    result = cli("verify", "--lock", "skills.lock", "--agent", "claude-code")
    assert result.exit_code == 1
    assert not any(line.startswith("ok        blake3:fake") for line in
                   result.stdout.splitlines())
    code, answer = verify("--agent", "claude-code")
    assert code == 1
    [alpha_item] = [a for a in answer if a["name"] == "alpha"]
    assert alpha_item["added"] == [".git/bad\\xff", ".git/x\\nok        blake3:fake  beta"]
