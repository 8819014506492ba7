"""What an approval covers of the skills found at some paths: the entries `skillpack lock`
writes, the archive digests `skillpack sign --archive` adds, and the views `skillpack review`
compares with a lock.

`lock_entries` refuses, like `verify`, anything that does not verify. `review_views` never
does: a skill that `verify` would refuse (invalid SKILL.md, a refused file, a secret, an
archive that does not verify) is still shown, with what could be read of it and every problem
as a finding, because that is what an approver most needs to see.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass, replace
from pathlib import Path

from blake3 import blake3

from skillpack._regular import read_regular
from skillpack.approve.compare import SkillVerdict, TargetFailure
from skillpack.approve.lock import Lock, LockedSkill, LockEntry
from skillpack.approve.review import (
    MAX_DIFF_INPUT_BYTES,
    REFUSED,
    SkillChange,
    SkillView,
    compare,
)
from skillpack.content.secret_rules import problem, scan_member
from skillpack.errors import Problem, SkillError, SkillpackError
from skillpack.formats.allowances import parse as parse_allowances
from skillpack.formats.digest import FileRecord, digest_records
from skillpack.formats.shebang import SHEBANG_MAX, shebang_line
from skillpack.packing.check import name_clashes
from skillpack.packing.prepare import KEEP_BYTES, PreparedSkill
from skillpack.packing.selection import Selection
from skillpack.packing.sha256 import loaded_sha256, prepared_sha256
from skillpack.packing.verify import file_sha256, verified_archive, verify_bytes
from skillpack.runtime.skill import LoadedSkill
from skillpack.skillmd.lint_rules import lint
from skillpack.skillmd.programs import derive_programs
from skillpack.skillmd.skill import Skill
from skillpack.skillmd.validate import validate_skill
from skillpack.source.classify import Input, classify_all, unpacked_foreign
from skillpack.source.fileset import WalkedFile
from skillpack.source.load import parse_skill_file, skill_fileset
from skillpack.source.records import hash_files

__all__ = [
    "REFUSED",
    "SIGNATURE_SUFFIX",
    "Found",
    "approved_views",
    "archive_sha256s",
    "key_password",
    "lock_entries",
    "review_changes",
    "review_views",
    "signature_path",
    "with_verdicts",
]

#: A lock's signature is written beside it, named ``<lock>.intoto.json`` unless told.
SIGNATURE_SUFFIX = ".intoto.json"


def signature_path(lock_file: str | os.PathLike[str]) -> str:
    """Where the signature of ``lock_file`` goes by default: ``<lock>.intoto.json``."""
    return os.fspath(lock_file) + SIGNATURE_SUFFIX


def key_password(env_name: str | None) -> bytes | None:
    """The password of an encrypted private key, from the environment variable named
    ``env_name`` (None: no password); raises when that variable is not set."""
    if env_name is None:
        return None
    value = os.environ.get(env_name)
    if value is None:
        raise SkillpackError(f"the environment variable {env_name} holding the key's password "
                             "is not set", hint=f"export {env_name}=... before signing")
    return value.encode("utf-8")


@dataclass(frozen=True, slots=True)
class Found:
    """The skills found at some paths, to lock: each one's entry (with the SHA-256 of its
    ``.skill`` archive), and the hex SHA-256 of the ``.skill`` archive a skill was read from,
    where it was (by name)."""

    entries: tuple[LockedSkill, ...]
    archives: Mapping[str, str]


def lock_entries(paths: Iterable[str | os.PathLike[str]], *,
                 selection: Selection | None = None) -> Found:
    """The format 1.1 entry of every skill at ``paths`` (what `skillpack.source.classify`
    reads: skill folders, SKILL.md files, folders of skills or of archives, ``.skill``
    archives, bundles, archives made elsewhere), each verified as `verify` does; raises on
    the first that does not verify; the folders are prepared together, each skill once,
    every problem of theirs in one report. Each entry's ``archive`` is the SHA-256 of the
    skill's ``.skill`` archive: the file it was read from, else the one ``skillpack pack``
    writes for it, computed without writing it (`prepared_sha256`), from the bytes its walk
    read (up to `KEEP_BYTES` a skill, larger files read again). Two different skills
    with one name are refused (`name_clashes`). With `selection` (``--exclude``,
    ``--keep-going``), what it excludes is left out and, keeping going, what does not verify
    is skipped (``selection.skipped``)."""
    selection = selection or Selection()
    # every refusal judged before any is raised: a skill `check` refuses hides no name
    # clash (`Selection.collecting`)
    collected = selection.collecting()
    found: list[LockedSkill] = []
    archives: dict[str, str] = {}
    with collected.each(collected.inputs(paths), unpacked_foreign) as items:
        # each skill's entry made as soon as it is prepared: its SKILL.md, file set and the
        # bytes its walk kept (its archive hashed from them, not read again) let go
        entries = collected.prepare_as(items, _entry, keep_bytes=KEEP_BYTES)
        for item in items:
            if item.kind == "folder":
                entry = entries.get(item.path)
                if entry is not None:
                    found.append(LockedSkill(entry.name, entry.entry, item.label))
                continue
            try:
                with verified_archive(item.path) as report:
                    assert report.loaded is not None
                    if report.kind == "archive":  # one skill: its archive's digest in its subject
                        archives.setdefault(report.skills[0].name,
                                            file_sha256(report.loaded))
                    for s in report.skills:
                        loaded = report.loaded[s.name]
                        sha = ("sha256:" + archives[s.name] if report.kind == "archive"
                               else loaded_sha256(loaded))
                        found.append(LockedSkill(s.name, LockEntry.for_skill(
                            loaded.skill, s.digest, s.files, s.programs, sha), item.path))
            except SkillpackError as err:
                collected.skip(item.path, err)
    clashes = name_clashes((f.name, f.entry.digest, f.source) for f in found)
    bad = {p.file for p in clashes}
    selection.take(collected, also=[(p.file or "", SkillpackError(
        p.message, path=p.file, problems=[p], hint="lock one of them, or rename one"))
        for p in clashes])
    return Found(tuple(f for f in found if f.source not in bad), archives)


def _entry(p: PreparedSkill) -> LockedSkill:
    """The entry of a prepared skill folder (its ``source``: the folder, until labelled)."""
    m = p.manifest
    return LockedSkill(m.name, LockEntry.for_skill(p.skill, m.digest, m.files, m.programs,
                                                   prepared_sha256(p)), p.source)


def archive_sha256s(archives: Iterable[str | os.PathLike[str]], lock: Lock) -> dict[str, str]:
    """Skill name -> hex SHA-256 of its ``.skill`` archive, for the archives at `archives`
    (files, or folders of them: `skillpack.source.classify`) of one skill each that verify
    and hold exactly the skill the lock pins; raises listing every other one."""
    found: dict[str, str] = {}
    problems: list[str] = []
    for item in classify_all(archives).items:
        where = item.path
        if item.kind != "archive":
            problems.append(f"{where}: not a .skill archive of skillpack's")
            continue
        with verified_archive(where) as report:  # read a chunk at a time, never whole
            if report.kind != "archive" or len(report.skills) != 1:
                problems.append(f"{where}: a {report.kind} of {len(report.skills)} skills, "
                                "not the .skill archive of one skill")
                continue
            [s] = report.skills
            entry = lock.skills.get(s.name)
            if entry is None:
                problems.append(f"{where}: its skill '{s.name}' is not in the lock")
            elif entry.digest != s.digest:
                problems.append(f"{where}: its skill '{s.name}' is {s.digest}, the lock pins "
                                f"{entry.digest}")
            elif s.name in found:
                problems.append(f"{where}: a second archive of '{s.name}'")
            else:
                assert report.loaded is not None
                found[s.name] = file_sha256(report.loaded)
    if problems:
        raise SkillpackError("these archives are not the skills of the lock: "
                             + "; ".join(problems),
                             hint="give the archives `skillpack pack` wrote for these skills")
    return found


def review_views(paths: Iterable[str | os.PathLike[str]],
                 approved: Mapping[str, LockEntry] | None = None, *,
                 selection: Selection | None = None) -> list[SkillView]:
    """Every skill at ``paths`` (what `skillpack.source.classify` reads) as `skillpack
    review` shows it, with its validation warnings, lint findings and secrets as findings,
    and the bytes of the files that differ from its entry in ``approved`` (every file of a
    skill not approved) in `SkillView.contents`. A skill whose digest is the approved one
    is not linted or scanned again (the approval covered those very bytes): only its
    validation findings are given. A skill `verify` would refuse is still shown, its
    problems as findings; only a path that does not exist or holds no skill raises. With
    `selection`, what it excludes is left out, and with keep-going a PATH that holds no
    skill (or an archive made elsewhere that does not unpack) is skipped
    (``selection.skipped``)."""
    approved = approved or {}
    selection = selection or Selection()
    views: list[SkillView] = []
    collected = selection.collecting()  # every refusal judged before any is raised
    with collected.each(collected.inputs(paths), unpacked_foreign) as items:
        for item in items:
            if item.kind == "archive":
                views.extend(_archive_views(item.path, approved))
            else:
                views.append(_folder_view(Path(item.path), approved))
    selection.take(collected)
    return views


def review_changes(paths: Iterable[str | os.PathLike[str]], lock: Lock,
                   bases: Iterable[str | os.PathLike[str]] = (), *,
                   selection: Selection | None = None,
                   passed_over: list[tuple[str, SkillpackError]] | None = None,
                   verdicts: Iterable[SkillVerdict | TargetFailure] = (),
                   ) -> tuple[SkillChange, ...]:
    """What `skillpack review` shows: the skills at ``paths`` (`review_views`, with
    `selection`) compared with the approval in ``lock``; with ``bases``
    (`approved_views`), each changed or removed file's approved text, for its line diff
    (a base that cannot be read listed in `passed_over`). With ``verdicts`` (``verify
    --lock``'s answer for the same paths: `skillpack.install.folders.lock_answer`), each
    skill it refuses for more than its digest is refused here too, with its code and
    reason (`with_verdicts`), and each skill shows the archive its lock would record."""
    current = with_verdicts(review_views(paths, lock.skills, selection=selection), verdicts)
    bases = list(bases)
    if not bases:
        return compare({n: SkillView.from_lock_entry(n, e) for n, e in lock.skills.items()},
                       current)
    wanted: dict[str, set[str]] = {}
    for view in current:
        entry = lock.skills.get(view.name)
        removed = [r.path for r in entry.files if r.path not in view.files] if entry else []
        wanted[view.name] = {*view.contents, *removed}
    return compare(approved_views(bases, lock, wanted, passed_over=passed_over), current)


#: The codes of `verify --lock` a review shows by a skill's status (changed, new, gone)
#: rather than as a refusal: what the approver is reviewing.
_BY_STATUS = frozenset({"expect-mismatch", "expect-extra", "expect-missing"})


def with_verdicts(views: Iterable[SkillView],
                  verdicts: Iterable[SkillVerdict | TargetFailure]) -> list[SkillView]:
    """`views`, each with the refusals ``verify --lock`` gave the skills of its name
    (``verdicts``: every code but those a status shows, as error findings naming the code
    and the reason, so that two skills of one name are both refused ``duplicate-name``)
    and, where its digest is the one verified, the archive its lock would record."""
    refusals: dict[str, list[str]] = {}
    archives: dict[tuple[str, str], str] = {}
    for v in verdicts:
        if not isinstance(v, SkillVerdict) or v.name is None:
            continue  # a target that did not verify: the review shows its problems
        if v.entry is not None and v.entry.archive is not None:
            archives.setdefault((v.name, v.digest), v.entry.archive)
        if not v.ok and v.code not in _BY_STATUS:
            refusals.setdefault(v.name, []).append(str(Problem(
                "error", v.code or "refused", f"verify --lock refuses it: {v.reason}",
                v.path or v.target)))
    return [replace(view, findings=tuple(dict.fromkeys(
                (*view.findings, *refusals.get(view.name, ())))),
                archive=archives.get((view.name, view.digest), view.archive))
            for view in views]


def approved_views(paths: Iterable[str | os.PathLike[str]], lock: Lock,
                   wanted: Mapping[str, Iterable[str]], *,
                   passed_over: list[tuple[str, SkillpackError]] | None = None,
                   ) -> dict[str, SkillView]:
    """The approved skills of ``lock`` as `review` compares with them, each with the
    approved bytes of the files ``wanted`` (skill name -> paths) that could be read at
    ``paths`` (what `skillpack.source.classify` reads: a checkout of the approved revision,
    the approved archives): a file's bytes are kept only when their BLAKE3 is the one the
    lock records for it, so the text shown as "before" is the approved text. A skill at
    ``paths`` that cannot be read is passed over (its files are shown without a diff), and
    listed in `passed_over` with its error when given."""
    want = {name: set(p) for name, p in wanted.items() if name in lock.skills and p}
    found: dict[str, dict[str, bytes]] = {}

    def keep(name: str, path: str, data: bytes | None) -> None:
        record = records.get(name, {}).get(path)
        if data is not None and record is not None and blake3(data).hexdigest() == record:
            found.setdefault(name, {})[path] = data[:MAX_DIFF_INPUT_BYTES + 1]

    records = {name: {r.path: r.blake3 for r in lock.skills[name].files} for name in want}

    def read(item: Input) -> None:
        """Keep the approved bytes wanted of one input (an archive of ours verified; a
        folder, or an archive made elsewhere unpacked, walked); raises when it cannot."""
        if item.kind == "archive":
            report = verify_bytes(_read(item.path, "archive"), source=item.path)
            assert report.loaded is not None
            for s in report.skills:
                for path in want.get(s.name, set()) - set(found.get(s.name, ())):
                    if path in report.loaded[s.name].files():
                        keep(s.name, path, report.loaded[s.name].file(path).bytes())
            return
        skill = parse_skill_file(Path(item.path))
        fileset = skill_fileset(skill)
        disk = {w.path: os.path.join(fileset.root, w.disk_path) for w in fileset.files}
        for path in want.get(skill.name, set()) - set(found.get(skill.name, ())):
            if path in disk:
                with suppress(OSError):
                    keep(skill.name, path, read_regular(disk[path]))

    for given in classify_all(paths).items:
        try:
            with unpacked_foreign([given]) as [item]:
                read(item)
        except SkillpackError as err:  # each base on its own: one damaged, the rest read
            if passed_over is not None:
                passed_over.append((given.label, err))
    return {name: SkillView.from_lock_entry(name, entry, contents=found.get(name))
            for name, entry in lock.skills.items()}


def _read(where: str, what: str) -> bytes:
    try:
        return read_regular(where)
    except OSError as err:
        raise SkillpackError(f"cannot read the {what}: {err.strerror}", path=where) from None


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _findings(skill: Skill, carried: list[str], read: Callable[[str], bytes | None]
              ) -> list[Problem]:
    """The validation problems, lint findings and secrets of a skill whose files are read."""
    found = list(validate_skill(skill))

    def read_text(path: str) -> str | None:
        data = read(path)
        return None if data is None else _text(data)

    found += lint(skill, carried, read_text)
    allowances = parse_allowances(skill.secret_allowances)
    for path in carried:
        allowed = allowances.get(path, frozenset())
        data = None if allowed is None else read(path)
        if data is None or allowed is None:
            continue
        found += [problem(path, f) for f in scan_member(path, data, None, allow=allowed)
                  if not f.allowed]
    return found


def _view(skill: Skill, digest: str, files: Iterable[FileRecord],
          programs: Iterable[dict[str, object]], findings: Iterable[Problem | str],
          contents: Mapping[str, bytes] | None = None) -> SkillView:
    entry = LockEntry.for_skill(skill, digest, files, programs)
    return SkillView.from_lock_entry(skill.name, entry, tuple(
        dict.fromkeys(str(f) for f in findings)), contents)


def _unchanged(skill: Skill, digest: str, approved: Mapping[str, LockEntry]) -> bool:
    entry = approved.get(skill.name)
    return entry is not None and entry.digest == digest


def _contents(skill: Skill, records: Iterable[FileRecord],
              approved: Mapping[str, LockEntry], read: Callable[[str], bytes | None],
              refused: set[str] | frozenset[str] = frozenset()) -> dict[str, bytes]:
    """The bytes (at most `MAX_DIFF_INPUT_BYTES` + 1 of each) of the files that differ
    from the approved entry (all of them, for a skill not approved), a refused file never."""
    entry = approved.get(skill.name)
    old = {r.path: r.blake3 for r in entry.files} if entry is not None else {}
    found: dict[str, bytes] = {}
    for r in records:
        if r.path in refused or old.get(r.path) == r.blake3:
            continue
        data = read(r.path)
        if data is not None:
            found[r.path] = data[:MAX_DIFF_INPUT_BYTES + 1]
    return found


def _folder_view(folder: Path, approved: Mapping[str, LockEntry]) -> SkillView:
    try:
        skill = parse_skill_file(folder)
    except SkillError as err:
        problems = err.problems or [Problem("error", "parse", err.message, err.path, err.line)]
        return SkillView(folder.name, REFUSED, findings=tuple(str(p) for p in problems))
    try:
        # names only: a file refused for its content is then refused by hash_files below,
        # and the others still listed
        fileset = skill_fileset(skill)
    except SkillpackError as err:  # the walk refused it: no file set to list
        problems = list(validate_skill(skill)) + list(
            err.problems or [Problem("error", "refused", err.message, err.path, err.line)])
        view = _view(skill, REFUSED, (), (), (f"{err.message}: its files are not listed",
                                             *problems))
        return replace(view, name=skill.name or folder.name)
    disk = {w.path: os.path.join(fileset.root, w.disk_path) for w in fileset.files}

    def read(path: str) -> bytes | None:
        try:
            return read_regular(disk[path])
        except (OSError, KeyError):
            return None

    carried = [w.path for w in fileset.files]
    try:
        hashed = hash_files(fileset)
    except SkillpackError as err:  # a file refused (a private key...): list the others
        refused = err.problems or [Problem("error", "refused", err.message, err.path)]
        names = {p.file or "" for p in refused}
        view = _refused_files(skill, fileset.files, read, names)
        return replace(
            view, name=skill.name or folder.name,
            findings=(f"{err.message}: not verifiable",
                      *dict.fromkeys(map(str, [*refused, *_findings(skill, carried, read)]))),
            contents=_contents(skill, _records_of(view), approved, read, names))
    records = hashed.records
    programs = [p.to_dict() for p in derive_programs(skill, hashed.shebangs)]
    digest = digest_records(records)
    if _unchanged(skill, digest, approved):  # the approval covered these very bytes
        return _view(skill, digest, records, programs, validate_skill(skill))
    return _view(skill, digest, records, programs, _findings(skill, carried, read),
                 _contents(skill, records, approved, read))


def _records_of(view: SkillView) -> list[FileRecord]:
    return [FileRecord(path, "100644", view.sizes.get(path, 0),
                       "0" * 64 if digest == "refused" else digest)
            for path, digest in view.files.items()]


def _refused_files(skill: Skill, files: Iterable[WalkedFile],
                   read: Callable[[str], bytes | None], refused: set[str]) -> SkillView:
    """What can be shown of a walked skill whose content was refused: each file's BLAKE3
    (``refused`` for a refused or unreadable one), the programs from the readable files."""
    records: list[FileRecord] = []
    shebangs: dict[str, str] = {}
    for w in files:
        data = None if w.path in refused else read(w.path)
        records.append(FileRecord(w.path, w.mode, w.size, "0" * 64 if data is None
                                  else blake3(data).hexdigest()))
        line = shebang_line(data[:SHEBANG_MAX]) if data and w.mode == "100755" else None
        if line is not None:
            shebangs[w.path] = line
    programs = [p.to_dict() for p in derive_programs(skill, shebangs)]
    view = _view(skill, REFUSED, records, programs, ())
    shown = {path: ("refused" if path in refused else h) for path, h in view.files.items()}
    return replace(view, files=shown)


def _archive_views(where: str, approved: Mapping[str, LockEntry]) -> list[SkillView]:
    try:
        report = verify_bytes(_read(where, "archive"), source=where)
    except SkillpackError as err:
        problems = err.problems or [Problem("error", "refused", err.message, err.path)]
        return [SkillView(os.path.basename(where), REFUSED, findings=(
            f"{where}: does not verify, so its skills cannot be shown: {err.message}",
            *dict.fromkeys(map(str, problems))))]
    assert report.loaded is not None
    views = []
    for s in report.skills:
        loaded: LoadedSkill = report.loaded[s.name]

        def read(path: str, loaded: LoadedSkill = loaded) -> bytes | None:
            return loaded.file(path).bytes()

        if _unchanged(loaded.skill, s.digest, approved):
            views.append(_view(loaded.skill, s.digest, s.files, s.programs,
                               validate_skill(loaded.skill)))
            continue
        views.append(_view(loaded.skill, s.digest, s.files, s.programs,
                           _findings(loaded.skill, [r.path for r in s.files], read),
                           _contents(loaded.skill, s.files, approved, read)))
    return views
