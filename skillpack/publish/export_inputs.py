"""The skills `export` and `push` publish, read from the paths given.

Each path is what `skillpack.source.classify` reads. A skill folder (from a folder of skills,
a SKILL.md, an archive made elsewhere unpacked) is checked and packed in memory exactly as
`pack` writes it (`prepare_many`: the validity gate, the walk's refusals, the secret rules;
all folders checked before any archive is made: one invalid skill refuses all); an archive
or bundle of ours is taken as it is. Every archive is then verified completely from its bytes
(`verify_bytes`), and what is published is made from the verified archive: a skill's files
are served, and hashed again, by the runtime's reader, and the frontmatter is the one
SKILL.md's parser gives. A folder and the `.skill` packed from it give the same records.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable

from skillpack.formats.paths import SKILL_MD
from skillpack.packing.members import write_members
from skillpack.packing.prepare import prepare_many
from skillpack.packing.verify import verify_bytes
from skillpack.publish.exports import ExportSkill
from skillpack.publish.oci import OciArtifact, artifact_from_bytes, toolhive_from_bytes
from skillpack.runtime import LoadedSkill
from skillpack.skillmd.frontmatter import normalise_text
from skillpack.skillmd.yaml_core import core_frontmatter, frontmatter_yaml
from skillpack.source.classify import classify_all, read_input, unpacked_foreign
from skillpack.storedzip.writer import ZipWriter

__all__ = ["archives_of", "artifacts_from_paths", "export_skill", "export_skills"]

_EXECUTABLE = "100755"


def archives_of(paths: Iterable[str | os.PathLike[str]]) -> list[tuple[bytes, str]]:
    """The bytes of every archive ``paths`` stand for, in order, each with what to call it:
    an archive or bundle of ours as it is, each skill folder packed in memory (not yet
    verified: `verify_bytes` them)."""
    found: list[tuple[bytes, str]] = []
    with unpacked_foreign(classify_all(paths).items) as items:
        folders = [i.path for i in items if i.kind == "folder"]
        prepared = iter(prepare_many(folders) if folders else ())
        for item in items:
            if item.kind == "archive":
                found.append((read_input(item.path), item.path))
                continue
            buffer = io.BytesIO()
            with ZipWriter(buffer) as writer:
                write_members(writer, next(prepared).members())
            found.append((buffer.getvalue(), item.label))
    return found


def export_skill(loaded: LoadedSkill) -> ExportSkill:
    """The export record of one verified skill: its name, description, frontmatter (as a
    YAML 1.2 host reads it: `core_frontmatter`) and every file (path, bytes, executable
    bit), the manifest itself left out."""
    modes = {record.path: record.mode for record in loaded.manifest.files}
    skill = loaded.skill
    text = frontmatter_yaml(normalise_text(loaded.file(SKILL_MD).text()))
    return ExportSkill.from_files(
        loaded.name, skill.description, core_frontmatter(text or ""),
        [(path, loaded.file(path).bytes(), modes.get(path) == _EXECUTABLE)
         for path in loaded.files()])


def export_skills(paths: Iterable[str | os.PathLike[str]]) -> list[ExportSkill]:
    """One record per skill under ``paths`` (every skill of a bundle); the same skill (name
    and digest) given twice is listed once. Raises what `pack` and `verify` raise."""
    skills: list[ExportSkill] = []
    seen: set[tuple[str, str]] = set()
    for data, source in archives_of(paths):
        bundle = verify_bytes(data, source=source).loaded
        assert bundle is not None
        for name in bundle.names:
            skill = bundle[name]
            if (skill.name, skill.digest) not in seen:
                seen.add((skill.name, skill.digest))
                skills.append(export_skill(skill))
    return skills


def artifacts_from_paths(paths: Iterable[str | os.PathLike[str]], *,
                         fmt: str = "skillpack") -> list[OciArtifact]:
    """One OCI artifact per `.skill` or bundle file, and one per skill folder, under
    ``paths``; sorted by kind then name, the same one given twice listed once. With ``fmt``
    ``toolhive``, one ToolHive artifact per skill (a bundle's skills each)."""
    found: dict[str, OciArtifact] = {}
    for data, source in archives_of(paths):
        made = (toolhive_from_bytes(data, source=source) if fmt == "toolhive"
                else [artifact_from_bytes(data, source=source)])
        for art in made:
            found.setdefault(art.manifest_digest, art)
    return sorted(found.values(), key=lambda a: (a.kind, a.name.encode("utf-8")))
