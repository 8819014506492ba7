"""The content scan's fast paths (issue 18) find exactly what the slow paths find.

* `Rule.gate`: an RE2 pattern every match of a rule also matches; a text it finds nothing in
  is not searched with the rule's `re` pattern.
* `_may_hold_utf16_needles`: a file read as UTF-16 (a byte order mark, or the NULs of UTF-16
  text: every TrueType font of the corpus) is transcoded and scanned only when its bytes hold
  a rule's needle in UTF-16.
* `_present` on a large text: its halves searched on two threads, the seam covered.
* `_LITERALS`: the needles searched by Aho-Corasick (ahocorasick_rs, SIMD) in pieces of
  `PIECE` bytes, the RE2 set run on the pieces holding one only.
* `hash_large`'s scan counts no lines; a file holding a finding is read and scanned again,
  counting.

Each is compared with the slow path (the fast path switched off) on the recall set of
test_secret_rules, on generated inputs, and on every corpus file. Fake secrets are built at
test time (see test_secret_rules).
"""

from __future__ import annotations

import base64
import itertools
import os
import random
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import cli
from helpers.paths import CORPUS
from helpers.secrets import LEAKS, PROSE, aws_secret
from hypothesis import given, settings
from hypothesis import strategies as st

from skillpack.content import scan, secret_rules
from skillpack.content.scan import ContentStream, scan_content
from skillpack.content.secret_rules import RULES, scan_text
from skillpack.source import readfile
from skillpack.source.readfile import LARGE_FILE, READ_CHUNK, Changed, hash_large

needs_re2 = pytest.mark.skipif(secret_rules._NEEDLES is None, reason="google-re2 is not installed")
needs_literals = pytest.mark.skipif(secret_rules._LITERALS is None,
                                    reason="google-re2 or ahocorasick_rs is not installed")


def slow_scan(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[list[object], bool]:
    """`scan_text` with every fast path of this file switched off."""
    with monkeypatch.context() as patch:
        patch.setattr(secret_rules, "_gate", lambda r: None)
        patch.setattr(secret_rules, "_may_hold_utf16_needles", lambda data: True)
        patch.setattr(secret_rules, "SPLIT_SEARCH", 1 << 62)
        patch.setattr(secret_rules, "_LITERALS", None)
        found, marker = scan_text(data)
    return list(found), marker


def fast_scan(data: bytes) -> tuple[list[object], bool]:
    found, marker = scan_text(data)
    return list(found), marker


# -- inputs ----------------------------------------------------------------------------------

#: Pieces that make near-matches and matches of the gated rule, and of the others.
FRAGMENTS = [
    b"aws", b"AWS", b"_", b"secret", b"SECRET", b"Secret", b"access", b"Access", b"key",
    b"KEY", b"=", b":", b"=>", b":=", b"\"", b"'", b" ", b"\t", b"\n", b"/", b"+",
    b"secret_access_key", b"aws_secret_access_key", b"AWS_SECRET_KEY", b"SecretAccessKey",
    b"AKIA", b"ghp_", b"xoxb-", b"hf_", b"PRIVATE KEY", b"-----BEGIN RSA ", b"\x00", b"\xff",
    b"\xfe", b"\xe2\x84\xaa", b"\xc5\xbf",  # KELVIN SIGN and LONG S: RE2 folds them, `re` not
]


def _base64(rng: random.Random, n: int) -> bytes:
    alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    return bytes(rng.choice(alphabet) for _ in range(n))


@st.composite
def texts(draw: st.DrawFn) -> bytes:
    """Bytes made of the fragments above, base-64 runs of about 40 characters, and random
    bytes: assignments of AWS secret keys, and every way of missing one."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    parts = draw(st.lists(st.one_of(
        st.sampled_from(FRAGMENTS),
        st.integers(36, 44).map(lambda n: _base64(rng, n)),
        st.binary(max_size=12),
    ), max_size=40))
    return b"".join(parts)


@st.composite
def utf16_texts(draw: st.DrawFn) -> bytes:
    """`texts` decoded as Latin-1 with some non-ASCII characters, encoded in UTF-16 (LE or BE,
    with or without a byte order mark), then cut or prefixed with a stray byte."""
    text = draw(texts()).decode("latin-1") + draw(st.text(max_size=8))
    encoding = draw(st.sampled_from(["utf-16-le", "utf-16-be"]))
    data = text.encode(encoding, "surrogatepass")
    if draw(st.booleans()):
        data = (b"\xff\xfe" if encoding == "utf-16-le" else b"\xfe\xff") + data
    cut = draw(st.integers(0, 2))
    return draw(st.binary(max_size=1)) + (data[:-cut] if cut else data)


# -- the gate --------------------------------------------------------------------------------

@needs_re2
def test_every_gated_rule_match_is_a_gate_match() -> None:
    """The gate is the rule without its look-arounds: wherever the rule matches, the gate
    matches at the same place."""
    gated = [r for r in RULES if r.gate is not None]
    assert gated, "no rule has a gate"
    for r in gated:
        gate = secret_rules._gate(r)
        assert gate is not None
        for _, _, data, _ in LEAKS:
            for match in r.pattern.finditer(data):
                assert gate.search(data[match.start():]) is not None, r.id


@needs_re2
@settings(max_examples=400, deadline=None)
@given(texts())
def test_the_gate_changes_no_finding(data: bytes) -> None:
    with pytest.MonkeyPatch.context() as patch:
        assert fast_scan(data) == slow_scan(data, patch)


@needs_re2
def test_an_aws_secret_is_still_found_through_the_gate() -> None:
    """The gated rule still fires: a real assignment is found, one without a value is not."""
    secret = aws_secret()
    for name in ("aws_secret_access_key", "AWS_SECRET_KEY", "SecretAccessKey"):
        data = PROSE + f"{name} = \"{secret}\"\n".encode() + PROSE
        assert [f.rule for f in scan_text(data)[0]] == ["aws-secret-access-key"], name
    assert scan_text(PROSE + b"aws_secret_access_key = ${AWS_SECRET}\n")[0] == []


# -- the UTF-16 needle check -----------------------------------------------------------------

@needs_re2
def test_utf16_leaks_are_still_found() -> None:
    """Every leak of the recall set, written in UTF-16 (both byte orders, with and without a
    byte order mark), gives the same findings with and without the check, and they are
    found in UTF-16."""
    checked = 0
    with pytest.MonkeyPatch.context() as patch:
        for case, _path, data, _rules in LEAKS:
            if b"\x00" in data:
                continue  # already UTF-16
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue  # a compressed asset
            for encoding, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")):
                for head in (b"", bom):
                    encoded = head + (PROSE.decode() + text).encode(encoding)
                    fast = fast_scan(encoded)
                    assert fast == slow_scan(encoded, patch), case
                    assert fast[0], case
                    checked += 1
    assert checked >= 100


@needs_re2
@settings(max_examples=400, deadline=None)
@given(utf16_texts())
def test_the_utf16_check_changes_no_finding(data: bytes) -> None:
    with pytest.MonkeyPatch.context() as patch:
        assert fast_scan(data) == slow_scan(data, patch)


@needs_re2
def test_a_font_without_utf16_needles_is_not_transcoded(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """A binary whose NULs make it read as UTF-16 and that holds no UTF-16 needle is never
    decoded; one holding a UTF-16 needle is."""
    rng = random.Random(7)
    binary = b"".join(bytes((0, rng.randrange(0x80, 256))) for _ in range(10_000))
    assert secret_rules._utf16_reading(binary, 0, False) == ("utf-16-be", 0)
    assert not secret_rules._may_hold_utf16_needles(binary)
    decoded: list[int] = []
    real = secret_rules._Window.feed

    def feed(self: secret_rules._Window, chunk: bytes, final: bool, **kw: Any) -> None:
        if self.encoding != "utf-8":
            decoded.append(len(chunk))
        real(self, chunk, final, **kw)

    monkeypatch.setattr(secret_rules._Window, "feed", feed)
    scan_text(binary)
    assert decoded == []
    scan_text(binary + "AKIA".encode("utf-16-be"))
    assert decoded


def _re2_utf16_check(data: bytes, monkeypatch: pytest.MonkeyPatch) -> bool:
    """`_may_hold_utf16_needles` with its literal search of the two halves switched off."""
    with monkeypatch.context() as patch:
        patch.setattr(secret_rules, "_LITERALS", None)
        return secret_rules._may_hold_utf16_needles(data)


@needs_literals
def test_the_halves_search_finds_every_utf16_needle_the_re2_search_finds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every rule's needle (a folded one in three cases), in UTF-16-LE and BE, at an even and
    an odd offset of a NUL-heavy binary, at its start, its end and across a piece's end: the
    check with the literal search of the even and odd bytes says what the RE2 search says
    (True); the binary alone gives False both ways."""
    rng = random.Random(18)
    binary = b"".join(bytes((0, rng.randrange(0x80, 256))) for _ in range(70_000))
    assert not secret_rules._may_hold_utf16_needles(binary)
    assert not _re2_utf16_check(binary, monkeypatch)
    checked = 0
    for rule in RULES:
        for needle in rule.needles:
            spellings = {needle, needle.upper(), needle.title()} if rule.fold else {needle}
            for spelt in spellings:
                for encoding in ("utf-16-le", "utf-16-be"):
                    encoded = spelt.decode("ascii").encode(encoding)
                    for at in (0, 1, 4095, 2 * secret_rules.PIECE - 3, len(binary)):
                        data = binary[:at] + encoded + binary[at:]
                        assert secret_rules._may_hold_utf16_needles(data), (spelt, encoding, at)
                        assert _re2_utf16_check(data, monkeypatch)
                        checked += 1
    assert checked >= 37 * 2 * 5


@needs_literals
@pytest.mark.corpus
def test_the_halves_search_agrees_on_every_corpus_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every corpus file read as UTF-16 (its fonts), and each with a UTF-16 leak appended."""
    read = [p.read_bytes() for p in sorted(CORPUS.rglob("*"))
            if p.is_file() and not p.is_symlink()]
    utf16 = [d for d in read if secret_rules._utf16_reading(d, 0, False) is not None]
    assert len(utf16) >= 10
    for data in utf16:
        for text in (data, data + "AKIA".encode("utf-16-le"), data + b"\0" + "SeCrEt".encode(
                "utf-16-be")):
            assert (secret_rules._may_hold_utf16_needles(text)
                    == _re2_utf16_check(text, monkeypatch))


def _content_scans(path: str, data: bytes, monkeypatch: pytest.MonkeyPatch
                   ) -> tuple[object, object]:
    """`scan_content` of `data` with `plainly_clean`, and without it (the full scan)."""
    fast = scan_content(path, data, frozenset())
    with monkeypatch.context() as patch:
        patch.setattr(scan, "plainly_clean", lambda data: False)
        slow = scan_content(path, data, frozenset())
    return fast, slow


@needs_literals
def test_plainly_clean_texts_scan_as_the_full_scan_scans_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts at the edges of `plainly_clean`: one piece and one byte more, a NUL at the last
    byte of the head looked at and the first one past it, each byte order mark, every leak
    of the recall set and every needle (a piece's last bytes, its first): `scan_content`
    gives what the full scan gives. Clean prose is told plainly clean; a needle never."""
    one = secret_rules._ONE_PIECE
    line = b"A line of the reference notes: nothing to hide here, just words.\n"
    prose = (line * (one // len(line) + 2))[:one]
    assert secret_rules.plainly_clean(prose)
    assert not secret_rules.plainly_clean(prose + b"x")  # two pieces: the full scan
    cases = [prose, prose + b"x", prose[:100], b"", b"\0", prose[:4095] + b"\0",
             prose[:4096] + b"\0", b"\xff\xfe" + prose[:200], b"\xfe\xff" + prose[:200],
             "PRIVATE KEY".encode("utf-16-le") + prose[:100]]
    cases += [prose[:200] + leaked for _, _, leaked, _ in LEAKS]
    cases += [head + leaked.decode("latin-1").encode(encoding)  # UTF-16 told by its NULs
              for _, _, leaked, _ in LEAKS[:8] for encoding in ("utf-16-le", "utf-16-be")
              for head in (b"", b"x" * 11, b"x" * 100)]
    for rule in RULES:
        for needle in rule.needles:
            assert not secret_rules.plainly_clean(prose[:100] + needle), needle
            cases += [prose[:one - len(needle)] + needle, needle + prose[len(needle):]]
    rng = random.Random(18)
    binaries = [rng.randbytes(4096) for _ in range(5)]  # a few NULs: no UTF-16 reading
    assert all(secret_rules.plainly_clean(b) for b in binaries)
    spread = [bytes(x for c in b[:2000] for x in (c, 0)) for b in binaries]  # read as UTF-16
    assert not any(secret_rules.plainly_clean(b) for b in spread)
    cases += binaries + spread
    told = 0
    for data in cases:
        fast, slow = _content_scans("notes.md", data, monkeypatch)
        assert fast == slow, data[:60]
        told += secret_rules.plainly_clean(data)
    assert 3 <= told < len(cases) - 80  # both ways are taken


@needs_literals
@settings(max_examples=300, deadline=None)
@given(texts())
def test_plainly_clean_changes_no_content_scan(data: bytes) -> None:
    with pytest.MonkeyPatch.context() as patch:
        fast, slow = _content_scans("notes.txt", data, patch)
    assert fast == slow


# -- a folded needle's core without its head (issue 18, fourth round) ------------------------

_LONG_S = "\u017f".encode()
_HEADS = [b"", b"x", b"e", b"E", b"s", b"se", b"SE", b"sE", b"Se", _LONG_S + b"e",
          _LONG_S + b"E", b"\xc5e", b"\xbfe", b"ss", b"x e", _LONG_S, b"s" + _LONG_S]
_CORES = sorted({bytes(v) for v in itertools.product(b"cC", b"rR", b"eE", b"tT")})
_AFTER = [b"", b"ly", b" x", b"e", b"AKIA", b"T3BlbkFJ", b"hf_", b"cret", b"ecret", b"secret"]


def _re2_needles(text: bytes) -> list[int]:
    """The RE2 set's answer: the needles (of rules, or the UTF-16 markers) in `text`."""
    assert secret_rules._NEEDLES is not None
    return sorted(secret_rules._NEEDLES.set.Match(text) or ())


@needs_re2
def test_re2_folds_the_folded_needles_letters_as_the_core_check_knows() -> None:
    """`_stray_cores` takes RE2's ``(?i:secret)`` for ``[sS\u017f][eE][cC][rR][eE][tT]``: asked
    of every code point of the BMP, RE2 folds to each letter exactly those; beyond it, no
    character has a case that is an ASCII letter."""
    import re2

    assert secret_rules._FOLD_HEADS == (b"se",)
    expected = {"s": "sS\u017f", "e": "eE", "c": "cC", "r": "rR", "t": "tT"}
    for letter, spelt in expected.items():
        pattern = re2.compile(b"(?i:" + letter.encode() + b")")
        folded = {chr(cp) for cp in range(0x10000) if not 0xD800 <= cp < 0xE000
                  and pattern.fullmatch(chr(cp).encode("utf-8"))}
        assert folded == set(spelt), letter
    ascii_letters = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    assert not [cp for cp in range(0x10000, 0x110000)
                if {chr(cp).lower(), chr(cp).upper(), chr(cp).casefold()} & ascii_letters]
    assert secret_rules._kinds() is not None  # one automaton, no pattern a prefix of another


@needs_literals
def test_a_core_without_its_head_is_plainly_clean_only_when_no_needle_is_there(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every case of ``cret`` after every head (``se`` in each case, U+017F then ``e``, a
    part of them, nothing) and before each needle or a core (a needle starting inside the
    core's last letters, too): told plainly clean only when the RE2 set finds no needle,
    and scanned as the full scan scans it."""
    told = 0
    for head, core, after in itertools.product(_HEADS, _CORES, _AFTER):
        for text in (head + core + after, b"con" + head + core + after + b" end",
                     core[:3] + head + core + after):
            clean = secret_rules.plainly_clean(text)
            if clean:
                assert _re2_needles(text) == [], text
                told += 1
            fast, slow = _content_scans("notes.md", text, monkeypatch)
            assert fast == slow, text
    for needle in NEEDLES:  # a needle starting at each letter of a core but its first
        for core in _CORES:
            for cut in (1, 2, 3):
                overlap = core[:cut] + needle
                if needle.startswith(core[cut:]):
                    assert not secret_rules.plainly_clean(overlap), overlap
                assert not secret_rules.plainly_clean(b"x" + core + needle), (core, needle)
    assert told > 100  # the check tells many at once


@needs_literals
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_HEADS + _CORES + _AFTER + [b" ", b"\n", b"crete", b"T3Bl"]),
                max_size=12))
def test_texts_of_cores_and_needles_are_plainly_clean_only_without_a_needle(
        parts: list[bytes]) -> None:
    text = b"".join(parts)
    if secret_rules.plainly_clean(text):
        assert _re2_needles(text) == [], text
    with pytest.MonkeyPatch.context() as patch:
        fast, slow = _content_scans("notes.txt", text, patch)
    assert fast == slow


# -- the corpus ------------------------------------------------------------------------------

@pytest.mark.corpus
def test_every_corpus_file_scans_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every corpus file, and every corpus file with a leak appended: the same findings and
    PEM marker with the fast paths as without them."""
    files = [p for p in sorted(Path(CORPUS).rglob("*")) if p.is_file() and not p.is_symlink()]
    assert len(files) > 1000
    leak = LEAKS[0][2]
    for path in files:
        data = path.read_bytes()
        for sample in (data, data + b"\n" + leak):
            assert fast_scan(sample) == slow_scan(sample, monkeypatch), path
            fast, slow = _content_scans(path.name, sample, monkeypatch)
            assert fast == slow, path
        assert scan_content(path.name, data, frozenset()).refused is False, path


# -- the split search ------------------------------------------------------------------------

NEEDLES = sorted({n for r in RULES for n in r.needles} | {m for _, _, m in secret_rules._UTF16})


@needs_re2
def test_a_needle_across_the_middle_of_a_split_search_is_found() -> None:
    """Every needle, placed at every offset across the middle of a text searched in two halves
    (and at its two ends), is found; the text without it holds none."""
    size = secret_rules.SPLIT_SEARCH + 1001
    blank = bytes(size)
    assert not secret_rules._any_needle(blank)
    middle = size // 2
    for needle in NEEDLES:
        for at in [0, size - len(needle), *range(middle - len(needle), middle + 2)]:
            text = blank[:at] + needle + blank[at + len(needle):]
            assert len(text) == size
            assert secret_rules._any_needle(text), (needle, at)


@needs_re2
@settings(max_examples=60, deadline=None)
@given(st.integers(secret_rules.SPLIT_SEARCH, secret_rules.SPLIT_SEARCH * 2),
       st.sampled_from(NEEDLES), st.floats(0, 1), st.binary(max_size=64))
def test_the_split_search_is_the_plain_search(size: int, needle: bytes, where: float,
                                              noise: bytes) -> None:
    at = int(where * (size - len(needle) - len(noise)))
    text = (bytes(at) + noise + needle).ljust(size, b"\x01")
    assert secret_rules._NEEDLES is not None
    assert secret_rules._any_needle(text) == (
        secret_rules._NEEDLES.any.search(text) is not None)
    cut = text[:at + len(noise) + len(needle) - 1].ljust(size, b"\x01")
    assert secret_rules._any_needle(cut) == (secret_rules._NEEDLES.any.search(cut) is not None)


@needs_re2
def test_a_token_split_over_two_chunks_of_a_large_stream_is_found() -> None:
    """A large file streamed in 4 MiB chunks (each window searched in two halves): a token
    across a chunk seam, and one across a window's middle, are each found once, at their
    line."""
    rng = random.Random(3)
    token = b"hf_" + bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJ") for _ in range(34))
    chunk = 4 << 20
    body = bytearray(b"x" * (2 * chunk + 100))
    for line_at in range(0, len(body), 4096):
        body[line_at] = 0x0A
    seam, middle = chunk - 10, chunk + chunk // 2 - 5
    for at in (seam, middle):
        body[at - 1] = 0x20
        body[at:at + len(token)] = token
        body[at + len(token)] = 0x20
    data = bytes(body)
    whole = scan_text(data)[0]
    assert [f.rule for f in whole] == ["huggingface-token"] * 2
    scan = secret_rules.StreamScan()
    for at in range(0, len(data), chunk):
        scan.feed(memoryview(data)[at:at + chunk])
    assert scan.finish() == whole


# -- the literal search ----------------------------------------------------------------------

#: Every needle, the folded rule's in every ASCII case.
LITERAL_NEEDLES = sorted(
    {n for r in RULES if not r.fold for n in r.needles} | {m for _, _, m in secret_rules._UTF16}
    | {bytes(v) for r in RULES if r.fold for n in r.needles
       for v in itertools.product(*((c, c ^ 0x20) if chr(c).isalpha() else (c,) for c in n))})


def re2_present(text: bytes) -> tuple[tuple[str, ...], bool]:
    """`_present` by the RE2 search and set alone (no literal search), as rule ids."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(secret_rules, "_LITERALS", None)
        rules, utf16 = secret_rules._present(text)
    return tuple(r.id for r in rules), utf16


def literal_present(text: bytes) -> tuple[tuple[str, ...], bool]:
    rules, utf16 = secret_rules._present(text)
    return tuple(r.id for r in rules), utf16


@needs_literals
def test_the_literal_patterns_are_every_needle() -> None:
    """Each case-sensitive needle and UTF-16 marker once, and every ASCII case of the last
    four letters of the folded one (``cret``): 54 patterns, one automaton (Teddy takes 64)."""
    groups = secret_rules._literal_patterns()
    assert len(groups) == 1 and len(groups[0]) <= 64
    flat = groups[0]
    assert len(flat) == len(set(flat))
    exact = {n for r in RULES if not r.fold for n in r.needles}
    exact |= {m for _, _, m in secret_rules._UTF16}
    assert set(flat) - exact == {bytes(v) for v in itertools.product(
        *((c, c ^ 0x20) for c in b"cret"))}
    assert len(flat) == len(exact) + 16


@needs_literals
def test_a_needle_at_every_seam_of_the_pieces_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every needle (each case of a folded one), at every offset across a piece's end, across
    the middle of a split search and at the two ends of the text, and in a text of one piece:
    the same rules and UTF-16 marker as the RE2 search of the whole text; the text without it
    holds none."""
    piece = secret_rules.PIECE
    size = 4 * piece + 1001
    monkeypatch.setattr(secret_rules, "SPLIT_SEARCH", 3 * piece)  # split this text too
    blank = bytes(size)
    assert literal_present(blank) == re2_present(blank) == ((), False)
    middle = size // 2 // piece * piece
    assert middle == 2 * piece
    for needle in LITERAL_NEEDLES:
        offsets = {0, size - len(needle)}
        for seam in (piece, middle, 3 * piece):
            offsets |= set(range(seam - len(needle) - 1, seam + 2))
        for at in sorted(offsets):
            text = blank[:at] + needle + blank[at + len(needle):]
            got = literal_present(text)
            assert got == re2_present(text), (needle, at)
            assert got[0] or got[1], (needle, at)
        for at in (0, 500, 1000 - len(needle)):  # a text of one piece: its own searches
            text = blank[:at] + needle + blank[at + len(needle):1000]
            got = literal_present(text)
            assert got == re2_present(text), (needle, at)
            assert got[0] or got[1], (needle, at)


@needs_literals
@settings(max_examples=150, deadline=None)
@given(st.integers(0, 3 * secret_rules.PIECE), st.lists(st.tuples(
    st.sampled_from(LITERAL_NEEDLES), st.floats(0, 1)), max_size=6), st.binary(max_size=64))
def test_the_literal_search_tells_the_rules_the_re2_set_tells(
        size: int, needles: list[tuple[bytes, float]], noise: bytes) -> None:
    text = bytearray((noise * (size // max(1, len(noise)) + 1))[:size] if noise else bytes(size))
    for needle, where in needles:
        at = int(where * len(text))
        text[at:at] = needle
    data = bytes(text)
    assert literal_present(data) == re2_present(data)


@needs_literals
def test_needles_end_to_end_are_searched_piece_by_piece() -> None:
    """A text of needles end to end (one match every few bytes): the same rules as the RE2 set,
    no automaton search longer than one piece."""
    text = b"hf_AKIAghp_" * (3 * secret_rules.PIECE // 11)
    assert literal_present(text) == re2_present(text)
    assert all(end - start <= secret_rules.PIECE + secret_rules._LONGEST - 1
               for start, end in secret_rules._needle_pieces(text))


@needs_literals
def test_one_piece_texts_tell_the_rules_the_re2_set_tells_from_the_literal_matches() -> None:
    """`_present` of a text of one piece takes the rules from the literal matches
    (`_needles_in`): two needles overlapping in every way they can (the second starting
    inside the first: the automaton reports only the first), each after every head of a
    folded core, and texts of more than `_FEW` matches: what the RE2 set tells."""
    assert secret_rules._kinds() is not None
    told = 0
    for first, second in itertools.product(LITERAL_NEEDLES, repeat=2):
        for cut in range(1, len(first)):  # `second` starts at first[cut:] when they agree
            if second.startswith(first[cut:]) or first[cut:].startswith(second):
                text = b"x " + first[:cut] + second + b" y"
                assert literal_present(text) == re2_present(text), text
        text = b"(" + first + b") and (" + second + b")"
        assert literal_present(text) == re2_present(text), text
        told += secret_rules._needles_in(text, secret_rules._LITERALS[0](text)) is not None  # type: ignore[index]
    assert told > len(LITERAL_NEEDLES) ** 2 // 2  # most are told without the RE2 set
    for head in _HEADS:
        for core in _CORES:
            text = b"a " + head + core + b" b"
            assert literal_present(text) == re2_present(text), text
    many = b" ".join(LITERAL_NEEDLES[:secret_rules._FEW + 1])
    assert len(secret_rules._LITERALS[0](many)) > secret_rules._FEW  # type: ignore[index]
    assert secret_rules._needles_in(many, secret_rules._LITERALS[0](many)) is None  # type: ignore[index]
    assert literal_present(many) == re2_present(many)


@needs_literals
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(LITERAL_NEEDLES + _HEADS + [b" ", b"x", b"\0", b"ret",
                                                         b"T3Bl", b"hf", b"_"]), max_size=14))
def test_one_piece_texts_of_needles_and_their_parts_tell_what_the_re2_set_tells(
        parts: list[bytes]) -> None:
    text = b"".join(parts)
    assert literal_present(text) == re2_present(text)


# -- the large file's scan without line counts -----------------------------------------------

def _large(tmp_path: Path, body: bytes) -> Path:
    path = tmp_path / "big.txt"
    path.write_bytes(body)
    return path


def _lazy(path: Path, allow: frozenset[str] = frozenset()) -> tuple[str, object]:
    stream = ContentStream(path.name, allow)
    fd = os.open(path, readfile.OPEN_FLAGS)
    try:
        hex_digest, _ = hash_large(fd, path.stat().st_size, stream)
    finally:
        os.close(fd)
    return hex_digest, stream.finish()


def _counted(path: Path, allow: frozenset[str] = frozenset()) -> object:
    """The content check of `path` streamed as hash_large's chunks, counting lines."""
    stream = ContentStream(path.name, allow)
    data = path.read_bytes()
    for at in range(0, len(data), READ_CHUNK):
        stream.feed(memoryview(data)[at:at + READ_CHUNK])
    return stream.finish()


def _token(rng: random.Random) -> bytes:
    return b"hf_" + bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJ") for _ in range(34))


@needs_re2
def test_a_large_file_is_scanned_once_and_again_only_for_its_findings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large file holding no secret is read once; one holding tokens (on the first line,
    across a chunk seam, on a line longer than the overlap, in the last bytes) is read
    again, and its findings are those of the counting scan, at the same lines and columns;
    so are those of a UTF-16 key block starting in the middle of the file."""
    rng = random.Random(5)
    again: list[int] = []
    real = readfile._scan_again

    def counting(fd: int, size: int, scan: ContentStream, hex_digest: str) -> None:
        again.append(size)
        real(fd, size, scan, hex_digest)

    monkeypatch.setattr(readfile, "_scan_again", counting)
    body = bytearray(b"words and more words " * ((2 * READ_CHUNK + 5000) // 21))
    for at in range(0, len(body), 3001):
        body[at] = 0x0A
    clean = _large(tmp_path, bytes(body))
    assert len(body) >= LARGE_FILE
    assert _lazy(clean)[1] == _counted(clean)
    assert again == []
    long_line_at = READ_CHUNK + READ_CHUNK // 2
    body[long_line_at - 20000:long_line_at + 100] = b"y" * 20100  # no line break in 20 KB
    for at in (1, READ_CHUNK - 10, long_line_at, len(body) - 40):
        token = _token(rng)
        body[at - 1] = 0x20
        body[at:at + len(token)] = token
        body[at + len(token):at + len(token) + 1] = b" "
    leaky = _large(tmp_path, bytes(body[:len(body) - 2]))
    lazy = _lazy(leaky)[1]
    assert lazy == _counted(leaky)
    assert [f.rule for f in lazy.findings] == ["huggingface-token"] * 4  # type: ignore[attr-defined]
    assert [(f.line, f.column) for f in lazy.findings] == [  # type: ignore[attr-defined]
        (f.line, f.column) for f in scan_text(leaky.read_bytes())[0]]
    assert again == [leaky.stat().st_size]
    key = ("-----BEGIN RSA " + "PRIVATE KEY-----\n" + "MIIEow" * 20 + "\n").encode("utf-16-le")
    middle = READ_CHUNK + 78  # a UTF-16 reading starts at an even offset
    marked = _large(tmp_path, bytes(body[:middle]) + key + bytes(body[middle:]))
    lazy = _lazy(marked, frozenset({"huggingface-token"}))[1]
    assert lazy == _counted(marked, frozenset({"huggingface-token"}))
    assert "private-key" in {f.rule for f in lazy.findings}  # type: ignore[attr-defined]


@needs_re2
@pytest.mark.parametrize("cut", [1, 2, 3, 26])
def test_a_needle_across_a_chunk_seam_of_a_large_file_is_found(tmp_path: Path, cut: int) -> None:
    """A window holding no needle is moved on without joining its tail to the chunk: a needle
    cut by the seam of two chunks (its first `cut` bytes in the first), in a file with line
    breaks, is still found, at its line and column, as the counting scan finds it."""
    needle = b"pypi-AgENdGVzdC5weXBpLm9yZw" if cut == 26 else b"hf_"
    rng = random.Random(cut)
    token = (needle + bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJ")
                            for _ in range(34)) if cut < 26 else _pypi_test_token())
    body = bytearray(b"q" * (3 * READ_CHUNK + 999))
    for line_at in range(0, len(body), 2047):
        body[line_at] = 0x0A
    at = 2 * READ_CHUNK - cut
    body[at - 1] = 0x20
    body[at:at + len(token)] = token
    body[at + len(token)] = 0x20
    path = _large(tmp_path, bytes(body))
    lazy = _lazy(path)[1]
    assert lazy == _counted(path)
    found = scan_text(path.read_bytes())[0]
    assert found and [(f.rule, f.line, f.column) for f in lazy.findings] == [  # type: ignore[attr-defined]
        (f.rule, f.line, f.column) for f in found]


def _pypi_test_token() -> bytes:
    """A TestPyPI token: the macaroon's location field for test.pypi.org, base64url."""
    macaroon = b"\x02\x01\x0dtest.pypi.org" + bytes(range(60))
    return b"pypi-" + base64.urlsafe_b64encode(macaroon).rstrip(b"=")


@needs_re2
def test_a_large_file_changed_before_it_is_read_again_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second read must hash as the first: a file rewritten in between raises Changed."""
    body = bytearray(b"z" * (LARGE_FILE + 100))
    token = _token(random.Random(9))
    body[10:10 + len(token)] = token
    body[9] = body[10 + len(token)] = 0x20
    path = _large(tmp_path, bytes(body))
    assert _lazy(path)[1].findings  # type: ignore[attr-defined]
    real = ContentStream.recount

    def rewrite(self: ContentStream) -> bool:
        with open(path, "r+b") as handle:  # the same size, another byte
            handle.seek(LARGE_FILE)
            handle.write(b"Z")
        return real(self)

    monkeypatch.setattr(ContentStream, "recount", rewrite)
    with pytest.raises(Changed):
        _lazy(path)


# -- the rules searched around their needles -------------------------------------------------

def whole_window_scan(data: bytes) -> tuple[list[object], bool]:
    """`scan_text` with each rule searched over the whole text, not its regions."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(secret_rules, "_widened", lambda pieces, size: [(0, size)])
        return fast_scan(data)


#: The recall set's texts (not its compressed assets): leaks to place in a large text.
TEXT_LEAKS = [data for _, path, data, _ in LEAKS
              if not path.endswith(("gz", "zip", "tar")) and b"\x00" not in data]


@needs_literals
@settings(max_examples=80, deadline=None)
@given(st.integers(2, 5), st.lists(st.tuples(st.integers(0, len(TEXT_LEAKS) - 1),
                                             st.floats(0, 1), st.integers(-40, 40)),
                                   min_size=1, max_size=6),
       st.sampled_from([b"x", b" ", b"\n", b"A", b"a1 "]))
def test_the_rules_searched_around_their_needles_find_what_the_whole_text_gives(
        pieces: int, leaks: list[tuple[int, float, int]], filler: bytes) -> None:
    """Leaks of the recall set placed anywhere in a text of several pieces, or across a
    piece's end (the filler running on into them, letters or not): the same findings, at
    the same lines and columns, as each rule searched over the whole text."""
    size = pieces * secret_rules.PIECE
    text = bytearray((filler * (size // len(filler) + 1))[:size])
    for which, where, near_seam in leaks:
        leak = TEXT_LEAKS[which]
        at = int(where * (size - len(leak)))
        if near_seam:  # across the end of the piece it would start in
            at = max(0, min(size - len(leak),
                            at // secret_rules.PIECE * secret_rules.PIECE + near_seam))
        text[at:at + len(leak)] = leak
    data = bytes(text)
    fast = fast_scan(data)
    assert fast == whole_window_scan(data)
    stream = secret_rules.StreamScan()
    for at in range(0, len(data), 3 * secret_rules.PIECE + 7):
        stream.feed(data[at:at + 3 * secret_rules.PIECE + 7])
    assert stream.finish() == fast[0]


@needs_literals
def test_a_token_running_into_letters_at_a_region_end_is_not_cut() -> None:
    """A token whose needle sits at a piece's end, followed by more letters than the token
    takes: not a token (its look-ahead sees the letters), with regions as without."""
    piece = secret_rules.PIECE
    for tail in (b"", b"x" * 10, b"x" * 5000):
        token = b"hf_" + b"aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH" + tail
        for at in (piece - 3, piece - 1, 2 * piece - 2):
            data = bytearray(b" " * (3 * piece))
            data[at:at + len(token)] = token
            assert fast_scan(bytes(data)) == whole_window_scan(bytes(data)), (len(tail), at)


# -- an adversarial review of the fast paths (issue 18, review) ------------------------------

#: The folded needle spelt every way RE2 folds it (and ``re`` does not: the long s), then an
#: AWS secret key's assignment around it.
_SPELLINGS = [b"secret", b"SECRET", b"SeCrEt", b"sEcReT", _LONG_S + b"ecret", _LONG_S + b"ECRET"]


def _aws_line(spelt: bytes) -> bytes:
    return b"AWS_" + spelt + b"_ACCESS_KEY=" + aws_secret().encode() + b"\n"


#: Text between the needle and its neighbours: stray cores (more of them than `_needles_in`
#: tells alone), and the Unicode letters near a fold (Kelvin sign, dotted and dotless i,
#: fullwidth letters, a lone UTF-8 lead byte, the long s on its own).
_NOISE = [b"", b"concrete " * (secret_rules._FEW + 5), b"discrete, CRETE, ",
          "\u212a \u0130 \u0131 \uff53\uff45\uff43\uff52\uff45\uff54 ".encode(), b"\xc5 \xbf ",
          _LONG_S + b" " + b"\xc5" + b"cret ", b"s e cret ", b"se\ncret "]


def _placed(noise: bytes, needle: bytes, end: int) -> bytes:
    """Prose, `noise`, then `needle` ending at byte `end` of the text, then prose."""
    line = b"Notes on a concrete plan, and a discrete one.\n"
    filler = noise + line * (end // len(line) + 2)
    head = filler[:max(0, end - len(needle))]
    return head + needle + line


@needs_literals
def test_hostile_texts_around_the_folded_core_scan_as_the_full_scan(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An AWS secret key assigned to ``AWS_SECRET_ACCESS_KEY`` in every case and with the
    long s, after each kind of noise (more stray cores than `_FEW`, near-fold Unicode
    letters, a head cut from its core), ending at the start of a text, well inside one piece,
    at the last byte of one piece (`_ONE_PIECE`) and one byte past it; in UTF-8, and in
    UTF-16 (LE and BE, with and without a byte order mark): `scan_content` gives what the
    full scan gives, the RE2 set's rules are what the literal matches tell, and a text
    `plainly_clean` passes holds no needle. Each ASCII spelling in UTF-8 is refused."""
    one = secret_rules._ONE_PIECE
    refused = 0
    for spelt, noise in itertools.product(_SPELLINGS, _NOISE):
        needle = _aws_line(spelt)
        for end in (len(needle), 5000, one, one + 1):
            text = _placed(noise, needle, end)
            if end <= one:  # it ends where asked: inside the one piece or at its last byte
                assert text[end - len(needle):end] == needle
            variants = [text]
            if end < 6000:
                variants += [bom + text.decode("utf-8", "replace").encode(enc)
                             for enc, bom in (("utf-16-le", b"\xff\xfe"),
                                              ("utf-16-be", b"\xfe\xff"))
                             for bom in (b"", bom)]
            for data in variants:
                fast, slow = _content_scans("notes.md", data, monkeypatch)
                assert fast == slow, (spelt, noise, end)
                assert fast_scan(data) == slow_scan(data, monkeypatch), (spelt, noise, end)
                if len(data) <= one:
                    assert literal_present(data) == re2_present(data), (spelt, noise, end)
                if secret_rules.plainly_clean(data):
                    assert _re2_needles(data) == [], (spelt, noise, end)
            if spelt.isascii():
                assert scan_content("notes.md", text, frozenset()).refused, (spelt, end)
                refused += 1
    assert refused == 4 * len(_NOISE) * 4


@needs_literals
def test_stray_cores_then_a_needle_anywhere_are_plainly_clean_only_without_it() -> None:
    """A text of nothing but stray cores (``cret`` in each case, no head), one piece long,
    is plainly clean. With a needle (or the folded one's head put back) at its start, its
    middle, its very end, or cut by the end; and, in a short one, a needle starting at each
    byte of a core but its first (the automaton reports the core only, `_hides` must see
    the needle): plainly clean only when the RE2 set finds nothing, and `_present` tells what
    the RE2 set tells."""
    cores = b" ".join(_CORES) + b" "
    body = (cores * (secret_rules._ONE_PIECE // len(cores) + 1))[:secret_rules._ONE_PIECE - 40]
    assert secret_rules.plainly_clean(body) and _re2_needles(body) == []
    assert secret_rules.plainly_clean(b"")
    assert scan_content("x.md", b"", frozenset()).refused is False
    texts = []
    for needle in [*NEEDLES, b"se", b"SE", _LONG_S + b"E"]:
        texts += [body[:at] + needle + body[at:] for at in (0, len(body) // 2)]
        texts += [body + needle, body + needle[:-1]]
        short = body[:200]
        texts += [short + core[:cut] + needle + short
                  for core in _CORES for cut in (1, 2, 3) if needle.startswith(core[cut:])]
        texts += [short + core[:cut] + needle for core in (b"cret", b"CRET") for cut in (1, 2, 3)]
    needled = 0
    for text in texts:
        if secret_rules.plainly_clean(text):
            assert _re2_needles(text) == [], text[-60:]
        else:
            needled += 1
        assert literal_present(text) == re2_present(text), text[-60:]
    assert needled > len(NEEDLES) * 4


@needs_literals
def test_a_skill_whose_only_needle_follows_many_stray_cores_is_refused(tmp_path: Path) -> None:
    """Through the command line: `skillpack check` of a skill whose notes hold an AWS secret
    key (in any case of ``secret``) after more stray cores than `_FEW` refuses it, naming the
    rule and the file; the same notes without the key pass."""
    skill = tmp_path / "demo"
    (skill / "notes").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: demo\ndescription: A demo skill.\n---\n\nBody.\n")
    notes = skill / "notes" / "plan.md"
    stray = b"A concrete, discrete plan.\n" * (secret_rules._FEW + 3)
    notes.write_bytes(stray)
    assert cli("check", skill).exit_code == 0
    for spelt in (b"secret", b"SECRET", b"sEcReT"):
        notes.write_bytes(stray + _aws_line(spelt) + stray)
        result = cli("check", skill)
        assert result.exit_code != 0, spelt
        assert "aws-secret-access-key" in result.output and "notes/plan.md" in result.output


@needs_literals
def test_utf16_text_without_a_nul_in_its_head_is_read_by_its_byte_order_mark(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """UTF-16 text whose head holds no NUL (4 KiB and more of CJK characters) and then an AWS
    key: with a byte order mark it is read as UTF-16 and refused, by `scan_content` as by the
    full scan (`plainly_clean`'s NUL shortcut stands aside for a byte order mark); without
    one it is not UTF-16 to either, and a UTF-16 ``PRIVATE KEY`` there is still a needle."""
    cjk = "\u6f22\u5b57\u306e\u30e1\u30e2\u3002" * 500  # no byte of it is NUL in UTF-16
    leak = "\nAWS_SECRET_ACCESS_KEY=" + aws_secret() + "\n"
    for encoding, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")):
        head = cjk.encode(encoding)
        assert 0 not in head[:secret_rules._SAMPLE] and len(head) > secret_rules._SAMPLE
        for data in (bom + head + leak.encode(encoding), head + leak.encode(encoding),
                     head + "PRIVATE KEY".encode(encoding)):
            fast, slow = _content_scans("notes.txt", data, monkeypatch)
            assert fast == slow, (encoding, data[:2])
        data = bom + head + leak.encode(encoding)
        assert not secret_rules.plainly_clean(data)
        assert scan_content("notes.txt", data, frozenset()).refused
        assert not secret_rules.plainly_clean(head + "PRIVATE KEY".encode(encoding))
