"""A tool fence inside an HTML block: hidden from a reader of the rendered SKILL.md, defined
for a model all the same. `tool-in-comment` covered `<!--` only; `<script>`, `<?...?>`,
`<!X ...>`, `<![CDATA[...]]>` and a `<div>` not yet ended by a blank line hid a tool as well,
and check said nothing. markdown-it-py (CommonMark 0.31.2) is the oracle of what a block is."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cli import cli
from helpers.skills import write_skill
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from skillpack.skillmd.fences import parse_body
from skillpack.skillmd.html_blocks import tool_fences_in_html

HEAD = "---\nname: {}\ndescription: D. Use when testing.\n---\n# T\n\n"
TOOL = "```tool\nid: {}\ndescription: A.\nrun: echo a\n```"


def hidden_by_markdown_it(body: str) -> list[int]:
    """The 0-based lines of the tools parse_body defines that markdown-it puts in an HTML
    block at the top level of the document."""
    blocks = [t.map for t in MarkdownIt("commonmark").parse(body)
              if t.type == "html_block" and t.level == 0 and t.map is not None]
    lines = [tool.line - 1 for tool in parse_body(body).tools]
    return [n for n in lines if any(a <= n < b for a, b in blocks)]


def hidden_by_skillpack(body: str) -> list[int]:
    return [found.line for found in tool_fences_in_html(body)]


@pytest.mark.parametrize(("name", "body", "opener"), [
    ("script", "<script>\n{}\n</script>\n", "'<script'"),
    ("pi", "<?php\n{}\n?>\n", "'<?'"),
    ("cdata", "<![CDATA[\n{}\n]]>\n", "'<![CDATA['"),
    ("declaration", "<!DOCTYPE x\n{}\n>\n", "'<!DOCTYPE'"),
    ("div", "<div>\n{}\n</div>\n", "'<div'"),
    ("span", "<span class=\"a\">\n{}\n</span>\n", "'<span'"),
])
def test_qa_s_trees_each_get_the_warning(tmp_path: Path, name: str, body: str,
                                         opener: str) -> None:
    skill = write_skill(tmp_path / name, HEAD.format(name) + body.format(TOOL.format("a")))
    checked = cli("check", skill)
    assert checked.exit_code == 0
    assert (f"SKILL.md:8: warning: [tool-in-html] this tool fence lies in the HTML block "
            f"{opener} opened at line 7, which ") in checked.stdout
    assert "yet it defines a tool a model may call" in checked.stdout
    assert cli("check", skill, "--strict").exit_code == 1


@pytest.mark.parametrize("body", [
    "<div>\n\n{}\n\n</div>\n",                # a blank line ended the block: the fence shows
    "text\n<span class=\"a\">\n{}\n",         # a whole tag cannot interrupt a paragraph
    "<script>x</script>\n{}\n",               # ended on its own line
    "<!-->\n{}\n",                            # so is this comment
    "    <div>\n{}\n",                        # indented: code, not HTML
    "```\n<div>\n```\n{}\n",                  # in a fence: code, not HTML
    "<divx>\n\n{}\n",                         # a whole tag, but a blank line after it
    "<pre/>\n{}\n",                           # 'pre' never starts a block of type 7 (spec)
])
def test_a_fence_the_reader_sees_gets_none(tmp_path: Path, body: str) -> None:
    text = body.format(TOOL.format("a"))
    if "<pre/>" not in text:  # where markdown-it follows the spec, it agrees
        assert hidden_by_markdown_it(text) == []
    assert hidden_by_skillpack(text) == []


LINES = ["", "   ", "text", "more text", "<!--", "-->", "<!-- one -->", "<!-->", "<script>",
         "<SCRIPT type=x>", "end </script>", "<pre", "<textarea>", "end </style>", "<?php",
         "?>", "<!DOCTYPE html", "<!doctype html>", ">", "<![CDATA[", "]]>", "<div>",
         "</div>", "<DIV class=x>", "<details>", "<summary>s</summary>", "<divx>", "<div/>",
         "<span>", "</span>", "<x-box a='1' b=c d>", "<a href=\"x\">", "<span", "  <div>",
         "   <!--", "    <!--", "    code", "\t<div>", "# heading", "---", "===", "***",
         "~~~", "```", "```text"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*LINES, "TOOL", "TOOL"]), max_size=14))
def test_the_blocks_are_markdown_it_s(chosen: list[str]) -> None:
    parts, n = [], 0
    for line in chosen:
        if line == "TOOL":
            n += 1
            parts.append(TOOL.format(f"t{n}"))
        else:
            parts.append(line)
    body = "\n".join(parts) + "\n"
    assert hidden_by_skillpack(body) == hidden_by_markdown_it(body), body
