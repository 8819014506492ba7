"""Invisible and deceptive characters in skill text, and escaping text for a terminal.

A model reads every code point of a SKILL.md; a person reading it in an editor or a terminal
does not see bidirectional controls (which reorder what is shown), zero-width characters, or
Unicode tag characters (an invisible copy of ASCII, used to hide instructions). `find_invisible`
reports each with its line, column and code point; `invisible_problems` turns them into
`Problem` records: an error in SKILL.md (``text-bidi``, ``text-invisible``, ``text-tag``), a
warning in the skill's other text files.

`escape_for_terminal` makes text safe to print for a person: C0 and C1 controls (ESC and so
every ANSI sequence), DEL, and every character reported here become visible escapes
(``\\x1b``, ``\\u202e``); ordinary text, non-ASCII letters and emoji pass unchanged.

Touches no file.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

import re2

from skillpack.errors import Problem

__all__ = [
    "BIDI",
    "ZERO_WIDTH",
    "Finding",
    "escape_for_terminal",
    "find_invisible",
    "invisible_problems",
    "visible_escape",
]

#: Bidirectional formatting controls: embeddings, overrides, isolates, marks.
BIDI = frozenset({*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C})
#: Zero-width and invisible format characters (U+FEFF counts except as a file's first one).
ZERO_WIDTH = frozenset({0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064,
                        0xFEFF, 0x180E, 0x00AD, 0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0,
                        *range(0x206A, 0x2070)})
_TAGS = range(0xE0000, 0xE0080)
#: Variation selectors (VS1-16, VS17-256), which choose a glyph for the character before
#: them; a run of them after any character is the "emoji smuggling" channel (each one a
#: byte: VS1-16 0-15, VS17-256 16-255). See `_allowed_selector` for the one at a time that is
#: ordinary text.
SELECTORS = frozenset({*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)})
#: The rest of Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt) not in the
#: sets above: Khmer inherent vowels, Mongolian free variation selectors, U+2065, shorthand
#: format controls, musical symbol format controls, and the unassigned U+E0080-U+E0FFF.
IGNORABLE = frozenset({0x17B4, 0x17B5, *range(0x180B, 0x1810), 0x2065,
                       *range(0x1BCA0, 0x1BCA4), *range(0x1D173, 0x1D17B),
                       *range(0xE0080, 0xE0100), *range(0xE01F0, 0xE1000)})


def _ranges(codepoints: frozenset[int], escape: str = "\\U{:08x}") -> str:
    """`codepoints` as the inside of a character class, runs written as ranges (``re`` tests
    a class holding code points beyond the BMP against each item in turn: few items, fast);
    each code point written by `escape` (``re``'s form by default)."""
    out: list[str] = []
    ordered = sorted(codepoints)
    start = previous = ordered[0]
    for codepoint in [*ordered[1:], -1]:
        if codepoint != previous + 1:
            out.append(escape.format(start) if start == previous
                       else f"{escape.format(start)}-{escape.format(previous)}")
            start = codepoint
        previous = codepoint
    return "".join(out)


_SINGLES = _ranges(BIDI | ZERO_WIDTH | IGNORABLE)
#: What `find_invisible` reports, a run of tag characters or of variation selectors as one.
_SUSPECT = re.compile("[\U000e0000-\U000e007f]+|[\ufe00-\ufe0f\U000e0100-\U000e01ef]+|["
                      + _SINGLES + "]")
#: Whether a text holds any one character `_SUSPECT` looks for: one character class, which
#: RE2 scans as UTF-8 bytes through a DFA, six times faster than ``re`` on the corpus's
#: SKILL.md files (most texts hold none, and then this is the whole cost).
_ANY_SUSPECT = re2.compile("[" + _ranges(
    BIDI | ZERO_WIDTH | IGNORABLE | SELECTORS | frozenset(_TAGS), "\\x{{{:x}}}") + "]")


_CODES = {"bidi": "text-bidi", "invisible": "text-invisible", "tag": "text-tag"}
_WHAT = {
    "bidi": "a bidirectional control, which reorders how the text around it is shown",
    "invisible": "an invisible character",
    "tag": "a Unicode tag character, an invisible copy of ASCII a model reads",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One invisible character: 1-based ``line`` and ``column`` (in code points), the code
    point, its ``kind`` (``bidi``, ``invisible`` or ``tag``) and, for a run of tag
    characters, ``hidden``: the ASCII text they spell."""

    line: int
    column: int
    codepoint: int
    kind: str
    count: int = 1
    hidden: str | None = None

    @property
    def label(self) -> str:
        """``U+202E RIGHT-TO-LEFT OVERRIDE``."""
        name = unicodedata.name(chr(self.codepoint), "")
        return f"U+{self.codepoint:04X} {name}".rstrip()

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "column": self.column, "codepoint": f"U+{self.codepoint:04X}",
                "name": unicodedata.name(chr(self.codepoint), ""), "kind": self.kind,
                "count": self.count, "hidden": self.hidden}


def _kind(codepoint: int) -> str | None:
    if codepoint in BIDI:
        return "bidi"
    if codepoint in _TAGS:
        return "tag"
    if codepoint in ZERO_WIDTH or codepoint in SELECTORS or codepoint in IGNORABLE:
        return "invisible"
    return None


#: Characters other than symbols that take an emoji presentation selector: keycap bases,
#: and punctuation and letter-like emoji (U+203C, U+2049, U+2139, U+3030, U+303D).
_EMOJI_BASES = frozenset("#*0123456789\u203c\u2049\u2139\u3030\u303d")


def _allowed_selector(text: str, index: int, end: int) -> bool:
    """Whether the variation selectors ``text[index:end]`` are ordinary text: one selector
    alone, right after the character it modifies, and that character one it is defined for:
    U+FE0E/U+FE0F (text or emoji presentation) after a symbol (an emoji: ❤️) or an emoji
    keycap base (#, *, 0-9), VS17-256 (an ideographic variation sequence) after a CJK
    ideograph, a Mongolian free variation selector after a Mongolian letter. Anything else,
    a run of two or more included, is reported."""
    if end - index != 1 or index == 0:
        return False
    codepoint, base = ord(text[index]), text[index - 1]
    if codepoint in (0xFE0E, 0xFE0F):
        return unicodedata.category(base) in ("So", "Sm") or base in _EMOJI_BASES
    if 0xE0100 <= codepoint <= 0xE01EF:
        return unicodedata.name(base, "").startswith("CJK UNIFIED IDEOGRAPH")
    if 0x180B <= codepoint <= 0x180F and codepoint != 0x180E:
        return 0x1820 <= ord(base) <= 0x18AF
    return False


def _emoji(char: str) -> bool:
    codepoint = ord(char)
    return (unicodedata.category(char) == "So" or codepoint == 0xFE0F
            or 0x1F3FB <= codepoint <= 0x1F3FF)


def _in_emoji(text: str, index: int, end: int) -> bool:
    """Whether ``text[index:end]`` (one character, or a run of tag characters) belongs to an
    emoji sequence: a ZERO WIDTH JOINER between two emoji (👩‍💻), or the tags of a
    subdivision flag (🏴 + at most 8 tags ending in U+E007F)."""
    codepoint = ord(text[index])
    if codepoint in SELECTORS or 0x180B <= codepoint <= 0x180F:
        return _allowed_selector(text, index, end)
    if codepoint == 0x200D:
        return index > 0 and end < len(text) and _emoji(text[index - 1]) and _emoji(text[end])
    if codepoint in _TAGS:
        return (index > 0 and ord(text[index - 1]) == 0x1F3F4 and ord(text[end - 1]) == 0xE007F
                and end - index <= 8)
    return False


def _in_emoji_at(text: str, index: int) -> bool:
    """`_in_emoji` for the character at `index`, its whole tag run looked at (at most 8
    characters each way, so escaping stays linear)."""
    if ord(text[index]) in SELECTORS and (  # a run of selectors is never allowed, nor any of it
            (index > 0 and ord(text[index - 1]) in SELECTORS)
            or (index + 1 < len(text) and ord(text[index + 1]) in SELECTORS)):
        return False
    if ord(text[index]) not in _TAGS:
        return _in_emoji(text, index, index + 1)
    start = index
    while start > 0 and index - start < 8 and ord(text[start - 1]) in _TAGS:
        start -= 1
    end = index + 1
    while end < len(text) and end - start <= 8 and ord(text[end]) in _TAGS:
        end += 1
    return _in_emoji(text, start, end)


def find_invisible(text: str) -> list[Finding]:
    """Every bidi control, zero-width/invisible format character and tag character of `text`,
    in order. A leading U+FEFF (a byte order mark) is not reported; a run of tag characters
    is one finding (with the text it hides). One regular-expression pass: linear time."""
    findings: list[Finding] = []
    if text.isascii():  # every character looked for is beyond ASCII (a flag of the str: O(1))
        return findings
    try:
        if _ANY_SUSPECT.search(text) is None:
            return findings
    except UnicodeEncodeError:  # a lone surrogate (a YAML escape): RE2 reads UTF-8 only
        pass
    line, line_start, counted = 1, 0, 0  # newlines counted up to `counted`
    for match in _SUSPECT.finditer(text):
        index = match.start()
        if (index == 0 and text[0] == "\ufeff") or _in_emoji(text, index, match.end()):
            continue
        newlines = text.count("\n", counted, index)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", counted, index) + 1
        counted = index
        column = index - line_start + 1
        codepoint = ord(text[index])
        kind = _kind(codepoint)
        assert kind is not None
        if kind == "tag":
            run = match.group(0)
            hidden = "".join(chr(ord(c) - 0xE0000) for c in run
                             if 0x20 <= ord(c) - 0xE0000 < 0x7F)
            findings.append(Finding(line, column, codepoint, kind, len(run), hidden or None))
        elif codepoint in SELECTORS:
            run = match.group(0)
            findings.append(Finding(line, column, codepoint, kind, len(run),
                                    _selector_bytes(run) if len(run) > 1 else None))
        else:
            findings.append(Finding(line, column, codepoint, kind))
    return findings


def _selector_bytes(run: str) -> str | None:
    """The text a run of variation selectors spells as bytes (VS1-16 are 0-15, VS17-256
    16-255), as UTF-8, when it decodes to printable text; else None."""
    data = bytes(ord(c) - 0xFE00 if ord(c) < 0x10000 else ord(c) - 0xE0100 + 16 for c in run)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text.isprintable() and text.strip() else None


def invisible_problems(path: str, text: str, is_skill_md: bool) -> list[Problem]:
    """`find_invisible` as problems on `path`: errors in SKILL.md, warnings elsewhere."""
    severity: Literal["error", "warning"] = "error" if is_skill_md else "warning"
    problems: list[Problem] = []
    for found in find_invisible(text):
        what = _WHAT[found.kind]
        if found.count > 1:
            what = (f"{found.count} tag characters" if found.kind == "tag" else
                    f"{found.count} variation selectors in a row, which can hide bytes")
        hidden = f" hiding the text {found.hidden!r}" if found.hidden else ""
        problems.append(Problem(
            severity, _CODES[found.kind],
            f"column {found.column}: {found.label} is {what}{hidden}; a person reading the "
            "file does not see it, a model does: remove it", path, found.line))
    return problems


def visible_escape(char: str) -> str:
    """The escape of one character as a person reads it: ``\\x1b``, ``\\u202e``,
    ``\\U000e0041``, and ``\\xe9`` for a byte of a name that is not UTF-8."""
    codepoint = ord(char)
    if 0xDC80 <= codepoint <= 0xDCFF:  # a byte of a name that is not UTF-8 (surrogateescape)
        return f"\\x{codepoint - 0xDC00:02x}"
    if codepoint < 0x100:
        return f"\\x{codepoint:02x}"
    if codepoint < 0x10000:
        return f"\\u{codepoint:04x}"
    return f"\\U{codepoint:08x}"


def escape_for_terminal(s: str) -> str:
    """`s` safe to print for a person: C0 controls but tab and newline, DEL, C1 controls,
    line/paragraph separators, bidi controls, invisible and tag characters, and lone
    surrogates (a byte of a file name that is not UTF-8 is ``\\xe9``) become
    ``\\x1b``-style escapes. Letters of any script, emoji (with their joiners) and ordinary
    punctuation are left as they are."""
    if s.isascii() and s.isprintable():
        return s  # the usual line: no control character (DEL, tab and newline included)
    out: list[str] = []
    for index, char in enumerate(s):
        codepoint = ord(char)
        if char in "\t\n":
            out.append(char)
        elif (codepoint < 0x20 or 0x7F <= codepoint < 0xA0 or codepoint in (0x2028, 0x2029)
              or 0xD800 <= codepoint <= 0xDFFF  # no character: a lone surrogate
              or (_kind(codepoint) is not None and not _in_emoji_at(s, index))):
            out.append(visible_escape(char))
        else:
            out.append(char)
    return "".join(out)
