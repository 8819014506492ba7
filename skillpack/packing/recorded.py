"""What a lock records of a skill beyond its digest, files and programs, derived from the
skill's content: one definition for `skillpack lock` (`skillpack.approve.lock.LockEntry`)
and for `verify --lock` (`skillpack.packing.verify.SkillReport.recorded`), which compares a
lock's entry with it field by field.

``archives`` are the ``sha256:<hex>`` of the `.skill` archives the skill may have been
locked from, the first the one `lock` records for this very input (the file's own for an
archive of ours, the one ``skillpack pack`` writes for a folder or a skill of a bundle), the
next the other layout's (the root layout with its manifest, which the runtime loads), made
only when the lock names none of the earlier ones (`archive_candidates`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from skillpack.skillmd.mentions import mentioned_programs
from skillpack.skillmd.skill import Skill

__all__ = ["Recorded", "archive_candidates", "recorded_fields"]


@dataclass(frozen=True, slots=True)
class Recorded:
    """A lock entry's fields beyond digest, files and programs, as `lock` writes them:
    ``tools`` each ``(id, argv words)`` sorted by id, ``allowed_tools`` None when the skill
    declares none, ``mentions`` each ``{"program", "line", "kind", "script"}`` in SKILL.md
    order, ``archives`` as the module text says (empty: not computed)."""

    description: str
    tools: tuple[tuple[str, tuple[str, ...]], ...]
    allowed_tools: tuple[str, ...] | None
    mentions: tuple[dict[str, Any], ...]
    archives: tuple[str, ...] = ()


def recorded_fields(skill: Skill, archives: Iterable[str] = ()) -> Recorded:
    """What a lock records of `skill` (its parsed SKILL.md) beyond its files."""
    mentions = tuple({"program": m.program, "line": m.line, "kind": m.kind,
                      "script": m.script}
                     for m in mentioned_programs(skill.body, skill.body_line))
    return Recorded(skill.description,
                    tuple(sorted(((t.id, t.words) for t in skill.tools), key=lambda t: t[0])),
                    skill.allowed_tools, mentions, tuple(archives))


def archive_candidates(wanted: str | None,
                       makers: Iterable[Callable[[], str]]) -> tuple[str, ...]:
    """The SHA-256s `makers` make, in order, stopping at the first that is `wanted` (the
    lock's ``archive``; None: the lock records none, and none is made)."""
    if wanted is None:
        return ()
    found: list[str] = []
    for make in makers:
        found.append(make())
        if found[-1] == wanted:
            break
    return tuple(found)
