"""How both sides read an `allowed-tools` entry: the runtime's policy matches calls against
it, the build side lists the programs it lets run, from the same `Rule`.

An entry is a tool name, optionally followed by a command spec in parentheses:

* ``Read``: the tool named ``Read``, whatever its arguments;
* ``Bash(git:*)``: ``Bash`` when its argv starts with the words before ``:*`` (``git``),
  word by word; ``Bash(git status:*)`` needs ``git status``; a last word ``*`` means the
  same (``Bash(git *)`` is ``Bash(git:*)``);
* ``Bash(git status)``: ``Bash`` when its argv is exactly those words;
* ``Bash(*)``, ``Bash()`` and ``Bash(:*)``: ``Bash``, whatever its command.

Blanks around the tool name and inside the parentheses do not count: ``Bash (curl:*)`` and
``Bash<TAB>(wget:*)`` are ``Bash(curl:*)`` and ``Bash(wget:*)``, as the runtime has always
matched them. Any other ``*`` is a word compared as it is.

Standard library only, nothing imported: the runtime's policy imports it when first asked.
"""

from __future__ import annotations

from skillpack._record import Record

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Rule", "parse_entry"]


class Rule(Record):
    """One `allowed-tools` entry: the tool it names and, for an entry like ``Bash(git:*)``,
    the command words it permits (``words`` None: any command), as a prefix or exactly."""

    tool: str
    words: tuple[str, ...] | None = None
    prefix: bool = False

    def matches(self, tool: str, command: Sequence[str] | None) -> bool:
        if tool != self.tool:
            return False
        if self.words is None:
            return True
        if command is None:
            return False
        if self.prefix:
            return tuple(command[: len(self.words)]) == self.words
        return tuple(command) == self.words


def parse_entry(entry: str) -> Rule | None:
    """The rule an `allowed-tools` entry states (None for an empty entry)."""
    text = entry.strip()
    if not text:
        return None
    open_at = text.find("(")
    if open_at < 0 or not text.endswith(")"):
        return Rule(text)
    tool = text[:open_at].strip()
    spec = text[open_at + 1 : -1].strip()
    prefix = False
    if spec.endswith(":*"):
        spec, prefix = spec[:-2], True
    words = spec.split()
    if words and words[-1] == "*" and not prefix:
        words, prefix = words[:-1], True
    if not words and (prefix or spec in ("", "*")):
        return Rule(tool)
    return Rule(tool, tuple(words), prefix)
