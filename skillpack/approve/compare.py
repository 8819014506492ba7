"""The verdict of `verify`: verified skills against what a lock approved (the codes and words
of ``load(expect=)``) or against one digest, a record per line of its answer."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from skillpack.approve.lock import Lock, LockEntry
from skillpack.errors import SkillpackError
from skillpack.formats.digest import FileRecord
from skillpack.formats.manifest import FORMAT
from skillpack.packing.check import DUPLICATE_NAME, name_clashes
from skillpack.packing.selection import Selection
from skillpack.packing.verify import Record, SkillReport, VerifyReport, verify_target_each
from skillpack.runtime.checks import approval_findings, lock_finding

#: The code of a skill or bundle whose digest is not the one `verify --digest` was given.
DIGEST_MISMATCH = "digest-mismatch"

__all__ = ["DIGEST_MISMATCH", "ENTRY_FIELDS", "FileDiff", "LockVerdict", "SkillVerdict",
           "TargetFailure", "compare_with_lock", "diff_files", "entry_differences",
           "lock_record", "recorded_entry", "verify_against"]

#: The fields of a lock entry beyond its digest and files, each derived from the skill's
#: content, in the order a difference names them.
ENTRY_FIELDS = ("programs", "tools", "description", "allowed-tools", "mentions", "archive")


@dataclass(frozen=True, slots=True)
class FileDiff:
    """Paths added, removed or changed between an approved file list and the actual one."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]

    def lines(self) -> list[str]:
        return ([f"  added:   {p}" for p in self.added]
                + [f"  removed: {p}" for p in self.removed]
                + [f"  changed: {p}" for p in self.changed])


def diff_files(expected: Iterable[FileRecord], actual: Iterable[FileRecord]) -> FileDiff:
    """Compare two file lists by path (changed: other bytes, size or mode)."""
    old = {r.path: r for r in expected}
    new = {r.path: r for r in actual}

    def key(p: str) -> bytes:
        return p.encode("utf-8")

    return FileDiff(
        added=tuple(sorted(set(new) - set(old), key=key)),
        removed=tuple(sorted(set(old) - set(new), key=key)),
        changed=tuple(sorted((p for p in set(old) & set(new) if old[p] != new[p]), key=key)),
    )


@dataclass(frozen=True, slots=True)
class LockVerdict:
    """Whether one skill matches what a lock file approved, and if not, why: ``code`` is
    that of `skillpack.runtime.checks.approval_findings` (``expect-missing``,
    ``expect-mismatch``, ``expect-extra``), or `skillpack.runtime.checks.lock_finding`'s
    (``lock-programs``, ``lock-entry``), or ``runs-in-place``, ``reason`` its words.
    ``entry`` is the entry ``skillpack lock`` would record for the skill, when it was
    derived (its digest the approved one, the lock of format 1.1)."""

    name: str
    digest: str
    ok: bool
    reason: str | None = None
    diff: FileDiff | None = None
    code: str | None = None
    entry: LockEntry | None = None


def lock_record(lock: Lock) -> Record | None:
    """What a verification is asked for to compare `lock`'s entries field by field (the
    `Recorded` fields of each skill it lists, with the ``archive`` it records): None for a
    format 1.0 lock, which records programs only."""
    if lock.format == FORMAT:
        return None
    return {name: entry.archive for name, entry in lock.skills.items()}


def recorded_entry(s: SkillReport, wanted: str | None = None) -> LockEntry | None:
    """The entry ``skillpack lock`` records for the verified skill `s` (None when its
    `Recorded` fields were not asked for): its ``archive`` the SHA-256 of the archive its
    lock would name, or, when it is `wanted` (the lock's), the other layout's."""
    r = s.recorded
    if r is None:
        return None
    return LockEntry.recorded(s.digest, s.files, s.programs, r,
                              wanted if wanted in r.archives else next(iter(r.archives), None))


def entry_differences(entry: LockEntry, s: SkillReport) -> tuple[list[str], str]:
    """The fields of the lock's `entry` (digest the same) that are not what ``skillpack
    lock`` records for the verified skill `s` (`ENTRY_FIELDS` order: ``programs`` only for
    a format 1.0 entry or a skill whose other fields were not derived; ``archive`` when the
    entry records one), and what to say of the archive when it differs."""
    differ = ["programs"] if list(entry.programs) != list(s.programs) else []
    derived = recorded_entry(s, entry.archive)
    if derived is None or entry.tools is None:
        return differ, ""
    mine, theirs = derived.to_dict(), entry.to_dict()
    differ += [key for key in ENTRY_FIELDS[1:] if mine.get(key) != theirs.get(key)
               and (key != "archive" or entry.archive is not None)]
    detail = ""
    if "archive" in differ:
        assert s.recorded is not None
        detail = (f" (its archive is {' or '.join(s.recorded.archives)}; the lock names "
                  f"{entry.archive})")
    return differ, detail


def compare_with_lock(report: VerifyReport | Iterable[VerifyReport],
                      lock: Lock, *, missing: bool = True) -> list[LockVerdict]:
    """The skills of `report` (one or several, taken together) against `lock`, as
    ``load(expect=)`` compares them (`approval_findings`, the same codes and words): each
    skill approved with the same digest and the same entry as ``skillpack lock`` records
    for it (`entry_differences`: its programs, and, verified with `lock_record`, its tools,
    description, allowed-tools, mentions and archive), or not approved, or with a different
    digest (and which files differ); then, unless not `missing`, each approved skill found
    in none of them."""
    reports = [report] if isinstance(report, VerifyReport) else list(report)
    skills = [s for r in reports for s in r.skills]
    verdicts: list[LockVerdict] = []
    for s in skills:
        entry = lock.skills.get(s.name)
        if entry is None or entry.digest != s.digest:
            [(code, _, message)] = approval_findings(
                {} if entry is None else {s.name: entry.digest}, {s.name: s.digest})
            verdicts.append(LockVerdict(s.name, s.digest, False, message,
                                        None if entry is None
                                        else diff_files(entry.files, s.files), code))
        elif (found := entry_differences(entry, s))[0]:
            # the digest covers the files, not what the lock says of them
            code, message = lock_finding(s.name, *found)
            verdicts.append(LockVerdict(s.name, s.digest, False, message, code=code,
                                        entry=recorded_entry(s, entry.archive)))
        elif s.runs_in_place:
            # left out of the digest, yet run by the approved code: approval does not cover it
            shown = ", ".join(s.runs_in_place[:5]) + (
                f" and {len(s.runs_in_place) - 5} more" if len(s.runs_in_place) > 5 else "")
            verdicts.append(LockVerdict(
                s.name, s.digest, False, f"the folder holds compiled Python the digest does not "
                f"cover but Python would run in place ({shown}); delete it, or verify and use "
                "the packed archive", code="runs-in-place",
                entry=recorded_entry(s, entry.archive)))
        else:
            verdicts.append(LockVerdict(s.name, s.digest, True,
                                        entry=recorded_entry(s, entry.archive)))
    if missing:
        approved = {name: entry.digest for name, entry in lock.skills.items()}
        verdicts.extend(LockVerdict(name, approved[name], False, message, code=code)
                        for code, name, message in approval_findings(
                            approved, {s.name: s.digest for s in skills})
                        if code == "expect-missing")
    return verdicts


@dataclass(frozen=True, slots=True)
class SkillVerdict:
    """One line of `verify`'s answer: a skill of a target; a bundle's own digest against
    ``--digest`` (``name`` None, ``skills`` its skill count); or a skill the lock approves
    that is in none of the targets (``target`` None). When not ``ok``: why (``reason``, and
    the files added, removed and changed, ``diff``) and ``code`` (the lock's,
    `LockVerdict.code`, or ``digest-mismatch`` against ``--digest``), which ``--json``
    prints with every verdict that fails. ``link`` is where a skill of an agent's folder
    that is a symbolic link points (it was verified there; `skillpack.install.folders`).
    ``path`` is the skill's own folder or archive, when it is not the target itself (a
    folder of skills or of archives). ``entry`` is the entry ``skillpack lock`` would record
    for the skill, when it was derived (`LockVerdict.entry`; not printed)."""

    target: str | None
    name: str | None
    digest: str
    ok: bool = True
    code: str | None = None
    reason: str | None = None
    diff: FileDiff | None = None
    skills: int | None = None
    link: str | None = None
    path: str | None = None
    entry: LockEntry | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The item of ``verify --json``."""
        data: dict[str, Any] = {"target": self.target, "name": self.name,
                                "digest": self.digest, "ok": self.ok}
        if self.path is not None:
            data["path"] = self.path
        if not self.ok:
            data["code"] = self.code
        if self.link is not None:
            data["link"] = self.link
        if self.reason is not None:
            data["reason"] = self.reason
        if self.diff is not None:
            data.update(added=list(self.diff.added), removed=list(self.diff.removed),
                        changed=list(self.diff.changed))
        return data

    def lines(self) -> list[str]:
        """The lines of ``verify``'s text answer."""
        state = "ok      " if self.ok else "MISMATCH"
        why = "" if self.ok else f": {self.reason}"
        if self.skills is not None:
            return [f"{state}  {self.digest}  bundle of {self.skills} skill(s)  "
                    f"({self.target}){why}"]
        where = ("in none of the targets" if self.target is None else self.path
                 if self.path is not None else self.target)
        if self.link is not None:
            where += f", a link to {self.link}"
        return [f"{state}  {self.digest}  {self.name}  ({where}){why}",
                *(self.diff.lines() if self.diff is not None else ())]


@dataclass(frozen=True, slots=True)
class TargetFailure:
    """A target that could not be verified (a damaged archive, a refused folder): the error
    says why; the other targets are still verified."""

    target: str
    error: SkillpackError
    ok = False


def verify_against(targets: Iterable[str | os.PathLike[str]], *, lock: Lock | None = None,
                   expected: str | None = None, selection: Selection | None = None,
                   ) -> list[SkillVerdict | TargetFailure]:
    """`verify`'s answer for `targets` (each what `skillpack.packing.verify.verify_target`
    verifies, each skill once however many targets reach it), in order: each skill's
    verdict, against `lock` (all the targets taken together, as ``load(expect=)`` takes a
    bundle: `compare_with_lock`) or against the digest `expected` (a bundle's own digest,
    for a bundle), then each approved skill found in none of them. A target that fails, and
    each skill of a folder that fails (its folder or archive the target: the others are
    still verified), is a `TargetFailure`, unless every problem of its error was one of an
    earlier failure's: each problem is reported once. An approved skill whose folder or
    archive failed (by its name, or by the folder's) is that failure, not missing. What the
    `selection`'s ``exclude`` matches is left out (and listed in its ``excluded``)."""
    answer: list[SkillVerdict | TargetFailure] = []
    reports: list[VerifyReport] = []
    reported: set[tuple[str, str, str | None, int | None]] = set()
    seen: set[str] = set()
    broken: set[str] = set()  # the names of the skills that failed, as far as known
    first: dict[str, tuple[str, str]] = {}  # name -> digest and place of the first so named

    def fail(target: str, err: SkillpackError) -> None:
        nonlocal reported
        keys = {(p.code, p.message, p.file, p.line) for p in err.located()}
        if not keys or not keys <= reported:
            answer.append(TargetFailure(target, err))
        reported |= keys

    for given in targets:
        target = os.fspath(given)
        try:
            report, failed = verify_target_each(
                target, seen=seen, selection=selection,
                record=lock_record(lock) if lock is not None else None)
        except SkillpackError as err:
            fail(target, err)
            continue
        for item, refused in failed:
            fail(item.label, refused)
            broken.add(os.path.basename(os.path.normpath(item.label)))
        reports.append(report)
        if expected is not None and report.kind == "bundle" and report.digest is not None:
            # a bundle is named by its own digest (SPEC section 2), not by its skills'
            ok = report.digest == expected
            answer.append(SkillVerdict(
                target, None, report.digest, ok, None if ok else DIGEST_MISMATCH,
                skills=len(report.skills),
                reason=None if ok else f"bundle digest differs from {expected}"))
            continue
        # each skill's own verdict, in order (two skills of one name are not one)
        verdicts = (compare_with_lock(report, lock, missing=False) if lock is not None
                    else [])
        for at, s in enumerate(report.skills):
            place = s.source or target
            path = place if place != target else None
            known = first.setdefault(s.name, (s.digest, place))
            clash = name_clashes([(s.name, *known), (s.name, s.digest, place)])
            verdict = verdicts[at] if verdicts else None
            if clash:  # as `lock` refuses it: an agent could not tell the two apart
                answer.append(SkillVerdict(target, s.name, s.digest, False, DUPLICATE_NAME,
                                           clash[0].message, path=path))
            elif verdict is not None and not verdict.ok:
                answer.append(SkillVerdict(target, s.name, s.digest, False, verdict.code,
                                           verdict.reason, verdict.diff, path=path,
                                           entry=verdict.entry))
            elif expected is not None and s.digest != expected:
                answer.append(SkillVerdict(target, s.name, s.digest, False, DIGEST_MISMATCH,
                                           reason=f"digest differs from {expected}",
                                           path=path))
            else:
                answer.append(SkillVerdict(target, s.name, s.digest, path=path,
                                           entry=verdict.entry if verdict else None))
    for missing in (compare_with_lock(reports, lock) if lock is not None else ()):
        if missing.code == "expect-missing" and missing.name not in broken:
            # approved, but in none of the targets
            answer.append(SkillVerdict(None, missing.name, missing.digest, False, missing.code,
                                       missing.reason))
    return answer
