"""What `check` and `lint` share: run one per-skill check over every skill found under each
PATH, and report what failed as a whole (a PATH that cannot be searched, or holds no skill)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

from skillpack.cli._common import echo_json, echo_text, fail
from skillpack.cli._json_errors import item_failure, no_skill_error
from skillpack.cli._workers import in_workers
from skillpack.errors import Problem, SkillpackError
from skillpack.packing.check import CheckResult
from skillpack.source.discover import find_skill_folders, first_seen
from skillpack.source.notes import held, note

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Checked", "run_over"]


class Checked:
    """The results of one per-skill check over PATHs, and the PATHs that failed as a whole."""

    def __init__(self) -> None:
        self.results: list[CheckResult] = []
        self.empty: list[str] = []  # PATHs holding no SKILL.md
        self.broken: list[dict[str, Any]] = []  # with --json, each PATH that failed

    @property
    def failed(self) -> bool:
        return bool(self.empty or self.broken or any(not r.valid for r in self.results))

    def echo_json(self) -> None:
        """One JSON list: each skill's result, then each PATH that failed as a whole."""
        echo_json([r.to_dict() for r in self.results] + self.broken + [
            item_failure(path, no_skill_error(path)) | {"valid": False} for path in self.empty])

    def echo_empty(self) -> None:
        for path in self.empty:
            echo_text(f"skillpack: no SKILL.md found in {path}", err=True)


def run_over(paths: Iterable[str], check: Callable[[str], CheckResult],
             as_json: bool, *, workers: bool = False) -> Checked:
    """`check` on every skill found under each PATH. A PATH that cannot be searched ends the
    command (exit 1), or with `as_json` becomes a failed item of the list.

    With `workers` (`check` returns a plain `CheckResult`), the skills of all the PATHs are
    shared among worker processes (`skillpack.cli._workers`) once every PATH is searched;
    what each PATH's search and each check noted is held and said in its turn, so the
    output is the one of a single process, PATH after PATH."""
    found: list[tuple[str, list[str] | SkillpackError, list[str], list[str]]] = []
    seen: set[str] = set()  # a skill under two PATHs is checked, and reported, once
    for path in paths:
        with held() as notes:
            try:
                folders = find_skill_folders(path)
            except SkillpackError as err:
                found.append((path, err, [], notes))
                if not as_json:
                    break  # it ends the command: no PATH after it is searched
                continue
        found.append((path, folders, first_seen(folders, seen), notes))
    every = [folder for _, _, fresh, _ in found for folder in fresh]
    early = in_workers(functools.partial(_check_held, check), every) if workers else None
    done = dict(zip(map(id, every), early or (), strict=False))
    checked = Checked()
    for path, listed, fresh, notes in found:
        for text in notes:
            note(text)
        try:
            if isinstance(listed, SkillpackError):
                raise listed
            for folder in fresh:
                checked.results.append(_checked(done.get(id(folder)), check, folder))
        except SkillpackError as err:
            if not as_json:
                fail(str(err))
            checked.broken.append(item_failure(path, err) | {"valid": False})
            continue
        if not listed:
            checked.empty.append(path)
    return checked


#: A `CheckResult` as a worker sends it: skill, path, description, its problems (severity,
#: code, message, file, line each) and the notes said meanwhile.
_Sent = tuple[str, str, "str | None", "tuple[Any, ...]", tuple[str, ...]]


def _check_held(check: Callable[[str], CheckResult], folder: str) -> _Sent | None:
    """`check` of `folder` by a worker, as it sends it; None to have it done again in turn
    (it raised, or gave more than a plain `CheckResult` holds)."""
    with held() as notes:
        try:
            result = check(folder)
        except SkillpackError:
            return None
    if type(result) is not CheckResult:
        return None
    return (result.skill, result.path, result.description,
            tuple(p.as_tuple() for p in result.problems),
            tuple(notes))


def _checked(sent: _Sent | None, check: Callable[[str], CheckResult],
             folder: str) -> CheckResult:
    """The result a worker sent (its notes said now), or `check` of `folder` done here."""
    if sent is None:
        return check(folder)
    skill, path, description, problems, notes = sent
    for text in notes:
        note(text)
    return CheckResult(skill, path, tuple(Problem(*p) for p in problems), description)
