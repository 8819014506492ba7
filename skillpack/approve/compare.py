"""A verified skill against what a lock approved: the one verdict `verify --lock`, `review`
and `pull --lock` report (the codes and words of ``load(expect=)``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from skillpack.approve.lock import Lock
from skillpack.formats.digest import FileRecord
from skillpack.packing.verify import VerifyReport
from skillpack.runtime.checks import approval_findings

__all__ = ["FileDiff", "LockVerdict", "compare_with_lock", "diff_files"]


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class LockVerdict:
    """Whether one skill matches what a lock file approved, and if not, why: ``code`` is
    that of `skillpack.runtime.checks.approval_findings` (``expect-missing``,
    ``expect-mismatch``, ``expect-extra``) or ``lock-programs``, ``reason`` its words."""

    name: str
    digest: str
    ok: bool
    reason: str | None = None
    diff: FileDiff | None = None
    code: str | None = None


def compare_with_lock(report: VerifyReport | Iterable[VerifyReport],
                      lock: Lock) -> list[LockVerdict]:
    """The skills of `report` (one or several, taken together) against `lock`, as
    ``load(expect=)`` compares them (`approval_findings`, the same codes and words): each
    skill approved with the same digest and programs, or not approved, or with a different
    digest (and which files differ); then each approved skill found in none of them."""
    reports = [report] if isinstance(report, VerifyReport) else list(report)
    skills = [s for r in reports for s in r.skills]
    approved = {name: entry.digest for name, entry in lock.skills.items()}
    verdicts: list[LockVerdict] = []
    for s in skills:
        entry = lock.skills.get(s.name)
        if entry is None or entry.digest != s.digest:
            [(code, _, message)] = approval_findings(
                {} if entry is None else {s.name: entry.digest}, {s.name: s.digest})
            verdicts.append(LockVerdict(s.name, s.digest, False, message,
                                        None if entry is None
                                        else diff_files(entry.files, s.files), code))
        elif list(entry.programs) != list(s.programs):
            # the digest covers the files, not the lock's list of programs
            verdicts.append(LockVerdict(
                s.name, s.digest, False, "the programs it runs differ from the lock's list "
                "(the lock was edited); lock it again", code="lock-programs"))
        elif s.runs_in_place:
            # left out of the digest, yet run by the approved code: approval does not cover it
            shown = ", ".join(s.runs_in_place[:5]) + (
                f" and {len(s.runs_in_place) - 5} more" if len(s.runs_in_place) > 5 else "")
            verdicts.append(LockVerdict(
                s.name, s.digest, False, f"the folder holds compiled Python the digest does not "
                f"cover but Python would run in place ({shown}); delete it, or verify and use "
                "the packed archive"))
        else:
            verdicts.append(LockVerdict(s.name, s.digest, True))
    verdicts.extend(LockVerdict(name, approved[name], False, message, code=code)
                    for code, name, message in approval_findings(
                        approved, {s.name: s.digest for s in skills})
                    if code == "expect-missing")
    return verdicts
