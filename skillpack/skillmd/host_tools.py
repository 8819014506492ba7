"""The tool names a host knows, for `allowed-tools` entries spelt in another case.

An `allowed-tools` entry is compared with a tool's name exactly (`skillpack.runtime.policy`,
and Claude Code's permission rules), so ``read`` or ``bash`` permits no tool at all: every
call of the skill is then refused, though nothing failed to parse. `case_twin` finds the
known name such an entry meant.

The names are Claude Code's built-in tools, as its tools reference lists them
(https://code.claude.com/docs/en/tools-reference, checked 2025-06), with the names older
releases used (``Task``, ``LS``, ``MultiEdit``, ``NotebookRead``...), which skills still list.
"""

from __future__ import annotations

__all__ = ["CLAUDE_CODE_TOOLS", "case_twin", "tool_of_entry"]

CLAUDE_CODE_TOOLS = frozenset({
    "Agent", "AskUserQuestion", "Bash", "BashOutput", "Edit", "ExitPlanMode", "Glob", "Grep",
    "KillShell", "LS", "MultiEdit", "NotebookEdit", "NotebookRead", "Read", "Skill",
    "SlashCommand", "Task", "TodoRead", "TodoWrite", "WebFetch", "WebSearch", "Write",
})
_BY_FOLDED = {name.casefold(): name for name in CLAUDE_CODE_TOOLS}


def tool_of_entry(entry: str) -> str:
    """The tool an `allowed-tools` entry names: ``Bash`` of ``Bash(git:*)``."""
    return entry.split("(", 1)[0].strip()


def case_twin(tool: str) -> str | None:
    """The known tool `tool` differs from only by case (``read`` -> ``Read``), or None (a
    known name as it is, or no known name at all)."""
    known = _BY_FOLDED.get(tool.casefold())
    return None if known is None or known == tool else known
