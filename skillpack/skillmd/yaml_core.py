"""The frontmatter as a YAML 1.2 host reads it, and where a YAML 1.1 reader reads it otherwise.

Validation reads the frontmatter with the failsafe schema: every scalar a string
(`skillpack.skillmd.frontmatter`). A host of the MCP skills extension parses SKILL.md itself
with a YAML 1.2 parser (npm ``yaml``, core schema), and refuses a skill whose ``skills/list``
entry differs from what it computed. `core_frontmatter` is that read, as JSON gives it back:

* a plain (unquoted) scalar resolves by the YAML 1.2 core schema (spec 10.3.2): ``null``,
  ``Null``, ``NULL``, ``~`` and nothing are null; ``true``/``false`` (three spellings each)
  booleans; ``[-+]?[0-9]+``, ``0o[0-7]+``, ``0x[0-9a-fA-F]+`` integers (``0777`` is 777),
  each the JavaScript number the host's ``parseInt`` makes of it (past 2**53 a float, past
  the float range infinite); the
  core float forms (``1e3``, ``.5``, ``.inf``, ``.nan``) floats; anything else a string;
* a quoted or block scalar is a string; maps and lists nest;
* then as a JSON round trip gives it to a host: an infinity or NaN is null, and a map key is
  the string JavaScript makes of it (``1`` → ``"1"``, ``true`` → ``"true"``, null → ``""``).

PyYAML implements YAML 1.1 (its ``SafeLoader`` reads ``yes`` and ``on`` as true, ``0777`` as
511, ``1:20`` as 80, ``1_000`` as 1000, ``2024-01-15`` as a date): the nodes are composed with
PyYAML, and each plain scalar resolved here, never by its 1.1 constructors.
`version_differences` lists the plain scalars the two versions read differently, for the
``yaml-version`` warning (quote them: both then read the same string).

Build side only: the runtime never imports this module. PyYAML is imported when a
frontmatter is composed, not with the module: `skillpack check` starts without it, as
`skillpack.skillmd.frontmatter` does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from skillpack.skillmd.frontmatter_reader import closing_line

if TYPE_CHECKING:
    import yaml

__all__ = ["core_frontmatter", "core_scalar", "frontmatter_yaml", "version_differences",
           "yaml11_scalar"]

_NULL = re.compile(r"(?:~|null|Null|NULL|)\Z")
_BOOL = {"true": True, "True": True, "TRUE": True,
         "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"[-+]?[0-9]+\Z")
_OCT = re.compile(r"0o[0-7]+\Z")
_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_INF = re.compile(r"[-+]?\.(?:inf|Inf|INF)\Z")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)\Z")
#: A line whose value (or key, or list item) is a scalar YAML 1.1 may read otherwise than
#: 1.2: a cheap first look, so that a frontmatter with none is not composed a second time
#: (a flow collection's items, ``[yes, no]``, are looked at whenever there is one).
_MAYBE = re.compile(
    r"^[ \t]*(?:-[ \t]+)*(?:[^\s#:][^:#]*:[ \t]+)?(?:[yY]es|YES|[nN]o|NO|[oO]n|ON|[oO]ff|OFF"
    r"|[-+]?0[0-7_]+|[-+]?0[bo][0-9a-fA-F_]*|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?"
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?|[-+]?\.?[0-9][0-9_.]*_[0-9_.]*"
    r"|[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+|=|<<)[ \t]*(?:#.*)?:?[ \t]*$"
    r"|[\[{]", re.MULTILINE)


def core_scalar(text: str) -> Any:
    """A plain scalar's value under the YAML 1.2 core schema."""
    if _NULL.match(text):
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT.match(text):
        return _js_number(text, 10)
    if _OCT.match(text):
        return _js_number(text[2:], 8)
    if _HEX.match(text):
        return _js_number(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    if _INF.match(text):
        return -math.inf if text[0] == "-" else math.inf
    if _NAN.match(text):
        return math.nan
    return text


def _js_number(digits: str, base: int) -> int | float:
    """An integer as the host's parser gives it (npm ``yaml``: ``parseInt``, a JavaScript
    number): exact up to 2**53, the nearest float past it, infinity past the float range
    (read without converting thousands of digits: Python refuses over 4,300)."""
    sign = -1 if digits.startswith("-") else 1
    body = digits.lstrip("+-").lstrip("0") or "0"
    if len(body) * math.log2(base) > 1100:  # past 2**1024 whatever the digits: infinite
        return sign * math.inf
    value = sign * int(body, base)
    if abs(value) <= 2**53:
        return value
    try:
        rounded = float(value)
    except OverflowError:
        return sign * math.inf
    # JSON.stringify writes an integral number under 1e21 in digits, as an int is written
    return int(rounded) if abs(rounded) < 1e21 else rounded


_LOADER: yaml.SafeLoader | None = None


def yaml11_scalar(text: str) -> Any:
    """A plain scalar's value as PyYAML's `SafeLoader` (YAML 1.1) reads it."""
    import yaml

    global _LOADER
    if _LOADER is None:
        _LOADER = yaml.SafeLoader("")
    tag = _LOADER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    try:
        return _LOADER.construct_object(yaml.ScalarNode(tag, text), deep=True)
    except (yaml.YAMLError, ValueError, OverflowError):
        return text


def frontmatter_yaml(source: str) -> str | None:
    """The YAML text between the delimiters of a normalised SKILL.md text (None without a
    closed frontmatter)."""
    first, _sep, rest = source.partition("\n")
    if first.rstrip() != "---":
        return None
    closing = closing_line(rest, 0)
    return None if closing < 0 else rest[:closing]


def _compose(text: str) -> yaml.Node | None:
    import yaml

    loader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
    return yaml.compose(text, Loader=loader)


def _plain(node: yaml.ScalarNode, lines: list[str]) -> bool:
    """Whether a scalar is plain (unquoted, no block: libyaml says ``""``, PyYAML None) and
    untagged: the non-specific tag ``!`` (which a plain scalar cannot start with) makes it a
    string, as YAML 1.2 says."""
    if node.style:
        return False
    mark = node.start_mark
    return not (mark.line < len(lines) and lines[mark.line][mark.column:mark.column + 1] == "!")


def _js_key(value: Any) -> str:
    """The property name JavaScript makes of a map key (``String(key)``; null: ``""``)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return str(value)


def _json_value(node: yaml.Node, lines: list[str]) -> Any:
    import yaml

    if isinstance(node, yaml.ScalarNode):
        if not _plain(node, lines):
            return node.value
        value = core_scalar(node.value)
        if isinstance(value, float) and (not math.isfinite(value) or value == 0):
            return None if not math.isfinite(value) else 0.0  # JSON: no inf, NaN or -0
        return value
    if isinstance(node, yaml.SequenceNode):
        return [_json_value(item, lines) for item in node.value]
    assert isinstance(node, yaml.MappingNode)
    out: dict[str, Any] = {}
    for key, value in node.value:
        name = (key.value if not _plain(key, lines) else _js_key(core_scalar(key.value))
                ) if isinstance(key, yaml.ScalarNode) else str(_json_value(key, lines))
        out[name] = _json_value(value, lines)
    return out


def core_frontmatter(yaml_text: str) -> dict[str, Any]:
    """The frontmatter as a YAML 1.2 host computes it, after a JSON round trip (see the
    module text). The text must have passed validation (`split_frontmatter`): it is a map,
    with no anchor, alias or tag."""
    node = _compose(yaml_text)
    if node is None:
        return {}
    value = _json_value(node, yaml_text.split("\n"))
    assert isinstance(value, dict)
    return value


def _plain_scalars(node: yaml.Node, lines: list[str]) -> Iterator[yaml.ScalarNode]:
    import yaml

    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, yaml.ScalarNode):
            if _plain(current, lines):
                yield current
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(reversed(current.value))
        elif isinstance(current, yaml.MappingNode):
            for key, value in reversed(current.value):
                stack.extend((value, key))


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def version_differences(yaml_text: str) -> list[tuple[int, str, Any, Any]]:
    """Each plain scalar YAML 1.1 (PyYAML) and YAML 1.2 (core schema) read differently:
    ``(line in the YAML text, 0-based; the scalar; its 1.1 value; its 1.2 value)``, in order."""
    if not _MAYBE.search(yaml_text):
        return []
    import yaml

    try:
        node = _compose(yaml_text)
    except (yaml.YAMLError, RecursionError):
        return []  # validation reports it
    if node is None:
        return []
    found = []
    for scalar in _plain_scalars(node, yaml_text.split("\n")):
        old, new = yaml11_scalar(scalar.value), core_scalar(scalar.value)
        if not _same(old, new):
            found.append((scalar.start_mark.line, scalar.value, old, new))
    return found
