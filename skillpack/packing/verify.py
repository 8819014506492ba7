"""Verify skills: a folder, a `.skill` archive or a bundle, alone or against approved digests.

An archive or bundle is loaded by the runtime (strict zip structure, manifests hashing to
their digests, members matching manifests), then every file is hashed, the manifests and the
index must be in canonical form, and every field a manifest declares beyond its files (name,
description, programs, tools, allowances) is re-derived from the verified SKILL.md and must
be equal. Carried files are checked against the secret rules again, and SKILL.md against the
Agent Skills rules: an archive built by hand cannot smuggle what `pack` refuses.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import unicodedata
import zlib
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, cast

from blake3 import blake3

from skillpack._atomic import make_folders, remove_tree
from skillpack._regular import open_regular
from skillpack.content.scan import Allowances, ContentScan, ContentStream, scan_content
from skillpack.content.secrets import secret_name_reason
from skillpack.errors import IntegrityError, MissingPathError, Problem, SkillpackError
from skillpack.formats.bundle_index import BUNDLE_INDEX
from skillpack.formats.digest import FileRecord
from skillpack.formats.manifest import MANIFEST_PATH, Manifest, canonical_json
from skillpack.formats.paths import SKILL_MD, collision_key, name_problem, sort_key
from skillpack.packing.prepare import (
    KEEP_BYTES,
    PreparedSkill,
    prepare_each_as,
    prepare_many_as,
    refuse_all,
)
from skillpack.packing.recorded import Recorded, archive_candidates, recorded_fields
from skillpack.packing.selection import Selection
from skillpack.packing.sha256 import loaded_sha256, prepared_sha256, sha256_problem
from skillpack.runtime import Bundle, LoadedSkill, load
from skillpack.runtime.bundle import load_index
from skillpack.skillmd.skill import Skill, parse_skill
from skillpack.skillmd.validate import validate_skill
from skillpack.source.classify import Input, classify, unpacked_foreign
from skillpack.source.define import DefinedSkill
from skillpack.source.ignore import left_out_rule
from skillpack.source.load import parse_skill_file
from skillpack.source.readfile import LARGE_FILE
from skillpack.source.records import digest_skill
from skillpack.storedzip.layout import CENTRAL
from skillpack.storedzip.reader import FileZipIndex, ZipEntry, ZipIndex, read_zip_file
from skillpack.storedzip.source import CHUNK, FileBytes, FileSpan
from skillpack.storedzip.writer import central_entry, end_record

__all__ = [
    "Record",
    "SkillReport",
    "VerifyReport",
    "archive_digest",
    "as_skill_folders",
    "carried_problems",
    "digest",
    "file_sha256",
    "one_skill",
    "prepared_recorded",
    "verified_archive",
    "verify_bytes",
    "verify_each",
    "verify_file",
    "verify_folder",
    "verify_inputs",
    "verify_target",
    "verify_target_each",
]



@dataclass(frozen=True)
class SkillReport:
    """One verified skill: its name, digest and files, and where it was found (``source``:
    its folder, or the archive or bundle file)."""

    name: str
    digest: str
    files: tuple[FileRecord, ...]
    programs: tuple[dict[str, Any], ...]
    manifest: Manifest
    source: str = ""
    #: In a folder: what the walk left out that Python would still run in place (a
    #: `__pycache__/` folder, a `*.pyc` file) beside the files the digest covers.
    runs_in_place: tuple[str, ...] = ()
    #: Every frontmatter property of its verified SKILL.md (license, metadata,
    #: compatibility, allowed-tools...: what skills-ref's read-properties prints).
    frontmatter: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    #: What a lock records of it beyond its files (`skillpack.packing.recorded`), when the
    #: verification was asked for it (``record``: `verify --lock` of a format 1.1 lock).
    recorded: Recorded | None = field(default=None, compare=False, repr=False)


#: What `verify --lock` asks of a verification: the skills (by name) whose lock entry is to
#: be compared field by field, each with the ``archive`` its entry records (None: none), so
#: that each `SkillReport` carries its `Recorded` fields (`skillpack.packing.recorded`).
Record = Mapping[str, str | None]


#: The built-in leave-out rules (source/ignore.py) whose files run in place: Python imports a
#: `.pyc` from `__pycache__/` (an unchecked-hash one whatever its `.py` says) or beside it.
_RUN_IN_PLACE = ("built-in: __pycache__/", "built-in: *.pyc")


@dataclass(frozen=True)
class VerifyReport:
    """What was verified: a folder, an archive or a bundle, and each of its skills."""

    target: str
    kind: str
    skills: tuple[SkillReport, ...]
    digest: str | None = None  # the bundle digest, for bundles and archives
    loaded: Bundle | None = field(default=None, compare=False, repr=False)  # what was verified


def verify_folder(path: str | os.PathLike[str]) -> VerifyReport:
    """Check every skill under a folder as `pack` would, and report their digests."""
    return VerifyReport(os.fspath(path), "folder",
                        tuple(prepare_many_as([path], _folder_skill)))


def _folder_skill(p: PreparedSkill, source: str | None = None,
                  record: Record | None = None) -> SkillReport:
    return SkillReport(p.name, p.digest, p.manifest.files, p.manifest.programs, p.manifest,
                       p.source if source is None else source,
                       tuple(x.path for x in p.fileset.left_out if x.rule in _RUN_IN_PLACE),
                       dict(p.skill.frontmatter), prepared_recorded(p, record))


def prepared_recorded(p: PreparedSkill, record: Record | None) -> Recorded | None:
    """What a lock records of the prepared skill `p` when `record` asks for it (its name
    among them): its fields, and the SHA-256 of the archive ``pack`` writes for it (then,
    when the lock records another, of its root layout)."""
    if record is None or p.name not in record:
        return None
    return recorded_fields(p.skill, archive_candidates(record[p.name], (
        lambda: prepared_sha256(p), lambda: prepared_sha256(p, root=True))))


def verify_file(path: str | os.PathLike[str], *, record: Record | None = None) -> VerifyReport:
    """Verify a `.skill` archive or a bundle file completely, in bounded memory: it is read by
    offset, a chunk at a time (`skillpack.storedzip.source`), never whole. The report's
    ``loaded`` serves from the open file; one that changes meanwhile is refused. With
    `record`, each skill it names carries its `Recorded` fields."""
    source = os.fspath(path)
    try:
        file = FileBytes(open_regular(source), source)  # a fifo or a device must not hang
    except FileNotFoundError:
        raise MissingPathError("no such file", path=source,
                               hint="give a .skill archive or a bundle") from None
    except OSError as err:
        raise SkillpackError(f"cannot read it: {err.strerror}", path=source,
                             hint="give a readable regular file") from None
    try:
        index = read_zip_file(file)
        # a FileBytes slices like a memoryview (a large slice is a lazy FileSpan, which the
        # runtime hashes a chunk at a time)
        view = cast(memoryview, file)
        bundle = load_index(index, view, source=source)
        report = _verify_loaded(bundle, source, view, lambda offset, size: file.read(
            offset, size, exact=False), len(file), record)
        file.check_unchanged()
    except OSError as err:
        raise SkillpackError(f"cannot read it: {err.strerror}", path=source,
                             hint="give a readable regular file") from None
    return report


def verify_target(path: str | os.PathLike[str]) -> VerifyReport:
    """Verify what PATH holds (`skillpack.source.classify`): an archive or bundle file of
    ours completely (kind ``archive`` or ``bundle``, its ``loaded`` serving from the file);
    anything else skill by skill, kind ``archives`` for a folder holding archives, else
    ``folder``: `verify_target_each`, every skill that fails refused together."""
    report, failed = verify_target_each(path)
    refuse_all([err for _, err in failed])
    return report


def verify_target_each(path: str | os.PathLike[str], *, seen: set[str] | None = None,
                       selection: Selection | None = None, record: Record | None = None,
                       ) -> tuple[VerifyReport, list[tuple[Input, SkillpackError]]]:
    """`verify_target`, each skill of a folder on its own (`verify_each`): the report of
    those that verify, and each input that does not with its error, so that one broken
    skill among many hides none of the others. An archive or bundle file given as PATH is
    one input, verified whole (it raises). With `seen` (`classify`), an input an earlier
    PATH of the same command held is left out; with `selection`, those its ``exclude``
    matches (listed in its ``excluded``). With `record`, each skill it names carries its
    `Recorded` fields."""
    given = os.fspath(path)
    found = classify(given, seen=seen,
                     exclude=selection.excluder if selection is not None else ())
    items = found.items
    if selection is not None:
        selection.excluded += found.excluded
    if len(items) == 1 and items[0].kind == "archive" and not os.path.isdir(given):
        return verify_file(given, record=record), []
    archives = os.path.isdir(given) and any(i.kind != "folder" for i in items)
    skills: list[SkillReport] = []
    failed: list[tuple[Input, SkillpackError]] = []
    for item, answer in zip(items, verify_each(items, record=record), strict=True):
        if isinstance(answer, SkillpackError):
            failed.append((item, answer))
        else:
            skills += answer
    return VerifyReport(given, "archives" if archives else "folder", tuple(skills)), failed


def verify_each(items: Sequence[Input], *, record: Record | None = None,
                ) -> list[list[SkillReport] | SkillpackError]:
    """`verify_inputs`, one answer per input in their order: its skills, or the error that
    refuses it (naming an archive's member as ``ARCHIVE!MEMBER``); the others still
    verified. With `record`, each skill it names carries its `Recorded` fields (a folder
    read keeping up to `KEEP_BYTES` of its bytes, as `lock` reads it, for its archive's
    SHA-256)."""
    answers: list[list[SkillReport] | SkillpackError] = []
    for item in items:
        try:
            with unpacked_foreign([item]) as [ready]:
                if ready.kind != "folder":
                    with verified_archive(ready.path, record=record) as report:
                        answers.append(list(report.skills))
                    continue
                [done] = prepare_each_as(
                    [ready.path], lambda p: _folder_skill(p, record=record),
                    keep_bytes=KEEP_BYTES if record else 0)
                if isinstance(done, SkillpackError):
                    raise done
                answers.append([replace(done, source=ready.label)])
        except SkillpackError as err:
            answers.append(err)
    return answers


def verify_inputs(items: Sequence[Input], *, record: Record | None = None,
                  ) -> list[SkillReport]:
    """Every skill of `items`, verified, in their order (`verify_each`: the skill folders
    checked as `pack` checks them; each archive or bundle of ours completely, its file
    closed after, so that a folder of thousands of archives holds one descriptor at a time;
    an archive made elsewhere as the folder it unpacks to), every one that fails refused
    together. Each skill's ``source`` is its input's `Input.label`."""
    answers = verify_each(items, record=record)
    refuse_all([a for a in answers if isinstance(a, SkillpackError)])
    return [s for a in answers if not isinstance(a, SkillpackError) for s in a]


@contextmanager
def verified_archive(path: str | os.PathLike[str], *,
                     record: Record | None = None) -> Iterator[VerifyReport]:
    """``with verified_archive(path) as report:`` `verify_file`, its ``loaded`` bundle serving
    from the open file inside the block; the file is closed on leaving it, so that a command
    reading thousands of archives holds one descriptor at a time."""
    report = verify_file(path, record=record)
    try:
        yield report
    finally:
        index = report.loaded.zip_index if report.loaded is not None else None
        if isinstance(index, FileZipIndex):
            index.file.close()


def verify_bytes(data: bytes | memoryview, *, source: str = "<bytes>") -> VerifyReport:
    """Verify an archive or bundle held in memory; raise listing every difference."""
    bundle = load(data, source=source)
    view = memoryview(data).cast("B")
    return _verify_loaded(bundle, source, view,
                          lambda offset, size: view[offset : offset + size], len(view))


def _verify_loaded(bundle: Bundle, source: str, view: memoryview,
                   read_at: Callable[[int, int], bytes | memoryview],
                   size: int, record: Record | None = None) -> VerifyReport:
    """`verify_bytes` of a loaded bundle (from bytes or from a file): the archive's bytes as
    ``view[a:b]`` slices them (a `FileBytes`: a lazy `FileSpan` from `CHUNK` bytes on),
    `read_at(offset, size)` reading them (at most `size` in all) for the zip's own records.

    One pass over the members in archive order, skill by skill, reads each member's bytes
    once (a skill's members at once when they are smaller than `CHUNK` together) for every
    check over them: its CRC-32, each file's BLAKE3 (compared by `Bundle.verify_all`, which
    raises before any other problem is said, as when it hashes them itself), its SHA-256 and
    its content scan. Each skill's SKILL.md is read first, for the allowances the scan needs.
    With `record`, each skill it names carries its `Recorded` fields (`_loaded_recorded`).
    """
    bundle.check_all()
    index = bundle.zip_index
    entries = index.entries
    names = index.names
    crcs: list[int | None] = [None] * len(entries)
    hashes: dict[str, dict[str, str]] = {}
    problems: list[Problem] = []
    if bundle.kind == "bundle":
        entry = index.get(BUNDLE_INDEX)
        assert entry is not None
        raw = bytes(index.data(entry))
        crcs[bisect_left(names, BUNDLE_INDEX)] = zlib.crc32(raw)
        if canonical_json(json.loads(raw)) != raw:
            problems.append(Problem("error", "index-not-canonical", "the bundle index is not "
                                    "in canonical form: it was altered after bundling",
                                    BUNDLE_INDEX))
    reports: list[SkillReport] = []
    for name in bundle.names:
        loaded = bundle[name]
        prefix = bundle.member_prefix(name)
        member = prefix + MANIFEST_PATH
        entry = index.get(member)
        assert entry is not None
        raw = bytes(index.data(entry))
        manifest = loaded.declared_manifest()  # what load decoded and checked of `raw`
        if manifest.to_bytes() != raw:
            problems.append(Problem("error", "manifest-not-canonical", "the manifest is not in "
                                    "canonical form: it was altered after packing", member))
        checks = _SkillChecks(loaded, manifest, member)
        start = bisect_left(names, prefix) if prefix else 0
        end = bisect_left(names, prefix[:-1] + "0", start) if prefix else len(names)
        hashes[name] = found = {}
        for at, data in _members(entries, start, end, view):
            path = entries[at].name[len(prefix):]
            if path == MANIFEST_PATH:
                crcs[at] = _crc32(data)
            else:
                crcs[at], found[path] = checks.file(path, data)
        problems.extend(checks.problems())
        try:
            frontmatter = dict(loaded.skill.frontmatter)
        except SkillpackError:  # its SKILL.md is refused: said above
            frontmatter = {}
        reports.append(SkillReport(name, loaded.digest, manifest.files, manifest.programs,
                                   manifest, source, frontmatter=frontmatter))
        loaded.let_go()  # its SKILL.md read again if asked: memory grows with the files
    bundle.verify_all(hashes)  # a file whose bytes differ: said alone, as before all else
    problems.extend(_zip_problems(index, read_at, size, crcs))
    if problems:
        raise IntegrityError(
            f"{problems[0].file}: {problems[0].message}"
            + (f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""),
            path=source, problems=problems,
            hint="do not use it; rebuild it from the skill with `skillpack pack`")
    if record is not None:  # once every byte is verified: what a lock records of each
        reports = [replace(r, recorded=_loaded_recorded(bundle, bundle[r.name], record[r.name]))
                   if r.name in record else r for r in reports]
    return VerifyReport(source, bundle.kind, tuple(reports), bundle.digest, bundle)


def _loaded_recorded(bundle: Bundle, loaded: LoadedSkill, wanted: str | None) -> Recorded:
    """What a lock records of a verified skill of `bundle` (read from its file by
    `verify_file`): its fields, and the SHA-256 of its archive as `lock` records it (an
    archive's: the file's, `file_sha256`; a bundle's skill: the archive ``pack`` writes for
    it), then, when the lock records another, of the archive's other layout (wrapped or
    root, with its manifest)."""
    root = bundle.member_prefix(loaded.name) == ""
    if bundle.kind == "archive":
        def first() -> str:
            return "sha256:" + file_sha256(bundle)
    else:
        def first() -> str:
            return loaded_sha256(loaded)
    found = recorded_fields(loaded.skill, archive_candidates(wanted, (
        first, lambda: loaded_sha256(loaded, root=not root))))
    loaded.let_go()  # its SKILL.md read again if asked: memory grows with the files
    return found


def file_sha256(loaded: Bundle) -> str:
    """The hex SHA-256 of the archive file `verify_file` loaded, read a chunk at a time
    from the very file verified (refused if it changed meanwhile)."""
    index = loaded.zip_index
    assert isinstance(index, FileZipIndex)  # verify_file reads it from the file
    return index.file.span().sha256_hex()


def _members(entries: Sequence[ZipEntry], start: int, end: int,
             view: memoryview) -> Iterator[tuple[int, memoryview | FileSpan]]:
    """``(i, bytes)`` of the members ``entries[start:end]`` (one skill's, contiguous): a slice
    of their bytes read at once when those are under `CHUNK` together (or in memory), else
    each member's as ``view`` slices it."""
    if start >= end:
        return
    low = entries[start].data_offset
    high = entries[end - 1].data_offset + entries[end - 1].size
    whole = view[low:high]
    for at in range(start, end):
        entry = entries[at]
        if isinstance(whole, memoryview):
            yield at, whole[entry.data_offset - low : entry.data_offset - low + entry.size]
        else:
            yield at, view[entry.data_offset : entry.data_offset + entry.size]


def _crc32(data: memoryview | FileSpan) -> int:
    return data.crc32() if isinstance(data, FileSpan) else zlib.crc32(data)


class _SkillChecks:
    """The checks of one verified skill beyond its manifest's files: SHA-256s, SKILL.md
    (parsed, its manifest fields re-derived, the Agent Skills rules), the member paths a
    walk would refuse, secret names and contents. SKILL.md is read first (`__init__`); each
    file's bytes are then given once (`file`); `problems` says what was found, in order."""

    def __init__(self, loaded: LoadedSkill, manifest: Manifest, member: str) -> None:
        self.loaded = loaded
        self.member = member
        self.sha256 = {record.path: recorded
                       for record, recorded in zip(manifest.files, manifest.sha256,
                                                   strict=False)}
        self.sha256_found: list[Problem] = []
        self.fields: list[Problem] = []  # SKILL.md refused, or manifest fields that differ
        self.rederived: list[Problem] = []  # what `pack` would refuse in the skill
        self.scans: dict[str, list[Problem]] = {}
        self.allow: Allowances | None = None  # None: SKILL.md refused, nothing scanned
        name = loaded.name
        try:
            _parsed(loaded)
            for key in loaded.manifest_differences(manifest):
                self.fields.append(Problem(
                    "error", "manifest-field", f"manifest field '{key}' of '{name}' does not "
                    "match what its SKILL.md and files give", member))
            skill = loaded.skill
            for problem in validate_skill(skill):
                if problem.severity == "error" and problem.code != "name-mismatch":
                    self.rederived.append(problem)
            self.rederived.extend(carried_problems(name, loaded.files(), skill.include_list))
            self.allow = Allowances.parse(skill.secret_allowances)
        except SkillpackError as err:
            self.fail(err)

    def fail(self, err: SkillpackError) -> None:
        """What `pack` would refuse is not known: the error's problems are said instead."""
        self.rederived = list(err.problems) or [Problem("error", "skill-md", err.message,
                                                  self.member)]
        self.allow = None
        self.scans = {}

    def file(self, path: str, data: memoryview | FileSpan) -> tuple[int, str]:
        """Check the file `path` from its bytes: its SHA-256 and contents here; its CRC-32
        and BLAKE3 returned (the zip's check and the runtime's compare them)."""
        if isinstance(data, FileSpan) and len(data) < LARGE_FILE:
            data = memoryview(data.tobytes())  # scanned whole below: read once, whole
        if isinstance(data, FileSpan):
            crc, blake, sha = 0, blake3(), hashlib.sha256()
            stream = self._stream(path)
            for chunk in data.chunks():
                crc = zlib.crc32(chunk, crc)
                blake.update(chunk)
                sha.update(chunk)
                if stream is not None:
                    stream.feed(chunk)
            self._sha256(path, sha.hexdigest())
            if stream is not None:
                self._said(path, stream.finish())
            return crc, blake.hexdigest()
        self._sha256(path, hashlib.sha256(data).hexdigest())
        scanned, allow = self._allowed(path)
        if scanned:
            try:
                self._said(path, _scan_served(path, data, allow))
            except SkillpackError as err:
                self.fail(err)
        return zlib.crc32(data), blake3(data).hexdigest()

    def _allowed(self, path: str) -> tuple[bool, frozenset[str] | None]:
        """Whether the content of `path` is scanned (not when SKILL.md was refused, the file
        is allowed whole or is a secret by its name), and what the scan is given
        (`Allowances.allow`)."""
        if self.allow is None or self.allow.whole(path):
            return False, None
        reason = secret_name_reason(path)
        if reason is not None:
            self.scans[path] = [Problem("error", "secret", f"'{path}' is a secret file "
                                        f"({reason}) that no allowance covers",
                                        f"{self.loaded.name}/{path}")]
            return False, None
        return True, self.allow.allow(path)

    def _stream(self, path: str) -> ContentStream | None:
        scanned, allow = self._allowed(path)
        return ContentStream(path, allow) if scanned else None

    def _said(self, path: str, content: ContentScan) -> None:
        if self.allow is None:
            return
        where = f"{self.loaded.name}/{path}"
        self.scans[path] = [Problem(found.severity, found.code, f"'{path}' {found.message}",
                                    where, found.line) for found in content.problems(path)]

    def _sha256(self, path: str, actual: str) -> None:
        recorded = self.sha256.get(path)
        if recorded is not None and actual != recorded:
            self.sha256_found.append(sha256_problem(path, recorded, actual, self.member))

    def problems(self) -> list[Problem]:
        """Every problem found, in the order of the manifest's files."""
        found = self.sha256_found + self.fields + self.rederived
        for path in self.loaded.files():
            found.extend(self.scans.get(path, ()))
        return found


def _parsed(loaded: LoadedSkill) -> None:
    """Read the verified SKILL.md as the runtime does (`LoadedSkill.skill`); when the
    runtime's reader refuses it, the build side's parser names what is wrong, if it can
    (the runtime's reader reads exactly what the build side reads, or refuses)."""
    try:
        loaded.skill  # noqa: B018 (read and parsed, or refused)
    except SkillpackError:
        parse_skill(loaded.file(SKILL_MD).text(), file=f"{loaded.name}/{SKILL_MD}")
        raise


# Where the fields of a header lie, for saying which one was altered: (start, end, label).
_Fields = tuple[tuple[int, int, str], ...]
_LOCAL_FIELDS: _Fields = (
    (4, 6, "version needed"), (6, 8, "flags"), (8, 10, "method"), (10, 14, "timestamp"),
    (14, 18, "CRC-32"), (18, 26, "sizes"))
_CENTRAL_FIELDS: _Fields = (
    (4, 6, "version made by"), (6, 8, "version needed"), (8, 10, "flags"), (10, 12, "method"),
    (12, 16, "timestamp"), (16, 20, "CRC-32"), (20, 28, "sizes"), (36, 38, "internal attributes"),
    (38, 42, "external attributes (the file mode)"), (42, 46, "offset"))


def _zip_problems(index: ZipIndex, read_at: Callable[[int, int], bytes | memoryview],
                  size: int, crcs: Sequence[int | None]) -> list[Problem]:
    """Refuse a zip that is not byte for byte what `ZipWriter` writes for its members.

    The reader checks the structure (members one after the other from offset 0, each local
    header repeating its central entry byte for byte, names, sizes, no extra fields); this
    covers what it leaves alone: each member's CRC-32 (`crcs`, computed over its bytes in
    the one pass over the members; a member it lacks is read here), and every other field of
    each central entry (the "made by" system, the time, the file modes an unzip applies...)
    and of the end record, against what `ZipWriter` writes. So an unzip of a verified
    archive gives exactly the 0644/0755 files `pack` wrote. ``read_at(offset, size)`` reads
    the archive of `size` bytes; the central directory is read whole (its size grows with
    the members).
    """
    entries = index.entries
    cd_at = entries[-1].data_offset + entries[-1].size if entries else 0
    cd_size = sum(CENTRAL.size + len(entry.name.encode("utf-8")) for entry in entries)
    cd = read_at(cd_at, cd_size)
    local_first: tuple[int, str, int] | None = None  # (file offset, member, offset in header)
    central_first: tuple[int, str, int] | None = None
    pos = 0
    for entry, known in zip(entries, crcs, strict=True):
        crc = known if known is not None else _member_crc(entry, read_at)
        expected = central_entry(entry.name.encode("utf-8"), crc, entry.size, entry.executable,
                                 entry.header_offset)
        actual = cd[pos : pos + len(expected)]
        if actual != expected:
            at = next(i for i, (a, b) in enumerate(zip(actual, expected, strict=True))
                      if a != b)
            # the local header (4 bytes of signature, then the central entry's bytes 6 to 32)
            # repeats this field: the first byte that differs is there
            shown = next((i for i in range(6, 32) if actual[i] != expected[i]), None)
            if shown is not None and local_first is None:
                local_first = (entry.header_offset + shown - 2, entry.name, shown - 2)
            if central_first is None:
                central_first = (cd_at + pos + at, entry.name, at)
        pos += len(expected)
    end = read_at(cd_at + cd_size, size - cd_at - cd_size)
    if local_first is not None:
        (first, member, at), fields, where = local_first, _LOCAL_FIELDS, "local header"
    elif central_first is not None:
        (first, member, at), fields, where = central_first, _CENTRAL_FIELDS, "central directory"
    elif end == end_record(len(entries), cd_size, cd_at):
        return []
    else:
        wanted = end_record(len(entries), cd_size, cd_at)
        first = cd_at + cd_size + next(
            (i for i, (a, b) in enumerate(zip(end, wanted, strict=False)) if a != b),
            min(len(end), len(wanted)))
        return [Problem("error", "zip-not-canonical", f"the zip end record is not what "
                        f"skillpack writes (at byte {first}): the archive was altered")]
    which = next((label for lo, hi, label in fields if lo <= at < hi), "name")
    return [Problem("error", "zip-not-canonical", f"member {member!r}: {where} field "
                    f"'{which}' differs from what skillpack writes (byte {first}): the archive "
                    "was altered after packing", member)]


def _member_crc(entry: ZipEntry, read_at: Callable[[int, int], bytes | memoryview]) -> int:
    """The CRC-32 of a member's bytes, read `CHUNK` bytes at a time."""
    crc = 0
    at, end = entry.data_offset, entry.data_offset + entry.size
    while at < end:
        chunk = read_at(at, min(CHUNK, end - at))
        if not chunk:
            break  # the file shrank: `check_unchanged` says so
        crc = zlib.crc32(chunk, crc)
        at += len(chunk)
    return crc


def _declared(path: str, includes: tuple[str, ...]) -> bool:
    """Whether a walk of `includes` (normalised, as `Skill.include_list`) reaches `path`."""
    for entry in includes:
        entry = unicodedata.normalize("NFC", entry.strip())
        if entry in ("", ".") or path == entry or path.startswith(entry + "/"):
            return True
    return False


def carried_problems(name: str, paths: Iterable[str],
                     includes: tuple[str, ...] | None) -> list[Problem]:
    """What a walk would have left out or refused among a manifest's `paths` (SPEC section 3:
    an archive carries exactly what a file set can hold): a left-out name at any depth (the
    built-in list, `.skillignore`, `.skillpack/`), a path outside the declared `includes`, a
    name that is not portable or not NFC, two siblings that collide, a file beside a folder
    of the same name. Each problem names the member `<name>/<path>`."""
    problems: list[Problem] = []
    listed = sorted(paths, key=sort_key)
    folders: dict[str, str] = {}  # folder -> the first path under it
    for path in listed:
        parent = path.rpartition("/")[0]
        while parent and parent not in folders:
            folders[parent] = path
            parent = parent.rpartition("/")[0]

    def refuse(code: str, path: str, why: str) -> None:
        problems.append(Problem("error", code, f"member '{name}/{path}': {why}; `pack` never "
                                "writes it, so the archive was built or altered by hand",
                                f"{name}/{path}"))

    for path in listed:
        reason = name_problem(path)
        if reason is not None:
            refuse("unportable-name", path, reason)
            continue
        if not path.isascii() and unicodedata.normalize("NFC", path) != path:
            refuse("unportable-name", path, "the path is not NFC-normalised (a walk writes "
                   "every path in NFC)")
            continue
        if path in folders:
            refuse("file-beside-folder", path, f"a file named like the folder of "
                   f"'{name}/{folders[path]}'; a folder cannot hold both")
            continue
        rel = ""
        parts = path.split("/")
        for at, part in enumerate(parts):
            rel = f"{rel}/{part}" if rel else part
            why = left_out_rule(rel, part, at < len(parts) - 1, None)
            if why is not None:
                refuse("left-out", path, f"a walk leaves it out ({why})")
                break
        else:
            if includes is not None and path != SKILL_MD and not _declared(path, includes):
                refuse("outside-includes", path, "outside the declared includes of its "
                       "SKILL.md (includes: " + ", ".join(includes) + ")")
    siblings: dict[tuple[str, str], str] = {}
    for rel in [*listed, *folders]:
        parent, _, part = rel.rpartition("/")
        first = siblings.setdefault((parent, collision_key(part)), rel)
        if first != rel:
            refuse("name-collision", rel, f"names the same path as '{first}' after case "
                   "folding or NFC normalisation; they would overwrite each other on macOS "
                   "or Windows")
    return problems


_SCAN_CHUNK = 1 << 20  # a large file in memory is scanned a MiB at a time


def _scan_served(path: str, view: memoryview, allow: frozenset[str] | None) -> ContentScan:
    """The content check of a file held in memory, from its zero-copy view: small files
    whole, large ones streamed in chunks (one copy of a chunk at a time, not of the file).
    A member read by offset from a file in chunks is scanned as it is read
    (`_SkillChecks.file`)."""
    if len(view) < LARGE_FILE:
        return scan_content(path, view.tobytes(), allow)
    stream = ContentStream(path, allow)
    for at in range(0, len(view), _SCAN_CHUNK):
        stream.feed(view[at : at + _SCAN_CHUNK])
    return stream.finish()


def digest(path: str | os.PathLike[str] | DefinedSkill) -> str:
    """The digest of one skill: its folder, its SKILL.md, its `.skill` archive (verified
    member by member first), an archive made elsewhere (the folder it unpacks to), or a skill
    defined in code (`skillpack.define_skill`: the digest of the folder it writes)."""
    if isinstance(path, DefinedSkill):
        return path.digest
    items = classify(path).items
    if len(items) != 1:
        raise SkillpackError(f"this holds {len(items)} skills or archives, not one skill",
                             path=os.fspath(path), hint="give one skill, or use "
                             "`skillpack digest`, which lists every one")
    [item] = items
    if item.kind == "archive":
        return archive_digest(item.path)
    with unpacked_foreign(items) as [ready]:
        return digest_skill(ready.path)[1]


def archive_digest(path: str | os.PathLike[str]) -> str:
    """The digest of a packed `.skill` archive, after verifying it member by member."""
    report = verify_file(path)
    if len(report.skills) != 1:
        raise SkillpackError("this is a bundle of several skills, not one archive",
                             path=os.fspath(path), hint="use `skillpack digest` on a .skill")
    return report.skills[0].digest


@contextmanager
def as_skill_folders(items: Iterable[Input]) -> Iterator[list[Input]]:
    """``with as_skill_folders(inputs) as folders:`` every input as a skill folder on disk,
    for what reads a skill from its folder (check, lint, files, programs, pack): a folder
    as it is; an archive made elsewhere unpacked; an archive or bundle of ours verified
    completely, then each of its skills written out with its files' modes (an `Input` of
    kind ``folder`` whose ``origin`` is the archive, or ``ARCHIVE/NAME`` for a skill of a
    bundle of several; its files shown as the archive's members, ``ARCHIVE!NAME/PATH``).
    The temporary folders are removed on leaving the block."""
    made: list[str] = []
    out: list[Input] = []
    try:
        with unpacked_foreign(items) as ready:
            for item in ready:
                if item.kind != "archive":
                    out.append(item)
                    continue
                made.append(tempfile.mkdtemp(prefix="skillpack-verified-"))
                with verified_archive(item.path) as report:
                    assert report.loaded is not None
                    several = len(report.skills) > 1
                    for s in report.skills:
                        folder = _write_out(report.loaded[s.name], s.files,
                                            os.path.join(made[-1], s.name))
                        out.append(Input("folder", folder, item.given, f"{item.path}/{s.name}"
                                         if several else item.path,
                                         f"{item.path}!{report.loaded.member_prefix(s.name)}"))
            yield out
    finally:
        for root in made:
            remove_tree(root)


def one_skill(path: str | os.PathLike[str]) -> Skill:
    """The one skill PATH holds, its SKILL.md parsed: a skill folder or its SKILL.md, or an
    archive of one skill (verified, or unpacked when made elsewhere: `as_skill_folders`).
    A PATH holding several skills is refused, saying how many and where."""
    given = os.fspath(path)
    items = classify(given).items
    with as_skill_folders(items) as folders:
        if len(folders) != 1:
            shown = ", ".join(f.label for f in folders[:5]) + (", ..." if len(folders) > 5
                                                              else "")
            raise SkillpackError(f"holds {len(folders)} skills ({shown}), and this command "
                                 "reads one", path=given,
                                 hint="give one skill folder, its SKILL.md, or an archive of "
                                      "one skill")
        [folder] = folders
        try:
            return parse_skill_file(folder.path)
        except SkillpackError as err:
            raise folder.relabel(err) from None


def _write_out(loaded: LoadedSkill, records: Iterable[FileRecord], folder: str) -> str:
    """Write the files of a verified skill into `folder` (0644, 0755 where executable)."""
    for record in records:
        path = os.path.join(folder, *record.path.split("/"))
        make_folders(os.path.dirname(path))
        with open(path, "xb") as handle:
            handle.write(loaded.file(record.path).bytes())
        os.chmod(path, 0o755 if record.mode == "100755" else 0o644)
    return folder
