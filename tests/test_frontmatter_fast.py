"""The frontmatter's one-pass libyaml path (issue 18): a text holding no ``&``, ``*`` or
``!`` and few nesting indicators is composed without the event pass that looks for anchors,
aliases, tags and deep nesting, and constructed without a loader; every outcome (data, key
lines, body, or the error and its problems) is that of the event pass, on the corpus and on
generated texts."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import CORPUS_SKILLS
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
