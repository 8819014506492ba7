"""Frontmatter as both sides read it, for the tests that hold the runtime's reader to the build
side's YAML parser: each side's outcome, the check that they agree, and hypothesis strategies
for frontmatter (keys, scalars in every style, nesting) and YAML-ish text."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import strategies as st

from skillpack.errors import SkillError
from skillpack.skillmd import frontmatter
from skillpack.skillmd.frontmatter import normalise_text, split_frontmatter
from skillpack.skillmd.frontmatter_reader import read_frontmatter

Outcome = tuple[dict[str, Any], str, int] | None


@contextmanager
def yaml_only() -> Iterator[None]:
    """The build side with YAML alone: without the exact reader it tries first (the reader
    is what these tests check against YAML)."""
    saved = frontmatter.read_yaml
    frontmatter.read_yaml = lambda text, keys=None: None
    try:
        yield
    finally:
        frontmatter.read_yaml = saved


def yaml_front(source: str) -> frontmatter.Frontmatter | None:
    """The build side's split and YAML load of `source`, or None if refused."""
    with yaml_only():
        try:
            return split_frontmatter(normalise_text(source))
        except SkillError:
            return None


def build_side(source: str) -> Outcome:
    """What `skillpack.skillmd.skill.parse_skill` takes from the frontmatter (YAML's
    reading), or None if refused."""
    front = yaml_front(source)
    return None if front is None else (front.data, front.body, front.body_line)


def assert_build_side_agrees(source: str) -> None:
    """The build side as it runs (the reader first, YAML for the rest) gives what YAML alone
    gives: data in the same order, the same key lines, or the same refusal."""
    want = yaml_front(source)
    try:
        got: frontmatter.Frontmatter | None = split_frontmatter(normalise_text(source))
    except SkillError:
        got = None
    assert got == want, source
    if got is not None and want is not None:
        assert list(got.lines.items()) == list(want.lines.items()), source
        assert list(got.data) == list(want.data), source


@contextmanager
def pure_python_yaml() -> Iterator[None]:
    """The build side without libyaml (as on a machine whose PyYAML lacks it)."""
    saved = frontmatter._compose_fast
    frontmatter._compose_fast = lambda text: None
    try:
        yield
    finally:
        frontmatter._compose_fast = saved


def runtime_side(source: str) -> Outcome:
    read = read_frontmatter(source)
    return None if read is None else (read.data, read.body, read.body_line)


def assert_exact_or_refused(source: str) -> Outcome:
    """The reader's outcome, checked equal to both build-side paths when it reads."""
    got = runtime_side(source)
    if got is not None:
        assert got == build_side(source), source
        with pure_python_yaml():
            assert got == build_side(source), source
    return got


def document(yaml_text: str, body: str = "Body.\n") -> str:
    return f"---\n{yaml_text}---\n{body}"


KEYS = st.text("abcdefghijklmnopqrstuvwxyzABCZ0189_-./", min_size=1, max_size=12).filter(
    lambda k: k[0] not in "-./")
TEXT = st.text(st.characters(codec="utf-8"), max_size=40)
PRINTABLE = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x2FF).filter(
    lambda c: not 0x7F <= ord(c) <= 0xA0) | st.sampled_from("—“”😀é"), max_size=40)


def double_quoted(value: str) -> str:
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0xA0 or ch in "\u2028\u2029\ufeff":
            out.append(f"\\u{ord(ch):04x}" if ord(ch) > 0xFF else f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def single_quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


#: Keys in quotes, as real metadata has them (``"@scope/pkg": "^1.0"``).
QUOTED_KEYS = st.builds(lambda quote, text: quote(text),
                        st.sampled_from([double_quoted, single_quoted]),
                        PRINTABLE.filter(bool))


@st.composite
def scalars(draw: st.DrawFn, indent: int) -> str:
    """A scalar in some style, as the text after ``key:`` (block scalars span lines)."""
    style = draw(st.sampled_from(["plain", "single", "double", "block", "raw"]))
    if style == "single":
        return " " + single_quoted(draw(PRINTABLE))
    if style == "double":
        return " " + double_quoted(draw(TEXT))
    pad = " " * (indent + draw(st.integers(1, 3)))
    if style == "block":
        header = draw(st.sampled_from("|>")) + draw(st.sampled_from(["", "-", "+", "1", "2-",
                                                                      "+1"]))
        body = draw(st.lists(st.text(" ab#:-", max_size=6), max_size=4))
        lines = "".join(f"\n{pad}{line}" if line else "\n" for line in body)
        return f" {header}{draw(st.sampled_from(['', ' # c']))}{lines}"
    if style == "raw":  # plain-ish text with every character YAML cares about
        first = draw(st.text("ab :#-'\"[]{},&*!|>?%@`\\", min_size=1, max_size=12))
        more = draw(st.lists(st.text("ab :#-'\"\\", max_size=8), max_size=2))
        return " " + first + "".join(f"\n{pad}{m}" for m in more)
    words = draw(st.lists(st.text("abcXYZ09é.,;()/+=", min_size=1, max_size=8), min_size=1,
                          max_size=5))
    return " " + " ".join(words)


@st.composite
def mappings(draw: st.DrawFn, indent: int = 0, depth: int = 0) -> str:
    lines = []
    pad = " " * indent
    for key in draw(st.lists(KEYS | QUOTED_KEYS, min_size=1, max_size=4)):
        kind = draw(st.sampled_from(["scalar", "scalar", "flow", "list", "map", "empty"]
                                    if depth < 2 else ["scalar", "flow", "empty"]))
        if kind == "scalar":
            lines.append(f"{pad}{key}:{draw(scalars(indent))}")
        elif kind == "flow":
            items = draw(st.lists(st.sampled_from(["a", "b c", "'q'", '"d"', "x-y"]), max_size=3))
            lines.append(f"{pad}{key}: [{', '.join(items)}]")
        elif kind == "empty":
            lines.append(f"{pad}{key}:{draw(st.sampled_from(['', ' # c', '  ']))}")
        elif kind == "list":
            lines.append(f"{pad}{key}:")
            at = pad + " " * draw(st.integers(0, 2))
            for _ in range(draw(st.integers(1, 3))):
                if draw(st.booleans()):
                    lines.append(f"{at}-{draw(scalars(len(at)))}")
                else:
                    inner = draw(mappings(len(at) + 2, depth + 1))
                    lines.append(f"{at}- {inner[len(at) + 2:]}".rstrip("\n"))
        else:
            lines.append(f"{pad}{key}:")
            lines.append(draw(mappings(indent + draw(st.integers(1, 3)), depth + 1)).rstrip("\n"))
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(["", "# comment", pad + "  # indented"])))
    return "\n".join(lines) + "\n"


YAMLISH = st.text("ab :#-'\"\\|>[]{},&*!?%@`\n019+", max_size=120)
