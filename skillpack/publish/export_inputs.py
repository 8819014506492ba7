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
from collections.abc import Iterable, Iterator
from typing import Literal

from skillpack.errors import SkillpackError
from skillpack.formats.paths import SKILL_MD
from skillpack.packing.check import name_clashes
from skillpack.packing.members import write_members
from skillpack.packing.selection import Selection
from skillpack.packing.verify import verify_bytes
from skillpack.publish.exports import ExportSkill, exportable
from skillpack.publish.oci import OciArtifact, artifact_from_bytes, toolhive_from_bytes
from skillpack.runtime import Bundle, LoadedSkill
from skillpack.skillmd.frontmatter import normalise_text
from skillpack.skillmd.yaml_core import core_frontmatter, frontmatter_yaml
from skillpack.source.classify import read_input, unpacked_foreign
from skillpack.storedzip.writer import ZipWriter

__all__ = ["archives_of", "artifacts_from_paths", "export_skill", "export_skills",
           "exportable_skills"]

_EXECUTABLE = "100755"


def archives_of(paths: Iterable[str | os.PathLike[str]], *,
                selection: Selection | None = None) -> list[tuple[bytes, str]]:
    """The bytes of every archive ``paths`` stand for, in order, each with what to call it:
    an archive or bundle of ours as it is, each skill folder packed in memory (not yet
    verified: `verify_bytes` them). With `selection`, what it excludes is left out and,
    keeping going, a refused skill skipped (``selection.skipped``)."""
    selection = selection or Selection()
    found: list[tuple[bytes, str]] = []
    collected = selection.collecting()  # every refusal judged before any is raised
    with collected.each(collected.inputs(paths), unpacked_foreign) as items:
        prepared = collected.prepare(items)
        for item in items:
            if item.kind == "archive":
                try:
                    found.append((read_input(item.path), item.path))
                except SkillpackError as err:
                    collected.skip(item.path, err)
                continue
            p = prepared.get(item.path)
            if p is None:  # skipped
                continue
            buffer = io.BytesIO()
            with ZipWriter(buffer) as writer:
                write_members(writer, p.members())
            found.append((buffer.getvalue(), item.label))
    selection.take(collected)
    return found


def _verified(paths: Iterable[str | os.PathLike[str]],
              selection: Selection) -> Iterator[tuple[Bundle, str]]:
    """Each archive of `archives_of`, verified from its bytes, with what to call it; one
    that does not verify raises, or keeping going is skipped."""
    for data, source in archives_of(paths, selection=selection):
        try:
            bundle = verify_bytes(data, source=source).loaded
        except SkillpackError as err:
            selection.skip(source, err)
            continue
        assert bundle is not None
        yield bundle, source


def export_skill(loaded: LoadedSkill, source: str = "") -> ExportSkill:
    """The export record of one verified skill: its name, description, frontmatter (as a
    YAML 1.2 host reads it: `core_frontmatter`) and every file (path, bytes, executable
    bit), the manifest itself left out; `source`: where it came from, as the user knows it."""
    modes = {record.path: record.mode for record in loaded.manifest.files}
    skill = loaded.skill
    text = frontmatter_yaml(normalise_text(loaded.file(SKILL_MD).text()))
    return ExportSkill.from_files(
        loaded.name, skill.description, core_frontmatter(text or ""),
        [(path, loaded.file(path).bytes(), modes.get(path) == _EXECUTABLE)
         for path in loaded.files()], source=source)


def export_skills(paths: Iterable[str | os.PathLike[str]], *,
                  selection: Selection | None = None) -> list[ExportSkill]:
    """One record per skill under ``paths`` (every skill of a bundle); the same skill (name
    and digest) given twice is listed once; two different skills with one name are refused
    (`name_clashes`), or keeping going the later skipped. Raises what `pack` and `verify`
    raise, every refusal at once (with `selection` keeping going: skips it)."""
    selection = selection or Selection()
    skills: list[ExportSkill] = []
    first: dict[str, tuple[str, str]] = {}  # name -> (digest, where) of the one kept
    collected = selection.collecting()  # every refusal judged before any is raised
    for bundle, source in _verified(paths, collected):
        for name in bundle.names:
            skill = bundle[name]
            where = source if len(bundle.names) == 1 else f"{source}/{name}"
            known = first.get(skill.name)
            clash = name_clashes([(skill.name, *known), (skill.name, skill.digest, where)]
                                 if known is not None else [])
            if clash:
                collected.skip(where, SkillpackError(
                    clash[0].message, path=where, problems=clash,
                    hint="export one of them, or rename one"))
            elif known is None:
                first[skill.name] = (skill.digest, where)
                skills.append(export_skill(skill, where))
    selection.take(collected)
    return skills


def exportable_skills(paths: Iterable[str | os.PathLike[str]],
                      host: Literal["mcp", "well-known"],
                      selection: Selection) -> list[ExportSkill]:
    """The skills under `paths` that the export for `host` takes (`export_skills`, then
    `exportable`), every refusal of either judged before any is raised: a skill `check`
    refuses hides neither another's name clash nor a host's limit (`Selection.collecting`).
    Refused all at once, or with `selection` keeping going skipped and listed."""
    collected = selection.collecting()
    skills = exportable(export_skills(paths, selection=collected), host, collected)
    selection.take(collected)
    return skills


def artifacts_from_paths(paths: Iterable[str | os.PathLike[str]], *,
                         selection: Selection | None = None,
                         fmt: str = "skillpack") -> list[OciArtifact]:
    """One OCI artifact per `.skill` or bundle file, and one per skill folder, under
    ``paths``; sorted by kind then name, the same one given twice listed once. With
    `selection`, what it excludes is left out and, keeping going, a refused skill or an
    archive that does not verify is skipped (``selection.skipped``). With ``fmt``
    ``toolhive``, one ToolHive artifact per skill (a bundle's skills each)."""
    selection = selection or Selection()
    found: dict[str, OciArtifact] = {}
    collected = selection.collecting()  # every refusal judged before any is raised
    for data, source in archives_of(paths, selection=collected):
        try:
            made = (toolhive_from_bytes(data, source=source) if fmt == "toolhive"
                    else [artifact_from_bytes(data, source=source)])
        except SkillpackError as err:
            collected.skip(source, err)
            continue
        for art in made:
            found.setdefault(art.manifest_digest, art)
    selection.take(collected)
    return sorted(found.values(), key=lambda a: (a.kind, a.name.encode("utf-8")))
