"""The model-facing layer: tell a model how to call a skill's tools, and read its calls back.

* `compile(skill)`: the text a model is given, the skill's rendered prose, then (when it has
  tools) the call protocol and the tool catalog as JSON Schema.
* `resolve(tools, answer)`: find the one tool call in a model's answer (raw text, or an
  Anthropic / OpenAI / MCP structured call), validate it with `Tool.validate` and render its
  argv. Nothing is ever executed here.
* `tool_definitions(skill, style)`: the tools for a provider's native tool use.

Both a parsed `skillpack.skill.Skill` and the runtime's skill handle fit `SkillLike`; the
catalog `compile` prints and the tools `resolve` checks come from the same `Tool` objects, so
the two cannot drift. Errors are `SkillError`s worded to be fed back to the model as they are.

Standard library only: the serverless runtime imports this module.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias

from skillpack.errors import Problem, SkillError
from skillpack.tools import Tool, Value

__all__ = ["STYLES", "Call", "HasTools", "SkillLike", "compile", "resolve", "tool_definitions"]

Style = Literal["anthropic", "openai", "mcp"]
STYLES: tuple[Style, ...] = ("anthropic", "openai", "mcp")

_MAX_DEPTH = 12  # how deep resolve looks into nested answer structures
_ARG_KEYS = ("args", "input", "arguments", "parameters")
_TOOL_KEYS = frozenset({"tool", *_ARG_KEYS, "id", "type", "argv"})
_JSON_LABELS = frozenset({"json", "jsonc", "json5"})
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_WINDOW = 1024
_OBJECT = re.compile(r"""\{\s*(?:["']|(?:tool|name|function)\s*:)""")  # where a call may start
_CALL_START = re.compile(r"""\{\s*["']?(tool|name|function)["']?\s*:""")
_ARGS_KEY = re.compile(r"""["']?\b(?:args|arguments|input|parameters)\b["']?\s*:""")
_SHAPE = '{"tool": "<tool id>", "args": {...}}'


class HasTools(Protocol):
    """Anything carrying tools: a `Skill`, a runtime skill handle."""

    @property
    def tools(self) -> Sequence[Tool]: ...


class SkillLike(Protocol):
    """What the model-facing layer reads of a skill (a `Skill` or a runtime skill handle)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def rendered(self) -> str: ...

    @property
    def tools(self) -> Sequence[Tool]: ...


Tools: TypeAlias = "Sequence[Tool] | HasTools | Tool"


@dataclass(frozen=True)
class Call:
    """A validated tool call: the `Tool`, its arguments (coerced, defaults filled) and argv.

    ``argv`` is a list so that it compares equal to a list and goes to ``subprocess.run``
    as it is; it is derived from ``args`` by the tool's template, never taken from the answer.
    """

    tool: Tool
    args: dict[str, Value]
    argv: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool.id, "args": dict(self.args), "argv": list(self.argv)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], tools: Tools) -> Call:
        """Rebuild a call from `to_dict` output, validating it again against ``tools``."""
        call = resolve(tools, data)
        if call is None:
            raise _error("malformed-call", f"this is not a tool call; write {_SHAPE}")
        return call


def compile(skill: SkillLike) -> str:
    """The system text for ``skill``: its rendered prose, then the call protocol and catalog.

    A skill without tools gives its prose alone. The text ends with one newline.
    """
    prose = skill.rendered.strip("\n")
    tools = tuple(skill.tools)
    parts = [prose] if prose else []
    if tools:
        parts.append(_protocol(tools))
    return "\n\n".join(parts) + "\n" if parts else ""


def resolve(tools: Tools, answer: Any) -> Call | None:
    """Read the one tool call in a model's ``answer``; None when it holds no call.

    ``tools`` is a sequence of `Tool`, one `Tool`, or anything with ``.tools``. ``answer``
    is model text (a JSON object, bare or in a fenced block, prose around it allowed) or data:
    a call dict (``{"tool", "args"}``, Anthropic ``{"name", "input"}``, OpenAI ``{"name",
    "arguments"}`` or ``{"function": {...}}``), a message or content-block dict, a list of
    those, or an SDK object with ``model_dump()``. Raises `SkillError`, worded for the model,
    for an unknown tool, invalid arguments, malformed call JSON, or more than one call.
    """
    catalog = _tools_of(tools)
    reader = _Reader()
    reader.value(answer, 0)
    attempts = reader.attempts
    if not attempts:
        return None
    if len(attempts) > 1:
        shown = [_shown(a.name) if isinstance(a.name, str) else "an unreadable call"
                 for a in attempts[:_CALLS_SHOWN]]
        if len(attempts) > _CALLS_SHOWN:
            shown.append(f"and {len(attempts) - _CALLS_SHOWN:,} more")
        names = ", ".join(shown)
        raise _error("several-calls", f"the answer holds {len(attempts)} tool calls ({names}); "
                     "make one call per answer and wait for its result before the next")
    return _call(catalog, attempts[0])


_CALLS_SHOWN = 10  # a "several calls" error names this many, so it stays short


def tool_definitions(skill: Tools, style: str) -> list[dict[str, Any]]:
    """The tools as native tool definitions for ``style``: anthropic, openai or mcp."""
    tools = _tools_of(skill)
    if style == "anthropic":
        return [{"name": t.id, "description": t.description, "input_schema": t.schema}
                for t in tools]
    if style == "openai":
        return [{"type": "function", "function": {
            "name": t.id, "description": t.description, "parameters": t.schema}}
            for t in tools]
    if style == "mcp":
        return [{"name": t.id, "description": t.description, "inputSchema": t.schema}
                for t in tools]
    raise SkillError(f"unknown tool definitions style {style!r}; use one of "
                     f"{', '.join(STYLES)}")


def _tools_of(tools: Tools) -> tuple[Tool, ...]:
    if isinstance(tools, Tool):
        return (tools,)
    found: Sequence[Tool] = tools.tools if not isinstance(tools, Sequence) else tools
    return tuple(found)


# -- compile ---------------------------------------------------------------------------------

def _protocol(tools: tuple[Tool, ...]) -> str:
    entries = [json.dumps({"id": t.id, "description": t.description, "schema": t.schema},
                          ensure_ascii=False) for t in tools]
    catalog = "[\n" + ",\n".join(f"  {entry}" for entry in entries) + "\n]"
    ids = ", ".join(t.id for t in tools)
    return "\n".join([
        "## Calling tools",
        "",
        "This skill's tools each run one fixed command; you choose the arguments. Where the "
        "text above names a tool by its id, that is where it is meant to be used.",
        "",
        "To call a tool, answer with one JSON object, bare or in a ```json block:",
        "",
        "```json",
        '{"tool": "<tool id>", "args": {"<argument>": <value>}}',
        "```",
        "",
        f"- `tool` is one of: {ids}.",
        "- `args` holds the arguments the tool's schema lists, each of its declared type. "
        "Leave out an argument that has a default to use the default; an argument with an "
        "`enum` takes one of the listed values.",
        "- Make one call per answer, then wait for its result before the next.",
        "- A call that does not fit its tool is refused with a message saying why; correct "
        "it and call again. Nothing runs until a call is accepted.",
        "",
        "### Tools",
        "",
        _fenced(catalog, "json"),
    ])


def _fenced(text: str, info: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


# -- resolve ---------------------------------------------------------------------------------

@dataclass
class _Attempt:
    """One call found in an answer, not yet checked against the tools."""

    name: Any = None
    args: Any = None
    extra: tuple[str, ...] = ()
    error: SkillError | None = None


class _Reader:
    """Collects every call attempt of an answer, whatever its shape."""

    def __init__(self) -> None:
        self.attempts: list[_Attempt] = []

    def value(self, value: Any, depth: int) -> None:
        if depth > _MAX_DEPTH or value is None or isinstance(value, (bool, int, float)):
            return
        if isinstance(value, str):
            self.text(value, depth + 1)
        elif isinstance(value, Mapping):
            attempt = _mapping_call(value)
            if attempt is not None:
                self.attempts.append(attempt)
                return
            for key in ("content", "text", "tool_calls"):  # message and content-block dicts
                if key in value:
                    self.value(value[key], depth + 1)
        elif isinstance(value, (list, tuple)):
            for item in value:
                self.value(item, depth + 1)
        elif callable(getattr(value, "model_dump", None)):  # Anthropic / OpenAI SDK objects
            self.value(value.model_dump(), depth + 1)
        else:
            raise TypeError(f"cannot read a tool call from a {type(value).__name__}; pass "
                            "the model's text or its JSON-like tool call")

    def text(self, text: str, depth: int) -> None:
        outside: list[str] = []
        lines = text.split("\n")
        i = 0
        while i < len(lines):
            match = _FENCE.match(lines[i])
            if match is None or (match.group(1)[0] == "`" and "`" in match.group(2)):
                outside.append(lines[i])
                i += 1
                continue
            marker, info = match.group(1), match.group(2).strip()
            end = i + 1
            while end < len(lines) and not _closes(lines[end], marker):
                end += 1
            self.bare("\n".join(outside), depth)  # in order, so calls are listed as written
            outside = []
            self.block(info.split()[0].lower() if info else "", "\n".join(lines[i + 1:end]),
                       depth)
            i = end + 1
        self.bare("\n".join(outside), depth)

    def block(self, label: str, content: str, depth: int) -> None:
        """A fenced block: JSON (labelled json, or unlabelled) is read; other code is not."""
        if label and label not in _JSON_LABELS:
            return
        values, failure = _json_values(content)
        if failure is None:
            for value in values:
                self.value(value, depth + 1)
        elif label:
            self.attempts.append(_Attempt(error=_error(
                "malformed-call", f"the ```{label} block is not valid JSON ({failure}); write "
                f"the call as one JSON object: {_SHAPE}")))
        else:
            self.bare(content, depth)

    def bare(self, text: str, depth: int) -> None:
        """JSON objects written in prose; a broken one that starts like a call is an error."""
        match = _OBJECT.search(text)
        while match is not None:
            pos = resume = match.start()
            try:
                value, resume = _decode_at(text, pos)
            except (ValueError, RecursionError) as exc:
                if _looks_like_call(text, pos):
                    self.attempts.append(_Attempt(error=_error(
                        "malformed-call", f"the tool call is not valid JSON ({_why(exc)}); "
                        f"write it as one JSON object: {_SHAPE}")))
                    if isinstance(exc, json.JSONDecodeError):
                        resume = pos + exc.pos
                if isinstance(exc, RecursionError):
                    return  # nested past what JSON is read to: read no further
            else:
                self.value(value, depth + 1)
            match = _OBJECT.search(text, max(resume, pos + 1))


def _closes(line: str, marker: str) -> bool:
    match = _FENCE.match(line)
    return (match is not None and match.group(1)[0] == marker[0]
            and len(match.group(1)) >= len(marker) and not match.group(2).strip())


def _looks_like_call(text: str, pos: int) -> bool:
    match = _CALL_START.match(text, pos)
    if match is None:
        return False
    if match.group(1) != "name":
        return True
    return _ARGS_KEY.search(text, match.end(), match.end() + 500) is not None


def _mapping_call(data: Mapping[Any, Any]) -> _Attempt | None:
    """The call a dict holds, None when it is not shaped as a call."""
    function = data.get("function")
    if isinstance(function, Mapping):  # OpenAI chat tool call
        return _named(function.get("name"), function)
    if "tool" in data:  # this skillpack's protocol
        attempt = _named(data["tool"], data)
        extra = tuple(sorted(str(k) for k in data if k not in _TOOL_KEYS))
        return _Attempt(attempt.name, attempt.args, extra, attempt.error)
    kind = data.get("type")
    if kind in ("tool_use", "function_call") or (
        "name" in data and any(key in data for key in _ARG_KEYS)
    ):  # Anthropic tool_use, OpenAI Responses function_call, MCP tools/call, Llama
        return _named(data.get("name"), data)
    if kind == "function":
        return _Attempt(error=_error(
            "malformed-call", 'a "function" tool call must hold {"name": ..., "arguments": ...}'))
    return None


def _named(name: Any, data: Mapping[Any, Any]) -> _Attempt:
    given = [key for key in _ARG_KEYS if key in data]
    if len(given) > 1:
        keys = " and ".join(f'"{key}"' for key in given)
        return _Attempt(name, error=_error(
            "malformed-call", f"the call gives its arguments twice ({keys}); give them once, "
            f'under "args"'))
    raw = data[given[0]] if given else None
    if isinstance(raw, str):  # OpenAI sends the arguments as a JSON string
        if not raw.strip():
            raw = None
        else:
            values, failure = _json_values(raw)
            if failure is not None or len(values) != 1:
                why = failure or "more than one JSON value"
                tool = f"tool '{name}': " if isinstance(name, str) else ""
                return _Attempt(name, error=_error(
                    "malformed-call", f"{tool}the arguments are not valid JSON ({why}); give "
                    "them as one JSON object of named values"))
            raw = values[0]
    return _Attempt(name, raw)


def _call(catalog: tuple[Tool, ...], attempt: _Attempt) -> Call:
    ids = ", ".join(t.id for t in catalog) if catalog else "none: this skill has no tools"
    name = attempt.name
    if attempt.error is not None and not isinstance(name, str):
        raise attempt.error
    if not isinstance(name, str) or not name:
        raise _error("malformed-call", f"the call does not name its tool: write {_SHAPE}; "
                     f"the tools are {ids}")
    tool = next((t for t in catalog if t.id == name), None)
    if tool is None:
        raise _error("unknown-tool", f"unknown tool {_shown(name)!r}; the tools are {ids}")
    if attempt.error is not None:
        raise attempt.error
    if attempt.extra:
        keys = ", ".join(repr(k) for k in attempt.extra)
        raise _error("malformed-call", f"tool '{name}': put the arguments under \"args\": "
                     f'{{"tool": "{name}", "args": {{...}}}}; unexpected '
                     f"key{'s' * (len(attempt.extra) > 1)} {keys}")
    values = tool.validate(attempt.args)
    return Call(tool, values, tool.argv(values))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the key {key!r} appears twice")
        result[key] = value
    return result


_DECODER = json.JSONDecoder(parse_constant=_no_constant, object_pairs_hook=_no_duplicates)


def _decode_at(text: str, pos: int) -> tuple[Any, int]:
    """The JSON value at ``pos`` and where it ends. Decoded from slices that grow only while
    the value runs past them, so that a failure costs what was read, not ``pos`` (a
    JSONDecodeError counts the lines before its position); its ``pos`` is relative."""
    size = _WINDOW
    while True:
        chunk = text[pos:pos + size]
        try:
            value, used = _DECODER.raw_decode(chunk)
        except json.JSONDecodeError as exc:
            cut = pos + size < len(text)
            if cut and (exc.pos >= len(chunk) - 8 or exc.msg.startswith("Unterminated")):
                size *= 4
                continue
            raise
        return value, pos + used


def _json_values(text: str) -> tuple[list[Any], str | None]:
    """The JSON values ``text`` holds one after the other, or why it is not such JSON."""
    values: list[Any] = []
    pos, length = 0, len(text)
    while True:
        while pos < length and text[pos] in " \t\r\n":
            pos += 1
        if pos >= length:
            return values, None if values else "it is empty"
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError) as exc:
            return values, _why(exc)
        values.append(value)


def _why(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        at = " " if exc.msg.endswith(" at") else " at "  # "Unterminated string starting at"
        return f"{exc.msg}{at}line {exc.lineno}, column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "it is nested too deeply"
    if "integer string conversion" in str(exc):
        return "a number has too many digits"
    return str(exc)


def _shown(name: str) -> str:
    return name if len(name) <= 80 else name[:77] + "..."


def _error(code: str, message: str) -> SkillError:
    return SkillError(message, problems=[Problem("error", code, message)])
