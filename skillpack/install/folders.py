"""`verify --lock` of agents' folders: each skill an agent would read there, whoever put it
there (skillpack, vercel's ``skills``, a copy by hand), against one lock.

An agent reads the folders directly in its skills folder. Each one holding SKILL.md is
verified as `verify` verifies a skill folder (`skillpack.packing.verify.verify_inputs`) and
compared with the lock (`skillpack.approve.compare.compare_with_lock`), folder by folder:
each skill approved as it is, changed (the files added, removed, changed), not approved; then
each approved skill missing from the folder (unless ``partial``: a subset is expected). The
answer is `verify`'s own records (`SkillVerdict`, `TargetFailure`), so ``--json`` has its
shape.

A skill that is a symbolic link (vercel's ``skills`` links each agent's folder to one copy
in ``.agents/skills`` by default) is verified at its target when the target lies inside the
project (``project``: the working folder, or the home folder for the user's folders) and
its verdict names the link; a link out of the project, or to nothing, is refused: what it
points to is not part of what was approved and checked in.

Every other entry of the folder is accounted for too, since agents read more than the
folders directly in it (Codex loads every SKILL.md up to six folders down): install's state
file (a regular file) and the temp folders of an install at work there (its pid alive, the
folder's lock held) are passed over; anything else, a plain file, a folder without SKILL.md
(``tools/evil/SKILL.md``), a link to one, a SKILL.md or a special file directly in it, a
temp folder no running install owns (a killed write, or one made by hand to look like it),
fails the folder, each entry named (code ``unexpected-entry``). Any other plain file
(``.gitkeep``, ``.gitignore``, ``.DS_Store``, a README), which no agent loads, is passed
over. A folder of the project that leads out of it through a symbolic link
is refused (code ``outside-project``), and folders that are one place on disk are verified
once.

An installed skill holds its file set and nothing else: install writes nothing more, and an
agent reads whatever is there. So every entry of the folder its file set lacks (`unlisted`:
what a walk of an authoring folder would pass over, by a `.skillignore` line, `includes:` or
the built-in list: `.git/`, `__pycache__/`, `.env`...) fails the skill, named (code
``unlisted-files`` when its digest is the approved one). `installed_digest` is the same
reading for `install`, which writes such a skill again, and `as_installed` for `verify` of
an installed skill's folder named directly (``verify --lock L .claude/skills/NAME``), so that
both spellings give one answer.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import stat
from collections.abc import Iterable, Sequence

from blake3 import blake3

from skillpack._atomic import pid_alive, writer_at_work
from skillpack._regular import read_regular
from skillpack.approve.compare import (
    FileDiff,
    SkillVerdict,
    TargetFailure,
    compare_with_lock,
    lock_record,
    verify_against,
)
from skillpack.approve.lock import Lock
from skillpack.errors import Problem, RefusedError, SkillpackError
from skillpack.formats.digest import FileRecord, digest_records
from skillpack.formats.paths import SKILL_MD
from skillpack.install.agents import AGENTS, AgentFolder, agent_folders, escape, folder_by_path
from skillpack.install.nested import agent_reach
from skillpack.install.place import TEMP_RE
from skillpack.install.state import STATE_FILE
from skillpack.packing.selection import Selection
from skillpack.packing.verify import SkillReport, VerifyReport, verify_inputs
from skillpack.source.classify import Input
from skillpack.source.discover import is_skill_folder
from skillpack.source.fileset import display_path
from skillpack.source.records import record_skill

__all__ = ["MISCASED", "OUTSIDE", "UNEXPECTED", "UNLISTED", "as_installed",
           "installed_digest", "installed_refusal", "is_agent_folder", "lock_answer",
           "require_approved", "unlisted", "verify_agents", "verify_folders"]

Answer = list[SkillVerdict | TargetFailure]

#: The code of an installed skill whose digest is the approved one, in a folder holding more.
UNLISTED = "unlisted-files"
#: The code of an entry of an agent's folder that is no skill (nor install's own).
UNEXPECTED = "unexpected-entry"
#: The code of a folder of the project that leads out of it through a symbolic link.
OUTSIDE = "outside-project"
#: The code of a path of the project that is an agent's folder spelt in another case.
MISCASED = "agent-folder-case"
_NAMED = 100  # at most this many unlisted entries are listed with a verdict (all are counted)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _key(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


def unlisted(folder: str, carried: Iterable[str]) -> tuple[str, ...]:
    """Every entry below the skill folder `folder` that is neither one of the `carried`
    paths nor a folder on the way to one, sorted by bytes: files, links and special files
    (none followed), and a folder that cannot be listed (its path ending in ``/``). An empty
    folder holds nothing an agent could read and is not named."""
    keep = set(carried)
    found: list[str] = []
    pending = [""]
    while pending:
        below = pending.pop()
        try:
            with os.scandir(os.path.join(folder, below)) as scan:
                entries = list(scan)
        except OSError:
            found.append(below)
            continue
        for entry in entries:
            path = below + entry.name
            if entry.is_dir(follow_symlinks=False):
                pending.append(path + "/")
            elif path not in keep:
                found.append(path)
    return tuple(sorted(found, key=_key))


def installed_digest(path: str, project: str) -> str | None:
    """The digest of the skill installed at `path` as `verify_folders` reads it: through a
    symbolic link only into `project`, and None when it cannot be read or holds an entry its
    file set lacks (`unlisted`)."""
    real = os.path.realpath(path)
    if os.path.islink(path) and not _inside(real, os.path.realpath(project)):
        return None
    try:
        _, _, records = record_skill(real)
    except (SkillpackError, OSError):
        return None
    if unlisted(real, (r.path for r in records)):
        return None
    return digest_records(records)


def _unlisted_reason(found: tuple[str, ...]) -> str:
    shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
    return (f"the folder holds {len(found)} entr{'y' if len(found) == 1 else 'ies'} its "
            f"file set lacks, which no approval covers and an agent reads all the same "
            f"({shown}); install it again (skillpack install) to put back the approved "
            "copy, or delete them")


def _with_unlisted(verdict: SkillVerdict, found: tuple[str, ...], folder: str,
                   approved: Iterable[FileRecord] = ()) -> SkillVerdict:
    """`verdict`, failed for the `found` entries of the skill folder `folder`: named in its
    reason and as added files. An approved file the walk left out (a `.skillignore` line
    added in the agent's folder) that is still there is no file added and removed: it is
    the same as `approved` says, or `changed`."""
    diff = verdict.diff or FileDiff((), (), ())
    records = {r.path: r for r in approved}
    hidden = set(found) & set(diff.removed)
    changed = {p for p in hidden if _record_of(folder, p) != records.get(p)}
    added = tuple(sorted((*diff.added, *(p for p in found[:_NAMED] if p not in hidden)),
                         key=_key))
    reason = _unlisted_reason(found)
    return dataclasses.replace(
        verdict, ok=False, code=verdict.code or UNLISTED,
        reason=reason if verdict.ok else f"{verdict.reason}; {reason}",
        diff=FileDiff(added, tuple(p for p in diff.removed if p not in hidden),
                      tuple(sorted({*diff.changed, *changed}, key=_key))))


def _record_of(folder: str, path: str) -> FileRecord | None:
    """The record of the regular file `path` below the skill folder `folder` (None when it
    is no regular file, or cannot be read)."""
    full = os.path.join(folder, *path.split("/"))
    try:
        mode = os.lstat(full).st_mode
        data = read_regular(full, follow=False)
    except OSError:
        return None
    return FileRecord(path, "100755" if mode & stat.S_IXUSR else "100644", len(data),
                      blake3(data).hexdigest())


def _failure(path: str, code: str, message: str, hint: str) -> TargetFailure:
    return TargetFailure(path, SkillpackError(message, path=path, hint=hint, problems=(
        Problem("error", code, message, path),)))


def _unexpected(path: str, what: str) -> TargetFailure:
    return _failure(path, UNEXPECTED, f"{what}, not a skill; no approval covers it and an "
                    "agent may read it all the same (Codex loads every SKILL.md up to six "
                    "folders down, whatever the folders between)",
                    "delete it, or move it out of the agent's folder")


def _entries(folder: str, project: str) -> tuple[list[tuple[Input, str | None]], Answer]:
    """The skills directly in `folder` as inputs (each with the real path of a link), and
    a failure for each entry refused or unexpected (see the module text)."""
    items: list[tuple[Input, str | None]] = []
    failures: Answer = []
    try:
        names = sorted(os.listdir(folder), key=lambda n: n.encode("utf-8", "surrogateescape"))
    except OSError as err:
        return [], [TargetFailure(folder, SkillpackError(
            f"cannot list the folder: {err.strerror}", path=folder,
            hint="give an agent's skills folder, e.g. .claude/skills"))]
    root = os.path.realpath(project)
    busy = writer_at_work(folder) is not False  # an install (or a writer) at work here
    unexpected: list[TargetFailure] = []
    for name in names:
        path = os.path.join(folder, name)
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        temp = TEMP_RE.match(name)
        if name == STATE_FILE and stat.S_ISREG(mode):
            continue
        if temp is not None:
            if busy and pid_alive(int(temp.group(1))):
                continue  # a running install's: renamed into place (or removed) when done
            unexpected.append(_failure(
                path, UNEXPECTED, "named as install's temp folder, but no install is at "
                "work here: a write that was killed, or a copy made to look like one; an "
                "agent may read it all the same", "run skillpack install into this folder "
                "again (it removes what killed installs left), or delete it"))
            continue
        if stat.S_ISLNK(mode):
            real = os.path.realpath(path)
            if not os.path.isdir(real):
                failures.append(TargetFailure(path, SkillpackError(
                    f"a symbolic link to {os.readlink(path)}, which is no folder",
                    path=path, hint="remove the link, or install the skill again")))
                continue
            if not _inside(real, root):
                failures.append(TargetFailure(path, SkillpackError(
                    f"a symbolic link to {real}, outside the project ({root}): what it "
                    "points to is not verified", path=path,
                    hint="install a copy instead (skillpack install, or skills add --copy), "
                         "or verify from the folder that holds both")))
                continue
            if is_skill_folder(real):
                # read where the agent reads it: a link named otherwise than its folder is
                # a skill of the link's name (its name must be the folder's: name-mismatch)
                at = real if os.path.basename(real) == name else path
                items.append((Input("folder", at, folder, path), real))
            else:
                unexpected.append(_unexpected(path, f"a symbolic link to {real}, a folder "
                                              "without SKILL.md"))
        elif stat.S_ISDIR(mode):
            if is_skill_folder(path):
                items.append((Input("folder", path, folder), None))
            else:
                unexpected.append(_unexpected(path, "a folder without SKILL.md directly in "
                                              "it"))
        elif not stat.S_ISREG(mode):
            unexpected.append(_unexpected(path, "a special file (a fifo, a device or a "
                                          "socket)"))
        elif name.lower() == SKILL_MD.lower():  # an agent may read it as a skill of its own
            unexpected.append(_unexpected(path, f"a {name} directly in the agent's folder"))
        # any other plain file (.gitkeep, .gitignore, .DS_Store, a README) no agent loads
    if len(unexpected) > _NAMED:  # each named up to a point, all counted
        more = len(unexpected) - _NAMED
        unexpected[_NAMED:] = [_failure(folder, UNEXPECTED, f"and {more:,} more entries "
                                        "that are no skills", "delete them, or move them "
                                        "out of the agent's folder")]
    return items, failures + unexpected


def _mode_note(expected: Iterable[FileRecord], actual: Iterable[FileRecord],
               changed: tuple[str, ...]) -> str:
    """Words for a change of execute bits alone (an installer writing every file 0644)."""
    old = {r.path: r for r in expected}
    new = {r.path: r for r in actual}
    if not changed or any((old[p].size, old[p].blake3) != (new[p].size, new[p].blake3)
                          for p in changed):
        return ""
    return ("; only the execute bit differs (" + ", ".join(changed) + "): the bytes are "
            "the approved ones, the modes are not (an installer that writes every file 0644 "
            "drops it)")


def verify_folders(folders: Iterable[str | AgentFolder], lock: Lock, *,
                   partial: bool = False, project: str | None = None) -> Answer:
    """`verify`'s answer for each agent folder of `folders` against `lock` (see the module
    text), folder by folder, each place on disk once; `project` (default: the working
    folder) is where a skill that is a link may point. A folder given by path is bounded as
    `skillpack.install.agents.folder_by_path` bounds it."""
    answer: Answer = []
    where = project if project is not None else os.getcwd()
    seen: set[str] = set()
    for given in folders:
        bounded = folder_by_path(given) if isinstance(given, str) else given
        folder = bounded.path
        if os.path.realpath(folder) in seen:
            continue
        seen.add(os.path.realpath(folder))
        real = escape(bounded)
        if real is not None:
            answer.append(_failure(folder, OUTSIDE, f"the folder leads out of the project "
                                   f"({bounded.project}) through a symbolic link: it is "
                                   f"{real}, which is not verified", "remove the link (an "
                                   "agent folder of a project is a real folder in it), or "
                                   "verify that folder by its own path"))
            continue
        if not os.path.isdir(folder):
            answer.append(TargetFailure(folder, SkillpackError(
                "no such folder", path=folder, hint="install into it first, or give the "
                "folder an agent reads")))
            continue
        items, failures = _entries(folder, where)
        answer.extend(failures)
        reports: list[SkillReport] = []
        links: dict[str, str | None] = {}
        extra: dict[str, tuple[str, ...]] = {}
        homes: dict[str, str] = {}  # each skill's own folder
        broken: set[str] = set()  # the skills refused here: that failure, not "missing"
        for item, link in items:
            try:
                found = verify_inputs([item], record=lock_record(lock))
            except SkillpackError as err:
                answer.append(TargetFailure(item.label, installed_refusal(item.relabel(err))))
                broken.add(os.path.basename(os.path.normpath(item.label)))
                continue
            for report in found:
                # compiled Python the walk left out is among the unlisted entries
                reports.append(dataclasses.replace(report, runs_in_place=()))
                links[report.name] = link
                homes[report.name] = item.path
                extra[report.name] = tuple(  # named safe to print: no newline, no byte
                    display_path(p) for p in unlisted(item.path, (f.path for f in report.files)))
        verdicts = compare_with_lock(
            [_report(folder, reports)], lock) if reports or not partial else []
        files = {r.name: r.files for r in reports}
        for v in verdicts:
            if v.code == "expect-missing":
                if not partial and v.name not in broken:
                    answer.append(SkillVerdict(folder, v.name, v.digest, False, v.code,
                                               v.reason))
                continue
            reason = v.reason
            entry = lock.skills.get(v.name)
            if reason is not None and v.diff is not None and entry is not None:
                reason += _mode_note(entry.files, files[v.name], v.diff.changed) if not (
                    v.diff.added or v.diff.removed) else ""
            verdict = SkillVerdict(folder, v.name, v.digest, v.ok, v.code, reason, v.diff,
                                   link=links.get(v.name), entry=v.entry)
            left = extra.get(v.name, ())
            answer.append(_with_unlisted(verdict, left, homes[v.name], entry.files if entry
                                         else ()) if left else verdict)
    return answer


def verify_agents(agents: Sequence[str], lock: Lock, into: Sequence[str] = (), *,
                  user: bool = False, partial: bool = False) -> Answer:
    """``verify --lock LOCK --agent NAME... [FOLDER...]``'s answer: the `agents`' folders
    and the folders `into` (`verify_folders`, with `partial`; with `user` the agents' user
    folders, bounded to the home folder). For the agents' project folders, the other
    folders of the project they read skills from too
    (`skillpack.install.nested.agent_reach`): each nested agent folder is verified as a
    subset of the lock (as with `partial`), and each path that is an agent's folder spelt
    in another case fails (code ``agent-folder-case``), since on a case-insensitive
    checkout it is that folder."""
    folders = agent_folders(agents, into, user=user)
    answer = verify_folders(folders, lock, partial=partial,
                            project=os.path.expanduser("~") if user else None)
    if user or not agents:
        return answer
    reach = agent_reach(agents)
    done = {os.path.realpath(f.path) for f in folders}
    answer.extend(verify_folders([f for f in reach.folders
                                  if os.path.realpath(f.path) not in done], lock,
                                 partial=True))
    answer.extend(_failure(
        path, MISCASED, f"the agent's folder {meant} spelt in another case: on a "
        f"case-insensitive checkout (macOS, Windows) git writes what it holds into "
        f"{meant}, which the agent loads; here it is a folder apart, which no check of "
        f"{meant} reads", f"move what it holds into {meant} (git mv), spelt so, or "
        "delete it") for path, meant in reach.miscased)
    return answer


def lock_answer(targets: Sequence[str], lock: Lock, *, selection: Selection | None = None,
                partial: bool = False) -> Answer:
    """``verify --lock LOCK TARGET...``'s answer, and the verdicts ``review --lock`` shows:
    agents' skills folders (`verify_folders`, with `partial`) when every TARGET is one by
    its place (`is_agent_folder`), else the skills of the TARGETs taken together
    (`skillpack.approve.compare.verify_against`, with `selection`), each one directly in an
    agent's folder read as installed (`as_installed`)."""
    if targets and all(map(is_agent_folder, targets)):
        return verify_folders(agent_folders((), targets), lock, partial=partial)
    return as_installed(verify_against(targets, lock=lock, selection=selection), lock)


def require_approved(targets: Sequence[str], lock: Lock, *, source: str | None = None) -> None:
    """Raise `SkillpackError` listing everything ``verify --lock`` fails at `targets`
    (`lock_answer`): a skill the lock does not approve as it is, an entry it records
    otherwise than ``skillpack lock`` would (`lock-entry`: an ``archive`` SHA-256 among
    them), an approved skill none of them holds. What ``sign LOCK PATH...`` asks before it
    signs (`source`: the lock file, named in the refusal)."""
    problems: list[Problem] = []
    for item in lock_answer(targets, lock):
        if isinstance(item, TargetFailure):
            problems += item.error.as_problems(item.target)
        elif not item.ok:
            reason = item.reason or "does not match the lock"
            said = reason if item.name is None or f"'{item.name}'" in reason \
                else f"skill '{item.name}': {reason}"
            problems.append(Problem("error", item.code or "lock", said,
                                    item.path or item.target or source))
    if problems:
        count = len(problems)
        raise SkillpackError(
            f"the lock does not approve the skills at {', '.join(targets)} as they are: "
            f"{count} problem{'s' * (count != 1)}", path=source, problems=problems,
            hint="see `skillpack verify --lock`: fix the skills or lock them again, then sign")


def as_installed(answer: Answer, lock: Lock | None = None) -> Answer:
    """`answer` (of `verify` of skill folders, against `lock` when given), each skill whose
    own folder (its verdict's ``path``, else its target) lies directly in an agent's folder
    (`is_agent_folder`) read as installed, as `verify_folders` reads it: every entry its
    file set lacks fails it, and a refusal of its file set advises installing it again."""
    out: Answer = []
    for item in answer:
        if isinstance(item, TargetFailure) and _installed_here(item.error.path):
            item = TargetFailure(item.target, installed_refusal(item.error))
        if isinstance(item, SkillVerdict) and item.target is not None and item.name:
            path = item.path or item.target  # the skill's own folder
            if _installed_here(path):
                try:
                    _, _, records = record_skill(path)
                except (SkillpackError, OSError):
                    records = []
                found = tuple(display_path(p) for p in
                              unlisted(path, (r.path for r in records)))
                if records and found:
                    entry = None if lock is None else lock.skills.get(item.name)
                    item = _with_unlisted(item, found, path, entry.files if entry else ())
        out.append(item)
    return out


#: The advice of a walk's refusal for an authoring folder (a `.skillignore` line), which in
#: an agent's folder is itself a failure (`UNLISTED`).
_AUTHORING = re.compile(r"(?:\. (?:Replace it with a copy of its target|Remove it))?, or leave "
                        r"it out with a line in \.skillignore")
_AGAIN = "install the skill again (skillpack install) to put back the approved copy"


def installed_refusal(err: SkillpackError) -> SkillpackError:
    """`err`, a refusal of an installed skill's file set (a link, a special file, a file
    that cannot be read, a secret), advising what helps in an agent's folder: installing the
    skill again, not a `.skillignore` line (which there fails the skill as well)."""
    if not any(_AUTHORING.search(p.message) for p in err.problems):
        return err
    shown = copy.copy(err)
    shown.problems = tuple(Problem(p.severity, p.code, _AUTHORING.sub(
        f"; {_AGAIN}", p.message, count=1), p.file, p.line) for p in err.located())
    shown.hint = f"{_AGAIN}, or remove what is listed"
    if isinstance(shown, RefusedError):
        shown.joined = True
    return shown


def _report(folder: str, skills: list[SkillReport]) -> VerifyReport:
    return VerifyReport(folder, "folder", tuple(skills))


def _installed_here(path: str | None) -> bool:
    """Whether `path` is a skill folder directly in an agent's folder."""
    return path is not None and is_agent_folder(os.path.dirname(os.path.abspath(
        os.path.normpath(path)))) and is_skill_folder(path)


def is_agent_folder(path: str) -> bool:
    """Whether ``path`` is an agent's skills folder by its place: it ends with an agent's
    project or user folder (``.claude/skills``, ``.agents/skills``, ``.codex/skills``...),
    or `skillpack install` installed into it (it holds the state file)."""
    parts = os.path.normpath(os.path.abspath(path)).split(os.sep)
    known = {tuple(a.project.split("/")) for a in AGENTS.values()} | {
        tuple(a.user.split("/")) for a in AGENTS.values() if a.user.startswith(".")}
    return (any(tuple(parts[-len(k):]) == k for k in known)
            or os.path.isfile(os.path.join(path, STATE_FILE)))
