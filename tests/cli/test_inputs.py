"""Inputs a user has: a lowercase skill.md, a path that is not there, a repository holding
node_modules/ and virtualenvs, and an output folder inside the skill being packed."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.cli import cli
from helpers.skills import make_tree

from skillpack import digest
from skillpack.cli import main
from skillpack.errors import MissingPathError, SkillError, SkillpackError
from skillpack.packing.bundle import write_bundle
from skillpack.packing.pack import OUTPUT_RULE, pack, prepare_many
from skillpack.runtime import load
from skillpack.source.discover import Skipped, discover, find_skills
from skillpack.source.load import load_skill, parse_skill_file


def soft(name: str) -> str:
    return f"---\nname: {name}\ndescription: The {name} skill, for tests.\n---\n# {name}\n"


# -- a lowercase skill.md ----------------------------------------------------------------------

RENAME = "rename it to SKILL.md (skill hosts on Linux are case-sensitive"


@pytest.mark.parametrize("spelt", ["skill.md", "Skill.md", "SKILL.MD"])
def test_a_miscased_skill_md_is_named_with_what_to_do(tmp_path: Path, spelt: str) -> None:
    folder = make_tree(tmp_path / "repo" / "low", {spelt: soft("low")})
    with pytest.raises(SkillError) as info:
        parse_skill_file(folder)
    assert [p.code for p in info.value.problems] == ["skill-md-case"]
    assert f"named {spelt!r}, not 'SKILL.md'" in str(info.value)
    assert RENAME in str(info.value)
    found = discover(tmp_path / "repo")
    assert found.skills == (folder,) and found.miscased == (folder / spelt,)
    for target in (folder, folder / spelt, tmp_path / "repo"):
        checked = cli("check", target)
        assert checked.exit_code == 1
        assert f"{folder / spelt}: error: [skill-md-case]" in checked.stdout
        assert "no SKILL.md found" not in checked.output


@pytest.mark.parametrize("command", ["pack", "digest", "files", "bundle"])
def test_every_command_says_rename_not_no_skill_md(tmp_path: Path, command: str) -> None:
    folder = make_tree(tmp_path / "low", {"skill.md": soft("low")})
    args: list[object] = [command, folder]
    if command in ("pack", "bundle"):
        args += ["-o", tmp_path / ("dist" if command == "pack" else "x.bundle")]
    result = cli(*args)
    assert result.exit_code == 1
    assert RENAME in result.stderr and "no SKILL.md found" not in result.stderr
    assert not (tmp_path / "dist").exists() and not (tmp_path / "x.bundle").exists()


def test_a_correct_skill_md_beside_a_lowercase_one_is_the_skill(tmp_path: Path) -> None:
    folder = make_tree(tmp_path / "ok", {"SKILL.md": soft("ok"), "notes/skill.md": "notes"})
    assert parse_skill_file(folder).name == "ok"
    assert discover(tmp_path).skills == (folder,)


# -- a missing path ----------------------------------------------------------------------------

def test_a_missing_path_is_a_file_not_found_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    for call in (find_skills, load_skill, digest, lambda p: pack(p, tmp_path / "out")):
        with pytest.raises(FileNotFoundError) as info:
            call(missing)
        err = info.value
        assert isinstance(err, MissingPathError) and isinstance(err, SkillpackError)
        assert err.errno == errno.ENOENT and err.filename == str(missing)
        assert str(err).startswith(f"{missing}: no such file or folder")


# -- discovery ---------------------------------------------------------------------------------

def test_discovery_skips_packages_virtualenvs_and_version_control_and_says_so(
        tmp_path: Path) -> None:
    repo = make_tree(tmp_path / "repo", {
        "skills/real/SKILL.md": soft("real"),
        "node_modules/pkg/skills/vendored/SKILL.md": soft("vendored"),
        ".venv/lib/site/thing/SKILL.md": soft("thing"),
        "venv/x/SKILL.md": soft("x"),
        "env3/pyvenv.cfg": "home = /usr/bin\n",
        "env3/lib/y/SKILL.md": soft("y"),
        ".git/hooks/z/SKILL.md": soft("z"),
        "__pycache__/w/SKILL.md": soft("w"),
    })
    found = discover(repo)
    assert found.skills == (repo / "skills" / "real",)
    assert found.skipped == (
        Skipped(f"{repo}/.git/", "version control"),
        Skipped(f"{repo}/.venv/", "a Python virtualenv"),
        Skipped(f"{repo}/env3/", "a Python virtualenv"),
        Skipped(f"{repo}/node_modules/", "node packages"),
        Skipped(f"{repo}/venv/", "a Python virtualenv"),
    )
    checked = cli("check", repo)
    assert checked.exit_code == 0
    assert checked.stderr.splitlines() == [
        f"skillpack: skipped {s.path} ({s.reason}: never searched for skills)"
        for s in found.skipped]
    assert "checked 1 skill: 1 valid" in checked.stdout


def test_a_skill_folder_given_itself_is_never_skipped(tmp_path: Path) -> None:
    folder = make_tree(tmp_path / "venv", {"SKILL.md": soft("venv")})
    assert find_skills(folder) == [folder]
    assert cli("check", folder).stderr == ""


# -- an output inside the skill ----------------------------------------------------------------

def test_pack_into_the_skill_three_times_gives_one_digest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skill = make_tree(tmp_path / "soft", {"SKILL.md": soft("soft"), "notes.txt": "notes\n"})
    alone = digest(skill)
    monkeypatch.chdir(skill)
    outputs = []
    for time in range(3):
        result = cli("pack", ".", "-o", "dist", "--json")
        assert result.exit_code == 0, result.output
        (packed,) = json.loads(result.stdout)
        assert packed["written"] is (time == 0)
        outputs.append(packed["digest"])
        note = (f"skillpack: left out dist/ of skill 'soft': {OUTPUT_RULE}; add it to "
                ".skillignore so that `digest` and `check` leave it out too\n")
        assert result.stderr == ("" if time == 0 else note)
    assert outputs[0] == outputs[1] == outputs[2]
    assert [p.name for p in (skill / "dist").iterdir()] == [f"soft-{alone[7:23]}.skill"]
    (skill / ".skillignore").write_text("dist/\n", encoding="utf-8")
    assert digest(skill) == alone


def test_the_prepared_path_leaves_the_output_out_too(tmp_path: Path) -> None:
    skill = make_tree(tmp_path / "soft", {"SKILL.md": soft("soft"), "dist/old.skill": "x"})
    (prepared,) = prepare_many([skill], outputs=[skill / "dist"])
    assert prepared.manifest.digest == digest(make_tree(tmp_path / "b" / "soft",
                                                        {"SKILL.md": soft("soft")}))
    assert [(x.path, x.rule) for x in prepared.fileset.left_out] == [("dist/", OUTPUT_RULE)]


def test_pack_into_the_skill_folder_itself_is_refused(tmp_path: Path) -> None:
    skill = make_tree(tmp_path / "soft", {"SKILL.md": soft("soft")})
    result = cli("pack", skill, "-o", skill)
    assert result.exit_code == 1
    assert "the output folder is the skill folder itself" in result.stderr
    assert sorted(p.name for p in skill.iterdir()) == ["SKILL.md"]


def test_a_bundle_written_inside_the_skill_is_not_carried_by_the_next(tmp_path: Path) -> None:
    skill = make_tree(tmp_path / "soft", {"SKILL.md": soft("soft")})
    first = write_bundle([skill], skill / "out" / "all.bundle")
    second = write_bundle([skill], skill / "out" / "all.bundle")
    assert first.digest == second.digest
    assert load((skill / "out" / "all.bundle").read_bytes())["soft"].files() == ("SKILL.md",)


def test_notes_reach_each_listener_once_and_change_no_result(tmp_path: Path) -> None:
    from skillpack.source import notes

    repo = make_tree(tmp_path / "repo", {"a/SKILL.md": soft("a"),
                                         "node_modules/b/SKILL.md": soft("b")})
    heard: list[str] = []
    notes.listen(heard.append)
    notes.listen(heard.append)
    try:
        assert find_skills(repo) == [repo / "a"]
    finally:
        notes.unlisten(heard.append)
    assert heard == [f"skipped {repo}/node_modules/ (node packages: never searched for skills)"]
    assert find_skills(repo) == [repo / "a"]
    assert len(heard) == 1


# -- linked skill folders, as vercel's `skills` installs them ----------------------------------

def test_a_linked_skill_folder_inside_the_project_is_found_once_and_others_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`.claude/skills/x -> ../../.agents/skills/x` (vercel's default) and `.claude/skills ->
    ../skills` were passed over without a word: `check .agents/skills` said no SKILL.md,
    `bundle .claude/skills` left linked skills out, while `verify` followed them."""
    project = make_tree(tmp_path / "project", {"skills/alpha/SKILL.md": soft("alpha"),
                                               "elsewhere/SKILL.md": soft("elsewhere")})
    (project / ".agents" / "skills").mkdir(parents=True)
    (project / ".agents" / "skills" / "alpha").symlink_to("../../skills/alpha")
    (project / ".claude").mkdir()
    (project / ".claude" / "skills").symlink_to("../skills")
    outside = make_tree(tmp_path / "outside" / "beta", {"SKILL.md": soft("beta")})
    (project / ".agents" / "skills" / "beta").symlink_to(outside)
    (project / ".agents" / "skills" / "gone").symlink_to("nothing")
    (project / ".agents" / "skills" / "loop").symlink_to("loop")
    (project / ".agents" / "skills" / "here").symlink_to(".")  # searched once, said nothing
    monkeypatch.chdir(project)
    found = discover(".agents/skills")
    assert found.skills == (Path("skills/alpha"),)
    assert [(s.path, s.reason) for s in found.skipped] == [
        (".agents/skills/beta", f"a symbolic link to {outside}, outside the working folder: "
                                "give that folder to read it"),
        (".agents/skills/gone", "a symbolic link to nothing"),
        (".agents/skills/loop", "a symbolic link that loops")]
    assert discover(".claude").skills == (Path("skills/alpha"),)
    assert sorted(s.name for s in discover(".").skills) == ["alpha", "elsewhere"]  # once
    checked = cli("check", ".agents/skills")
    assert checked.exit_code == 0 and "checked 1 skill: 1 valid" in checked.output
    assert "skipped .agents/skills/beta (a symbolic link to" in checked.output
    assert cli("bundle", ".claude/skills", "-o", "b.bundle").exit_code == 0
    assert load(Path("b.bundle").read_bytes()).names == ("alpha",)


def test_a_folder_named_in_no_utf_8_is_escaped_alike_and_json_stays_utf_8(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder `caf\\xe9` (a Latin-1 name): every --json document held the raw byte (no
    longer UTF-8: a JSON reader failed), and the text showed the raw byte or `\\udce9`."""
    monkeypatch.chdir(tmp_path)
    folder = os.fsdecode(b"skills/caf\xe9")
    make_tree(Path(folder), {"SKILL.md": soft("cafe")})
    make_tree(tmp_path / "skills" / "ok", {"SKILL.md": soft("ok")})
    checked = CliRunner().invoke(main, ["check", "--json", "skills"])
    data = json.loads(checked.stdout_bytes.decode("utf-8"))  # UTF-8, whatever the names
    assert [item["path"] for item in data] == ["skills/caf\\xe9", "skills/ok"]
    packed = cli("pack", "skills", "-o", "out")
    assert packed.exit_code == 1
    assert "skills/caf\\xe9/SKILL.md:2: error: [name-mismatch]" in packed.output
    assert "\udce9" not in packed.output


def test_a_link_named_otherwise_than_its_skill_is_judged_by_the_link_s_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`.agents/skills/foo -> ../../skills/a`: an agent reads a skill 'foo' whose name is
    'a'. `check` of the folder passed it as `skills/a` (the copy in place of the link
    failed, name-mismatch); now it is judged where the agent reads it, and `skills/a`,
    found as itself, is still judged too."""
    project = make_tree(tmp_path / "project", {"skills/a/SKILL.md": soft("a")})
    (project / ".agents" / "skills").mkdir(parents=True)
    (project / ".agents" / "skills" / "foo").symlink_to("../../skills/a")
    monkeypatch.chdir(project)
    assert discover(".agents/skills").skills == (Path(".agents/skills/foo"),)
    checked = cli("check", ".agents/skills")
    assert checked.exit_code == 1
    assert (".agents/skills/foo/SKILL.md:2: error: [name-mismatch] name 'a' must equal its "
            "folder name 'foo'") in checked.output
    everything = cli("check", ".")
    assert everything.exit_code == 1 and "checked 2 skills: 1 valid, 1 invalid" in (
        everything.output)


def test_a_link_to_a_folder_holding_the_one_searched_is_skipped_once_and_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`skills/up -> ..`: `check skills` read `other/b` through it, a skill outside
    `skills/`, and `lock skills` locked it. Now the link is skipped, said once, and `check`,
    `lock` and `verify` read the same skills; a link to a sibling folder is still followed,
    a link to the folder searched searched once, a loop said to loop."""
    project = make_tree(tmp_path / "project", {"skills/a/SKILL.md": soft("a"),
                                               "other/b/SKILL.md": soft("b")})
    (project / "skills" / "up").symlink_to("..")
    (project / "skills" / "deep").mkdir()
    (project / "skills" / "deep" / "top").symlink_to("../..")
    (project / "skills" / "deep" / "back").symlink_to("..")  # the folder searched: once
    (project / "skills" / "root").symlink_to("/")
    (project / "skills" / "dot").symlink_to(".")
    (project / "skills" / "loopa").symlink_to("loopb")
    (project / "skills" / "loopb").symlink_to("loopa")
    monkeypatch.chdir(project)
    checked = cli("check", "--json", "skills")
    assert checked.exit_code == 0
    assert [item["path"] for item in json.loads(checked.stdout)] == ["skills/a"]
    notes = [line for line in checked.stderr.splitlines() if line.startswith("skillpack: ")]
    assert notes == [
        "skillpack: skipped skills/deep/top (a symbolic link to the working folder, which "
        "holds skills, the folder searched: following it would read skills outside skills; "
        "give that folder to read them)",
        "skillpack: skipped skills/loopa (a symbolic link that loops)",
        "skillpack: skipped skills/loopb (a symbolic link that loops)",
        "skillpack: skipped skills/root (a symbolic link to /, outside the working folder: "
        "give that folder to read it)",
        "skillpack: skipped skills/up (a symbolic link to the working folder, which holds "
        "skills, the folder searched: following it would read skills outside skills; give "
        "that folder to read them)"]
    assert cli("lock", "skills", "-o", "skills.lock").exit_code == 0
    assert sorted(json.loads(Path("skills.lock").read_text())["skills"]) == ["a"]
    verified = cli("verify", "--lock", "skills.lock", "skills")
    assert verified.exit_code == 0 and verified.stdout.count("ok ") == 1
    everything = cli("check", "--json", ".")  # from the working folder: b is in it
    assert [item["path"] for item in json.loads(everything.stdout)] == ["other/b", "skills/a"]
    assert "skills/up" not in everything.stderr
    (project / "skills" / "b").symlink_to("../other/b")  # a sibling: followed, as before
    assert [item["path"] for item in json.loads(cli("check", "--json", "skills").stdout)] == [
        "other/b", "skills/a"]
