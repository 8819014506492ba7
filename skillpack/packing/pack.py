"""Pack skills into content-addressed `.skill` archives (SPEC section 3).

`prepare_skill` runs everything that can refuse a skill — parse, the Agent Skills rules, the
walk, hashing, the content checks and the limits of the hosts it is packed for (``targets``,
`skillpack.packing.targets`) — before a byte of its archive is written, and no archive of a
pack gets its final name until every skill has passed. `pack` writes one archive per skill,
``<name>-<first 16 hex digits of the digest>.skill``: a STORED zip of
``<name>/.skillpack/manifest.json`` and ``<name>/<path>`` for every carried file (the
``wrapped`` layout; the ``root`` layout drops the ``<name>/`` folder and is named
``<name>-<digest16>.zip``), sorted,
with fixed timestamps and 0644/0755 modes, written to a temporary file and renamed (all the
archives of a pack together, `skillpack._atomic.AtomicBatch`). A small file is written from
the bytes the walk read and hashed; a large one is streamed from disk and hashed again while
it is copied: a file that changed since it was hashed stops the pack and leaves nothing under
the final name.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO, cast

from skillpack._atomic import AtomicBatch, remove_temps_of
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
    OUTPUT_RULE,
    Outputs,
    PackOptions,
    PreparedSkill,
    ResolvedOutputs,
    output_rules,
    prepare_parsed,
    prepare_skill,
    target_warnings,
)
from skillpack.packing.sha256 import HashingFile, archive_sha256, parts_sha256
from skillpack.packing.targets import Layout
from skillpack.source.define import DefinedSkill, materialized
from skillpack.source.discover import find_skills, first_seen
from skillpack.source.notes import held, note
from skillpack.storedzip.source import FileSpan
from skillpack.storedzip.writer import ZipWriter

__all__ = [
    "ARCHIVE_SUFFIX",
    "OUTPUT_RULE",
    "PACK_KEEP_BYTES",
    "ROOT_SUFFIX",
    "PackOptions",
    "PackResult",
    "PreparedSkill",
    "Share",
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

ARCHIVE_SUFFIX = ".skill"

#: A root-layout archive (SKILL.md at the archive root) is a ``.zip``: what discovery sites
#: serve and upload forms take, and never the same file name as its wrapped twin.
ROOT_SUFFIX = ".zip"


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

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "digest": self.digest, "archive": str(self.path),
                "sha256": self.sha256, "layout": self.layout, "written": self.written,
                "source": self.source, "warnings": [p.to_dict() for p in self.warnings]}


def archive_name(name: str, digest: str, layout: Layout = "wrapped") -> str:
    """``<name>-<first 16 hex digits of the digest>.skill`` (``.zip`` in the root layout)."""
    suffix = ROOT_SUFFIX if layout == "root" else ARCHIVE_SUFFIX
    return f"{name}-{digest.removeprefix('blake3:')[:16]}{suffix}"


def _skill_folders(paths: Iterable[str | os.PathLike[str]],
                   outputs: ResolvedOutputs | None = None) -> list[Path]:
    """Every skill folder under ``paths``, each once (`first_seen`: by real path, resolved
    once for the command with `outputs`); a path holding none is an error."""
    found: list[Path] = []
    seen: set[str] = set()
    for path in paths:
        folders = find_skills(Path(path))
        if not folders:
            raise SkillpackError("no SKILL.md found here", path=str(path),
                                 hint="give a skill folder or a folder holding skills")
        if outputs is None:
            found.extend(first_seen(folders, seen))
        else:  # each real path kept for `output_rules`
            found.extend(first_seen(folders, seen, realpath=outputs.realpath))
    return found


def _refuse(failures: Sequence[SkillpackError]) -> None:
    """Raise the one failure, or one error listing them all."""
    if len(failures) == 1:
        raise failures[0]
    if failures:
        # each at its path below its skill's folder: relative paths would not say whose
        problems = [p for err in failures for p in (err.located() or _as_problem(err))]
        raise SkillpackError(
            f"{len(failures)} skills cannot be packed: "
            + "; ".join(str(err.path or err.message) for err in failures),
            problems=problems)


def prepare_many(paths: Iterable[str | os.PathLike[str]], *,
                 options: PackOptions | None = None,
                 outputs: Outputs = ()) -> list[PreparedSkill]:
    """Prepare every skill found under ``paths``; refuse them all at once if any is bad.
    `outputs`: what the command will write, left out of any skill holding it."""
    prepared: list[PreparedSkill] = []
    failures: list[SkillpackError] = []
    for folder in _skill_folders(paths):
        try:
            prepared.append(prepare_skill(folder, options=options, outputs=outputs))
        except (SkillError, RefusedError, ArchiveError) as err:
            failures.append(err)
    _refuse(failures)
    return prepared


def _as_problem(err: SkillpackError) -> tuple[Problem, ...]:
    return (Problem("error", "refused", err.message, err.path, err.line),)


#: How many bytes of its small files a skill keeps in memory from its walk to its archive.
PACK_KEEP_BYTES = 32 << 20

#: An archive of members all in memory and at most this large is built in memory, as the list
#: of its writer's writes, and written with `os.writev` (`_write_one`); larger ones are written
#: member by member through `HashingFile`.
JOIN_BYTES = 8 << 20


#: What `pack_skills` may be given as ``share``: ``share(work, items)`` is ``[work(item) for
#: item in items]`` done anywhere (the command line's worker processes,
#: `skillpack.cli._workers.in_workers`), None in it for an item to do again here, or None
#: for "do them all here". A value is a `marshal` value (it may cross a pipe).
Share = Callable[[Callable[[Path], Any], Sequence[Path]], "list[Any] | None"]


def pack_skills(paths: Iterable[str | os.PathLike[str] | DefinedSkill],
                out_dir: str | os.PathLike[str], *,
                progress: Progress | None = None,
                options: PackOptions | None = None,
                share: Share | None = None) -> list[PackResult]:
    """Pack every skill under ``paths`` into ``out_dir``; see `pack`.

    Each skill is written, under a temp name, as soon as it is prepared, from the bytes its
    walk read and hashed (up to `PACK_KEEP_BYTES` a skill; larger files are streamed from
    disk and hashed again): each small file is read once, and one skill's files at a time are
    held in memory. Nothing gets its final name until every skill has passed. A skill defined
    in code (`skillpack.define_skill`) is written to a temporary folder, packed from there,
    and the folder removed: its archive is the one its written folder would give.

    ``share`` (`Share`; without ``progress``) prepares and writes the skills elsewhere, each
    to its temp file, which this call's batch adopts, fsyncs and renames with the others, or
    removes: the archives, results and errors are those of one process.
    """
    options = options or PackOptions()
    options.chosen_layout  # noqa: B018  (targets that disagree on the layout: refused first)
    with materialized(paths) as (folders_given, labels):
        results = _pack_folders(folders_given, out_dir, progress, options, share)
    return [replace(r, source=labels.get(r.source, r.source)) for r in results]


def _pack_folders(paths: Iterable[str | os.PathLike[str]], out_dir: str | os.PathLike[str],
                  progress: Progress | None, options: PackOptions,
                  share: Share | None = None) -> list[PackResult]:
    out = Path(out_dir)
    outputs = ResolvedOutputs([out])
    folders = _skill_folders(paths, outputs)
    made = not os.path.isdir(out)
    results: list[PackResult] = []
    failures: list[SkillpackError] = []
    try:
        with AtomicBatch() as batch:
            apart: list[Any] | None = None
            if share is not None and progress is None and len(folders) > 1:
                _make_folder(out)
                batch.lease(out)  # the workers' temp files: nobody else's cleaning removes them
                try:
                    apart = share(functools.partial(_pack_apart, out, options, outputs,
                                                    os.getpid(), batch), folders)
                except BaseException:  # the workers' temps, named for this process
                    remove_temps_of(out, os.getpid())
                    raise
            for at, folder in enumerate(folders):
                if apart is not None and apart[at] is not None:
                    done = _received(batch, apart[at])  # adopted: committed or removed
                    if not failures:
                        results.append(done)
                    continue
                try:
                    item = prepare_skill(folder, keep_bytes=PACK_KEEP_BYTES, options=options,
                                         outputs=outputs)
                except (SkillError, RefusedError, ArchiveError) as err:
                    failures.append(err)
                    continue
                if not failures:  # once one is refused, the rest are only checked
                    if not results:
                        _make_folder(out)
                    results.append(_write_one(batch, item, out, progress, options))
            _refuse(failures)
    except BaseException:
        if made:
            with contextlib.suppress(OSError):
                out.rmdir()  # the folder this call made, if it is empty
        raise
    return _with_sha256(results)


def _pack_apart(out: Path, options: PackOptions, outputs: ResolvedOutputs, parent: int,
                adopter: AtomicBatch, folder: Path) -> tuple[Any, ...] | None:
    """Prepare `folder` and write its archive to a temp file in `out` (a worker of `share`;
    this process itself when its pid is `parent`): the result as `_received` reads it, the
    temp file detached for `adopter`'s batch (in this process: adopted now, so an interrupt
    removes it). None for a skill refused or not written: done again in turn, which says
    why. What it notes (an output left out of the skill) is held and sent, said in turn."""
    with held() as notes:
        try:
            item = prepare_skill(folder, keep_bytes=PACK_KEEP_BYTES, options=options,
                                 outputs=outputs)
        except (SkillError, RefusedError, ArchiveError):
            return None
    batch = AtomicBatch(sync_threads=1, owner=parent)  # named for the adopter: not stale
    batch.under_lease(out)  # the adopting batch leased it (a sibling's temps are not stale)
    try:
        result = _write_one(batch, item, out, None, options)
        staged = batch.detach()
    except SkillpackError:
        batch.abort()
        return None
    except BaseException:
        batch.abort()
        raise
    if os.getpid() == parent:
        for tmp, dest in staged:
            adopter.adopt(tmp, dest)
        staged = []
    return (result.name, result.digest, str(result.path), result.written, result.source,
            result.sha256, result.layout,
            tuple(p.as_tuple() for p in result.warnings),
            tuple(staged), tuple(notes))


def _received(batch: AtomicBatch, sent: tuple[Any, ...]) -> PackResult:
    """The result `_pack_apart` sent, its temp file (if a worker wrote it) adopted by
    `batch`, its notes said now."""
    name, digest, path, written, source, sha256, layout, warnings, staged, notes = sent
    for tmp, dest in staged:
        batch.adopt(tmp, dest)
    for text in notes:
        note(text)
    return PackResult(name, digest, Path(path), written, source, sha256, layout,
                      tuple(Problem(*p) for p in warnings))


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
    writer's writes, which go to the temp file's descriptor as they are (`os.writev`, up to
    1,024 a call: never joined, never copied through a file buffer) and are hashed with
    SHA-256 in order: two writes a member and one a central record through `HashingFile`
    and the buffered file were each a Python call (a quarter of the writer's time on the
    corpus). Others are written member by member through `HashingFile`; either way the
    SHA-256 is that of the very bytes written."""
    dest = out / archive_name(item.name, item.digest, item.layout)
    warnings = target_warnings(item, options)
    members = item.members()
    if dest.is_file() and existing_is_current(dest, members):
        if progress is not None:
            progress(sum(f.size for f in item.manifest.files))
        return PackResult(item.name, item.digest, dest, False, item.source,
                          layout=item.layout, warnings=warnings)
    if _joinable(members):
        pieces = _Pieces()
        with ZipWriter(cast(BinaryIO, pieces)) as writer:
            write_members(writer, members, progress)
        batch.write_parts(dest, pieces.parts)
        return PackResult(item.name, item.digest, dest, True, item.source,
                          layout=item.layout, warnings=warnings,
                          sha256=parts_sha256(pieces.parts))
    with batch.write(dest) as handle:
        hashing = HashingFile(handle)
        with ZipWriter(cast(BinaryIO, hashing)) as writer:
            write_members(writer, members, progress)
    return PackResult(item.name, item.digest, dest, True, item.source, layout=item.layout,
                      warnings=warnings, sha256=hashing.sha256() or "")


def pack(paths: Iterable[str | os.PathLike[str] | DefinedSkill] | str | os.PathLike[str]
         | DefinedSkill, out_dir: str | os.PathLike[str], *, targets: Sequence[str] = (),
         layout: Layout | None = None) -> list[Path]:
    """Pack each skill found under ``paths`` into ``out_dir``; return the archive paths.

    Every skill is checked first (against each of ``targets``' limits too); if any is
    invalid, refused or over a host's limit, nothing is written (and if writing one fails,
    the archives this call created are removed). ``layout`` is ``"wrapped"`` or ``"root"``
    (None: what the targets want). An archive that already holds, byte for byte, what would
    be written is left as it is. A path may be a skill defined in code
    (`skillpack.define_skill`).
    """
    if isinstance(paths, str | os.PathLike | DefinedSkill):
        paths = [paths]
    options = PackOptions(tuple(targets), layout)
    return [r.path for r in pack_skills(paths, out_dir, options=options)]


