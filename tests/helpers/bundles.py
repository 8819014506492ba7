"""Bundles and archives built member by member from skill folders, for the runtime's tests:
`bundle_members` gives a bundle as a dict member -> (bytes, executable) that a test alters
(`set_manifest`, `reindex`) before `zip_of` writes it. Built with `ZipWriter`, `Manifest` and
the digest functions, not with `pack` or `bundle`."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from helpers.paths import CORPUS, CORPUS_SKILLS
from helpers.zips import Members, zip_of
from skillpack.formats.digest import bundle_digest, digest_records
from skillpack.formats.manifest import FORMAT, Manifest, canonical_json
from skillpack.source.load import load_skill, skill_fileset
from skillpack.source.records import programs as skill_programs
from skillpack.source.records import record_files

INDEX = ".skillpack/bundle.json"
LEFT_OUT = (CORPUS / "anthropics-skills" / "claude-api",  # invalid (description too long)
            CORPUS / "openai-skills" / "skill-creator")  # the second `skill-creator`
#: The corpus skills one bundle can hold.
BUNDLE_SKILLS = [folder for folder in CORPUS_SKILLS if folder not in LEFT_OUT]


def skill_members(folder: Path) -> Members:
    """The members a `.skill` archive of `folder` holds: its manifest and every file."""
    skill = load_skill(folder)
    fileset = skill_fileset(skill)
    records = record_files(fileset)
    datas = [(Path(fileset.root) / walked.disk_path).read_bytes() for walked in fileset.files]
    manifest = Manifest(skill.name, skill.description, digest_records(records), tuple(records),
                        tuple(p.to_dict() for p in skill_programs(skill, fileset)),
                        tuple(tool.to_dict() for tool in skill.tools), fileset.allowed,
                        sha256=tuple(hashlib.sha256(data).hexdigest() for data in datas))
    members: Members = {f"{skill.name}/.skillpack/manifest.json": (manifest.to_bytes(), False)}
    for data, record in zip(datas, records, strict=True):
        members[f"{skill.name}/{record.path}"] = (data, record.mode == "100755")
    return members


def manifest_of(members: Members, name: str) -> Manifest:
    return Manifest.from_bytes(members[f"{name}/.skillpack/manifest.json"][0])


def set_manifest(members: Members, manifest: Manifest | dict[str, Any]) -> None:
    data = manifest.to_bytes() if isinstance(manifest, Manifest) else canonical_json(manifest)
    name = manifest.name if isinstance(manifest, Manifest) else manifest["name"]
    members[f"{name}/.skillpack/manifest.json"] = (data, False)


def reindex(members: Members, **over: Any) -> None:
    """(Re)write the bundle index from the manifests present; `over` overrides its fields."""
    pairs = sorted(
        ((name.split("/")[0], Manifest.from_bytes(data).digest)
         for name, (data, _) in members.items() if name.endswith("/.skillpack/manifest.json")),
        key=lambda pair: pair[0].encode())
    index = {"format": FORMAT, "digest": bundle_digest(pairs),
             "skills": [{"name": name, "digest": digest} for name, digest in pairs]}
    index.update(over)
    members[INDEX] = (canonical_json(index), False)


def bundle_members(folders: list[Path]) -> Members:
    members: Members = {}
    for folder in folders:
        members.update(skill_members(folder))
    reindex(members)
    return members


def build_bundle(folders: list[Path]) -> bytes:
    return zip_of(bundle_members(folders))


def build_archive(folder: Path) -> bytes:
    return zip_of(skill_members(folder))
