"""`install`: skills from their sources into agents' folders, approved first.

Read top to bottom, it is the command: the folders are checked to be writable; the sources
are fetched (a site, an OCI reference) and classified (`skillpack.source.classify`); every
skill is read as a skill folder and judged as `pack` judges it, against the host profiles of
the agents it goes to; the subset asked for is chosen; the lock, when given, must approve
each of them as it is (`skillpack.approve.compare.compare_with_lock`: the verdicts `verify`
prints); then each folder's plan is made (what is new, changed, the same, someone else's,
to be pruned) before a byte is written, and carried out skill by skill
(`skillpack.install.place`), each recorded in the folder's state file
(`skillpack.install.state`). Any refusal before the writes writes nothing; a folder of the
project that leads out of it through a symbolic link is refused with the rest.

Two installs into one folder at once take turns: each holds the folder's lock
(`skillpack._atomic.folder_lock`) while it writes there, and plans that folder again under
the lock when the state file changed since it first planned, so that neither loses what the
other recorded.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext, suppress
from dataclasses import dataclass
from typing import Any, Literal

from skillpack._atomic import folder_lock, make_folders, remove_tree
from skillpack.approve.compare import compare_with_lock, lock_record
from skillpack.approve.lock import Lock
from skillpack.errors import Problem, SkillpackError, WriteError
from skillpack.install.agents import AgentFolder, escape
from skillpack.install.folders import installed_digest
from skillpack.install.place import clean_stale, held_signals, remove_skill, stage_skill, swap_in
from skillpack.install.remote import Fetched, fetched
from skillpack.install.state import check_name, read_state, write_state
from skillpack.packing.check import name_clashes
from skillpack.packing.prepare import PackOptions, PreparedSkill, judge_skill, refuse_all
from skillpack.packing.verify import (
    SkillReport,
    VerifyReport,
    as_skill_folders,
    prepared_recorded,
)
from skillpack.publish.oci import DEFAULT_TIMEOUTS, Timeouts
from skillpack.source.classify import Exclude, classify_all

__all__ = ["WRITES", "Action", "InstallReport", "Step", "install", "install_skills"]

#: What install did with one skill in one folder: ``installed`` (new there), ``updated`` (it
#: had installed another version), ``unchanged`` (the same digest was there: nothing
#: written), ``present`` (the same digest, put there by someone else: left alone, not
#: recorded), ``pruned`` (removed: the lock no longer lists it), ``kept`` (not pruned: it was
#: changed after install put it there, see ``reason``), ``forgotten`` (to be pruned, but no
#: longer there: only its record removed from the state file, nothing written).
Action = Literal["installed", "updated", "unchanged", "present", "pruned", "kept",
                 "forgotten"]
#: The actions that write or remove a skill.
WRITES = ("installed", "updated", "pruned")


@dataclass(frozen=True, slots=True)
class Step:
    """One skill in one folder: what was (or is to be) done, and from where."""

    folder: str
    name: str
    digest: str
    action: Action
    source: str = ""
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"folder": self.folder, "name": self.name,
                                "digest": self.digest, "action": self.action,
                                "source": self.source}
        if self.reason is not None:
            data["reason"] = self.reason
        return data


@dataclass(frozen=True, slots=True)
class InstallReport:
    """What `install` did: each folder, and each step in order; ``skipped``: a note for
    each site whose index lists entries of a type skillpack does not read (skipped)."""

    folders: tuple[AgentFolder, ...]
    steps: tuple[Step, ...]
    skipped: tuple[str, ...] = ()

    @property
    def written(self) -> int:
        """How many skills were written or removed."""
        return sum(s.action in WRITES for s in self.steps)


def install(sources: Iterable[str], folders: Sequence[AgentFolder], *,
            lock: Lock | None = None, frozen: bool = False, only: Iterable[str] = (),
            prune: bool = False, plain_http: bool = False,
            project: str | None = None,
            timeouts: Timeouts = DEFAULT_TIMEOUTS,
            exclude: Exclude | Iterable[str] = (),
            progress: Callable[[Step], None] | None = None,
            lock_file: str | None = None) -> InstallReport:
    """Install the skills of `sources` into each of `folders` (see the module text).

    `exclude`: the skill folders and archives left out, as `lock` and `verify` leave them
    out (``--exclude``, ``skillpack.toml``). `only`: the names to install (all, when empty);
    a skill refused whose folder is not named so blocks no other. With `lock`, each must be
    approved with its digest and programs; `frozen` also refuses a skill of the sources the
    lock does not list and one the lock lists that the sources lack. `prune` removes what
    install put in a folder that the lock no longer lists; with no `sources` that is all it
    does (the lock may list no skill at all: every skill install put there goes). A skill
    already in place counts as the same only when `verify` would say so
    (`installed_digest`: a symbolic link only into `project`, default the working folder;
    no entry beyond its file set); else it is written again, or, not install's, refused as
    in the way. `timeouts` bounds each request
    to a site or registry and, with its deadline, the fetch of each remote source. Raises
    `SkillpackError` (path and hint) before any write for: a folder that cannot be written,
    a source that cannot be read, a skill that is invalid or breaks an agent's limits, a
    site's skill whose name is not the one its index gives it, a name asked for that no
    source holds, two different skills of one name, a skill the lock does not approve, a
    place held by a skill install did not put there; `WriteError` when a write fails (the
    skills written before it stay, recorded; none is half written). A folder of `folders`
    bounded to a project (`AgentFolder.project`) that resolves outside it is refused (code
    ``outside-project``). `progress` is called with each step once it is carried out (a
    skill in place and recorded, or removed): a signal that stops the install (Ctrl-C,
    SIGTERM) lands between two steps, never inside one, so the steps `progress` was given
    are exactly what was done. `lock_file`: where `lock` was read from, the path of a
    `frozen` refusal of an approved skill no source holds.
    """
    sources = tuple(sources)
    only = tuple(only)
    if (frozen or prune) and lock is None:
        raise SkillpackError(f"--{'frozen' if frozen else 'prune'} compares with a lock",
                             hint="give the lock with --lock")
    if not sources and not prune:
        raise SkillpackError("nothing to install: no source given",
                             hint="give a source, or --prune with --lock to remove what the "
                                  "lock no longer lists")
    if not sources and (frozen or only):
        raise SkillpackError(f"--{'frozen' if frozen else 'skill'} is about the sources, and "
                             "none is given", hint="give the sources, or prune alone")
    _check_folders(folders)
    if not sources:  # prune alone: nothing fetched, judged nor approved
        where = os.getcwd() if project is None else project
        return InstallReport(tuple(folders), tuple(_write(folders, [], lock, where,
                                                          progress)))
    targets = tuple(dict.fromkeys(t for f in folders for t in f.targets))
    with fetched(sources, plain_http=plain_http, timeouts=timeouts) as found:
        try:
            steps = _install(found, folders, targets, lock=lock, frozen=frozen, only=only,
                             prune=prune, project=project, exclude=exclude,
                             progress=progress, lock_file=lock_file)
        except SkillpackError as err:  # named by the URL, not the temporary folder
            raise found.relabel(err) from None
    return InstallReport(tuple(folders), tuple(steps), found.skipped)


def _install(found: Fetched, folders: Sequence[AgentFolder], targets: tuple[str, ...], *,
             lock: Lock | None, frozen: bool, only: Iterable[str], prune: bool,
             project: str | None, exclude: Exclude | Iterable[str],
             progress: Callable[[Step], None] | None,
             lock_file: str | None) -> list[Step]:
    """`install` of the sources `found`: judged, chosen, approved, planned, written, each
    folder under its lock (another install into it waits; planned again when it changed
    meanwhile)."""
    inputs = classify_all(found.paths, exclude=exclude)
    with as_skill_folders(inputs.items) as ready:
        skills = _judge([(i.path, _origin(i.label, found.origins), i.relabel,
                          found.named(i.label)) for i in ready], targets, only)
        chosen = _choose(skills, only)
        if lock is not None:
            _approve(skills if frozen else chosen, lock, frozen, lock_file)
        where = os.getcwd() if project is None else project
        return _write(folders, chosen, lock if prune else None, where, progress)


def _write(folders: Sequence[AgentFolder], chosen: list[_Skill], prune: Lock | None,
           where: str, progress: Callable[[Step], None] | None) -> list[Step]:
    """Plan every folder, then carry out each plan under the folder's lock (planned again
    when its state file changed meanwhile); `prune`: the lock to prune against."""
    plans = [_plan(folder, chosen, prune, where) for folder in folders]
    made = _make_folders(f.path for f, p in zip(folders, plans, strict=True) if p.writes)
    steps: list[Step] = []
    try:
        for folder, plan in zip(folders, plans, strict=True):
            locked = folder_lock(folder.path) if os.path.isdir(folder.path) else (
                nullcontext(False))
            with locked as alone:  # another install into it waits here
                if os.path.isdir(folder.path) and read_state(folder.path) != plan.state:
                    plan = _plan(folder, chosen, prune, where)
                _carry_out(folder.path, plan, chosen, steps, alone, progress)
    except BaseException as err:  # a failed write, Ctrl-C, SIGTERM: no folder made
        _remove_empty(made)  # for nothing is left behind
        if isinstance(err, WriteError):
            raise _written_before(err, steps) from None
        raise
    return steps


def _written_before(err: WriteError, steps: Sequence[Step]) -> WriteError:
    """`err`, saying which skills were written before it failed: they stay, each recorded
    in its folder's state file (a disk that fills midway keeps the skills placed before)."""
    written = [s for s in steps if s.action in WRITES]
    if not written:
        return WriteError(f"{err.message}; nothing was installed", path=err.path,
                          line=err.line, hint=err.hint, problems=err.problems)
    names = ", ".join(f"{s.name} ({s.action})" for s in written[:5])
    if len(written) > 5:
        names += f" and {len(written) - 5:,} more"
    return WriteError(f"{err.message}; before it, {len(written):,} skill"
                      f"{'s' * (len(written) != 1)} were written and stay recorded: {names}",
                      path=err.path, line=err.line, problems=err.problems,
                      hint=(err.hint + "; then" if err.hint else "") + " run the same "
                      "install again: what is in place is left as it is")


def _origin(label: str, origins: Mapping[str, str]) -> str:
    """Where a skill came from, as the user named it: the reference or URL of the file it
    was fetched as (a skill of a fetched bundle, ``REF/NAME``), else its own label."""
    if label in origins:
        return origins[label]
    head, _, name = label.rpartition("/")
    return f"{origins[head]}/{name}" if head in origins else label


def _make_folders(paths: Iterable[str]) -> list[str]:
    """Make every folder a plan writes into, before any skill is written, and return those
    made (outermost first); when one cannot be made, those made here are removed again."""
    made: list[str] = []
    for path in paths:
        try:
            made += make_folders(path)
        except OSError as err:
            _remove_empty(made)
            raise WriteError(f"cannot make the folder: {err.strerror or err}; nothing was "
                             "installed", path=path,
                             hint="check that its parent is writable and has room") from None
    return made


def _remove_empty(made: list[str]) -> None:
    """Remove the folders `_make_folders` made that nothing was written into (deepest first);
    one that holds something stays."""
    for folder in reversed(made):
        with suppress(OSError):
            os.rmdir(folder)


def _check_folders(folders: Sequence[AgentFolder]) -> None:
    """Refuse, all at once, the folders that lead out of their project, are files or cannot
    be made or written."""
    problems = []
    for folder in folders:
        real = escape(folder)
        if real is not None:
            problems.append(Problem("error", "outside-project", f"{folder.path} leads out of "
                                    f"the project ({folder.project}) through a symbolic "
                                    f"link: it is {real}; nothing is written there",
                                    folder.path))
            continue
        path = os.path.abspath(folder.path)
        probe = path
        while not os.path.lexists(probe):
            probe = os.path.dirname(probe)
        why = None
        if not os.path.isdir(probe):
            why = f"{probe} is not a folder"
        elif not os.access(probe, os.W_OK | os.X_OK):
            why = f"{probe} is not writable"
        if why is not None:
            problems.append(Problem("error", "not-writable", f"cannot install into "
                                    f"{folder.path}: {why}", folder.path))
    if not problems:
        return
    message = (problems[0].message if len(problems) == 1 else
               f"{len(problems)} folders cannot be written: "
               + "; ".join(p.message for p in problems))
    if any(p.code == "outside-project" for p in problems):
        raise SkillpackError(message, path=problems[0].file, problems=problems,
                             hint="remove the link (an agent folder of a project is a "
                                  "real folder in it); to write where it points, name that "
                                  "folder with --into, or use --global for your own folders")
    raise WriteError(message, path=problems[0].file, problems=problems,
                     hint="choose a folder you can write, or fix its permissions")


@dataclass(frozen=True, slots=True)
class _Skill:
    prepared: PreparedSkill
    source: str  # as the user knows it

    @property
    def name(self) -> str:
        return self.prepared.name

    @property
    def digest(self) -> str:
        return self.prepared.digest


def _judge(ready: Iterable[tuple[str, str, Any, str | None]],
           targets: tuple[str, ...], only: Iterable[str] = ()) -> list[_Skill]:
    """Each skill folder judged as `pack` judges it for `targets`, and a site's skill
    against the name its index gives it, and two different skills of one name: every
    refusal at once. With `only`, a skill refused whose folder has none of its names (a
    broken template beside the skill asked for) is not installed, and blocks nothing."""
    wanted = set(only)
    skills: list[_Skill] = []
    failures: list[SkillpackError] = []
    for path, source, relabel, named in ready:
        verdict = judge_skill(path, options=PackOptions(targets=targets), doing="installed")
        if verdict.error is not None:
            if not wanted or os.path.basename(os.path.normpath(path)) in wanted:
                failures.append(relabel(verdict.error))
        elif verdict.prepared is not None and named not in (None, verdict.prepared.name):
            failures.append(SkillpackError(
                f"the index names this skill '{named}', but what it delivers is the skill "
                f"'{verdict.prepared.name}'", path=source, hint="the site's index and its "
                "artifact disagree: do not install it; ask the site to fix its index"))
        elif verdict.prepared is not None:
            skills.append(_Skill(verdict.prepared, source))
    by_name: dict[str, _Skill] = {}
    for skill in skills:
        had = by_name.setdefault(skill.name, skill)
        if not wanted or skill.name in wanted:
            failures += [SkillpackError(
                clash.message, path=skill.source, problems=[clash],
                hint="install one of them (--skill picks by name, so give one source at a "
                "time), or rename one") for clash in name_clashes(
                    [(had.name, had.digest, had.source), (skill.name, skill.digest,
                                                          skill.source)])]
    refuse_all(failures)
    return list(by_name.values())


def _choose(skills: list[_Skill], only: Iterable[str]) -> list[_Skill]:
    """The skills named in `only` (all when empty); a name no source holds is refused."""
    wanted = list(dict.fromkeys(only))
    if not wanted:
        return skills
    names = {s.name for s in skills}
    missing = [n for n in wanted if n not in names]
    if missing:
        raise SkillpackError(f"no source holds a skill named {', '.join(map(repr, missing))}",
                             path=missing[0], hint="the sources hold " + (
                                 ", ".join(sorted(names)) or "no skill"))
    return [s for s in skills if s.name in wanted]


def _approve(skills: list[_Skill], lock: Lock, frozen: bool, lock_file: str | None) -> None:
    """Refuse every skill the lock does not approve as it is (and, `frozen`, every skill
    the lock approves that the sources lack), with `verify`'s words and file lists."""
    sources = {s.name: s.source for s in skills}
    record = lock_record(lock)
    report = VerifyReport("sources", "folder", tuple(
        SkillReport(s.name, s.digest, s.prepared.manifest.files, s.prepared.manifest.programs,
                    s.prepared.manifest, s.source,
                    recorded=prepared_recorded(s.prepared, record)) for s in skills))
    problems = []
    missing = []  # --frozen: approved skills no source holds (no path: none exists)
    for verdict in compare_with_lock(report, lock):
        if verdict.ok or (verdict.code == "expect-missing" and not frozen):
            continue
        extra = "" if verdict.diff is None else "\n" + "\n".join(verdict.diff.lines())
        if verdict.code == "expect-missing":
            missing.append(verdict.name)
            problems.append(Problem("error", verdict.code, f"skill '{verdict.name}' is "
                                    f"approved (digest {verdict.digest}), but no source "
                                    "holds it", lock_file))
        else:  # verify's words, which name the skill already
            problems.append(Problem("error", verdict.code or "lock", f"{verdict.reason}"
                                    f"{extra}", sources.get(verdict.name)))
    if problems:
        refused = [p for p in problems if p.code != "expect-missing"]
        said = ([f"the lock does not approve {len(refused)} skill(s) as they are: "
                 + "; ".join(p.message.splitlines()[0] for p in refused)] if refused else [])
        if missing:
            said.append(f"the sources lack {len(missing)} skill(s) the lock approves "
                        "(--frozen): " + ", ".join(map(repr, missing)))
        raise SkillpackError(
            "; ".join(said), path=problems[0].file, problems=problems,
            hint="install what the lock approves, or review and lock these skills again "
                 "(skillpack review, skillpack lock)" + ("; --frozen also wants every "
                                                          "skill it lists" if frozen else ""))


@dataclass(frozen=True, slots=True)
class _Plan:
    state: Mapping[str, str]
    steps: tuple[Step, ...]

    @property
    def writes(self) -> bool:
        return any(s.action in WRITES for s in self.steps)


def _plan(folder: AgentFolder, chosen: list[_Skill], lock: Lock | None,
          project: str) -> _Plan:
    """What to do in `folder`, decided before anything is written; with `lock` (prune),
    what install put there that the lock no longer lists is removed. A place held by a skill
    install did not put there, with another digest, refuses the whole install."""
    path = folder.path
    state = read_state(path) if os.path.isdir(path) else {}
    steps: list[Step] = []
    problems: list[Problem] = []
    for skill in chosen:
        check_name(skill.name, path)
        dest = os.path.join(path, skill.name)
        ours = skill.name in state
        action: Action = "installed"
        if os.path.lexists(dest):
            same = installed_digest(dest, project) == skill.digest
            if same:
                action = "unchanged" if ours else "present"
            elif ours:
                action = "updated"
            else:
                problems.append(Problem("error", "not-ours", f"{dest} {_what_is(dest)} "
                                        "skillpack did not install there; it is left as it "
                                        "is", dest))
                continue
        steps.append(Step(path, skill.name, skill.digest, action, skill.source))
    if problems:
        one = len(problems) == 1
        raise SkillpackError(problems[0].message if one else
                             f"{len(problems)} places are held by what skillpack did not "
                             "install: " + "; ".join(p.file or "" for p in problems),
                             path=problems[0].file, problems=problems,
                             hint=f"remove {'it (or move it)' if one else 'them (or move them)'}"
                                  " first, or install into another folder with --into")
    if lock is not None:
        names = {s.name for s in chosen}
        for name, digest in sorted(state.items()):
            if name in lock.skills or name in names:
                continue
            dest = os.path.join(path, name)
            if not os.path.lexists(dest):
                steps.append(Step(path, name, digest, "forgotten", reason="no longer there: "
                                  "only its record is removed"))
            elif installed_digest(dest, project) != digest:
                steps.append(Step(path, name, digest, "kept", reason="changed since it was "
                                  "installed: not removed; remove it by hand"))
            else:
                steps.append(Step(path, name, digest, "pruned"))
    return _Plan(state, tuple(steps))


def _what_is(path: str) -> str:
    """What is at `path`, in the way of a skill (not install's): a skill of other content,
    a folder, a file, a link or a special file."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return "is something"
    if stat.S_ISLNK(mode):
        return "is a symbolic link"
    if stat.S_ISDIR(mode):
        return ("holds a skill, of other content, that" if os.path.lexists(
            os.path.join(path, "SKILL.md")) else "is a folder without SKILL.md that")
    return "is a file that" if stat.S_ISREG(mode) else "is a special file that"


def _carry_out(folder: str, plan: _Plan, chosen: list[_Skill], done: list[Step],
               alone: bool, progress: Callable[[Step], None] | None) -> None:
    """Write the plan of one folder, its lock held (`alone`: by this process, surely): each
    skill staged beside its place, then recorded in the state file and renamed into place;
    each pruned skill removed, then forgotten; each step appended to `done` once carried
    out, and given to `progress`. From the state file's write to the step appended to
    `done`, Ctrl-C and SIGTERM wait (`held_signals`): a step is done and reported, or not
    done. The state file is rewritten only when it changes."""
    by_name = {s.name: s for s in chosen}
    state = dict(plan.state)
    if plan.writes:  # the folder exists (`_make_folders`)
        clean_stale(folder, alone=alone)
    for step in plan.steps:
        temp = None
        if step.action in ("installed", "updated"):
            prepared = by_name[step.name].prepared
            walked = {w.path: w.disk_path for w in prepared.fileset.files}
            temp = stage_skill(folder, step.name, prepared.fileset.root,
                               [(r, walked[r.path]) for r in prepared.manifest.files])
        finished = False
        try:
            with held_signals():
                _commit(folder, step, state, temp)
                done.append(step)
                finished = True
        finally:
            if temp is not None and os.path.lexists(temp):
                remove_tree(temp)
            if finished and progress is not None:
                progress(step)


def _commit(folder: str, step: Step, state: dict[str, str], temp: str | None) -> None:
    """Carry out `step` in `folder` (`temp`: its skill staged), `state` kept as the state
    file records it: a skill recorded, then renamed into place (the record put back when
    that fails); a pruned skill removed, then its record; a forgotten one, its record."""
    if temp is not None:
        before = state.get(step.name)
        state[step.name] = step.digest
        write_state(folder, state)
        try:
            swap_in(folder, step.name, temp)
        except BaseException:
            if before is None:
                state.pop(step.name)
            else:
                state[step.name] = before
            write_state(folder, state)
            raise
    elif step.action == "unchanged" and state.get(step.name) != step.digest:
        state[step.name] = step.digest
        write_state(folder, state)
    elif step.action in ("pruned", "forgotten"):
        if step.action == "pruned":
            remove_skill(folder, step.name)
        state.pop(step.name)
        write_state(folder, state)


#: `install` as the package exports it (``skillpack.install`` is this stage's package).
install_skills = install
