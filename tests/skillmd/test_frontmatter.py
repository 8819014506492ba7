"""The frontmatter: where it is, how it is read (failsafe YAML), and what it refuses."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.paths import CORPUS_SKILLS, FIXTURES
from helpers.skills import write_skill
from hypothesis import given, settings
from hypothesis import strategies as st

from skillpack.errors import SkillError, SkillpackError
from skillpack.skillmd.frontmatter import MAX_FRONTMATTER_BYTES, normalise_text, split_frontmatter
from skillpack.skillmd.frontmatter_reader import closing_line
from skillpack.skillmd.skill import parse_skill
from skillpack.source.load import parse_skill_file


def problems(text: str) -> list[tuple[str, int | None, str]]:
    with pytest.raises(SkillError) as info:
        parse_skill(text, file="SKILL.md")
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, SkillpackError)
    return [(p.code, p.line, p.message) for p in info.value.problems]


def test_bom_and_crlf_are_accepted_with_the_same_lines() -> None:
    plain = ("---\nname: demo\ndescription: A demo.\nmetadata:\n  author: me\n---\n\n# Demo\n\n"
             "```tool\nid: hi\ndescription: Say hi.\nrun: echo hi\n```\n")
    for variant in (plain, "\ufeff" + plain, plain.replace("\n", "\r\n"),
                    "\ufeff" + plain.replace("\n", "\r\n"), plain.replace("\n", "\r")):
        skill = parse_skill(variant)
        assert skill.name == "demo"
        assert skill.description == "A demo."
        assert skill.metadata == {"author": "me"}
        assert skill.lines == {"name": 2, "description": 3, "metadata": 4, "metadata.author": 5}
        assert skill.body == ("\n# Demo\n\n```tool\nid: hi\ndescription: Say hi.\n"
                              "run: echo hi\n```\n")
        assert skill.body_line == 7
        assert [t.line for t in skill.tools] == [10]
        assert "\r" not in skill.rendered


def test_bom_and_crlf_in_a_real_file(tmp_path: Path) -> None:
    for real in (FIXTURES / "waitlist", FIXTURES / "release-notes"):
        source = (real / "SKILL.md").read_bytes()
        assert b"\r" not in source and not source.startswith(b"\xef\xbb\xbf")
        folder = shutil.copytree(real, tmp_path / real.name)
        write_skill(folder, b"\xef\xbb\xbf" + source.replace(b"\n", b"\r\n"))
        crlf = parse_skill_file(folder)
        plain = parse_skill_file(real)
        assert (crlf.name, crlf.description, crlf.body, [t.id for t in crlf.tools]) == (
            plain.name, plain.description, plain.body, [t.id for t in plain.tools])


def test_normalise_text() -> None:
    assert normalise_text("\ufeffa\r\nb\rc\n") == "a\nb\nc\n"
    assert normalise_text("a\ufeff") == "a\ufeff"  # only a leading BOM goes


def test_failsafe_scalars_stay_strings() -> None:
    skill = parse_skill(
        "---\nname: demo\ndescription: 1.10\nmetadata:\n  version: 1.10\n  on: yes\n"
        "  off: no\n  nothing: null\n  tilde: ~\n  date: 2024-01-01\n  octal: 0o17\n"
        "  hex: 0x1F\n  float: 1e3\n  empty:\n  quoted: '007'\n---\n"
    )
    assert skill.description == "1.10"
    assert skill.metadata == {
        "version": "1.10", "on": "yes", "off": "no", "nothing": "null", "tilde": "~",
        "date": "2024-01-01", "octal": "0o17", "hex": "0x1F", "float": "1e3", "empty": "",
        "quoted": "007",
    }


def test_block_scalars_and_lists_keep_their_shape() -> None:
    skill = parse_skill(
        "---\nname: demo\ndescription: >-\n  Folded\n  text.\nlicense: |\n  line one\n"
        "  line two\nallowed-tools:\n  - Read\n  - Write\n---\n"
    )
    assert skill.description == "Folded text."
    assert skill.license == "line one\nline two\n"
    assert skill.allowed_tools == ("Read", "Write")
    assert skill.frontmatter["allowed-tools"] == ["Read", "Write"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\nname: a\nname: b\n---\n",
         [("duplicate-key", 3, "frontmatter key 'name' appears twice (lines 2 and 3); keep one")]),
        ("---\nname: a\nmetadata:\n  k: 1\n  k: 2\n---\n",
         [("duplicate-key", 5,
           "frontmatter key 'metadata.k' appears twice (lines 4 and 5); keep one")]),
        ("---\nname: a\nx:\n  - {k: 1, k: 2}\n---\n",
         [("duplicate-key", 4, "frontmatter key 'k' appears twice (lines 4 and 4); keep one")]),
        ("---\nname: &n a\n---\n",
         [("yaml-anchor", 2, "frontmatter: anchors (&name) are not allowed")]),
        ("---\nname: a\ndescription: d\nmetadata: &m\n  k: v\n---\n",
         [("yaml-anchor", 4, "frontmatter: anchors (&name) are not allowed")]),
        ("---\nname: a\n\ndescription: *d\n---\n",
         [("yaml-alias", 4, "frontmatter: aliases (*name) are not allowed")]),
        ("---\nname: !!str a\n---\n",
         [("yaml-tag", 2, "frontmatter: explicit tags (tag:yaml.org,2002:str) are not allowed")]),
        ("---\nname: a\nmetadata: !custom\n  k: v\n---\n",
         [("yaml-tag", 3, "frontmatter: explicit tags (!custom) are not allowed")]),
        ("---\n- name\n- description\n---\n",
         [("frontmatter-not-mapping", 2,
           "the frontmatter must be a mapping of fields ('name: ...'), not a list")]),
        ("---\n\njust text\n---\n",
         [("frontmatter-not-mapping", 3,
           "the frontmatter must be a mapping of fields ('name: ...'), not a single value")]),
        ("---\n# only a comment\n---\n",
         [("frontmatter-not-mapping", 1,
           "the frontmatter is empty; it must hold 'name: ...' and 'description: ...'")]),
        ("---\n[a]: b\n---\n", [("yaml-key", 2, "frontmatter keys must be plain names")]),
        ("---\nname: x\ndescription: Use it when: asked\n---\n",
         [("yaml-syntax", 3, "frontmatter is not valid YAML: mapping values are not allowed "
           "here (put a value holding ': ' in quotes)")]),
        ("---\nname: x\ndescription: 'open\n---\n",
         [("yaml-syntax", 3, "frontmatter is not valid YAML: found unexpected end of stream "
           "(while scanning a quoted scalar)")]),
        ("---\nname: x\n--- trailing\n---\n",
         [("yaml-syntax", 3, "frontmatter is not valid YAML: but found another document "
           "(expected a single document in the stream)")]),
        ("---\nname: x\n\tdescription: d\n---\n",
         [("yaml-syntax", 3, "frontmatter is not valid YAML: found character '\\t' that "
           "cannot start any token (while scanning for the next token)")]),
        ("---\nname: x\ndescription: a\x00b\n---\n",
         [("yaml-syntax", 3, "frontmatter is not valid YAML: it holds the character U+0000, "
           "which YAML does not allow")]),
        ("---\nname: x\ndescription: " + "[" * 3000 + "\n---\n",
         [("yaml-syntax", 2, "frontmatter is not valid YAML: it is nested too deeply")]),
        ("# Title\n---\nname: x\n---\n",
         [("frontmatter-missing", 1, "SKILL.md must start with YAML frontmatter: a '---' "
           "line, the fields (name, description, ...), then a closing '---' line")]),
        ("", [("frontmatter-missing", 1, "SKILL.md must start with YAML frontmatter: a '---' "
               "line, the fields (name, description, ...), then a closing '---' line")]),
        ("---\nname: x\ndescription: d\n",
         [("frontmatter-unterminated", 1,
           "the frontmatter is never closed: add a '---' line after the last field")]),
    ],
)
def test_refusals_name_their_line(text: str, expected: list[tuple[str, int, str]]) -> None:
    assert problems(text) == expected


def test_delimiter_lines_may_carry_trailing_blanks() -> None:
    assert parse_skill("---  \nname: x\ndescription: d\n--- \t\nbody\n").body == "body\n"


def test_a_skill_error_says_where() -> None:
    with pytest.raises(SkillError) as info:
        parse_skill("---\nname: a\nname: b\n---\n", file="x/SKILL.md")
    assert str(info.value) == ("x/SKILL.md:3: frontmatter key 'name' appears twice (lines 2 "
                               "and 3); keep one")
    assert (info.value.path, info.value.line) == ("x/SKILL.md", 3)


def test_every_duplicate_is_reported_at_once() -> None:
    found = problems("---\nname: a\nname: b\nmetadata:\n  k: 1\n  k: 2\n[x]: y\n---\n")
    assert [(code, line) for code, line, _ in found] == [
        ("duplicate-key", 3), ("duplicate-key", 6), ("yaml-key", 7)]


def test_frontmatter_size_bound() -> None:
    filler = "# " + "x" * 78 + "\n"
    just_under = "---\nname: x\n" + filler * ((MAX_FRONTMATTER_BYTES - 100) // 81) + "---\n"
    assert parse_skill(just_under).name == "x"
    over = "---\nname: x\n" + filler * (MAX_FRONTMATTER_BYTES // 81 + 1) + "---\n"
    assert problems(over) == [("frontmatter-too-large", 2, "the frontmatter is over 64 KiB; "
                               "keep long text in the body or in references/")]


def test_split_frontmatter_positions() -> None:
    front = split_frontmatter("---\nname: x\n---")
    assert (front.data, front.body, front.body_line) == ({"name": "x"}, "", 4)
    front = split_frontmatter("---\nname: x\nmetadata:\n  a: b\n---\nbody\nmore\n")
    assert front.lines == {"name": 2, "metadata": 3, "metadata.a": 4}
    assert (front.body, front.body_line) == ("body\nmore\n", 6)
    # the closing line is the first '---' line: a later one belongs to the body
    front = split_frontmatter("---\nname: x\n---\n---\n")
    assert front.body == "---\n"


def test_name_and_skill_keys() -> None:
    both = parse_skill("---\nname: same\nskill: same\ndescription: d\n---\n")
    assert both.name == "same"
    only_skill = parse_skill("---\nskill: hard\ndescription: d\n---\n")
    assert only_skill.name == "hard"
    assert problems("---\nname: one\nskill: two\ndescription: d\n---\n") == [
        ("name-conflict", 3, "'name: one' and 'skill: two' disagree; a skill has one name "
         "(keep 'name:' for Agent Skills or 'skill:' for hard skills)")]


def test_encoding_error_names_the_line(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "latin", b"---\nname: latin\ndescription: caf\xe9\n---\n")
    with pytest.raises(SkillError) as info:
        parse_skill_file(folder)
    assert [(p.code, p.line) for p in info.value.problems] == [("encoding", 3)]
    assert info.value.message == "SKILL.md is not valid UTF-8 (byte 32); save it as UTF-8"


def test_missing_skill_md(tmp_path: Path) -> None:
    with pytest.raises(SkillError) as info:
        parse_skill_file(tmp_path)
    assert str(info.value) == (f"{tmp_path / 'SKILL.md'}: there is no SKILL.md here (a skill "
                               "is a folder holding SKILL.md)")


# -- the closing delimiter: the first line whose rstrip() is "---" -------------------------------


def _closing_by_lines(rest: str) -> tuple[int, int] | str:
    """The closing delimiter as split_frontmatter looked for it before: each line in turn,
    stopping at the first line past the size limit. (offset, line in the file), or the
    refusal's code."""
    offset, line_no = 0, 1
    while offset <= len(rest):
        if offset > MAX_FRONTMATTER_BYTES:
            return "frontmatter-too-large"
        end = rest.find("\n", offset)
        line = rest[offset:] if end < 0 else rest[offset:end]
        line_no += 1
        if line.rstrip() == "---":
            return offset, line_no
        if end < 0:
            break
        offset = end + 1
    return "frontmatter-unterminated"


def _closing_now(rest: str) -> tuple[int, int] | str:
    """What split_frontmatter finds now: the same triple from `closing_line`."""
    closing = closing_line(rest, 0)
    if (closing if closing >= 0 else rest.rfind("\n") + 1) > MAX_FRONTMATTER_BYTES:
        return "frontmatter-too-large"
    if closing < 0:
        return "frontmatter-unterminated"
    return closing, rest.count("\n", 0, closing) + 2


_LINES = ["---", "--- ", "---\t", "---\x0b", "---\x85", "---\u2003", "----", " ---", "---x",
          "--- x", "-- -", "--", "-", "", " ", "name: x", "a: ---", "#---", "\t---", "---\r"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_LINES), max_size=8), st.booleans())
def test_the_closing_line_is_the_one_each_line_in_turn_finds(lines: list[str],
                                                           newline: bool) -> None:
    rest = "\n".join(lines) + ("\n" if newline else "")
    assert _closing_now(rest) == _closing_by_lines(rest), repr(rest)
    if _closing_by_lines(rest) == "frontmatter-unterminated":
        with pytest.raises(SkillError) as info:
            split_frontmatter("---\n" + rest, file="SKILL.md")
        assert info.value.problems[0].code == "frontmatter-unterminated"


def test_the_closing_line_at_the_size_limit() -> None:
    """Lines starting just under, at and past the limit; a closing line past it, none, and
    many ``----`` lines before it (each looked at up to the limit, no further)."""
    limit = MAX_FRONTMATTER_BYTES
    for start in (limit - 2, limit - 1, limit, limit + 1, limit + 2):
        for tail in ("---", "---\n", "----\n", "----", "x\n---\n", "\n"):
            rest = "a" * (start - 1) + "\n" + tail
            assert _closing_now(rest) == _closing_by_lines(rest), (start, tail)
    many = "----\n" * (limit // 5 + 10) + "---\n"
    assert _closing_now(many) == _closing_by_lines(many) == "frontmatter-too-large"
    assert _closing_now("") == _closing_by_lines("") == "frontmatter-unterminated"


@pytest.mark.corpus
def test_the_closing_line_of_every_corpus_skill() -> None:
    for skill in CORPUS_SKILLS:
        text = normalise_text((skill / "SKILL.md").read_text("utf-8"))
        rest = text.partition("\n")[2]
        assert _closing_now(rest) == _closing_by_lines(rest), skill
