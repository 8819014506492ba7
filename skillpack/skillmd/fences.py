"""Find the ```tool fences of a SKILL.md body and parse their hard-skill line format.

Only top-level fences count: a fence whose info string is exactly ``tool``. A ```tool inside
another fence (say a 4-backtick example) is prose. The fence body is not YAML, because a run
template carries other languages whose quotes and colons must reach the process untouched:

    id: access
    description: Accept or reject a waitlist entry.
    params:
      operation:
        type: string
        enum: accept, reject
    run: python3 scripts/waitlist.py --$operation

``key: value`` lines split at the first ``: ``, values taken verbatim (trailing blanks aside);
the keys are id, description, params and run; param names sit at two spaces and their keys
(type, format, enum, description, default) at four; ``run:`` takes the template on its line or
``  - word`` items below it. Blank lines are ignored; any other line is an error naming it.

Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from skillpack._record import Record
from skillpack.errors import Problem
from skillpack.skillmd.fence_probe import may_open_a_tool_fence
from skillpack.skillmd.tools import (
    PARAM_NAME,
    PARAM_TYPES,
    TOOL_ID,
    Param,
    ParamType,
    Tool,
    Value,
    convert_text,
    render_value,
    template_params,
)

__all__ = ["ParsedBody", "parse_body"]

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_TOOL_KEYS = ("id", "description", "params", "run")
_PARAM_KEYS = ("type", "format", "enum", "description", "default")

_Report = Callable[[str, str, int], None]


class ParsedBody(Record):
    tools: tuple[Tool, ...]
    rendered: str
    problems: tuple[Problem, ...]


def parse_body(body: str, *, file: str | None = None, first_line: int = 1) -> ParsedBody:
    """Parse every top-level tool fence of ``body`` (which starts at file line ``first_line``).

    Returns the tools, the body with each tool fence replaced by its tool id, and every
    problem found (the caller raises them together).
    """
    if not may_open_a_tool_fence(body):  # all prose, given back whole
        return ParsedBody((), body, ())
    return _parse_lines(body, file, first_line)


def _parse_lines(body: str, file: str | None, first_line: int) -> ParsedBody:
    """`parse_body`, line by line."""
    lines = body.split("\n")
    out: list[str] = []
    tools: list[Tool] = []
    problems: list[Problem] = []
    seen_ids: dict[str, int] = {}
    i = 0
    while i < len(lines):
        match = _opening(lines[i])
        if match is None:
            out.append(lines[i])
            i += 1
            continue
        marker, info = match.group(2), match.group(3).strip()
        close = _find_close(lines, i + 1, marker)
        end = len(lines) if close is None else close + 1
        if info != "tool":
            out.extend(lines[i:end])
            i = end
            continue
        fence_line = first_line + i
        if close is None:
            problems.append(Problem(
                "error", "tool-unterminated",
                f"the tool fence opened here is never closed: add a {marker} line after it",
                file, fence_line))
            break
        tool, found = _parse_tool(lines[i + 1 : close], file, fence_line)
        problems.extend(found)
        if tool is not None:
            if tool.id in seen_ids:
                problems.append(Problem(
                    "error", "tool-duplicate-id",
                    f"tool id '{tool.id}' is declared twice (lines {seen_ids[tool.id]} and "
                    f"{fence_line}); give each tool its own id", file, fence_line))
            else:
                seen_ids[tool.id] = fence_line
                tools.append(tool)
            out.append(tool.id)
        i = end
    return ParsedBody(tuple(tools), "\n".join(out), tuple(problems))


def _opening(line: str) -> re.Match[str] | None:
    """The match of a line that opens a fenced block (a backtick fence's info string holds
    no backtick), or None."""
    match = _FENCE.match(line)
    if match is None or (match.group(2)[0] == "`" and "`" in match.group(3)):
        return None
    return match


def _find_close(lines: list[str], start: int, marker: str) -> int | None:
    for j in range(start, len(lines)):
        match = _FENCE.match(lines[j])
        if (
            match is not None
            and match.group(2)[0] == marker[0]
            and len(match.group(2)) >= len(marker)
            and not match.group(3).strip()
        ):
            return j
    return None


def _parse_tool(
    body: list[str], file: str | None, fence_line: int
) -> tuple[Tool | None, list[Problem]]:
    problems: list[Problem] = []

    def err(code: str, message: str, line: int) -> None:
        problems.append(Problem("error", code, message, file, line))

    fields: dict[str, tuple[str, int]] = {}
    params: dict[str, dict[str, tuple[str, int]]] = {}
    param_lines: dict[str, int] = {}
    run_items: list[str] | None = None
    section: str | None = None  # "params" or "run" while reading their indented lines
    current: str | None = None  # current param name
    for offset, raw in enumerate(body):
        line_no = fence_line + 1 + offset
        text = raw.rstrip(" \t")
        if not text.strip():
            continue
        if text.startswith("  - ") or text == "  -":
            if section != "run":
                err("tool-syntax", f"'{text.strip()}' is a run item outside 'run:'", line_no)
                continue
            assert run_items is not None
            run_items.append(text[4:])
            continue
        if section == "params" and text.startswith("    ") and not text.startswith("     "):
            if current is None:
                err("tool-syntax", f"'{text.strip()}' belongs to no param", line_no)
                continue
            key, value = _split(text[4:])
            if key in _PARAM_KEYS and value is None:
                err("tool-syntax", f"param '{current}': '{key}:' has no value; write "
                    f"'{key}: ...' or leave the line out", line_no)
            elif key not in _PARAM_KEYS or value is None:
                err("tool-syntax", f"param '{current}': '{text.strip()}' is not one of "
                    "'type: ...', 'format: ...', 'enum: ...', 'description: ...', "
                    "'default: ...'", line_no)
            elif key in params[current]:
                err("tool-syntax", f"param '{current}' sets '{key}' twice", line_no)
            else:
                params[current][key] = (value, line_no)
            continue
        if section == "params" and text.startswith("  ") and not text.startswith("   "):
            name = text[2:]
            if not name.endswith(":") or not PARAM_NAME.fullmatch(name[:-1]):
                err("tool-syntax", f"'{text.strip()}' is not a param name line: write the "
                    "name at two spaces, followed by ':' (letters, digits, _)", line_no)
                current = None
                continue
            current = name[:-1]
            if current in params:
                err("tool-syntax", f"param '{current}' is declared twice", line_no)
            params[current] = {}
            param_lines[current] = line_no
            continue
        key, value = _split(text)
        if key not in _TOOL_KEYS or (value is None and key not in ("params", "run")):
            err("tool-syntax", f"'{text.strip()}' is not a tool line: expected 'id: ...', "
                "'description: ...', 'params:' or 'run: ...'", line_no)
            section = None
            continue
        if key in fields:
            err("tool-syntax", f"'{key}' is set twice in this tool", line_no)
            continue
        fields[key] = (value or "", line_no)
        section, current = None, None
        if key == "params":
            if value:
                err("tool-syntax", "'params:' takes no value on its line; list the params "
                    "below it, each name at two spaces", line_no)
            section = "params"
        elif key == "run" and not value:
            section, run_items = "run", []
    return _build(fields, params, param_lines, run_items, fence_line, err), problems


def _split(text: str) -> tuple[str, str | None]:
    """``key: value`` split at the first ``: ``; ``key:`` alone gives value None."""
    if ": " in text:
        key, _, value = text.partition(": ")
        return key, value
    if text.endswith(":"):
        return text[:-1], None
    return text, None


def _build(
    fields: dict[str, tuple[str, int]],
    params: dict[str, dict[str, tuple[str, int]]],
    param_lines: dict[str, int],
    run_items: list[str] | None,
    fence_line: int,
    err: _Report,
) -> Tool | None:
    ok = True
    for key in ("id", "description", "run"):
        if key not in fields:
            err("tool-missing-field", f"the tool fence has no '{key}:' line", fence_line)
            ok = False
    tool_id, id_line = fields.get("id", ("", fence_line))
    if "id" in fields and not TOOL_ID.fullmatch(tool_id):
        err("tool-id", f"tool id '{tool_id}' must be 1-64 letters, digits, '_' or '-'", id_line)
        ok = False
    description = fields.get("description", ("", fence_line))[0]
    if "description" in fields and not description.strip():
        err("tool-missing-field", f"tool '{tool_id}' has an empty description",
            fields["description"][1])
        ok = False
    built: list[Param] = []
    for name, keys in params.items():
        param = _build_param(tool_id, name, keys, param_lines[name], err)
        if param is None:
            ok = False
        else:
            built.append(param)
    run: str | tuple[str, ...] = ""
    run_line = fields.get("run", ("", fence_line))[1]
    if "run" in fields:
        run = fields["run"][0] if run_items is None else tuple(run_items)
        words = run.split() if isinstance(run, str) else list(run)
        if not words or not words[0]:
            err("tool-run-empty", f"tool '{tool_id}': 'run' names no command", run_line)
            ok = False
        used: set[str] = set()
        for word in words:
            for ref in template_params(word):
                used.add(ref)
                if ref not in params:
                    err("tool-undeclared-param", f"tool '{tool_id}': run uses ${ref}, which is "
                        "not a declared param (write $$ for a literal $)", run_line)
                    ok = False
        for name in params:
            if name not in used:
                err("tool-unused-param",
                    f"tool '{tool_id}': param '{name}' is declared but never used in run",
                    param_lines[name])
                ok = False
    if not ok:
        return None
    return Tool(tool_id, description, tuple(built), run, line=fence_line)


def _build_param(
    tool_id: str, name: str, keys: dict[str, tuple[str, int]], line: int, err: _Report
) -> Param | None:
    where = f"tool '{tool_id}': param '{name}'"
    type_text, type_line = keys.get("type", ("string", line))
    if type_text not in PARAM_TYPES:
        err("tool-param-type", f"{where}: type '{type_text}' must be string, integer, number "
            "or boolean", type_line)
        return None
    kind: ParamType = type_text
    enum: tuple[Value, ...] | None = None
    if "enum" in keys:
        text, enum_line = keys["enum"]
        items = [item.strip() for item in text.split(",")]
        values: list[Value] = []
        for item in items:
            if not item:
                err("tool-param-enum", f"{where}: enum has an empty item; separate the items "
                    "with single commas", enum_line)
                return None
            value = convert_text(item, kind)
            if value is None:
                err("tool-param-enum", f"{where}: enum item '{item}' is not {_a(kind)}",
                    enum_line)
                return None
            values.append(value)
        enum = tuple(values)
    default: Value | None = None
    if "default" in keys:
        text, default_line = keys["default"]
        default = convert_text(text, kind)
        if default is None:
            err("tool-param-default", f"{where}: default '{text}' is not {_a(kind)}",
                default_line)
            return None
        if enum is not None and default not in enum:
            allowed = ", ".join(render_value(v) for v in enum)
            err("tool-param-default", f"{where}: default '{text}' must be one of {allowed}",
                default_line)
            return None
    return Param(
        name=name,
        type=kind,
        format=keys["format"][0] if "format" in keys else None,
        enum=enum,
        description=keys["description"][0] if "description" in keys else None,
        default=default,
        line=line,
    )


def _a(kind: str) -> str:
    """``integer`` as "an integer", ``string`` as "a string"."""
    return f"an {kind}" if kind == "integer" else f"a {kind}"
