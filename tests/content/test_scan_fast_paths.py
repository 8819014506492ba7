"""The content scan's fast paths (issue 18) find exactly what the slow paths find.

* `Rule.gate`: an RE2 pattern every match of a rule also matches; a text it finds nothing in
  is not searched with the rule's `re` pattern.
* `_may_hold_utf16_needles`: a file read as UTF-16 (a byte order mark, or the NULs of UTF-16
  text: every TrueType font of the corpus) is transcoded and scanned only when its bytes hold
  a rule's needle in UTF-16.
* `_LITERALS`: the needles searched by Aho-Corasick (ahocorasick_rs, SIMD) in pieces of
  `PIECE` bytes, the RE2 set run on the pieces holding one only; in a text of one piece,
  the rules told from the literal matches (`_needles_in`) when they can be.

Each is compared with the slow path (the fast path switched off, or the RE2 set over the
whole text) on the recall set of
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
import re2
from click.testing import CliRunner
from helpers.paths import CORPUS
from helpers.secrets import LEAKS, aws_secret
from hypothesis import given, settings
from hypothesis import strategies as st

from skillpack.cli import main
from skillpack.content import secret_rules
from skillpack.content.scan import ContentStream, scan_content
from skillpack.content.secret_rules import RULES, scan_text
from skillpack.source import readfile
from skillpack.source.readfile import READ_CHUNK, hash_large


def reference_present(text: bytes) -> tuple[tuple[secret_rules.Rule, ...], bool]:
    """`_present` by the RE2 set over the whole text: no literal search."""
    needles = secret_rules._NEEDLES
    ats = sorted({needles.index[h] for h in needles.set.Match(text) or ()})
    utf16 = bool(ats) and ats[-1] == secret_rules._UTF16_AT
    return tuple(RULES[at] for at in ats if at != secret_rules._UTF16_AT), utf16


def slow_scan(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[list[object], bool]:
    """`scan_text` with every fast path of this file switched off."""
    with monkeypatch.context() as patch:
        patch.setattr(secret_rules, "_GATES", {})
        patch.setattr(secret_rules, "_may_hold_utf16_needles", lambda data: True)
        patch.setattr(secret_rules, "_present", reference_present)
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

@settings(max_examples=400, deadline=None)
@given(texts())
def test_the_gate_changes_no_finding(data: bytes) -> None:
    with pytest.MonkeyPatch.context() as patch:
        assert fast_scan(data) == slow_scan(data, patch)


# -- the UTF-16 needle check -----------------------------------------------------------------

@settings(max_examples=400, deadline=None)
@given(utf16_texts())
def test_the_utf16_check_changes_no_finding(data: bytes) -> None:
    with pytest.MonkeyPatch.context() as patch:
        assert fast_scan(data) == slow_scan(data, patch)


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
        patch.setattr(secret_rules, "_needle_pieces", lambda text: [(0, len(text))])
        return secret_rules._may_hold_utf16_needles(data)


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
    """`scan_content` of `data`, and with the RE2 set alone telling the rules (the full
    scan)."""
    fast = scan_content(path, data, frozenset())
    with monkeypatch.context() as patch:
        patch.setattr(secret_rules, "_present", reference_present)
        slow = scan_content(path, data, frozenset())
    return fast, slow


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


def test_re2_folds_the_folded_needles_letters_as_the_core_check_knows() -> None:
    """`_needles_in` takes RE2's ``(?i:secret)`` for ``[sS\u017f][eE][cC][rR][eE][tT]``: asked
    of every code point of the BMP, RE2 folds to each letter exactly those; beyond it, no
    character has a case that is an ASCII letter."""
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
    assert secret_rules._KINDS is not None  # one automaton, no pattern a prefix of another


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
    """`_present` by the RE2 set alone (no literal search), as rule ids."""
    rules, utf16 = reference_present(text)
    return tuple(r.id for r in rules), utf16


def literal_present(text: bytes) -> tuple[tuple[str, ...], bool]:
    rules, utf16 = secret_rules._present(text)
    return tuple(r.id for r in rules), utf16


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


def test_a_needle_at_every_seam_of_the_pieces_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every needle (each case of a folded one), at every offset across a piece's end and at
    the two ends of the text, and in a text of one piece:
    the same rules and UTF-16 marker as the RE2 search of the whole text; the text without it
    holds none."""
    piece = secret_rules.PIECE
    size = 4 * piece + 1001
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


def test_needles_end_to_end_are_searched_piece_by_piece() -> None:
    """A text of needles end to end (one match every few bytes): the same rules as the RE2 set,
    no automaton search longer than one piece."""
    text = b"hf_AKIAghp_" * (3 * secret_rules.PIECE // 11)
    assert literal_present(text) == re2_present(text)
    assert all(end - start <= secret_rules.PIECE + secret_rules._LONGEST - 1
               for start, end in secret_rules._needle_pieces(text))


def test_one_piece_texts_tell_the_rules_the_re2_set_tells_from_the_literal_matches() -> None:
    """`_present` of a text of one piece takes the rules from the literal matches
    (`_needles_in`): two needles overlapping in every way they can (the second starting
    inside the first: the automaton reports only the first), each after every head of a
    folded core, and texts of more than `_FEW` matches: what the RE2 set tells."""
    assert secret_rules._KINDS is not None
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


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(LITERAL_NEEDLES + _HEADS + [b" ", b"x", b"\0", b"ret",
                                                         b"T3Bl", b"hf", b"_"]), max_size=14))
def test_one_piece_texts_of_needles_and_their_parts_tell_what_the_re2_set_tells(
        parts: list[bytes]) -> None:
    text = b"".join(parts)
    assert literal_present(text) == re2_present(text)


# -- a large file's scan, chunk by chunk ----------------------------------------------------

def _large(tmp_path: Path, body: bytes) -> Path:
    path = tmp_path / "big.txt"
    path.write_bytes(body)
    return path


def _read(path: Path, allow: frozenset[str] = frozenset()) -> tuple[str, object]:
    """The content check of `path` as the large-file reader runs it."""
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


@pytest.mark.parametrize("cut", [1, 2, 3, 26])
def test_a_needle_across_a_chunk_seam_of_a_large_file_is_found(tmp_path: Path, cut: int) -> None:
    """A needle cut by the seam of two chunks of a large file (its first `cut` bytes in the
    first), in a file with line breaks, is found by the reader's scan at its line and column,
    as the scan of the whole text finds it."""
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
    read = _read(path)[1]
    assert read == _counted(path)
    found = scan_text(path.read_bytes())[0]
    assert found and [(f.rule, f.line, f.column) for f in read.findings] == [  # type: ignore[attr-defined]
        (f.rule, f.line, f.column) for f in found]


def _pypi_test_token() -> bytes:
    """A TestPyPI token: the macaroon's location field for test.pypi.org, base64url."""
    macaroon = b"\x02\x01\x0dtest.pypi.org" + bytes(range(60))
    return b"pypi-" + base64.urlsafe_b64encode(macaroon).rstrip(b"=")


# -- the rules searched around their needles -------------------------------------------------

TEXT_LEAKS = [data for _, path, data, _ in LEAKS
              if not path.endswith(("gz", "zip", "tar")) and b"\x00" not in data]


def test_a_token_running_into_letters_at_a_region_end_is_not_cut() -> None:
    """A token whose needle sits at a piece's end, followed by more letters than the token
    takes: not a token (its look-ahead sees the letters), with regions as without."""
    piece = secret_rules.PIECE
    for tail in (b"", b"x" * 10, b"x" * 5000):
        token = b"hf_" + b"aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH" + tail
        for at in (piece - 3, piece - 1, 2 * piece - 2):
            data = bytearray(b" " * (3 * piece))
            data[at:at + len(token)] = token
            with pytest.MonkeyPatch.context() as patch:
                assert fast_scan(bytes(data)) == slow_scan(bytes(data), patch), (len(tail), at)


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


def test_hostile_texts_around_the_folded_core_scan_as_the_full_scan(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An AWS secret key assigned to ``AWS_SECRET_ACCESS_KEY`` in every case and with the
    long s, after each kind of noise (more stray cores than `_FEW`, near-fold Unicode
    letters, a head cut from its core), ending at the start of a text, well inside one piece,
    at the last byte of one piece (`_ONE_PIECE`) and one byte past it; in UTF-8, and in
    UTF-16 (LE and BE, with and without a byte order mark): `scan_content` gives what the
    full scan gives, the RE2 set's rules are what the literal matches tell, and a text
    Each ASCII spelling in UTF-8 is refused."""
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
            if spelt.isascii():
                assert scan_content("notes.md", text, frozenset()).refused, (spelt, end)
                refused += 1
    assert refused == 4 * len(_NOISE) * 4


def test_stray_cores_then_a_needle_anywhere_tell_what_the_re2_set_tells() -> None:
    """A text of nothing but stray cores (``cret`` in each case, no head), one piece long,
    holds no needle. With a needle (or the folded one's head put back) at its start, its
    middle, its very end, or cut by the end; and, in a short one, a needle starting at each
    byte of a core but its first (the automaton reports the core only, `_hides` must see
    the needle): `_present` tells what the RE2 set tells."""
    cores = b" ".join(_CORES) + b" "
    body = (cores * (secret_rules._ONE_PIECE // len(cores) + 1))[:secret_rules._ONE_PIECE - 40]
    assert literal_present(body) == ((), False) and _re2_needles(body) == []
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
        needled += _re2_needles(text) != []
        assert literal_present(text) == re2_present(text), text[-60:]
    assert needled > len(NEEDLES) * 4


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
    assert CliRunner().invoke(main, ["check", str(skill)]).exit_code == 0
    for spelt in (b"secret", b"SECRET", b"sEcReT"):
        notes.write_bytes(stray + _aws_line(spelt) + stray)
        result = CliRunner().invoke(main, ["check", str(skill)])
        assert result.exit_code != 0, spelt
        assert "aws-secret-access-key" in result.output and "notes/plan.md" in result.output


def test_utf16_text_without_a_nul_in_its_head_is_read_by_its_byte_order_mark(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """UTF-16 text whose head holds no NUL (4 KiB and more of CJK characters) and then an AWS
    key: with a byte order mark it is read as UTF-16 and refused, by `scan_content` as by the
    full scan (the NUL test of the head stands aside for a byte order mark); without
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
        assert scan_content("notes.txt", data, frozenset()).refused
        assert literal_present(head + "PRIVATE KEY".encode(encoding))[1]
