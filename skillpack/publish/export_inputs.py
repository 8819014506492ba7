"""The skills `export well-known` and `export mcp` publish, read from the paths given.

A skill folder (or a folder of skills, or a SKILL.md) is checked and packed in memory exactly
as `pack` writes it (`prepare_many`: the validity gate, the walk's refusals, the secret
rules; each file checked against the BLAKE3 the walk recorded while it is copied); a
`.skill` archive or a bundle is verified completely (`verify_file`), one open file at a time;
a folder of archives stands for its archives, and an archive made elsewhere (Anthropic's
`.skill`, a zip, a `.tar.gz`) for the folder it unpacks to. Either way the records
`skillpack.publish.exports` takes are made from the verified archive: every file's bytes are
served, and hashed again, by the runtime's reader, and the frontmatter is the one SKILL.md's
parser gives. A folder and the `.skill` packed from it give the same records.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable

from skillpack.formats.paths import SKILL_MD
from skillpack.packing.members import write_members
from skillpack.packing.pack import prepare_many
from skillpack.packing.verify import verified_archive
from skillpack.publish.exports import ExportSkill
from skillpack.runtime import Bundle, LoadedSkill, load
from skillpack.source.inputs import as_folders
from skillpack.storedzip.writer import ZipWriter

__all__ = ["export_skill", "export_skills"]

_EXECUTABLE = "100755"


def export_skill(loaded: LoadedSkill) -> ExportSkill:
    """The export record of one verified skill: its name, description, frontmatter and
    every file (path, bytes, executable bit), the manifest itself left out."""
    modes = {record.path: record.mode for record in loaded.manifest.files}
    skill = loaded.skill
    return ExportSkill.from_files(
        loaded.name, skill.description, skill.frontmatter,
        [(path, loaded.file(path).bytes(), modes.get(path) == _EXECUTABLE)
         for path in loaded.files()])


def _is_folder_path(path: str) -> bool:
    return os.path.isdir(path) or os.path.basename(path) == SKILL_MD


def export_skills(paths: Iterable[str | os.PathLike[str]]) -> list[ExportSkill]:
    """One record per skill under ``paths``: skill folders, folders of skills, SKILL.md
    files, `.skill` archives and bundles (every skill of a bundle). All folders are checked
    before any record is made (one invalid skill refuses all, as `pack` does); the same
    skill (name and digest) given twice is listed once. Raises what `pack` and `verify`
    raise."""
    skills: list[ExportSkill] = []
    seen: set[tuple[str, str]] = set()

    def add(bundle: Bundle) -> None:
        for name in bundle.names:
            skill = bundle[name]
            if (skill.name, skill.digest) not in seen:
                seen.add((skill.name, skill.digest))
                skills.append(export_skill(skill))

    folders: list[str] = []
    # a folder of archives stands for its archives, a foreign archive for its folder
    with as_folders(paths) as (inputs, labels):
        for path in inputs:
            if _is_folder_path(path):
                folders.append(path)
                continue
            with verified_archive(path) as report:  # closed after: one descriptor at a time
                assert report.loaded is not None  # verify_file returns what it loaded
                add(report.loaded)
        for item in prepare_many(folders) if folders else []:
            buffer = io.BytesIO()
            with ZipWriter(buffer) as writer:
                write_members(writer, item.members())
            add(load(buffer.getvalue(), source=labels.get(item.source, item.source)))
    return skills
