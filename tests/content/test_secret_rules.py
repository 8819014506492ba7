"""Tokens and credentials found by content (skillpack.content.secret_rules): recall on realistic
accidental leaks, precision on near-misses and on the corpus, linear time on adversarial input.

No secret-looking literal sits in this file: every token is built at test time by
concatenation from random characters, and checksummed formats (GitHub, npm) get their CRC32
checksum computed here, independently of the module under test.
"""

from __future__ import annotations

import base64
import os
import re._parser
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import CORPUS, REPO
from helpers.secrets import (
    ALNUM,
    B32,
    B64,
    GENERATED,
    HEX,
    LEAKS,
    PROSE,
    RNG,
    URLSAFE,
    aws_secret,
    checksummed,
    expand_stand_in,
    leak,
    pem,
    rand,
)

from skillpack.content import secret_rules
from skillpack.content.secret_rules import (
    OVERLAP,
    RULES,
    Finding,
    StreamScan,
    scan_bytes,
    scan_member,
)
from skillpack.formats import allowances


def test_recall_set_is_large_enough() -> None:
    assert len(LEAKS) >= 26
    fired = set().union(*(rules for *_, rules in LEAKS))
    assert fired == {r.id for r in RULES}  # every rule is exercised by a leak


@pytest.mark.parametrize(("path", "data", "rules"), [c[1:] for c in LEAKS],
                         ids=[c[0] for c in LEAKS])
def test_every_leak_is_found_by_the_right_rule(path: str, data: bytes, rules: set[str]) -> None:
    findings = scan_member(path, data, expand_stand_in)
    assert {f.rule for f in findings} == rules
    assert not any(f.allowed for f in findings)


def test_findings_never_hold_the_secret() -> None:
    windows = {g[i : i + 8] for g in GENERATED for i in range(0, len(g) - 7)}
    count = 0
    for _, path, data, _rules in LEAKS:
        for finding in scan_member(path, data, expand_stand_in):
            count += 1
            shown = finding.excerpt
            assert not any(shown[i : i + 8] in windows for i in range(len(shown) - 7)), shown
            assert finding.rule == "private-key" or "characters withheld]" in shown
    assert count >= len(LEAKS)


def test_positions_members_and_encodings() -> None:
    [a, b] = scan_member(*leak("aws-script"), None)
    assert (a.rule, a.line, a.column) == ("aws-access-key-id", 2, 26)
    assert (b.rule, b.line) == ("aws-secret-access-key", 3)
    assert a.excerpt == "AK" + "IA…[16 characters withheld]"
    assert b.excerpt.startswith("AWS_SECRET_ACCESS_KEY=…[40 characters")
    [tar] = scan_member(*leak("github-tar-gz"), expand_stand_in)
    assert (tar.member, tar.line, tar.column) == ("bundle/config.py", 1, 10)
    [nested] = scan_member(*leak("pem-zip-in-zip"), expand_stand_in)
    assert nested.member == "inner/keys.zip!id.txt"
    [utf16] = scan_bytes(leak("pem-utf16-be-bom")[1])
    assert (utf16.encoding, utf16.line, utf16.column) == ("utf-16-be", 2, 1)
    [k8s] = scan_bytes(leak("k8s-secret")[1])
    assert (k8s.line, k8s.column) == (7, 12)
    assert k8s.excerpt.startswith("LS0tLS1CRUdJTi…")
    # without the hook, a compressed asset's members are not read
    assert scan_member(*leak("pem-gz"), None) == []


def test_finding_round_trips_through_a_dict() -> None:
    [finding] = scan_member(*leak("pem-gz"), expand_stand_in)
    assert Finding.from_dict(finding.to_dict()) == finding
    assert finding.to_dict()["member"] == "key.pem"


def test_allowed_rules_are_marked_not_dropped() -> None:
    path, data = leak("aws-script")
    findings = scan_member(path, data, None, allow={"aws-access-key-id"})
    assert [(f.rule, f.allowed) for f in findings] == [
        ("aws-access-key-id", True), ("aws-secret-access-key", False)]


def test_a_finding_becomes_a_problem_a_person_can_act_on() -> None:
    [key_id, _] = scan_member(*leak("aws-script"), None)
    shown = str(secret_rules.problem("scripts/deploy.sh", key_id))
    assert shown.startswith("scripts/deploy.sh:2: error: [secret] holds a secret: AWS access "
                            "key id")
    assert "column 26: AK" + "IA…[16 characters withheld]" in shown
    assert 'skillpack-allow-secrets: "scripts/deploy.sh#aws-access-key-id"' in shown
    [inner] = scan_member(*leak("github-tar-gz"), expand_stand_in)
    member = secret_rules.problem("assets/bundle.tar.gz", inner)
    assert (member.file, member.line) == ("assets/bundle.tar.gz", None)
    assert "member 'bundle/config.py', line 1, column 10" in member.message
    [utf16] = scan_bytes(leak("pem-utf16-le")[1])
    assert ", in UTF-16-LE:" in secret_rules.problem("k.txt", utf16).message


def test_allowances_by_path_or_by_rule() -> None:
    entries = ["certs/ca.pem", "docs/aws.md#aws-access-key-id", "docs/aws.md#google-api-key",
               "notes#1.txt", "a.txt#no-such-rule", "b.md#private-key", "b.md"]
    assert allowances.parse(entries) == {
        "certs/ca.pem": None,
        "docs/aws.md": frozenset({"aws-access-key-id", "google-api-key"}),
        "notes#1.txt": None,
        "a.txt#no-such-rule": None,
        "b.md": None,
    }


# -- large files, read in chunks -------------------------------------------------------------



def streamed(data: bytes, size: int) -> list[Finding]:
    scan = StreamScan()
    for i in range(0, len(data), size):
        scan.feed(data[i : i + size])
    return scan.finish()


@pytest.mark.parametrize("size", [1000, 4097, 9000, 1 << 20])
def test_a_file_streamed_in_chunks_gives_the_same_findings(size: int) -> None:
    """Every leak, inside 20 KB of prose before and after (UTF-16 ones in UTF-16 prose), fed
    in chunks of `size` bytes: the same findings, lines and columns as the whole file."""
    checked = 0
    for case, _path, data, rules in LEAKS:
        if data[:2] in (b"\x1f\x8b", b"PK"):
            continue  # compressed assets: their members are scanned whole, after expand
        encoding = next((f.encoding for f in scan_bytes(data)), "utf-8")
        if encoding == "utf-8":
            big = PROSE + data + PROSE
        else:
            bom = data[:2] if data[:2] in (b"\xff\xfe", b"\xfe\xff") else b""
            big = bom + (PROSE.decode() + data[len(bom):].decode(encoding) + PROSE.decode()
                         ).encode(encoding)
        whole = scan_bytes(big)
        assert {f.rule for f in whole} == rules, case
        assert whole[0].line > 300, case
        assert streamed(big, size) == whole, case
        checked += 1
    assert checked >= 30


def test_a_token_across_every_chunk_seam_is_found_once() -> None:
    token = checksummed("gh" + "p_")
    data = PROSE[:9000] + b"token = " + token.encode() + b"\n" + PROSE[:9000]
    [expected] = scan_bytes(data)
    for size in range(9000 - 40, 9000 + 60, 7):
        assert streamed(data, size) == [expected]


def test_a_utf16_key_in_the_middle_of_a_large_file_is_found() -> None:
    """A UTF-16 PEM block after 20 KB of plain ASCII (not UTF-16 at its start)."""
    data = PROSE + pem("RSA ").encode("utf-16-le") + PROSE
    [found] = scan_bytes(data)
    assert (found.rule, found.encoding) == ("private-key", "utf-16-le")
    for size in (4096, 5000, 1 << 20):
        assert [(f.rule, f.encoding) for f in streamed(data, size)] == [
            ("private-key", "utf-16-le")]


def test_no_match_is_longer_than_the_overlap_allows() -> None:
    """The stream keeps OVERLAP bytes between windows; half of it waits for the next one and
    64 bytes are context: a match longer than the rest could be cut."""
    for r in RULES:
        longest = re._parser.parse(r.pattern.pattern).getwidth()[1]
        assert longest <= OVERLAP // 2 - 64, r.id


# -- precision: near-misses ------------------------------------------------------------------

def _near_misses() -> list[tuple[str, bytes]]:
    good = checksummed("gh" + "p_")
    wrong = good[:-1] + ("A" if good[-1] != "A" else "B")
    npm_good = checksummed("np" + "m_")
    header = "-----BEGIN " + "RSA PRIVATE" + " KEY-----"
    public = "-----BEGIN " + "PUBLIC KEY-----\n" + base64.b64encode(RNG.randbytes(200)).decode()
    cert = "-----BEGIN " + "CERTIFICATE-----\n" + base64.b64encode(RNG.randbytes(200)).decode()
    cases = [
        ("aws-doc-example-id", "aws_access_key_id = " + "AKIA" + "IOSFODNN7" + "EXAMPLE\n"),
        ("aws-doc-example-secret", "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/"
         + "bPxRfiCY" + "EXAMPLEKEY\n"),
        ("aws-doc-other-example", "AKIA" + "I44QH8DHB" + "EXAMPLE"),
        ("aws-prose", "Replace " + "AKIA" + "EXAMPLE with your key id."),
        ("aws-placeholder", "AKIA" + "X" * 16),
        ("aws-too-long", "AKIA" + rand(B32, 20)),
        ("aws-lowercase-in-word", "xAKIA" + rand(B32, 16)),
        ("aws-secret-no-context", "checksum: " + rand(B64, 40)),
        ("github-wrong-checksum", f"token: {wrong}\n"),
        ("github-too-short", f"token: {good[:-1]}\n"),
        ("github-too-long", f"token: {good}X\n"),
        ("github-in-word", f"xyz{good}\n"),
        ("github-placeholders", "export GITHUB_TOKEN=" + "ghp_" + "your_token_here ghp_xxx\n"),
        ("npm-wrong-checksum", npm_good[:-2] + "00"),
        ("fine-grained-placeholder", "github" + "_pat_" + "X" * 22 + "_" + "X" * 59),
        ("gitlab-placeholder", "glpat" + "-" + "x" * 20),
        ("npm-env-reference", "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n"),
        ("npm-uuid-elsewhere", "request_id = " + "-".join(rand(HEX, n) for n in (8, 4, 4, 4, 12))),
        ("gitlab-prose", "the gldt-prefix and glrt-runner tokens; kinglpat-" + rand(ALNUM, 20)),
        ("huggingface-names", "hf_hub_download(repo_id), hf_" + "x" * 34 + ", HF_TOKEN=hf_...\n"),
        ("gitlab-too-short", "glpat" + "-" + rand(URLSAFE, 12)),
        ("slack-placeholders", "xo" + "xb-your-bot-token xo" + "xp-... xo" + "xe-1-..."),
        ("slack-webhook-doc", "https://hooks" + ".slack.com/services/T00000000/B00000000/"
         + "X" * 24),
        ("stripe-test", "sk" + "_test_" + rand(ALNUM, 24)),
        ("stripe-placeholder", "sk" + "_live_" + "x" * 24),
        ("stripe-in-word", "dusk" + "_live_" + rand(ALNUM, 24)),
        ("sk-in-task-brief", "see task-brief and risk-assessment, desk-top, sk-... keys"),
        ("openai-placeholder", "OPENAI_API_KEY=" + "sk-" + "proj-...\n"),
        ("anthropic-placeholder", "ANTHROPIC_API_KEY=" + "sk-ant-" + "api03-xxxxx\n"),
        ("google-short", "AI" + "za" + "SyXXXXXXXXXXXXXXXXXX"),
        ("google-placeholder", "AI" + "za" + "X" * 35),
        ("pypi-short", "pypi-" + "AgEIcHlwaS5vcmc" + "..."),
        ("pem-doc-placeholder", header + "\n...\n-----END RSA PRIVATE KEY-----\n"),
        ("pem-prose", "The file must start with " + header + " and end with the END line."),
        ("pem-short-placeholder", header + "\nMIIEpAIBAAKCAQEA...\n"),
        ("public-key", public),
        ("certificate", cert),
        ("base64-public-key", base64.b64encode(public.encode()).decode()),
        ("base64-certificate", base64.b64encode(cert.encode()).decode()),
    ]
    return [(c, d.encode()) for c, d in cases] + [
        ("utf16-prose", "a PRIVATE KEY is secret; -----BEGIN ...".encode("utf-16")),
        ("utf16-le-public-key", public.encode("utf-16-le")),
    ]


@pytest.mark.parametrize(("case", "data"), _near_misses(), ids=[c for c, _ in _near_misses()])
def test_near_misses_are_not_found(case: str, data: bytes) -> None:
    assert scan_bytes(data) == []


def test_checksum_matches_a_published_example() -> None:
    # the example of https://gist.github.com/coolaj86/eb8cddfd3e4251258712dfed03e1f86d
    assert secret_rules.base62_checksum(b"zQWBuTSOoRi4A9spHcVY5ncnsDkxkJ") == b"0mLq17"


def test_every_rule_is_documented_data() -> None:
    doc = (REPO / "docs" / "SECRETS.md").read_text()
    for r in RULES:
        assert r.source.startswith("https://"), r.id
        assert r.description and r.validation
        assert "secret" in r.pattern.groupindex, r.id
        assert f"`{r.id}`" in doc and r.source in doc, r.id


# -- linear time -----------------------------------------------------------------------------

def test_ten_megabytes_of_near_matches_finish() -> None:
    """Runs of every rule's prefix followed by almost-matching bodies, cycled to 10 MB: the
    scan finishes (bounded quantifiers, anchored prefixes) and finds nothing."""
    parts = [
        "gh" + "p_" + "a" * 35 + " ", "github" + "_pat_" + "a" * 22 + "_" + "b" * 58 + " ",
        "-----BEGIN " + "A " * 4 + "PRIVATE KEY-----\n...\n", "-----BEGIN " + "A" * 60 + " ",
        "-----BEGIN " + "PRIVATE KEY-----\n" + "Proc-Type: " + "x: " * 60 + "\n...\n",
        "LS0tLS1CRUdJTi" + "A" * 3100 + "\n", "aws_secret_access_key = " + "a" * 39 + "\n",
        "AK" + "IA" * 9 + " ", "xo" + "xb-" + "1" * 14 + "-" * 3, "sk" + "_live_" * 3,
        "AI" + "za" * 9, "np" + "m_" + "b" * 35 + "\n", "pypi-" + "AgEIcHlwaS5vcmc" + "-" * 40,
        "https://hooks" + ".slack.com/services/T" + "A" * 12 + "/", "glpat" + "-" + "." * 30,
        "sk" + "-proj-" + "a" * 150 + "T3Blbk" + "x", "sk" + "-ant-api03-" + "a" * 130 + " ",
        "h" + "f_" + "a" * 33 + " ", "GOC" + "SPX-" + "a" * 27 + " ", "gl" + "dt-" * 9,
        "_authToken=" + "0" * 8 + "-" + "0" * 4 + "-x", "sk" + "-" + "a" * 20 + "T3BlbkFJ" + "1",
    ]
    unit = "".join(parts).encode()
    size = 10 * 1024 * 1024
    data = unit * (size // len(unit) + 1)
    assert len(data) >= size
    assert scan_bytes(data[:size]) == []


# -- precision: the corpus -------------------------------------------------------------------

def _corpus() -> Path:
    """The corpus beside the repository, or $SKILLPACK_CORPUS (a worktree lives elsewhere)."""
    if CORPUS.is_dir():
        return CORPUS
    return Path(os.environ.get("SKILLPACK_CORPUS", str(CORPUS)))


@pytest.mark.corpus
def test_no_finding_on_any_corpus_file() -> None:
    root = _corpus()
    files = [p for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()]
    assert len(files) > 1000
    found = {
        f"{p.relative_to(root)}:{f.line}:{f.rule}"
        for p in files
        for f in scan_member(p.relative_to(root).as_posix(), p.read_bytes(), expand_stand_in)
    }
    assert found == set()


def test_the_runtime_knows_every_rule_id_an_allowance_may_name() -> None:
    """spec.allowances.RULE_IDS (what the runtime reads allowances by) is the rule table's."""
    assert {rule.id for rule in secret_rules.RULES} == allowances.RULE_IDS


def test_every_leak_holds_a_needle_of_its_rule() -> None:
    """The prefilter skips a text holding no rule's needle: each leak of the recall set holds
    one of the needles of the rule that finds it (in lower case for a folding rule)."""
    def texts(path: str, data: bytes) -> list[bytes]:  # the file, and inside an asset
        inner = [t for p, d in expand_stand_in(path, data) for t in texts(p, d)]
        utf16 = [data[skip:].decode(codec, "ignore").encode()
                 for codec in ("utf-16-le", "utf-16-be") for skip in (0, 1)]
        return [data, *utf16, *inner]

    for _, path, data, rules in LEAKS:
        for rule_id in rules:
            rule = secret_rules.rule(rule_id)
            found = [t.lower() if rule.fold else t for t in texts(path, data)]
            assert rule.needles and any(n in t for t in found for n in rule.needles), rule_id


def test_a_text_without_needles_costs_one_literal_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search for needles is one pass of the automaton over each piece of the text
    (pieces overlap by less than the longest needle), and the RE2 set runs only on a piece
    where it found something."""
    real, literals = secret_rules._NEEDLES, secret_rules._LITERALS
    seen: list[int] = []
    matched: list[int] = []

    def counting(search: Any) -> Any:
        def counted(text: bytes) -> object:
            seen.append(len(text))
            return search(text)
        return counted

    class CountingSet:
        def Match(self, text: bytes) -> list[int] | None:
            matched.append(len(text))
            return real.set.Match(text)

    monkeypatch.setattr(secret_rules, "_LITERALS", tuple(map(counting, literals)))
    monkeypatch.setattr(secret_rules, "_NEEDLES", secret_rules._Needles(CountingSet(), real.index))
    plain = b"# notes\n" + b"nothing to see here, just words and numbers 12345\n" * 20000
    assert secret_rules.scan_text(plain) == ([], False)
    pieces = -(-len(plain) // secret_rules.PIECE)
    assert len(seen) == pieces * len(literals)
    assert sum(seen) <= (len(plain) + pieces * secret_rules._LONGEST) * len(literals)
    assert matched == []
    key = b"-----BEGIN RSA " + b"PRIVATE KEY-----\n"
    assert secret_rules.scan_text(plain + key)[1] is True
    assert matched and max(matched) <= secret_rules.PIECE + secret_rules._LONGEST


def test_the_marker_of_scan_text_is_the_needle() -> None:
    """`scan_text`'s PEM marker is True exactly when the bytes hold ``PRIVATE KEY``."""
    samples = [data for _, _, data, _ in LEAKS] + [b"", b"PRIVATE KEY", b"private key"]
    expected = [b"PRIVATE KEY" in data for data in samples]
    assert [secret_rules.scan_text(data)[1] for data in samples] == expected


def test_every_gated_rule_match_is_a_gate_match() -> None:
    """A rule's gate is the rule without its look-arounds: wherever the rule matches, the
    gate matches at the same place."""
    gated = [r for r in RULES if r.gate is not None]
    assert gated, "no rule has a gate"
    for r in gated:
        gate = secret_rules._GATES[r.id]
        for _, _, data, _ in LEAKS:
            for match in r.pattern.finditer(data):
                assert gate.search(data[match.start():]) is not None, r.id


def test_an_aws_secret_is_found_under_each_name() -> None:
    """A real assignment is found under each name the rule knows; one without a value is
    not."""
    secret = aws_secret()
    for name in ("aws_secret_access_key", "AWS_SECRET_KEY", "SecretAccessKey"):
        data = PROSE + f"{name} = \"{secret}\"\n".encode() + PROSE
        assert [f.rule for f in scan_bytes(data)] == ["aws-secret-access-key"], name
    assert scan_bytes(PROSE + b"aws_secret_access_key = ${AWS_SECRET}\n") == []


def test_every_leak_is_found_in_utf16() -> None:
    """Every text leak of the recall set, written in UTF-16 (both byte orders, with and
    without a byte order mark) after some prose, is found, in UTF-16."""
    checked = 0
    for case, _path, data, _rules in LEAKS:
        if b"\x00" in data:
            continue  # already UTF-16
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue  # a compressed asset
        for encoding, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")):
            for head in (b"", bom):
                found = scan_bytes(head + (PROSE.decode() + text).encode(encoding))
                assert found and all(f.encoding == encoding for f in found), case
                checked += 1
    assert checked >= 100
