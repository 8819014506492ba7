"""Pack skills into content-addressed `.skill` archives (SPEC section 3).

`prepare_skill` runs everything that can refuse a skill — parse, the Agent Skills rules, the
walk, hashing, the content checks and the limits of the hosts it is packed for (``targets``,
`skillpack.packing.targets`) — before a byte of its archive is written, and no archive of a
pack gets its final name until every skill has passed. `pack` writes one archive per skill,
``<name>-<first 16 hex digits of the digest>.skill``: a STORED zip of
``<name>/.skillpack/manifest.json`` and ``<name>/<path>`` for every carried file (the
``wrapped`` layout), sorted. What is packed for a host or an installer carries the skill's
files only, no manifest (SPEC section 3b, `skillpack.packing.targets.carries_manifest`):
``<name>-<digest16>.zip`` for a host target (the wrapped layout), ``<name>-<digest16>.root.zip``
in the ``root`` layout (no ``<name>/`` folder). Every archive is written
with fixed timestamps and 0644/0755 modes, written to a temporary file and renamed (all the
archives of a pack together, `skillpack._atomic.AtomicBatch`). A small file is written from
the bytes the walk read and hashed; a large one is streamed from disk and hashed again while
it is copied: a file that changed since it was hashed stops the pack and leaves nothing under
the final name.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO, cast

from skillpack._atomic import AtomicBatch
from skillpack.errors import (
    ArchiveError,
    Problem,
    RefusedError,
    SkillError,
    SkillpackError,
    WriteError,
)
from skillpack.packing.members import (
    Member,
    Progress,
    existing_is_current,
    write_members,
)
from skillpack.packing.prepare import (
    KEEP_BYTES,
    OUTPUT_RULE,
    PackOptions,
    PreparedSkill,
    ResolvedOutputs,
    output_rules,
    prepare_many,
    prepare_parsed,
    prepare_skill,
    target_warnings,
)
from skillpack.packing.selection import Selection
from skillpack.packing.sha256 import HashingFile, archive_sha256, parts_sha256
from skillpack.packing.targets import Layout, default_layout
from skillpack.packing.verify import as_skill_folders
from skillpack.source.classify import Input
from skillpack.source.define import DefinedSkill, materialized
from skillpack.storedzip.source import FileSpan
from skillpack.storedzip.writer import ZipWriter

__all__ = [
    "ARCHIVE_SUFFIX",
    "HOST_SUFFIX",
    "OUTPUT_RULE",
    "ROOT_SUFFIX",
    "PackOptions",
    "PackResult",
    "PreparedSkill",
    "archive_name",
    "output_rules",
    "pack",
    "pack_prepared",
    "pack_skills",
    "prepare_many",
    "prepare_parsed",
    "prepare_skill",
    "target_warnings",
]

#: skillpack's own archive, the one that carries its manifest (SPEC section 3).
ARCHIVE_SUFFIX = ".skill"

#: An archive packed for a host (SPEC section 3b: the skill's files under ``<name>/``, no
#: manifest) is a ``.zip``: what upload forms and APIs take, and never the file name of the
#: ``.skill`` of the same skill, whose bytes differ by the manifest.
HOST_SUFFIX = ".zip"

#: A root-layout archive (SKILL.md at the archive root, no manifest) is a ``.root.zip``: a
#: zip as discovery sites serve it, and never the file name of the wrapped ``.zip`` of the
#: same skill (both are named by the one digest).
ROOT_SUFFIX = ".root.zip"


@dataclass(frozen=True)
class PackResult:
    """What `pack_skills` did for one skill: the archive path and whether it was written."""

    name: str
    digest: str
    path: Path
    written: bool
    source: str
    sha256: str = ""  # "sha256:<hex>" of the archive's bytes
    layout: Layout = "wrapped"
    warnings: tuple[Problem, ...] = ()  # the targets' warnings (errors refuse the pack)
    manifest: bool = True  # the archive carries skillpack's manifest (a `.skill`)

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "digest": self.digest, "archive": str(self.path),
                "sha256": self.sha256, "layout": self.layout, "manifest": self.manifest,
                "written": self.written, "source": self.source,
                "warnings": [p.to_dict() for p in self.warnings]}


def archive_name(name: str, digest: str, layout: Layout = "wrapped", *,
                 manifest: bool = True) -> str:
    """``<name>-<first 16 hex digits of the digest>.skill``, skillpack's archive with its
    manifest; without it (what a host is sent), ``.zip`` in the wrapped layout and
    ``.root.zip`` in the root layout (which never carries the manifest)."""
    suffix = ROOT_SUFFIX if layout == "root" else ARCHIVE_SUFFIX if manifest else HOST_SUFFIX
    return f"{name}-{digest.removeprefix('blake3:')[:16]}{suffix}"


#: An archive of members all in memory and at most this large is built in memory, as the list
#: of its writer's writes, and written in one `os.write` loop (`_write_one`); larger ones are
#: written member by member through `HashingFile`.
JOIN_BYTES = 8 << 20


def pack_skills(paths: Iterable[str | os.PathLike[str] | DefinedSkill],
                out_dir: str | os.PathLike[str], *,
                progress: Progress | None = None,
                options: PackOptions | None = None,
                total: Callable[[int], None] | None = None,
                selection: Selection | None = None) -> list[PackResult]:
    """Pack every skill under ``paths`` into ``out_dir``; see `pack`.

    A path is what `skillpack.source.classify` reads: a skill folder, a folder of skills or
    of archives, an archive of ours (verified, then packed again from the skill it holds:
    the same bytes for the same layout) or one made elsewhere (packed from the folder it
    unpacks to: its digest is that of the folder it was made from). Each skill is written,
    under a temp name, as soon as it is prepared, from the bytes its walk read and hashed (up
    to `KEEP_BYTES` a skill; larger files are streamed from disk and hashed again):
    each small file is read once, and one skill's files at a time are held in memory.
    Nothing gets its final name until every skill has passed. With `total`, every skill is
    prepared first (its files then streamed from disk), and ``total(bytes)`` told what
    `progress` will count before the first is written. A skill defined in code
    (`skillpack.define_skill`) is written to a temporary folder, packed from there, and the
    folder removed: its archive is the one its written folder would give.
    With `selection` (``--exclude``, ``--ignore``, ``--keep-going``), what it excludes is
    left out and, keeping going, a skill (or an archive, or a PATH) that is refused is
    skipped into ``selection.skipped`` while every other is written.
    """
    selection = selection or Selection()
    options = selection.options(options)
    if options.layout is None:  # targets that disagree on the layout: refused first
        default_layout(options.targets)
    # every refusal judged before any is raised (`Selection.collecting`)
    collected = selection.collecting()
    with materialized(paths) as (given, labels):
        found = collected.inputs(given)
        with collected.each(found, as_skill_folders) as items:
            results = _pack_folders(items, out_dir, progress, options, total, selection,
                                    collected)
    return [replace(r, source=labels.get(r.source, r.source)) for r in results]


def _pack_folders(items: Sequence[Input], out_dir: str | os.PathLike[str],
                  progress: Progress | None, options: PackOptions,
                  total: Callable[[int], None] | None,
                  selection: Selection, collected: Selection) -> list[PackResult]:
    out = Path(out_dir)
    outputs = ResolvedOutputs([out])
    made = not os.path.isdir(out)
    results: list[PackResult] = []
    failures: list[tuple[str, SkillpackError]] = []
    ready: list[tuple[PreparedSkill, Input]] = []
    try:
        with AtomicBatch() as batch:

            def write(prepared: PreparedSkill, item: Input) -> None:
                if not results:
                    _make_folder(out)
                result = _write_one(batch, prepared, out, progress, options)
                results.append(replace(result, source=item.label))

            for item in items:
                try:
                    prepared = prepare_skill(item.path, options=options, outputs=outputs,
                                             keep_bytes=0 if total else KEEP_BYTES)
                except (SkillError, RefusedError, ArchiveError) as err:
                    failures.append((item.label, item.relabel(err)))
                    continue
                if total is not None:
                    ready.append((prepared, item))
                elif selection.keep_going or not (failures or collected.skipped):
                    write(prepared, item)  # else the rest are only checked
            selection.take(collected, also=failures)
            if total is not None:
                total(sum(f.size for p, _ in ready for f in p.manifest.files))
                for prepared, item in ready:
                    write(prepared, item)
    except BaseException:
        if made:
            with contextlib.suppress(OSError):
                out.rmdir()  # the folder this call made, if it is empty
        raise
    return _with_sha256(results)


def _with_sha256(results: list[PackResult]) -> list[PackResult]:
    """Each result with the SHA-256 of its archive's bytes: hashed as they were written, or
    (an archive left as it was, or one whose writer patched a CRC) read once named."""
    return [r if r.sha256 else replace(r, sha256=archive_sha256(r.path)) for r in results]


def pack_prepared(prepared: Sequence[PreparedSkill], out_dir: str | os.PathLike[str], *,
                  progress: Progress | None = None,
                  options: PackOptions | None = None) -> list[PackResult]:
    """Write an archive for each prepared skill into ``out_dir`` (created if missing); all or
    nothing, as `pack`. ``options`` are those the skills were prepared with (for the
    targets' warnings)."""
    out = Path(out_dir)
    _make_folder(out)
    with AtomicBatch() as batch:
        results = [_write_one(batch, item, out, progress, options or PackOptions())
                   for item in prepared]
    return _with_sha256(results)


def _make_folder(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise WriteError(f"cannot create the output folder: {err.strerror}", path=str(out),
                         hint="choose a folder you can write to") from None


class _Pieces:
    """What a `ZipWriter` writes, kept as the list of its writes (headers, and each member's
    bytes as the walk read them: no copy), to be written to the file in one go; the writer
    only ever writes at its end here (all its members are in memory)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self._at = 0

    def write(self, data: bytes) -> int:
        self.parts.append(data)
        self._at += len(data)
        return len(data)

    def tell(self) -> int:
        return self._at

    def flush(self) -> None:
        pass


def _joinable(members: Sequence[Member]) -> bool:
    """Whether every member's bytes are in memory (none streamed from a file) and the
    archive's bytes are at most `JOIN_BYTES` (a header is under 100 bytes and a name)."""
    if not all(m.data is not None and not isinstance(m.data, FileSpan) for m in members):
        return False
    return sum(m.size + 100 + 4 * len(m.name) for m in members) <= JOIN_BYTES


def _write_one(batch: AtomicBatch, item: PreparedSkill, out: Path,
               progress: Progress | None, options: PackOptions) -> PackResult:
    """Write the archive of `item` into `batch`, unless `out` already holds it exactly.

    An archive of members all in memory, up to `JOIN_BYTES`, is built as the list of the
    writer's writes, which go to the temp file's descriptor joined, in one `os.write` loop
    (never through a file buffer), and are hashed with SHA-256 in order (two writes a member
    and one a central record through `HashingFile` and the buffered file were each a Python
    call: a quarter of the writer's time on the corpus). Others are written member by member
    through `HashingFile`; either way the SHA-256 is that of the very bytes written."""
    dest = out / archive_name(item.name, item.digest, item.layout,
                              manifest=item.carries_manifest)
    warnings = target_warnings(item, options)
    kept = item.carries_manifest
    members = item.members()
    if dest.is_file() and existing_is_current(dest, members):
        if progress is not None:
            progress(sum(f.size for f in item.manifest.files))
        return PackResult(item.name, item.digest, dest, False, item.source,
                          layout=item.layout, warnings=warnings, manifest=kept)
    if _joinable(members):
        pieces = _Pieces()
        with ZipWriter(cast(BinaryIO, pieces)) as writer:
            write_members(writer, members, progress)
        batch.write_parts(dest, pieces.parts)
        return PackResult(item.name, item.digest, dest, True, item.source,
                          layout=item.layout, warnings=warnings,
                          sha256=parts_sha256(pieces.parts), manifest=kept)
    with batch.write(dest) as handle:
        hashing = HashingFile(handle)
        with ZipWriter(cast(BinaryIO, hashing)) as writer:
            write_members(writer, members, progress)
    return PackResult(item.name, item.digest, dest, True, item.source, layout=item.layout,
                      warnings=warnings, sha256=hashing.sha256() or "", manifest=kept)


def pack(paths: Iterable[str | os.PathLike[str] | DefinedSkill] | str | os.PathLike[str]
         | DefinedSkill, out_dir: str | os.PathLike[str], *, targets: Sequence[str] = (),
         layout: Layout | None = None) -> list[Path]:
    """Pack each skill found under ``paths`` into ``out_dir``; return the archive paths.

    Every skill is checked first (against each of ``targets``' limits too); if any is
    invalid, refused or over a host's limit, nothing is written (and if writing one fails,
    the archives this call created are removed). ``layout`` is ``"wrapped"`` or ``"root"``
    (None: what the targets want). Only the wrapped archive for no host (no target, or
    ``agentskills``) carries the manifest, as ``.skill``; one with a host among ``targets``
    (``.zip``) or in the root layout (``.root.zip``) holds the skill's files only (SPEC
    section 3b), and skillpack reads it back by its content. An archive that already holds,
    byte for byte, what would be written is left as it is. A path may be a skill defined in
    code (`skillpack.define_skill`).
    """
    if isinstance(paths, str | os.PathLike | DefinedSkill):
        paths = [paths]
    options = PackOptions(tuple(targets), layout)
    return [r.path for r in pack_skills(paths, out_dir, options=options)]


