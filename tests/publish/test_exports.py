"""Exports (skillpack.publish.exports): the well-known discovery index with its artifacts, and
an MCP skills/list result. Every digest is recomputed with hashlib from the bytes written."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import stat
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
from helpers.skills import make_tree

from skillpack.errors import SkillError, WriteError
from skillpack.packing.targets import SkillFacts, check_targets
from skillpack.publish.exports import (
    DISCOVERY_SCHEMA,
    ExportSkill,
    IndexEntry,
    export_well_known,
    mcp_skill_entry,
    mcp_skills_list,
    root_archive,
    skill_uri,
    well_known_index,
)
from skillpack.skillmd.frontmatter import split_frontmatter

#: The discovery index as the RFC (0.2.0, "Discovery Index") states it: required fields and
#: their types. No published JSON Schema was found for 0.2.0 (the $schema URI is an opaque
#: identifier per the RFC), so this one is written from the RFC's tables.
INDEX_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["$schema", "skills"],
    "properties": {
        "$schema": {"const": DISCOVERY_SCHEMA},
        "skills": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "type", "description", "url", "digest"],
                "properties": {
                    "name": {"type": "string", "maxLength": 64,
                             "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"},
                    "type": {"enum": ["skill-md", "archive"]},
                    "description": {"type": "string", "minLength": 1, "maxLength": 1024},
                    "url": {"type": "string", "minLength": 1},
                    "digest": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
                },
            },
        },
    },
}


def check_index_fields(index: dict[str, Any]) -> None:
    """The RFC's required fields and types, checked by hand (holds without jsonschema)."""
    assert set(index) == {"$schema", "skills"}
    assert index["$schema"] == DISCOVERY_SCHEMA
    assert isinstance(index["skills"], list)
    for entry in index["skills"]:
        assert set(entry) == {"name", "type", "description", "url", "digest"}
        assert all(isinstance(v, str) for v in entry.values())
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", entry["name"])
        assert entry["type"] in ("skill-md", "archive")
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", entry["digest"])


def skill_md(name: str, description: str, extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n\nDo it.\n"


def load(folder: Path) -> ExportSkill:
    """An ExportSkill from a real skill folder (what the lead's walk will give)."""
    files = []
    for root, _, names in os.walk(folder):
        for name in names:
            path = Path(root) / name
            rel = path.relative_to(folder).as_posix()
            files.append((rel, path.read_bytes(), bool(path.stat().st_mode & stat.S_IXUSR)))
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    data = split_frontmatter(text).data
    return ExportSkill.from_files(data["name"], data["description"], data, files)


@pytest.fixture
def skills(tmp_path: Path) -> list[ExportSkill]:
    make_tree(tmp_path / "src" / "wrangler", {
        "SKILL.md": skill_md("wrangler", "Deploy Workers projects.", "license: MIT\n"),
        "scripts/deploy.sh": "#!/bin/sh\necho deploy\n",
        "references/COMMANDS.md": "# Commands\n",
        "assets/données.txt": "é\n",
    })
    os.chmod(tmp_path / "src" / "wrangler" / "scripts" / "deploy.sh", 0o755)
    make_tree(tmp_path / "src" / "git-workflow", {
        "SKILL.md": skill_md("git-workflow", "Follow the team's Git conventions."),
    })
    return [load(tmp_path / "src" / "wrangler"), load(tmp_path / "src" / "git-workflow")]


def test_well_known_export_digests_match_the_bytes_served(
        tmp_path: Path, skills: list[ExportSkill]) -> None:
    site = tmp_path / "site"
    entries = export_well_known(skills, site)
    root = site / ".well-known" / "agent-skills"
    raw = (root / "index.json").read_bytes()
    index = json.loads(raw)
    check_index_fields(index)
    assert [e["name"] for e in index["skills"]] == ["git-workflow", "wrangler"]
    assert [IndexEntry.from_dict(e) for e in index["skills"]] == entries
    for entry in index["skills"]:
        served = root / entry["url"]  # relative to the index: the file beside it
        data = served.read_bytes()
        assert entry["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
        assert stat.S_IMODE(served.stat().st_mode) == 0o644
    single, archive = index["skills"]
    assert single["type"] == "skill-md"
    assert single["url"] == "git-workflow/SKILL.md"
    assert (root / "git-workflow" / "SKILL.md").read_text() == skill_md(
        "git-workflow", "Follow the team's Git conventions.")
    assert archive["type"] == "archive"
    assert archive["url"] == "wrangler.zip"
    assert archive["description"] == "Deploy Workers projects."
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) == [
        "git-workflow/SKILL.md", "index.json", "wrangler.zip"]


def test_index_passes_the_schema(tmp_path: Path, skills: list[ExportSkill]) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the test extra")
    export_well_known(skills, tmp_path)
    index = json.loads((tmp_path / ".well-known/agent-skills/index.json").read_bytes())
    jsonschema.validate(index, INDEX_SCHEMA)
    index["skills"][0]["digest"] = "blake3:" + "0" * 64
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(index, INDEX_SCHEMA)


def test_archive_has_skill_md_at_its_root_and_reads_back(
        tmp_path: Path, skills: list[ExportSkill]) -> None:
    export_well_known(skills, tmp_path)
    path = tmp_path / ".well-known/agent-skills/wrangler.zip"
    wrangler = skills[0]
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None
        names = archive.namelist()
        assert names == sorted(names, key=lambda n: n.encode("utf-8"))
        assert names == [f.path for f in wrangler.files]
        assert "SKILL.md" in names  # at the root: no wrapper folder
        for file in wrangler.files:
            info = archive.getinfo(file.path)
            assert info.compress_type == zipfile.ZIP_STORED
            assert archive.read(info) == file.data
            assert (info.external_attr >> 16) & 0o777 == (0o755 if file.executable else 0o644)
    assert [f.path for f in wrangler.files if f.executable] == ["scripts/deploy.sh"]
    if shutil.which("unzip"):
        out = tmp_path / "unzipped"
        subprocess.run(["unzip", "-q", str(path), "-d", str(out)], check=True)
        assert (out / "SKILL.md").read_bytes() == wrangler.files[0].data
        assert os.access(out / "scripts" / "deploy.sh", os.X_OK)


def test_export_is_byte_reproducible(tmp_path: Path, skills: list[ExportSkill]) -> None:
    export_well_known(skills, tmp_path / "a")
    export_well_known(list(reversed(skills)), tmp_path / "b")
    for rel in ("index.json", "wrangler.zip", "git-workflow/SKILL.md"):
        a = (tmp_path / "a/.well-known/agent-skills" / rel).read_bytes()
        b = (tmp_path / "b/.well-known/agent-skills" / rel).read_bytes()
        assert a == b, rel
    raw = (tmp_path / "a/.well-known/agent-skills/index.json").read_bytes()
    assert raw.endswith(b"}\n") and raw.count(b"\n") == 1
    assert raw == json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":"),
                             ensure_ascii=False).encode() + b"\n"


def test_export_replaces_the_previous_folder_whole(
        tmp_path: Path, skills: list[ExportSkill]) -> None:
    export_well_known(skills, tmp_path)
    export_well_known(skills[1:], tmp_path)
    root = tmp_path / ".well-known/agent-skills"
    assert sorted(p.name for p in root.iterdir()) == ["git-workflow", "index.json"]
    assert sorted(p.name for p in (tmp_path / ".well-known").iterdir()) == ["agent-skills"]


def test_leftovers_of_a_killed_export_are_removed(
        tmp_path: Path, skills: list[ExportSkill]) -> None:
    parent = tmp_path / ".well-known"
    dead = 99_999_999  # above any pid_max: no such process
    for kind in ("tmp", "old"):
        make_tree(parent / f".agent-skills.skillpack-{kind}-{dead}-00ff", {"index.json": "{}"})
    mine = parent / f".agent-skills.skillpack-tmp-{os.getpid()}-abcd"  # a live process's
    make_tree(mine, {"index.json": "{}"})
    export_well_known(skills, tmp_path)
    assert sorted(p.name for p in parent.iterdir()) == sorted(["agent-skills", mine.name])


@pytest.mark.parametrize(("change", "code"), [
    (lambda s: [s[0], s[0]], "export-duplicate"),
    (lambda s: [ExportSkill("Bad_Name", "d", {}, s[0].files)], "target-name"),
    (lambda s: [ExportSkill("x", " ", {}, s[0].files)], "export-description"),
    (lambda s: [ExportSkill("x", "d" * 1025, {}, s[0].files)], "export-description"),
    (lambda s: [ExportSkill("x", "d", {}, s[0].files[1:])], "export-no-skill-md"),
    (lambda s: [ExportSkill.from_files("x", "d", {}, [("SKILL.md", b"", False),
                                                      ("../up.txt", b"", False)])],
     "export-path"),
    (lambda s: [ExportSkill.from_files("x", "d", {}, [("SKILL.md", b"", False),
                                                      ("a.txt", b"", False),
                                                      ("A.txt", b"", False)])],
     "export-path"),
])
def test_bad_input_changes_nothing(tmp_path: Path, skills: list[ExportSkill], change: Any,
                                   code: str) -> None:
    export_well_known(skills, tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(SkillError) as caught:
        export_well_known(change(skills), tmp_path)
    assert code in [p.code for p in caught.value.problems]
    assert "nothing was written" in str(caught.value)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in (tmp_path / ".well-known").iterdir()) == ["agent-skills"]


def test_unwritable_site_is_a_write_error(tmp_path: Path, skills: list[ExportSkill]) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(WriteError) as caught:
        export_well_known(skills, tmp_path / "file")
    assert "nothing was written" in str(caught.value)
    assert (tmp_path / "file").read_text() == "not a folder"


def test_base_url_makes_absolute_urls(skills: list[ExportSkill], tmp_path: Path) -> None:
    entries = export_well_known(skills, tmp_path, base_url="https://cdn.example.com/skills/")
    assert [e.url for e in entries] == ["https://cdn.example.com/skills/git-workflow/SKILL.md",
                                        "https://cdn.example.com/skills/wrangler.zip"]


def test_well_known_index_is_sorted_canonical_json() -> None:
    digest = "sha256:" + "a" * 64
    raw = well_known_index([IndexEntry("b", "archive", "B é", "/b.zip", digest),
                            IndexEntry("a", "skill-md", "A", "/a/SKILL.md", digest)])
    assert raw == (
        '{"$schema":"' + DISCOVERY_SCHEMA + '","skills":['
        '{"description":"A","digest":"' + digest + '","name":"a","type":"skill-md",'
        '"url":"/a/SKILL.md"},'
        '{"description":"B é","digest":"' + digest + '","name":"b","type":"archive",'
        '"url":"/b.zip"}]}\n').encode("utf-8")


def test_root_archive_matches_the_rfc_worked_example_file_digests() -> None:
    # the RFC's worked example: '# Hello\n' and '#!/bin/sh\n' and their SHA-256
    skill = ExportSkill.from_files("hello", "Say hello.", {}, [
        ("SKILL.md", b"# Hello\n", False), ("scripts/run.sh", b"#!/bin/sh\n", True)])
    # (the entry alone: the example's SKILL.md has no frontmatter, which the list refuses)
    entry = mcp_skill_entry(ExportSkill(
        "hello", "Say hello.", {"name": "hello", "description": "Say hello."}, skill.files))
    assert [r["digest"] for r in entry["resources"]] == [
        "sha256:90f8ec5669cd34183b9b0fdf8b94f5efb4c3672876330f4aa76088c2b4ad17be",
        "sha256:a8076d3d28d21e02012b20eaf7dbf75409a6277134439025f282e368e3305abf",
    ]
    with zipfile.ZipFile(io.BytesIO(root_archive(skill))) as archive:
        assert archive.namelist() == ["SKILL.md", "scripts/run.sh"]


def test_mcp_skills_list(skills: list[ExportSkill]) -> None:
    raw = mcp_skills_list(skills)
    assert raw == mcp_skills_list(list(reversed(skills)))  # deterministic
    assert raw.endswith(b"}\n") and raw.count(b"\n") == 1
    result = json.loads(raw)
    assert result["resultType"] == "complete"
    assert isinstance(result["ttlMs"], int) and result["cacheScope"] == "public"
    assert [s["uri"] for s in result["skills"]] == ["skill://git-workflow/SKILL.md",
                                                   "skill://wrangler/SKILL.md"]
    by_name = {s.name: s for s in skills}
    for entry in result["skills"]:
        skill = by_name[entry["frontmatter"]["name"]]
        assert entry["frontmatter"] == dict(skill.frontmatter)
        resources = entry["resources"]
        assert [r["uri"] for r in resources] == [skill_uri(skill.name, f.path)
                                                 for f in skill.files]
        assert entry["uri"] in [r["uri"] for r in resources]  # SKILL.md is listed too
        for resource, file in zip(resources, skill.files, strict=True):
            assert set(resource) == {"uri", "digest", "size"}
            assert resource["digest"] == "sha256:" + hashlib.sha256(file.data).hexdigest()
            assert resource["size"] == len(file.data)
    wrangler = result["skills"][1]
    assert wrangler["frontmatter"]["license"] == "MIT"
    assert "skill://wrangler/assets/donn%C3%A9es.txt" in [r["uri"] for r in
                                                         wrangler["resources"]]


def test_mcp_limits_are_checkable_from_the_entry(skills: list[ExportSkill]) -> None:
    [entry] = json.loads(mcp_skills_list(skills[:1]))["skills"]
    facts = SkillFacts.from_files(
        "wrangler", entry["frontmatter"],
        [(r["uri"].removeprefix("skill://wrangler/"), r["size"]) for r in entry["resources"]])
    assert check_targets(["mcp"], facts) == []
    many = ExportSkill.from_files("big", "Big.", {"name": "big", "description": "Big."},
                                  [("SKILL.md", b"---\nname: big\ndescription: Big.\n---\n",
                                    False)]
                                  + [(f"r/{i:03d}", b"", False) for i in range(512)])
    entry = mcp_skill_entry(many)
    assert len(entry["resources"]) == 513
    facts = SkillFacts.from_files("big", entry["frontmatter"],
                                  [(r["uri"], r["size"]) for r in entry["resources"]])
    assert [p.code for p in check_targets(["mcp"], facts)] == ["target-too-many-files"]
    with pytest.raises(SkillError) as caught:  # and the list refuses to serve it
        mcp_skills_list([many])
    assert [p.code for p in caught.value.problems] == ["target-too-many-files"]


def test_mcp_refuses_a_frontmatter_that_is_not_the_skills(skills: list[ExportSkill]) -> None:
    hard = ExportSkill("wrangler", "Deploy Workers projects.", {"skill": "wrangler"},
                       skills[0].files)
    with pytest.raises(SkillError) as caught:
        mcp_skills_list([hard])
    assert [p.code for p in caught.value.problems] == ["target-name-key-missing",
                                                       "export-frontmatter"]
    other = ExportSkill("wrangler", "Deploy Workers projects.",
                        {"name": "wrangler", "description": "Something else."}, skills[0].files)
    with pytest.raises(SkillError) as caught:
        mcp_skills_list([other])
    assert [p.code for p in caught.value.problems] == ["export-frontmatter"]


def test_skill_uri_prefix_and_escaping() -> None:
    assert skill_uri("refunds", prefix="acme/billing") == "skill://acme/billing/refunds/SKILL.md"
    assert skill_uri("x", "a b/c#d?.md") == "skill://x/a%20b/c%23d%3F.md"
