"""Issue 14 as a user meets it: `--target` on check/pack/bundle, `pack --layout wrapped|root`,
SHA-256 next to BLAKE3 (manifest 1.1, each archive's bytes), and the catalog's cost."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.cli import cli
from helpers.paths import NOTES, WAITLIST
from helpers.skills import make_skill, write_skill
from helpers.zips import zip_members
from helpers.zips import zip_of as zip_of

import skillpack.runtime as rt
from skillpack.errors import ArchiveError
from skillpack.packing.verify import digest

CLAUDE_CODE = """---
name: deploy
description: Deploys the service to an environment when the user asks for a deploy.
when_to_use: the user says deploy, ship or release
argument-hint: "[env]"
disable-model-invocation: true
context: fork
mystery: 1
---
Run the deploy.
"""

UNZIP = shutil.which("unzip")


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def warnings_of(output: str, code: str) -> list[str]:
    return [line for line in output.splitlines() if f"[{code}]" in line]


# -- 1. --target ---------------------------------------------------------------------------

def test_claude_code_keys_draw_no_unknown_key_warning_for_claude_code(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "deploy", CLAUDE_CODE)
    plain = cli("check", skill)
    assert plain.exit_code == 0
    assert len(warnings_of(plain.stdout, "unknown-key")) == 5
    hosted = cli("check", "--target", "claude-code", skill)
    assert hosted.exit_code == 0
    unknown = warnings_of(hosted.stdout, "unknown-key")
    assert len(unknown) == 1 and "'mystery'" in unknown[0]
    # with a host that does not document them, the spec's warnings stay
    both = cli("check", "--target", "claude-code", "--target", "codex", skill)
    assert len(warnings_of(both.stdout, "unknown-key")) == 5


def test_one_report_names_the_host_of_each_problem(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "many", {f"f/{i:03}.txt": "x" for i in range(205)})
    result = cli("check", "--target", "claude-ai", "--target", "mcp",
                 "--target", "openai-api", skill)
    assert result.exit_code == 1
    [error] = [line for line in result.stdout.splitlines() if "error:" in line]
    assert ("[target-too-many-files] claude-ai: 206 files (every member of the archive); "
            "the limit is 200 files") in error
    assert "support.claude.com" in error  # the source of the limit
    assert "checked 1 skill: 0 valid, 1 invalid (1 error" in result.stdout
    data = json.loads(cli("check", "--json", "--target", "claude-ai", skill).stdout)
    assert [p["code"] for p in data[0]["problems"]] == ["target-too-many-files"]


def test_a_host_check_reports_what_the_walk_refuses(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "leaky", {".e" + "nv": "A=1\n"})
    result = cli("check", "--target", "claude-ai", skill)
    assert result.exit_code == 1
    assert "error: [secret] a .env file holds environment secrets" in result.stdout
    assert "checked 1 skill: 0 valid, 1 invalid" in result.stdout
    assert cli("check", skill).exit_code == 1  # check walks as pack does, target or not


def test_an_unknown_target_is_a_usage_error(tmp_path: Path) -> None:
    result = cli("check", "--target", "claude-web", WAITLIST)
    assert result.exit_code == 2 and "claude-web" in result.stderr
    assert "claude-code" in result.stderr  # the known names are listed


def test_pack_refuses_a_skill_over_a_host_limit_and_writes_nothing(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "many", {f"f/{i:03}.txt": "x" for i in range(205)})
    out = tmp_path / "out"
    result = cli("pack", "--target", "claude-ai", skill, "-o", out)
    assert result.exit_code == 1
    message = result.stderr
    assert "claude-ai" in message and "206 files" in message and "200 files" in message
    assert "https://support.claude.com/" in message
    assert not out.exists()
    # the same skill packs for a host that takes it
    assert cli("pack", "--target", "openai-api", skill, "-o", out).exit_code == 0


def test_pack_with_a_target_prints_its_warnings(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "deploy", CLAUDE_CODE)
    result = cli("pack", "--target", "claude-code", "--catalog-budget", "40", skill,
                 "-o", tmp_path / "out")
    assert result.exit_code == 0
    [budget] = warnings_of(result.stdout, "target-catalog-budget")
    listed = len("Deploys the service to an environment when the user asks for a deploy.") + len(
        "the user says deploy, ship or release")
    assert f"claude-code: {listed:,} characters (description + when_to_use)" in budget
    assert "--catalog-budget" in budget


def test_bundle_refuses_more_skills_than_a_request_takes(tmp_path: Path) -> None:
    folders = [make_skill(tmp_path / "src" / f"s{i}") for i in range(9)]
    dest = tmp_path / "b.bundle"
    result = cli("bundle", "--target", "claude-api", *folders, "-o", dest)
    assert result.exit_code == 1
    assert "claude-api: 9 skills; the limit is 8 skills per request" in result.stderr
    assert not dest.exists()
    assert cli("bundle", "--target", "claude-api", *folders[:8], "-o", dest).exit_code == 0


# -- 2. layouts -----------------------------------------------------------------------------

def test_both_layouts_reproducible_with_one_digest(tmp_path: Path) -> None:
    wrapped = json.loads(cli("pack", "--json", WAITLIST, "-o", tmp_path / "w").stdout)[0]
    root = json.loads(cli("pack", "--json", "--layout", "root", WAITLIST,
                          "-o", tmp_path / "r").stdout)[0]
    again = json.loads(cli("pack", "--json", "--layout", "root", WAITLIST,
                           "-o", tmp_path / "r2").stdout)[0]
    assert wrapped["digest"] == root["digest"] == digest(WAITLIST)
    assert (wrapped["layout"], root["layout"]) == ("wrapped", "root")
    assert (wrapped["manifest"], root["manifest"]) == (True, False)
    assert Path(wrapped["archive"]).name.endswith(".skill")
    assert Path(root["archive"]).name == f"waitlist-{root['digest'][7:23]}.root.zip"
    root_bytes = Path(root["archive"]).read_bytes()
    assert root_bytes == Path(again["archive"]).read_bytes()  # byte-reproducible
    # the skill's files and nothing of skillpack's (SPEC section 3b)
    assert sorted(zip_members(root_bytes)) == [
        "SKILL.md", "data/waitlist.csv", "scripts/waitlist.py"]
    w_members = zip_members(Path(wrapped["archive"]).read_bytes())
    del w_members["waitlist/.skillpack/manifest.json"]
    assert {k.removeprefix("waitlist/"): v for k, v in w_members.items()} == zip_members(
        root_bytes)  # the same files, byte for byte and mode for mode
    # skillpack reads it by its content: digest, verify, the bundler
    assert digest(root["archive"]) == root["digest"]
    assert cli("verify", "--digest", root["digest"], root["archive"]).exit_code == 0
    bundled = cli("bundle", root["archive"], NOTES, "-o", tmp_path / "b.bundle")
    assert bundled.exit_code == 0
    assert rt.load((tmp_path / "b.bundle").read_bytes())["waitlist"].digest == root["digest"]


@pytest.mark.skipif(UNZIP is None, reason="needs the unzip binary")
@pytest.mark.parametrize("how", [["--layout", "wrapped"], ["--layout", "root"],
                                 ["--target", "claude-ai"]], ids=["wrapped", "root", "host"])
def test_unzip_reads_both_layouts(tmp_path: Path, how: list[str]) -> None:
    [packed] = json.loads(cli("pack", "--json", *how, WAITLIST, "-o", tmp_path / "out").stdout)
    layout = packed["layout"]
    assert UNZIP is not None
    tested = subprocess.run([UNZIP, "-t", packed["archive"]], capture_output=True, text=True,
                            check=False)
    assert tested.returncode == 0 and "No errors detected" in tested.stdout
    dest = tmp_path / "x"
    subprocess.run([UNZIP, "-q", packed["archive"], "-d", dest], check=True)
    top = dest / "waitlist" if layout == "wrapped" else dest
    assert (top / "SKILL.md").read_bytes() == (WAITLIST / "SKILL.md").read_bytes()
    assert (top / "scripts" / "waitlist.py").stat().st_mode & 0o777 == 0o755
    if not packed["manifest"]:  # what a host or an installer unzips: the skill, nothing else
        assert not (top / ".skillpack").exists()
        assert sorted(p.name for p in dest.iterdir()) == sorted(
            ["waitlist"] if layout == "wrapped" else ["SKILL.md", "data", "scripts"])
        assert digest(top) == packed["digest"]
        return
    # the unzipped files are the skill: the same digest, and each sha256 of the manifest
    manifest = json.loads((top / ".skillpack" / "manifest.json").read_bytes())
    shutil.rmtree(top / ".skillpack")
    assert digest(top) == packed["digest"]
    for item in manifest["files"]:
        assert item["sha256"] == hashlib.sha256((top / item["path"]).read_bytes()).hexdigest()


def test_targets_choose_the_layout(tmp_path: Path) -> None:
    [packed] = json.loads(cli("pack", "--json", "--target", "well-known", NOTES,
                              "-o", tmp_path / "out").stdout)
    assert packed["layout"] == "root" and packed["archive"].endswith(".root.zip")
    # the waitlist is a hard skill named by `skill:` alone, which a discovery index cannot read
    hard = cli("pack", "--target", "well-known", WAITLIST, "-o", tmp_path / "hard")
    assert hard.exit_code == 1 and "[target-name-key-missing] well-known:" in hard.stderr
    mixed = cli("pack", "--target", "well-known", "--target", "claude-ai", WAITLIST,
                "-o", tmp_path / "mixed")
    assert mixed.exit_code == 1 and "different archive layouts" in mixed.stderr
    assert not (tmp_path / "mixed").exists()
    wrong = cli("pack", "--target", "claude-ai", "--layout", "root", WAITLIST,
                "-o", tmp_path / "wrong")
    assert wrong.exit_code == 1 and "claude-ai: wants the wrapped layout" in wrong.stderr
    assert not (tmp_path / "wrong").exists()


def test_a_root_archive_with_a_stray_top_folder_is_refused(tmp_path: Path) -> None:
    # a root archive with its manifest (as skillpack wrote them before SPEC section 3b) is
    # still read strictly: every member must be in the manifest
    [packed] = json.loads(cli("pack", "--json", WAITLIST, "-o", tmp_path / "out").stdout)
    members = {k.removeprefix("waitlist/"): v
               for k, v in zip_members(Path(packed["archive"]).read_bytes()).items()}
    assert rt.load(zip_of(members))["waitlist"].digest == packed["digest"]
    members["other/evil.sh"] = (b"echo\n", True)
    with pytest.raises(Exception, match="not in the manifest"):
        rt.load(zip_of(members))


# -- 2b. what a host or an installer receives (SPEC section 3b, issue 29) ------------------------

HOSTED = [(["--target", "claude-ai"], WAITLIST, "wrapped"),
          (["--target", "claude-api"], WAITLIST, "wrapped"),
          (["--target", "openai-api"], WAITLIST, "wrapped"),
          (["--target", "codex"], NOTES, "wrapped"),  # codex reads name: (not skill:)
          (["--target", "mcp"], NOTES, "wrapped"),
          (["--layout", "root"], WAITLIST, "root"),
          (["--target", "well-known"], NOTES, "root"),
          (["--target", "agentskills", "--target", "claude-code"], WAITLIST, "wrapped")]


@pytest.mark.parametrize("how, folder, layout", HOSTED,
                         ids=[" ".join(h) for h, _, _ in HOSTED])
def test_an_archive_for_a_host_holds_the_skill_and_reads_back_by_content(
        tmp_path: Path, how: list[str], folder: Path, layout: str) -> None:
    [packed] = json.loads(cli("pack", "--json", *how, folder, "-o", tmp_path / "out").stdout)
    name, want = folder.name, digest(folder)
    suffix = ".root.zip" if layout == "root" else ".zip"
    assert (packed["layout"], packed["manifest"], packed["digest"]) == (layout, False, want)
    archive = Path(packed["archive"])
    assert archive.name == f"{name}-{want[7:23]}{suffix}"  # named by the skill's digest
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    prefix = f"{name}/" if layout == "wrapped" else ""
    assert sorted(zip_members(archive.read_bytes())) == [prefix + f for f in files]
    # skillpack reads it by its content: digest, verify against a lock, inspect, bundle
    assert digest(archive) == want
    lock = tmp_path / "skills.lock"
    assert cli("lock", folder, "-o", lock).exit_code == 0
    verified = cli("verify", "--lock", lock, archive)
    assert verified.exit_code == 0 and f"ok        {want}  {name}" in verified.stdout
    [shown] = json.loads(cli("inspect", "--json", archive).stdout)["skills"]
    assert (shown["name"], shown["digest"]) == (name, want)
    bundle = tmp_path / "one.bundle"
    assert cli("bundle", archive, "-o", bundle).exit_code == 0
    assert rt.load(bundle.read_bytes())[name].digest == want
    # the runtime loads what carries a manifest, and says how to get one
    with pytest.raises(ArchiveError, match=r"no manifest member .*skill's files only") as err:
        rt.load(archive.read_bytes())
    assert "skillpack bundle ARCHIVE" in (err.value.hint or "")


def test_a_changed_host_archive_fails_verify_against_the_lock(tmp_path: Path) -> None:
    [packed] = json.loads(cli("pack", "--json", "--target", "claude-ai", WAITLIST,
                              "-o", tmp_path / "out").stdout)
    lock = tmp_path / "skills.lock"
    assert cli("lock", WAITLIST, "-o", lock).exit_code == 0
    members = zip_members(Path(packed["archive"]).read_bytes())
    data, executable = members["waitlist/scripts/waitlist.py"]
    members["waitlist/scripts/waitlist.py"] = (data + b"# changed\n", executable)
    changed = tmp_path / "changed.zip"
    changed.write_bytes(zip_of(members))
    result = cli("verify", "--lock", lock, changed)
    assert result.exit_code == 1 and "scripts/waitlist.py" in result.output


def test_the_skill_archive_keeps_its_manifest_and_coexists_with_the_hosts(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    plain, spec, host, root = (
        json.loads(cli("pack", "--json", *how, WAITLIST, "-o", out).stdout)[0]
        for how in ([], ["--target", "agentskills"], ["--target", "claude-ai"],
                    ["--layout", "root"]))
    # agentskills is skillpack's own archive: the same .skill, left as it was; named, it
    # warns of the hard-skill keys skills-ref refuses
    assert {**plain, "written": False} == {**spec, "warnings": []}
    assert [w["code"] for w in spec["warnings"]] == ["target-hard-skill-key"] * 2
    assert plain["manifest"] and plain["archive"].endswith(".skill")
    assert "waitlist/.skillpack/manifest.json" in zip_members(
        Path(plain["archive"]).read_bytes())
    # three archives of one skill, one digest, three names: none replaces another
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(Path(r["archive"]).name for r in (plain, host, root))
    assert len(set(names)) == 3
    again = json.loads(cli("pack", "--json", WAITLIST, "-o", out).stdout)[0]
    assert again["written"] is False  # the .skill was left as it was by the others


def test_pack_for_a_discovery_site_writes_what_export_well_known_serves(
        tmp_path: Path) -> None:
    [packed] = json.loads(cli("pack", "--json", "--target", "well-known", NOTES,
                              "-o", tmp_path / "out").stdout)
    assert cli("export", "well-known", NOTES, "-o", tmp_path / "site").exit_code == 0
    served = tmp_path / "site" / ".well-known" / "agent-skills" / "release-notes.zip"
    assert Path(packed["archive"]).read_bytes() == served.read_bytes()
    index = json.loads((served.parent / "index.json").read_bytes())
    assert index["skills"][0]["digest"] == packed["sha256"]


# -- 3. SHA-256 ------------------------------------------------------------------------------

def test_pack_and_bundle_print_the_sha256_of_the_bytes_written(tmp_path: Path) -> None:
    [packed] = json.loads(cli("pack", "--json", WAITLIST, "-o", tmp_path / "out").stdout)
    assert packed["sha256"] == sha256(Path(packed["archive"]).read_bytes())
    text = cli("pack", WAITLIST, "-o", tmp_path / "out").stdout
    assert f"  {packed['sha256']}  " in text
    dest = tmp_path / "b.bundle"
    bundled = json.loads(cli("bundle", "--json", WAITLIST, NOTES, "-o", dest).stdout)
    assert bundled["sha256"] == sha256(dest.read_bytes())


def test_verify_refuses_an_altered_sha256(tmp_path: Path) -> None:
    [packed] = json.loads(cli("pack", "--json", WAITLIST, "-o", tmp_path / "out").stdout)
    members = zip_members(Path(packed["archive"]).read_bytes())
    key = "waitlist/.skillpack/manifest.json"
    data = json.loads(members[key][0])
    data["files"][0]["sha256"] = "0" * 64
    raw = (json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
           + "\n").encode()
    members[key] = (raw, False)
    altered = tmp_path / "altered.skill"
    altered.write_bytes(zip_of(members))
    result = cli("verify", altered)
    assert result.exit_code == 1 and "sha256" in result.stderr + result.stdout
    assert rt.load(altered.read_bytes())["waitlist"].digest == packed["digest"]  # BLAKE3 holds


# -- 4. the catalog's cost ---------------------------------------------------------------------

def test_check_and_bundle_report_the_catalog(tmp_path: Path) -> None:
    dest = tmp_path / "b.bundle"
    assert cli("bundle", WAITLIST, NOTES, "-o", dest).exit_code == 0
    catalog = rt.load(dest.read_bytes()).catalog_text()
    checked = cli("check", "--target", "claude-code", WAITLIST, NOTES)
    assert checked.exit_code == 0
    assert (f"catalog: {len(catalog):,} characters in all (catalog_text() of 2 skills)"
            in checked.stdout)
    loaded = rt.load(dest.read_bytes())
    for name in ("waitlist", "release-notes"):
        assert f"catalog: {len(loaded[name].description):>6,} characters  {name}" in (
            checked.stdout)
    data = json.loads(cli("check", "--json", "--target", "claude-code", WAITLIST).stdout)
    assert data[0]["description_chars"] == len(loaded["waitlist"].description)
    bundled = json.loads(cli("bundle", "--json", WAITLIST, NOTES, "-o", dest).stdout)
    assert bundled["catalog"]["total_chars"] == len(catalog)


def test_claude_code_listing_cap_is_the_default_budget(tmp_path: Path) -> None:
    long = "Does one thing. " * 100  # 1,600 characters: under no hard limit of the spec...
    skill = write_skill(tmp_path / "wordy", f"---\nname: wordy\ndescription: {long[:1000]}\n"
                        f"when_to_use: {long[:600]}\n---\nbody\n")
    plain = cli("check", skill)
    assert not warnings_of(plain.stdout, "target-catalog-budget")
    hosted = cli("check", "--target", "claude-code", skill)
    [warning] = warnings_of(hosted.stdout, "target-catalog-budget")
    listed = len(long[:1000].strip()) + len(long[:600].strip())
    assert f"{listed:,} characters" in warning and "1,536 characters" in warning
    assert cli("check", "--target", "claude-code", "--catalog-budget", "2000",
               skill).stdout.count("target-catalog-budget") == 0


@pytest.mark.parametrize("host", ["mcp", "well-known"])
def test_a_name_beyond_ascii_is_refused_by_check_as_by_the_export(tmp_path: Path,
                                                                  host: str) -> None:
    """`données` passed `check --target well-known` (skills-ref allows any lowercase
    letter), then `export well-known` refused it, saying to fix what check reports."""
    folder = tmp_path / "données"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: données\ndescription: A skill of data. Use "
                                     "it for tests.\n---\n# D\n")
    assert cli("check", folder).exit_code == 0  # the Agent Skills rules allow it
    checked = cli("check", folder, "--target", host)
    said = [line for line in checked.output.splitlines() if "[target-name]" in line]
    assert checked.exit_code == 1 and len(said) == 1
    assert f"{folder / 'SKILL.md'}:2: error: [target-name] {host}: takes only a name of 1-64 of " \
           "a-z, 0-9 and single inner hyphens, not 'données'" in said[0]
    out = tmp_path / ("mcp.json" if host == "mcp" else "site")
    exported = cli("export", host, folder, "-o", out)
    assert exported.exit_code == 1 and said[0].split("] ", 1)[1] in exported.output


def test_a_description_past_1024_utf_16_units_is_refused_for_a_discovery_site(
        tmp_path: Path) -> None:
    """618 code points of which 600 emoji: 1,218 UTF-16 units, which vercel's `skills`
    measures (JavaScript's length) and skips the entry for, without a word."""
    folder = tmp_path / "emoji-desc"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: emoji-desc\ndescription: Use when testing. "
                                     + "\U0001f600" * 600 + "\n---\nbody\n")
    assert cli("check", folder).exit_code == 0  # 618 characters: the spec's rule holds
    checked = cli("check", folder, "--target", "well-known")
    assert checked.exit_code == 1
    assert ("SKILL.md:3: error: [target-description-too-long] well-known: 1,218 UTF-16 units"
            in checked.output)
    exported = cli("export", "well-known", folder, "-o", tmp_path / "site")
    assert exported.exit_code == 1 and "1,218 UTF-16 units" in exported.output
    assert not (tmp_path / "site").exists()
