"""Tool fences: which fences are tools, and the hard-skill line format inside them."""

from __future__ import annotations

import pytest
from helpers.paths import CORPUS, FIXTURES
from hypothesis import given
from hypothesis import strategies as st

from skillpack.errors import SkillError
from skillpack.skillmd.fence_probe import opens_a_tool_fence
from skillpack.skillmd.fences import _FENCE, parse_body
from skillpack.skillmd.skill import Skill, parse_skill
from skillpack.skillmd.tools import Param, Tool
from skillpack.source.load import parse_skill_file

HEAD = "---\nname: demo\ndescription: A demo.\n---\n"  # the body starts on line 5


def skill(body: str) -> Skill:
    return parse_skill(HEAD + body)


def fence(*lines: str, marker: str = "```") -> str:
    return f"{marker}tool\n" + "\n".join(lines) + f"\n{marker}\n"


def problems(body: str) -> list[tuple[str, int | None, str]]:
    with pytest.raises(SkillError) as info:
        skill(body)
    return [(p.code, p.line, p.message) for p in info.value.problems]


HELLO = ("id: hello", "description: Say hello.", "run: echo hello")


def test_waitlist_tools() -> None:
    waitlist = parse_skill_file(FIXTURES / "waitlist")
    assert [t.id for t in waitlist.tools] == ["join", "list", "access", "count"]
    join, listing, access, count = waitlist.tools
    assert join == Tool(
        "join", "Add a person to the waitlist.",
        (Param("email", "string", "email", None, "The person's email address.", None),
         Param("note", "string", None, None, "Why they want access, in their words.",
               "none given")),
        "python3 scripts/waitlist.py join --email $email --note $note")
    assert listing.run == ("python3", "scripts/waitlist.py", "list", "--limit=$limit",
                           "--status=$status")
    assert listing.params[0].default == 20
    assert listing.params[1].enum == ("waiting", "accepted", "rejected")
    assert access.params[1].enum == ("accept", "reject")
    assert count.params == (Param("status", "string", None,
                                  ("waiting", "accepted", "rejected"), None, "waiting"),)
    assert count.run[4] == "$$3 == want { n++ } END { print n+0 }"
    assert [t.line for t in waitlist.tools] == [15, 32, 54, 69]


def test_rendered_replaces_each_tool_fence_by_its_id() -> None:
    waitlist = parse_skill_file(FIXTURES / "waitlist")
    rendered = waitlist.rendered
    for tool_id in ("join", "list", "access", "count"):
        assert f"\n{tool_id}\n" in rendered
    assert "```tool\nid: join" not in rendered
    assert "run: python3" not in rendered
    # the example inside the 4-backtick fence is prose and stays as written
    assert "````markdown\n```tool\nid: example-only" in rendered
    assert waitlist.body.count("```tool") == 5
    assert rendered.count("```tool") == 1
    body = "Intro.\n\n" + fence(*HELLO) + "\nAfter.\n"
    assert skill(body).rendered == "Intro.\n\nhello\n\nAfter.\n"
    assert skill(body).body == body


@pytest.mark.parametrize(
    "body",
    [
        "````markdown\n" + fence(*HELLO) + "````\n",
        "~~~\n" + fence(*HELLO) + "~~~\n",
        "```\n" + "```tool\nid: hello\n",  # an open plain fence runs to the end
        "    ```tool\n    id: hello\n    ```\n",  # indented code, not a fence
        fence(*HELLO).replace("```tool", "```tool extra"),
        fence(*HELLO).replace("```tool", "```Tool"),
        fence(*HELLO).replace("```tool", "```python"),
    ],
    ids=["four-backticks", "tildes", "unclosed-outer", "indented", "info-extra", "capital",
         "python"],
)
def test_only_top_level_tool_fences_are_tools(body: str) -> None:
    parsed = skill(body)
    assert parsed.tools == ()
    assert parsed.rendered == body


def test_other_fence_markers_open_tools_too() -> None:
    assert [t.id for t in skill(fence(*HELLO, marker="~~~")).tools] == ["hello"]
    assert [t.id for t in skill(fence(*HELLO, marker="````")).tools] == ["hello"]
    assert [t.id for t in skill("  " + fence(*HELLO)).tools] == ["hello"]
    # a shorter closing line does not close a longer fence
    assert problems("````tool\nid: a\ndescription: d\nrun: echo\n```\n") == [
        ("tool-unterminated", 5,
         "the tool fence opened here is never closed: add a ```` line after it")]


def test_values_are_verbatim_and_split_at_the_first_colon_space() -> None:
    (tool,) = skill(fence(
        "id: quote",
        'description: "Quoted": keeps its quotes, and: colons.',
        "run: awk -F: '{print $$1}' a:b",
    )).tools
    assert tool.description == '"Quoted": keeps its quotes, and: colons.'
    assert tool.run == "awk -F: '{print $$1}' a:b"
    assert tool.words == ("awk", "-F:", "'{print", "$$1}'", "a:b")


def test_run_list_items_are_argv_words_verbatim() -> None:
    (tool,) = skill(fence(
        "id: py", "description: d", "run:", "  - python3", "  - -c",
        "  - import sys; print(sys.argv[1:]) # 'quotes' \"stay\"", "  -   leading",
    )).tools
    assert tool.run == ("python3", "-c", "import sys; print(sys.argv[1:]) # 'quotes' \"stay\"",
                        "  leading")


def test_blank_lines_and_trailing_blanks_are_ignored() -> None:
    (tool,) = skill(fence(
        "", "id: hello   ", "", "description: Say hello.\t", "", "params:", "",
        "  who:", "", "    default: world", "", "run:", "", "  - echo", "", "  - $who", "",
    )).tools
    assert (tool.id, tool.description, tool.run) == ("hello", "Say hello.", ("echo", "$who"))
    assert tool.params == (Param("who", default="world"),)


def test_param_keys_and_types() -> None:
    (tool,) = skill(fence(
        "id: typed", "description: d", "params:",
        "  text:", "    description: Free text.", "    format: uri",
        "  count:", "    type: integer", "    default: -3",
        "  ratio:", "    type: number", "    enum: 0.5, 1, 2.5", "    default: 1",
        "  flag:", "    type: boolean", "    default: false",
        "run: tool $text $count $ratio $flag",
    )).tools
    text, count, ratio, flag = tool.params
    assert text == Param("text", "string", "uri", None, "Free text.", None)
    assert text.required
    assert (count.type, count.default, count.required) == ("integer", -3, False)
    assert ratio.enum == (0.5, 1, 2.5)
    assert ratio.default == 1 and isinstance(ratio.default, int)
    assert flag.default is False and not flag.required
    assert tool.schema == {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "Free text.", "format": "uri"},
            "count": {"type": "integer", "default": -3},
            "ratio": {"type": "number", "enum": [0.5, 1, 2.5], "default": 1},
            "flag": {"type": "boolean", "default": False},
        },
        "required": ["text"],
        "additionalProperties": False,
    }


def test_a_tool_without_params() -> None:
    (tool,) = skill(fence(*HELLO)).tools
    assert tool.params == ()
    assert tool.schema == {"type": "object", "properties": {}, "required": [],
                           "additionalProperties": False}


# (lines of the fence body, [(code, line, message)]); the fence opens on line 5
SYNTAX_ERRORS: list[tuple[tuple[str, ...], list[tuple[str, int, str]]]] = [
    (("id: a", "description: d", "timeout: 3", "run: echo"),
     [("tool-syntax", 8, "'timeout: 3' is not a tool line: expected 'id: ...', "
       "'description: ...', 'params:' or 'run: ...'")]),
    (("id: a", "description: d", "just some words", "run: echo"),
     [("tool-syntax", 8, "'just some words' is not a tool line: expected 'id: ...', "
       "'description: ...', 'params:' or 'run: ...'")]),
    (("id:a", "description: d", "run: echo"),
     [("tool-syntax", 6, "'id:a' is not a tool line: expected 'id: ...', 'description: ...', "
       "'params:' or 'run: ...'"),
      ("tool-missing-field", 5, "the tool fence has no 'id:' line")]),
    (("id: a", "id: b", "description: d", "run: echo"),
     [("tool-syntax", 7, "'id' is set twice in this tool")]),
    (("id: a", "description: d", "params: x", "run: echo"),
     [("tool-syntax", 8, "'params:' takes no value on its line; list the params below it, "
       "each name at two spaces")]),
    (("id: a", "description: d", "  - echo"),
     [("tool-syntax", 8, "'- echo' is a run item outside 'run:'"),
      ("tool-missing-field", 5, "the tool fence has no 'run:' line")]),
    (("id: a", "description: d", "params:", "  x:", "   type: string", "run: echo $x"),
     [("tool-syntax", 10, "'type: string' is not a tool line: expected 'id: ...', "
       "'description: ...', 'params:' or 'run: ...'")]),
    (("id: a", "description: d", "params:", "    type: string", "run: echo"),
     [("tool-syntax", 9, "'type: string' belongs to no param")]),
    (("id: a", "description: d", "params:", "  x-y:", "run: echo"),
     [("tool-syntax", 9, "'x-y:' is not a param name line: write the name at two spaces, "
       "followed by ':' (letters, digits, _)")]),
    (("id: a", "description: d", "params:", "  x:", "    kind: string", "run: echo $x"),
     [("tool-syntax", 10, "param 'x': 'kind: string' is not one of 'type: ...', "
       "'format: ...', 'enum: ...', 'description: ...', 'default: ...'")]),
    (("id: a", "description: d", "params:", "  x:", "    default:", "run: echo $x"),
     [("tool-syntax", 10, "param 'x': 'default:' has no value; write 'default: ...' or "
       "leave the line out")]),
    (("id: a", "description: d", "params:", "  x:", "    type: string", "    type: integer",
      "run: echo $x"),
     [("tool-syntax", 11, "param 'x' sets 'type' twice")]),
    (("id: a", "description: d", "params:", "  x:", "  x:", "run: echo $x"),
     [("tool-syntax", 10, "param 'x' is declared twice")]),
    (("description: d", "run: echo"),
     [("tool-missing-field", 5, "the tool fence has no 'id:' line")]),
    (("id: a", "description:  ", "run: echo"),
     [("tool-syntax", 7, "'description:' is not a tool line: expected 'id: ...', "
       "'description: ...', 'params:' or 'run: ...'"),
      ("tool-missing-field", 5, "the tool fence has no 'description:' line")]),
    (("id: a", "description: d", "run:", "  -", "  - echo"),
     [("tool-run-empty", 8, "tool 'a': 'run' names no command")]),
    (("id: " + "a" * 65, "description: d", "run: echo"),
     [("tool-id", 6, f"tool id '{'a' * 65}' must be 1-64 letters, digits, '_' or '-'")]),
]


@pytest.mark.parametrize(("lines", "expected"), SYNTAX_ERRORS,
                         ids=[str(i) for i in range(len(SYNTAX_ERRORS))])
def test_any_other_line_is_an_error_naming_it(
    lines: tuple[str, ...], expected: list[tuple[str, int, str]]
) -> None:
    assert problems(fence(*lines)) == expected


def test_params_checked_both_ways() -> None:
    found = problems(fence(
        "id: write", "description: d", "params:", "  path:", "  content:",
        "run: tee $path $other $$literal",
    ))
    assert found == [
        ("tool-undeclared-param", 11,
         "tool 'write': run uses $other, which is not a declared param (write $$ for a "
         "literal $)"),
        ("tool-unused-param", 10,
         "tool 'write': param 'content' is declared but never used in run"),
    ]


def test_dollar_forms_in_run_are_checked_as_written() -> None:
    # $$name is a literal "$name"; "$" alone, "$1" and "${" are literal text
    (tool,) = skill(fence("id: a", "description: d", "run: echo $$name $ $1 ${x} cost$")).tools
    assert tool.argv({}) == ["echo", "$name", "$", "$1", "${x}", "cost$"]


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (("    type: float",),
         ("tool-param-type", 10, "tool 'a': param 'x': type 'float' must be string, integer, "
          "number or boolean")),
        (("    type: integer", "    enum: 1, two"),
         ("tool-param-enum", 11, "tool 'a': param 'x': enum item 'two' is not an integer")),
        (("    enum: a,,b",),
         ("tool-param-enum", 10, "tool 'a': param 'x': enum has an empty item; separate the "
          "items with single commas")),
        (("    type: boolean", "    default: maybe"),
         ("tool-param-default", 11, "tool 'a': param 'x': default 'maybe' is not a boolean")),
        (("    type: number", "    default: Infinity"),
         ("tool-param-default", 11, "tool 'a': param 'x': default 'Infinity' is not a number")),
        (("    type: integer", "    default: " + "9" * 5000),
         ("tool-param-default", 11, f"tool 'a': param 'x': default '{'9' * 5000}' is not an "
          "integer")),
        (("    type: integer", "    enum: 1, 2", "    default: 3"),
         ("tool-param-default", 12, "tool 'a': param 'x': default '3' must be one of 1, 2")),
    ],
    ids=["type", "enum-item", "enum-empty", "default-boolean", "default-infinity",
         "default-huge", "default-not-in-enum"],
)
def test_param_type_enum_default_errors(
    keys: tuple[str, ...], expected: tuple[str, int, str]
) -> None:
    found = problems(fence("id: a", "description: d", "params:", "  x:", *keys, "run: echo $x"))
    assert found == [expected]


def test_defaults_are_converted_and_must_fit_the_enum() -> None:
    (tool,) = skill(fence(
        "id: a", "description: d", "params:",
        "  n:", "    type: integer", "    enum: 1, 2, 3", "    default: 2",
        "  b:", "    type: boolean", "    default: TRUE",
        "  s:", "    enum: x y, z", "    default: x y",
        "run: echo $n $b $s",
    )).tools
    assert [p.default for p in tool.params] == [2, True, "x y"]
    assert tool.params[2].enum == ("x y", "z")


def test_duplicate_tool_ids() -> None:
    found = problems(fence(*HELLO) + "\n" + fence(*HELLO))
    assert found == [("tool-duplicate-id", 11, "tool id 'hello' is declared twice (lines 5 "
                      "and 11); give each tool its own id")]


def test_every_fence_problem_is_reported_at_once() -> None:
    found = problems(fence("id: a", "run: echo $x") + fence("id: b b", "description: d",
                                                           "run: echo"))
    assert [(code, line) for code, line, _ in found] == [
        ("tool-missing-field", 5), ("tool-undeclared-param", 7), ("tool-id", 10)]


def test_parse_body_directly() -> None:
    parsed = parse_body("a\n" + fence(*HELLO) + "b", file="f.md", first_line=10)
    assert parsed.rendered == "a\nhello\nb"
    assert [t.line for t in parsed.tools] == [11]
    assert parsed.problems == ()


# -- the fast path: a body with no line that could open a tool fence ---------------------------

_LINE_PIECES = ["```", "````", "~~~", "   ```", "    ```", "tool", " tool ", "tool\r", "tools",
                "```tool", "~~~ tool", "``` tool`", "\u00a0tool", "x", "id: a", "run: echo $x",
                "\t", " ", "`", "~", "tool\x0b", "tool\u2003", "tool\x1c", "```\ttool\x85"]


@given(st.lists(st.lists(st.sampled_from(_LINE_PIECES) | st.text(max_size=3), max_size=4)
                .map("".join), max_size=12).map("\n".join))
def test_the_prefilter_never_hides_a_tool_fence(body: str) -> None:
    """parse_body skips the line-by-line parse when no line could open a tool fence: that
    must give exactly what the line-by-line parse gives."""
    from skillpack.skillmd.fences import _parse_lines

    assert parse_body(body, file="SKILL.md", first_line=3) == _parse_lines(body, "SKILL.md", 3)


@pytest.mark.corpus
def test_the_prefilter_finds_every_fixture_and_corpus_tool_fence() -> None:

    from skillpack.skillmd.fences import _parse_lines

    texts = [p.read_bytes().decode("utf-8", "replace") for p in sorted(
        [*CORPUS.glob("*/*/SKILL.md"), *FIXTURES.rglob("SKILL.md")])]
    assert len(texts) > 200
    assert [parse_body(t) for t in texts] == [_parse_lines(t, None, 1) for t in texts]
    assert sum(1 for t in texts if parse_body(t).tools) >= 2  # the hard-skill fixtures


@given(st.lists(st.sampled_from(_LINE_PIECES) | st.text(max_size=3), max_size=5).map("".join))
def test_a_line_opens_a_tool_fence_as_the_fence_pattern_reads_it(line: str) -> None:
    line = line.replace("\n", "")
    match = _FENCE.match(line)
    assert opens_a_tool_fence(line) == (match is not None and match.group(3).strip() == "tool")
