"""`allowed-tools` as a policy: which tools the skills active in a turn let a model call.

A skill's ``allowed-tools`` (a space-separated string or a YAML list, read by
:func:`skillpack.skillmd.skill.parse_skill` into ``Skill.allowed_tools``) lists entries, each
read by :func:`skillpack.formats.allowed_tools.parse_entry` (the build side lists the
programs they let run from the same reading):

* ``Read``: the tool named ``Read``, whatever its arguments;
* ``Bash(git:*)``: the tool ``Bash`` when its command's argv starts with the words before
  ``:*`` (``git``), compared word by word: ``["git"]`` and ``["git", "status"]`` match,
  ``["gitk"]`` and ``["/usr/bin/git"]`` do not; ``Bash(git status:*)`` needs ``git status``.
  A last word ``*`` means the same: ``Bash(git *)`` is ``Bash(git:*)``;
* ``Bash(git status)``: ``Bash`` when its argv is exactly ``["git", "status"]``;
* ``Bash(*)``, ``Bash()`` and ``Bash(:*)``: ``Bash``, whatever its command.

Any other ``*`` is compared as it is, so it matches less, never more. Tool names are compared
exactly (case matters). The rules of a turn (the names of its active skills): the permitted
set is the union of every active skill's entries, plus the framework's own ``load_skill`` and
``read_skill_resource``; a skill that declares no ``allowed-tools`` (or an empty one) imposes
no restriction and does not widen one; with no restricting skill active, everything is
permitted.

This is a guard-rail for an honest model, not a security boundary: it says what the skills'
authors meant a turn to use, and a caller enforces it at its tool boundary.

Standard library only, and imported by :class:`skillpack.runtime.Bundle` when first asked.
"""

from __future__ import annotations

from skillpack.errors import ArgumentError
from skillpack.formats.allowed_tools import Rule, parse_entry

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["FRAMEWORK_TOOLS", "Policy", "Rule", "parse_entry"]

#: The tools the framework serves skills with: always permitted.
FRAMEWORK_TOOLS = frozenset({"load_skill", "read_skill_resource"})


def skill_rules(allowed_tools: Iterable[str] | None) -> tuple[Rule, ...] | None:
    """A skill's rules, or None when it imposes no restriction (no or empty allowed-tools)."""
    if allowed_tools is None:
        return None
    rules = tuple(rule for rule in map(parse_entry, allowed_tools) if rule is not None)
    return rules or None


class Policy:
    """What the skills active in a turn permit (see the module's rules)."""

    __slots__ = ("rules",)

    def __init__(self, declared: Iterable[tuple[Rule, ...] | None]) -> None:
        restricting = [rules for rules in declared if rules is not None]
        #: Every active skill's rules together, or None when no active skill restricts.
        self.rules: tuple[Rule, ...] | None = (
            tuple(rule for rules in restricting for rule in rules) if restricting else None)

    def tools(self) -> frozenset[str] | None:
        """The names of the tools permitted (some perhaps only with certain commands), or
        None when every tool is."""
        if self.rules is None:
            return None
        return FRAMEWORK_TOOLS | {rule.tool for rule in self.rules}

    def permits(self, tool: object, command: object = None) -> bool:
        """Whether `tool` may be called (with the argv `command`, for a shell-like tool)."""
        if not isinstance(tool, str):
            raise ArgumentError(f"a tool is named by a string, not {type(tool).__name__}",
                                hint="pass the tool's name, like 'Read' or 'Bash'")
        argv = _argv(command)
        if tool in FRAMEWORK_TOOLS or self.rules is None:
            return True
        return any(rule.matches(tool, argv) for rule in self.rules)


def _argv(command: object) -> tuple[str, ...] | None:
    if command is None:
        return None
    if isinstance(command, str) or not isinstance(command, list | tuple):
        raise ArgumentError(
            f"a command is given as an argv list of strings, not {type(command).__name__}",
            hint="split a command line first, e.g. shlex.split('git status') gives "
                 "['git', 'status']")
    for word in command:
        if not isinstance(word, str):
            raise ArgumentError(f"every word of a command is a string; {word!r} is a "
                                f"{type(word).__name__}", hint="pass str(word)")
    return tuple(command)
