"""`skillpack install`: skills into agents' folders, approved, atomic, idempotent, recorded."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.install import cli, leftovers, make_skill, tree, write_keys
from helpers.registry import Registry

from skillpack._atomic import make_folders, remove_tree
from skillpack.approve.lock import read_lock
from skillpack.errors import IntegrityError, SkillpackError, WriteError
from skillpack.install import place
from skillpack.install.agents import AgentFolder, agent_folder, agent_folders
from skillpack.install.pipeline import install
from skillpack.install.state import STATE_FILE


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository of two skills (one with a 0755 script) and their lock."""
    root = tmp_path / "repo"
    make_skill(root, "alpha", files={"data/table.csv": "a,b\n1,2\n"},
               scripts={"scripts/run.sh": "#!/bin/sh\necho alpha\n"})
    make_skill(root, "beta", files={"notes.md": "beta notes\n"})
    result = cli("lock", root / "alpha", root / "beta", "-o", tmp_path / "skills.lock")
    assert result.exit_code == 0, result.output
    return root


def lock_of(tmp_path: Path, *skills: Path, name: str = "skills.lock") -> Path:
    out = tmp_path / name
    result = cli("lock", *skills, "-o", out)
    assert result.exit_code == 0, result.output
    return out


def folder(path: Path) -> list[AgentFolder]:
    return [AgentFolder(str(path))]


def state(path: Path) -> dict[str, str]:
    data = json.loads((path / STATE_FILE).read_text())
    assert data["format"] == "1"
    return dict(data["skills"])


def test_install_copies_the_file_set_with_its_modes_and_records_it(
        tmp_path: Path, repo: Path) -> None:
    dest = tmp_path / "agent" / "skills"
    (repo / "alpha" / ".skillignore").write_text("scratch.txt\n")
    (repo / "alpha" / "scratch.txt").write_text("left out\n")
    report = install([str(repo)], folder(dest))
    assert [(s.name, s.action) for s in report.steps] == [("alpha", "installed"),
                                                          ("beta", "installed")]
    assert tree(dest / "alpha") == {
        "SKILL.md": (0o644, (repo / "alpha" / "SKILL.md").read_bytes()),
        "data/table.csv": (0o644, b"a,b\n1,2\n"),
        "scripts/run.sh": (0o755, b"#!/bin/sh\necho alpha\n"),
    }
    assert not (dest / "alpha" / ".skillpack").exists()
    lock = read_lock(lock_of(tmp_path, repo / "alpha", repo / "beta", name="after.lock"))
    assert state(dest) == {"alpha": lock.skills["alpha"].digest,
                           "beta": lock.skills["beta"].digest}
    assert sorted(os.listdir(dest)) == [STATE_FILE, "alpha", "beta"]


def test_installing_the_same_digest_again_writes_nothing(tmp_path: Path, repo: Path) -> None:
    dest = tmp_path / "skills"
    install([str(repo)], folder(dest))
    before = {p: os.stat(dest / p).st_mtime_ns for p in
              (STATE_FILE, "alpha", "alpha/SKILL.md", "alpha/scripts/run.sh", "beta")}
    inode = os.stat(dest / "alpha").st_ino
    report = install([str(repo)], folder(dest))
    assert [s.action for s in report.steps] == ["unchanged", "unchanged"]
    assert report.written == 0
    assert {p: os.stat(dest / p).st_mtime_ns for p in before} == before
    assert os.stat(dest / "alpha").st_ino == inode


def test_a_changed_skill_is_replaced_whole(tmp_path: Path, repo: Path) -> None:
    dest = tmp_path / "skills"
    install([str(repo)], folder(dest))
    (repo / "alpha" / "data" / "table.csv").unlink()
    (repo / "alpha" / "extra.md").write_text("new\n")
    report = install([str(repo / "alpha")], folder(dest))
    assert [(s.name, s.action) for s in report.steps] == [("alpha", "updated")]
    assert sorted(tree(dest / "alpha")) == ["SKILL.md", "extra.md", "scripts/run.sh"]
    assert leftovers(dest) == []


def test_the_lock_must_approve_each_skill_as_it_is(tmp_path: Path, repo: Path) -> None:
    lock = read_lock(tmp_path / "skills.lock")
    (repo / "beta" / "notes.md").write_text("changed after approval\n")
    dest = tmp_path / "agent" / "skills"
    with pytest.raises(SkillpackError) as caught:
        install([str(repo)], folder(dest), lock=lock)
    err = caught.value
    assert "the lock does not approve 1 skill(s)" in err.message
    assert err.path == str(repo / "beta")
    assert err.hint and "lock" in err.hint
    [problem] = err.problems
    assert problem.code == "expect-mismatch"
    assert "changed: notes.md" in problem.message
    assert not (tmp_path / "agent").exists()  # nothing written, not even the folder


def test_a_skill_the_lock_does_not_list_is_refused(tmp_path: Path, repo: Path) -> None:
    lock = read_lock(lock_of(tmp_path, repo / "alpha", name="alpha.lock"))
    dest = tmp_path / "skills"
    with pytest.raises(SkillpackError) as caught:
        install([str(repo)], folder(dest), lock=lock)
    assert [p.code for p in caught.value.problems] == ["expect-extra"]
    assert not dest.exists()
    report = install([str(repo)], folder(dest), lock=lock, only=["alpha"])
    assert [(s.name, s.action) for s in report.steps] == [("alpha", "installed")]
    assert sorted(os.listdir(dest)) == [STATE_FILE, "alpha"]


def test_skill_picks_a_subset_and_refuses_a_name_no_source_holds(
        tmp_path: Path, repo: Path) -> None:
    dest = tmp_path / "skills"
    with pytest.raises(SkillpackError, match="no source holds a skill named 'gamma'") as caught:
        install([str(repo)], folder(dest), only=["beta", "gamma"])
    assert caught.value.hint == "the sources hold alpha, beta"
    assert not dest.exists()
    install([str(repo)], folder(dest), only=["beta"])
    assert sorted(os.listdir(dest)) == [STATE_FILE, "beta"]


def test_frozen_refuses_a_lock_entry_the_sources_lack(tmp_path: Path, repo: Path) -> None:
    lock = read_lock(tmp_path / "skills.lock")
    dest = tmp_path / "skills"
    with pytest.raises(SkillpackError) as caught:
        install([str(repo / "alpha")], folder(dest), lock=lock, frozen=True)
    assert [p.code for p in caught.value.problems] == ["expect-missing"]
    assert "--frozen" in (caught.value.hint or "")
    assert not dest.exists()
    install([str(repo / "alpha")], folder(dest), lock=lock)  # not frozen: a subset is fine
    install([str(repo)], folder(dest), lock=lock, frozen=True, only=["beta"])
    assert sorted(os.listdir(dest)) == [STATE_FILE, "alpha", "beta"]


def test_prune_removes_only_what_install_put_there(tmp_path: Path, repo: Path) -> None:
    dest = tmp_path / "skills"
    lock = read_lock(tmp_path / "skills.lock")
    install([str(repo)], folder(dest), lock=lock)
    hand = make_skill(dest, "by-hand")  # someone else's skill: never touched
    smaller = read_lock(lock_of(tmp_path, repo / "alpha", name="alpha.lock"))
    report = install([str(repo / "alpha")], folder(dest), lock=smaller, prune=True)
    assert [(s.name, s.action) for s in report.steps] == [("alpha", "unchanged"),
                                                          ("beta", "pruned")]
    assert sorted(os.listdir(dest)) == [STATE_FILE, "alpha", "by-hand"]
    assert list(state(dest)) == ["alpha"]
    assert (hand / "SKILL.md").exists()
    assert leftovers(dest) == []


def test_prune_keeps_a_skill_changed_since_it_was_installed(tmp_path: Path,
                                                            repo: Path) -> None:
    dest = tmp_path / "skills"
    install([str(repo)], folder(dest), lock=read_lock(tmp_path / "skills.lock"))
    (dest / "beta" / "notes.md").write_text("edited in place\n")
    smaller = read_lock(lock_of(tmp_path, repo / "alpha", name="alpha.lock"))
    report = install([str(repo / "alpha")], folder(dest), lock=smaller, prune=True)
    kept = [s for s in report.steps if s.name == "beta"]
    assert [(s.action, s.reason) for s in kept] == [
        ("kept", "changed since it was installed: not removed; remove it by hand")]
    assert (dest / "beta" / "notes.md").read_text() == "edited in place\n"


def test_prune_with_no_source_removes_the_last_skills_the_lock_no_longer_lists(
        tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The approver withdrew everything: --prune against the lock alone empties what install
    filled, and keeps what it did not write or what was changed since."""
    monkeypatch.chdir(tmp_path)
    result = cli("install", repo, "--agent", "claude-code", "--agent", "codex", "--lock",
                 "skills.lock")
    assert result.exit_code == 0, result.output
    make_skill(tmp_path / ".claude" / "skills", "by-hand")  # someone else's: never touched
    (tmp_path / ".agents" / "skills" / "beta" / "notes.md").write_text("edited in place\n")
    empty = cli("lock", repo, "--exclude", "*", "-o", "empty.lock")
    assert empty.exit_code == 0, empty.output
    result = cli("install", "--agent", "claude-code", "--agent", "codex", "--lock",
                 "empty.lock", "--prune", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [(s["folder"], s["name"], s["action"]) for s in document["skills"]] == [
        (".claude/skills", "alpha", "pruned"), (".claude/skills", "beta", "pruned"),
        (".agents/skills", "alpha", "pruned"), (".agents/skills", "beta", "kept")]
    assert document["written"] == 3
    assert sorted(os.listdir(tmp_path / ".claude" / "skills")) == ["by-hand"]
    assert sorted(os.listdir(tmp_path / ".agents" / "skills")) == [STATE_FILE, "beta"]
    assert list(state(tmp_path / ".agents" / "skills")) == ["beta"]
    # the skills the lock still lists stay as they are, and a second run has nothing to do
    result = cli("install", "--agent", "claude-code", "--lock", "skills.lock", "--prune")
    assert (result.exit_code, result.stdout) == (0, "0 written, 0 unchanged, in 1 folder(s)\n")


def test_install_with_no_source_is_a_usage_error_unless_it_prunes(
        tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for args, said in [((), "give the SOURCES"), (("--prune",), "--prune compares with a "
                                                   "lock"),
                       (("--prune", "--lock", "skills.lock", "--frozen"), "--frozen is about "
                        "the SOURCES"),
                       (("--prune", "--lock", "skills.lock", "--skill", "alpha"), "--skill is "
                        "about the SOURCES")]:
        result = cli("install", "--agent", "claude-code", *args)
        assert result.exit_code == 2, (args, result.output)
        assert said in result.stderr
    assert not (tmp_path / ".claude").exists()


def test_prune_of_a_recorded_skill_no_longer_there_writes_nothing(
        tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its record is forgotten, and it is not counted as written: nothing was removed."""
    monkeypatch.chdir(tmp_path)
    assert cli("install", repo, "--into", "out", "--lock", "skills.lock").exit_code == 0
    remove_tree(str(tmp_path / "out" / "beta"))
    lock_of(tmp_path, repo / "alpha", name="alpha.lock")
    result = cli("install", repo / "alpha", "--into", "out", "--lock", "alpha.lock", "--prune")
    assert result.exit_code == 0, result.output
    assert "forgotten" in result.stdout and "beta  -> out (no longer there" in result.stdout
    assert result.stdout.endswith("0 written, 2 unchanged, in 1 folder(s)\n")
    assert list(state(tmp_path / "out")) == ["alpha"]


def test_a_place_held_by_someone_elses_skill_refuses_the_install(tmp_path: Path,
                                                                 repo: Path) -> None:
    dest = tmp_path / "skills"
    make_skill(dest, "beta", body="a different beta\n")
    before = tree(dest)
    with pytest.raises(SkillpackError, match="skillpack did not install") as caught:
        install([str(repo)], folder(dest))
    assert caught.value.path == str(dest / "beta")
    assert tree(dest) == before  # alpha was not written either
    # the same content, put there by hand, is left alone and not claimed
    dest2 = tmp_path / "skills2"
    os.makedirs(dest2)
    os.system(f"cp -rp {repo / 'beta'} {dest2 / 'beta'}")
    report = install([str(repo / "beta")], folder(dest2))
    assert [s.action for s in report.steps] == ["present"]
    assert not (dest2 / STATE_FILE).exists()


def test_a_link_out_of_the_project_is_replaced_not_kept(tmp_path: Path, repo: Path) -> None:
    """A skill of install's that became a symbolic link out of the project (which `verify`
    refuses) is written again as a copy, though the link's target has the same digest; one
    that is not install's is in the way. The target is left as it was."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    dest = project / ".claude" / "skills"
    lock = read_lock(tmp_path / "skills.lock")
    install([str(repo)], folder(dest), lock=lock, project=str(project))
    os.system(f"cp -rp {repo / 'beta'} {elsewhere}")
    for name in ("beta",):
        os.system(f"rm -rf {dest / name}")
        os.symlink(elsewhere, dest / name)
    report = install([str(repo)], folder(dest), lock=lock, project=str(project))
    assert [(s.name, s.action) for s in report.steps] == [("alpha", "unchanged"),
                                                          ("beta", "updated")]
    assert not os.path.islink(dest / "beta") and (dest / "beta" / "notes.md").is_file()
    assert (elsewhere / "notes.md").is_file()
    other = project / ".agents" / "skills"
    other.mkdir(parents=True)
    os.symlink(elsewhere, other / "beta")  # someone else's link
    with pytest.raises(SkillpackError, match="skillpack did not install"):
        install([str(repo / "beta")], folder(other), project=str(project))
    inside = project / "copies" / "beta"
    os.system(f"mkdir -p {inside.parent} && cp -rp {repo / 'beta'} {inside}")
    os.unlink(other / "beta")
    os.symlink(inside, other / "beta")  # a link inside the project: verified there
    report = install([str(repo / "beta")], folder(other), project=str(project))
    assert [s.action for s in report.steps] == ["present"]


def test_a_folder_that_cannot_be_made_writes_nothing(tmp_path: Path, repo: Path) -> None:
    """A folder the check passes (root may write anywhere /proc allows) but that cannot be
    made: a WriteError naming it, and no other folder is written."""
    good = tmp_path / "good"
    with pytest.raises(WriteError) as caught:
        install([str(repo)], [AgentFolder(str(good)), AgentFolder("/proc/skillpack/skills")])
    assert caught.value.path in ("/proc/skillpack/skills", "/proc/skillpack")
    assert caught.value.hint
    assert not good.exists()


def test_a_skill_a_thousand_folders_deep_installs_and_unpacks(tmp_path: Path) -> None:
    """A skill `check`, `lock` and `pack` take (1,100 folders deep, under 4,096 bytes of
    path) installs and unpacks too: folders are made and removed a level at a time, not by
    os.makedirs and shutil.rmtree, which recurse past Python's limit."""
    try:
        skill = make_skill(tmp_path / "src", "deep")
        inner = skill.joinpath(*["d"] * 1_100)
        make_folders(inner)
        (inner / "x.txt").write_text("deep\n")
        lock = lock_of(tmp_path, skill)
        packed = cli("pack", skill, "-o", tmp_path / "out")
        assert packed.exit_code == 0, packed.output
        [archive] = (tmp_path / "out").iterdir()
        for source in (skill, archive):
            dest = tmp_path / f"agents-{source.name}"
            report = install([str(source)], folder(dest), lock=read_lock(lock))
            assert [s.action for s in report.steps] == ["installed"]
            assert (dest / "deep").joinpath(*["d"] * 1_100, "x.txt").read_text() == "deep\n"
            report = install([str(source)], folder(dest), lock=read_lock(lock))
            assert [s.action for s in report.steps] == ["unchanged"]
        unpacked = cli("unpack", archive, "-o", tmp_path / "unpacked")
        assert unpacked.exit_code == 0, unpacked.output
    finally:  # pytest's own clean-up of tmp_path recurses once a folder
        for child in tmp_path.iterdir():
            remove_tree(child)


def test_a_folder_that_cannot_be_written_is_refused_before_anything(tmp_path: Path,
                                                                    repo: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / ".claude").write_text("a file where a folder must be\n")
    good = tmp_path / "good"
    with pytest.raises(WriteError) as caught:
        install([str(repo)], [AgentFolder(str(good)),
                              AgentFolder(str(tmp_path / "project" / ".claude" / "skills"))])
    assert caught.value.path == str(tmp_path / "project" / ".claude" / "skills")
    assert "is not a folder" in caught.value.message
    assert caught.value.hint
    assert not good.exists()


def test_an_error_mid_run_leaves_no_half_skill(tmp_path: Path, repo: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    dest = tmp_path / "skills"
    real_rename = os.rename
    calls: list[str] = []

    def rename(src: str, dst: str) -> None:
        calls.append(dst)
        if os.path.basename(dst) == "beta":
            raise OSError(28, "No space left on device")
        real_rename(src, dst)

    monkeypatch.setattr(place.os, "rename", rename)
    with pytest.raises(WriteError, match="cannot install skill 'beta'") as caught:
        install([str(repo)], folder(dest))
    assert caught.value.path == str(dest / "beta")
    assert sorted(os.listdir(dest)) == [STATE_FILE, "alpha"]  # alpha whole, beta absent
    assert "scripts/run.sh" in tree(dest / "alpha")
    assert list(state(dest)) == ["alpha"]
    assert leftovers(dest) == []
    monkeypatch.setattr(place.os, "rename", real_rename)
    report = install([str(repo)], folder(dest))
    assert [s.action for s in report.steps] == ["unchanged", "installed"]


def test_a_failure_before_any_skill_is_placed_leaves_no_folder(
        tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent folder made for the install is removed again when nothing was placed in it
    (a failed write here; Ctrl-C or SIGTERM take the same path)."""
    dest = tmp_path / "project" / ".claude" / "skills"

    def rename(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(place.os, "rename", rename)
    with pytest.raises(WriteError, match="cannot install skill 'alpha'"):
        install([str(repo)], folder(dest))
    assert not (tmp_path / "project").exists()


def test_a_source_changed_after_it_was_judged_is_not_installed(
        tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dest = tmp_path / "skills"
    real = place.read_regular

    def read(path: str) -> bytes:
        data = real(path)
        return data + b"tampered" if path.endswith("notes.md") else data

    monkeypatch.setattr(place, "read_regular", read)
    with pytest.raises(IntegrityError, match="changed since it was verified"):
        install([str(repo)], folder(dest))
    assert not (dest / "beta").exists()
    assert leftovers(dest) == []


def test_a_stale_temp_folder_of_a_dead_writer_is_cleaned(tmp_path: Path, repo: Path) -> None:
    dest = tmp_path / "skills"
    dest.mkdir()
    stale = dest / ".alpha.skillpack-tmp-999999999-abcd1234"
    make_skill(stale.parent, stale.name)
    install([str(repo)], folder(dest))
    assert leftovers(dest) == []


def test_names_that_would_escape_the_folder_are_refused(tmp_path: Path, repo: Path) -> None:
    dest = tmp_path / "skills"
    dest.mkdir()
    (dest / STATE_FILE).write_text(json.dumps(
        {"format": "1", "skills": {"../outside": "blake3:" + "0" * 64}}))
    with pytest.raises(SkillpackError, match="would not be a folder directly inside") as bad:
        install([str(repo)], folder(dest), lock=read_lock(tmp_path / "skills.lock"),
                prune=True)
    assert bad.value.path == str(dest / STATE_FILE)  # the file to restore or remove
    assert "'../outside'" in bad.value.message and "remove it" in (bad.value.hint or "")
    assert sorted(os.listdir(dest)) == [STATE_FILE]
    bad = tmp_path / "bad"
    make_skill(bad, "evil")
    (bad / "evil" / "SKILL.md").write_text("---\nname: ../evil\ndescription: escapes.\n---\n")
    with pytest.raises(SkillpackError):
        install([str(bad / "evil")], folder(tmp_path / "other"))
    assert not (tmp_path / "other").exists()
    assert not (tmp_path / "evil").exists()


def test_agent_folders_follow_vercel_skills_table(tmp_path: Path) -> None:
    assert agent_folder("claude-code") == os.path.join(".claude", "skills")
    assert agent_folder("codex") == os.path.join(".agents", "skills")
    assert agent_folder("claude-code", user=True, home="/h", environ={}) == "/h/.claude/skills"
    assert agent_folder("claude-code", user=True, home="/h",
                        environ={"CLAUDE_CONFIG_DIR": "/c"}) == "/c/skills"
    assert agent_folder("codex", user=True, home="/h", environ={}) == "/h/.agents/skills"
    assert agent_folder("cursor", user=True, home="/h", environ={}) == "/h/.cursor/skills"
    shared = agent_folders(["codex", "cursor", "claude-code"])
    assert [(f.path, f.agents, f.targets) for f in shared] == [
        (os.path.join(".agents", "skills"), ("codex", "cursor"), ("codex",)),
        (os.path.join(".claude", "skills"), ("claude-code",), ("claude-code",))]
    with pytest.raises(SkillpackError, match="unknown agents 'vim', 'emacs'") as caught:
        agent_folders(["vim", "claude-code", "emacs"])
    assert caught.value.hint and "claude-code" in caught.value.hint


def test_a_skill_over_an_agents_limit_is_refused_for_that_agent(tmp_path: Path) -> None:
    long = make_skill(tmp_path / "src", "wordy")
    (long / "SKILL.md").write_text("---\nname: wordy\ndescription: " + "x" * 1100
                                   + "\n---\nbody\n")
    with pytest.raises(SkillpackError) as caught:
        install([str(long)], [AgentFolder(str(tmp_path / "codex"), ("codex",), ("codex",))])
    assert any("codex" in p.message for p in caught.value.located())
    assert not (tmp_path / "codex").exists()


# the command line


def test_cli_install_then_verify_agents(tmp_path: Path, repo: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("install", repo, "--agent", "claude-code", "--agent", "codex",
                 "--lock", "skills.lock", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["written"] == 4
    assert [f["path"] for f in data["folders"]] == [".claude/skills", ".agents/skills"]
    assert {s["action"] for s in data["skills"]} == {"installed"}
    result = cli("install", repo, "--agent", "claude-code", "--lock", "skills.lock")
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith("0 written, 2 unchanged, in 1 folder(s)\n")
    result = cli("verify", "--lock", "skills.lock", "--agent", "claude-code", "--agent", "codex")
    assert result.exit_code == 0, result.output
    assert result.stdout.count("ok  ") == 4


def test_cli_install_refusals_exit_1_and_write_nothing(tmp_path: Path, repo: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("install", repo, "--agent", "vim")
    assert result.exit_code == 2  # a bad option value is a usage error
    assert "unknown agent 'vim'" in result.stderr and "--into" in result.stderr
    result = cli("install", repo, "--agent", "vim", "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["problems"][0]["code"] == "usage"
    result = cli("install", repo, "--agent", "claude-code", "--skill", "nope", "--json")
    assert result.exit_code == 1
    assert "no source holds a skill named 'nope'" in json.loads(result.stdout)["error"]
    assert not (tmp_path / ".claude").exists()
    assert cli("install", repo).exit_code == 2  # where to?
    assert cli("install", tmp_path / "missing", "--into", "x").exit_code == 2
    for misuse in ("--prune", "--frozen"):  # each compares with a lock
        result = cli("install", repo, "--into", "x", misuse)
        assert result.exit_code == 2
        assert f"{misuse} compares with a lock" in result.stderr


def test_cli_install_with_a_signed_lock(tmp_path: Path, repo: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    private, public = write_keys(tmp_path / "keys")
    _, other = write_keys(tmp_path / "other")
    result = cli("lock", repo, "-o", "signed.lock", "--sign", private)
    assert result.exit_code == 0, result.output
    signature = tmp_path / "signed.lock.intoto.json"
    result = cli("install", repo, "--into", "out", "--lock", "signed.lock",
                 "--signature", signature, "--signer", other)
    assert result.exit_code == 1
    assert not (tmp_path / "out").exists()
    result = cli("install", repo, "--into", "out", "--lock", "signed.lock",
                 "--signature", signature, "--signer", public)
    assert result.exit_code == 0, result.output
    assert sorted(os.listdir(tmp_path / "out")) == [STATE_FILE, "alpha", "beta"]


def test_install_from_a_well_known_site(tmp_path: Path, repo: Path,
                                        serve: Callable[[Path], str]) -> None:
    site = tmp_path / "site"
    result = cli("export", "well-known", repo, "-o", site)
    assert result.exit_code == 0, result.output
    url = serve(site)
    dest = tmp_path / "skills"
    lock = read_lock(tmp_path / "skills.lock")
    report = install([url], folder(dest), lock=lock)
    assert [(s.name, s.action) for s in report.steps] == [("alpha", "installed"),
                                                          ("beta", "installed")]
    assert tree(dest / "alpha")["scripts/run.sh"][0] == 0o755
    archive = site / ".well-known" / "agent-skills" / "beta.zip"
    archive.write_bytes(archive.read_bytes() + b"\0")
    with pytest.raises(IntegrityError, match="the index says sha256:") as caught:
        install([url], folder(tmp_path / "again"))
    assert caught.value.path == url + "/.well-known/agent-skills/beta.zip"
    assert not (tmp_path / "again").exists()
    with pytest.raises(SkillpackError, match="HTTP 404"):
        install([url + "/nothing-here"], folder(tmp_path / "again"))


@pytest.mark.parametrize("count", [100_000, 400_000])
def test_an_index_of_many_bad_entries_names_five(tmp_path: Path, count: int,
                                                 serve: Callable[[Path], str]) -> None:
    """Each bad entry was named: an index of 400,000 `{}` gave a 1.6 MB message. Now five,
    then how many more: as long for 400,000 as for 100,000."""
    index = tmp_path / "site" / ".well-known" / "agent-skills" / "index.json"
    index.parent.mkdir(parents=True)
    index.write_text(json.dumps({"skills": [{}] * count}))
    with pytest.raises(SkillpackError) as caught:
        install([serve(tmp_path / "site")], folder(tmp_path / "skills"))
    assert f"{count:,} index entries skillpack cannot read" in caught.value.message
    assert f"{{}}; {{}}; and {count - 5:,} more" in caught.value.message
    assert len(caught.value.message) < 400
    assert not (tmp_path / "skills").exists()


def test_deploy_md_lists_every_agent_folder_as_the_code_has_it() -> None:
    from skillpack.install.agents import AGENTS

    text = (Path(__file__).parents[2] / "docs" / "DEPLOY.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        cells = [c.strip().strip("`") for c in line.strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 4:
            rows[cells[0]] = (cells[1], cells[2], cells[3] or None)
    bases = {"home": "~", "config": "~/.config", "claude": "~/.claude"}
    assert rows == {a.name: (a.project, f"{bases[a.base]}/{a.user}", a.target)
                    for a in AGENTS.values()}


@pytest.mark.registry
def test_an_oci_reference_is_pulled_verified_and_installed(tmp_path: Path, repo: Path,
                                                          reg: Registry) -> None:
    """`install oci://REGISTRY/REPO:TAG` against a real registry: what `push` wrote is
    pulled, checked against the lock and installed with its modes; a tag the lock does not
    approve (another skill pushed under it) is refused and nothing is written."""
    pushed = cli("push", repo / "alpha", f"{reg.host}/skills/alpha:v1", "--plain-http")
    assert pushed.exit_code == 0, pushed.output
    dest = tmp_path / "agent" / "skills"
    result = cli("install", f"oci://{reg.host}/skills/alpha:v1", "--plain-http", "--into",
                 dest, "--lock", tmp_path / "skills.lock", "--json")
    assert result.exit_code == 0, result.output
    assert [(s["name"], s["action"]) for s in json.loads(result.stdout)["skills"]] == [
        ("alpha", "installed")]
    assert tree(dest / "alpha")["scripts/run.sh"][0] == 0o755
    make_skill(tmp_path / "other", "alpha", body="Something else entirely.\n")
    assert cli("push", tmp_path / "other" / "alpha", f"{reg.host}/skills/alpha:v2",
               "--plain-http").exit_code == 0
    again = tmp_path / "again"
    refused = cli("install", f"oci://{reg.host}/skills/alpha:v2", "--plain-http", "--into",
                  again, "--lock", tmp_path / "skills.lock")
    assert refused.exit_code == 1
    assert "expect-mismatch" in refused.output or "approved digest" in refused.output
    assert not (again / "alpha").exists()
    # a skill of a pushed bundle the lock does not approve is named by the reference, not
    # by the temporary file it was fetched as
    assert cli("bundle", repo / "beta", tmp_path / "other" / "alpha", "-o",
               tmp_path / "b.bundle").exit_code == 0
    assert cli("push", tmp_path / "b.bundle", f"{reg.host}/skills/both:v1",
               "--plain-http").exit_code == 0
    refused = cli("install", f"oci://{reg.host}/skills/both:v1", "--plain-http", "--into",
                  again, "--lock", tmp_path / "skills.lock", "--json")
    assert refused.exit_code == 1
    [problem] = json.loads(refused.stdout)["problems"]
    assert problem["file"] == f"oci://{reg.host}/skills/both:v1/alpha", problem


def test_install_reads_the_skills_lock_reads(tmp_path: Path, repo: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """`install` took no --exclude and ignored skillpack.toml's, so a broken template that
    `lock` and `verify` leave out refused the whole install, even with `--skill` naming
    another; and a second skill of one name was said only once every other refusal was
    fixed."""
    (repo / "template").mkdir()
    (repo / "template" / "SKILL.md").write_text("---\nname: template-x\n---\n")
    (repo / ".git").mkdir()
    (repo / "skillpack.toml").write_text('exclude = ["template/"]\n')
    monkeypatch.chdir(repo)
    assert cli("lock", ".", "-o", "skills.lock").exit_code == 0
    done = cli("install", ".", "--into", "one", "--lock", "skills.lock")
    assert done.exit_code == 0, done.output
    assert sorted(os.listdir("one")) == [STATE_FILE, "alpha", "beta"]
    (repo / "skillpack.toml").unlink()
    assert cli("install", ".", "--into", "two").exit_code == 1  # the template refused
    done = cli("install", ".", "--into", "two", "--exclude", "template/")
    assert done.exit_code == 0 and sorted(os.listdir("two")) == [STATE_FILE, "alpha", "beta"]
    done = cli("install", ".", "--into", "three", "--skill", "beta")
    assert done.exit_code == 0 and sorted(os.listdir("three")) == [STATE_FILE, "beta"]
    # a second alpha beside the broken template: both refusals at once
    make_skill(repo / "other", "alpha", files={"x.md": "another alpha\n"})
    done = cli("install", ".", "--into", "four")
    assert done.exit_code == 1 and not os.path.exists("four")
    assert "[duplicate-name] two different skills are named 'alpha'" in done.output
    assert "template/SKILL.md:1: error: [description-missing]" in done.output
