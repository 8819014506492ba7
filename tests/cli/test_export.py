"""`skillpack export oci|well-known|mcp`, `push` and `pull` as a user runs them.

Every digest printed or written is recomputed here with `hashlib` from the bytes on disk.
The push/pull tests run against a real registry (tests/helpers/registry.py: Debian's
`docker-registry` on 127.0.0.1, `skopeo` as an independent client); without it they skip,
unless SKILLPACK_REQUIRE_REGISTRY=1.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from click.testing import Result
from helpers.cli import cli
from helpers.paths import NOTES, REPO, WAITLIST
from helpers.registry import Registry, free_port, has_oras, run_skopeo
from helpers.skills import write_skill

from skillpack.packing.pack import pack
from skillpack.publish import oci

registry = pytest.mark.registry




def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def listing(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")) \
        if folder.exists() else []


def failure(result: Result, code: int = 1) -> dict[str, Any]:
    """The one JSON document a failed `--json` command prints, after checking its shape."""
    assert result.exit_code == code, result.output
    doc = json.loads(result.stdout)
    assert doc["ok"] is False and doc["problems"]
    for problem in doc["problems"]:
        assert set(problem) == {"severity", "code", "message", "file", "line"}
    return doc


def single(tmp_path: Path, name: str = "one-file") -> Path:
    return write_skill(tmp_path / name, f"---\nname: {name}\ndescription: Only a SKILL.md; "
                       f"it says hello.\n---\n# {name}\n\nSay hello.\n")


def with_files(tmp_path: Path, name: str = "with-files") -> Path:
    folder = write_skill(tmp_path / name, f"---\nname: {name}\ndescription: A skill with a "
                         f"script and data.\n---\n# {name}\n\nRun the script.\n",
                         {"scripts/run.sh": "#!/bin/sh\necho hi\n", "data/données.txt": "x\n"})
    (folder / "scripts" / "run.sh").chmod(0o755)
    return folder


def invalid(tmp_path: Path) -> Path:
    return write_skill(tmp_path / "Bad_Name", "---\nname: Bad_Name\ndescription: x\n---\nbody\n")


# --- export oci --------------------------------------------------------------------------

def test_export_oci_writes_a_layout_of_the_packed_archives(tmp_path: Path) -> None:
    [archive] = pack(NOTES, tmp_path / "packed")
    result = cli("export", "oci", WAITLIST, archive, "-o", tmp_path / "layout", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["ok"] is True and [a["name"] for a in doc["artifacts"]] == ["release-notes",
                                                                          "waitlist"]
    layout = tmp_path / "layout"
    assert json.loads((layout / "oci-layout").read_bytes()) == {"imageLayoutVersion": "1.0.0"}
    index = json.loads((layout / "index.json").read_bytes())
    refs = {m["annotations"][oci.ANNOTATION_REF_NAME]: m["digest"] for m in index["manifests"]}
    assert refs == {a["ref"]: a["manifest_digest"] for a in doc["artifacts"]}
    for rel in listing(layout):  # every blob is named by the sha256 of its bytes
        if rel.startswith("blobs/sha256/") and (layout / rel).is_file():
            assert sha256((layout / rel).read_bytes()) == "sha256:" + rel.rsplit("/", 1)[1]
    notes = next(a for a in doc["artifacts"] if a["name"] == "release-notes")
    manifest = json.loads((layout / "blobs/sha256" / notes["manifest_digest"][7:]).read_bytes())
    layer = (layout / "blobs/sha256" / manifest["layers"][0]["digest"][7:]).read_bytes()
    assert layer == archive.read_bytes()  # the .skill given, byte for byte
    assert manifest["annotations"][oci.ANNOTATION_SKILL_DIGEST] == notes["digest"]


def test_export_oci_text_and_layout_are_reproducible(tmp_path: Path) -> None:
    one = cli("export", "oci", NOTES, "-o", tmp_path / "one")
    two = cli("export", "oci", NOTES, "-o", tmp_path / "two")
    assert one.exit_code == two.exit_code == 0
    [line] = one.stdout.splitlines()
    ref, digest = line.split("  ")[:2]
    assert ref.endswith(":release-notes-" + ref.rsplit("-", 1)[1])
    assert digest == sha256((tmp_path / "one" / "blobs/sha256" / digest[7:]).read_bytes())
    assert listing(tmp_path / "one") == listing(tmp_path / "two")
    for rel in listing(tmp_path / "one"):
        if (tmp_path / "one" / rel).is_file():
            assert (tmp_path / "one" / rel).read_bytes() == (tmp_path / "two" / rel).read_bytes()


def test_export_oci_tag_names_the_artifact_for_skopeo(tmp_path: Path, skopeo: str) -> None:
    result = cli("export", "oci", NOTES, "-o", tmp_path / "layout", "--tag", "v1")
    assert result.exit_code == 0, result.output
    digest = result.stdout.split("  ")[1]
    raw = run_skopeo(skopeo, "inspect", "--raw", f"oci:{tmp_path / 'layout'}:v1")
    assert sha256(raw) == digest


def test_export_oci_tag_for_two_artifacts_is_a_usage_error(tmp_path: Path) -> None:
    doc = failure(cli("export", "oci", NOTES, WAITLIST, "-o", tmp_path / "layout", "--tag",
                      "v1", "--json"), code=2)
    assert doc["problems"][0]["code"] == "usage" and "--tag" in doc["error"]
    assert not (tmp_path / "layout").exists()


def test_export_oci_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "layout").mkdir()
    (tmp_path / "layout" / "mine.txt").write_text("keep", encoding="utf-8")
    doc = failure(cli("export", "oci", NOTES, "-o", tmp_path / "layout", "--json"))
    assert doc["problems"][0]["code"] == "write" and "not empty" in doc["error"]
    assert listing(tmp_path / "layout") == ["mine.txt"]
    result = cli("export", "oci", NOTES, "-o", tmp_path / "layout")  # without --json
    assert result.exit_code == 1 and result.stdout == ""
    assert "not empty" in result.stderr


def test_export_oci_of_an_invalid_skill_writes_nothing(tmp_path: Path) -> None:
    doc = failure(cli("export", "oci", NOTES, invalid(tmp_path), "-o", tmp_path / "layout",
                      "--json"))
    assert [(p["code"], p["file"], p["line"]) for p in doc["problems"]] == [
        (code, str(tmp_path / "Bad_Name" / "SKILL.md"), 2)
        for code in ("name-not-lowercase", "name-invalid-characters")]
    assert not (tmp_path / "layout").exists()


# --- export well-known -------------------------------------------------------------------

def test_export_well_known_index_and_digests(tmp_path: Path) -> None:
    one, many = single(tmp_path), with_files(tmp_path)
    site = tmp_path / "site"
    result = cli("export", "well-known", one, many, "-o", site, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    folder = site / ".well-known" / "agent-skills"
    raw = (folder / "index.json").read_bytes()
    index = json.loads(raw)
    assert index["$schema"] == "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
    assert [e["name"] for e in index["skills"]] == ["one-file", "with-files"]
    for entry in index["skills"]:
        assert set(entry) == {"name", "type", "description", "url", "digest"}
        assert all(isinstance(v, str) and v for v in entry.values())
        served = folder / entry["url"]  # relative to the index: the file beside it
        assert entry["digest"] == sha256(served.read_bytes())
    by_name = {e["name"]: e for e in index["skills"]}
    assert by_name["one-file"]["type"] == "skill-md"
    assert (folder / "one-file" / "SKILL.md").read_bytes() == (one / "SKILL.md").read_bytes()
    assert by_name["with-files"]["url"] == "with-files.zip"
    with zipfile.ZipFile(folder / "with-files.zip") as archive:  # SKILL.md at the root
        assert sorted(archive.namelist()) == ["SKILL.md", "data/données.txt", "scripts/run.sh"]
        assert archive.read("scripts/run.sh") == (many / "scripts" / "run.sh").read_bytes()
        assert archive.getinfo("scripts/run.sh").external_attr >> 16 & 0o111
    assert [{k: v for k, v in s.items() if k != "path"} for s in doc["skills"]] == \
        index["skills"]
    assert doc["index"] == str(folder / "index.json")


def test_export_well_known_base_url_and_text(tmp_path: Path) -> None:
    site = tmp_path / "site"
    result = cli("export", "well-known", with_files(tmp_path), "-o", site, "--base-url",
                 "https://cdn.example.com/skills/")
    assert result.exit_code == 0, result.output
    index = json.loads((site / ".well-known/agent-skills/index.json").read_bytes())
    [entry] = index["skills"]
    assert entry["url"] == "https://cdn.example.com/skills/with-files.zip"
    zip_path = site / ".well-known/agent-skills/with-files.zip"
    assert result.stdout.splitlines() == [
        f"{zip_path}  {sha256(zip_path.read_bytes())}  (archive)",
        f"{site / '.well-known/agent-skills/index.json'}  1 skill(s)"]


def test_export_well_known_from_an_archive_is_the_same(tmp_path: Path) -> None:
    many = with_files(tmp_path)
    [archive] = pack(many, tmp_path / "packed")
    assert cli("export", "well-known", many, "-o", tmp_path / "a").exit_code == 0
    assert cli("export", "well-known", archive, "-o", tmp_path / "b").exit_code == 0
    for rel in listing(tmp_path / "a"):
        if (tmp_path / "a" / rel).is_file():
            assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()


def test_export_well_known_of_an_invalid_skill_leaves_the_site(tmp_path: Path) -> None:
    site = tmp_path / "site"
    assert cli("export", "well-known", single(tmp_path), "-o", site).exit_code == 0
    before = {rel: (site / rel).read_bytes() for rel in listing(site) if (site / rel).is_file()}
    doc = failure(cli("export", "well-known", single(tmp_path), invalid(tmp_path), "-o", site,
                      "--json"))
    assert [(p["code"], p["line"]) for p in doc["problems"]] == [
        ("name-not-lowercase", 2), ("name-invalid-characters", 2)]
    after = {rel: (site / rel).read_bytes() for rel in listing(site) if (site / rel).is_file()}
    assert after == before


# --- export mcp --------------------------------------------------------------------------

def test_export_mcp_to_stdout_digests_every_file(tmp_path: Path) -> None:
    many = with_files(tmp_path)
    result = cli("export", "mcp", many, NOTES)
    assert result.exit_code == 0, result.output
    data = result.stdout_bytes
    assert data.endswith(b"}\n") and data.count(b"\n") == 1  # canonical, one line
    doc = json.loads(data)
    assert doc["resultType"] == "complete"
    [first, second] = doc["skills"]
    assert first["frontmatter"]["name"] == "release-notes"
    assert second["uri"] == "skill://with-files/SKILL.md"
    for skill, folder in ((first, NOTES), (second, many)):
        for res in skill["resources"]:
            path = folder / unquote(res["uri"].split("/", 3)[3])
            assert res["size"] == path.stat().st_size
            assert res["digest"] == sha256(path.read_bytes())
        assert len(skill["resources"]) == len([p for p in folder.rglob("*") if p.is_file()])
    assert cli("export", "mcp", many, NOTES, "-o", "-").stdout_bytes == data


def test_export_mcp_to_a_file_and_json(tmp_path: Path) -> None:
    out = tmp_path / "skills.json"
    stdout = cli("export", "mcp", NOTES).stdout_bytes
    result = cli("export", "mcp", NOTES, "-o", out)
    assert result.exit_code == 0
    assert out.read_bytes() == stdout
    assert result.stdout == f"{out}  {sha256(stdout)}  1 skill(s)\n"
    doc = json.loads(cli("export", "mcp", NOTES, "-o", out, "--json").stdout)
    assert doc == {"ok": True, "output": str(out), "sha256": sha256(stdout),
                   "skills": [{"name": "release-notes", "resources": 3,
                               "uri": "skill://release-notes/SKILL.md"}]}
    doc = json.loads(cli("export", "mcp", NOTES, "--json").stdout)
    assert doc["ok"] is True and doc["result"] == json.loads(stdout)


def test_export_mcp_from_a_bundle_and_an_archive_is_the_same(tmp_path: Path) -> None:
    many = with_files(tmp_path)
    bundle = tmp_path / "b.bundle"
    assert cli("bundle", many, NOTES, "-o", bundle).exit_code == 0
    [archive] = pack(many, tmp_path / "packed")
    from_folders = cli("export", "mcp", NOTES, many).stdout_bytes
    assert json.loads(from_folders)["skills"][1]["frontmatter"]["name"] == "with-files"
    assert cli("export", "mcp", bundle).stdout_bytes == from_folders
    assert cli("export", "mcp", NOTES, archive, many).stdout_bytes == from_folders  # listed once


def test_export_mcp_refuses_a_hard_skill_frontmatter(tmp_path: Path) -> None:
    out = tmp_path / "skills.json"
    doc = failure(cli("export", "mcp", NOTES, WAITLIST, "-o", out, "--json"))
    assert [(p["code"], p["file"]) for p in doc["problems"]] == [
        ("target-name-key-missing", str(WAITLIST / "SKILL.md"))]  # where the user has it
    assert not out.exists()
    result = cli("export", "mcp", WAITLIST)
    assert result.exit_code == 1 and result.stdout == ""
    assert "target-name-key-missing" in result.stderr


@pytest.mark.parametrize("fmt", ["mcp", "well-known"])
def test_export_keep_going_skips_a_skill_the_host_refuses(tmp_path: Path, fmt: str) -> None:
    """A skill `check` accepts but the host refuses (a hard skill without 'name:') is
    skipped under --keep-going, with the words of `check --target`; the rest is written."""
    out = tmp_path / ("skills.json" if fmt == "mcp" else "site")
    result = cli("export", fmt, "-k", NOTES, WAITLIST, "-o", out, "--json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["ok"] is False  # as the exit code says: a skill was skipped
    [skipped] = doc["skipped"]
    assert skipped["path"] == str(WAITLIST)
    assert [(p["code"], p["file"]) for p in skipped["problems"]] == [
        ("target-name-key-missing", str(WAITLIST / "SKILL.md"))]
    written = (out.read_text() if fmt == "mcp"
               else (out / ".well-known/agent-skills/index.json").read_text())
    assert "release-notes" in written and "waitlist" not in written
    assert cli("check", "--target", fmt, WAITLIST).exit_code == 1  # the same verdict


def test_export_mcp_holds_a_skill_to_the_extensions_limits(tmp_path: Path) -> None:
    """SEP-2640: at most 512 resources and 16 MiB a skill; a server SHOULD NOT serve more.
    The export refuses what `check --target mcp` refuses, with its code."""
    files = {f"r/f{i:03d}.txt": f"{i}\n" for i in range(511)}
    skill = write_skill(tmp_path / "many", "---\nname: many\ndescription: Many files.\n---\n"
                        "body\n", files)
    assert cli("export", "mcp", skill).exit_code == 0  # 512 with SKILL.md
    (skill / "r" / "one-more.txt").write_text("513\n")
    doc = failure(cli("export", "mcp", skill, "--json"))
    assert [p["code"] for p in doc["problems"]] == ["target-too-many-files"]
    checked = cli("check", "--target", "mcp", skill)
    assert checked.exit_code == 1 and "[target-too-many-files]" in checked.stdout


def test_a_skill_md_an_mcp_host_cannot_read_as_frontmatter_is_refused(tmp_path: Path) -> None:
    """The reference host reads frontmatter only from a SKILL.md starting with '---' and a
    line end: one with a BOM, or blanks after '---', passes `check` (skillpack reads it) but
    not `check --target mcp`, nor the export."""
    for name, start in (("bom", b"\xef\xbb\xbf---\n"), ("blanks", b"---  \n")):
        skill = write_skill(tmp_path / name, start + f"name: {name}\ndescription: Reads "
                            "notes.\n---\nbody\n".encode())
        assert cli("check", skill).exit_code == 0
        checked = cli("check", "--target", "mcp", skill)
        assert checked.exit_code == 1
        assert f"{skill / 'SKILL.md'}:1: error: [target-frontmatter-start]" in checked.stdout
        doc = failure(cli("export", "mcp", skill, "--json"))
        assert [p["code"] for p in doc["problems"]] == ["target-frontmatter-start"]
        assert cli("check", "--target", "claude-code", skill).exit_code == 0


@pytest.mark.parametrize("url", ["cdn.example.com/skills/", "ftp://cdn.example.com/",
                                 "https://cdn.example.com/a b/", "https://cdn.example.com/x?y=1",
                                 "//cdn.example.com/skills/", "https://[::1", "http://[zz]/x",
                                 "https://cdn.example.com:99999/"])
def test_export_well_known_refuses_a_base_url_no_client_resolves_as_meant(
        tmp_path: Path, url: str) -> None:
    result = cli("export", "well-known", NOTES, "-o", tmp_path / "site", "--base-url", url)
    assert result.exit_code == 2
    assert f"--base-url {url!r}" in result.stderr
    assert not (tmp_path / "site").exists()


def test_export_well_known_takes_a_path_absolute_base_url(tmp_path: Path) -> None:
    site = tmp_path / "site"
    result = cli("export", "well-known", NOTES, "-o", site, "--base-url", "/static/skills/")
    assert result.exit_code == 0, result.output
    [entry] = json.loads((site / ".well-known/agent-skills/index.json").read_text())["skills"]
    assert entry["url"] == "/static/skills/release-notes.zip"


# --- push and pull: what needs no registry -----------------------------------------------

_WITHOUT_ORAS = textwrap.dedent("""\
    import sys
    sys.modules["oras"] = None
    sys.modules["oras.provider"] = None
    from skillpack.cli import main
    main(sys.argv[1:], prog_name="skillpack")
    """)


@pytest.mark.parametrize("args", [["push", str(NOTES), "127.0.0.1:1/skills:v1"],
                                  ["pull", "127.0.0.1:1/skills:v1", "-o", "OUT"]])
def test_without_oras_push_and_pull_say_what_to_install(args: list[str],
                                                        tmp_path: Path) -> None:
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    done = subprocess.run([sys.executable, "-c", _WITHOUT_ORAS, *args, "--plain-http"],
                          capture_output=True, text=True, cwd=REPO, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 1, done.stderr
    assert "pip install 'skillpack[oci]'" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()
    done = subprocess.run([sys.executable, "-c", _WITHOUT_ORAS, *args, "--json"],
                          capture_output=True, text=True, cwd=REPO, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 1
    assert "pip install 'skillpack[oci]'" in json.loads(done.stdout)["hint"]


def test_pull_a_bad_reference_is_refused(tmp_path: Path) -> None:
    """A reference that names no registry, or breaks the reference grammar, is misuse (2)
    for every command that takes one, before anything is read or written."""
    doc = failure(cli("pull", "skills:v1", "-o", tmp_path / "out", "--json"), code=2)
    assert "registry" in doc["error"]
    assert not (tmp_path / "out").exists()
    for args in (["push", NOTES, "127.0.0.1:5/Skills/x:v1"],
                 ["pull", "127.0.0.1:5/Skills/x:v1", "-o", tmp_path / "out"],
                 ["install", "oci://127.0.0.1:/x", "--into", tmp_path / "out"]):
        result = cli(*args)
        assert result.exit_code == 2 and "not a registry reference" in result.output, args
    assert not (tmp_path / "out").exists()


def test_push_to_a_registry_that_is_down_fails(tmp_path: Path) -> None:
    if not has_oras():
        pytest.skip("the oras library is not installed (pip install 'skillpack[oci]')")
    doc = failure(cli("push", NOTES, f"127.0.0.1:{free_port()}/skills:v1", "--plain-http",
                      "--json"))
    assert "cannot reach the registry" in doc["error"]


# --- push and pull: a real registry ------------------------------------------------------

@registry
def test_push_then_pull_by_tag_and_digest(reg: Registry, tmp_path: Path, skopeo: str) -> None:
    [archive] = pack(NOTES, tmp_path / "packed")
    pushed = cli("push", NOTES, f"{reg.host}/cli/notes:v1", "--plain-http", "--json")
    assert pushed.exit_code == 0, pushed.output
    [row] = json.loads(pushed.stdout)["pushed"]
    assert row["ref"] == f"{reg.host}/cli/notes:v1" and row["name"] == "release-notes"
    raw = run_skopeo(skopeo, "inspect", "--raw", "--tls-verify=false",
                     f"docker://{reg.host}/cli/notes:v1")
    assert sha256(raw) == row["manifest_digest"]
    # the same digest as the offline layout of the same skill
    layout = cli("export", "oci", NOTES, "-o", tmp_path / "layout")
    assert layout.stdout.split("  ")[1] == row["manifest_digest"]
    by_tag = cli("pull", f"{reg.host}/cli/notes:v1", "-o", tmp_path / "tag", "--plain-http")
    assert by_tag.exit_code == 0, by_tag.output
    assert by_tag.stdout.splitlines()[0] == f"pulled {reg.host}/cli/notes:v1  " \
        f"{row['manifest_digest']}"
    assert (tmp_path / "tag" / archive.name).read_bytes() == archive.read_bytes()
    ref = f"{reg.host}/cli/notes@{row['manifest_digest']}"
    by_digest = cli("pull", ref, "-o", tmp_path / "digest", "--plain-http", "--json")
    doc = json.loads(by_digest.stdout)
    assert by_digest.exit_code == 0 and doc["ok"] is True
    assert doc["manifest_digest"] == row["manifest_digest"] and doc["kind"] == "skill"
    assert Path(doc["path"]).read_bytes() == archive.read_bytes()
    assert doc["skills"] == [{"name": "release-notes", "digest": row["digest"]}]
    again = cli("push", NOTES, f"{reg.host}/cli/notes:v1", "--plain-http")
    assert again.exit_code == 0 and "0 blob(s) uploaded" in again.stdout


@registry
def test_push_several_tags_each_and_a_tag_needs_one(reg: Registry, tmp_path: Path) -> None:
    doc = failure(cli("push", NOTES, WAITLIST, f"{reg.host}/cli/many:v1", "--plain-http",
                      "--json"), code=2)  # misuse, as `export oci --tag` with two
    assert "a tag names one artifact, and there are 2" in doc["error"]
    assert [p["code"] for p in doc["problems"]] == ["usage"]
    assert reg.tags("cli/many") == []
    result = cli("push", NOTES, WAITLIST, f"{reg.host}/cli/many", "--plain-http")
    assert result.exit_code == 0, result.output
    refs = sorted(line.split()[1].rsplit(":", 1)[1] for line in result.stdout.splitlines())
    assert reg.tags("cli/many") == refs and len(refs) == 2


@registry
def test_pull_with_a_lock(reg: Registry, tmp_path: Path) -> None:
    bundle = tmp_path / "prod.bundle"
    assert cli("bundle", NOTES, WAITLIST, "-o", bundle).exit_code == 0
    assert cli("lock", NOTES, WAITLIST, "-o", tmp_path / "skills.lock").exit_code == 0
    assert cli("lock", NOTES, "-o", tmp_path / "short.lock").exit_code == 0
    pushed = json.loads(cli("push", bundle, f"{reg.host}/cli/bundle:prod", "--plain-http",
                            "--json").stdout)
    ref = f"{reg.host}/cli/bundle@{pushed['pushed'][0]['manifest_digest']}"
    doc = failure(cli("pull", ref, "-o", tmp_path / "refused", "--plain-http",
                      "--lock", tmp_path / "short.lock", "--json"))
    assert "waitlist" in json.dumps(doc)
    assert not (tmp_path / "refused").exists()
    result = cli("pull", ref, "-o", tmp_path / "deploy", "--plain-http",
                 "--lock", tmp_path / "skills.lock")
    assert result.exit_code == 0, result.output
    [written] = (tmp_path / "deploy").iterdir()
    assert written.read_bytes() == bundle.read_bytes()
    assert result.stdout.splitlines()[1].endswith("(bundle of 2 skill(s))")


@registry
def test_pull_with_a_lock_checks_only_what_it_pulls(reg: Registry, tmp_path: Path) -> None:
    folders = [write_skill(tmp_path / "repo" / f"skill-{i:02}", (
        f"---\nname: skill-{i:02}\ndescription: Skill {i}. Use it when asked.\n---\n"
        f"# skill {i}\n")) for i in range(14)]
    assert cli("lock", *folders, "-o", tmp_path / "skills.lock").exit_code == 0
    assert cli("push", folders[0], f"{reg.host}/cli/one:v1", "--plain-http").exit_code == 0
    result = cli("pull", f"{reg.host}/cli/one:v1", "-o", tmp_path / "deploy", "--plain-http",
                 "--lock", tmp_path / "skills.lock")  # the 13 others are not looked for
    assert result.exit_code == 0, result.output
    assert [p.name.split("-")[:2] for p in (tmp_path / "deploy").iterdir()] == [
        ["skill", "00"]]
    (folders[0] / "SKILL.md").write_text((folders[0] / "SKILL.md").read_text(
        encoding="utf-8") + "Changed after approval.\n", encoding="utf-8")
    assert cli("push", folders[0], f"{reg.host}/cli/one:v2", "--plain-http").exit_code == 0
    refused = cli("pull", f"{reg.host}/cli/one:v2", "-o", tmp_path / "refused", "--plain-http",
                  "--lock", tmp_path / "skills.lock")
    assert refused.exit_code == 1
    first = refused.stderr.splitlines()[0]
    assert "[expect-mismatch] skill 'skill-00' has digest" in first, refused.stderr
    assert "expect-missing" not in refused.stderr
    doc = failure(cli("pull", f"{reg.host}/cli/one:v2", "-o", tmp_path / "refused",
                      "--plain-http", "--lock", tmp_path / "skills.lock", "--json"))
    assert [p["code"] for p in doc["problems"]] == ["expect-mismatch"]
    assert not (tmp_path / "refused").exists()


@registry
def test_pull_over_max_size_writes_nothing(reg: Registry, tmp_path: Path) -> None:
    [archive] = pack(NOTES, tmp_path / "packed")
    assert cli("push", archive, f"{reg.host}/cli/size:v1", "--plain-http").exit_code == 0
    size = archive.stat().st_size
    doc = failure(cli("pull", f"{reg.host}/cli/size:v1", "-o", tmp_path / "out",
                      "--plain-http", "--max-size", size - 1, "--json"))
    assert doc["problems"][0]["code"] == "integrity" and "over the limit" in doc["error"]
    assert not (tmp_path / "out").exists()
    result = cli("pull", f"{reg.host}/cli/size:v1", "-o", tmp_path / "out", "--plain-http",
                 "--max-size", size)
    assert result.exit_code == 0, result.output


@registry
def test_pull_of_something_else_is_refused(reg: Registry, tmp_path: Path) -> None:
    layer = b"not a skill"
    reg.put_blob("cli/other", b"{}")
    reg.put_blob("cli/other", layer)
    reg.put_manifest("cli/other", "v1", oci.canonical_manifest_json({
        "schemaVersion": 2, "mediaType": oci.MANIFEST_MEDIA_TYPE,
        "artifactType": "application/vnd.example.thing.v1",
        "config": {"mediaType": oci.EMPTY_MEDIA_TYPE, "digest": oci.EMPTY_DIGEST, "size": 2},
        "layers": [{"mediaType": "application/octet-stream", "digest": sha256(layer),
                    "size": len(layer)}]}))
    doc = failure(cli("pull", f"{reg.host}/cli/other:v1", "-o", tmp_path / "out",
                      "--plain-http", "--json"))
    assert doc["problems"][0]["code"] == "archive" and "unknown artifactType" in doc["error"]
    assert not (tmp_path / "out").exists()


def test_zip_of_export_is_read_by_zipfile(tmp_path: Path) -> None:
    """The well-known archive is a plain zip any reader opens (no skillpack manifest)."""
    site = tmp_path / "site"
    assert cli("export", "well-known", with_files(tmp_path), "-o", site).exit_code == 0
    data = (site / ".well-known/agent-skills/with-files.zip").read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None
        assert not any(n.startswith(".skillpack/") for n in archive.namelist())
