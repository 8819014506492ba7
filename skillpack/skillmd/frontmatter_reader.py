"""Read a SKILL.md's frontmatter without YAML: the runtime's exact, refusing reader.

The build side parses frontmatter with PyYAML's failsafe loader (`skillpack.skillmd.frontmatter`):
every scalar a string, sequences lists, mappings dicts, duplicate keys, anchors, aliases and
tags refused. The runtime must not import PyYAML, so it reads frontmatter here, and only
the subset of YAML that real SKILL.md files use, each construct read exactly as the build
side reads it. Whatever falls outside the subset, or that the build side would refuse, is
refused: `read_frontmatter` and `read_yaml` return None, never a guess.

Read: block mappings of plain keys (ASCII letters, digits, ``_ - . /``) or of single- or
double-quoted keys on one line (``"@scope/pkg": "^1.0"``), at any nesting (``metadata:``);
block sequences (``- a``, also at the key's own indentation) of scalars,
flow sequences or mappings (``- name: X``); plain scalars, on one or more lines; single-
and double-quoted scalars, on one or more lines, with every escape YAML 1.1 has; block
scalars ``|`` and ``>`` with chomping (``-``, ``+``) and indentation (``1``-``9``)
indicators; one-line flow sequences of plain or quoted scalars (``[a, "b"]``); comments
and blank lines.

Refused (None): anchors, aliases, tags, flow mappings, complex (``?``) keys, plain keys
with other characters, quoted keys that span lines, are empty or are not followed at once
by ``:``, nested or multi-line flow sequences, sequences of sequences,
empty sequence items, tabs and the YAML line breaks U+0085, U+2028, U+2029 anywhere in
the frontmatter, a BOM starting it, any character YAML does not allow, an escape naming a
surrogate, a top level indented or not a mapping, directives and document markers,
nesting deeper than `MAX_DEPTH`, plain scalars that start with an indicator or whose
continuation line does, quoted continuation lines not indented past their key, and
everything the build side rejects (duplicate keys, ``: `` inside a plain scalar, ...).

Standard library builtins only, and no `re`: this module is on the runtime's cold path.
Every line is looked at a bounded number of times, so the time is linear in the input.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing `typing` costs 3 to 8 ms cold
if TYPE_CHECKING:
    from typing import TypeAlias

    Value: TypeAlias = "str | list[Value] | dict[str, Value]"

__all__ = ["MAX_DEPTH", "MAX_FRONTMATTER_BYTES", "FrontmatterText", "closing_line",
           "read_frontmatter", "read_yaml"]

#: As `skillpack.skillmd.frontmatter.MAX_FRONTMATTER_BYTES` (a test keeps them equal; that module
#: imports `dataclasses` and `typing`, which the cold path cannot afford).
MAX_FRONTMATTER_BYTES = 64 * 1024

#: Mappings and sequences nested deeper than this are refused (a skill's nest is 4 deep).
MAX_DEPTH = 32

_DELIMITER = "---"
#: Characters a key may hold (it may not start with ``- . /``).
_KEY_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./"
_MAX_KEY = 1000  # YAML's simple keys end at 1024 characters
#: Characters that cannot start a plain scalar (YAML's indicators).
_INDICATORS = "-?:,[]{}#&*!|>'\"%@`"
_HEX = "0123456789abcdefABCDEF"
_ESCAPES = {
    "0": "\0", "a": "\x07", "b": "\x08", "t": "\t", "n": "\n", "v": "\x0b", "f": "\x0c",
    "r": "\r", "e": "\x1b", " ": " ", '"': '"', "\\": "\\", "/": "/", "N": "\x85",
    "_": "\xa0", "L": "\u2028", "P": "\u2029",
}
_CODE_LENGTHS = {"x": 2, "u": 4, "U": 8}
#: UTF-8 bytes the frontmatter may not hold: C0 controls but the line feed, and DEL.
_BAD_BYTES = bytes([*range(0x0A), *range(0x0B, 0x20), 0x7F])
#: U+2028, U+2029 (YAML line breaks), U+FFFE, U+FFFF (not characters) in UTF-8.
_BAD_SEQUENCES = (b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xef\xbf\xbe", b"\xef\xbf\xbf")


class FrontmatterText:
    """A SKILL.md read: its frontmatter ``data`` (as
    `skillpack.skillmd.frontmatter.Frontmatter.data`), the markdown ``body`` after the closing
    ``---`` (copied out of the text only when asked for: a catalog needs the frontmatter
    alone) and the file line ``body_line`` it starts on (as `Frontmatter.body` and
    `Frontmatter.body_line`). With ``rest``, the text read was the file's head and ``rest``
    the UTF-8 bytes after it, decoded only when the body is asked for."""

    __slots__ = ("_body_start", "_closing", "_rest", "_start", "_text", "data")

    def __init__(self, data: dict[str, Value], text: str, start: int, closing: int,
                 body_start: int, rest: memoryview | None = None) -> None:
        self.data = data
        self._text = text
        self._start = start
        self._closing = closing
        self._body_start = body_start
        self._rest = rest

    @property
    def body_line(self) -> int:
        return self._text.count("\n", self._start, self._closing) + 3

    @property
    def body(self) -> str:
        start = self._body_start
        if start < 0:
            return ""
        body = self._text[start:]
        if self._rest is not None and len(self._rest):
            body += str(self._rest, "utf-8")
        if "\r" in body:  # the frontmatter had none: only the body is left to normalise
            body = body.replace("\r\n", "\n").replace("\r", "\n")
        return body

    def __repr__(self) -> str:
        return f"FrontmatterText(data={self.data!r}, body_line={self.body_line})"


class _Refused(Exception):
    """Raised inside the reader for anything it cannot read exactly; never leaves it."""


def read_frontmatter(source: str, rest: memoryview | None = None) -> FrontmatterText | None:
    """Split a SKILL.md text and read its frontmatter as the build side does
    (`skillpack.skillmd.skill.parse_skill`: `normalise_text`, then `split_frontmatter`).

    Returns None when the build side would refuse the frontmatter or when it uses YAML this
    reader does not read (see the module's docstring): the caller refuses the skill then.
    Only the frontmatter is scanned: the body is neither copied nor normalised until asked.

    With `rest`, `source` is only the text's head, ending with a line feed, and `rest` the
    UTF-8 bytes of the text after it: what is read is what the whole text gives when the
    frontmatter closes in the head, without a CR before its end; otherwise None (the caller
    then reads the whole text, which also says whether it is refused).
    """
    base = 1 if source.startswith("\ufeff") else 0
    found = _locate(source, base)
    stop = len(source) if found is None or found[2] < 0 else found[2]
    carriage = source.find("\r", base, stop) >= 0
    if rest is not None and (found is None or found[2] < 0 or carriage):
        return None
    if carriage:  # CR line ends: read it as the build side would
        source = source[base:].replace("\r\n", "\n").replace("\r", "\n")
        base = 0
        found = _locate(source, 0)
    if found is None:
        return None
    start, closing, end = found
    text = source[start:closing]
    if len(text) * 4 > MAX_FRONTMATTER_BYTES and (
        len(text.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES
    ):
        return None
    data = read_yaml(text)
    if data is None:
        return None
    return FrontmatterText(data, source, start, closing, -1 if end < 0 else end + 1, rest)


def _locate(source: str, base: int) -> tuple[int, int, int] | None:
    """Where the frontmatter starts, where its closing ``---`` line starts and where that
    line ends (-1: at the end of the text), found as `split_frontmatter` finds them: the
    first line whose rstrip() is ``---`` (reached by jumping to the lines that start so),
    or None where that refuses (no opening line, never closed, too large)."""
    if source.startswith("---\n", base):  # the common opening line, read at once
        start = base + 4
    else:
        start = source.find("\n", base) + 1
        if not start or source[base : start - 1].rstrip() != _DELIMITER:
            return None  # (a text of one line has no frontmatter either)
    closing = closing_line(source, start)
    if closing < 0 or closing > start + MAX_FRONTMATTER_BYTES:
        return None
    return start, closing, source.find("\n", closing)


def closing_line(text: str, start: int) -> int:
    """Where the frontmatter's closing line starts in `text`, the frontmatter starting at
    `start` (after its opening line): the first line from `start` whose ``rstrip()`` is
    ``---``, or -1 when there is none; or, before it, where a line starting with ``---``
    more than `MAX_FRONTMATTER_BYTES` past `start` starts (too large, whatever that line
    is: none is looked at there). Only the lines that start with ``---`` are looked at,
    found by `str.find`, not each line in turn. The build side's `split_frontmatter` and
    this reader's `_locate` both find it so."""
    limit = start + MAX_FRONTMATTER_BYTES
    at = start if text.startswith(_DELIMITER, start) else _next_dashes(text, start)
    while at >= 0:
        if at > limit:
            return at
        end = text.find("\n", at)
        if end == at + 3:  # "---" and its line feed: the common closing line
            return at
        tail = text[at + 3 :] if end < 0 else text[at + 3 : end]
        if not tail or tail.isspace():  # what rstrip() strips, str.isspace() tells
            return at
        if end < 0:
            return -1
        at = _next_dashes(text, end)
    return -1


def _next_dashes(text: str, start: int) -> int:
    """Where the next line of `text` starting with ``---`` after `start` starts, or -1."""
    found = text.find("\n" + _DELIMITER, start)
    return found + 1 if found >= 0 else -1


def read_yaml(text: str, keys: dict[str, int] | None = None) -> dict[str, Value] | None:
    """The mapping the build side's failsafe YAML load gives for frontmatter `text` (the
    lines between the ``---`` delimiters), or None: refused, or outside the subset read.

    `keys`, when given, receives what the build side's ``Frontmatter.lines`` holds: the
    0-based line in `text` of each top-level key and of each key of a ``metadata`` mapping
    (as ``metadata.<key>``), in the order of the text (left partly filled on None)."""
    if not _allowed_characters(text):
        return None
    lines = text.split("\n")
    reader = _Reader(lines, keys)
    try:
        i = reader.skip(0)
        if i == len(lines) or _indent(lines[i]) != 0:
            return None  # empty (the build side refuses it), or an indented top level
        data, i = reader.mapping(i, 0, 0, -1)
        if reader.skip(i) != len(lines):  # pragma: no cover - mapping() refuses first
            return None
    except _Refused:
        return None
    return data


def _allowed_characters(text: str) -> bool:
    """No tab, CR, YAML line break (U+0085, U+2028, U+2029), surrogate or other character
    YAML forbids. (A U+FEFF is text to YAML but where the stream starts: there it would
    start a key, which this reader refuses.)"""
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    if len(raw.translate(None, _BAD_BYTES)) != len(raw):
        return False  # a C0 control (tab and CR among them) or DEL
    if len(raw) == len(text):
        return True  # ASCII
    for bad in _BAD_SEQUENCES:
        if bad in raw:
            return False
    at = raw.find(b"\xc2")
    while at >= 0:  # U+0080..U+009F (U+0085 among them) are C2 80..C2 9F
        if raw[at + 1] < 0xA0:
            return False
        at = raw.find(b"\xc2", at + 2)
    return True


def _check_key(key: str) -> None:
    """Refuse a key this reader does not read: other characters, a leading ``- . /``, too
    long for YAML's simple keys."""
    if not key or key.strip(_KEY_CHARS) or key[0] in "-./" or len(key) > _MAX_KEY:
        raise _Refused


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_entry(line: str, col: int) -> bool:
    """Whether `line` holds a block sequence entry (``-`` then a space or the end) at `col`."""
    return line.startswith("-", col) and (len(line) == col + 1 or line[col + 1] == " ")


def _plain_part(s: str) -> tuple[str, bool]:
    """A plain scalar's text on one line (its comment and trailing spaces cut), and whether
    a comment ended it. Refuses what would make a mapping value of it (``a: b``, ``a:``)."""
    hash_at = s.find(" #")
    text = (s if hash_at < 0 else s[:hash_at]).rstrip(" ")
    if ": " in text or text.endswith(":"):
        raise _Refused
    return text, hash_at >= 0


def _after_node(rest: str) -> None:
    """What may follow a scalar or flow sequence on its line: spaces, then a comment."""
    stripped = rest.lstrip(" ")
    if stripped and (stripped[0] != "#" or len(stripped) == len(rest)):
        raise _Refused


class _Reader:
    """Recursive descent over the frontmatter's lines. Each method takes the index of the
    line where its node starts and returns the node and the index of the first line after
    it (which may be a blank or comment line)."""

    __slots__ = ("count", "keys", "lines", "prefix")

    def __init__(self, lines: list[str], keys: dict[str, int] | None = None) -> None:
        self.lines = lines
        self.count = len(lines)
        self.keys = keys  # when given: the line of each top-level and metadata key
        self.prefix: str | None = None if keys is None else ""  # of the next mapping's keys

    def skip(self, i: int) -> int:
        """The index of the first line from `i` that is neither blank nor a comment."""
        lines, count = self.lines, self.count
        while i < count:
            stripped = lines[i].lstrip(" ")
            if stripped and stripped[0] != "#":
                return i
            i += 1
        return i

    def mapping(self, i: int, indent: int, depth: int, first: int) -> tuple[dict[str, Value], int]:
        """A block mapping whose keys are at column `indent`; its first key is on line `i`
        (at column `first` when it follows a sequence entry's ``-`` there, else -1)."""
        if depth > MAX_DEPTH:
            raise _Refused
        lines, count = self.lines, self.count
        pad = " " * indent
        deeper = pad + " "  # a line starting so may continue a plain scalar
        result: dict[str, Value] = {}
        prefix, self.prefix = self.prefix, None  # the top level's, or metadata's when asked
        while i < count:
            line = lines[i]
            if first >= 0:
                stripped = line[first:]
                first = -1
            else:
                stripped = line[indent:] if indent else line
                if not stripped or stripped[0] in " #" or (indent and not line.startswith(pad)):
                    stripped = line.lstrip(" ")
                    if not stripped or stripped[0] == "#":
                        i += 1
                        continue
                    if len(line) - len(stripped) < indent:
                        break
                    raise _Refused  # indented deeper than the keys before
            if stripped[0] == '"' or stripped[0] == "'":  # a quoted key ("@scope/pkg": v)
                col = len(line) - len(stripped)
                key, end = self.quoted_key(i, col, indent)
                value_text = line[end + 2 :]
            else:
                key, colon, value_text = stripped.partition(": ")
                if not colon:  # "key:" ends the line, or no key: a colon and a space follow
                    if stripped[-1] != ":":
                        raise _Refused
                    key = stripped[:-1]
                _check_key(key)
            if key in result:
                raise _Refused  # a duplicate: the build side reports it
            if prefix is not None:
                self._key_line(prefix, key, i)
            if value_text and value_text[0] == " ":
                value_text = value_text.lstrip(" ")
            if not value_text or value_text[0] == "#":
                result[key], i = self.nested(i + 1, indent, depth)
            elif value_text[0] in _INDICATORS:
                result[key], i = self.inline(i, len(line) - len(value_text), indent, depth, True)
            else:  # the common case, a plain scalar: read here while it stays on its line
                i += 1
                if ":" in value_text or "#" in value_text:
                    value_text, ended = _plain_part(value_text)
                    if ended:
                        result[key] = value_text
                        if prefix == "":
                            self._value_read(key, value_text)
                        continue
                elif value_text[-1] == " ":
                    value_text = value_text.rstrip(" ")
                following = lines[i] if i < count else "-"
                if not following or following.startswith(deeper):
                    value_text, i = self.plain_more(value_text, i, indent)
                result[key] = value_text
            if prefix == "":
                self._value_read(key, result[key])
        return result, i

    def quoted_key(self, i: int, col: int, indent: int) -> tuple[str, int]:
        """A single- or double-quoted key at column `col` of line `i`, and the column of the
        colon after it. It must close on its line, within `_MAX_KEY` characters, and be
        followed at once by ``:`` and a space or the line's end (as YAML's simple keys in a
        block mapping); it may not be empty. Anything else is refused."""
        key, closed, end = self.quoted(i, col, indent)
        line = self.lines[i]
        if (closed != i or not key or end - col > _MAX_KEY or line[end : end + 1] != ":"
                or line[end + 1 : end + 2] not in ("", " ")):
            raise _Refused
        return key, end

    def _key_line(self, prefix: str, key: str, i: int) -> None:
        """Record the line of a key of the top level or of metadata, and ask for the keys of
        metadata's mapping (the next mapping read: the value of this key)."""
        assert self.keys is not None
        self.keys.setdefault(prefix + key, i)  # a top-level "metadata.x" key may come first
        if prefix == "" and key == "metadata":
            self.prefix = "metadata."

    def _value_read(self, key: str, value: Value) -> None:
        """A top-level value is read: its keys are only recorded when it is metadata's
        mapping (a mapping inside a metadata list took them: they go, as the build side
        records none)."""
        self.prefix = None
        if key == "metadata" and not isinstance(value, dict):
            assert self.keys is not None
            for name in [k for k in self.keys if k.startswith("metadata.")]:
                del self.keys[name]

    def nested(self, i: int, indent: int, depth: int) -> tuple[Value, int]:
        """The value of a key at column `indent` whose line holds nothing after the colon."""
        i = self.skip(i)
        if i >= self.count:
            return "", i
        line = self.lines[i]
        col = len(line) - len(line.lstrip(" "))
        if col == indent and _is_entry(line, col):
            return self.sequence(i, col, depth + 1)
        if col <= indent:
            return "", i
        if _is_entry(line, col):
            return self.sequence(i, col, depth + 1)
        ch = line[col]
        if ch in "|>[":
            raise _Refused  # a block scalar or flow sequence on the line after its key
        return self.inline(i, col, indent, depth, False)

    def sequence(self, i: int, indent: int, depth: int) -> tuple[list[Value], int]:
        """A block sequence whose ``-`` are at column `indent`."""
        if depth > MAX_DEPTH:
            raise _Refused
        lines, count = self.lines, self.count
        result: list[Value] = []
        while True:
            i = self.skip(i)
            if i >= count:
                return result, i
            line = lines[i]
            col = len(line) - len(line.lstrip(" "))
            if col < indent:
                return result, i
            if col > indent:
                raise _Refused
            if not _is_entry(line, col):
                return result, i  # the mapping holding an indentless sequence goes on
            item = line[col + 1 :].lstrip(" ")
            if not item or item[0] == "#":
                raise _Refused  # an empty entry, or one whose node is on the next lines
            start = len(line) - len(item)
            if _is_entry(line, start):
                raise _Refused  # a sequence in a sequence
            value, i = self.inline(i, start, indent, depth, False)
            result.append(value)

    def inline(self, i: int, col: int, indent: int, depth: int,
               after_key: bool) -> tuple[Value, int]:
        """The node starting at column `col` of line `i`, inside a collection at `indent`."""
        line = self.lines[i]
        ch = line[col]
        if ch == '"' or ch == "'":
            value, closed, end = self.quoted(i, col, indent)
            rest = self.lines[closed][end:]
            if not after_key and closed == i and rest[:1] == ":" and rest[1:2] in ("", " "):
                return self.mapping(i, col, depth + 1, col)  # its first key is quoted
            _after_node(rest)
            return value, closed + 1
        if ch == "|" or ch == ">":
            return self.block(i, col, indent)
        if ch == "[":
            items, end = self.flow(line, col)
            _after_node(line[end:])
            return items, i + 1
        if ch in _INDICATORS and not (ch == "-" and line[col + 1 : col + 2] not in ("", " ")):
            raise _Refused
        if not after_key:  # a key may start here: a mapping, one level deeper
            colon = line.find(":", col)
            if colon >= 0 and (colon + 1 == len(line) or line[colon + 1] == " "):
                return self.mapping(i, col, depth + 1, col)
        return self.plain(i, col, indent)

    def plain(self, i: int, col: int, indent: int) -> tuple[str, int]:
        """A plain scalar from column `col` of line `i`; its continuation lines are indented
        past `indent`. Line breaks fold to a space, or to one newline per empty line."""
        text, ended = _plain_part(self.lines[i][col:])
        if ended:
            return text, i + 1
        return self.plain_more(text, i + 1, indent)

    def plain_more(self, text: str, i: int, indent: int) -> tuple[str, int]:
        """The plain scalar `text` continued on the lines from `i` indented past `indent`."""
        lines, count = self.lines, self.count
        parts = [text]
        empty = 0
        while i < count:
            line = lines[i]
            stripped = line.lstrip(" ")
            if not stripped:
                empty += 1
                i += 1
                continue
            if len(line) - len(stripped) <= indent or stripped[0] == "#":
                break
            if stripped[0] in _INDICATORS:
                raise _Refused  # YAML reads on; this reader does not guess how
            more, ended = _plain_part(stripped)
            parts.append("\n" * empty if empty else " ")
            parts.append(more)
            empty = 0
            i += 1
            if ended:
                break
        return "".join(parts), i

    def quoted(self, i: int, col: int, indent: int) -> tuple[str, int, int]:
        """A single- or double-quoted scalar from column `col` of line `i`. Returns it, the
        line it closes on and the column after its closing quote."""
        lines, count = self.lines, self.count
        line = lines[i]
        double = line[col] == '"'
        quote = line[col]
        pos = col + 1
        chunks: list[str] = []
        while True:
            q = line.find(quote, pos)
            escaped_break = False
            while True:
                if double:
                    b = line.find("\\", pos)
                    if b >= 0 and (q < 0 or b < q):
                        chunks.append(line[pos:b])
                        code = line[b + 1 : b + 2]
                        if not code:
                            escaped_break = True
                            pos = len(line)
                            break
                        replacement = _ESCAPES.get(code)
                        if replacement is not None:
                            chunks.append(replacement)
                            pos = b + 2
                        else:
                            length = _CODE_LENGTHS.get(code, 0)
                            digits = line[b + 2 : b + 2 + length]
                            if not length or len(digits) != length or digits.strip(_HEX):
                                raise _Refused
                            value = int(digits, 16)
                            if 0xD800 <= value <= 0xDFFF or value > 0x10FFFF:
                                raise _Refused  # PyYAML and libyaml disagree, or fail
                            chunks.append(chr(value))
                            pos = b + 2 + length
                        if q >= 0 and q < pos:
                            q = line.find(quote, pos)
                        continue
                elif q >= 0 and line.startswith("'", q + 1):
                    chunks.append(line[pos : q + 1])
                    pos = q + 2
                    q = line.find(quote, pos)
                    continue
                if q >= 0:
                    chunks.append(line[pos:q])
                    return "".join(chunks), i, q + 1
                break
            if not escaped_break:
                chunks.append(line[pos:].rstrip(" "))
            # the scalar goes on: fold the line break and any empty lines
            empty = 0
            i += 1
            while i < count and not lines[i].strip(" "):
                empty += 1
                i += 1
            if i >= count:
                raise _Refused  # never closed: the build side refuses it
            line = lines[i]
            pos = len(line) - len(line.lstrip(" "))
            if pos <= indent:
                raise _Refused  # YAML ignores the indentation here; this reader does not
            if escaped_break:
                chunks.append("\n" * empty)
            else:
                chunks.append("\n" * empty if empty else " ")

    def block(self, i: int, col: int, indent: int) -> tuple[str, int]:
        """A literal (``|``) or folded (``>``) block scalar whose header is at column `col`
        of line `i`, in a collection at `indent` (as PyYAML's ``scan_block_scalar``)."""
        lines, count = self.lines, self.count
        header = lines[i]
        folded = header[col] == ">"
        pos = col + 1
        chomping: bool | None = None
        increment = 0
        for _ in range(2):
            ch = header[pos : pos + 1]
            if ch and ch in "+-" and chomping is None:
                chomping = ch == "+"
                pos += 1
            elif ch and ch in "123456789" and not increment:
                increment = int(ch)
                pos += 1
        rest = header[pos:]
        if rest and rest[0] != " ":
            raise _Refused  # "0", a second indicator, or text glued to the header
        _after_node(rest)
        min_indent = indent + 1
        last = count - 1  # lines[last] is what follows the text's final newline
        i += 1
        breaks = 0
        if increment:
            block_indent = min_indent + increment - 1
        else:
            block_indent = 0
            while i < count:
                line = lines[i]
                stripped = line.lstrip(" ")
                width = len(line) - len(stripped)
                if width > block_indent:
                    block_indent = width
                if stripped or i == last:
                    break
                breaks += 1
                i += 1
            block_indent = max(min_indent, block_indent)

        def is_empty(k: int) -> bool:
            line = lines[k]
            return k < last and len(line) <= block_indent and not line.strip(" ")

        def is_content(k: int) -> bool:
            line = lines[k]
            return len(line) > block_indent and _indent(line) >= block_indent

        if increment:
            while i < count and is_empty(i):
                breaks += 1
                i += 1
        chunks: list[str] = []
        line_break = ""
        while i < count and is_content(i):
            chunks.append("\n" * breaks)
            line = lines[i]
            leading_non_space = line[block_indent] != " "
            chunks.append(line[block_indent:])
            line_break = "\n" if i < last else ""
            i += 1
            breaks = 0
            while i < count and is_empty(i):
                breaks += 1
                i += 1
            if i < count and is_content(i):
                if (folded and line_break and leading_non_space
                        and lines[i][block_indent] != " "):
                    if not breaks:
                        chunks.append(" ")
                else:
                    chunks.append(line_break)
            else:
                break
        if chomping is not False:
            chunks.append(line_break)
        if chomping is True:
            chunks.append("\n" * breaks)
        return "".join(chunks), i

    def flow(self, line: str, col: int) -> tuple[list[Value], int]:
        """A one-line flow sequence of plain or quoted scalars from the ``[`` at `col`;
        returns it and the column after its ``]``."""
        items: list[Value] = []
        pos = col + 1
        size = len(line)
        while True:
            while pos < size and line[pos] == " ":
                pos += 1
            if pos >= size:
                raise _Refused  # goes on past the line: not read here
            ch = line[pos]
            if ch == "]":
                return items, pos + 1  # "[]", or after a trailing comma (YAML allows one)
            if ch == '"' or ch == "'":
                end = self.quoted_on_line(line, pos)
                items.append(end[0])
                pos = end[1]
                while pos < size and line[pos] == " ":
                    pos += 1
            else:
                if ch in _INDICATORS and not (ch == "-" and line[pos + 1 : pos + 2] not in
                                              ("", " ", ",", "]")):
                    raise _Refused
                comma = line.find(",", pos)
                close = line.find("]", pos)
                stop = close if comma < 0 else comma if close < 0 else min(comma, close)
                if stop < 0:
                    raise _Refused
                item = line[pos:stop].rstrip(" ")
                for bad in ":?#{}[":
                    if bad in item:
                        raise _Refused
                items.append(item)
                pos = stop
            if pos >= size:
                raise _Refused
            if line[pos] == "]":
                return items, pos + 1
            if line[pos] != ",":
                raise _Refused
            pos += 1

    def quoted_on_line(self, line: str, col: int) -> tuple[str, int]:
        """A quoted scalar that closes on its line (in a flow sequence)."""
        single = _Reader([line, ""])
        value, where, end = single.quoted(0, col, 0)
        if where != 0:  # pragma: no cover - a one-line reader cannot go on
            raise _Refused
        if line[end : end + 1] == ":":
            raise _Refused  # a single-pair mapping in a flow sequence
        return value, end
