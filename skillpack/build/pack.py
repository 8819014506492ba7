"""Pack skills into content-addressed `.skill` archives (SPEC section 3).

`prepare_skill` runs everything that can refuse a skill — parse, the Agent Skills rules, the
walk, hashing, the content checks and the limits of the hosts it is packed for (``targets``,
`skillpack.build.targets`) — before a byte of its archive is written, and no archive of a
pack gets its final name until every skill has passed. `pack` writes one archive per skill,
``<name>-<first 16 hex digits of the digest>.skill``: a STORED zip of
``<name>/.skillpack/manifest.json`` and ``<name>/<path>`` for every carried file (the
``wrapped`` layout; the ``root`` layout drops the ``<name>/`` folder and is named
``<name>-<digest16>.zip``), sorted,
with fixed timestamps and 0644/0755 modes, written to a temporary file and renamed (all the
archives of a pack together, `skillpack.build.atomic.AtomicBatch`). A small file is written from
the bytes the walk read and hashed; a large one is streamed from disk and hashed again while
it is copied: a file that changed since it was hashed stops the pack and leaves nothing under
the final name.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import BinaryIO, cast

from skillpack.build.atomic import AtomicBatch
from skillpack.build.define import DefinedSkill, materialized
from skillpack.build.discover import find_skills
from skillpack.build.fileset import FileSet
from skillpack.build.load import parse_skill_file, require_valid, skill_fileset
from skillpack.build.members import (
    Member,
    Progress,
    check_limits,
    existing_is_current,
    write_members,
)
from skillpack.build.notes import note
from skillpack.build.records import hash_files
from skillpack.build.sha256 import HashingFile, archive_sha256
from skillpack.build.targets import Layout, SkillFacts, check_targets, default_layout
from skillpack.errors import (
    ArchiveError,
    Problem,
    RefusedError,
    SkillError,
    SkillpackError,
    WriteError,
)
from skillpack.skillmd.programs import derive_programs
from skillpack.skillmd.skill import Skill
from skillpack.spec.digest import digest_records
from skillpack.spec.manifest import MANIFEST_PATH, Manifest
from skillpack.storedzip.writer import MAX_MEMBERS, ZipWriter

__all__ = [
    "ARCHIVE_SUFFIX",
    "OUTPUT_RULE",
    "PACK_KEEP_BYTES",
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
    "prepare_skill",
    "target_warnings",
]

ARCHIVE_SUFFIX = ".skill"
#: The rule reported for a command's own output found inside a skill folder.
OUTPUT_RULE = "output of this command (never carried into the skill)"

Outputs = Sequence[str | os.PathLike[str]]

#: A root-layout archive (SKILL.md at the archive root) is a ``.zip``: what discovery sites
#: serve and upload forms take, and never the same file name as its wrapped twin.
ROOT_SUFFIX = ".zip"


@dataclass(frozen=True)
class PreparedSkill:
    """A skill that passed every check, ready to be written: its manifest and its files."""

    source: str
    skill: Skill
    fileset: FileSet
    manifest: Manifest
    layout: Layout = "wrapped"

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def digest(self) -> str:
        return self.manifest.digest

    def members(self) -> list[Member]:
        """The archive members of this skill, under ``<name>/`` (at the root in the root
        layout)."""
        return list(self._members)

    @cached_property
    def _members(self) -> tuple[Member, ...]:
        prefix = "" if self.layout == "root" else f"{self.name}/"
        manifest = self.manifest.to_bytes()
        out = [Member(prefix + MANIFEST_PATH, len(manifest), False, data=manifest)]
        walked = {w.path: w for w in self.fileset.files}
        kept = self.fileset.hashed
        for record in self.manifest.files:
            w = walked[record.path]
            found = kept.get(record.path)
            if found is not None and found.walked is w and found.data is not None:
                # the very bytes the walk read and hashed: written as they are
                out.append(Member(prefix + record.path, record.size, record.mode == "100755",
                                  record.blake3, data=found.data, walked=w))
                continue
            crc = found.crc32 if found is not None and found.walked is w else None
            out.append(Member(prefix + record.path, record.size, record.mode == "100755",
                              record.blake3, disk=os.path.join(self.fileset.root, w.disk_path),
                              walked=w, crc32=crc))
        return tuple(out)


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


def output_rules(folder: str | os.PathLike[str], outputs: Outputs) -> dict[str, str]:
    """The paths among `outputs` (what a command writes: pack's output folder, bundle's
    file) that lie inside the skill folder `folder`, relative to it, each with `OUTPUT_RULE`.
    An output that is the skill folder itself is refused: what the command writes would be
    carried into the skill's next run."""
    root = os.path.realpath(folder)
    rules: dict[str, str] = {}
    for output in outputs:
        real = os.path.realpath(output)
        if real == root:
            raise SkillpackError(
                "the output folder is the skill folder itself: its archives would be carried "
                "into the skill's next pack", path=os.fspath(output),
                hint="write to a folder outside the skill, or to a subfolder such as dist/ "
                     "(left out of the skill)")
        if real.startswith(root + os.sep):
            rules[os.path.relpath(real, root).replace(os.sep, "/")] = OUTPUT_RULE
    return rules


@dataclass(frozen=True)
class PackOptions:
    """What a pack is for: the hosts (``targets``), the archive layout (None: what the
    targets want, `default_layout`) and the per-skill catalog budget (``--catalog-budget``)."""

    targets: tuple[str, ...] = ()
    layout: Layout | None = None
    catalog_budget: int | None = None

    @property
    def chosen_layout(self) -> Layout:
        return self.layout if self.layout is not None else default_layout(self.targets)


def prepare_skill(folder: str | os.PathLike[str], *, keep_bytes: int = 0,
                  options: PackOptions | None = None, outputs: Outputs = ()) -> PreparedSkill:
    """Parse, validate, walk and hash the skill in ``folder``; refuse it with every problem.

    Raises `SkillError` when `check` finds an error in it (warnings pass) or when it breaks
    a limit of one of ``options.targets`` (the message names the host, the limit, the value
    measured and the limit's source), `RefusedError` when its file set is refused. Up to
    `keep_bytes` of the files the walk read (each of at most 1 MiB) stay in memory, to be
    written from there. What the command writes (`outputs`) is left out where it lies inside
    the skill, and noted (see `output_rules`).
    """
    options = options or PackOptions()
    layout = options.chosen_layout
    skill = parse_skill_file(folder)
    require_valid(skill, source=str(folder))
    rules = output_rules(folder, outputs)
    # refused right after listing when over the member limit, before any file is read
    fileset = skill_fileset(skill, read=True, keep=keep_bytes, outputs=rules, sha256=True,
                            member_limit=MAX_MEMBERS - 1)
    for item in fileset.left_out:
        if item.rule == OUTPUT_RULE:
            note(f"left out {item.path} of skill '{skill.name}': {item.rule}; add it to "
                 ".skillignore so that `digest` and `check` leave it out too")
    hashed = hash_files(fileset, sha256=True)  # `#!` lines and SHA-256s from the bytes hashed
    records = hashed.records
    manifest = Manifest(
        name=skill.name,
        description=skill.description,
        digest=digest_records(records),
        files=tuple(records),
        programs=tuple(p.to_dict() for p in derive_programs(skill, hashed.shebangs)),
        tools=tuple(t.to_dict() for t in skill.tools),
        allowances=tuple(fileset.allowed),
        sha256=hashed.sha256,
    )
    prepared = PreparedSkill(str(folder), skill, fileset, manifest, layout)
    members = prepared.members()
    check_limits(members, what=f"skill '{skill.name}'")
    if options.targets or options.catalog_budget is not None:
        _check_hosts(prepared, members, options)
    return prepared


def target_warnings(prepared: PreparedSkill, options: PackOptions) -> tuple[Problem, ...]:
    """The targets' warnings for a prepared skill (its errors refused it when prepared)."""
    if not options.targets and options.catalog_budget is None:
        return ()
    return tuple(p for p in _host_problems(prepared, prepared.members(), options)
                 if p.severity == "warning")


def _host_problems(prepared: PreparedSkill, members: Sequence[Member],
                   options: PackOptions) -> list[Problem]:
    size = 22 + sum(76 + 2 * len(m.name.encode("utf-8")) + m.size for m in members)
    skill = prepared.skill
    facts = SkillFacts.from_files(
        skill.name, skill.frontmatter, [(r.path, r.size) for r in prepared.manifest.files],
        layout=prepared.layout, archive_size=size, file=skill.file, lines=skill.lines)
    return check_targets(options.targets, facts, catalog_budget=options.catalog_budget)


def _check_hosts(prepared: PreparedSkill, members: Sequence[Member],
                 options: PackOptions) -> None:
    errors = [p for p in _host_problems(prepared, members, options) if p.severity == "error"]
    if errors:
        raise SkillError(
            f"skill '{prepared.name}' cannot be packed for "
            f"{', '.join(options.targets)}: {errors[0].message}"
            + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""),
            path=prepared.source, problems=errors,
            hint="fix what `skillpack check --target` reports, or pack without that target")


def _skill_folders(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Every skill folder under ``paths``; a path holding none is an error."""
    found: list[Path] = []
    for path in paths:
        folders = find_skills(Path(path))
        if not folders:
            raise SkillpackError("no SKILL.md found here", path=str(path),
                                 hint="give a skill folder or a folder holding skills")
        found.extend(folders)
    return found


def _refuse(failures: Sequence[SkillpackError]) -> None:
    """Raise the one failure, or one error listing them all."""
    if len(failures) == 1:
        raise failures[0]
    if failures:
        problems = [p for err in failures for p in (err.problems or _as_problem(err))]
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


def pack_skills(paths: Iterable[str | os.PathLike[str] | DefinedSkill],
                out_dir: str | os.PathLike[str], *,
                progress: Progress | None = None,
                options: PackOptions | None = None) -> list[PackResult]:
    """Pack every skill under ``paths`` into ``out_dir``; see `pack`.

    Each skill is written, under a temp name, as soon as it is prepared, from the bytes its
    walk read and hashed (up to `PACK_KEEP_BYTES` a skill; larger files are streamed from
    disk and hashed again): each small file is read once, and one skill's files at a time are
    held in memory. Nothing gets its final name until every skill has passed. A skill defined
    in code (`skillpack.define_skill`) is written to a temporary folder, packed from there,
    and the folder removed: its archive is the one its written folder would give.
    """
    options = options or PackOptions()
    options.chosen_layout  # noqa: B018  (targets that disagree on the layout: refused first)
    with materialized(paths) as (folders_given, labels):
        results = _pack_folders(folders_given, out_dir, progress, options)
    return [replace(r, source=labels.get(r.source, r.source)) for r in results]


def _pack_folders(paths: Iterable[str | os.PathLike[str]], out_dir: str | os.PathLike[str],
                  progress: Progress | None, options: PackOptions) -> list[PackResult]:
    folders = _skill_folders(paths)
    out = Path(out_dir)
    made = not os.path.isdir(out)
    results: list[PackResult] = []
    failures: list[SkillpackError] = []
    try:
        with AtomicBatch() as batch:
            for folder in folders:
                try:
                    item = prepare_skill(folder, keep_bytes=PACK_KEEP_BYTES, options=options,
                                         outputs=[out])
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


def _write_one(batch: AtomicBatch, item: PreparedSkill, out: Path,
               progress: Progress | None, options: PackOptions) -> PackResult:
    """Write the archive of `item` into `batch`, unless `out` already holds it exactly."""
    dest = out / archive_name(item.name, item.digest, item.layout)
    warnings = target_warnings(item, options)
    if dest.is_file() and existing_is_current(dest, item.members()):
        if progress is not None:
            progress(sum(f.size for f in item.manifest.files))
        return PackResult(item.name, item.digest, dest, False, item.source,
                          layout=item.layout, warnings=warnings)
    with batch.write(dest) as handle:
        hashing = HashingFile(handle)
        with ZipWriter(cast(BinaryIO, hashing)) as writer:
            write_members(writer, item.members(), progress)
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


