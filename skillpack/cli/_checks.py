"""What `check` and `lint` share: run one per-skill check over every skill found under each
PATH, and report what failed as a whole (a PATH that cannot be searched, or holds no skill)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from skillpack.build.check import CheckResult
from skillpack.build.discover import find_skills, first_seen
from skillpack.cli._common import echo_json, echo_text, fail
from skillpack.cli._json_errors import item_failure, no_skill_error
from skillpack.errors import SkillpackError

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


def run_over(paths: Iterable[str], check: Callable[[Path], CheckResult],
             as_json: bool) -> Checked:
    """`check` on every skill found under each PATH. A PATH that cannot be searched ends the
    command (exit 1), or with `as_json` becomes a failed item of the list."""
    checked = Checked()
    seen: set[str] = set()  # a skill under two PATHs is checked, and reported, once
    for path in paths:
        try:
            folders = find_skills(Path(path))
            checked.results.extend(check(folder) for folder in first_seen(folders, seen))
        except SkillpackError as err:
            if not as_json:
                fail(str(err))
            checked.broken.append(item_failure(path, err) | {"valid": False})
            continue
        if not folders:
            checked.empty.append(path)
    return checked
