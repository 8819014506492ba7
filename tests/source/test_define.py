"""Skills authored in code: `define_skill`, checked as a SKILL.md is, written, digested,
packed and bundled like the folder it describes."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import CORPUS_SKILLS
from helpers.skills import make_tree

import skillpack
import skillpack.runtime as rt
from skillpack.errors import ArgumentError, SkillError, WriteError
from skillpack.packing.check import check_skill
from skillpack.skillmd.frontmatter import split_frontmatter
from skillpack.skillmd.skill import parse_skill
from skillpack.source.define import DefinedSkill, define_skill, yaml_quote
from skillpack.source.load import parse_skill_file

NASTY = [
    "plain", "", " leading and trailing ", "key: value # not a comment", "'single'",
    '"double"', "back\\slash", "line\nbreak", "tab\there", "yes", "null", "1.10", "- dash",
    "[not, a, list]", "{not: a map}", "&anchor *alias !tag", "\u00e9t\u00e9 \u6f22\u5b57",
    "emoji \U0001f600", "nel\x85 ls\u2028 ps\u2029", "del\x7f c1\x9b bom\ufeff", "\x00\x01\x1b",
    "\ufffe\uffff", "---", "...", "% directive", "@at `tick`",
]


@pytest.fixture(autouse=True)
def own_tempdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Temporary folders made by pack and write_bundle go here, to be seen removed."""
    folder = tmp_path / "system-tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def restricted_to(*tools: str) -> frozenset[str]:
    return frozenset({*tools, "load_skill", "read_skill_resource"})


def demo() -> DefinedSkill:
    return define_skill(
        name="release-helper",
        description="Drafts release notes from git history. Use when preparing a release.",
        instructions="# Release helper\n\nRun `scripts/notes.sh`, then read `docs/style.md`.\n",
        resources={"scripts/notes.sh": "#!/bin/sh\ngit log --oneline\n",
                   "docs/style.md": "Keep it short.\n",
                   "data/logo.bin": bytes(range(256))},
        executable=["scripts/notes.sh"],
        allowed_tools=["Read", "Bash(git:*)"],
    )


# -- the SKILL.md text ----------------------------------------------------------------------

@pytest.mark.parametrize("text", NASTY)
def test_any_text_reads_back_as_it_was(text: str) -> None:
    data = split_frontmatter(f"---\nvalue: {yaml_quote(text)}\n---\n").data
    assert data == {"value": text}


def test_the_skill_md_it_writes(tmp_path: Path) -> None:
    defined = demo()
    assert defined.text == (
        "---\n"
        'name: "release-helper"\n'
        'description: "Drafts release notes from git history. Use when preparing a release."\n'
        "allowed-tools:\n"
        '  - "Read"\n'
        '  - "Bash(git:*)"\n'
        "---\n"
        "# Release helper\n\nRun `scripts/notes.sh`, then read `docs/style.md`.\n")
    again = parse_skill(defined.text)
    assert again.allowed_tools == ("Read", "Bash(git:*)")
    assert again.body == "# Release helper\n\nRun `scripts/notes.sh`, then read `docs/style.md`.\n"
    assert [f.path for f in defined.files] == [
        "SKILL.md", "data/logo.bin", "docs/style.md", "scripts/notes.sh"]


def test_description_instructions_and_license_round_trip() -> None:
    description = "Uses: colons, #hashes, 'quotes' and \"more\"; \u00e9t\u00e9 \U0001f600."
    instructions = "# Title\r\n\r\nBody with --- inside\n---\nstill body\n"
    defined = define_skill(name="round-trip", description=description,
                           instructions=instructions, license="MIT: see \"LICENSE\"",
                           compatibility="Python >=3.11")
    assert defined.skill.description == description
    assert defined.skill.body == instructions.replace("\r\n", "\n")  # written as read
    assert defined.skill.license == 'MIT: see "LICENSE"'
    assert defined.skill.compatibility == "Python >=3.11"
    assert defined.skill.allowed_tools is None
    assert "allowed-tools" not in defined.text


# -- written, digested, packed, bundled -----------------------------------------------------

def test_write_makes_the_folder_it_describes(tmp_path: Path) -> None:
    defined = demo()
    folder = defined.write(tmp_path / "skills")
    assert folder == tmp_path / "skills" / "release-helper"
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) \
        == ["SKILL.md", "data/logo.bin", "docs/style.md", "scripts/notes.sh"]
    assert (folder / "SKILL.md").read_text(encoding="utf-8") == defined.text
    assert (folder / "data/logo.bin").read_bytes() == bytes(range(256))
    assert stat.S_IMODE((folder / "scripts/notes.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((folder / "docs/style.md").stat().st_mode) == 0o644
    assert check_skill(folder).problems == ()
    assert os.listdir(tmp_path / "skills") == ["release-helper"]  # no staging folder left


def test_digest_of_a_defined_skill_is_that_of_its_folder(tmp_path: Path) -> None:
    defined = demo()
    folder = defined.write(tmp_path)
    assert skillpack.digest(defined) == skillpack.digest(folder) == defined.digest
    other = define_skill(name="release-helper", description=defined.skill.description,
                         instructions=defined.skill.body, resources={"docs/style.md": "x\n"})
    assert skillpack.digest(other) != defined.digest


def test_write_refuses_a_folder_already_there(tmp_path: Path) -> None:
    parent = make_tree(tmp_path / "skills", {"release-helper/keep.txt": "mine\n"})
    with pytest.raises(WriteError, match="already exists"):
        demo().write(parent)
    assert os.listdir(parent) == ["release-helper"]
    assert os.listdir(parent / "release-helper") == ["keep.txt"]


def test_write_that_fails_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    blocker = tmp_path / "out" / "file"
    blocker.write_text("not a folder\n")
    with pytest.raises(WriteError, match="cannot create the skill folder"):
        demo().write(blocker)
    assert os.listdir(tmp_path / "out") == ["file"]


def test_pack_of_a_defined_skill_is_byte_identical_to_packing_its_folder(
        tmp_path: Path, own_tempdir: Path) -> None:
    defined = demo()
    [from_code] = skillpack.pack([defined], tmp_path / "a")
    [from_folder] = skillpack.pack([defined.write(tmp_path / "src")], tmp_path / "b")
    assert from_code.name == from_folder.name
    assert from_code.read_bytes() == from_folder.read_bytes()
    [alone] = skillpack.pack(defined, tmp_path / "c")
    assert alone.read_bytes() == from_folder.read_bytes()
    assert os.listdir(own_tempdir) == []  # the temporary folder is gone
    results = skillpack.pack_skills([defined], tmp_path / "d")
    assert results[0].source == "<defined skill release-helper>"


def test_write_bundle_takes_defined_skills_and_folders_together(
        tmp_path: Path, own_tempdir: Path) -> None:
    defined = demo()
    other = make_tree(tmp_path / "src" / "other", {
        "SKILL.md": "---\nname: other\ndescription: Another skill.\n---\nBody.\n"})
    made = skillpack.write_bundle([defined, other], tmp_path / "code.bundle")
    folder = defined.write(tmp_path / "src")
    written = skillpack.write_bundle([folder, other], tmp_path / "disk.bundle")
    assert made.path.read_bytes() == written.path.read_bytes()
    assert [s.source for s in made.skills] == [str(other), "<defined skill release-helper>"]
    assert os.listdir(own_tempdir) == []
    loaded = rt.load(made.path.read_bytes())
    assert loaded["release-helper"].file("docs/style.md").text() == "Keep it short.\n"
    assert loaded.permitted_tools(["release-helper"]) == restricted_to("Read", "Bash")
    assert loaded.permits(["release-helper"], "Bash", ["git", "log"])


# -- refused --------------------------------------------------------------------------------

def codes(err: pytest.ExceptionInfo[SkillError]) -> list[str]:
    return [p.code for p in err.value.problems]


def test_the_same_rules_and_codes_as_a_skill_md(tmp_path: Path) -> None:
    with pytest.raises(SkillError) as info:
        define_skill(name="Bad--Name", description="", instructions="Body.\n")
    folder = make_tree(tmp_path / "Bad--Name", {
        "SKILL.md": '---\nname: "Bad--Name"\ndescription: ""\n---\nBody.\n'})
    from_file = sorted(p.code for p in check_skill(folder).problems if p.severity == "error")
    assert sorted(codes(info)) == from_file
    assert {"name-not-lowercase", "name-double-hyphen", "description-empty"} <= set(codes(info))
    assert "cannot be defined" in str(info.value)
    assert "(and 2 more problems)" in str(info.value)


def test_a_tool_fence_is_checked_as_in_a_skill_md() -> None:
    body = "```tool\nid: broken\n```\n"
    with pytest.raises(SkillError) as info:
        define_skill(name="fenced", description="Has a bad fence.", instructions=body)
    with pytest.raises(SkillError) as direct:
        parse_skill(f"---\nname: fenced\ndescription: x\n---\n{body}")
    assert codes(info) == codes(direct)


def test_an_empty_allowed_tools_list_is_refused_saying_to_omit_it() -> None:
    with pytest.raises(SkillError, match="omit allowed_tools for no restriction") as info:
        define_skill(name="empty", description="Nothing.", instructions="x\n", allowed_tools=[])
    assert codes(info) == ["allowed-tools-empty"]


def test_an_allowed_tools_entry_is_one_tool() -> None:
    with pytest.raises(SkillError, match="is not one tool") as info:
        define_skill(name="two", description="Two in one.", instructions="x\n",
                     allowed_tools=["Read Write", "Bash(git status:*)", " "])
    assert codes(info) == ["allowed-tools-entry", "allowed-tools-entry"]
    made = define_skill(name="gen", description="From a generator.", instructions="x\n",
                        allowed_tools=(t for t in ["Read"]))
    assert made.skill.allowed_tools == ("Read",)


def test_every_problem_is_reported_at_once() -> None:
    key = b"-----BEGIN " + b"RSA PRIVATE KEY-----\nMIIE\n-----END " + b"RSA PRIVATE KEY-----\n"
    with pytest.raises(SkillError) as info:
        define_skill(
            name="Many", description="Several problems.", instructions="x\n",
            allowed_tools=[],
            resources={
                ".env": "TOKEN=1\n", "__pycache__/m.pyc": b"", "skill.md": "x", "SKILL.md": "x",
                "a/../b": "x", "Notes.txt": "x", "notes.txt": "y", "id.txt": key,
                "cafe\u0301.md": "x", "docs": "x", "docs/a.md": "x", ".skillpack/x": "x",
            },
            executable=["missing.sh"])
    found = codes(info)
    assert sorted(found) == sorted([
        "allowed-tools-empty", "secret", "resource-left-out", "resource-reserved",
        "resource-reserved", "unportable-name", "name-collision", "secret", "unportable-name",
        "name-collision", "resource-left-out", "executable-unknown", "name-not-lowercase"])
    assert "(and 12 more problems)" in str(info.value)


def test_arguments_of_the_wrong_type_are_refused() -> None:
    ok: dict[str, Any] = {"name": "typed", "description": "Typed.", "instructions": "x\n"}
    with pytest.raises(ArgumentError, match="name is a string, not int"):
        define_skill(**{**ok, "name": 3})
    with pytest.raises(ArgumentError, match="allowed_tools is a list"):
        define_skill(**ok, allowed_tools="Read")
    with pytest.raises(ArgumentError, match="an allowed_tools entry is a string"):
        define_skill(**ok, allowed_tools=[1])  # type: ignore[list-item]
    with pytest.raises(ArgumentError, match="resource 'x' is text or bytes"):
        define_skill(**ok, resources={"x": 1})  # type: ignore[dict-item]
    with pytest.raises(ArgumentError, match="resources maps paths"):
        define_skill(**ok, resources=["x"])  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match="executable is a list"):
        define_skill(**ok, resources={"x.sh": "x"}, executable="x.sh")


def test_it_is_exported() -> None:
    assert skillpack.define_skill is define_skill
    assert skillpack.DefinedSkill is DefinedSkill
    assert {"define_skill", "DefinedSkill", "ArgumentError"} <= set(skillpack.__all__)


@pytest.mark.corpus
def test_every_corpus_skill_defined_in_code_reads_back_as_its_skill_md() -> None:
    refused = 0
    for folder in CORPUS_SKILLS:
        original = parse_skill_file(folder)
        errors = sorted(p.code for p in check_skill(folder).problems if p.severity == "error")
        arguments: dict[str, Any] = {
            "name": original.name, "description": original.description,
            "instructions": original.body, "license": original.license,
            "compatibility": original.compatibility,
            "allowed_tools": list(original.allowed_tools) if original.allowed_tools else None}
        if errors:  # the same rules refuse it, with the same codes
            with pytest.raises(SkillError) as info:
                define_skill(**arguments)
            assert sorted(codes(info)) == errors, folder
            refused += 1
            continue
        defined = define_skill(**arguments)
        again = defined.skill
        assert (again.name, again.description, again.body, again.license,
                again.compatibility, again.allowed_tools, again.tools) == (
            original.name, original.description, original.body, original.license,
            original.compatibility, original.allowed_tools, original.tools), folder
    assert refused < len(CORPUS_SKILLS) // 10
