"""`skillpack unpack`, `catalog`, `tools` and `new`, run as a user runs them (click's runner,
real archives and folders made at test time)."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest
from helpers.cli import cli
from helpers.paths import WAITLIST
from helpers.skills import make_tree
from helpers.zips import anthropic_zip
from skills_ref.prompt import to_prompt

from skillpack import digest
from skillpack.model.calls import tool_definitions
from skillpack.packing.bundle import write_bundle
from skillpack.packing.pack import pack
from skillpack.runtime import load
from skillpack.source.load import parse_skill_file


def root_tar_gz(folder: Path) -> bytes:
    """The .well-known/agent-skills layout: the archive root is the skill folder."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        archive.add(folder, arcname=".")
    return out.getvalue()


# -- unpack ------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [anthropic_zip, root_tar_gz])
def test_unpack_a_foreign_archive_gives_the_folder_it_was_made_from(
        tmp_path: Path, make: object) -> None:
    archive = tmp_path / ("waitlist.skill" if make is anthropic_zip else "waitlist.tar.gz")
    archive.write_bytes(make(WAITLIST))  # type: ignore[operator]
    result = cli("unpack", archive, "-o", tmp_path / "in")
    assert result.exit_code == 0, result.output
    target = tmp_path / "in" / "waitlist"
    assert result.stdout.startswith(f"unpacked waitlist (3 file(s)) into {target}  blake3:")
    assert digest(target) == digest(WAITLIST)
    assert digest(WAITLIST) in result.stdout
    assert cli("check", target).exit_code == 0


def test_unpack_our_own_archive_round_trips_and_leaves_the_manifest_out(tmp_path: Path) -> None:
    (archive,) = pack(WAITLIST, tmp_path / "dist")
    result = cli("unpack", archive, "-o", tmp_path / "in", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["ok"] is True and data["kind"] == "skillpack"
    assert data["digest"] == digest(WAITLIST) == digest(tmp_path / "in" / "waitlist")
    assert data["left_out"] == ["waitlist/.skillpack/manifest.json"]


def test_unpack_refuses_a_tampered_archive_of_ours(tmp_path: Path) -> None:
    (archive,) = pack(WAITLIST, tmp_path / "dist")
    raw = bytearray(archive.read_bytes())
    at = raw.find(b"Manage a product waitlist")
    raw[at] = ord("m")  # SKILL.md no longer hashes to its manifest's record
    archive.write_bytes(bytes(raw))
    result = cli("unpack", archive, "-o", tmp_path / "in")
    assert result.exit_code == 1
    assert not (tmp_path / "in").exists()


def test_unpack_caps_are_options_and_refuse_before_writing(tmp_path: Path) -> None:
    skill = make_tree(tmp_path / "zeros", {
        "SKILL.md": "---\nname: zeros\ndescription: Holds a file of zeros.\n---\nZeros.\n",
        "zeros.bin": b"\0" * (1 << 20),
    })
    archive = tmp_path / "zeros.skill"
    archive.write_bytes(anthropic_zip(skill))
    out = tmp_path / "in"
    ratio = cli("unpack", archive, "-o", out, "--max-ratio", "10")
    assert ratio.exit_code == 1 and "ratio" in ratio.stderr
    total = cli("unpack", archive, "-o", out, "--max-total", "512KiB", "--json")
    assert total.exit_code == 1
    problems = json.loads(total.stdout)["problems"]
    assert problems and all(p["severity"] == "error" for p in problems)
    members = cli("unpack", archive, "-o", out, "--max-members", "1")
    assert members.exit_code == 1
    assert not out.exists()
    assert cli("unpack", archive, "-o", out, "--max-members", "0").exit_code == 2
    assert cli("unpack", archive, "-o", out, "--max-total", "lots").exit_code == 2
    by_default = cli("unpack", archive, "-o", out)  # 1 MiB of zeros deflates about 1000:1
    assert by_default.exit_code == 1 and "ratio" in by_default.stderr
    assert cli("unpack", archive, "-o", out, "--max-ratio", "5000").exit_code == 0
    assert digest(out / "zeros") == digest(skill)


def test_unpack_never_overwrites_a_folder(tmp_path: Path) -> None:
    archive = tmp_path / "waitlist.skill"
    archive.write_bytes(anthropic_zip(WAITLIST))
    make_tree(tmp_path / "in" / "waitlist", {"mine.txt": "keep me"})
    result = cli("unpack", archive, "-o", tmp_path / "in", "--json")
    assert result.exit_code == 1
    assert [p["code"] for p in json.loads(result.stdout)["problems"]] == ["target-exists"]
    assert sorted(p.name for p in (tmp_path / "in" / "waitlist").iterdir()) == ["mine.txt"]


def test_unpack_refuses_what_is_not_an_archive(tmp_path: Path) -> None:
    junk = tmp_path / "notes.skill"
    junk.write_text("just text", encoding="utf-8")
    result = cli("unpack", junk, "-o", tmp_path / "in")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.startswith("skillpack: error: ")


# -- catalog -----------------------------------------------------------------------------------

def _two_skills(tmp_path: Path) -> list[Path]:
    a = make_tree(tmp_path / "alpha", {
        "SKILL.md": "---\nname: alpha\ndescription: Says <hello> & \"waves\",\n  politely.\n"
                    "---\nHi.\n"})
    b = make_tree(tmp_path / "nested" / "beta", {
        "SKILL.md": "---\nname: beta\ndescription: The second one.\n---\nHi.\n"})
    return [b, a]


def test_catalog_xml_is_skills_ref_to_prompt(tmp_path: Path) -> None:
    skills = _two_skills(tmp_path)
    result = cli("catalog", *skills, "--format", "xml")
    assert result.exit_code == 0, result.output
    assert result.stdout == to_prompt(skills) + "\n"
    assert "&lt;hello&gt; &amp; &quot;waves&quot;" in result.stdout


def test_catalog_text_is_the_runtime_catalog_text(tmp_path: Path) -> None:
    """Entries keep the order given (as skills-ref's); a bundle's come sorted by name."""
    skills = _two_skills(tmp_path)[::-1]  # alpha, beta: the bundle's order
    result = cli("catalog", *skills)
    assert result.exit_code == 0, result.output
    bundle = write_bundle(skills, tmp_path / "skills.bundle")
    assert result.stdout == load(bundle.path.read_bytes()).catalog_text()
    from_bundle = cli("catalog", bundle.path)
    assert from_bundle.stdout == result.stdout


def test_catalog_json_and_a_folder_of_skills(tmp_path: Path) -> None:
    _two_skills(tmp_path)
    result = cli("catalog", tmp_path, "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [s["name"] for s in data["skills"]] == ["alpha", "beta"]
    assert data["skills"][0]["location"] == str((tmp_path / "alpha" / "SKILL.md").resolve())
    assert data["skills"][0]["description"] == 'Says <hello> & "waves", politely.'


def test_catalog_refuses_invalid_and_duplicate_skills_in_json_too(tmp_path: Path) -> None:
    bad = make_tree(tmp_path / "bad", {"SKILL.md": "---\nname: Bad\ndescription: x\n---\n"})
    twin = tmp_path / "elsewhere" / "waitlist"
    shutil.copytree(WAITLIST, twin)  # the same skill elsewhere: listed once
    same = cli("catalog", WAITLIST, twin, "--format", "json")
    assert same.exit_code == 0, same.output
    assert [s["name"] for s in json.loads(same.stdout)["skills"]] == ["waitlist"]
    with open(twin / "SKILL.md", "a", encoding="utf-8") as handle:
        handle.write("\nAnother waitlist.\n")  # another skill of the same name
    result = cli("catalog", bad, WAITLIST, twin, WAITLIST, "--format", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["ok"] is False
    codes = {p["code"] for p in data["problems"]}
    assert {"name-not-lowercase", "duplicate-name"} <= codes
    text = cli("catalog", bad)
    assert text.exit_code == 1 and text.stdout == "" and "name-not-lowercase" in text.stderr


def test_catalog_offers_no_skill_that_check_and_pack_refuse(tmp_path: Path) -> None:
    """A skill whose SKILL.md is valid but whose files `pack` refuses (a secret) is not
    listed: `check` and `catalog` give one verdict; -k lists the rest."""
    leaky = make_tree(tmp_path / "leaky", {
        "SKILL.md": "---\nname: leaky\ndescription: Reads notes. Use for notes.\n---\nbody\n",
        "." + "env": "AWS_SECRET_ACCESS_KEY=" + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY\n"})
    assert cli("check", leaky).exit_code == 1
    result = cli("catalog", leaky)
    assert result.exit_code == 1 and result.stdout == ""
    assert "[secret]" in result.stderr
    kept = cli("catalog", "-k", leaky, WAITLIST)
    assert kept.exit_code == 1 and "- waitlist:" in kept.stdout and "leaky" not in kept.stdout


# -- tools -------------------------------------------------------------------------------------

@pytest.mark.parametrize("style", ["anthropic", "openai", "mcp"])
def test_tools_prints_the_native_definitions(style: str) -> None:
    result = cli("tools", WAITLIST, "--format", style)
    assert result.exit_code == 0, result.output
    expected = tool_definitions(parse_skill_file(WAITLIST), style)
    assert json.loads(result.stdout) == expected
    assert [t.get("name") or t["function"]["name"] for t in expected] == [
        "join", "list", "access", "count"]


def test_tools_of_a_skill_without_tools_and_of_a_broken_one(tmp_path: Path) -> None:
    soft = make_tree(tmp_path / "soft", {
        "SKILL.md": "---\nname: soft\ndescription: Only prose.\n---\nProse.\n"})
    assert json.loads(cli("tools", soft).stdout) == []
    broken = make_tree(tmp_path / "broken", {"SKILL.md": "---\nname: [unclosed\n---\n"})
    result = cli("tools", broken)
    assert result.exit_code == 1 and json.loads(result.stdout)["ok"] is False
    assert cli("tools", soft, "--format", "gemini").exit_code == 2


# -- new ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("hard", [False, True])
def test_new_writes_a_skill_that_passes_check(tmp_path: Path, hard: bool) -> None:
    args = ["new", "my-skill", "-o", tmp_path / "skills"] + (["--hard"] if hard else [])
    result = cli(*args)
    assert result.exit_code == 0, result.output
    folder = tmp_path / "skills" / "my-skill"
    checked = cli("check", "--strict", folder)
    assert checked.exit_code == 0, checked.output
    assert "0 errors, 0 warnings" in checked.stdout
    tools = json.loads(cli("tools", folder).stdout)
    assert [t["name"] for t in tools] == (["greet"] if hard else [])
    assert cli("pack", folder, "-o", tmp_path / "dist").exit_code == 0
    if hard:
        assert (folder / "scripts" / "greet.py").stat().st_mode & 0o111


def test_new_defaults_to_the_current_folder_and_never_overwrites(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("new", "one").exit_code == 0
    assert (tmp_path / "one" / "SKILL.md").is_file()
    (tmp_path / "one" / "SKILL.md").write_text("mine", encoding="utf-8")
    again = cli("new", "one", "--json")
    assert again.exit_code == 1
    assert json.loads(again.stdout)["problems"][0]["code"] == "target-exists"
    assert (tmp_path / "one" / "SKILL.md").read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize(("name", "code"), [
    ("My Skill", "name-not-lowercase"),
    ("a--b", "name-double-hyphen"),
    ("../up", "name-invalid-characters"),
])
def test_new_refuses_a_bad_name_and_writes_nothing(tmp_path: Path, name: str, code: str) -> None:
    result = cli("new", name, "-o", tmp_path, "--json")
    assert result.exit_code == 1
    assert code in {p["code"] for p in json.loads(result.stdout)["problems"]}
    assert list(tmp_path.iterdir()) == []
