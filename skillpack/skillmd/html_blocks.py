"""Where CommonMark reads a SKILL.md body as an HTML block, and the tool fences it hides.

A reader of the rendered SKILL.md sees an HTML block as HTML (a comment not at all; GitHub
strips ``<script>`` and its content), never as the code block of a ```tool fence inside it,
while skillpack reads the tool there and a model is offered it (`tool-in-comment`,
`tool-in-html`: `skillpack.skillmd.validate`). The blocks are CommonMark 0.31.2's ("HTML
blocks", types 1 to 7, their start and end conditions as the spec states them), found at the
top level of the document; block quotes and list items are read as paragraph text. The build
side only: the runtime never imports this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillpack.skillmd.fence_probe import may_open_a_tool_fence
from skillpack.skillmd.fences import _find_close, _opening

__all__ = ["HiddenFence", "tool_fences_in_html"]


@dataclass(frozen=True, slots=True)
class HiddenFence:
    """A tool fence that CommonMark reads as part of an HTML block, so that rendered Markdown
    shows no code block there (a comment hides it whole; GitHub strips ``<script>`` and its
    content), while skillpack reads the tool in it and a model sees it. ``line``: the fence's
    line, ``opened``: the block's first line (both 0-based in the body); ``kind``: the
    block's type in CommonMark's spec, 1 to 7; ``opener``: what opened it (``<!--``,
    ``<script``, ``<div``...); ``closer``: what ends it, or "" for a blank line (types 6
    and 7)."""

    line: int
    opened: int
    kind: int
    opener: str
    closer: str


#: CommonMark 0.31.2, "HTML blocks": the start and end conditions of types 1 to 5, each read
#: on a line past at most 3 spaces of indentation. A block of these types ends only at a line
#: meeting its end condition (the start line itself, too), or at the end of the document.
_RAW_NAMES = ("pre", "script", "style", "textarea")
_CLOSED_BY = (
    (1, re.compile(r"<(?:pre|script|style|textarea)(?=[ \t>]|$)", re.I),
     re.compile(r"</(?:pre|script|style|textarea)>", re.I), "</script>, </pre>, </style> or "
     "</textarea>"),
    (2, re.compile(r"<!--"), re.compile(r"-->"), "-->"),
    (3, re.compile(r"<\?"), re.compile(r"\?>"), "?>"),
    (4, re.compile(r"<![A-Za-z]+"), re.compile(r">"), ">"),
    (5, re.compile(r"<!\[CDATA\["), re.compile(r"\]\]>"), "]]>"),
)
#: Type 6: one of these tag names, opening or closing, followed by a space, a tab, the end of
#: the line, ``>`` or ``/>``; it ends before a blank line.
_BLOCK_NAMES = frozenset((
    "address", "article", "aside", "base", "basefont", "blockquote", "body", "caption",
    "center", "col", "colgroup", "dd", "details", "dialog", "dir", "div", "dl", "dt",
    "fieldset", "figcaption", "figure", "footer", "form", "frame", "frameset", "h1", "h2",
    "h3", "h4", "h5", "h6", "head", "header", "hr", "html", "iframe", "legend", "li", "link",
    "main", "menu", "menuitem", "nav", "noframes", "ol", "optgroup", "option", "p", "param",
    "search", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "title",
    "tr", "track", "ul"))
_TAG_START = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)(?=[ \t]|/?>|$)")
#: Type 7: a whole open or closing tag of any other name, then only blanks; it cannot
#: interrupt a paragraph, and ends before a blank line.
_ATTRIBUTE = (r"[ \t]+[A-Za-z_:][A-Za-z0-9_.:-]*"
              r"(?:[ \t]*=[ \t]*(?:[^ \t\"'=<>`]+|'[^']*'|\"[^\"]*\"))?")
_WHOLE_TAG = re.compile(r"(?:<([A-Za-z][A-Za-z0-9-]*)(?:" + _ATTRIBUTE + r")*[ \t]*/?>"
                        r"|</([A-Za-z][A-Za-z0-9-]*)[ \t]*>)[ \t]*")
_ATX = re.compile(r"#{1,6}(?:[ \t]|$)")
#: A block quote's marker, or a list item's (then a blank or the end of the line).
_CONTAINER = re.compile(r">[ \t]?|(?:[-+*]|[0-9]{1,9}[.)])(?:[ \t]|$)")
_BREAK = re.compile(r"(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})")


def tool_fences_in_html(body: str) -> list[HiddenFence]:
    """Each tool fence of `body` (a line the parser opens a tool at) that CommonMark puts
    inside an HTML block: one of types 1 to 5, which only its end marker ends (``-->``,
    ``</script>``, ``?>``...), or one of types 6 and 7 not yet ended by a blank line.

    The blocks are found as CommonMark finds them at the top level of the document (block
    quotes and list items are read as paragraph text): a start condition counts on a line
    of at most 3 spaces of indentation outside a fenced or an indented code block, types 1
    to 6 even inside a paragraph, type 7 only outside one."""
    if "<" not in body or not may_open_a_tool_fence(body):
        return []
    lines = body.split("\n")
    blocks = _html_blocks(lines)
    if not blocks:
        return []
    found: list[HiddenFence] = []
    i = 0
    while i < len(lines):  # the tool fences as `_parse_lines` finds them
        match = _opening(lines[i])
        if match is None:
            i += 1
            continue
        close = _find_close(lines, i + 1, match.group(2))
        if match.group(3).strip() == "tool":
            block = next((b for b in blocks if b[0] <= i < b[1]), None)
            if block is not None:
                first, _, kind, opener, closer = block
                found.append(HiddenFence(i, first, kind, opener, closer))
        i = len(lines) if close is None else close + 1
    return found


def _html_blocks(lines: list[str]) -> list[tuple[int, int, int, str, str]]:
    """The HTML blocks of a document's lines at its top level, as CommonMark reads them:
    (first line, line past the last, type, opener, closer), in order."""
    blocks: list[tuple[int, int, int, str, str]] = []
    paragraph = False  # whether the line before continues a paragraph
    i = 0
    while i < len(lines):
        line = lines[i]
        text = line.lstrip(" ")
        if not text.strip(" \t"):  # a blank line ends a paragraph
            paragraph = False
            i += 1
            continue
        if len(line) - len(text) > 3 or text.startswith("\t"):  # 4 columns or more:
            i += 1  # an indented code line, or a paragraph's continuation
            continue
        fence = _opening(line)
        if fence is not None:
            close = _find_close(lines, i + 1, fence.group(2))
            i = len(lines) if close is None else close + 1
            paragraph = False
            continue
        start = _html_start(text, paragraph) if text.startswith("<") else None
        if start is None:
            paragraph = _in_paragraph(text, paragraph)
            i += 1
            continue
        kind, opener, closer, end = start
        j = i
        if end is not None:  # types 1 to 5: up to the line holding the end marker
            while j < len(lines) and not end.search(lines[j].lstrip(" ")):
                j += 1
            j = min(j + 1, len(lines))
        else:  # types 6 and 7: up to the next blank line
            while j < len(lines) and lines[j].strip(" \t"):
                j += 1
        blocks.append((i, j, kind, opener, closer))
        paragraph = False
        i = j
    return blocks


def _in_paragraph(text: str, paragraph: bool) -> bool:
    """Whether a paragraph is open after a line (its indentation stripped, not blank) that
    starts no fence and no HTML block at the top level: not after a heading, a thematic
    break or a setext underline; after a block quote's or a list item's first line, when
    what it holds is paragraph text (a line after it continues that paragraph lazily)."""
    if _ATX.match(text) or _BREAK.fullmatch(text.rstrip(" \t")) or (
            paragraph and not text.rstrip(" \t").strip("=")):
        return False
    marker = _CONTAINER.match(text)
    if marker is None:
        return True
    inner = text[marker.end():]
    stripped = inner.lstrip(" ")
    if not stripped.strip(" \t") or len(inner) - len(stripped) > 3:
        return bool(stripped.strip(" \t"))  # empty; or indented code in it
    if _opening(stripped) is not None or (
            stripped.startswith("<") and _html_start(stripped, False) is not None):
        return False
    return _in_paragraph(stripped, False)


def _html_start(text: str, paragraph: bool
                ) -> tuple[int, str, str, re.Pattern[str] | None] | None:
    """The HTML block a line (its indentation stripped) starts: its type, opener, closer
    (words for a person) and end pattern (None: a blank line ends it); None for none."""
    for kind, start, end, closer in _CLOSED_BY:
        found = start.match(text)
        if found is not None:
            return kind, found.group(0), closer, end
    tag = _TAG_START.match(text)
    if tag is not None and tag.group(1).lower() in _BLOCK_NAMES:
        return 6, tag.group(0), "", None
    if not paragraph:
        whole = _WHOLE_TAG.fullmatch(text)
        if whole is not None and (whole.group(1) or whole.group(2)).lower() not in _RAW_NAMES:
            return 7, text[:_tag_end(text)], "", None
    return None


def _tag_end(text: str) -> int:
    """The end of the tag name a tag opens with (``<span``, ``</x-box``)."""
    at = 2 if text.startswith("</") else 1
    while at < len(text) and (text[at].isascii() and (text[at].isalnum() or text[at] == "-")):
        at += 1
    return at
