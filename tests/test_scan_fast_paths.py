"""The content scan's fast paths (issue 18) find exactly what the slow paths find.

* `Rule.gate`: an RE2 pattern every match of a rule also matches; a text it finds nothing in
  is not searched with the rule's `re` pattern.
* `_may_hold_utf16_needles`: a file read as UTF-16 (a byte order mark, or the NULs of UTF-16
  text: every TrueType font of the corpus) is transcoded and scanned only when its bytes hold
  a rule's needle in UTF-16.
* `_present` on a large text: its halves searched on two threads, the seam covered.

Each is compared with the slow path (the fast path switched off) on the recall set of
test_secret_rules, on generated inputs, and on every corpus file. Fake secrets are built at
test time (see test_secret_rules).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st
from test_secret_rules import LEAKS, PROSE, aws_secret

from skillpack.build import secret_rules
from skillpack.build.scan import scan_content
from skillpack.build.secret_rules import RULES, scan_text

needs_re2 = pytest.mark.skipif(secret_rules._NEEDLES is None, reason="google-re2 is not installed")


def slow_scan(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[list[object], bool]:
    """`scan_text` with every fast path of this file switched off."""
    with monkeypatch.context() as patch:
        patch.setattr(secret_rules, "_gate", lambda r: None)
        patch.setattr(secret_rules, "_may_hold_utf16_needles", lambda data: True)
        patch.setattr(secret_rules, "SPLIT_SEARCH", 1 << 62)
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
