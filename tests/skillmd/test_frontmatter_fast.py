"""The frontmatter's one-pass libyaml path (issue 18): a text holding no ``&``, ``*`` or
``!`` and few nesting indicators is composed without the event pass that looks for anchors,
aliases, tags and deep nesting, and constructed without a loader; every outcome (data, key
lines, body, or the error and its problems) is that of the event pass, on the corpus and on
generated texts."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.paths import CORPUS_SKILLS
from hypothesis import given, settings
from hypothesis import strategies as st

from skillpack.errors import SkillError
from skillpack.skillmd import frontmatter
from skillpack.skillmd.frontmatter import split_frontmatter


def outcome(source: str) -> tuple[Any, ...]:
    try:
        found = split_frontmatter(source, file="SKILL.md")
    except SkillError as err:
        return ("error", err.message, err.line, tuple(err.problems))
    return ("ok", found.data, found.lines, found.body, found.body_line)


def both(source: str) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    fast = outcome(source)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(frontmatter, "_may_need_events", lambda text: True)
        slow = outcome(source)
    return fast, slow


PIECES = ["name", "description", "metadata", "a", "b", ":", ": ", " ", "  ", "\n", "\n  ",
          "- ", "-", "[", "]", "{", "}", ", ", "\"", "'", "#", "?", "&x ", "*x", "!!str ",
          "! ", "|", ">", "é", "—", "\\ud800", "\t", "%", "@", "`", "...", "---"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_generated_frontmatters_give_the_same_outcome(text: str) -> None:
    fast, slow = both(f"---\n{text}\n---\nbody\n")
    assert fast == slow


@pytest.mark.parametrize("depth", [1, 30, 63, 64, 65, 70])
def test_deep_nesting_gives_the_same_outcome(depth: int) -> None:
    flow = "x: " + "[" * depth + "1" + "]" * depth
    block = "".join("  " * i + f"k{i}:\n" for i in range(depth)) + "  " * depth + "v"
    for text in (flow, block):
        fast, slow = both(f"---\n{text}\n---\n")
        assert fast == slow


def test_what_the_event_pass_refuses_still_takes_it() -> None:
    """An anchor, an alias, a tag: each still refused with its code."""
    for text, code in (("a: &x 1\nb: 2", "yaml-anchor"), ("a: 1\nb: *x", None),
                       ("a: !!str 1", "yaml-tag")):
        assert frontmatter._may_need_events(text)
        fast, slow = both(f"---\nname: n\n{text}\n---\n")
        assert fast == slow and fast[0] == "error"
        if code is not None:
            assert fast[3][0].code == code


@pytest.mark.corpus
def test_every_corpus_frontmatter_gives_the_same_outcome() -> None:
    one_pass = 0
    for folder in CORPUS_SKILLS:
        source = frontmatter.normalise_text((folder / "SKILL.md").read_text(encoding="utf-8"))
        fast, slow = both(source)
        assert fast == slow, folder
        one_pass += not frontmatter._may_need_events(source.split("\n---", 1)[0])
    assert one_pass > len(CORPUS_SKILLS) // 2  # the one-pass path is the common one


# -- the closing delimiter found by str.find (issue 18, fourth round) ---------------------------


def _closing_by_lines(rest: str) -> tuple[int, int] | str:
    """The closing delimiter as split_frontmatter looked for it before: each line in turn,
    stopping at the first line past the size limit. (offset, line in the file), or the
    refusal's code."""
    offset, line_no = 0, 1
    while offset <= len(rest):
        if offset > frontmatter.MAX_FRONTMATTER_BYTES:
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
    closing = frontmatter.closing_line(rest, 0)
    if (closing if closing >= 0 else rest.rfind("\n") + 1) > frontmatter.MAX_FRONTMATTER_BYTES:
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
    source = "---\n" + rest
    fast = outcome(source)
    if _closing_by_lines(rest) == "frontmatter-unterminated":
        assert fast[0] == "error" and fast[3][0].code == "frontmatter-unterminated"


def test_the_closing_line_at_the_size_limit() -> None:
    """Lines starting just under, at and past the limit; a closing line past it, none, and
    many ``----`` lines before it (each looked at up to the limit, no further)."""
    limit = frontmatter.MAX_FRONTMATTER_BYTES
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
        text = frontmatter.normalise_text((skill / "SKILL.md").read_text("utf-8"))
        rest = text.partition("\n")[2]
        assert _closing_now(rest) == _closing_by_lines(rest), skill
