"""Hostile SKILL.md text and hostile model answers: nothing but `SkillError` escapes.

* hypothesis builds YAML frontmatter from YAML's own constructs (anchors, aliases, tags,
  flow and block collections, multi-line scalars, deep nesting, odd characters) and feeds it
  to `split_frontmatter` and `parse_skill`, and to a loaded bundle's `description`;
* hypothesis builds model answers in every shape `resolve` reads, with hostile argument
  values; a call that comes back runs exactly the approved program, each value one word;
* YAML aliases (billion laughs) and oversized frontmatter are refused before any expansion:
  the proof counts the YAML nodes composed (no timing; benchmarks/bench_parse.py times it).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.hostile import DEMO_MD, TALLY, demo_skill, files_under
from helpers.zips import build, change, members_of, reseal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skillpack.skillmd.frontmatter
from skillpack.errors import IntegrityError, SkillError, SkillpackError
from skillpack.model.calls import resolve
from skillpack.packing.pack import pack
from skillpack.packing.verify import verify_bytes
from skillpack.runtime import load
from skillpack.skillmd.frontmatter import MAX_FRONTMATTER_BYTES, split_frontmatter
from skillpack.skillmd.skill import parse_skill

SETTINGS = settings(max_examples=250, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
FUZZ: Counter[str] = Counter()  # inputs each property test was given, for the tally


@pytest.fixture(scope="module", autouse=True)
def _count_fuzzed_inputs() -> Iterator[None]:
    yield
    for case, count in FUZZ.items():
        TALLY.add("parser", f"hypothesis: {case}", "property", "handled",
                  "nothing but SkillError escaped", count=count)

# -- YAML built from YAML's constructs ---------------------------------------------------------

SPECIAL = st.sampled_from([
    "yes", "no", "on", "~", "null", "1.10", "0o17", "0x1F", ".inf", "-.nan", "1e999",
    "9" * 400, "2024-01-01", "'quoted'", '"dq \\x00 \\ud800"', "|", ">-", "&a x", "*a",
    "!!python/object:os.system", "!!binary aGk=", "!custom x", "? complex", "- item",
    "key: value", "[a, b", "{a: 1", "#comment", "@reserved", "`backtick", "%TAG",
    "\x00", "\x85", "\u2028", "\ufeff", "\ud800", "\u00e9", "\U0001f600", "\t", "\\",
])
WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 .-_/", min_size=1, max_size=12
                ).map(str.strip).filter(bool)
SCALARS = st.one_of(WORDS, WORDS, WORDS.map(json.dumps), st.text(max_size=8).map(json.dumps),
                    SPECIAL)
KEYS = st.one_of(st.sampled_from(["name", "description", "skill", "includes", "metadata",
                                  "allowed-tools", "license", "compatibility"]),
                 st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True),
                 st.sampled_from(["<<", "? x", "&k key", "*k", "!!str key", '"quoted key"',
                                  "- x", "a: b", "[k]", "{k: v}", "\x00", "\u00e9"]))


def _block(value: Any, indent: int) -> str:
    pad = " " * indent
    if isinstance(value, dict):
        return "".join(f"\n{pad}{k}:{_block(v, indent + 2)}" for k, v in value.items())
    if isinstance(value, list):
        return "".join(f"\n{pad}-{_block(v, indent + 2)}" for v in value)
    return f" {value}"


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return str(value)


NODES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)), max_leaves=20)


@st.composite
def frontmatters(draw: st.DrawFn) -> str:
    """A frontmatter text: a mapping written in block or flow style, with anchors, aliases,
    tags, deep nesting or long lines spliced in."""
    top = draw(st.dictionaries(KEYS, NODES, min_size=1, max_size=6))
    text = _flow(top) if draw(st.booleans()) else _block(top, 0)
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        splice = draw(st.sampled_from([
            "&a [x, x, x]", "*a", "<<: *a", "!!map {a: 1}", "!!set {a}", "? [a]: b",
            "[" * 200 + "]" * 200, "{a: " * 100 + "}" * 100, "\n  " + "- " * 300 + "x",
            "\n---\n", "\n...\n", "%YAML 1.1\n", "'unterminated", '"\\', "\t", "\r", "\x00",
        ]))
        text = text[:at] + splice + text[at:]
    return text


def only_skill_error(call: Any) -> Any:
    try:
        return call()
    except SkillError as err:
        assert err.problems and all(p.code and p.message for p in err.problems)
        return None


@SETTINGS
@given(frontmatters(), st.text(max_size=40))
def test_frontmatter_built_from_yaml_constructs(front: str, body: str) -> None:
    FUZZ["frontmatter built from YAML constructs (split_frontmatter, parse_skill)"] += 1
    text = f"---\n{front}\n---\n{body}"
    parsed = only_skill_error(lambda: split_frontmatter(text, file="SKILL.md"))
    if parsed is not None:  # what parses holds strings, lists and dicts only
        _plain(parsed.data)
    only_skill_error(lambda: parse_skill(text, file="SKILL.md"))


def _plain(value: Any) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            assert isinstance(key, str)
            _plain(item)
    elif isinstance(value, list):
        for item in value:
            _plain(item)
    else:
        assert isinstance(value, str), type(value)


@SETTINGS
@given(st.text(alphabet=st.characters(), max_size=300))
def test_any_text_with_surrogates_and_controls(text: str) -> None:
    """`parse_skill` takes a str: even lone surrogates and NULs give a SkillError at most."""
    FUZZ["any text with surrogates and control characters (parse_skill)"] += 1
    only_skill_error(lambda: parse_skill("---\nname: x\ndescription: " + text + "\n---\n" + text))
    only_skill_error(lambda: parse_skill(text))


# -- YAML aliases (billion laughs) and oversized frontmatter --------------------------------------

LAUGHS = "\n".join(["name: demo", "description: lol", 'a: &a ["lol","lol","lol","lol","lol"]']
                   + [f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]"
                      for i in range(9)])
ALIAS_ONLY = "name: demo\ndescription: *undefined\nx: *a\n"
MERGE = "name: demo\nbase: &base {description: x}\n<<: *base\n"


@pytest.fixture
def composed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many YAML nodes the composer builds during the test (the work a parse does)."""
    count = [0]
    real = yaml.composer.Composer.compose_node

    def compose_node(self: Any, parent: Any, index: Any) -> Any:
        count[0] += 1
        return real(self, parent, index)

    monkeypatch.setattr(yaml.composer.Composer, "compose_node", compose_node)
    return count


@pytest.mark.parametrize("case, yaml_text, code, line", [
    ("billion laughs", LAUGHS, "yaml-anchor", 4),
    ("alias without an anchor", ALIAS_ONLY, "yaml-alias", 3),
    ("merge key through an alias", MERGE, "yaml-anchor", 3),
])
def test_yaml_aliases_are_refused_before_anything_expands(
    case: str, yaml_text: str, code: str, line: int, composed: list[int], tmp_path: Path,
) -> None:
    text = f"---\n{yaml_text}\n---\nBody\n"
    with TALLY.refused("parser", case, "parse_skill", SkillError, "not allowed") as refusal:
        parse_skill(text, file="SKILL.md")
    assert refusal.value is not None
    [problem] = refusal.value.problems
    assert (problem.code, problem.line) == (code, line)
    assert composed[0] <= 6  # refused at the first anchor or alias: nothing was expanded
    skill = demo_skill(tmp_path / "demo")
    (skill / "SKILL.md").write_text(text)
    with TALLY.refused("parser", case, "pack", SkillError, "SKILL.md", "not allowed"):
        pack(skill, tmp_path / "out")
    assert files_under(tmp_path / "out") == []


def test_oversized_frontmatter_is_refused_before_yaml_sees_it(
    composed: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    def never(*args: Any) -> Any:
        raise AssertionError("YAML was handed an oversized frontmatter")

    monkeypatch.setattr(skillpack.skillmd.frontmatter, "_load_failsafe", never)
    big = "name: demo\ndescription: " + "x" * MAX_FRONTMATTER_BYTES + "\n"
    with TALLY.refused("parser", "frontmatter over 64 KiB", "parse_skill", SkillError,
                       "over 64 KiB"):
        parse_skill(f"---\n{big}---\nBody\n")
    # many short keys, and 10 MB with no closing delimiter
    many = "name: demo\n" + "".join(f"k{i}: v\n" for i in range(20_000))
    with TALLY.refused("parser", "20,000 frontmatter keys", "parse_skill", SkillError,
                       "over 64 KiB"):
        parse_skill(f"---\n{many}---\nBody\n")
    with TALLY.refused("parser", "10 MB frontmatter never closed", "parse_skill", SkillError,
                       "over 64 KiB"):  # the search for its end stops at 64 KiB
        parse_skill("---\nname: demo\n" + "description: x\n" * 700_000)
    assert composed[0] == 0
    skill = demo_skill(tmp_path / "demo")
    (skill / "SKILL.md").write_text(f"---\n{big}---\nBody\n")
    with TALLY.refused("parser", "frontmatter over 64 KiB", "pack", SkillError, "over 64 KiB"):
        pack(skill, tmp_path / "out")
    assert files_under(tmp_path / "out") == []


def test_nesting_too_deep_is_refused() -> None:
    for case, value in (("flow lists nested 20,000 deep", "[" * 20_000 + "]" * 20_000),
                        ("flow maps nested 10,000 deep", "{a: " * 10_000 + "}" * 10_000)):
        with TALLY.refused("parser", case, "parse_skill", SkillError, "nested too deeply"):
            parse_skill(f"---\nname: demo\ndescription: {value}\n---\nBody\n")


def test_a_megabyte_skill_md_parses() -> None:
    """A 1 MB SKILL.md (long body, many tool fences) parses; bench_parse.py times it."""
    fence = DEMO_MD[DEMO_MD.index("```tool"):]
    body = "".join(f"## Section {i}\n\n" + "Prose line with `code` and $dollars.\n" * 20
                   + fence.replace("id: hello", f"id: hello{i}") for i in range(1200))
    text = DEMO_MD + body
    assert len(text.encode()) > 1_000_000
    skill = parse_skill(text)
    assert len(skill.tools) == 1201
    TALLY.handled("parser", "a 1 MB SKILL.md with 1,201 tools", "parse_skill")


# -- a hostile SKILL.md inside an archive (the runtime parses it when first asked) --------------

@SETTINGS
@given(frontmatters())
def test_a_loaded_skill_with_hostile_frontmatter_raises_only_skill_errors(
    good_archive: bytes, front: str,
) -> None:
    FUZZ["hostile frontmatter in a resealed archive (runtime, verify_bytes)"] += 1
    members = members_of(good_archive)
    text = f"---\n{front}\n---\nBody\n".encode("utf-8", "surrogatepass")
    data = build(reseal(change(members, "demo/SKILL.md", data=text)))
    bundle = load(data)  # consistent: the manifest matches the (hostile) files
    try:
        _ = bundle["demo"].description, bundle["demo"].tools
        bundle.catalog_text()
    except (SkillError, IntegrityError):
        pass  # unreadable, or a SKILL.md naming another skill
    with pytest.raises(SkillpackError):  # verify re-derives the manifest: never all equal
        verify_bytes(data)


def test_billion_laughs_inside_an_archive(good_archive: bytes) -> None:
    members = members_of(good_archive)
    text = f"---\n{LAUGHS}\n---\nBody\n".encode()
    data = build(reseal(change(members, "demo/SKILL.md", data=text)))
    bundle = load(data)
    case = "billion laughs in a resealed archive's SKILL.md"
    # the runtime's own reader refuses what it cannot read exactly (an anchor among them)
    refusal = "beyond what the runtime reads exactly"
    with TALLY.refused("parser", case, "runtime description", SkillError, refusal):
        _ = bundle["demo"].description
    with TALLY.refused("parser", case, "runtime catalog_text", SkillError, refusal):
        bundle.catalog_text()
    with TALLY.refused("parser", case, "verify_bytes", IntegrityError, "not allowed"):
        verify_bytes(data)


# -- model answers -------------------------------------------------------------------------------

HOSTILE_VALUES = st.one_of(
    st.text(max_size=30), st.integers(), st.floats(), st.booleans(), st.none(),
    st.sampled_from(["; rm -rf /", "$(reboot)", "`id`", "--help", "-rf", "a b", "\x00",
                     "\n--who x", "$who", "$$", "*", "../../etc/passwd", "9" * 5000,
                     "1e999", "NaN", "Infinity", "0x10", "true", "\ud800", "é" * 100]),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(),
                                                         max_size=2))
ARGS = st.one_of(
    st.fixed_dictionaries({"who": HOSTILE_VALUES}), st.just({}),
    st.dictionaries(st.sampled_from(["who", "Who", "who ", "__proto__", "argv", "tool", ""]),
                    HOSTILE_VALUES, max_size=3))
NAMES = st.one_of(st.just("hello"), st.sampled_from(["Hello", "hello ", "rm", "", "hello\x00",
                                                     "../hello", "python3"]))


@st.composite
def answers(draw: st.DrawFn) -> Any:
    name, args = draw(NAMES), draw(ARGS)
    shape = draw(st.sampled_from(["tool", "anthropic", "openai", "openai-fn", "message",
                                  "text", "fenced", "prose", "list", "args-string"]))
    call = {"tool": name, "args": args}
    if shape == "anthropic":
        return {"type": "tool_use", "id": "x", "name": name, "input": args}
    if shape == "openai":
        return {"name": name, "arguments": json.dumps(args, default=str)}
    if shape == "openai-fn":
        return {"tool_calls": [{"type": "function", "function": {
            "name": name, "arguments": json.dumps(args, default=str)}}]}
    if shape == "message":
        return {"role": "assistant", "content": [{"type": "text", "text": "ok"},
                                                 {"type": "tool_use", "name": name,
                                                  "input": args}]}
    text = json.dumps(call, default=str)  # NaN and Infinity included: not JSON, refused
    if shape == "text":
        return text
    if shape == "fenced":
        return f"Here:\n```json\n{text}\n```\n"
    if shape == "prose":
        cut = draw(st.integers(0, len(text)))
        return draw(st.text(max_size=20)) + text[:cut] + draw(st.text(max_size=20))
    if shape == "list":
        return [call, draw(st.text(max_size=10))]
    return {"tool": name, "args": json.dumps(args, default=str)}


@pytest.fixture(scope="module")
def served_skill(good_archive: bytes) -> Any:
    return load(good_archive)["demo"]


@settings(max_examples=400, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(answers())
def test_resolve_raises_only_skill_error_and_runs_only_the_approved_program(
    served_skill: Any, answer: Any,
) -> None:
    FUZZ["model answers in every shape, hostile values (resolve)"] += 1
    try:
        call = resolve(served_skill, answer)
    except SkillError as err:
        assert err.message and err.problems
        return
    if call is None:
        return
    assert call.tool.id == "hello"
    assert call.argv[:3] == ["python3", "scripts/run.py", "--who"] and len(call.argv) == 4
    assert isinstance(call.args["who"], str) and call.argv[3] == call.args["who"]
