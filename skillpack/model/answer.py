"""Read a model's answer: find every tool call it holds, whatever its shape.

The reading half of :func:`skillpack.model.calls.resolve`. An answer is model text (JSON objects,
bare or in fenced blocks, prose around them) or data (call dicts in this skillpack's,
Anthropic's, OpenAI's or MCP's shape, message and content-block dicts, lists of those, SDK
objects with ``model_dump()``). `find_attempts` lists each call found as an `Attempt`: the
tool name and raw arguments it gives, or the error, worded for the model, that makes it
unreadable. Nothing is checked against the skill's tools here and nothing is executed:
:mod:`skillpack.model.calls` picks the one call and validates it.

Standard library only: the serverless runtime imports this module (through skillpack.model.calls,
on first use).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skillpack.errors import Problem, SkillError

__all__ = ["SHAPE", "Attempt", "call_error", "find_attempts", "shown"]

_MAX_DEPTH = 12  # how deep resolve looks into nested answer structures
_ARG_KEYS = ("args", "input", "arguments", "parameters")
_TOOL_KEYS = frozenset({"tool", *_ARG_KEYS, "id", "type", "argv"})
_JSON_LABELS = frozenset({"json", "jsonc", "json5"})
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_WINDOW = 1024
_WORK = 8  # characters decoded per character of text, at most (see `_Reader.bare`)
_OBJECT = re.compile(r"""\{\s*(?:["']|(?:tool|name|function)\s*:)""")  # where a call may start
_CALL_START = re.compile(r"""\{\s*["']?(tool|name|function)["']?\s*:""")
_ARGS_KEY = re.compile(r"""["']?\b(?:args|arguments|input|parameters)\b["']?\s*:""")
SHAPE = '{"tool": "<tool id>", "args": {...}}'  # what a call looks like, for error messages


def find_attempts(answer: Any) -> list[Attempt]:
    """Every call attempt in ``answer``, in the order written (see `_Reader.value`)."""
    reader = _Reader()
    reader.value(answer, 0)
    return reader.attempts


@dataclass
class Attempt:
    """One call found in an answer, not yet checked against the tools."""

    name: Any = None
    args: Any = None
    extra: tuple[str, ...] = ()
    error: SkillError | None = None


class _Reader:
    """Collects every call attempt of an answer, whatever its shape."""

    def __init__(self) -> None:
        self.attempts: list[Attempt] = []

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
            self.attempts.append(Attempt(error=call_error(
                "malformed-call", f"the ```{label} block is not valid JSON ({failure}); write "
                f"the call as one JSON object: {SHAPE}")))
        else:
            self.bare(content, depth)

    def bare(self, text: str, depth: int) -> None:
        """JSON objects written in prose; a broken one that starts like a call is an error.

        A value that never closes is decoded to the end of the text from its start, and again
        from each object opened inside it: quadratic on objects nested in one another and
        left open. The characters decoded are bounded by `_WORK` times the text (a good
        answer decodes each character about once); past that the answer is refused."""
        budget = [_WORK * len(text) + _WORK * _WINDOW]
        match = _OBJECT.search(text)
        while match is not None:
            pos = resume = match.start()
            if budget[0] < 0:
                self.attempts.append(Attempt(error=call_error(
                    "malformed-call", "the answer holds JSON objects that never close, nested "
                    f"in one another; write the call as one JSON object: {SHAPE}")))
                return
            try:
                value, resume = _decode_at(text, pos, budget)
            except (ValueError, RecursionError) as exc:
                if _looks_like_call(text, pos):
                    self.attempts.append(Attempt(error=call_error(
                        "malformed-call", f"the tool call is not valid JSON ({_why(exc)}); "
                        f"write it as one JSON object: {SHAPE}")))
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


def _mapping_call(data: Mapping[Any, Any]) -> Attempt | None:
    """The call a dict holds, None when it is not shaped as a call."""
    function = data.get("function")
    if isinstance(function, Mapping):  # OpenAI chat tool call
        beside = [key for key in ("tool", "name", *_ARG_KEYS) if key in data]
        if beside:  # which tool, which arguments? Never pick one silently
            keys = ", ".join(f'"{key}"' for key in beside)
            return Attempt(function.get("name"), error=call_error(
                "malformed-call", f'the call is ambiguous: it names its tool in "function" and '
                f"also gives {keys} beside it; give one call: {SHAPE}"))
        return _named(function.get("name"), function)
    if "tool" in data:  # this skillpack's protocol
        attempt = _named(data["tool"], data)
        extra = tuple(sorted(str(k) for k in data if k not in _TOOL_KEYS))
        return Attempt(attempt.name, attempt.args, extra, attempt.error)
    kind = data.get("type")
    if kind in ("tool_use", "function_call") or (
        "name" in data and any(key in data for key in _ARG_KEYS)
    ):  # Anthropic tool_use, OpenAI Responses function_call, MCP tools/call, Llama
        return _named(data.get("name"), data)
    if kind == "function":
        return Attempt(error=call_error(
            "malformed-call", 'a "function" tool call must hold {"name": ..., "arguments": ...}'))
    return None


def _named(name: Any, data: Mapping[Any, Any]) -> Attempt:
    given = [key for key in _ARG_KEYS if key in data]
    if len(given) > 1:
        keys = " and ".join(f'"{key}"' for key in given)
        return Attempt(name, error=call_error(
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
                return Attempt(name, error=call_error(
                    "malformed-call", f"{tool}the arguments are not valid JSON ({why}); give "
                    "them as one JSON object of named values"))
            raw = values[0]
    return Attempt(name, raw)



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


def _decode_at(text: str, pos: int, budget: list[int]) -> tuple[Any, int]:
    """The JSON value at ``pos`` and where it ends. Decoded from slices that grow only while
    the value runs past them, so that a failure costs what was read, not ``pos`` (a
    JSONDecodeError counts the lines before its position); its ``pos`` is relative. What
    each try read is taken from ``budget[0]`` (at most its slice)."""
    size = _WINDOW
    while True:
        chunk = text[pos:pos + size]
        try:
            value, used = _DECODER.raw_decode(chunk)
        except json.JSONDecodeError as exc:
            to_end = exc.pos >= len(chunk) - 8 or exc.msg.startswith("Unterminated")
            budget[0] -= len(chunk) if to_end else exc.pos
            if to_end and pos + size < len(text):
                size *= 4
                continue
            raise
        except ValueError:  # a duplicate key, too many digits: somewhere in the slice
            budget[0] -= len(chunk)
            raise
        budget[0] -= used
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


def shown(name: str) -> str:
    """A tool name as an error message shows it: cut to 80 characters."""
    return name if len(name) <= 80 else name[:77] + "..."


def call_error(code: str, message: str) -> SkillError:
    """The SkillError refusing a call, worded to be fed back to the model as it is."""
    return SkillError(message, problems=[Problem("error", code, message)])
