"""Hard-skill tools: params, argv templates, JSON Schemas and argument validation.

A tool declares exactly one command a model may call, as an argv template: a list of words,
each holding literal text and ``$param`` references. ``$name`` substitutes inside its word and
never splits it (``--$operation`` becomes ``--accept``); ``$$`` is a literal ``$``; a ``$`` not
followed by a name is literal. There is no shell and no quoting.

Arguments coming from a model are validated here, once, for every caller: unknown names are
refused, defaults filled, required params enforced, primitives coerced (``"5"`` to 5 for an
integer, ``"true"``/``"false"`` for a boolean; no hex, no Infinity) and enums checked against
typed values. Errors are `SkillError`s worded so that they can be fed back to the model.

Standard library only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from skillpack._record import Record, field
from skillpack.errors import Problem, SkillError
from skillpack.formats.manifest import is_text

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from typing import Any, Literal, TypeAlias

    ParamType: TypeAlias = Literal["string", "integer", "number", "boolean"]
else:  # a string at run time: the checker sees the Literal
    ParamType = str

__all__ = [
    "PARAM_NAME",
    "PARAM_REF",
    "PARAM_TYPES",
    "TOOL_ID",
    "Param",
    "Tool",
    "Value",
    "convert_text",
    "render_value",
    "template_params",
]

Value = str | int | float | bool

PARAM_TYPES: tuple[ParamType, ...] = ("string", "integer", "number", "boolean")
PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TOOL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
PARAM_REF = re.compile(r"\$(\$|[A-Za-z_][A-Za-z0-9_]*)")
_INTEGER = re.compile(r"[+-]?[0-9]+")
# Each part is matched one way only (no two quantifiers over the same digits), so a match,
# or a failure after a million digits, costs one pass: `[0-9]+\.?[0-9]*` backtracked over
# every split of a digit run before a bad character (minutes for 100,000 digits).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


class Param(Record):
    """One declared parameter of a tool. ``enum`` and ``default`` hold typed values."""

    name: str
    type: ParamType = "string"
    format: str | None = None
    enum: tuple[Value, ...] | None = None
    description: str | None = None
    default: Value | None = None
    line: int | None = field(default=None, compare=False)

    @property
    def required(self) -> bool:
        """A param with no default must be given."""
        return self.default is None

    @property
    def schema(self) -> dict[str, Any]:
        """This param as a JSON Schema property."""
        prop: dict[str, Any] = {"type": self.type}
        if self.description:
            prop["description"] = self.description
        if self.format:
            prop["format"] = self.format
        if self.enum is not None:
            prop["enum"] = list(self.enum)
        if self.default is not None:
            prop["default"] = self.default
        return prop


class Tool(Record):
    """A command a model may call: ``id``, ``description``, ``params`` and the ``run`` template.

    ``run`` is the template as written: a string (split on whitespace into words) or a tuple
    (one argv word per item, verbatim). ``words`` is the argv template either way.
    """

    id: str
    description: str
    params: tuple[Param, ...]
    run: str | tuple[str, ...]
    line: int | None = field(default=None, compare=False)

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.run.split()) if isinstance(self.run, str) else self.run

    def param(self, name: str) -> Param | None:
        for param in self.params:
            if param.name == name:
                return param
        return None

    @property
    def schema(self) -> dict[str, Any]:
        """The tool's arguments as a JSON Schema object."""
        return {
            "type": "object",
            "properties": {p.name: p.schema for p in self.params},
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }

    def validate(self, args: Mapping[str, Any] | None) -> dict[str, Value]:
        """Check and coerce a model's arguments; return them with defaults filled.

        Raises `SkillError` listing every problem, worded for the model.
        """
        prefix = f"tool '{self.id}'"
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            raise _call_error(f"{prefix}: the arguments must be a JSON object of named values")
        problems: list[str] = []
        names = [p.name for p in self.params]
        for key in args:
            if key not in names:
                takes = ", ".join(names) if names else "no arguments"
                problems.append(f"{prefix}: unknown argument '{key}'; it takes {takes}")
        result: dict[str, Value] = {}
        for param in self.params:
            if param.name not in args or args[param.name] is None:
                if param.default is None:
                    problems.append(f"{prefix}: missing required argument '{param.name}'")
                else:
                    result[param.name] = param.default
                continue
            raw = args[param.name]
            if isinstance(raw, int) and not isinstance(raw, bool) and raw.bit_length() > _MAX_BITS:
                problems.append(f"{prefix}: '{param.name}' is too large a number "
                                f"({raw.bit_length():,} bits; at most {_MAX_BITS:,})")
                continue
            value, error = _coerce(param, raw)
            if error is not None:
                problems.append(f"{prefix}: {error}")
                continue
            assert value is not None
            if param.enum is not None and not _in_enum(value, param.enum):
                allowed = ", ".join(render_value(v) for v in param.enum)
                got = _show(args[param.name])
                problems.append(f"{prefix}: '{param.name}' must be one of {allowed}; got {got}")
                continue
            if isinstance(value, str) and "\x00" in value:
                problems.append(f"{prefix}: '{param.name}' must not hold a NUL character")
                continue
            if isinstance(value, str) and not is_text(value):
                problems.append(f"{prefix}: '{param.name}' must be text (it holds a lone "
                                "surrogate, which no argv word can carry as UTF-8)")
                continue
            result[param.name] = value
        if not problems:
            given = {n for n in result if n in args and args[n] is not None}
            problems += self._option_problems(result, given, prefix)
        if problems:
            raise _call_error("; ".join(problems), problems)
        return result

    def _option_problems(self, values: Mapping[str, Value], given: set[str],
                         prefix: str) -> list[str]:
        """An argv word before any ``--`` word that would start with ``-`` from a value: the
        rendered word is checked, not the template (``$folder$file`` with an empty
        ``folder`` starts with ``file``). The first value that renders non-empty at the start
        of a word decides; an enum param's value and a default (not in `given`) are the
        author's."""
        by_name = {p.name: p for p in self.params}
        problems: list[str] = []
        for word in self.words:
            if word == "--":
                break
            for name in _leading_run(word):
                shown = render_value(values[name])
                if not shown:
                    continue  # empty: the next reference starts the word
                param = by_name[name]
                if (shown.startswith("-") and param.enum is None and name in given
                        and isinstance(values[name], str)):
                    rendered = _render_word(word, values)
                    problems.append(
                        f"{prefix}: '{name}' must not start with '-' where it starts an argv "
                        f"word; got {_show(values[name])} (the program would read "
                        f"{_show(rendered)} as an option)")
                break
        return problems

    @property
    def leading_params(self) -> frozenset[str]:
        """The params whose value starts an argv word before any ``--`` word: a string value
        starting with ``-`` there would be read as an option (``git log $range`` given
        ``--output=FILE``), so `validate` refuses it. After a ``--`` word, or inside a word
        (``--who=$who``), the value cannot become an option."""
        names: set[str] = set()
        for word in self.words:
            if word == "--":
                break
            names.update(_leading_run(word))
        return frozenset(names)

    def argv(self, args: Mapping[str, Any] | None = None) -> list[str]:
        """Validate ``args`` and render the run template into an argv list."""
        return self.render(self.validate(args))

    def render(self, values: Mapping[str, Value]) -> list[str]:
        """The argv of values `validate` returned (its defaults filled in, and not checked
        again as if the model had given them)."""
        return [_render_word(word, values) for word in self.words]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "description": self.description,
            "run": self.run if isinstance(self.run, str) else list(self.run),
            "schema": self.schema,
        }


def template_params(word: str) -> list[str]:
    """The param names a template word refers to, in order (``$$`` is not a reference)."""
    return [m.group(1) for m in PARAM_REF.finditer(word) if m.group(1) != "$"]


def render_value(value: Value) -> str:
    """A typed value as argv text: booleans ``true``/``false``, integral numbers without ``.0``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return value


def convert_text(text: str, type_: ParamType) -> Value | None:
    """Convert declared text (a default or an enum item) to ``type_``; None if it does not fit."""
    if type_ == "string":
        return text
    if type_ == "boolean":
        return {"true": True, "false": False}.get(text.strip().lower())
    stripped = text.strip()
    try:
        if type_ == "integer":
            return int(stripped) if _INTEGER.fullmatch(stripped) else None
        if _INTEGER.fullmatch(stripped):
            return int(stripped)
    except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits)
        return None
    if _NUMBER.fullmatch(stripped):
        number = float(stripped)
        return number if math.isfinite(number) else None
    return None


def _leading_run(word: str) -> list[str]:
    """The params referred to side by side at the start of `word` (``$a$b-x`` gives a, b):
    each starts the rendered word when those before it render empty."""
    names: list[str] = []
    at = 0
    while (match := PARAM_REF.match(word, at)) is not None and match.group(1) != "$":
        names.append(match.group(1))
        at = match.end()
    return names


def _render_word(word: str, values: Mapping[str, Value]) -> str:
    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        return "$" if name == "$" else render_value(values[name])

    return PARAM_REF.sub(sub, word)


def _coerce(param: Param, raw: Any) -> tuple[Value | None, str | None]:
    name, kind = param.name, param.type
    if kind == "string":
        if isinstance(raw, str):
            return raw, None
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            if isinstance(raw, float) and not math.isfinite(raw):
                return None, f"'{name}' must be a string; got {_show(raw)}"
            return render_value(raw), None
        return None, f"'{name}' must be a string; got {_show(raw)}"
    if kind == "boolean":
        if isinstance(raw, bool):
            return raw, None
        if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
            return raw.strip().lower() == "true", None
        return None, f"'{name}' must be true or false; got {_show(raw)}"
    if isinstance(raw, bool):
        return None, f"'{name}' must be {_a(kind)}; got {_show(raw)}"
    if isinstance(raw, str):
        converted = convert_text(raw, kind)
        if converted is None:
            return None, f"'{name}' must be {_a(kind)}; got {_show(raw)}"
        return converted, None
    if isinstance(raw, int):
        return raw, None
    if isinstance(raw, float) and math.isfinite(raw):
        if kind == "number":
            return raw, None
        if raw.is_integer():
            return int(raw), None
    return None, f"'{name}' must be {_a(kind)}; got {_show(raw)}"


def _in_enum(value: Value, enum: tuple[Value, ...]) -> bool:
    for item in enum:
        if isinstance(item, bool) != isinstance(value, bool):
            continue
        if item == value:
            return True
    return False


def _a(kind: str) -> str:
    return "an integer" if kind == "integer" else f"a {kind}"


#: The largest whole number a value may be (about 300 digits): Python will not write an int of
#: over 4,300 digits as text, and no argv word needs one.
_MAX_BITS = 1024


def _show(raw: Any) -> str:
    if isinstance(raw, str):
        return repr(raw) if len(raw) <= 80 else repr(raw[:77] + "...")
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if raw is None:
        return "null"
    if isinstance(raw, int) and raw.bit_length() > _MAX_BITS:
        return f"a number of {raw.bit_length():,} bits"
    if isinstance(raw, (int, float)):
        return repr(raw)
    return f"a {type(raw).__name__}"


def _call_error(message: str, problems: list[str] | None = None) -> SkillError:
    found = [Problem("error", "invalid-call", p) for p in (problems or [message])]
    return SkillError(message, problems=found)
