"""The model-facing layer: compile, tool_definitions, Call, the CLI, and resolve under fuzzing."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import FrozenInstanceError, dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import cli
from helpers.paths import CORPUS, REPO
from helpers.skills import write_skill
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skillpack
from skillpack.errors import SkillError
from skillpack.model.calls import STYLES, Call, compile, resolve, tool_definitions
from skillpack.skillmd.skill import Skill
from skillpack.skillmd.tools import Tool
from skillpack.source.load import parse_skill_file

WAITLIST_DIR = REPO / "fixtures" / "waitlist"
WAITLIST = parse_skill_file(WAITLIST_DIR)

ANTHROPIC_SKILLS = sorted(p.parent for p in (CORPUS / "anthropics-skills").glob("*/SKILL.md"))

TYPED_MD = """---
skill: typed
description: A tool of every param type, with a description holding ``` backticks.
---

```tool
id: typed
description: Every type; a ```` run of backticks must not close the catalog fence.
params:
  count:
    type: integer
    enum: 3, 5
  ratio:
    type: number
  flag:
    type: boolean
  word:
    type: string
    format: uri
run: typed --count=$count --ratio=$ratio --flag=$flag $word
```

```tool
id: noargs
description: Takes nothing.
run: noargs
```
"""


@pytest.fixture(scope="module")
def typed(tmp_path_factory: pytest.TempPathFactory) -> Skill:
    return parse_skill_file(write_skill(tmp_path_factory.mktemp("typed"), TYPED_MD))


def catalog_of(text: str) -> list[dict[str, Any]]:
    """The tool catalog a compiled text ends with: its last fenced json block."""
    blocks = re.findall(r"^(`{3,})json\n(.*?)\n\1$", text, re.M | re.S)
    assert blocks, "the compiled text holds a json block"
    catalog: list[dict[str, Any]] = json.loads(blocks[-1][1])
    return catalog


def sample_args(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments a model would write from the schema alone: every required property."""
    samples = {"string": "some text", "integer": 7, "number": 1.5, "boolean": True}
    args = {}
    for name in schema["required"]:
        prop = schema["properties"][name]
        args[name] = prop["enum"][-1] if "enum" in prop else samples[prop["type"]]
    return args


# -- compile ----------------------------------------------------------------------------------

def test_compile_is_prose_then_protocol_then_catalog() -> None:
    text = compile(WAITLIST)
    prose = WAITLIST.rendered.strip("\n")
    assert text.startswith(prose + "\n\n## Calling tools\n")
    assert text.endswith("\n```\n") and not text.endswith("\n\n")
    assert '{"tool": "<tool id>", "args": {"<argument>": <value>}}' in text
    assert "- `tool` is one of: join, list, access, count." in text
    assert "example-only" not in text.split("## Calling tools")[1]
    assert catalog_of(text) == [
        {"id": t.id, "description": t.description, "schema": t.schema} for t in WAITLIST.tools
    ]


def test_compile_is_deterministic_across_parses() -> None:
    assert compile(WAITLIST) == compile(parse_skill_file(WAITLIST_DIR / "SKILL.md"))


@pytest.mark.parametrize("skill", ["waitlist", "typed"])
def test_every_tool_in_the_compiled_catalog_resolves(skill: str, typed: Skill) -> None:
    parsed = WAITLIST if skill == "waitlist" else typed
    catalog = catalog_of(compile(parsed))
    assert [entry["id"] for entry in catalog] == [t.id for t in parsed.tools]
    for entry in catalog:
        answer = json.dumps({"tool": entry["id"], "args": sample_args(entry["schema"])})
        got = resolve(parsed, f"Calling it.\n```json\n{answer}\n```")
        assert got is not None and got.tool.id == entry["id"]
        assert got.argv == got.tool.argv(got.args)


def test_catalog_fence_outgrows_backticks_in_descriptions(typed: Skill) -> None:
    text = compile(typed)
    assert "\n`````json\n[\n" in text and text.endswith("\n`````\n")
    assert [e["id"] for e in catalog_of(text)] == ["typed", "noargs"]


@pytest.mark.parametrize("folder", [REPO / "fixtures" / "release-notes", *ANTHROPIC_SKILLS],
                         ids=lambda p: p.name)
def test_a_skill_without_tools_compiles_to_its_prose(folder: Path) -> None:
    skill = parse_skill_file(folder)
    assert skill.tools == ()
    assert compile(skill) == skill.rendered.strip("\n") + "\n"


def test_compile_with_tools_and_no_prose(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text(
        "---\nskill: bare\ndescription: Only a tool.\n---\n```tool\nid: hi\ndescription: Say "
        "hi.\nrun: echo hi\n```\n", encoding="utf-8")
    skill = parse_skill_file(tmp_path)
    # the fence is replaced by its id in the prose: the protocol follows it
    assert compile(skill).startswith("hi\n\n## Calling tools\n")


# -- the same functions on a runtime-like handle ----------------------------------------------

@dataclass(frozen=True)
class Handle:
    """Stands for the runtime's skill handle: the same attributes, the same Tool objects."""

    name: str
    description: str
    rendered: str
    tools: tuple[Tool, ...]


def test_a_skill_handle_gives_the_same_text_calls_and_definitions() -> None:
    handle = Handle(WAITLIST.name, WAITLIST.description, WAITLIST.rendered, WAITLIST.tools)
    assert compile(handle) == compile(WAITLIST)
    answer = '{"tool": "list", "args": {"limit": "3"}}'
    assert resolve(handle, answer) == resolve(WAITLIST, answer)
    for style in STYLES:
        assert tool_definitions(handle, style) == tool_definitions(WAITLIST, style)


def test_a_loaded_bundle_skill_compiles_and_resolves_like_the_folder(tmp_path: Path) -> None:
    """The issue's promise: the same text and calls whether parsed or loaded from bytes."""
    from skillpack.packing.pack import pack
    from skillpack.runtime import load

    [archive] = pack(WAITLIST_DIR, tmp_path)
    loaded = load(archive.read_bytes())["waitlist"]
    assert compile(loaded) == compile(WAITLIST)
    answer = {"type": "tool_use", "name": "count", "input": {"status": "rejected"}}
    assert resolve(loaded, answer) == resolve(WAITLIST, answer)
    assert tool_definitions(loaded, "openai") == tool_definitions(WAITLIST, "openai")


# -- tool_definitions -------------------------------------------------------------------------

ACCESS_SCHEMA = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "description": "The email of the entry to change."},
        "operation": {"type": "string", "enum": ["accept", "reject"]},
    },
    "required": ["email", "operation"],
    "additionalProperties": False,
}
ACCESS_DESCRIPTION = "Accept or reject a waitlist entry."


def test_anthropic_definitions() -> None:
    defs = tool_definitions(WAITLIST, "anthropic")
    assert [d["name"] for d in defs] == ["join", "list", "access", "count"]
    assert defs[2] == {"name": "access", "description": ACCESS_DESCRIPTION,
                       "input_schema": ACCESS_SCHEMA}


def test_openai_definitions() -> None:
    defs = tool_definitions(WAITLIST, "openai")
    assert defs[2] == {"type": "function", "function": {
        "name": "access", "description": ACCESS_DESCRIPTION, "parameters": ACCESS_SCHEMA}}
    assert all(set(d) == {"type", "function"} for d in defs)


def test_mcp_definitions() -> None:
    defs = tool_definitions(WAITLIST.tools, "mcp")
    assert defs[2] == {"name": "access", "description": ACCESS_DESCRIPTION,
                       "inputSchema": ACCESS_SCHEMA}


def test_definitions_are_json_and_independent_copies() -> None:
    for style in STYLES:
        defs = tool_definitions(WAITLIST, style)
        assert json.loads(json.dumps(defs)) == defs
    first = tool_definitions(WAITLIST, "anthropic")
    first[0]["input_schema"]["required"].append("tampered")
    assert tool_definitions(WAITLIST, "anthropic")[0]["input_schema"]["required"] == ["email"]


def test_unknown_style_names_the_styles(typed: Skill) -> None:
    with pytest.raises(SkillError) as info:
        tool_definitions(WAITLIST, "gemini")
    assert isinstance(info.value, ValueError)
    assert str(info.value) == "unknown tool definitions style 'gemini'; use one of anthropic, " \
        "openai, mcp"
    notes = parse_skill_file(REPO / "fixtures" / "release-notes")  # a skill without tools
    assert tool_definitions(notes, "mcp") == []


def test_native_tool_use_round_trip() -> None:
    """A definition's name and schema come back, as the provider returns them, to the tool."""
    for definition in tool_definitions(WAITLIST, "anthropic"):
        block = {"type": "tool_use", "id": "toolu_1", "name": definition["name"],
                 "input": sample_args(definition["input_schema"])}
        got = resolve(WAITLIST, block)
        assert got is not None and got.tool.id == definition["name"]
    for definition in tool_definitions(WAITLIST, "openai"):
        function = definition["function"]
        tool_call = {"id": "call_1", "type": "function", "function": {
            "name": function["name"],
            "arguments": json.dumps(sample_args(function["parameters"]))}}
        got = resolve(WAITLIST, tool_call)
        assert got is not None and got.tool.id == function["name"]


# -- Call -------------------------------------------------------------------------------------

def test_call_is_frozen_and_argv_compares_to_a_list() -> None:
    got = resolve(WAITLIST, '{"tool": "access", "args": {"email": "x@y.z", '
                            '"operation": "accept"}}')
    assert isinstance(got, Call)
    assert got.tool.id == "access" and got.tool is WAITLIST.tool("access")
    assert got.argv == ["python3", "scripts/waitlist.py", "--accept", "x@y.z"]
    assert isinstance(got.argv, list)
    with pytest.raises(FrozenInstanceError):
        got.argv = []  # type: ignore[misc]
    data = got.to_dict()
    data["argv"].append("--all")
    assert got.argv == ["python3", "scripts/waitlist.py", "--accept", "x@y.z"]


def test_public_names_are_exported_lazily() -> None:
    expected = {"compile": compile, "resolve": resolve, "Call": Call,
                "tool_definitions": tool_definitions}
    for name, value in expected.items():
        assert getattr(skillpack, name) is value


def run(*args: str, stdin: str | None = None) -> Any:
    return cli(*args, input=stdin)


def test_cli_compile_prints_the_system_text() -> None:
    result = run("compile", str(WAITLIST_DIR))
    assert result.exit_code == 0
    assert result.stdout == compile(WAITLIST)
    assert run("compile", str(WAITLIST_DIR / "SKILL.md")).stdout == result.stdout


def test_cli_compile_of_an_unreadable_skill_exits_1(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text("---\nname: [unclosed\n---\nbody\n", encoding="utf-8")
    result = run("compile", str(tmp_path))
    assert result.exit_code == 1
    assert result.stdout == "" and result.stderr.startswith("skillpack: error:")
    assert run("compile", str(tmp_path / "missing")).exit_code == 2


def test_cli_resolve_from_stdin_prints_the_call_with_argv() -> None:
    answer = 'Adding them.\n```json\n{"tool": "join", "args": {"email": "a b@c.d"}}\n```\n'
    result = run("resolve", str(WAITLIST_DIR), stdin=answer)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "tool": "join", "args": {"email": "a b@c.d", "note": "none given"},
        "argv": ["python3", "scripts/waitlist.py", "join", "--email", "a b@c.d", "--note",
                 "none given"]}
    assert run("resolve", str(WAITLIST_DIR), "--answer", "-", stdin=answer).stdout == \
        result.stdout


def test_cli_resolve_from_a_file_of_structured_json(tmp_path: Path) -> None:
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps({"type": "function", "function": {
        "name": "count", "arguments": '{"status": "accepted"}'}}), encoding="utf-8")
    result = run("resolve", str(WAITLIST_DIR), "--answer", str(answer))
    assert result.exit_code == 0
    assert json.loads(result.stdout)["argv"][3] == "want=accepted"


def test_cli_resolve_refusal_prints_the_model_facing_message() -> None:
    answer = '{"tool": "access", "args": {"email": "a@b.c", "operation": "approve"}}'
    result = run("resolve", str(WAITLIST_DIR), stdin=answer)
    assert result.exit_code == 1
    assert result.stdout == (
        "tool 'access': 'operation' must be one of accept, reject; got 'approve'\n")


def test_cli_resolve_without_a_call_exits_1() -> None:
    result = run("resolve", str(WAITLIST_DIR), stdin="Everyone is accepted already.")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == "skillpack: the answer holds no tool call\n"


def test_cli_resolve_misuse(tmp_path: Path) -> None:
    assert run("resolve", str(WAITLIST_DIR), "--answer", str(tmp_path / "nope")).exit_code == 2
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b'{"tool": "list"}\xff')
    result = run("resolve", str(WAITLIST_DIR), "--answer", str(bad))
    assert result.exit_code == 1 and "not valid UTF-8" in result.stderr


# -- fuzzing: resolve raises nothing but SkillError -------------------------------------------

KEYS = ["tool", "name", "args", "input", "arguments", "function", "type", "content", "text",
        "tool_calls", "id", "argv", "email", "operation", "limit", "status", "note"]
WORDS = ["join", "list", "access", "count", "tool_use", "function", "function_call", "accept",
         "5", "0x10", "true", "NaN", "{}", '{"limit": "2"}', "waiting"]
SCALARS = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
           | st.sampled_from(WORDS))
JSON_LIKE = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=5),
    max_leaves=16,
)
FRAGMENTS = ["{", "}", "[", "]", '"tool"', '"name"', '"args"', '"input"', '"arguments"', ":",
             ",", '"access"', '"list"', '"count"', '"operation": "accept"', "```json\n",
             "```\n", "~~~\n", "\n", " ", "NaN", "Infinity", '"\\u00e9"', "0x10", "1e999",
             '{"tool": "list", "args": {"limit": "3"}}', "prose "]
TEXT = (st.text(max_size=200)
        | st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=4), max_size=30).map("".join)
        | JSON_LIKE.map(lambda v: json.dumps(v, allow_nan=False) if _finite(v) else "null"))


def _finite(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return False
    return True


def check_outcome(tools: Sequence[Tool], answer: Any) -> None:
    try:
        got = resolve(tools, answer)
    except SkillError as err:
        assert err.message and err.problems
        return
    if got is not None:
        assert got.tool in tools
        assert all(isinstance(word, str) for word in got.argv)
        assert got.argv == got.tool.argv(got.args)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_resolve_on_arbitrary_text_raises_only_skill_error(text: str) -> None:
    check_outcome(WAITLIST.tools, text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON_LIKE)
def test_resolve_on_arbitrary_json_like_values_raises_only_skill_error(value: Any) -> None:
    check_outcome(WAITLIST.tools, value)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["join", "list", "access", "count"]),
       st.dictionaries(st.sampled_from(KEYS[11:]), JSON_LIKE, max_size=4))
def test_resolve_on_arbitrary_arguments_raises_only_skill_error(
    tool: str, args: dict[str, Any]
) -> None:
    check_outcome(WAITLIST.tools, {"tool": tool, "args": args})
    check_outcome(WAITLIST.tools, {"name": tool, "arguments": json.dumps(args, default=str)})


def test_deep_nesting_is_an_error_or_nothing() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert resolve(WAITLIST, deep) is None
    with pytest.raises(SkillError):
        resolve(WAITLIST, '```json\n' + "[" * 100_000 + "\n```")
    nested: Any = {"tool": "list"}
    for _ in range(50):
        nested = {"content": [nested]}
    assert resolve(WAITLIST, nested) is None  # deeper than resolve looks
    huge = '{"tool": "list", "args": {"limit": ' + "9" * 5000 + "}}"
    with pytest.raises(SkillError) as info:
        resolve(WAITLIST, huge)
    assert "not valid JSON (a number has too many digits)" in info.value.message


CALL = '{"tool": "list", "args": {"limit": 3}}'


@pytest.mark.parametrize("before", [
    "x" * 1_000_000,
    "word {x} " * 100_000,
    '{"x"} ' * 50_000,
    '{"row": 1} ' * 50_000,
    '{"a": [' + '{"b": 1}, ' * 20_000 + "oops ",
])
def test_a_call_after_long_prose_is_found(before: str) -> None:
    got = resolve(WAITLIST, before + CALL)
    assert got is not None and got.argv[3] == "--limit=3"


def test_a_cut_off_call_says_where() -> None:
    with pytest.raises(SkillError) as info:
        resolve(WAITLIST, 'Sure: {"tool": "join", "args": {"email": "a@b.c", "note": "x'
                + "y" * 5000)
    # line and column count from the start of the call, the '"x' here
    assert info.value.message.startswith(
        "the tool call is not valid JSON (Unterminated string starting at line 1, column 53)")


def test_docs_show_real_output() -> None:
    doc = (REPO / "docs" / "MODEL.md").read_text(encoding="utf-8")
    assert compile(WAITLIST) in doc
    for style in STYLES:
        assert json.dumps(tool_definitions(WAITLIST, style)[2], indent=2) in doc
    listed = resolve(WAITLIST, '{"tool": "list", "args": {"limit": "5"}}')
    assert listed is not None and json.dumps(listed.to_dict(), indent=2) in doc
