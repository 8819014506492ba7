"""Tokens and credentials found by content (skillpack.content.secret_rules): recall on realistic
accidental leaks, precision on near-misses and on the corpus, linear time on adversarial input.

No secret-looking literal sits in this file: every token is built at test time by
concatenation from random characters, and checksummed formats (GitHub, npm) get their CRC32
checksum computed here, independently of the module under test.
"""

from __future__ import annotations

import base64
import gzip
import io
import os
import random
import re._parser
import tarfile
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS

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

RNG = random.Random(20261201)
ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"


GENERATED: list[str] = []  # every random part made, to check no excerpt shows one


def rand(alphabet: str, n: int) -> str:
    made = "".join(RNG.choice(alphabet) for _ in range(n))
    GENERATED.append(made)
    return made


def base62(value: int, width: int = 6) -> str:
    digits = ""
    while value:
        value, rest = divmod(value, 62)
        digits = ALNUM[rest] + digits
    return digits.rjust(width, "0")


def checksummed(prefix: str) -> str:
    """A GitHub/npm-style token: prefix, 30 random base-62 characters, CRC32 in base 62."""
    body = rand(ALNUM, 30)
    return prefix + body + base62(zlib.crc32(body.encode()))


def aws_key_id(prefix: str = "AK" + "IA") -> str:
    return prefix + rand(B32, 16)


def aws_secret() -> str:
    return rand(B64, 40)


def pem(kind: str = "RSA ", lines: int = 6) -> str:
    body = base64.b64encode(RNG.randbytes(48 * lines)).decode()
    GENERATED.append(body)
    wrapped = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    begin, end = "-----BEGIN ", "-----END "
    return f"{begin}{kind}PRIVATE" + f" KEY-----\n{wrapped}\n{end}{kind}PRIVATE KEY-----\n"


def pypi_token(host: bytes = b"pypi.org") -> str:
    macaroon = b"\x02\x01" + bytes([len(host)]) + host + b"\x02\x06" + RNG.randbytes(86)
    token = base64.urlsafe_b64encode(macaroon).decode().rstrip("=")
    GENERATED.append(token[30:])
    return "pypi-" + token


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def tar_gz(members: dict[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def deflated_zip(members: dict[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return raw.getvalue()


def expand_stand_in(path: str, data: bytes) -> Iterable[tuple[str, bytes]]:
    """TEST STAND-IN for the bounded decompressor another helper is writing: it has none of
    the bomb caps (sizes, member counts, ratios) the real hook must enforce."""
    try:
        yield from _expand(path, data)
    except (tarfile.TarError, gzip.BadGzipFile, zipfile.BadZipFile, EOFError, zlib.error):
        return  # not an archive after all (the corpus's .tar.gz is a text pointer)


def _expand(path: str, data: bytes) -> Iterable[tuple[str, bytes]]:
    name = path.rsplit("!", 1)[-1].lower()
    if name.endswith((".tar.gz", ".tgz")):
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            for info in archive.getmembers():
                handle = archive.extractfile(info) if info.isfile() else None
                if handle is not None:
                    yield info.name, handle.read()
    elif name.endswith(".gz"):
        yield name[:-3].rsplit("/", 1)[-1], gzip.decompress(data)
    elif name.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                if not info.is_dir():
                    yield info.filename, archive.read(info)


# -- recall: realistic accidental leaks ------------------------------------------------------

def _leaks() -> list[tuple[str, str, bytes, set[str]]]:
    """(case id, path, file bytes, the rule ids that must fire — and no others)."""
    key_id, secret = aws_key_id(), aws_secret()
    header = "-----BEGIN " + "PRIVATE" + " KEY-----"
    service_account = (
        '{\n  "type": "service_account",\n  "project_id": "demo",\n  "private_key": "'
        + pem("").replace("\n", "\\n") + '",\n  "client_email": "bot@demo.iam.example"\n}\n'
    )
    k8s_value = base64.b64encode(pem("RSA ").encode()).decode()
    wrapped_b64 = base64.encodebytes(pem("EC ").encode()).decode()
    slack_team, slack_bot = "T" + rand(B32[:26] + "0123456789", 10), "B" + rand(B32, 10)
    cases: list[tuple[str, str, str | bytes, set[str]]] = [
        ("aws-script", "scripts/deploy.sh",
         f"#!/bin/sh\nexport AWS_ACCESS_KEY_ID={key_id}\nexport AWS_SECRET_ACCESS_KEY={secret}\n"
         "aws s3 sync dist/ s3://bucket/\n",
         {"aws-access-key-id", "aws-secret-access-key"}),
        ("aws-temporary", "config/settings.yaml",
         f"aws:\n  access_key_id: {aws_key_id('AS' + 'IA')}\n  region: eu-west-1\n",
         {"aws-access-key-id"}),
        ("aws-cli-json", "notes/create-access-key.json",
         '{"AccessKey": {"UserName": "ci", "AccessKeyId": "' + aws_key_id() + '", '
         '"Status": "Active", "SecretAccessKey": "' + aws_secret() + '"}}\n',
         {"aws-access-key-id", "aws-secret-access-key"}),
        ("aws-python", "scripts/upload.py",
         "import boto3\ns3 = boto3.client('s3', aws_access_key_id='" + aws_key_id() + "',\n"
         "    aws_secret_access_key='" + aws_secret() + "')\n",
         {"aws-access-key-id", "aws-secret-access-key"}),
        ("github-classic", "scripts/release.py",
         f'GITHUB_TOKEN = "{checksummed("gh" + "p_")}"\n', {"github-token"}),
        ("github-oauth", "data/session.json",
         '{"access_token": "' + checksummed("gh" + "o_") + '", "scope": "repo"}\n',
         {"github-token"}),
        ("github-user-to-server", "scripts/app.ts",
         f"const token = '{checksummed('gh' + 'u_')}';\n", {"github-token"}),
        ("github-server-to-server", ".github/workflows/ci.yml",
         f"env:\n  GH_TOKEN: {checksummed('gh' + 's_')}\n", {"github-token"}),
        ("github-refresh", "config/oauth.toml",
         f'refresh_token = "{checksummed("gh" + "r_")}"\n', {"github-token"}),
        ("github-fine-grained", "SKILL-notes.md",
         "Clone with:\n\n    git clone https://oauth2:" + "github" + "_pat_" + rand(ALNUM, 22)
         + "_" + rand(ALNUM, 59) + "@github.com/acme/private.git\n",
         {"github-fine-grained-token"}),
        ("gitlab", "scripts/mirror.sh",
         "curl --header 'PRIVATE-TOKEN: " + "glpat" + "-" + rand(URLSAFE, 20)
         + "' https://gitlab.example.com/api/v4/projects\n", {"gitlab-token"}),
        ("slack-bot", "scripts/notify.py",
         'client = WebClient(token="' + "xo" + "xb-" + rand("0123456789", 12) + "-"
         + rand("0123456789", 13) + "-" + rand(ALNUM, 24) + '")\n', {"slack-bot-token"}),
        ("slack-user", "config/slack.json",
         '{"user_token": "' + "xo" + "xp-" + "-".join(rand("0123456789", 12) for _ in range(3))
         + "-" + rand(HEX, 32) + '"}\n', {"slack-user-token"}),
        ("slack-app", "scripts/socket_mode.js",
         "const appToken = '" + "xa" + "pp-1-A" + rand(B32, 10) + "-" + rand("0123456789", 13)
         + "-" + rand(HEX, 64) + "';\n", {"slack-app-token"}),
        ("slack-webhook", "scripts/alert.sh",
         "curl -X POST -d '{\"text\":\"done\"}' https://hooks" + ".slack.com/services/"
         + slack_team + "/" + slack_bot + "/" + rand(ALNUM, 24) + "\n", {"slack-webhook"}),
        ("stripe-secret", "scripts/charge.js",
         "const stripe = require('stripe')('" + "sk" + "_live_" + rand(ALNUM, 99) + "');\n",
         {"stripe-live-key"}),
        ("stripe-restricted", "config/payments.env.txt",
         "STRIPE_KEY=" + "rk" + "_live_" + rand(ALNUM, 24) + "\n", {"stripe-live-key"}),
        ("google-api-key", "assets/map.html",
         '<script src="https://maps.googleapis.com/maps/api/js?key=' + "AI" + "za"
         + rand(URLSAFE, 35) + '&callback=init"></script>\n', {"google-api-key"}),
        ("npm", "Dockerfile",
         'RUN echo "//registry.npmjs.org/:_authToken=' + checksummed("np" + "m_")
         + '" > ~/.npmrc && npm ci\n', {"npm-token"}),
        ("google-oauth-client", "config/oauth_client.json",
         '{"installed": {"client_id": "1234.apps.googleusercontent.com", "client_secret": "'
         + "GOC" + "SPX-" + rand(URLSAFE, 28) + '"}}\n', {"google-oauth-client-secret"}),
        ("huggingface", "scripts/download_model.py",
         "from huggingface_hub import login\nlogin(token='" + "h" + "f_"
         + rand(ALNUM[10:], 34) + "')\n", {"huggingface-token"}),
        ("npm-legacy", "ci/npmrc.txt",
         "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken="
         + "-".join(rand(HEX, n) for n in (8, 4, 4, 4, 12)) + "\n", {"npm-legacy-token"}),
        ("gitlab-deploy", "scripts/pull-image.sh",
         "docker login -u deploy -p " + "gl" + "dt-" + rand(URLSAFE, 20)
         + " registry.gitlab.com\n", {"gitlab-token"}),
        ("pypi", ".github/workflows/publish.yml",
         "      - run: twine upload -u __token__ -p " + pypi_token() + " dist/*\n",
         {"pypi-token"}),
        ("pypi-test", "scripts/publish_test.sh",
         "export TWINE_PASSWORD=" + pypi_token(b"test.pypi.org") + "\n", {"pypi-test-token"}),
        ("openai", "scripts/summarise.py",
         'client = OpenAI(api_key="' + "sk" + "-proj-" + rand(URLSAFE, 74) + "T3Blbk" + "FJ"
         + rand(URLSAFE, 74) + '")\n', {"openai-api-key"}),
        ("anthropic", "config/agent.yaml",
         "anthropic:\n  api_key: " + "sk" + "-ant-api03-" + rand(URLSAFE, 93) + "AA\n",
         {"anthropic-api-key"}),
        ("pem-rsa", "notes/server-key.txt", pem("RSA "), {"private-key"}),
        ("pem-openssh-in-md", "references/setup.md",
         "Put this in the deploy key:\n\n```\n" + pem("OPENSSH ") + "```\n", {"private-key"}),
        ("pem-encrypted-headers", "notes/legacy.txt",
         pem("RSA ").replace("KEY-----\n", "KEY-----\nProc-Type: 4,ENCRYPTED\n"
                             "DEK-Info: AES-128-CBC,0123456789ABCDEF\n\n", 1),
         {"private-key"}),
        ("pem-pgp", "notes/signing.asc.txt",
         "-----BEGIN PGP " + "PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n"
         + base64.b64encode(RNG.randbytes(120)).decode() + "\n", {"private-key"}),
        ("pem-in-json", "config/service-account.json", service_account, {"private-key"}),
        ("pem-in-python-string", "tests/conftest.py",
         "KEY = (\n" + "".join(f'        "{line}\\n"\n' for line in pem("EC ").splitlines())
         + ")\n", {"private-key"}),
        ("pem-utf16-le-bom", "notes/key-utf16.txt",
         b"\xff\xfe" + pem("RSA ").encode("utf-16-le"), {"private-key"}),
        ("pem-utf16-le", "notes/key-utf16le.txt", pem("EC ").encode("utf-16-le"),
         {"private-key"}),
        ("pem-utf16-be", "notes/key-utf16be.txt", pem("").encode("utf-16-be"),
         {"private-key"}),
        ("pem-utf16-be-bom", "notes/key-utf16be-bom.txt",
         b"\xfe\xff" + ("prefix text\n" + pem("")).encode("utf-16-be"), {"private-key"}),
        ("k8s-secret", "deploy/tls-secret.yaml",
         "apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls\ntype: kubernetes.io/tls\n"
         f"data:\n  tls.key: {k8s_value}\n", {"private-key-base64"}),
        ("base64-wrapped", "deploy/values.yaml",
         "sshKey: |\n  " + wrapped_b64.replace("\n", "\n  ") + "\n", {"private-key-base64"}),
        ("pem-gz", "assets/key.pem.gz", gz(pem("RSA ").encode()), {"private-key"}),
        ("github-tar-gz", "assets/bundle.tar.gz",
         tar_gz({"bundle/README.md": b"hello\n",
                 "bundle/config.py": f"TOKEN = '{checksummed('gh' + 'p_')}'\n".encode()}),
         {"github-token"}),
        ("aws-zip", "assets/lambda.zip",
         deflated_zip({"handler.py": f"KEY = '{aws_key_id()}'\n".encode()}),
         {"aws-access-key-id"}),
        ("pem-zip-in-zip", "assets/outer.zip",
         deflated_zip({"inner/keys.zip": deflated_zip({"id.txt": pem("").encode()})}),
         {"private-key"}),
        ("header-only-context", "scripts/ssh.sh",
         "cat > ~/.ssh/id_rsa <<'EOF'\n" + header.replace("PRIVATE", "OPENSSH PRIVATE") + "\n"
         + base64.b64encode(RNG.randbytes(200)).decode() + "\nEOF\n", {"private-key"}),
    ]
    return [(c, p, d if isinstance(d, bytes) else d.encode(), r) for c, p, d, r in cases]


LEAKS = _leaks()


def leak(case: str) -> tuple[str, bytes]:
    """The path and bytes of the leak `case`."""
    return next((p, d) for c, p, d, _ in LEAKS if c == case)


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

PROSE = "".join(f"Line {i} of the reference notes: nothing secret here, just words.\n"
                for i in range(300)).encode()  # about 20 KB


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
    doc = (Path(__file__).parent.parent / "docs" / "SECRETS.md").read_text()
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
