"""The runtime's frontmatter reader gives exactly what the build side's YAML parser gives, or
refuses (None); it never guesses.

* every corpus SKILL.md and every fixture: equal, or refused where the build side refuses;
  the corpus is read in full;
* generated frontmatter (keys, scalars in every style, lists, nesting, block scalars) and
  fuzzed YAML-ish text: equal whenever the reader reads, against both of the build side's
  YAML loads (libyaml and pure Python); a simple subset is never refused;
* hostile input (deep nesting, megabyte lines, surrogate escapes, NUL, BOM): refused or
  equal, never an exception, with work linear in the input's size.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import CORPUS_SKILLS, FIXTURES
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from skillpack.errors import SkillError
from skillpack.skillmd import frontmatter
from skillpack.skillmd import frontmatter_reader as reader
from skillpack.skillmd.frontmatter import normalise_text, split_frontmatter
from skillpack.skillmd.frontmatter_reader import read_frontmatter, read_yaml

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
    saved = frontmatter._compose_libyaml
    frontmatter._compose_libyaml = lambda text: None
    try:
        yield
    finally:
        frontmatter._compose_libyaml = saved


def runtime_side(source: str) -> Outcome:
    read = read_frontmatter(source)
    return None if read is None else (read.data, read.body, read.body_line)


def assert_exact_or_refused(source: str) -> Outcome:
    """The reader's outcome, checked equal to both build-side YAML loads (libyaml and pure
    Python) when it reads."""
    got = runtime_side(source)
    if got is not None:
        assert got == build_side(source), source
        with pure_python_yaml():
            assert got == build_side(source), source
    return got


def document(yaml_text: str, body: str = "Body.\n") -> str:
    return f"---\n{yaml_text}---\n{body}"


# -- the corpus and the fixtures ----------------------------------------------------------------


@pytest.mark.corpus
def test_the_reader_reads_every_corpus_skill_exactly() -> None:
    read = refused = 0
    for folder in CORPUS_SKILLS:
        source = (folder / "SKILL.md").read_text(encoding="utf-8")
        want = build_side(source)
        got = runtime_side(source)
        if got is None:
            refused += 1
            assert want is None, f"{folder}: the build side reads it, the reader refuses"
        else:
            read += 1
            assert got == want, folder
    assert (read, refused) == (len(CORPUS_SKILLS), 0)
    assert read == 182


FIXTURE_FILES = sorted(FIXTURES.glob("**/SKILL.md"))


@pytest.mark.corpus
def test_the_build_side_reads_every_corpus_skill_as_yaml_does() -> None:
    for folder in CORPUS_SKILLS:
        assert_build_side_agrees((folder / "SKILL.md").read_text(encoding="utf-8"))
    assert len(CORPUS_SKILLS) == 182


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[str(p.relative_to(FIXTURES))
                                                     for p in FIXTURE_FILES])
def test_the_build_side_reads_every_fixture_as_yaml_does(path: Path) -> None:
    try:
        source = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        pytest.skip("not UTF-8: refused before any frontmatter is read")
    assert_build_side_agrees(source)


def test_key_lines_of_the_reader() -> None:
    """The lines the reader records: top-level keys and metadata's own keys only (not those
    of a mapping in a metadata list, nor a deeper mapping's), as YAML's load records them."""
    text = ("name: a\nmetadata:\n  author: me\n  deep:\n    inner: v\n"
            "list:\n  - k: v\nlast: |\n  block\n")
    keys: dict[str, int] = {}
    assert read_yaml(text, keys) is not None
    assert keys == {"name": 0, "metadata": 1, "metadata.author": 2, "metadata.deep": 3,
                    "list": 5, "last": 7}
    assert_build_side_agrees(document(text))
    listed: dict[str, int] = {}
    assert read_yaml("metadata:\n  - a: b\nother:\n  c: d\n", listed) is not None
    assert listed == {"metadata": 0, "other": 2}
    scalar: dict[str, int] = {}
    assert read_yaml("metadata: x # note\nother:\n  c: d\n", scalar) is not None
    assert scalar == {"metadata": 0, "other": 1}
    dotted = "metadata.a: 1\nmetadata:\n  a: 2\n"  # the first line of a name is kept, as YAML's
    twice: dict[str, int] = {}
    assert read_yaml(dotted, twice) is not None
    assert twice == {"metadata.a": 0, "metadata": 1}
    assert_build_side_agrees(document(dotted))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[str(p.relative_to(FIXTURES))
                                                     for p in FIXTURE_FILES])
def test_the_reader_agrees_on_every_fixture(path: Path) -> None:
    try:
        source = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        pytest.skip("not UTF-8: refused before any frontmatter is read")
    want = build_side(source)
    got = assert_exact_or_refused(source)
    assert got == want  # no fixture uses a construct the reader leaves out


def test_the_fixtures_are_there() -> None:
    assert len(FIXTURE_FILES) > 20


# -- examples, one per construct ------------------------------------------------------------

READ = [
    "name: a\ndescription: plain text, with commas; and [brackets] {braces} & more\n",
    "name: a\ndescription: url https://example.com/x?y=1#frag and a:b\n",
    "name: a\ndescription: text # a comment\nlicense: MIT\n",
    "name: a\ndescription: first line\n  second line\n\n  after an empty line\n",
    "name: a\ndescription:\n  on the next line\n  and on\n",
    "name: a\ndescription: 'it''s single'\n",
    'name: a\ndescription: "tab\\t nl\\n quote\\" slash\\/ \\x41\\u00e9\\U0001F600 \\N\\_\\L\\P"\n',
    'name: a\ndescription: "folded\n  over  \n\n  lines"\n',
    'name: a\ndescription: "escaped \\\n  break"\n',
    "name: a\ndescription: |\n  literal\n   more\n\n  end\n",
    "name: a\ndescription: >-\n  folded\n  text\n\n  para\n    indented\n  back\n",
    "name: a\ndescription: |+\n  keep\n\n\nlicense: x\n",
    "name: a\ndescription: |2-\n    two extra\n  base\n",
    "name: a\ndescription: >\n\n  after a blank\n",
    "name: a\nallowed-tools: [Read, 'Bash(git:*)', \"Write\" , ]\n",
    "name: a\nallowed-tools: []\n",
    "name: a\nallowed-tools:\n- Read\n- Write # c\n",
    "name: a\nallowed-tools:\n  - Read\n  - 'Write'\n",
    "name: a\nmetadata:\n  version: \"1.0\"\n  nested:\n    deep: x\n  list:\n  - name: A\n"
    "    required: true\n  - name: B\n  after: y\n",
    "# a comment\nname: a\n\n   # indented comment\ndescription: ok\n",
    "name: a\ndescription:\nlicense: MIT\n",
    "name: a\ndescription: ~\non: yes\nversion: 1.10\n",
    "name: a\ndescription: \"\\0 and \\x01\"\n",
    "name: a\ndescription: ünïcödé — “quotes” 😀\n",
    "name: a\ndescription: -dash start\n",
    "name: a\ndescription: x\ufeffy \ufeff\n",
    "name: a\n\"quoted key\": b\n'it''s': c\n",
    "name: a\nmetadata:\n  versions:\n    \"@scope/pkg\": \"^1.18.1\"\n    'next': x\n  after: y\n",
    "name: a\nlist:\n  - \"k\": v\n    z: w\n",
    "name: a\n\"a: b\": \"c # d\" # e\n",
]


@pytest.mark.parametrize("yaml_text", READ)
def test_each_construct_read_is_read_exactly(yaml_text: str) -> None:
    source = document(yaml_text)
    got = assert_exact_or_refused(source)
    assert got is not None, yaml_text


NESTED = [  # mappings and sequences nested, block scalars among them
    "a:\n  b:\n    c: d\n",
    "a:\n- b\n- 'c'\n",  # a sequence at its key's column
    "a:\n  - b\n  - c\nd: e\n",
    "m:\n  o:\n    env:\n    - name: X\n      required: true\n    - name: Y\n  v: \"1\"\n",
    "a:\n-   b: c\n    d: e\n- f\n",  # an entry's mapping at its first key's column
    "a:\n  - b: c\n    d:\n      e: f\n  - g: h\nz: y\n",
    "a:\n  b:\n  - c\n  d: e\n",  # a sequence ends at its key's column
    "a: b  \nc:   d\n",
    "a: |\n  x\n   y\nb: c\n",
    "m:\n  d: >-\n    folded\n    text\n  e: f\n",
    "a: |+\n  x\n\nb: c\n",
    "a: >\n  x\n\n  y\n",
    "a: |2\n    x\n",
    "a: |\n  x\n\n",  # its trailing empty lines are its own
    "a:\n- name: x\n  desc: |\n    t\n  k: v\n- y\n",  # in an entry's mapping, past its first key
]


@pytest.mark.parametrize("yaml_text", NESTED)
def test_nested_shapes_are_read_exactly(yaml_text: str) -> None:
    assert assert_exact_or_refused(document(yaml_text)) is not None


@pytest.mark.parametrize("yaml_text", [
    "metadata.x: a\nmetadata:\n  x: b\n",  # a top-level metadata.x key, then metadata's
    "a: b\nmetadata:\n  x: y\nc:\n  x: z\n",  # another key's mapping records nothing
])
def test_key_lines_are_yamls_where_metadata_keys_are_odd(yaml_text: str) -> None:
    assert_build_side_agrees(document(yaml_text))
    keys: dict[str, int] = {}
    read_yaml(yaml_text, keys)
    assert "c.x" not in keys and "b.x" not in keys


REFUSED_THOUGH_VALID = [  # valid YAML the build side reads, outside the subset read here
    "name: ! a\n",
    "name: a\nmetadata: {a: b}\n",
    "name: a\n? complex\n: key\n",
    "name: a\n\"quoted key\" : b\n",  # a space before the colon
    "name: a\n\"\": b\n",  # an empty key
    "name: a\nkey with space: b\n",
    "name: a\nlist: [a, [b]]\n",
    "name: a\nlist: [a,\n  b]\n",
    "name: a\nlist:\n- - a\n",
    "name: a\nlist:\n-\n  a: b\n",
    "name: a\ndescription: a\tb\n",
    'name: a\ndescription: "line\u2028separator"\n',
    "\ufeffname: a\n",
    "  name: a\n  description: indented top level\n",
    "name: a\ndescription: \"\n  q\"\n" .replace("\n  q", "\nq"),
    "name: a\ndescription: first\n  - looks like a list\n",
    "name: a\ndescription: |\n  text\n",  # read: (a control below keeps this list honest)
]


@pytest.mark.parametrize("yaml_text", REFUSED_THOUGH_VALID[:-1])
def test_constructs_outside_the_subset_are_refused(yaml_text: str) -> None:
    source = document(yaml_text)
    assert runtime_side(source) is None
    assert build_side(source) is not None  # valid YAML: refused only because not read here


def test_the_refusal_list_has_a_control() -> None:
    assert runtime_side(document(REFUSED_THOUGH_VALID[-1])) is not None


REFUSED_BY_BOTH = [
    "name: a\n\"quoted\n  key\": b\n",  # a key over two lines (a simple key is one line)
    "name: &anchor a\n",
    "name: a\nother: *anchor\n",
    "name: !tag a\n",
    "",
    "# only a comment\n",
    "- a list\n",
    "name: a\nname: b\n",
    "name: a\nmetadata:\n  k: 1\n  k: 2\n",
    "name: a\ndescription: a: b\n",
    "name: a\ndescription: ends with colon:\n",
    "name: a\ndescription: \"unclosed\n",
    "name: a\ndescription: \"\\q bad escape\"\n",
    "name: a\ndescription: |0\n  x\n",
    "name: a\ndescription: 'a' trailing\n",
    "name: a\n  indented: b\n",
    "name: a\ndescription: x\x00y\n",
    "name: a\ndescription: line\u2028separator\n",
    "name: a\ndescription: @reserved\n",
    "--- a\nname: b\n",
    "%YAML 1.1\nname: b\n",
]


@pytest.mark.parametrize("yaml_text", REFUSED_BY_BOTH)
def test_what_the_build_side_refuses_is_refused(yaml_text: str) -> None:
    source = document(yaml_text)
    assert build_side(source) is None
    assert runtime_side(source) is None


@pytest.mark.parametrize("source", [
    "no frontmatter\n", "---\nname: a\n", "---\nname: a\n--- not a delimiter\n", "",
    "---", "---\n---\n",
])
def test_a_missing_or_unclosed_frontmatter_is_refused(source: str) -> None:
    assert build_side(source) is None
    assert runtime_side(source) is None


def test_the_text_is_split_as_the_build_side_splits_it() -> None:
    for source in ["\ufeff---\r\nname: a\r\n---  \r\nbody\r\nmore", "---\nname: a\n---",
                   "---\nname: a\n---\n", "--- \nname: a\n---\n\n\nbody\n",
                   "---\nname: a\n---\nbody\n---\nmore\n", "---\nname: a\n---\nbody\r\nmore\r",
                   "---\rname: a\r---\rbody\r\r", "\ufeff---\nname: a\n---\n\ufeffbody"]:
        got = assert_exact_or_refused(source)
        assert got is not None and got == build_side(source), source


def test_the_size_limit_is_the_build_sides() -> None:
    assert reader.MAX_FRONTMATTER_BYTES == frontmatter.MAX_FRONTMATTER_BYTES
    room = reader.MAX_FRONTMATTER_BYTES - len("name: a\ndescription: \n")
    for size, readable in [(room, True), (room + 1, False)]:
        source = document(f"name: a\ndescription: {'x' * size}\n")
        assert (runtime_side(source) is not None) is readable
        assert (build_side(source) is not None) is readable
    wide = document(f"name: a\ndescription: {'é' * (room // 2 + 1)}\n")  # 2 bytes each
    assert runtime_side(wide) is None and build_side(wide) is None


# -- generated frontmatter --------------------------------------------------------------------

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


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mappings())
def test_generated_frontmatter_is_read_exactly_or_refused(yaml_text: str) -> None:
    assert_exact_or_refused(document(yaml_text))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mappings(), st.sampled_from(["", "metadata: x # c\n", "metadata:\n  - a: b\n",
                                     "metadata:\n  author: me\n  tags: [a]\n  deep:\n"
                                     "    inner: v\n",
                                     "metadata.author: z\nmetadata:\n  author: me\n"]),
       st.booleans())
def test_the_build_side_reads_generated_frontmatter_as_yaml_does(
    yaml_text: str, metadata: str, metadata_first: bool,
) -> None:
    """Key lines (top level, metadata's keys) too: the reader records them as YAML does."""
    yaml_text = metadata + yaml_text if metadata_first else yaml_text + metadata
    assert_build_side_agrees(document(yaml_text))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(KEYS.filter(lambda k: k != "metadata"),
                          st.sampled_from([double_quoted, single_quoted]), TEXT),
                min_size=1, max_size=6, unique_by=lambda t: t[0]),
       st.lists(st.tuples(KEYS, TEXT), max_size=4, unique_by=lambda t: t[0]))
def test_plain_keys_with_quoted_strings_are_always_read(
    fields: list[tuple[str, Callable[[str], str], str]], meta: list[tuple[str, str]],
) -> None:
    lines = [f"{key}: {quote(value if quote is double_quoted else _printable(value))}"
             for key, quote, value in fields]
    if meta:
        lines.append("metadata:")
        lines.extend(f"  {key}: {double_quoted(value)}" for key, value in meta)
    source = document("\n".join(lines) + "\n")
    got = assert_exact_or_refused(source)
    assert got is not None, source
    data = got[0]
    for key, quote, value in fields:
        assert data[key] == (value if quote is double_quoted else _printable(value))


def _printable(value: str) -> str:
    """`value` with what a single-quoted scalar cannot hold literally taken out."""
    return "".join(ch for ch in value if reader._allowed_characters(ch) and ch != "\n")


YAMLISH = st.text("ab :#-'\"\\|>[]{},&*!?%@`\n019+", max_size=120)


@settings(max_examples=600, deadline=None)
@given(YAMLISH)
@example("a: b\n c: d\n")
@example("a: |\n  x\n # c\n  y\n")
@example("a: 'x\n\n  y'\n")
@example("a: >+\n\n  x\n\n")
@example("a:\n- b\n- c: d\n  e: f\n-  g\n")
def test_fuzzed_yamlish_text_is_read_exactly_or_refused(text: str) -> None:
    assert_exact_or_refused(document(text))
    assert_exact_or_refused(document("name: x\n" + text + "\n"))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_any_text_is_read_exactly_or_refused(text: str) -> None:
    assert_exact_or_refused(document(f"name: {text}\n"))
    assert_exact_or_refused(document(f'name: "{text}"\n'))


# -- hostile input ----------------------------------------------------------------------------


def test_deep_nesting_is_refused_past_the_limit() -> None:
    deep = "".join(" " * level + "a:\n" for level in range(5000))
    assert read_yaml(deep) is None
    shallow = "".join(" " * level + "a:\n" for level in range(reader.MAX_DEPTH))
    assert read_yaml(shallow) is not None
    assert assert_exact_or_refused(document(shallow)) is not None


def test_megabyte_lines_are_refused() -> None:
    line = "x" * (1 << 20)
    assert runtime_side(document(f"name: a\ndescription: {line}\n")) is None
    assert runtime_side(f"---\n{line}") is None
    assert read_yaml(f"description: {line}\n") == {"description": line}  # no limit of its own


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "\\U0000d800", "\\U00110000",
                                    "\\UFFFFFFFF"])
def test_surrogate_and_out_of_range_escapes_are_refused(escape: str) -> None:
    assert runtime_side(document(f'name: a\ndescription: "{escape}"\n')) is None


@pytest.mark.parametrize("character", ["\x00", "\x07", "\x7f", "\x85", "\x9f", "\ufffe",
                                       "\uffff", "\u2028", "\u2029", "\ud800"])
def test_characters_yaml_forbids_or_breaks_on_are_refused(character: str) -> None:
    assert read_yaml(f"name: a{character}b\n") is None
    assert runtime_side(document(f"name: a{character}b\n")) is None


def test_a_leading_bom_is_dropped_as_the_build_side_drops_it() -> None:
    source = "\ufeff" + document("name: a\n")
    assert runtime_side(source) == build_side(source) != None  # noqa: E711


def count_calls(call: Callable[[], object]) -> int:
    """How many Python and C function calls `call` makes: a measure of work, not of time."""
    calls = 0

    def profile(_frame: Any, event: str, _arg: Any) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return calls


@pytest.mark.parametrize("unit", [
    "k{n}: v\n",
    "k{n}:\n  - a\n  - b: c\n    d: e\n",
    'k{n}: "\\x41\\n\\" \\u00e9 \\\n  z"\n',
    "k{n}: a\n  b\n\n  c\n",
    "k{n}: |\n  a\n\n   b\n",
    "k{n}: [a, 'b', \"c\"]\n",
])
def test_the_work_grows_linearly_with_the_input(unit: str) -> None:
    def text(copies: int) -> str:
        return "".join(unit.format(n=n) for n in range(copies))

    small_text, large_text = text(200), text(800)
    small = count_calls(lambda: read_yaml(small_text))
    large = count_calls(lambda: read_yaml(large_text))
    assert read_yaml(small_text) is not None
    assert large < 5 * small  # four times the input: four times the work (not sixteen)


def test_long_lines_of_escapes_and_quotes_cost_linear_work() -> None:
    def text(size: int) -> str:
        escapes, doubled, items = "\\x41 " * size, "x'' " * size, ", ".join(["q"] * size)
        return f"a: \"{escapes}\"\nb: '{doubled}'\nc: [{items}]\n"

    small_text, large_text = text(500), text(2000)
    small = count_calls(lambda: read_yaml(small_text))
    large = count_calls(lambda: read_yaml(large_text))
    assert read_yaml(small_text) is not None
    assert large < 5 * small  # four times the input: four times the work (not sixteen)


# -- real frontmatter, damaged --------------------------------------------------------------

def _real_sources() -> list[str]:
    """SKILL.md texts the build side reads: every sixth corpus skill, and the fixtures."""
    found = []
    for folder in [*CORPUS_SKILLS[::6], *sorted(FIXTURES.glob("*"))]:
        try:
            source = (folder / "SKILL.md").read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if build_side(source) is not None:
            found.append(source)
    return found


REAL = _real_sources()
EDIT_TEXT = st.sampled_from([" ", "  ", ":", ": ", "#", " #", "-", "- ", "'", '"', "\\", "|",
                             ">", "[", "]", ",", "\n", "\n  ", "\n- ", "&a ", "*a", "!", "?",
                             "{", "\\u00e9", "\\x", "é", "--- "])


@settings(max_examples=500, deadline=None)
@given(st.integers(0, len(REAL) - 1), st.lists(st.tuples(st.floats(0, 1), st.integers(0, 2),
                                                         EDIT_TEXT), min_size=1, max_size=3))
def test_damaged_real_frontmatter_is_read_exactly_or_refused(
    which: int, edits: list[tuple[float, int, str]],
) -> None:
    source = REAL[which]
    end = source.find("\n---", 4)
    for where, cut, insert in edits:
        at = 4 + int(where * (end - 4))
        source = source[:at] + insert + source[at + cut:]
        end = source.find("\n---", 4)
        if end < 0:
            return
    assert_exact_or_refused(source)
