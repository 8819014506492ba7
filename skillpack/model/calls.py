"""The model-facing layer: tell a model how to call a skill's tools, and read its calls back.

* `compile(skill)`: the text a model is given, the skill's rendered prose, then (when it has
  tools) the call protocol and the tool catalog as JSON Schema.
* `resolve(tools, answer)`: find the one tool call in a model's answer (raw text, or an
  Anthropic / OpenAI / MCP structured call), validate it with `Tool.validate` and render its
  argv. Nothing is ever executed here. Finding the calls an answer holds, whatever its
  shape, is :mod:`skillpack.model.answer`'s job; this module picks the one call and checks it.
* `tool_definitions(skill, style)`: the tools for a provider's native tool use.

Both a parsed `skillpack.skillmd.skill.Skill` and the runtime's skill handle fit `SkillLike`; the
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

from skillpack.errors import SkillError
from skillpack.model.answer import SHAPE, Attempt, call_error, find_attempts, shown
from skillpack.skillmd.tools import Tool, Value

__all__ = ["STYLES", "Call", "HasTools", "SkillLike", "compile", "resolve", "tool_definitions"]

Style = Literal["anthropic", "openai", "mcp"]
STYLES: tuple[Style, ...] = ("anthropic", "openai", "mcp")
_CALLS_SHOWN = 10  # a "several calls" error names this many, so it stays short


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
            raise call_error("malformed-call", f"this is not a tool call; write {SHAPE}")
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
    attempts = find_attempts(answer)
    if not attempts:
        return None
    if len(attempts) > 1:
        listed = [shown(a.name) if isinstance(a.name, str) else "an unreadable call"
                  for a in attempts[:_CALLS_SHOWN]]
        if len(attempts) > _CALLS_SHOWN:
            listed.append(f"and {len(attempts) - _CALLS_SHOWN:,} more")
        names = ", ".join(listed)
        raise call_error("several-calls", f"the answer holds {len(attempts)} tool calls "
                         f"({names}); make one call per answer and wait for its result before "
                         "the next")
    return _call(catalog, attempts[0])


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

def _call(catalog: tuple[Tool, ...], attempt: Attempt) -> Call:
    ids = ", ".join(t.id for t in catalog) if catalog else "none: this skill has no tools"
    name = attempt.name
    if attempt.error is not None and not isinstance(name, str):
        raise attempt.error
    if not isinstance(name, str) or not name:
        raise call_error("malformed-call", f"the call does not name its tool: write {SHAPE}; "
                         f"the tools are {ids}")
    tool = next((t for t in catalog if t.id == name), None)
    if tool is None:
        raise call_error("unknown-tool", f"unknown tool {shown(name)!r}; the tools are {ids}")
    if attempt.error is not None:
        raise attempt.error
    if attempt.extra:
        keys = ", ".join(repr(k) for k in attempt.extra)
        raise call_error("malformed-call", f"tool '{name}': put the arguments under \"args\": "
                         f'{{"tool": "{name}", "args": {{...}}}}; unexpected '
                         f"key{'s' * (len(attempt.extra) > 1)} {keys}")
    values = tool.validate(attempt.args)
    return Call(tool, values, tool.render(values))


