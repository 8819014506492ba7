"""What `skillpack digest` does once its arguments are read: print ``<digest>  <name>`` for
each skill under each PATH (or the JSON list) and end with the exit code. Click-free: the
click command (`skillpack.cli.commands_walk.digest`) and the quick path for plain argument
lists (`skillpack.cli.quick_argv`) both end here, so they print the same bytes.

An archive or a bundle is verified member by member first (`skillpack.packing.verify`); that
module, and the archive readers it stands on (about 35 ms of imports), is imported only when
a PATH names an archive file or a folder of archives, never for a skill folder.

Many skill folders are digested by worker processes, each taking the next when done
(`skillpack.cli._workers`: on Linux, one process a core; ``SKILLPACK_JOBS=1`` for none), and
printed in order here: the same bytes as one process gives. A skill a worker could not
digest is digested again here, in its turn, where its error is reported.
"""

from __future__ import annotations

import importlib

from skillpack.cli._common import echo_json, echo_text, finish
from skillpack.cli._folders import report_failure, skill_folders
from skillpack.cli._workers import in_workers
from skillpack.errors import SkillpackError
from skillpack.source.notes import held, note
from skillpack.source.records import digest_skill

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from skillpack.packing.verify import VerifyReport

__all__ = ["digest_report"]

#: The verifier of archives and bundles, imported when the first archive is digested.
_VERIFY = "skillpack.packing.verify"


def digest_report(paths: tuple[str, ...], *, as_json: bool = False) -> NoReturn:
    """Digest the skills under `paths` and end the command: 0 when every one was digested
    (valid or not: `digest` does not validate), 1 when one could not be (its SKILL.md does
    not parse, its files are refused, an archive does not verify) or a PATH holds no
    SKILL.md."""
    results: list[dict[str, Any]] = []
    failures = results if as_json else None
    archives: set[str] = set()  # the targets that are archive files, not skill folders
    targets, failed = skill_folders(paths, archives=archives, failures=failures)
    folders = [t for t in targets if t not in archives]
    early = dict(zip(map(id, folders), in_workers(_digest_held, folders) or (), strict=False))
    for target in targets:
        try:
            if target in archives:
                found = _archive_digests(target)
            elif (done := early.get(id(target))) is not None:  # by a worker: its notes now
                for text in done[2]:
                    note(text)
                found = [done[:2]]
            else:
                skill, value = digest_skill(target)
                found = [(skill.name, value)]
        except SkillpackError as err:
            report_failure(target, err, failures)
            failed = True
            continue
        for name, value in found:
            results.append({"name": name, "path": target, "digest": value})
            if not as_json:
                echo_text(f"{value}  {name}")  # a name is the skill's text: escaped
    if as_json:
        echo_json(results)
    finish(bool(failed))


def _digest_held(folder: str) -> tuple[str, str, tuple[str, ...]] | None:
    """A skill folder's name and digest, and the notes said meanwhile (held, to be said in
    its turn), by a worker (`skillpack.cli._workers`); None when it cannot be digested (redone
    in turn, where its error is reported)."""
    with held() as notes:
        try:
            skill, value = digest_skill(folder)
        except SkillpackError:
            return None
    return skill.name, value, tuple(notes)


def _archive_digests(archive: str) -> list[tuple[str, str]]:
    """Each skill of an archive or bundle, verified: its name and digest."""
    # start-up: the verifier and the archive readers (about 35 ms) only once an archive is given
    report: VerifyReport = importlib.import_module(_VERIFY).verify_target(archive)
    return [(s.name, s.digest) for s in report.skills]
