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
import re
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.hostile import DEMO_MD, TALLY, demo_skill, files_under, no_hang, run_cli
from helpers.zips import (
    build,
    change,
    manifest_dict,
    members_of,
    reseal,
    set_manifest,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skillpack.skillmd.frontmatter
from skillpack.approve.lock import read_lock
from skillpack.approve.signing import (
    MAX_READ_BYTES,
    TrustedKey,
    read_trusted_signers,
    verify_envelope,
    verify_signed_lock,
)
from skillpack.errors import (
    FormatVersionError,
    IntegrityError,
    RefusedError,
    SkillError,
    SkillpackError,
)
from skillpack.model.calls import resolve
from skillpack.packing.check import check_skill
from skillpack.packing.lint import lint_skill
from skillpack.packing.pack import pack
from skillpack.packing.verify import verify_bytes
from skillpack.runtime import load
from skillpack.skillmd.frontmatter import MAX_FRONTMATTER_BYTES, split_frontmatter
from skillpack.skillmd.lint_rules import _LINK
from skillpack.skillmd.skill import parse_skill, split_entries

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
    # the runtime's exact reader does not read an anchor; the build side's reader, which it
    # falls back to, refuses it, naming the line, before anything is expanded
    refusal = "demo/SKILL.md:4: frontmatter: anchors (&name) are not allowed"
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


# -- crashes: only skillpack's own errors --------------------------------------------------------

ODD_FORMATS = ["\u00b9.0", "\u0661.\u0660", "1.00", "01.0", "1.0\u0660", "\uff11.0", "+1.0",
               "1.0 ", " 1.0", "1.-0", "1_0.0", "1.0.0", ""]


@pytest.mark.parametrize("value", ODD_FORMATS)
def test_a_format_version_in_other_digits_or_forms_is_refused(good_archive: bytes, tmp_path: Path,
                                                              value: str) -> None:
    members = members_of(good_archive)
    manifest = manifest_dict(members, "demo")
    manifest["format"] = value
    manifest["smuggled"] = "an unknown field the format check must not switch off"
    data = build(set_manifest(members, "demo", manifest))
    case = f"manifest format {value!r}"
    with TALLY.refused("archive", case, "load", FormatVersionError, repr(value)):
        no_hang(lambda: load(data, source="hostile.skill"))
    with TALLY.refused("archive", case, "verify_bytes", FormatVersionError, repr(value)):
        no_hang(lambda: verify_bytes(data, source="hostile.skill"))
    lock = tmp_path / "skills.lock"
    lock.write_text(json.dumps({"format": value, "skills": {}}))
    with TALLY.refused("archive", f"lock format {value!r}", "read_lock", FormatVersionError,
                       repr(value)):
        no_hang(lambda: read_lock(lock))


def _deep(levels: int) -> str:
    """JSON text of a value nested `levels` lists deep (built as text: json.dumps recurses)."""
    return "[" * levels + '"x"' + "]" * levels


@pytest.mark.parametrize("levels", [1_000, 5_000, 50_000])
@pytest.mark.parametrize("where", ["tools", "programs", "top"])
def test_an_unknown_field_nested_deep_is_refused_not_a_recursion_error(
        good_archive: bytes, tmp_path: Path, levels: int, where: str) -> None:
    members = members_of(good_archive)
    manifest = manifest_dict(members, "demo")
    if where == "top":
        manifest["unknown"] = "DEEP"
    else:
        manifest[where] = [{**(manifest[where] or [{}])[0], "unknown": "DEEP"}]
    text = json.dumps(manifest, sort_keys=True, separators=(",", ":")) + "\n"
    raw = text.replace('"DEEP"', _deep(levels)).encode()
    data = build(set_manifest(members, "demo", raw))
    case = f"unknown field in {where} nested {levels} deep"
    with TALLY.refused("archive", case, "verify_bytes", SkillpackError, "manifest"):
        no_hang(lambda: verify_bytes(data, source="hostile.skill"))
    lock = tmp_path / "skills.lock"
    lock.write_text('{"format":"1.1","skills":{},"unknown":' + _deep(levels) + "}")
    with TALLY.refused("archive", f"lock: {case}", "read_lock", SkillpackError, "lock"):
        no_hang(lambda: read_lock(lock))


SURROGATE_FIELDS = {
    "name": 'name: "demo\\ud800"\ndescription: A demo skill that greets someone.\n',
    "description": 'name: demo\ndescription: "A demo \\ud800 skill."\n',
    "includes": 'name: demo\ndescription: A demo skill.\nincludes: ["scripts/\\udfff"]\n',
    "allowed-tools": 'name: demo\ndescription: A demo skill.\nallowed-tools: "Bash(\\ud800)"\n',
    "allowance": ('name: demo\ndescription: A demo skill.\nmetadata:\n'
                  '  skillpack-allow-secrets: "x\\ud83d.env"\n'),
    "metadata": 'name: demo\ndescription: A demo skill.\nmetadata:\n  "k\\ud800": v\n',
    "license": 'name: demo\ndescription: A demo skill.\nlicense: "\\U0000dc00"\n',
}


@pytest.mark.parametrize("field", sorted(SURROGATE_FIELDS))
def test_a_lone_surrogate_from_a_yaml_escape_is_a_skill_error(tmp_path: Path, field: str
                                                               ) -> None:
    text = "---\n" + SURROGATE_FIELDS[field] + "---\n\n# Demo\n"
    case = f"lone surrogate in {field}"
    with TALLY.refused("parser", case, "parse_skill", SkillError, "surrogate",
                       "SKILL.md:") as refusal:
        parse_skill(text, file="SKILL.md")
    assert refusal.value is not None and refusal.value.line is not None
    str(refusal.value).encode("utf-8")  # the message itself is printable text
    skill = demo_skill(tmp_path / "demo", {"SKILL.md": text})
    out = tmp_path / "out"
    with TALLY.refused("parser", case, "pack", SkillpackError, "surrogate"):
        no_hang(lambda: pack(skill, out))
    assert files_under(out) == []
    result = check_skill(skill)
    assert any("surrogate" in p.message for p in result.problems), result.problems
    TALLY.add("parser", case, "check", "refused")


# -- slow rejects: bounded by input size (no_hang only guards against a hang) --------------------

NUMBER_MD = """\
---
name: demo
description: A demo skill with a number, used to build hostile inputs.
---

```tool
id: count
description: Count to a number.
params:
  n:
    type: {type}
    default: {default}
run: python3 scripts/run.py $n
```
"""


@pytest.mark.parametrize("kind", ["number", "integer"])
@pytest.mark.parametrize("size", [100_000, 1_000_000])  # the old regex: minutes, hours
def test_a_long_digit_run_before_a_bad_character_is_refused_at_once(kind: str, size: int
                                                                    ) -> None:
    digits = "1" * size
    good = parse_skill(NUMBER_MD.format(type=kind, default="7"))
    case = f"{size:,}-digit {kind} then a bad character"
    with TALLY.refused("parser", f"{case} (default)", "parse_skill", SkillError, "default"):
        no_hang(lambda: parse_skill(NUMBER_MD.format(type=kind, default=digits + "x")))
    for value in (digits + "x", digits + ".5.", "-" + digits + "e"):
        answer = json.dumps({"tool": "count", "args": {"n": value}})
        with TALLY.refused("parser", f"{case} (answer)", "resolve", SkillError, "'n'"):
            no_hang(lambda answer=answer: resolve(good, answer))
    call = no_hang(lambda: resolve(good, '{"tool": "count", "args": {"n": "125"}}'))
    assert call is not None and call.argv[-1] == "125"


@pytest.mark.parametrize("size", [30_000, 60_000])
def test_allowed_tools_full_of_parentheses_parse_at_once(size: int) -> None:
    text = DEMO_MD.replace("description:", 'allowed-tools: "' + "(" * size + '"\ndescription:', 1)
    skill = no_hang(lambda: parse_skill(text))
    TALLY.handled("parser", f"allowed-tools of {size:,} '('", "parse_skill")
    assert skill.allowed_tools == ()


_OLD_ENTRY_TOKEN = re.compile(r"[^\s,()]+(?:\([^)]*\))?|\([^)]*\)")


@given(st.text(alphabet="ab (),\t\u00a0\u2003x", max_size=30))
def test_the_entry_tokenizer_reads_what_the_regex_read(text: str) -> None:
    assert split_entries(text) == _OLD_ENTRY_TOKEN.findall(text)


PATHOLOGICAL = ["a*a*a*a*a*a*a*a*a*b", "*a*a*a*b", "**/a/**/a/**/b", "a/**/b/**/c*d*e",
                "x" * 5000]


@pytest.mark.parametrize("pattern", PATHOLOGICAL, ids=lambda p: p[:24])
def test_a_pathological_skillignore_pattern_is_refused_at_once(tmp_path: Path, pattern: str
                                                               ) -> None:
    skill = demo_skill(tmp_path / "demo", {".skillignore": "*.log\n" + pattern + "\n",
                                           "a" * 60: "a file the pattern backtracks on\n",
                                           "/".join(["a"] * 40) + "/f": "deep\n"})
    out = tmp_path / "out"
    with TALLY.refused("tree", f"skillignore pattern {pattern[:40]!r}", "pack", RefusedError,
                       ".skillignore:2"):
        no_hang(lambda: pack(skill, out), timeout=60)
    assert files_under(out) == []


def test_every_refused_skillignore_line_is_listed(tmp_path: Path) -> None:
    skill = demo_skill(tmp_path / "demo", {".skillignore": "\n".join(PATHOLOGICAL) + "\n"})
    with TALLY.refused("tree", "five pathological skillignore lines", "pack", RefusedError,
                       *(f".skillignore:{n}" for n in range(1, len(PATHOLOGICAL) + 1))):
        no_hang(lambda: pack(skill, tmp_path / "out"), timeout=60)


@pytest.mark.parametrize("pattern", ["**/build/**/*.o", "*.tar.*", "docs/**/*.png", "a*b*c",
                                     "/secret-*/", "!keep*.txt", "**/x/**"])
def test_ordinary_skillignore_patterns_still_work(tmp_path: Path, pattern: str) -> None:
    skill = demo_skill(tmp_path / "demo", {".skillignore": pattern + "\n"})
    [archive] = pack(skill, tmp_path / "out")
    assert archive.exists()


def test_a_skillignore_over_a_mebibyte_is_refused_not_truncated(tmp_path: Path) -> None:
    line = "# a comment line to push the rules past 1 MiB\n"
    filler = line * ((1 << 20) // len(line) + 1)
    skill = demo_skill(tmp_path / "demo", {".skillignore": filler + "notes.txt\n"})
    out = tmp_path / "out"
    with TALLY.refused("tree", "skillignore over 1 MiB", "pack", RefusedError, ".skillignore",
                       "1 MiB"):
        no_hang(lambda: pack(skill, out))
    assert files_under(out) == []


@pytest.mark.parametrize("levels", [250, 400])
def test_unclosed_nested_json_is_refused_in_linear_time(levels: int) -> None:
    good = parse_skill(NUMBER_MD.format(type="number", default="7"))
    answer = ('{"a":[' + "1," * 2_000) * levels  # about 1 MB, every object left open
    with TALLY.refused("parser", f"unclosed nested JSON, {len(answer):,} bytes", "resolve",
                       SkillError, "never"):
        no_hang(lambda: resolve(good, answer), timeout=60)
    call = '{"tool": "count", "args": {"n": 3}}'
    assert no_hang(lambda: resolve(good, "[" * 10 + " " + call)).tool.id == "count"


def test_the_cli_reads_a_bounded_answer(tmp_path: Path) -> None:
    skill = demo_skill(tmp_path / "demo")
    answer = tmp_path / "answer.txt"
    answer.write_bytes(b" " * (16 << 20) + b'{"tool": "hello", "args": {}}')
    result = no_hang(lambda: run_cli("resolve", str(skill), "--answer", str(answer)))
    ok = result.exit_code == 1 and "MiB" in result.output
    TALLY.add("parser", "answer over 16 MiB", "cli resolve", "refused" if ok else "accepted",
              result.output[-300:])
    assert ok, result.output


# -- resolve: ambiguous calls, NUL, values that would be options ----------------------------------

TWO_TOOLS_MD = DEMO_MD + """
```tool
id: bye
description: Say goodbye.
params:
  target:
    type: string
run: git log $target -- $who
```
""".replace("-- $who", "--")

AMBIGUOUS = {
    "function and tool": {"function": {"name": "hello", "arguments": "{}"}, "tool": "bye"},
    "function and name": {"function": {"name": "hello", "arguments": "{}"}, "name": "bye",
                          "args": {}},
    "function and args": {"function": {"name": "hello", "arguments": "{}"},
                          "args": {"who": "x"}},
    "tool and function": {"tool": "hello", "function": {"name": "bye"}},
}


@pytest.mark.parametrize("case", sorted(AMBIGUOUS))
def test_an_ambiguous_call_is_refused(case: str) -> None:
    skill = parse_skill(TWO_TOOLS_MD)
    for entry, answer in (("resolve dict", AMBIGUOUS[case]),
                          ("resolve text", json.dumps(AMBIGUOUS[case]))):
        with TALLY.refused("parser", f"ambiguous call: {case}", entry, SkillError,
                           "ambiguous"):
            no_hang(lambda answer=answer: resolve(skill, answer))


@pytest.mark.parametrize("value", ["--output=/tmp/pwned", "-o/tmp/x", "-", "--", "-x y"])
def test_a_value_that_would_be_an_option_is_refused(value: str) -> None:
    skill = parse_skill(TWO_TOOLS_MD)
    for tool, args in (("bye", {"target": value}), ("hello", {"who": value})):
        answer = {"tool": tool, "args": args}
        with TALLY.refused("parser", f"option-like value {value!r} for {tool}", "resolve",
                           SkillError, "must not start with '-'"):
            no_hang(lambda answer=answer: resolve(skill, answer))


def test_a_dash_value_is_fine_after_a_double_dash_or_inside_a_word() -> None:
    text = DEMO_MD.replace("run: python3 scripts/run.py --who $who",
                           "run: python3 scripts/run.py --who=$who -- $who")
    skill = parse_skill(text)
    call = resolve(skill, {"tool": "hello", "args": {"who": "-x"}})
    assert call is not None and call.argv == ["python3", "scripts/run.py", "--who=-x", "--",
                                              "-x"]
    assert skill.tools[0].leading_params == frozenset()


@pytest.mark.parametrize("value", ["a\x00b", "\x00", "x\x00--output=f"])
def test_a_nul_in_a_value_is_refused(value: str) -> None:
    skill = parse_skill(TWO_TOOLS_MD)
    for answer in ({"tool": "hello", "args": {"who": value}},
                   json.dumps({"tool": "hello", "args": {"who": value}})):
        with TALLY.refused("parser", f"NUL in a value {value!r}", "resolve", SkillError,
                           "NUL"):
            no_hang(lambda answer=answer: resolve(skill, answer))


@pytest.mark.parametrize("value", ["\ud800", "a\udc80b", "\udcff\udcfe"])
def test_a_lone_surrogate_in_a_value_is_refused(value: str) -> None:
    """No argv word carries a lone surrogate as UTF-8 (the CLI could not print the call, a
    program would be handed raw bytes): refused like a NUL."""
    skill = parse_skill(TWO_TOOLS_MD)
    for answer in ({"tool": "hello", "args": {"who": value}},
                   json.dumps({"tool": "hello", "args": {"who": value}})):
        with TALLY.refused("parser", f"lone surrogate in a value {value!r}", "resolve",
                           SkillError, "lone surrogate"):
            no_hang(lambda answer=answer: resolve(skill, answer))


@pytest.mark.parametrize("bits", [1_100, 16_610])
def test_a_number_too_large_to_write_is_a_skill_error(bits: int) -> None:
    """A Python caller's int of thousands of digits: `str()` of it raises ValueError (over
    4,300 digits); any param type refuses it as too large, as a SkillError."""
    skill = parse_skill(NUMBER_MD.format(type="integer", default="7"))
    with TALLY.refused("parser", f"an int of {bits:,} bits", "resolve", SkillError,
                       "too large a number"):
        resolve(skill, {"tool": "count", "args": {"n": 1 << bits}})
    text = parse_skill(TWO_TOOLS_MD)
    with TALLY.refused("parser", f"an int of {bits:,} bits for a string", "resolve",
                       SkillError, "too large a number"):
        resolve(text, {"tool": "hello", "args": {"who": 1 << bits}})


def test_an_authors_default_starting_with_a_dash_is_not_refused() -> None:
    """A default is the author's (docs/MODEL.md): a call that leaves it to the default gets
    it, as `Tool.argv` renders it; the model giving the same value is refused."""
    skill = parse_skill(DEMO_MD + """
```tool
id: dflt
description: List with a flag.
params:
  flag:
    type: string
    default: -v
  target:
    type: string
run: ls $flag $target
```
""")
    for args in ({"target": "x"}, {"target": "x", "flag": None}):
        call = resolve(skill, {"tool": "dflt", "args": args})
        assert call is not None and call.argv == ["ls", "-v", "x"]
    with pytest.raises(SkillError, match="must not start with '-'"):
        resolve(skill, {"tool": "dflt", "args": {"target": "x", "flag": "-v"}})


# -- a signature envelope nested deep ------------------------------------------------------------

@pytest.mark.parametrize("levels", [1_000, 50_000])
def test_a_signature_envelope_nested_deep_is_refused_not_a_recursion_error(levels: int
                                                                           ) -> None:
    envelope = ('{"payloadType":"x","payload":"","signatures":' + _deep(levels) + "}").encode()
    with TALLY.refused("parser", f"signature envelope nested {levels} deep", "verify_envelope",
                       SkillpackError, "envelope"):
        no_hang(lambda: verify_envelope(envelope, [TrustedKey(b"\x01" * 32)]))


# -- envelopes of many signatures, signature files of many bytes --------------------------------

@pytest.mark.parametrize("count", [10_000, 20_000])
def test_an_envelope_of_many_bad_signatures_gives_a_message_of_a_line(count: int) -> None:
    """Each failed signature was named: 10,000 made a 700 KB message. Now each kind is
    counted, five named: the message is as long for 20,000 as for 10,000."""
    envelope = json.dumps({"payloadType": "application/vnd.in-toto+json", "payload": "e30=",
                           "signatures": [{"keyid": f"k{i:06}", "sig": "A" * 86 + "=="}
                                          for i in range(count)]}).encode()
    with TALLY.refused("parser", f"envelope of {count} signatures by other keys",
                       "verify_envelope", IntegrityError,
                       f"{count:,} signatures by other keys (keyids k000000, k000001, k000002, "
                       f"k000003, k000004 and {count - 5:,} more)") as refusal:
        verify_envelope(envelope, [TrustedKey(b"\x01" * 32)], source="s.json")
    assert refusal.value is not None and len(str(refusal.value)) < 400


@pytest.mark.parametrize("gib", [1, 4])
def test_a_signature_file_of_gigabytes_is_refused_unread(tmp_path: Path, gib: int) -> None:
    """A 300 MB signature took 1.3 GB to refuse. Now one over MAX_READ_BYTES is refused by
    its size (sparse files: a read of them would take `gib` GiB of memory)."""
    lock = tmp_path / "skills.lock"
    run_cli("lock", demo_skill(tmp_path / "demo"), "-o", lock)
    big = tmp_path / "skills.lock.intoto.json"
    with big.open("wb") as file:
        file.truncate(gib << 30)
    tracemalloc.start()
    try:
        with TALLY.refused("parser", f"signature file of {gib} GiB", "verify_signed_lock",
                           SkillpackError, "cannot read the signature: it holds over "
                           f"{MAX_READ_BYTES:,} bytes"):
            verify_signed_lock(lock, big, (TrustedKey(b"\x01" * 32),))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MAX_READ_BYTES // 16


def test_a_trusted_signers_file_of_many_bad_lines_gives_a_message_of_a_line(
        tmp_path: Path) -> None:
    signers = tmp_path / "signers"
    signers.write_text("ssh-ed25519 AAAAbroken\n" * 20_000)
    with TALLY.refused("parser", "trusted-signers file of 20,000 bad lines",
                       "read_trusted_signers", SkillpackError, "line 5: not a PEM or OpenSSH",
                       "and 19,995 more bad lines") as refusal:
        read_trusted_signers(signers)
    assert refusal.value is not None and len(str(refusal.value)) < 1_000


# -- lint on one long line: each attempt ends at the next '[' ----------------------------------

#: One line of 200 KB of each unit: the old link pattern backtracked from every '[' to the end
#: of the line (80 KB of "[x](": 86 s; 200 KB: about nine minutes), the carried-tail lookup
#: joined every tail of a path of thousands of folders.
LINE_FLOODS = {"links that never close": "[x](", "escaped brackets": "\\[",
               "links into a folder": "[a](scripts/", "titles left open": '[x](a "',
               "one path of folders": "scripts/"}


@pytest.mark.parametrize("case", sorted(LINE_FLOODS))
def test_a_long_line_of_link_pieces_is_linted_at_once(tmp_path: Path, case: str) -> None:
    unit = LINE_FLOODS[case]
    line = unit * (200_000 // len(unit)) + ("x.py" if unit == "scripts/" else "")
    skill = demo_skill(tmp_path / "demo")
    with open(skill / "SKILL.md", "a", encoding="utf-8") as handle:
        handle.write("\n" + line + "\n")
    result = no_hang(lambda: lint_skill(skill), timeout=60)
    assert result.skill == "demo"
    TALLY.handled("parser", f"lint of a {len(line):,}-byte line of {case}", "lint_skill")


_OLD_LINK = re.compile(r"!?\[(?:[^\[\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)")


@given(st.text(alphabet="[]()\\ a/.\"'<>!\n", max_size=40))
def test_the_link_pattern_finds_what_it_found_where_no_link_holds_a_bracket(text: str) -> None:
    """The pattern now stops at a '[' inside a link (an escaped one, in a target or title);
    every other link is found as before."""
    old = list(_OLD_LINK.finditer(text))
    if any("[" in m.group(0)[m.group(0).index("[") + 1:] for m in old):
        return
    assert [m.group(0, 1) for m in _LINK.finditer(text)] == [m.group(0, 1) for m in old]


#: A merge key hiding `allowed-tools`: a failsafe reader sees one key named '<<'; PyYAML's
#: safe_load, js-yaml and npm yaml in 1.1 mode grant Bash to any command.
MERGED = {
    "flow": '<<: {allowed-tools: "Bash(*)"}',
    "block": "<<:\n  allowed-tools: Bash(*)",
    "list": '<<: [{allowed-tools: "Bash(*)"}]',
    "nested": "metadata:\n  <<: {owner: me}",
}


@pytest.mark.parametrize("form", sorted(MERGED))
def test_a_merge_key_is_refused_by_check_and_by_the_runtime(tmp_path: Path, form: str,
                                                            good_archive: bytes) -> None:
    """`check`, `lock` and the runtime read `<<` as an unknown key (a warning), so the lock
    and the runtime's `permitted_tools` said "no allowed-tools" where a merging reader of
    the same SKILL.md grants `Bash(*)`. Now it is an error wherever it stands; quoted
    (`"<<":`), it is an ordinary key for every reader, and stays a warning."""
    front = f"name: demo\ndescription: Harmless. Use when testing.\n{MERGED[form]}"
    if form != "nested":  # what the QA showed: a merging reader sees another frontmatter
        assert yaml.safe_load(front).get("allowed-tools") == "Bash(*)"
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "SKILL.md").write_text(f"---\n{front}\n---\nBody\n")
    case = f"YAML merge key ({form})"
    checked = run_cli("check", folder)
    line = 5 if form == "nested" else 4
    assert checked.exit_code == 1 and f"demo/SKILL.md:{line}: error: [yaml-merge-key] " \
        "frontmatter: a YAML merge key ('<<') is not allowed" in checked.output, checked.output
    TALLY.handled("parser", case, "check", "refused: yaml-merge-key")
    data = build(reseal(change(members_of(good_archive), "demo/SKILL.md",
                               data=f"---\n{front}\n---\nBody\n".encode())))
    with TALLY.refused("parser", case, "runtime permitted_tools", SkillError,
                       "a YAML merge key ('<<') is not allowed"):
        load(data).permitted_tools(["demo"])
    quoted = folder / "SKILL.md"
    quoted.write_text(quoted.read_text().replace("<<:", '"<<":'))
    assert run_cli("check", folder).exit_code == 0


def test_a_refused_frontmatter_is_read_once_however_often_it_is_asked(
        good_archive: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SKILL.md nested 30,000 deep (60 KB, under the frontmatter limit) is refused by the
    build side's reader the runtime falls back to, at about 2 s a parse; each property
    (`description`, `tools`, `catalog_text()`...) parsed it again. Now the refusal is kept:
    one parse, the same words every time."""
    depth = 30_000
    text = ("---\nname: demo\ndescription: Demo.\nm: " + "[" * depth + "]" * depth
            + "\n---\nBody\n").encode()
    data = build(reseal(change(members_of(good_archive), "demo/SKILL.md", data=text)))
    parses = []
    real = skillpack.skillmd.frontmatter.split_frontmatter
    monkeypatch.setattr(skillpack.skillmd.frontmatter, "split_frontmatter",
                        lambda *a, **k: parses.append(1) or real(*a, **k))
    bundle = load(data)
    said = set()
    for ask in (lambda: bundle["demo"].description, lambda: bundle["demo"].tools,
                bundle.catalog_text, lambda: bundle["demo"].body):
        with pytest.raises(SkillError) as refused:
            ask()
        said.add(str(refused.value))
    assert len(parses) == 1 and len(said) == 1, (len(parses), said)
    TALLY.handled("parser", f"a frontmatter nested {depth:,} deep, asked four times",
                  "runtime", "parsed once")
