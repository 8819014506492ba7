"""A skill prepared for its archive: everything that can refuse it, before a byte is written.

`prepare_skill` runs parse, the Agent Skills rules, the walk, hashing, the content checks
and the limits (those of the hosts it is packed for, ``targets``, too); `prepare_parsed` is
its part past the parse and validation, which `skillpack check` runs too so that it refuses
exactly what `pack` refuses. Writing the archives is `skillpack.packing.pack`; this module
imports nothing that writes (no temp files, no thread pools), so that `check` starts fast.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from skillpack.errors import (
    ArchiveError,
    MissingPathError,
    Problem,
    RefusedError,
    SkillError,
    SkillpackError,
)
from skillpack.formats.digest import digest_records
from skillpack.formats.manifest import MANIFEST_PATH, Manifest
from skillpack.packing.members import Member, check_limits
from skillpack.packing.targets import (
    Layout,
    SkillFacts,
    accepted_keys,
    carries_manifest,
    check_targets,
    default_layout,
)
from skillpack.skillmd.programs import derive_programs
from skillpack.skillmd.skill import Skill
from skillpack.skillmd.validate import validate_skill
from skillpack.source.classify import classify
from skillpack.source.discover import carried_strangers
from skillpack.source.fileset import FileSet
from skillpack.source.load import parse_skill_file, skill_fileset
from skillpack.source.notes import note
from skillpack.source.records import hash_files
from skillpack.storedzip.writer import MAX_MEMBERS, MAX_SIZE, archive_size

__all__ = [
    "KEEP_BYTES",
    "OUTPUT_RULE",
    "UNHASHED",
    "Outputs",
    "PackOptions",
    "PreparedSkill",
    "ResolvedOutputs",
    "Verdict",
    "judge_skill",
    "output_rules",
    "prepare_each_as",
    "prepare_many",
    "prepare_many_as",
    "prepare_parsed",
    "prepare_skill",
    "refuse_all",
    "silenced",
    "skill_folders",
    "target_warnings",
]

#: The rule reported for a command's own output found inside a skill folder.
OUTPUT_RULE = "output of this command (never carried into the skill)"
#: How many bytes of its small files a skill keeps in memory from its walk (`prepare_skill`'s
#: ``keep_bytes``): `pack` writes its archive from them, `lock` hashes its archive from them
#: (`skillpack.packing.sha256.prepared_sha256`), neither reading them again.
KEEP_BYTES = 32 << 20
#: The SHA-256 a manifest measured without hashing holds for each file (`judge_skill` with
#: ``sha256=False``): a SHA-256's length, so the manifest's size is the one pack writes.
UNHASHED = "0" * 64

Outputs = Sequence[str | os.PathLike[str]]
T = TypeVar("T")


class ResolvedOutputs(tuple[str, ...]):
    """What a command writes (an `Outputs`), with the real paths (`os.path.realpath`) its
    steps share: each output resolved once for every skill the command reads, and each skill
    folder once (when the command found it, `realpath`, then in `output_rules`), where each
    was resolved at every step (three a skill, the output's the same each time)."""

    resolved: dict[str, str]

    def __new__(cls, outputs: Outputs) -> ResolvedOutputs:
        made = super().__new__(cls, (os.fspath(o) for o in outputs))
        made.resolved = {}
        return made

    def realpath(self, path: str | os.PathLike[str]) -> str:
        """``os.path.realpath(path)``, resolved once for this command."""
        key = os.fspath(path)
        found = self.resolved.get(key)
        if found is None:
            found = self.resolved[key] = os.path.realpath(key)
        return found

@dataclass(frozen=True, slots=True)
class PreparedSkill:
    """A skill that passed every check, ready to be written: its manifest and its files
    (`_made` holds its archive members once made: not a field to pass). ``carries_manifest``:
    whether its archive holds the manifest as a member (skillpack's ``.skill``), or the
    skill's files only (an archive for a host or an installer: `PackOptions.carries_manifest`);
    the manifest is made either way (its digest names the archive)."""

    source: str
    skill: Skill
    fileset: FileSet
    manifest: Manifest
    layout: Layout = "wrapped"
    carries_manifest: bool = True
    _made: dict[str, tuple[Member, ...]] = field(default_factory=dict, compare=False,
                                                 repr=False)

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def digest(self) -> str:
        return self.manifest.digest

    def members(self) -> list[Member]:
        """The archive members of this skill, under ``<name>/`` (at the root in the root
        layout): its manifest when it `carries_manifest`, and its files."""
        return list(self._members)

    @property
    def _members(self) -> tuple[Member, ...]:
        made = self._made.get("members")
        if made is None:
            made = self._made["members"] = self._make_members()
        return made

    def _make_members(self) -> tuple[Member, ...]:
        prefix = "" if self.layout == "root" else f"{self.name}/"
        out: list[Member] = []
        if self.carries_manifest:
            manifest = self.manifest.to_bytes()
            out.append(Member(prefix + MANIFEST_PATH, len(manifest), False, data=manifest))
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


def output_rules(folder: str | os.PathLike[str], outputs: Outputs) -> dict[str, str]:
    """The paths among `outputs` (what a command writes: pack's output folder, bundle's
    file) that lie inside the skill folder `folder`, relative to it, each with `OUTPUT_RULE`.
    An output that is the skill folder itself is refused: what the command writes would be
    carried into the skill's next run. Given `ResolvedOutputs`, each path is resolved once
    for the command."""
    if not outputs:  # `check`, `digest`, `lock`: nothing written beside the skills
        return {}
    realpath = outputs.realpath if isinstance(outputs, ResolvedOutputs) else os.path.realpath
    root = realpath(folder)
    rules: dict[str, str] = {}
    for output in outputs:
        real = realpath(output)
        if real == root:
            raise SkillpackError(
                "the output folder is the skill folder itself: its archives would be carried "
                "into the skill's next pack", path=os.fspath(output),
                hint="write to a folder outside the skill, or to a subfolder such as dist/ "
                     "(left out of the skill)")
        if real.startswith(root + os.sep):
            rules[os.path.relpath(real, root).replace(os.sep, "/")] = OUTPUT_RULE
    return rules


@dataclass(frozen=True, slots=True)
class PackOptions:
    """What a pack is for: the hosts (``targets``), the archive layout (None: what the
    targets want, `default_layout`), the per-skill catalog budget (``--catalog-budget``) and
    the problem codes silenced (``--ignore``: warnings and notes only, never an error);
    ``advice``: also the targets' advice their hosts do not enforce (``--advice``: notes)."""

    targets: tuple[str, ...] = ()
    layout: Layout | None = None
    catalog_budget: int | None = None
    ignore: frozenset[str] = frozenset()
    advice: bool = False

    @property
    def chosen_layout(self) -> Layout:
        return self.layout if self.layout is not None else default_layout(self.targets)

    @property
    def carries_manifest(self) -> bool:
        """Whether the archive carries skillpack's manifest (`carries_manifest`): only the
        wrapped archive for no host; one for a host, or in the root layout, is the skill's
        files only (SPEC section 3b)."""
        return carries_manifest(self.targets, self.chosen_layout)

@dataclass(frozen=True, slots=True)
class Verdict:
    """What `pack` makes of one skill folder: every problem it finds (errors refuse the
    skill, warnings pass), each at its file as a person finds it (below the folder given),
    and the skill ready to be written when nothing refuses it. `skillpack check` and
    `skillpack pack` both come here (`judge_skill`), so that they give one verdict."""

    source: str
    problems: tuple[Problem, ...]
    prepared: PreparedSkill | None = None
    skill: Skill | None = None  # None: its SKILL.md could not be read or parsed
    error: SkillpackError | None = None  # what `prepare_skill` raises when refused
    digest: str | None = None  # the skill's digest, when its files were hashed

    @property
    def valid(self) -> bool:
        return self.error is None

    def refuse(self) -> PreparedSkill:
        """The prepared skill, or the error refusing it (every error problem in it)."""
        if self.error is not None:
            raise self.error
        if self.prepared is None:  # judged with sha256=False: measured, nothing to write
            raise ValueError("this verdict was judged without SHA-256 (as check judges): "
                             "judge the skill with sha256=True to write it")
        return self.prepared


def judge_skill(folder: str | os.PathLike[str], *, keep_bytes: int = 0,
                options: PackOptions | None = None, outputs: Outputs = (),
                sha256: bool = True, doing: str = "packed") -> Verdict:
    """The one verdict on the skill in ``folder`` for ``options`` (hosts, layout, catalog
    budget): parse, the Agent Skills rules (keys every target documents accepted), the
    walk, hashing, content checks and limits, and the hosts' limits measured on the archive
    that would be written in the layout chosen (`PackOptions.chosen_layout`: targets that
    want different layouts raise `SkillError`, for every skill alike). A skill that breaks
    the rules still has its files walked and measured, so that one report lists everything;
    nothing is raised for a bad skill.
    Without `sha256` (what `check` asks: it writes nothing) no file is hashed with SHA-256:
    the manifest measured holds a placeholder of a SHA-256's length for each file, so every
    size and limit is the one pack measures, and the verdict carries no prepared skill
    (`Verdict.prepared` is None; `valid` still says whether pack would write it).
    A warning or note whose code is in ``options.ignore`` is left out of the verdict. The
    refusal says the skill cannot be `doing` (``installed``, for `skillpack install`)."""
    options = options or PackOptions()
    verdict = _judge(folder, keep_bytes, options, outputs, sha256, doing)
    if not options.ignore:
        return verdict
    return Verdict(verdict.source, silenced(verdict.problems, options.ignore),
                   verdict.prepared, verdict.skill, verdict.error, verdict.digest)


def silenced(problems: Iterable[Problem], ignore: Iterable[str]) -> tuple[Problem, ...]:
    """`problems` without the warnings and notes whose code is in `ignore` (``--ignore``);
    an error is never silenced."""
    codes = frozenset(ignore)
    return tuple(p for p in problems if p.severity == "error" or p.code not in codes)


def _judge(folder: str | os.PathLike[str], keep_bytes: int, options: PackOptions,
           outputs: Outputs, sha256: bool, doing: str) -> Verdict:
    layout = options.chosen_layout
    source = str(folder)
    try:
        skill = parse_skill_file(folder)
    except SkillError as err:
        problems = err.problems or (Problem("error", "parse", err.message, err.path, err.line),)
        return Verdict(source, tuple(problems), error=err)
    except MissingPathError as err:  # a verdict, as for a folder without SKILL.md
        return Verdict(source, (Problem("error", "parse", "there is no SKILL.md here",
                                        err.path),), error=err)
    found = validate_skill(skill, accepted_keys(options.targets))
    errors = [p for p in found if p.severity == "error"]
    if not errors:
        try:
            prepared = prepare_parsed(skill, folder, keep_bytes=keep_bytes, options=options,
                                      outputs=outputs, check_hosts=False, sha256=sha256)
        except (SkillError, RefusedError, ArchiveError) as err:
            return Verdict(source, (*found, *(err.located() or _as_problems(err))),
                           skill=skill, error=err)
        found.extend(_strangers(source, prepared.fileset.paths))
        hosts = _host_problems(prepared, prepared.members(), options)
        refused = [p for p in hosts if p.severity == "error"]
        digest = prepared.digest
        if not refused:
            return Verdict(source, (*found, *hosts), prepared if sha256 else None, skill,
                           digest=digest)
        error = SkillError(
            f"skill '{skill.name}' cannot be {doing} for {', '.join(options.targets)}: "
            f"{_count(refused)}", path=source, problems=refused,
            hint="fix what `skillpack check --target` reports, or pack without that target")
        return Verdict(source, (*found, *hosts), skill=skill, error=error, digest=digest)
    walked: list[Problem] = []
    try:  # an invalid skill's files too, for every problem in one report
        fileset = skill_fileset(skill, read=True, outputs=output_rules(folder, outputs),
                                member_limit=MAX_MEMBERS - 1, size_limit=MAX_SIZE)
        hash_files(fileset)
    except SkillpackError as err:
        walked = list(err.located() or _as_problems(err))
    else:
        found.extend(_strangers(source, fileset.paths))
        facts = SkillFacts.from_files(
            skill.name, skill.frontmatter, [(f.path, f.size) for f in fileset.files],
            layout=layout, file=skill.file, lines=skill.lines, plain_start=skill.plain_start)
        if options.targets or options.catalog_budget is not None:
            walked = check_targets(options.targets, facts,
                                   catalog_budget=options.catalog_budget,
                                   notes=options.advice)
    name = skill.name or os.path.basename(os.path.normpath(source))
    refused = [*errors, *(p for p in walked if p.severity == "error")]
    error = SkillError(f"skill '{name}' is invalid and cannot be {doing}: {_count(refused)}",
                       path=source, problems=refused,
                       hint="fix what `skillpack check` reports, then try again")
    return Verdict(source, (*found, *walked), skill=skill, error=error)


def _strangers(source: str, paths: Sequence[str]) -> list[Problem]:
    """`carried_strangers` of a skill's carried `paths`, each at its folder below `source`."""
    return [Problem(p.severity, p.code, p.message, os.path.join(source, p.file or ""), p.line)
            for p in carried_strangers(paths)]


def _count(errors: Sequence[Problem]) -> str:
    return f"{len(errors)} error{'s' * (len(errors) != 1)}"


def _as_problems(err: SkillpackError) -> tuple[Problem, ...]:
    return (Problem("error", "refused", err.message, err.path, err.line),)


def prepare_skill(folder: str | os.PathLike[str], *, keep_bytes: int = 0,
                  options: PackOptions | None = None, outputs: Outputs = ()) -> PreparedSkill:
    """Parse, validate, walk and hash the skill in ``folder``; refuse it with every problem.

    `judge_skill`, raising what refuses the skill: `SkillError` when `check` finds an error
    in it (warnings pass; the file-set problems of an invalid skill are listed with its
    errors) or when it breaks a limit of one of ``options.targets`` (each problem names the
    host, the limit, the value measured and the limit's source), `RefusedError` when its
    file set is refused, `ArchiveError` when no archive can hold it. Up to `keep_bytes` of
    the files the walk read (each of at most 1 MiB) stay in memory, to be written from
    there. What the command writes (`outputs`) is left out where it lies inside the skill,
    and noted (see `output_rules`).
    """
    return judge_skill(folder, keep_bytes=keep_bytes, options=options,
                       outputs=outputs).refuse()


def prepare_parsed(skill: Skill, folder: str | os.PathLike[str], *, keep_bytes: int = 0,
                   options: PackOptions | None = None,
                   outputs: Outputs = (), check_hosts: bool = True,
                   sha256: bool = True) -> PreparedSkill:
    """`prepare_skill` past its parse and validation: the walk, the hashing and content
    checks, the manifest and the limits (those of ``options.targets`` too, unless not
    `check_hosts`: `judge_skill` measures them itself), each refusal raised once with every
    problem of its stage (file paths relative to the skill). Without `sha256` the manifest's
    SHA-256s are `UNHASHED` placeholders (see `judge_skill`): measured, never written."""
    options = options or PackOptions()
    layout = options.chosen_layout
    rules = output_rules(folder, outputs)
    # refused right after listing when over the archive's limits, before any file is read
    fileset = skill_fileset(skill, read=True, keep=keep_bytes, outputs=rules, sha256=sha256,
                            member_limit=MAX_MEMBERS - 1, size_limit=MAX_SIZE)
    for item in fileset.left_out:
        if item.rule == OUTPUT_RULE:
            note(f"left out {item.path} of skill '{skill.name}': {item.rule}; add it to "
                 ".skillignore so that `digest` and `check` leave it out too")
    hashed = hash_files(fileset, sha256=sha256)  # `#!` lines, SHA-256s, from the bytes hashed
    records = hashed.records
    manifest = Manifest(
        name=skill.name,
        description=skill.description,
        digest=digest_records(records),
        files=tuple(records),
        programs=tuple(p.to_dict() for p in derive_programs(skill, hashed.shebangs)),
        tools=tuple(t.to_dict() for t in skill.tools),
        allowances=tuple(fileset.allowed),
        sha256=hashed.sha256 if sha256 else (UNHASHED,) * len(records),
    )
    prepared = PreparedSkill(str(folder), skill, fileset, manifest, layout,
                             options.carries_manifest)
    members = prepared.members()
    check_limits(members, what=f"skill '{skill.name}'", path=str(folder))
    if check_hosts and (options.targets or options.catalog_budget is not None):
        _check_hosts(prepared, members, options)
    return prepared


def target_warnings(prepared: PreparedSkill, options: PackOptions) -> tuple[Problem, ...]:
    """The targets' warnings for a prepared skill (its errors refused it when prepared),
    those ``options.ignore`` silences left out."""
    return silenced((p for p in _host_problems(prepared, prepared.members(), options)
                     if p.severity == "warning"), options.ignore)


def _host_problems(prepared: PreparedSkill, members: Sequence[Member],
                   options: PackOptions) -> list[Problem]:
    if not options.targets and options.catalog_budget is None:
        return []
    size = archive_size((m.name, m.size) for m in members)
    skill = prepared.skill
    facts = SkillFacts.from_files(
        skill.name, skill.frontmatter, [(r.path, r.size) for r in prepared.manifest.files],
        layout=prepared.layout, archive_size=size, file=skill.file, lines=skill.lines,
        members=[m.size for m in members],  # what the host is sent: every member
        plain_start=skill.plain_start)
    return check_targets(options.targets, facts, catalog_budget=options.catalog_budget,
                         notes=options.advice)


def _check_hosts(prepared: PreparedSkill, members: Sequence[Member],
                 options: PackOptions) -> None:
    errors = [p for p in _host_problems(prepared, members, options) if p.severity == "error"]
    if errors:
        raise SkillError(
            f"skill '{prepared.name}' cannot be packed for "
            f"{', '.join(options.targets)}: {_count(errors)}",
            path=prepared.source, problems=errors,
            hint="fix what `skillpack check --target` reports, or pack without that target")


def skill_folders(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Every skill folder under ``paths`` (`skillpack.source.classify`), each once; a path
    holding none raises `NoSkillError`, one holding an archive `SkillpackError` (an archive
    is verified, not prepared: `skillpack.packing.verify.as_skill_folders` writes it out)."""
    seen: set[str] = set()
    folders: list[str] = []
    for path in paths:
        for item in classify(path, seen=seen).items:
            if item.kind != "folder":
                raise SkillpackError("an archive, not a skill folder", path=item.path,
                                     hint="verify it, or give the folder it was packed from")
            folders.append(item.path)
    return folders


def refuse_all(failures: Sequence[SkillpackError]) -> None:
    """Raise the one failure, or one error listing them all."""
    if len(failures) == 1:
        raise failures[0]
    if failures:
        # each at its path below its skill's folder: relative paths would not say whose
        problems = [p for err in failures for p in (err.located() or _as_problems(err))]
        raise SkillpackError(
            f"{len(failures)} skills are refused: "
            + "; ".join(str(err.path or err.message) for err in failures),
            problems=problems)


def prepare_each_as(folders: Iterable[str | os.PathLike[str]],
                    keep: Callable[[PreparedSkill], T], *,
                    options: PackOptions | None = None,
                    outputs: Outputs = (), keep_bytes: int = 0) -> list[T | SkillpackError]:
    """`prepare_skill` of each skill folder, in order: what ``keep(prepared)`` returns (a lock
    entry, a report), made at once and the skill let go, or the error refusing the skill
    (nothing raised for a bad one). A command over thousands of skills then holds what it
    needs of each, not every skill's SKILL.md and file set (nor, with `keep_bytes`, more
    than one skill's kept bytes)."""
    done: list[T | SkillpackError] = []
    for folder in folders:
        try:
            prepared = prepare_skill(folder, options=options, outputs=outputs,
                                     keep_bytes=keep_bytes)
        except (SkillError, RefusedError, ArchiveError) as err:
            done.append(err)
            continue
        done.append(keep(prepared))
    return done


def prepare_many(paths: Iterable[str | os.PathLike[str]], *,
                 options: PackOptions | None = None,
                 outputs: Outputs = ()) -> list[PreparedSkill]:
    """Prepare every skill found under ``paths``; refuse them all at once if any is bad.
    `outputs`: what the command will write, left out of any skill holding it."""
    return prepare_many_as(paths, lambda p: p, options=options, outputs=outputs)


def prepare_many_as(paths: Iterable[str | os.PathLike[str]],
                    keep: Callable[[PreparedSkill], T], *,
                    options: PackOptions | None = None,
                    outputs: Outputs = ()) -> list[T]:
    """`prepare_many`, keeping of each skill what ``keep(prepared)`` returns, made as soon
    as it is prepared (`prepare_each_as`)."""
    done = prepare_each_as(skill_folders(paths), keep, options=options, outputs=outputs)
    refuse_all([d for d in done if isinstance(d, SkillpackError)])
    return [d for d in done if not isinstance(d, SkillpackError)]
