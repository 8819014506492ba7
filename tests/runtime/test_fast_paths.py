"""The runtime's first-turn fast paths (issue 11) give exactly what the slow ones give.

* `read_simple`, `read_yaml`'s path for the common shape of frontmatter, gives the mapping the
  line-by-line `_Reader` gives, on every corpus SKILL.md it takes and on generated text; it
  takes most of the corpus (else it would be no fast path);
* `read_nested`, its second fast path (mappings and sequences nested deeper, one pass with a
  stack), gives what `_Reader` gives wherever it reads, on the corpus, on generated nested
  text and on fuzzed text, and what YAML itself gives; it takes most of what `read_simple`
  leaves;
* `_locate`'s shortcut for the common ``---`` lines finds what its general path finds;
* `catalog_line` folds a description's whitespace as ``" ".join(text.split())`` does;
* `json_string` quotes as ``json.dumps(text, ensure_ascii=False)`` does;
* the first turn (load with `expect`, catalog, load_skill, one file) imports neither `json`
  nor `re` (`load_skill` used to import `json` to quote a name: 5 ms and more);
* a SKILL.md whose frontmatter closes in its first 4 KiB is read from that head, the rest
  checked to be UTF-8 and decoded when the body is asked for: what is shown, and every
  refusal with the byte it names, is what reading the whole text gives.
"""

from __future__ import annotations

import hashlib
import json
import sys

import pytest
from blake3 import blake3
from helpers.bundles import manifest_of, reindex, set_manifest
from helpers.frontmatter import YAMLISH, assert_exact_or_refused, document, mappings, runtime_side
from helpers.paths import CORPUS_SKILLS
from helpers.zips import Members, zip_of
from hypothesis import given, settings
from hypothesis import strategies as st

import skillpack.runtime as rt
from skillpack.errors import SkillError
from skillpack.formats.catalog_text import catalog_line
from skillpack.formats.digest import FileRecord, digest_records
from skillpack.formats.manifest import Manifest, json_string
from skillpack.skillmd import frontmatter_reader as reader
from skillpack.skillmd.frontmatter import normalise_text, split_frontmatter


def line_by_line(text: str, keys: dict[str, int] | None = None) -> dict[str, object] | None:
    """What `read_yaml` gives for `text` without its fast path: the `_Reader` alone (with
    `keys`, filled as the build side's parse asks)."""
    if not reader._allowed_characters(text):
        return None
    lines = text.split("\n")
    lines_reader = reader._Reader(lines, keys)
    try:
        i = lines_reader.skip(0)
        if i == len(lines) or reader._indent(lines[i]) != 0:
            return None
        data, i = lines_reader.mapping(i, 0, 0, -1)
    except reader._Refused:
        return None
    return data if lines_reader.skip(i) == len(lines) else None


def assert_same(text: str) -> bool:
    """The fast path, where it reads `text`, gives what the `_Reader` gives; whether it read."""
    fast = reader.read_simple(text.split("\n")) if reader._allowed_characters(text) else None
    if fast is not None:
        assert fast == line_by_line(text), text
        assert list(fast) == list(line_by_line(text) or {}), text  # the keys' order too
    assert reader.read_yaml(text) == line_by_line(text), text
    assert_same_key_lines(text)
    return fast is not None


def assert_same_key_lines(text: str) -> None:
    """`read_yaml(text, keys)`, the build side's parse (its fast path where `read_simple`
    reads), gives the mapping and the key lines, in order, that the `_Reader` gives."""
    keys: dict[str, int] = {}
    want_keys: dict[str, int] = {}
    got = reader.read_yaml(text, keys)
    want = line_by_line(text, want_keys)
    assert got == want, text
    if want is not None:
        assert list(keys.items()) == list(want_keys.items()), text


@pytest.mark.corpus
def test_the_fast_path_reads_most_of_the_corpus_as_the_reader_does() -> None:
    taken = 0
    for folder in CORPUS_SKILLS:
        source = normalise_text((folder / "SKILL.md").read_text("utf-8"))
        found = split_frontmatter(source)
        located = reader._locate(source, 0)
        assert located is not None, folder
        text = source[located[0] : located[1]]
        assert line_by_line(text) == found.data, folder
        taken += assert_same(text)
    assert taken >= len(CORPUS_SKILLS) * 3 // 4, taken  # 153 of 182 on the day it was written


@pytest.mark.corpus
def test_the_build_side_parse_takes_the_fast_path_for_most_of_the_corpus() -> None:
    """`split_frontmatter` (the build side: its key lines are what a problem's line comes
    from) reads through `read_simple` wherever it reads, and gives the lines `_Reader` does."""
    taken = 0
    for folder in CORPUS_SKILLS:
        source = normalise_text((folder / "SKILL.md").read_text("utf-8"))
        located = reader._locate(source, 0)
        assert located is not None, folder
        text = source[located[0] : located[1]]
        assert_same_key_lines(text)
        lines = text.split("\n")
        simple = reader.read_simple(lines) if "\n    " not in text else None
        taken += simple is not None and reader._simple_key_lines(lines, simple, {})
        want: dict[str, int] = {}
        line_by_line(text, want)
        assert split_frontmatter(source).lines == {k: v + 2 for k, v in want.items()}, folder
    assert taken >= len(CORPUS_SKILLS) * 3 // 4, taken  # 153 of 182 on the day it was written


@pytest.mark.parametrize("text", [
    "metadata.x: a\nmetadata:\n  x: b\n",  # a top-level metadata.x key: _Reader's rules
    "metadata.x: a\nmetadata: b\n",  # and metadata not a mapping: _Reader drops metadata.x
    "a: b\nmetadata:\n  x: y\nc:\n  x: z\n",  # another key's mapping records nothing
])
def test_the_build_side_key_lines_are_the_readers(text: str) -> None:
    assert_same_key_lines(text)
    keys: dict[str, int] = {}
    reader.read_yaml(text, keys)
    assert "c.x" not in keys and "b.x" not in keys


@pytest.mark.parametrize("text", [
    "a: b\nc: 'd'\ne: \"f g\"\nmetadata:\n  x: y\n  z: w\n",
    "a: b  \nc:   d\n",
    "a: x:y\nb: C#\nc: 'it is'\n",
])
def test_the_fast_path_takes_the_common_shapes(text: str) -> None:
    assert assert_same(text)


@pytest.mark.parametrize("text", [
    "a: b\n\nc: d\n",  # a blank line
    "a: b\n  more\n",  # a continuation line
    "a:\n  b: c\n   d: e\n",  # another indentation
    "a:\n  b: c\n d: e\n",
    "a:\n  b:\n    c: d\n",  # deeper nesting
    "a:\n- b\n",  # a sequence
    "a: b\na: c\n",  # a duplicate key
    "a:\n  b: c\n  b: d\n",
    "a: b: c\n",  # refused by the reader
    "a: b # c\n",  # a comment
    "a: b:\n",
    "a: \"b\\n\"\n",  # an escape
    "a: 'b' c\n",
    "a: 'it''s'\n",
    "a: \"b\" \"c\"\n",
    "a: |\n  b\n",  # a block scalar
    "a: [b]\n",
    "a: &x b\n",
    "a:\n",  # nothing under a key
    "a:\nb: c\n",
    "\"a\": b\n",  # a quoted key
    " a: b\n",  # an indented top level
    "a: b\n# c\n",
    "a: b\n  \n",
    "-a: b\n",
    "",
])
def test_the_fast_path_leaves_everything_else_to_the_reader(text: str) -> None:
    assert not assert_same(text)


@settings(max_examples=400, deadline=None)
@given(mappings())
def test_generated_frontmatter_is_read_alike_by_both_paths(text: str) -> None:
    assert_same(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["name", "description", "license", "x-y", "a.b"]),
                          st.text(alphabet="ab :#'\"\\-é", min_size=0, max_size=12),
                          st.booleans()), min_size=1, max_size=5))
def test_generated_simple_lines_are_read_alike_by_both_paths(
        entries: list[tuple[str, str, bool]]) -> None:
    lines = [f"{'  ' if nested else ''}{key}: {value}" for key, value, nested in entries]
    for text in ("metadata:\n" + "\n".join(lines) + "\n",
                 "\n".join(line.lstrip(" ") for line in lines) + "\n"):
        assert_same(text)
        assert_exact_or_refused(document(text))  # and what it reads is what YAML reads


@settings(max_examples=300, deadline=None)
@given(YAMLISH)
def test_fuzzed_text_is_read_alike_by_both_paths(text: str) -> None:
    assert_same(text)


# -- the second fast path: nested mappings and sequences ----------------------------------------


def assert_same_nested(text: str) -> bool:
    """`read_nested`, where it reads `text`, gives what the `_Reader` gives (keys' order too),
    and so does `read_yaml`; whether it read."""
    fast = reader.read_nested(text.split("\n")) if reader._allowed_characters(text) else None
    want = line_by_line(text)
    if fast is not None:
        assert fast == want, text
        assert repr(fast) == repr(want), text  # the order of every mapping's keys too
    assert reader.read_yaml(text) == want, text
    return fast is not None


@pytest.mark.corpus
def test_the_nested_path_reads_the_corpus_as_the_reader_does() -> None:
    taken = left = left_taken = 0
    for folder in CORPUS_SKILLS:
        source = normalise_text((folder / "SKILL.md").read_text("utf-8"))
        located = reader._locate(source, 0)
        assert located is not None, folder
        text = source[located[0] : located[1]]
        nested = assert_same_nested(text)
        taken += nested
        if "\n    " in text or reader.read_simple(text.split("\n")) is None:
            left += 1
            left_taken += nested
    assert taken >= len(CORPUS_SKILLS) * 9 // 10, taken  # 181 of 182 when written
    assert left_taken >= left * 3 // 4, (left_taken, left)  # 29 of the 30 read_simple leaves


NESTED_TAKEN = [
    "a:\n  b:\n    c: d\n",
    "a:\n- b\n- 'c'\n",  # a sequence at its key's column
    "a:\n  - b\n  - c\nd: e\n",
    "m:\n  o:\n    env:\n    - name: X\n      required: true\n    - name: Y\n  v: \"1\"\n",
    "a:\n-   b: c\n    d: e\n- f\n",  # an entry's mapping at its first key's column
    "a:\n  - b: c\n    d:\n      e: f\n  - g: h\nz: y\n",
    "a:\n  b:\n  - c\n  d: e\n",  # a sequence ends at its key's column
    "a: b  \nc:   d\n",
    "a: |\n  x\n   y\nb: c\n",  # block scalars, read by _Reader.block
    "m:\n  d: >-\n    folded\n    text\n  e: f\n",
    "a: |+\n  x\n\nb: c\n",
    "a: >\n  x\n\n  y\n",
    "a: |2\n    x\n",
    "a: |\n  x\n\n",  # its trailing empty lines are its own
    "a:\n- name: x\n  desc: |\n    t\n  k: v\n- y\n",  # in an entry's mapping, past its first key
]


@pytest.mark.parametrize("text", NESTED_TAKEN)
def test_the_nested_path_takes_nested_shapes(text: str) -> None:
    assert assert_same_nested(text)
    assert assert_exact_or_refused(document(text)) is not None  # and YAML reads them so


@pytest.mark.parametrize("text", [
    "a:\n  b: c\n   d: e\n",  # an indentation no open collection has
    "a:\n  b: c\n d: e\n",
    "a:\n  - b\n  c: d\n",  # a key after an indented sequence
    "a:\n  - b\n    c\n",  # a continuation line
    "a:\n- b: c\n   d: e\n",
    "a:\n- b: c\n - d\n",
    "a:\n- - b\n",  # a sequence in a sequence
    "a:\n-\n  b\n",  # an entry's node on the next line
    "a:\n- b:\n    c: d\n",  # "- key:"
    "a:\n  b: c\n  - d\n",  # an entry where a key is due
    "- a\n",  # a top-level sequence
    "a:\nb: c\n",  # an empty value
    "a:\n",
    "a:\n  b:\n",
    "a:\n  b: c\n\n  d: e\n",  # a blank line
    "a:\n  # c\n  b: d\n",  # a comment
    "a:\n  b: c\n  b: d\n",  # a duplicate key
    "a:\n- b: c\n  b: d\n",
    "a:\n- b: |\n    c\n",  # a block scalar in an entry
    "a: |\n  x\nb: c\n\nd: e\n",  # a blank line after it
    "a: |x\n  b\n",  # a header _Reader refuses
    "a:\n  b: [c]\n",  # a flow sequence
    "a:\n  b: c # d\n",
    "a:\n  \"b\": c\n",  # a quoted key
    "a:\n- x: y: z\n",
    "a:\n- 'it''s'\n",
    " a: b\n",
    "",
    "".join(" " * level + "a:\n" for level in range(40)) + " " * 40 + "b: c\n",  # too deep
])
def test_the_nested_path_leaves_everything_else_to_the_reader(text: str) -> None:
    assert not assert_same_nested(text)


@settings(max_examples=500, deadline=None)
@given(mappings())
def test_generated_frontmatter_is_read_alike_by_the_nested_path(text: str) -> None:
    if assert_same_nested(text):
        assert runtime_side(document(text)) is not None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.sampled_from(
    ["a: b", "c: 'd'", "e:", "- f", "- g: h", "- i:", "-", "j: k: l", "m: \"n\"", "- 'o'",
     "a: x", "p: q #r"])), min_size=1, max_size=10))
def test_generated_indented_lines_are_read_alike_by_the_nested_path(
        entries: list[tuple[int, str]]) -> None:
    text = "".join(" " * indent + line + "\n" for indent, line in entries)
    if assert_same_nested(text):
        assert assert_exact_or_refused(document(text)) is not None


NESTED_KEYS = st.sampled_from(["name", "a", "b-c", "d.e", "f_g", "env", "x1"])
NESTED_SCALARS = st.sampled_from(  # mostly what it reads, sometimes what it leaves
    ["v", "two words", "'q'", '"d q"', "a:b", "C#", "1.0", "true", "''", "x y z"] * 4
    + ["-v", "[v]", "v:", "v # c", "'a'b'", "a: b", '"\\n"'])


@st.composite
def nested_lines(draw: st.DrawFn, col: int = 0, depth: int = 0,
                 first: str | None = None) -> list[str]:
    """Lines of a block mapping at column `col` (its first key after `first`, an entry's
    ``-`` and spaces, when given): scalars, block scalars, nested mappings, sequences of
    scalars or of mappings, at indentations drawn (sometimes off by one, which YAML refuses or reads
    otherwise), mostly the subset `read_nested` reads."""
    lines: list[str] = []
    for at, key in enumerate(draw(st.lists(NESTED_KEYS, min_size=1, max_size=3, unique=True))):
        lead = first if at == 0 and first is not None else " " * col
        kind = draw(st.sampled_from(["scalar", "scalar", "block", "map", "list"] if depth < 3
                                    else ["scalar", "block"]))
        if kind == "scalar":
            lines.append(f"{lead}{key}: {draw(NESTED_SCALARS)}")
        elif kind == "block":
            lines.append(f"{lead}{key}: {draw(st.sampled_from(['|', '>', '|-', '>+', '|2']))}")
            for _ in range(draw(st.integers(0, 3))):
                lines.append(" " * (col + draw(st.integers(0, 3))) + draw(st.sampled_from(
                    ["text", "more text", " lead", "", "- x", "k: v"])))
        elif kind == "map":
            lines.append(f"{lead}{key}:")
            lines.extend(draw(nested_lines(col + draw(st.integers(1, 3)), depth + 1)))
        else:
            lines.append(f"{lead}{key}:")
            dash = col + draw(st.sampled_from([0, 0, 1, 2]))
            for _ in range(draw(st.integers(1, 3))):
                gap = draw(st.sampled_from([1, 1, 2]))
                if draw(st.booleans()):
                    lines.append(" " * dash + "-" + " " * gap + draw(NESTED_SCALARS))
                else:
                    lines.extend(draw(nested_lines(dash + 1 + gap, depth + 1,
                                                   " " * dash + "-" + " " * gap)))
        if draw(st.integers(0, 12)) == 0:
            lines.append(" " * draw(st.integers(0, col + 2)) + draw(st.sampled_from(
                ["x: y", "- z", "k: v", ""])))
    return lines


@settings(max_examples=500, deadline=None)
@given(nested_lines())
def test_generated_nested_frontmatter_is_read_exactly_by_the_nested_path(
        lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    if assert_same_nested(text):
        assert assert_exact_or_refused(document(text)) is not None


@settings(max_examples=300, deadline=None)
@given(YAMLISH)
def test_fuzzed_text_is_read_alike_by_the_nested_path(text: str) -> None:
    assert_same_nested(text)


@pytest.mark.parametrize("source", [
    "---\na: b\n---\n", "---\na: b\n---", "---\na: b\n--- \nx", "--- \na: b\n---\n",
    "---\n---\n", "---\na: b\n----\n---\n", "---\r\na: b\n---\n", "---\na: b\n", "---",
    "\ufeff---\na: b\n---\n", "---\na\n---x\n---\t\n",
])
def test_the_frontmatter_is_found_as_split_frontmatter_finds_it(source: str) -> None:
    got = reader.read_frontmatter(source)
    try:
        want = split_frontmatter(normalise_text(source))
    except SkillError:
        assert got is None
        return
    assert got is not None
    assert (got.data, got.body, got.body_line) == (want.data, want.body, want.body_line)


# -- the catalog's folding and the quoting of load_skill -----------------------------------------


def test_every_character_split_splits_on_but_the_space_is_unprintable() -> None:
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    assert len(spaces) > 20
    assert [c for c in spaces if c.isprintable()] == [" "]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["a", "é", " ", "  ", "\t", "\n", "\x85", "\xa0", "\u2028",
                                 "\u3000", "\x1f", "\u200b", "b c"]), max_size=12).map("".join)
       | st.text(max_size=30))
def test_the_catalog_folds_whitespace_as_split_and_join_do(description: str) -> None:
    assert catalog_line("n", description) == "- n: " + " ".join(description.split())


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=30) | st.sampled_from(["", "\ud800", "a\udfffb", "\x7f\x00\x1f",
                                               "\"\\/\b\f\n\r\t", "\u2028\u2029"]))
def test_json_string_quotes_as_json_dumps_does(text: str) -> None:
    assert json_string(text) == json.dumps(text, ensure_ascii=False)


@pytest.mark.corpus
def test_json_string_quotes_every_corpus_path_as_json_dumps_does() -> None:
    for folder in CORPUS_SKILLS:
        for path in folder.rglob("*"):
            text = path.relative_to(folder).as_posix()
            assert json_string(text) == json.dumps(text, ensure_ascii=False)


# -- SKILL.md read from its head -----------------------------------------------------------------


def with_skill_md(members: Members, name: str, data: bytes) -> bytes:
    """The bundle of `members` with skill `name`'s SKILL.md replaced by `data`, its manifest,
    digest and index recomputed (as a bundle built from such a file would be, were it
    packable): only the runtime's own checks stand between `data` and a caller."""
    manifest = manifest_of(members, name)
    files, sha256 = list(manifest.files), list(manifest.sha256)
    at = [record.path for record in files].index("SKILL.md")
    files[at] = FileRecord(path="SKILL.md", mode=files[at].mode, size=len(data),
                           blake3=blake3(data).hexdigest())
    sha256[at] = hashlib.sha256(data).hexdigest()
    set_manifest(members, Manifest(
        manifest.name, manifest.description, digest_records(files), tuple(files),
        manifest.programs, manifest.tools, manifest.allowances, manifest.format,
        tuple(sha256)))
    members[f"{name}/SKILL.md"] = (data, False)
    reindex(members)
    return zip_of(members)


FRONT = b"---\nname: waitlist\ndescription: Keeps the waitlist.\n---\n"


def whole_text_error(data: bytes) -> str:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"SKILL.md is not valid UTF-8 (byte {exc.start})"
    raise AssertionError("valid UTF-8")


@pytest.mark.parametrize("data", [
    FRONT + b"x" * 5000 + b"\xff\n",  # past the head
    FRONT + b"x" * 4000 + b"\xe2\x82\n" + b"y" * 200,  # before the head's last line feed
    FRONT + b"x" * 4093 + b"\xe2\x82\xac" + b"y" * 200,  # a character across the head's end
    FRONT + b"x" * 4093 + b"\xe2\x82" + b"y" * 200,
    FRONT.replace(b"Keeps", b"Keeps \xc3") + b"x" * 5000,  # in the frontmatter
    FRONT + b"x" * 100 + b"\xff",  # a SKILL.md shorter than the head
])
def test_a_skill_md_not_utf8_anywhere_is_refused_naming_the_byte(
        small: Members, data: bytes) -> None:
    if b"\xe2\x82\xac" in data:
        data += b"\xff"
    bundle = rt.load(with_skill_md(small, "waitlist", data))
    with pytest.raises(SkillError) as caught:
        bundle.catalog_text()
    assert caught.value.message == whole_text_error(data)
    with pytest.raises(SkillError):  # and again: nothing of it is ever shown
        bundle.load_skill("waitlist")


@pytest.mark.parametrize("data", [
    FRONT + b"x" * 5000 + "\u20ac\n".encode() * 300,
    FRONT + (b"line\n" * 2000),
    FRONT.replace(b"Keeps the", b"Keeps the " + b"long " * 2000) + b"body\n" * 100,  # past it
    FRONT.replace(b"\n", b"\r\n") + b"body\r\n" * 2000,  # CR line ends
    FRONT + b"body\r\n" * 2000,  # CR in the body only
    b"\xef\xbb\xbf" + FRONT + b"body\n" * 2000,  # a BOM
    FRONT.replace(b"Keeps", b"Keeps" + b"e" * (4096 - len(FRONT))) + b"x" * 4096,  # at its end
    FRONT.replace(b"Keeps", b"Keeps" + b"e" * (4097 - len(FRONT))) + b"x" * 4096,  # just past
    b"---\nname: waitlist\n" + b"".join(b"k%d: v\n" % i for i in range(1000)) + b"---\nbody\n",
])
def test_a_long_skill_md_reads_as_its_whole_text_does(small: Members, data: bytes) -> None:
    skill = rt.load(with_skill_md(small, "waitlist", data))["waitlist"]
    whole = reader.read_frontmatter(data.decode("utf-8"))
    assert whole is not None
    assert skill.body == whole.body
    assert skill.description == whole.data.get("description", "")
    assert skill.skill.body_line == whole.body_line


@pytest.mark.corpus
def test_every_corpus_skill_md_reads_as_its_whole_text_does(corpus_bundle: bytes) -> None:
    bundle = rt.load(corpus_bundle)
    for name in bundle.names:
        skill = bundle[name]
        whole = reader.read_frontmatter(skill.file("SKILL.md").text())
        assert whole is not None
        assert (skill.description, skill.body) == (whole.data["description"], whole.body)
        assert skill.skill.body_line == whole.body_line
