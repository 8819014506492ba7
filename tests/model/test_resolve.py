"""`resolve`: reading a model's tool call, on the waitlist fixture and hard skills built here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import REPO
from helpers.skills import write_skill

from skillpack.errors import SkillError
from skillpack.model.calls import Call, resolve
from skillpack.skillmd.skill import Skill, parse_skill
from skillpack.source.load import parse_skill_file

WAITLIST = parse_skill_file(REPO / "fixtures" / "waitlist")

DEPLOY_MD = """---
skill: deploy
description: Deploy a build and post a note about it.
---

Deploy with:

```tool
id: deploy
description: Deploy a build.
params:
  replicas:
    type: integer
    enum: 1, 2, 4
    default: 1
  ratio:
    type: number
    default: 0.5
  dry_run:
    type: boolean
    default: false
  channel:
    type: string
    enum: 7, 9
    default: 7
  message:
    type: string
run: deploy --replicas=$replicas --ratio $ratio --dry-run=$dry_run -c $channel -m $message
```

```tool
id: price
description: Show a price in dollars.
params:
  amount:
    type: number
run:
  - printf
  - $$%s\\n
  - $amount
```
"""


@pytest.fixture(scope="module")
def deploy(tmp_path_factory: pytest.TempPathFactory) -> Skill:
    return parse_skill_file(write_skill(tmp_path_factory.mktemp("deploy"), DEPLOY_MD))


def call(skill: Any, answer: Any) -> Call:
    found = resolve(skill, answer)
    assert found is not None
    return found


def refused(skill: Any, answer: Any) -> str:
    with pytest.raises(SkillError) as info:
        resolve(skill, answer)
    assert info.value.problems, "a refused call carries its problems"
    return info.value.message


def deploy_args(**args: Any) -> dict[str, Any]:
    return {"tool": "deploy", "args": {"message": "hi", **args}}


# -- validation: what Tool.validate enforces, seen through resolve ---------------------------

def test_defaults_are_filled_and_rendered() -> None:
    got = call(WAITLIST, {"tool": "list", "args": {}})
    assert got.args == {"limit": 20, "status": "waiting"}
    assert got.argv == ["python3", "scripts/waitlist.py", "list", "--limit=20", "--status=waiting"]


def test_missing_args_is_no_arguments() -> None:
    assert call(WAITLIST, {"tool": "count"}).argv[3] == "want=waiting"


def test_string_enum_refused_with_the_model_facing_message() -> None:
    answer = {"tool": "access", "args": {"email": "ada@example.com", "operation": "approve"}}
    assert refused(WAITLIST, answer) == (
        "tool 'access': 'operation' must be one of accept, reject; got 'approve'"
    )


def test_dollar_param_inside_a_word() -> None:
    got = call(WAITLIST, {"tool": "access", "args": {"email": "a@b.c", "operation": "reject"}})
    assert got.argv == ["python3", "scripts/waitlist.py", "--reject", "a@b.c"]


def test_integer_enum_checked_after_coercion(deploy: Skill) -> None:
    assert call(deploy, deploy_args(replicas="2")).args["replicas"] == 2
    assert call(deploy, deploy_args(replicas=4.0)).args["replicas"] == 4
    assert call(deploy, deploy_args(replicas=4)).argv[1] == "--replicas=4"
    assert refused(deploy, deploy_args(replicas=3)) == (
        "tool 'deploy': 'replicas' must be one of 1, 2, 4; got 3"
    )
    assert "must be one of 1, 2, 4" in refused(deploy, deploy_args(replicas="3"))


def test_string_enum_of_digits_takes_a_number(deploy: Skill) -> None:
    got = call(deploy, deploy_args(channel=9))
    assert got.args["channel"] == "9"
    assert got.argv[6] == "9"
    assert "'channel' must be one of 7, 9; got 8" in refused(deploy, deploy_args(channel=8))


def test_integer_coercion(deploy: Skill) -> None:
    assert call(WAITLIST, {"tool": "list", "args": {"limit": "5"}}).args["limit"] == 5
    assert call(WAITLIST, {"tool": "list", "args": {"limit": " -3 "}}).args["limit"] == -3
    assert call(WAITLIST, {"tool": "list", "args": {"limit": 5.0}}).argv[3] == "--limit=5"
    for bad, shown in (("0x10", "'0x10'"), (5.5, "5.5"), ("5.0", "'5.0'"), (True, "true"),
                       ("1_000", "'1_000'"), ("", "''")):
        assert refused(WAITLIST, {"tool": "list", "args": {"limit": bad}}) == (
            f"tool 'list': 'limit' must be an integer; got {shown}"
        )


def test_boolean_coercion(deploy: Skill) -> None:
    assert call(deploy, deploy_args(dry_run="true")).args["dry_run"] is True
    assert call(deploy, deploy_args(dry_run="False")).args["dry_run"] is False
    assert call(deploy, deploy_args(dry_run=True)).argv[4] == "--dry-run=true"
    for bad in ("yes", 1, 0, "1"):
        assert "'dry_run' must be true or false" in refused(deploy, deploy_args(dry_run=bad))


def test_number_coercion_has_no_infinity_nan_or_hex(deploy: Skill) -> None:
    assert call(deploy, deploy_args(ratio="0.25")).args["ratio"] == 0.25
    assert call(deploy, deploy_args(ratio="1e-3")).argv[3] == "0.001"
    assert call(deploy, deploy_args(ratio=2)).argv[3] == "2"
    for bad in ("Infinity", "-Infinity", "NaN", "inf", "nan", "0x10", "1e999", float("inf"),
                float("nan")):
        assert "'ratio' must be a number" in refused(deploy, deploy_args(ratio=bad))


def test_nan_and_infinity_literals_are_not_json(deploy: Skill) -> None:
    text = '{"tool": "deploy", "args": {"message": "hi", "ratio": NaN}}'
    assert "not valid JSON (NaN is not a JSON value)" in refused(deploy, text)
    text = '```json\n{"tool": "deploy", "args": {"message": "hi", "ratio": Infinity}}\n```'
    assert "not valid JSON" in refused(deploy, text)


def test_required_enforced_and_every_problem_listed() -> None:
    message = refused(WAITLIST, {"tool": "access", "args": {"note": "x"}})
    assert message == (
        "tool 'access': unknown argument 'note'; it takes email, operation; "
        "tool 'access': missing required argument 'email'; "
        "tool 'access': missing required argument 'operation'"
    )


def test_null_means_the_default() -> None:
    got = call(WAITLIST, {"tool": "join", "args": {"email": "a@b.c", "note": None}})
    assert got.args["note"] == "none given"
    assert "missing required argument 'email'" in refused(
        WAITLIST, {"tool": "join", "args": {"email": None}})


def test_unknown_argument_refused() -> None:
    assert refused(WAITLIST, {"tool": "list", "args": {"limit": 3, "colour": "red"}}) == (
        "tool 'list': unknown argument 'colour'; it takes limit, status"
    )


def test_arguments_must_be_an_object() -> None:
    for args in ([1, 2], "[1, 2]", 5):
        assert refused(WAITLIST, {"name": "list", "arguments": args}) == (
            "tool 'list': the arguments must be a JSON object of named values"
        )


def test_unknown_tool_lists_the_tool_ids() -> None:
    assert refused(WAITLIST, '{"tool": "delete", "args": {}}') == (
        "unknown tool 'delete'; the tools are join, list, access, count"
    )
    assert refused(WAITLIST.tools[:1], {"name": "approve", "input": {}}) == (
        "unknown tool 'approve'; the tools are join"
    )
    assert "this skill has no tools" in refused([], {"tool": "x"})


def test_a_call_must_name_its_tool() -> None:
    for answer in ({"tool": None}, {"tool": 3, "args": {}}, {"type": "tool_use", "input": {}},
                   {"tool": ""}):
        assert refused(WAITLIST, answer).startswith("the call does not name its tool")


# -- argv: list-form runs, $$, spaces ---------------------------------------------------------

def test_list_form_run_keeps_each_item_one_word_and_dollar_dollar_literal() -> None:
    got = call(WAITLIST, {"tool": "count", "args": {"status": "accepted"}})
    assert got.argv == [
        "awk", "-F,", "-v", "want=accepted", "$3 == want { n++ } END { print n+0 }",
        "data/waitlist.csv",
    ]


def test_dollar_dollar_next_to_a_param(deploy: Skill) -> None:
    assert call(deploy, {"tool": "price", "args": {"amount": "3.5"}}).argv == [
        "printf", "$%s\\n", "3.5"]


def test_values_with_spaces_and_shell_syntax_stay_one_word() -> None:
    note = "I'd love it; rm -rf / && echo $HOME `id` \"quoted\"\nsecond line"
    got = call(WAITLIST, {"tool": "join", "args": {"email": "a b@example.com", "note": note}})
    assert got.argv == ["python3", "scripts/waitlist.py", "join", "--email", "a b@example.com",
                        "--note", note]


def test_argv_is_derived_never_taken_from_the_answer() -> None:
    answer = {"tool": "list", "args": {"limit": 2}, "argv": ["rm", "-rf", "/"]}
    assert call(WAITLIST, answer).argv[0] == "python3"


# -- answer shapes ------------------------------------------------------------------------------

ACCESS = {"email": "ada@example.com", "operation": "accept"}
ACCESS_ARGV = ["python3", "scripts/waitlist.py", "--accept", "ada@example.com"]
ACCESS_JSON = json.dumps({"tool": "access", "args": ACCESS})

SHAPES: dict[str, Any] = {
    "bare json": ACCESS_JSON,
    "bare json with blank lines": f"\n\n  {ACCESS_JSON}  \n",
    "json fence": f"```json\n{ACCESS_JSON}\n```",
    "JSON fence with info": f"```JSON title=call\n{ACCESS_JSON}\n```",
    "unlabelled fence": f"```\n{ACCESS_JSON}\n```",
    "tilde fence": f"~~~json\n{ACCESS_JSON}\n~~~",
    "unclosed fence": f"Calling it now:\n```json\n{ACCESS_JSON}\n",
    "indented pretty fence": "  ```json\n" + json.dumps({"tool": "access", "args": ACCESS},
                                                        indent=4) + "\n  ```",
    "crlf fence": f"Sure.\r\n```json\r\n{ACCESS_JSON}\r\n```\r\n",
    "prose around": f"I'll accept Ada now. {ACCESS_JSON} Let me know if that's wrong.",
    "prose and fence": f"Accepting.\n\n```json\n{ACCESS_JSON}\n```\n\nThat should do it.",
    "inline backticks": f"Here: ```json {ACCESS_JSON}``` done",
    "tool/args dict": {"tool": "access", "args": ACCESS},
    "tool/arguments string": {"tool": "access", "arguments": json.dumps(ACCESS)},
    "anthropic tool_use": {"type": "tool_use", "id": "toolu_01", "name": "access",
                           "input": ACCESS},
    "anthropic without type": {"name": "access", "input": ACCESS},
    "anthropic content list": [{"type": "text", "text": "Accepting Ada."},
                               {"type": "tool_use", "id": "toolu_01", "name": "access",
                                "input": ACCESS}],
    "anthropic message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_01", "name": "access", "input": ACCESS}]},
    "openai function": {"name": "access", "arguments": json.dumps(ACCESS)},
    "openai tool call": {"id": "call_1", "type": "function",
                         "function": {"name": "access", "arguments": json.dumps(ACCESS)}},
    "openai message": {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "access", "arguments": json.dumps(ACCESS)}}]},
    "openai responses item": {"type": "function_call", "call_id": "c1", "name": "access",
                              "arguments": json.dumps(ACCESS)},
    "mcp tools/call params": {"name": "access", "arguments": ACCESS},
    "llama name/parameters": json.dumps({"name": "access", "parameters": ACCESS}),
    "hermes tags": f"<tool_call>\n{ACCESS_JSON}\n</tool_call>",
    "openai message as text": json.dumps({"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "access", "arguments": json.dumps(ACCESS)}}]}),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_answer_shapes(shape: str) -> None:
    got = call(WAITLIST, SHAPES[shape])
    assert got.tool is WAITLIST.tool("access")
    assert got.args == ACCESS
    assert got.argv == ACCESS_ARGV


def test_sdk_objects_are_read_through_model_dump() -> None:
    class Block:  # what the Anthropic and OpenAI SDKs hand back (pydantic models)
        def model_dump(self) -> dict[str, Any]:
            return {"type": "tool_use", "id": "toolu_1", "name": "access", "input": ACCESS}

    assert call(WAITLIST, [Block()]).argv == ACCESS_ARGV


def test_tools_as_a_sequence_of_tools_or_one_tool() -> None:
    assert call(list(WAITLIST.tools), ACCESS_JSON).argv == ACCESS_ARGV
    access = WAITLIST.tool("access")
    assert access is not None
    assert call(access, ACCESS_JSON).argv == ACCESS_ARGV


NO_CALL: dict[str, Any] = {
    "plain text": "Ada is on the waitlist; nothing to do.",
    "empty": "",
    "none": None,
    "number": 42,
    "json without a tool key": 'The row is {"email": "ada@example.com", "note": "hi"}.',
    "name without arguments": '{"name": "Ada", "email": "ada@example.com"}',
    "json fence of data": '```json\n{"status": "waiting", "count": 3}\n```',
    "python fence": '```python\nrun({"tool": "access", "args": {}})\n```',
    "braces in prose": "Use {braces} and {{templates}} freely; {not json",
    "text block": {"type": "text", "text": "All done."},
    "thinking block": {"type": "thinking", "thinking": "{\"tool\": \"access\"}"},
    "empty list": [],
}


@pytest.mark.parametrize("shape", list(NO_CALL))
def test_no_call_is_none(shape: str) -> None:
    assert resolve(WAITLIST, NO_CALL[shape]) is None


MALFORMED: dict[str, tuple[Any, str]] = {
    "json fence that does not parse": (
        '```json\n{"tool": "access", "args": {"email": "a@b.c",}}\n```',
        "the ```json block is not valid JSON (Expecting property name enclosed in double "
        "quotes at line 1, column 46); write the call as one JSON object: "
        '{"tool": "<tool id>", "args": {...}}'),
    "json fence of non-call that does not parse": (
        "```json\n{status: waiting}\n```", "the ```json block is not valid JSON"),
    "bare call cut short": (
        'Sure: {"tool": "access", "args": {"email": "a@b.c", "operation": "accept"}',
        "the tool call is not valid JSON (Expecting ',' delimiter"),
    "single quotes": ("{'tool': 'list', 'args': {}}", "the tool call is not valid JSON"),
    "duplicate key": ('{"tool": "list", "tool": "access"}',
                      "the tool call is not valid JSON (the key 'tool' appears twice)"),
    "openai arguments not json": (
        {"function": {"name": "access", "arguments": "{email: a}"}},
        "tool 'access': the arguments are not valid JSON (Expecting property name"),
    "arguments given twice": ({"name": "list", "input": {}, "arguments": {}},
                              'the call gives its arguments twice ("input" and "arguments")'),
    "flattened arguments": (
        {"tool": "access", "email": "a@b.c", "operation": "accept"},
        'tool \'access\': put the arguments under "args": {"tool": "access", "args": {...}}; '
        "unexpected keys 'email', 'operation'"),
    "function type without function": ({"type": "function", "id": "call_1"},
                                       'a "function" tool call must hold'),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_calls_are_errors_not_none(case: str) -> None:
    answer, expected = MALFORMED[case]
    assert refused(WAITLIST, answer).startswith(expected)


def test_more_than_one_call_is_refused() -> None:
    two = '{"tool": "list", "args": {}}\nthen\n```json\n{"tool": "count"}\n```'
    assert refused(WAITLIST, two) == (
        "the answer holds 2 tool calls (list, count); make one call per answer and wait for "
        "its result before the next"
    )
    blocks = [{"type": "tool_use", "name": "list", "input": {}},
              {"type": "tool_use", "name": "count", "input": {}}]
    assert "2 tool calls (list, count)" in refused(WAITLIST, blocks)
    assert "2 tool calls" in refused(WAITLIST, '[{"tool": "list"}, {"tool": "count"}]')


def test_round_trip_through_to_dict() -> None:
    got = call(WAITLIST, {"tool": "join", "args": {"email": "a@b.c"}})
    data = got.to_dict()
    assert data == {"tool": "join", "args": {"email": "a@b.c", "note": "none given"},
                    "argv": ["python3", "scripts/waitlist.py", "join", "--email", "a@b.c",
                             "--note", "none given"]}
    assert json.loads(json.dumps(data)) == data
    assert resolve(WAITLIST, data) == got
    assert Call.from_dict(data, WAITLIST) == got
    with pytest.raises(SkillError):
        Call.from_dict({"argv": ["ls"]}, WAITLIST)


def test_nothing_is_executed(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    skill = parse_skill(
        "---\nskill: touch\ndescription: Touch a file.\n---\n\n```tool\nid: touch\n"
        "description: Touch a file.\nparams:\n  path:\n    type: string\nrun: touch $path\n```\n"
    )
    got = call(skill, {"tool": "touch", "args": {"path": str(marker)}})
    assert got.argv == ["touch", str(marker)]
    assert not marker.exists()
