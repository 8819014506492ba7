"""Whether a SKILL.md body holds a line opening a ```tool fence, without `re`.

The one test of a line that `skillpack.skillmd.fences` (before it parses a body line by line)
and the runtime (before `LoadedSkill.tools` imports the parser: `re` and the tool model, about
7 ms of a cold start) both run. Standard library builtins only.
"""

from __future__ import annotations

__all__ = ["may_open_a_tool_fence", "opens_a_tool_fence"]


def opens_a_tool_fence(line: str) -> bool:
    """Whether `line` (no newline in it) opens a fence whose info string is ``tool``, as
    `skillpack.skillmd.fences` reads a line: ``^( {0,3})(`{3,}|~{3,})(.*)$`` with the third
    group, stripped, equal to ``tool``."""
    text = line.lstrip(" ")
    if len(line) - len(text) > 3 or text[:1] not in ("`", "~"):
        return False
    info = text.lstrip(text[0])
    return len(text) - len(info) >= 3 and info.strip() == "tool"


def may_open_a_tool_fence(body: str) -> bool:
    """Whether a line of `body` opens a fence whose info string is ``tool``. Every such line
    ends in "tool" (blanks aside): found by ``str.find``, which skips ahead several bytes at a
    time, then each line found is read as the parser reads it (a handful a body). True for a
    ```tool line inside another fence too: the parser then says it is prose."""
    find = body.find
    at = find("tool")
    while at >= 0:
        end = at + 4
        eol = find("\n", end)
        if eol < 0:
            eol = len(body)
        if (end == eol or body[end:eol].isspace()) and opens_a_tool_fence(
                body[body.rfind("\n", 0, at) + 1 : eol]):  # str.isspace: \s, \n aside
            return True
        at = find("tool", end)
    return False
