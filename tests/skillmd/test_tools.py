"""Run templates and a model's arguments: substitution, rendering, coercion, refusal."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.paths import FIXTURES

from skillpack.errors import SkillError
from skillpack.skillmd.skill import parse_skill
from skillpack.skillmd.tools import Param, Tool, convert_text, render_value, template_params
from skillpack.source.load import parse_skill_file

WAITLIST = {t.id: t for t in parse_skill_file(FIXTURES / "waitlist").tools}


def tool(*lines: str) -> Tool:
    text = "---\nname: t\ndescription: d\n---\n```tool\n" + "\n".join(lines) + "\n```\n"
    (only,) = parse_skill(text).tools
    return only


def call_error(t: Tool, args: Any) -> list[str]:
    with pytest.raises(SkillError) as info:
        t.argv(args)
    assert all(p.code == "invalid-call" for p in info.value.problems)
    return [p.message for p in info.value.problems]


def test_substitution_inside_a_word_never_splits_it() -> None:
    access = WAITLIST["access"]
    assert access.argv({"operation": "accept", "email": "a b@example.com"}) == [
        "python3", "scripts/waitlist.py", "--accept", "a b@example.com"]
    join = WAITLIST["join"]
    assert join.argv({"email": "x@y.z", "note": "help; rm -rf / $(id)"}) == [
        "python3", "scripts/waitlist.py", "join", "--email", "x@y.z", "--note",
        "help; rm -rf / $(id)"]
    # a value starting a word must not start with '-': it would be read as an option
    with pytest.raises(SkillError, match="must not start with '-'"):
        join.argv({"email": "x@y.z", "note": "--help; rm -rf / $(id)"})


def test_defaults_fill_in_and_values_render_as_text() -> None:
    assert WAITLIST["list"].argv({}) == [
        "python3", "scripts/waitlist.py", "list", "--limit=20", "--status=waiting"]
    assert WAITLIST["list"].argv({"limit": 5.0, "status": "accepted"})[3] == "--limit=5"
    assert WAITLIST["count"].argv(None) == [
        "awk", "-F,", "-v", "want=waiting", "$3 == want { n++ } END { print n+0 }",
        "data/waitlist.csv"]


def test_dollar_dollar_and_lone_dollars() -> None:
    t = tool("id: d", "description: d", "params:", "  name:", "run: x $$ $$$name $name$ a$$b $")
    assert t.argv({"name": "v"}) == ["x", "$", "$v", "v$", "a$b", "$"]
    t = tool("id: d", "description: d", "params:", "  a:", "  a_b:",
             "run: x $a_b-$a.$a_b")
    assert t.argv({"a": "1", "a_b": "2"}) == ["x", "2-1.2"]


def test_template_params() -> None:
    assert template_params("--$op=$val$$x$") == ["op", "val"]
    assert template_params("$$op") == []
    assert template_params("$1$_x") == ["_x"]


@pytest.mark.parametrize(
    ("value", "text"),
    [("plain", "plain"), ("", ""), (7, "7"), (-3, "-3"), (2.0, "2"), (2.5, "2.5"),
     (1e20, "100000000000000000000"), (True, "true"), (False, "false")],
)
def test_render_value(value: str | int | float | bool, text: str) -> None:
    assert render_value(value) == text


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [("1", "integer", 1), ("+1", "integer", 1), (" -7 ", "integer", -7), ("1.0", "integer", None),
     ("0x10", "integer", None), ("1_000", "integer", None), ("9" * 5000, "integer", None),
     ("1", "number", 1), ("1.5", "number", 1.5), (".5", "number", 0.5), ("1e3", "number", 1000.0),
     ("nan", "number", None), ("Infinity", "number", None), ("1e999", "number", None),
     ("true", "boolean", True), ("False", "boolean", False), ("yes", "boolean", None),
     ("1", "boolean", None), (" a b ", "string", " a b ")],
)
def test_convert_text(text: str, kind: Any, value: Any) -> None:
    converted = convert_text(text, kind)
    assert converted == value
    assert type(converted) is type(value)


def test_model_arguments_are_coerced() -> None:
    t = tool("id: c", "description: d", "params:",
             "  n:", "    type: integer", "  r:", "    type: number", "  b:", "    type: boolean",
             "  s:", "run: x $n $r $b $s")
    assert t.argv({"n": "5", "r": "0.25", "b": "TRUE", "s": 3}) == ["x", "5", "0.25", "true", "3"]
    assert t.argv({"n": 5.0, "r": 2, "b": False, "s": 1.5}) == ["x", "5", "2", "false", "1.5"]
    assert t.validate({"n": 5, "r": 2, "b": True, "s": "x"}) == {
        "n": 5, "r": 2, "b": True, "s": "x"}


def test_model_arguments_are_refused_with_every_reason() -> None:
    t = tool("id: c", "description: d", "params:",
             "  n:", "    type: integer", "  b:", "    type: boolean",
             "  op:", "    enum: accept, reject", "run: x $n $b $op")
    assert call_error(t, {"n": "five", "b": "yes", "op": "maybe", "extra": 1}) == [
        "tool 'c': unknown argument 'extra'; it takes n, b, op",
        "tool 'c': 'n' must be an integer; got 'five'",
        "tool 'c': 'b' must be true or false; got 'yes'",
        "tool 'c': 'op' must be one of accept, reject; got 'maybe'",
    ]
    assert call_error(t, {}) == [
        "tool 'c': missing required argument 'n'",
        "tool 'c': missing required argument 'b'",
        "tool 'c': missing required argument 'op'",
    ]
    assert call_error(t, {"n": True, "b": 1, "op": ["accept"]}) == [
        "tool 'c': 'n' must be an integer; got true",
        "tool 'c': 'b' must be true or false; got 1",
        "tool 'c': 'op' must be a string; got a list",
    ]
    assert call_error(t, {"n": 1.5, "b": True, "op": "accept"}) == [
        "tool 'c': 'n' must be an integer; got 1.5"]
    assert call_error(t, ["not", "a", "mapping"]) == [
        "tool 'c': the arguments must be a JSON object of named values"]


def test_enums_compare_typed_values() -> None:
    t = tool("id: e", "description: d", "params:",
             "  n:", "    type: integer", "    enum: 0, 1", "run: x $n")
    assert t.argv({"n": "1"}) == ["x", "1"]
    assert call_error(t, {"n": True}) == ["tool 'e': 'n' must be an integer; got true"]
    assert call_error(t, {"n": 2}) == ["tool 'e': 'n' must be one of 0, 1; got 2"]


def test_a_tool_without_params_takes_no_arguments() -> None:
    t = tool("id: z", "description: d", "run: date")
    assert t.argv() == ["date"]
    assert call_error(t, {"x": 1}) == ["tool 'z': unknown argument 'x'; it takes no arguments"]


def test_to_dict_and_param_lookup() -> None:
    access = WAITLIST["access"]
    assert access.to_dict() == {
        "id": "access",
        "description": "Accept or reject a waitlist entry.",
        "run": "python3 scripts/waitlist.py --$operation $email",
        "schema": access.schema,
    }
    assert WAITLIST["list"].to_dict()["run"] == [
        "python3", "scripts/waitlist.py", "list", "--limit=$limit", "--status=$status"]
    assert access.param("operation") == Param("operation", enum=("accept", "reject"))
    assert access.param("nope") is None
    assert access.schema["required"] == ["email", "operation"]
