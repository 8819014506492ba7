"""Tokens and credentials found by their content: a table of rules, and the scan that runs it.

Each rule is data (`Rule`): an id, what it matches, a compiled bytes pattern anchored on the
format's fixed prefix with bounded quantifiers only (so a search is linear in the input: at
each place the prefix occurs the pattern can look at most a bounded number of bytes further),
the extra validation the format allows (a CRC32 checksum, a decodable payload, an entropy
floor that turns away ``xxxx`` placeholders), and the public source of the format.

`scan_bytes(data)` runs every rule over the bytes of one file, as UTF-8 (or any ASCII superset)
and, when the bytes are UTF-16 (a byte order mark, the NUL pattern of UTF-16 text, or a
UTF-16 ``PRIVATE KEY``), over their transcoding too. `scan_member(path, data, expand)` does the
same and then scans the inner members `expand` yields for a compressed asset (.gz, .tar.gz,
.zip), recursively to `MAX_DEPTH`. A `Finding` never holds the secret: its excerpt shows the
fixed prefix of the format and the number of characters withheld.

AWS's documented example keys (``AKIAIOSFODNN7EXAMPLE`` and the secret
``wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY``, and any key holding ``EXAMPLE``) are not
secrets: they are printed in AWS's own documentation and are not valid credentials.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import hashlib
import itertools
import math
import re
import zlib
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

import ahocorasick_rs
import re2

from skillpack.errors import Problem

__all__ = [
    "MAX_DEPTH",
    "OVERLAP",
    "RULES",
    "Expand",
    "Finding",
    "Rule",
    "StreamScan",
    "base62_checksum",
    "problem",
    "rule",
    "scan_bytes",
    "scan_file",
    "scan_member",
    "scan_text",
]

#: The decompressor hook: (path of the asset, its bytes) -> (inner member path, inner bytes)
#: for each member of a .gz / .tar.gz / .zip asset; nothing for any other file. The bounds on
#: sizes, counts and ratios are the hook's (the same caps as unpack).
Expand = Callable[[str, bytes], Iterable[tuple[str, bytes]]]

#: How deep `scan_member` follows archives inside archives (a .tar.gz inside a .zip is 2).
MAX_DEPTH = 3

Validator = Callable[[bytes, re.Match[bytes]], bool]


@dataclass(frozen=True, slots=True)
class Rule:
    """One content rule. `regex` (compiled as `pattern`) holds a named group ``secret``
    (what the excerpt withholds); `shown` is how many leading bytes of that group the
    excerpt keeps (the format's fixed, public prefix); `validate`, when set, must accept the
    match for it to count."""

    id: str
    description: str
    regex: bytes
    validation: str
    source: str
    shown: int = 0
    validate: Validator | None = None
    #: Every match holds one of these bytes (in the lower-cased text when `fold`): a text
    #: holding none of them is not searched. `_NEEDLES` looks for all of them in one pass.
    needles: tuple[bytes, ...] = ()
    fold: bool = False
    #: An RE2 pattern every match of `pattern` also matches (`pattern` without its
    #: look-arounds): a text it finds nothing in is not searched with `pattern` (`re`), for a
    #: rule `re` cannot search at the speed of a literal.
    gate: bytes | None = None

    @property
    def pattern(self) -> re.Pattern[bytes]:
        """`regex`, compiled (`re` caches it)."""
        return re.compile(self.regex)


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret found in a file: the rule that found it, where (1-based line and byte column
    of the text scanned; `member` is the path inside a compressed asset, nested members joined
    by ``!``, empty for the file itself; `encoding` the text encoding it was found in), and a
    redacted excerpt. `allowed` is true when the caller's allowance covers this rule."""

    rule: str
    line: int
    column: int
    excerpt: str
    member: str = ""
    encoding: str = "utf-8"
    allowed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule, "line": self.line, "column": self.column,
            "excerpt": self.excerpt, "member": self.member, "encoding": self.encoding,
            "allowed": self.allowed,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        return cls(
            rule=str(data["rule"]), line=int(data["line"]), column=int(data["column"]),
            excerpt=str(data["excerpt"]), member=str(data.get("member", "")),
            encoding=str(data.get("encoding", "utf-8")), allowed=bool(data.get("allowed")),
        )


# -- validations -----------------------------------------------------------------------------

_BASE62 = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def base62_checksum(entropy: bytes) -> bytes:
    """The 6-character checksum GitHub and npm tokens end with: CRC32 of the random part,
    written in base 62 (``0-9A-Za-z``), zero-padded."""
    value = zlib.crc32(entropy)
    digits = bytearray()
    while value:
        value, rest = divmod(value, 62)
        digits.append(_BASE62[rest])
    return bytes(reversed(digits)).rjust(6, b"0")


def _entropy(text: bytes) -> float:
    """Shannon entropy in bits per byte."""
    if not text:
        return 0.0
    counts: dict[int, int] = {}
    for byte in text:
        counts[byte] = counts.get(byte, 0) + 1
    total = len(text)
    return -sum(c / total * math.log2(c / total) for c in counts.values())


def _secret(match: re.Match[bytes]) -> bytes:
    return match.group("secret")


def _crc32_token(prefix_len: int) -> Validator:
    def check(data: bytes, match: re.Match[bytes]) -> bool:
        token = _secret(match)
        return base62_checksum(token[prefix_len:-6]) == token[-6:]
    return check


def _random(prefix_len: int, floor: float) -> Validator:
    """The part after the fixed prefix looks random (no ``xxxx`` or ``EXAMPLE`` placeholder)."""
    def check(data: bytes, match: re.Match[bytes]) -> bool:
        body = _secret(match)[prefix_len:]
        return b"EXAMPLE" not in body.upper() and _entropy(body) >= floor
    return check


_PEM_HEADER = rb"-----BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?-----"
# Key material must follow the header: separators (spaces, quotes, real line breaks or the
# `\n` escapes of JSON and source strings), up to four `Name: value` armour headers
# (Proc-Type, DEK-Info, Version, Comment), then 32 base-64 characters in a row. A header
# followed by `...` in documentation passes.
# A header's value ends at its line break (it holds none), so there is one way to match.
_BREAK = rb"(?:\r?\n|(?:\\r)?\\n)"
_SEP = rb"(?:[ \t\"',+]|" + _BREAK[3:-1] + rb")"
_PEM_BLOCK = (
    rb"(?P<secret>" + _PEM_HEADER + rb")" + _SEP + rb"{1,32}"
    rb"(?:[A-Za-z-]{1,30}: [^\r\n\\]{0,200}" + _BREAK + _SEP + rb"{0,32}){0,4}"
    rb"[A-Za-z0-9+/]{32}"
)


_RUN_ON = re.compile(rb"[A-Za-z0-9+/=]{0,4096}(?:\.\.|\xe2\x80\xa6)")


def _not_elided(data: bytes, match: re.Match[bytes]) -> bool:
    """The key material does not end in ``..`` or ``…`` on its first line: an example cut
    short in documentation (``MIIEpAIBAAKCAQEA75BCmSENWK6wRhvJ4mUqLHy...``) is no key."""
    return _RUN_ON.match(data, match.end()) is None


#: ``-----BEGIN `` in base64 at each of the 3 byte offsets it may start at in the encoded
#: text (a PEM key inside a JSON document, base64-encoded whole: a GCP service-account key
#: in a Kubernetes Secret), each the characters that do not depend on the bytes around it,
#: and how many characters of its 4-character group come before it (2 for 1 byte, 3 for 2).
_BASE64_BEGIN = ((b"LS0tLS1CRUdJTi", 0), (b"0tLS0tQkVHSU4g", 2), (b"tLS0tLUJFR0lOI", 3))


def _base64_pem(data: bytes, match: re.Match[bytes]) -> bool:
    secret = _secret(match)
    back = next(b for needle, b in _BASE64_BEGIN if secret.startswith(needle))
    start = match.start("secret") - back
    if start < 0 or not re.fullmatch(rb"[A-Za-z0-9+/]*", data[start : match.start("secret")]):
        return False
    run = re.sub(rb"\\n|\s", b"", data[start : match.end("secret")]).partition(b"=")[0]
    run = run[: len(run) // 4 * 4]  # `=` ends base64
    try:
        decoded = base64.b64decode(run, validate=True)
    except (binascii.Error, ValueError):
        return False
    return re.compile(_PEM_BLOCK).match(decoded, back - 1 if back else 0) is not None


def _pypi_macaroon(host: bytes) -> Validator:
    def check(data: bytes, match: re.Match[bytes]) -> bool:
        body = _secret(match)[len(b"pypi-") :]
        body = body[: len(body) // 4 * 4]
        try:
            decoded = base64.urlsafe_b64decode(body)
        except (binascii.Error, ValueError):
            return False
        location = b"\x02\x01" + bytes([len(host)]) + host  # macaroon v2: location field
        return decoded.startswith(location) and len(decoded) >= 60
    return check


def _last_part_random(data: bytes, match: re.Match[bytes]) -> bool:
    last = _secret(match).rpartition(b"/")[2]
    return _entropy(last) >= 3.0


def _aws_secret(data: bytes, match: re.Match[bytes]) -> bool:
    value = _secret(match)  # AWS's documented example ends in EXAMPLEKEY
    return b"EXAMPLE" not in value.upper() and _entropy(value) >= 4.0


# -- the table -------------------------------------------------------------------------------

_ALNUM = rb"A-Za-z0-9"


def _token(prefix: bytes, body: bytes, tail: bytes = _ALNUM) -> bytes:
    """A token: `prefix` not preceded by a word character, then `body`, then no further
    character of `tail`. The lookbehind sits after the literal prefix (checked on the bytes
    before it), so the regular-expression engine still searches for the literal."""
    escaped = re.escape(prefix)
    behind = rb"(?<![A-Za-z0-9_]" + escaped + rb")"
    return rb"(?P<secret>" + escaped + behind + body + rb")(?![" + tail + rb"])"


#: The AWS secret access key rule without its look-ahead (its `Rule.gate`).
_AWS_SECRET_GATE = (
    rb"(?i:aws_?secret_?(?:access_?)?key|secret_?access_?key)"
    rb"[\"']?[ \t]{0,8}(?::|=|=>|:=)[ \t]{0,8}[\"']?"
    rb"(?P<secret>[A-Za-z0-9/+]{40})"
)


# -- rules of issue 28 (round three): keys and tokens carried by ordinary files ------------

_BECH32 = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_BECH32_GEN = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)


def _bech32(data: bytes, match: re.Match[bytes]) -> bool:
    """The Bech32 checksum (BIP 173) of an age identity holds: its human-readable part and
    data, lower-cased, give a polymod of 1."""
    hrp, _, body = _secret(match).lower().rpartition(b"1")
    chk = 1
    for value in [c >> 5 for c in hrp] + [0] + [c & 31 for c in hrp] + [
            _BECH32.index(c) for c in body]:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ value
        for i, gen in enumerate(_BECH32_GEN):
            if (top >> i) & 1:
                chk ^= gen
    return chk == 1


def _wireguard(data: bytes, match: re.Match[bytes]) -> bool:
    """A 32-byte key with random bits, in the ``[Interface]`` section of a WireGuard config
    (the section header in the 4 KiB before it)."""
    key = _secret(match)
    return (len(base64.b64decode(key)) == 32 and _entropy(key) >= 4.0
            and b"[interface]" in data[max(0, match.start() - 4096) : match.start()].lower())


def _jwk_private(data: bytes, match: re.Match[bytes]) -> bool:
    """The ``"d"`` member sits in a JSON object (between the nearest ``{`` before it and ``}``
    after it, 8 KiB each way) that also has ``"kty"``: a JSON Web Key's private part."""
    start = data.rfind(b"{", max(0, match.start() - 8192), match.start())
    end = data.find(b"}", match.end(), match.end() + 8192)
    if start < 0 or end < 0:
        return False
    obj = data[start:end]
    return b'"kty"' in obj and b"{" not in obj[1:] and _entropy(_secret(match)) >= 4.0


def _putty(data: bytes, match: re.Match[bytes]) -> bool:
    line = match.group("private")
    return _entropy(line) >= 3.5


#: sha256 of the storage account key Microsoft publishes for its local emulators (Azurite,
#: the Storage Emulator): not a secret, printed in Microsoft's documentation.
_AZURITE_KEY = "0011cc25eb4320717494d2703e8cba85743e71b500283c21c8b88147992f9059"


def _azure_key(data: bytes, match: re.Match[bytes]) -> bool:
    key = _secret(match)
    if hashlib.sha256(key).hexdigest() == _AZURITE_KEY:
        return False
    return len(base64.b64decode(key)) == 64 and _entropy(key) >= 4.5


def _telegram(data: bytes, match: re.Match[bytes]) -> bool:
    return _entropy(_secret(match).partition(b":")[2]) >= 3.5


#: Words a placeholder password holds (lower-cased): ``password``, ``<pass>``, ``changeme``.
_PLACEHOLDER_WORDS = (b"pass", b"pwd", b"secret", b"example", b"changeme", b"your", b"xxx",
                      b"dummy", b"sample", b"placeholder", b"redacted", b"test", b"admin",
                      b"root", b"user", b"postgres", b"mysql", b"mongo", b"redis", b"guest",
                      b"default", b"local", b"demo", b"foo", b"bar")


def _url_password(data: bytes, match: re.Match[bytes]) -> bool:
    """The password is not a placeholder: not a template (``<...>``, ``${...}``, ``{...}``,
    ``%(...)s``, ``[...]``, ``*``), no placeholder word, not the user name, at least 8
    characters with entropy >= 3.0 bits."""
    password, user = _secret(match), match.group("user")
    lowered = password.lower()
    return (password[:1] not in b"<${%[*(" and password != user and len(password) >= 8
            and not any(word in lowered for word in _PLACEHOLDER_WORDS)
            and _entropy(password) >= 3.0)


#: The database-url-password rule. Its one needle, ``://``, stands for its schemes (so the
#: literal search stays one automaton); its `Rule.gate`, the part from ``://`` on (a literal
#: first: RE2 finds it fast), turns away a text whose URLs hold no ``user:password@``.
_DB_URL = (rb"(?:postgres(?:ql)?|mysql|mariadb|mongodb|rediss?|amqps?)"
           rb"(?:\+[A-Za-z0-9_]{1,20})?://(?P<user>[^:@/\s\"'<>]{0,64})"
           rb":(?P<secret>[^@/\s\"'<>]{1,128})@[A-Za-z0-9.\[\]_-]")
_DB_URL_GATE = rb"://[^:@/\s\"'<>]{0,64}:[^@/\s\"'<>]{1,128}@[A-Za-z0-9.\[\]_-]"
#: The telegram-bot-token rule without its look-arounds (its `Rule.gate`).
_TELEGRAM_GATE = rb"(?P<secret>[0-9]{8,10}:AA[A-Za-z0-9_-]{33})"


def _round_three_rules() -> list[Rule]:
    """The rules of issue 28: private keys of other formats (age, WireGuard, JWK, PuTTY) and
    common service tokens (SendGrid, Azure storage, Telegram, database URLs)."""
    return [
        Rule(
            "age-secret-key",
            "age secret key (AGE-SECRET-KEY-1..., an X25519 identity)",
            _token(b"AGE-SECRET-KEY-1", rb"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
            "58 Bech32 characters whose Bech32 checksum holds",
            "https://github.com/C2SP/C2SP/blob/main/age.md#the-x25519-recipient-type",
            shown=16, validate=_bech32,
            needles=(b"AGE-SECRET-KEY-1",),
        ),
        Rule(
            "wireguard-private-key",
            "WireGuard private key (PrivateKey = ... in the [Interface] section, as wg writes it)",
            (rb"PrivateKey[ \t]{0,8}=[ \t]{0,8}"
             rb"(?P<secret>[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=)(?![A-Za-z0-9+/=])"),
            "44 base-64 characters decoding to 32 bytes, entropy >= 4.0 bits, after an "
            "[Interface] header",
            "https://git.zx2c4.com/wireguard-tools/about/src/man/wg.8",
            validate=_wireguard,
            needles=(b"PrivateKey",),
        ),
        Rule(
            "jwk-private-key",
            "JSON Web Key with its private part (\"d\" in an object with \"kty\")",
            rb"\"d\"[ \t]{0,8}:[ \t]{0,8}\"(?P<secret>[A-Za-z0-9_-]{32,1400})\"",
            "32 or more base64url characters, entropy >= 4.0 bits, in a JSON object that "
            "also holds \"kty\"",
            "https://www.rfc-editor.org/rfc/rfc7518#section-6.2.2.1",
            validate=_jwk_private,
            needles=(b"\"d\"",),
        ),
        Rule(
            "putty-private-key",
            "PuTTY private key (PuTTY-User-Key-File-1/2/3, a .ppk file's content)",
            (rb"(?P<secret>PuTTY-User-Key-File-[1-3]: [A-Za-z0-9@.-]{3,60})\r?\n"
             rb"(?:[^\r\n]{0,80}\r?\n){0,40}?Private-Lines: [0-9]{1,4}\r?\n"
             rb"(?P<private>[A-Za-z0-9+/]{16,64})"),
            "a Private-Lines section follows, its first line of base-64 with entropy >= 3.5 "
            "bits",
            "https://the.earth.li/~sgtatham/putty/latest/htmldoc/AppendixC.html",
            shown=len(b"PuTTY-User-Key-File-3:"), validate=_putty,
            needles=(b"PuTTY-User-Key-File-",),
        ),
        Rule(
            "sendgrid-api-key",
            "SendGrid API key (SG.)",
            _token(b"SG.", rb"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", _ALNUM + b"_.-"),
            "22 and 43 base64url characters; entropy >= 4.0 bits",
            "https://www.twilio.com/docs/sendgrid/ui/account-and-settings/api-keys",
            shown=3, validate=_random(3, 4.0),
            needles=(b"SG.",),
        ),
        Rule(
            "azure-storage-account-key",
            "Azure storage account key (AccountKey=... in a connection string)",
            (rb"AccountKey[ \t]{0,4}=[ \t]{0,4}"
             rb"(?P<secret>[A-Za-z0-9+/]{86}==)(?![A-Za-z0-9+/=])"),
            "88 base-64 characters decoding to 64 bytes, entropy >= 4.5 bits; not the "
            "published key of Microsoft's local storage emulators",
            "https://learn.microsoft.com/en-us/azure/storage/common/"
            "storage-configure-connection-string",
            validate=_azure_key,
            needles=(b"AccountKey",),
        ),
        Rule(
            "telegram-bot-token",
            "Telegram bot token (the bot's number, a colon, AA and 33 characters)",
            rb"(?<![0-9])" + _TELEGRAM_GATE + rb"(?![A-Za-z0-9_-])",
            "8 to 10 digits, then 35 base64url characters starting AA; entropy >= 3.5 bits",
            "https://core.telegram.org/bots/api#authorizing-your-bot",
            validate=_telegram,
            needles=(b":AA",), gate=_TELEGRAM_GATE,
        ),
        Rule(
            "database-url-password",
            "password in a database URL (postgres://, postgresql://, mysql://, mariadb://, "
            "mongodb://, mongodb+srv://, redis://, rediss://, amqp://, amqps://)",
            _DB_URL,
            "at least 8 characters, entropy >= 3.0 bits, not a placeholder (a template such "
            "as <password> or ${PASS}, a word such as password or changeme, the user name)",
            "https://www.postgresql.org/docs/current/libpq-connect.html"
            "#LIBPQ-CONNSTRING-URIS",
            validate=_url_password,
            needles=(b"://",), gate=_DB_URL_GATE,
        ),
    ]


def _rules() -> tuple[Rule, ...]:
    github = "https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/"
    checksum = ("CRC32 of the 30 random characters, in base 62, must equal the last 6 "
                "characters")
    table = [
        Rule(
            "aws-access-key-id",
            "AWS access key id (AKIA long-term, ASIA temporary, ABIA, ACCA)",
            (rb"(?P<secret>A(?:KIA|SIA|BIA|CCA)(?<![A-Za-z0-9_]A[KSBC][IC]A)"
                       rb"[A-Z2-7]{16})(?![A-Za-z0-9])"),
            "16 base-32 characters after the prefix; no EXAMPLE, entropy >= 2.5 bits "
            "(AWS's documented example keys are not secrets)",
            "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html"
            "#identifiers-unique-ids",
            shown=4, validate=_random(4, 2.5),
            needles=(b"AKIA", b"ASIA", b"ABIA", b"ACCA"),
        ),
        Rule(
            "aws-secret-access-key",
            "AWS secret access key, assigned to a name that says so "
            "(aws_secret_access_key, SecretAccessKey, AWS_SECRET_KEY...)",
            _AWS_SECRET_GATE + rb"(?![A-Za-z0-9/+=])",
            "40 base-64 characters, entropy >= 4.0 bits; not AWS's documented example",
            "https://docs.aws.amazon.com/IAM/latest/UserGuide/id_credentials_access-keys.html",
            validate=_aws_secret, fold=True,
            needles=(b"secret",),
            gate=_AWS_SECRET_GATE,
        ),
        Rule(
            "github-token",
            "GitHub token: personal (ghp_), OAuth (gho_), user-to-server (ghu_), "
            "server-to-server (ghs_), refresh (ghr_)",
            (rb"(?P<secret>gh[pousr]_(?<![A-Za-z0-9_]gh[pousr]_)[A-Za-z0-9]{36})"
                       rb"(?![A-Za-z0-9])"),
            checksum, github, shown=4, validate=_crc32_token(4),
            needles=(b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_"),
        ),
        Rule(
            "github-fine-grained-token",
            "GitHub fine-grained personal access token (github_pat_)",
            _token(b"github_pat_", rb"[A-Za-z0-9]{22}_[A-Za-z0-9]{59}", _ALNUM + b"_"),
            "22 + 59 base-62 characters; entropy >= 4.0 bits (the format has no public "
            "checksum)",
            "https://github.blog/changelog/2022-10-18-introducing-fine-grained-personal-"
            "access-tokens-for-github/",
            shown=11, validate=_random(11, 4.0),
            needles=(b"github_pat_",),
        ),
        Rule(
            "gitlab-token",
            "GitLab token: personal, project or group access (glpat-), deploy (gldt-), "
            "runner (glrt-), pipeline trigger (glptt-), feed (glft-), OAuth application "
            "secret (gloas-), CI/CD job (glcbt-), incoming mail (glimt-), agent (glagent-), "
            "SCIM (glsoat-)",
            (rb"(?P<secret>gl(?<![A-Za-z0-9_]gl)"
                       rb"(?:pat|dt|rt|ptt|ft|oas|cbt|imt|agent|soat)-"
                       rb"[A-Za-z0-9_-]{20,64}(?:\.[A-Za-z0-9_-]{2,64}){0,2})(?![A-Za-z0-9_-])"),
            "at least 20 characters after the prefix; entropy >= 3.0 bits",
            "https://docs.gitlab.com/security/tokens/#token-prefixes",
            shown=6, validate=_random(6, 3.0),
            needles=(
                b"glpat-",
                b"gldt-",
                b"glrt-",
                b"glptt-",
                b"glft-",
                b"gloas-",
                b"glcbt-",
                b"glimt-",
                b"glagent-",
                b"glsoat-",
            ),
        ),
        Rule(
            "slack-bot-token",
            "Slack bot token (xoxb-)",
            _token(b"xoxb-", rb"[0-9]{8,14}-[0-9]{8,14}-[A-Za-z0-9]{24}"),
            "team and bot numbers, then 24 characters; entropy >= 3.0 bits",
            "https://api.slack.com/concepts/token-types",
            shown=5, validate=_random(5, 3.0),
            needles=(b"xoxb-",),
        ),
        Rule(
            "slack-user-token",
            "Slack user token (xoxp-)",
            _token(b"xoxp-", rb"[0-9]{8,14}-[0-9]{8,14}-[0-9]{8,14}-[a-f0-9]{32}"),
            "three numbers, then 32 hex characters; entropy >= 3.0 bits",
            "https://api.slack.com/concepts/token-types",
            shown=5, validate=_random(5, 3.0),
            needles=(b"xoxp-",),
        ),
        Rule(
            "slack-app-token",
            "Slack app-level token (xapp-)",
            _token(b"xapp-", rb"[0-9]-[A-Z0-9]{8,14}-[0-9]{8,14}-[a-f0-9]{64}"),
            "version, app id, number, then 64 hex characters; entropy >= 3.0 bits",
            "https://api.slack.com/concepts/token-types",
            shown=5, validate=_random(5, 3.0),
            needles=(b"xapp-",),
        ),
        Rule(
            "slack-webhook",
            "Slack incoming webhook URL",
            (rb"(?P<secret>https://hooks\.slack\.com/(?:services|workflows|triggers)"
                       rb"/T[A-Z0-9]{8,12}/[AB][A-Z0-9]{8,12}/[A-Za-z0-9]{24})(?![A-Za-z0-9])"),
            "team T..., hook B..., then 24 characters; entropy >= 3.0 bits (Slack's "
            "T00000000/B00000000/XXXX... placeholder passes)",
            "https://api.slack.com/messaging/webhooks",
            shown=len(b"https://hooks.slack.com/"), validate=_last_part_random,
            needles=(b"hooks.slack.com/",),
        ),
        Rule(
            "stripe-live-key",
            "Stripe live secret key (sk_live_) or restricted key (rk_live_)",
            (rb"(?P<secret>[sr]k_live_(?<![A-Za-z0-9_][sr]k_live_)"
                       rb"[A-Za-z0-9]{24,247})(?![A-Za-z0-9])"),
            "24 or more base-62 characters; entropy >= 3.0 bits (test keys, sk_test_, pass)",
            "https://docs.stripe.com/keys",
            shown=8, validate=_random(8, 3.0),
            needles=(b"k_live_",),
        ),
        Rule(
            "google-api-key",
            "Google API key (AIza)",
            _token(b"AIza", rb"[A-Za-z0-9_-]{35}", _ALNUM + b"_-"),
            "35 characters after the prefix; entropy >= 3.0 bits",
            "https://cloud.google.com/docs/authentication/api-keys",
            shown=4, validate=_random(4, 3.0),
            needles=(b"AIza",),
        ),
        Rule(
            "google-oauth-client-secret",
            "Google OAuth client secret (GOCSPX-)",
            _token(b"GOCSPX-", rb"[A-Za-z0-9_-]{28}", _ALNUM + b"_-"),
            "28 characters after the prefix; entropy >= 3.0 bits",
            "https://github.com/gitleaks/gitleaks/blob/master/config/gitleaks.toml",
            shown=7, validate=_random(7, 3.0),
            needles=(b"GOCSPX-",),
        ),
        Rule(
            "huggingface-token",
            "Hugging Face access token (hf_)",
            _token(b"hf_", rb"[A-Za-z]{34}"),
            "34 letters after the prefix; entropy >= 3.5 bits",
            "https://huggingface.co/docs/hub/security-tokens",
            shown=3, validate=_random(3, 3.5),
            needles=(b"hf_",),
        ),
        Rule(
            "npm-token",
            "npm access token (npm_)",
            _token(b"npm_", rb"[A-Za-z0-9]{36}"),
            checksum + " (npm adopted GitHub's format)",
            "https://github.blog/2021-09-23-announcing-npms-new-access-token-format/",
            shown=4, validate=_crc32_token(4),
            needles=(b"npm_",),
        ),
        Rule(
            "npm-legacy-token",
            "npm access token of the older UUID form, as an .npmrc _authToken value",
            (rb"_authToken[ \t]{0,8}=[ \t]{0,8}[\"']?(?P<secret>[0-9a-f]{8}-[0-9a-f]{4}-"
                       rb"[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?![0-9A-Za-z-])"),
            "a UUID assigned to _authToken (an ${NPM_TOKEN} reference passes); entropy >= 3.0 "
            "bits",
            "https://docs.npmjs.com/cli/v10/configuring-npm/npmrc#auth-related-configuration",
            validate=_random(0, 3.0),
            needles=(b"_authToken",),
        ),
        Rule(
            "pypi-token",
            "PyPI API token (pypi-, a macaroon for pypi.org)",
            _token(b"pypi-AgEIcHlwaS5vcmc", rb"[A-Za-z0-9_-]{50,1000}", _ALNUM + b"_-"),
            "the base64url payload decodes to a macaroon whose location is pypi.org",
            "https://pypi.org/help/#apitoken",
            shown=5, validate=_pypi_macaroon(b"pypi.org"),
            needles=(b"pypi-AgEIcHlwaS5vcmc",),
        ),
        Rule(
            "pypi-test-token",
            "TestPyPI API token (pypi-, a macaroon for test.pypi.org)",
            _token(b"pypi-AgENdGVzdC5weXBpLm9yZw", rb"[A-Za-z0-9_-]{50,1000}", _ALNUM + b"_-"),
            "the base64url payload decodes to a macaroon whose location is test.pypi.org",
            "https://pypi.org/help/#apitoken",
            shown=5, validate=_pypi_macaroon(b"test.pypi.org"),
            needles=(b"pypi-AgENdGVzdC5weXBpLm9yZw",),
        ),
        Rule(
            "openai-api-key",
            "OpenAI API key (sk-proj-, sk-svcacct-, sk-admin-, and the older sk- keys), "
            "recognised by the T3BlbkFJ (base64 of 'OpenAI') marker inside",
            (rb"(?P<secret>sk-(?<![A-Za-z0-9_-]sk-)(?:(?:proj|svcacct|admin)-"
                       rb"[A-Za-z0-9_-]{20,200}T3BlbkFJ[A-Za-z0-9_-]{20,200}"
                       rb"|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}))(?![A-Za-z0-9_-])"),
            "the T3BlbkFJ marker with 20 or more characters either side; entropy >= 3.5 bits",
            "https://github.com/gitleaks/gitleaks/blob/master/config/gitleaks.toml",
            shown=3, validate=_random(3, 3.5),
            needles=(b"T3BlbkFJ",),
        ),
        Rule(
            "anthropic-api-key",
            "Anthropic API or admin key (sk-ant-api03-, sk-ant-admin01-)",
            _token(b"sk-ant-", rb"(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,120}AA",
                   _ALNUM + b"_-"),
            "80 to 120 characters ending in AA after the version; entropy >= 4.0 bits",
            "https://github.com/gitleaks/gitleaks/blob/master/config/gitleaks.toml",
            shown=7, validate=_random(13, 4.0),
            needles=(b"sk-ant-",),
        ),
        Rule(
            "private-key",
            "PEM private key block (-----BEGIN ... PRIVATE KEY-----, PGP PRIVATE KEY BLOCK), "
            "in UTF-8 or UTF-16",
            _PEM_BLOCK,
            "key material follows the header: after line breaks (or \\n escapes) and up to "
            "four armour headers, 32 base-64 characters in a row, not cut short with '..' or "
            "'…' (a header followed by '...' in documentation, or an example cut short, "
            "passes)",
            "https://www.rfc-editor.org/rfc/rfc7468#section-10",
            shown=len(_PEM_HEADER), validate=_not_elided,
            needles=(b"PRIVATE KEY",),
        ),
        Rule(
            "private-key-base64",
            "PEM private key encoded in base64 (a Kubernetes Secret data: value, a "
            "base64-encoded environment variable)",
            (rb"(?P<secret>(?:LS0tLS1CRUdJTi|0tLS0tQkVHSU4g|tLS0tLUJFR0lOI)"
                       rb"(?:[A-Za-z0-9+/=]{1,100}(?:\r?\n[ \t]{0,16}|\\n)?){1,12})"),
            "the run decodes to a PEM private-key header followed by key material, at any "
            "of the 3 byte offsets the header may have in the encoded text (a PEM key inside "
            "a JSON document such as a GCP service-account key, encoded whole)",
            "https://kubernetes.io/docs/concepts/configuration/secret/#tls-secrets",
            shown=14, validate=_base64_pem,
            needles=tuple(needle for needle, _ in _BASE64_BEGIN),
        ),
    ]
    table.extend(_round_three_rules())
    return tuple(table)


#: Every content rule, in the order findings of one position are reported.
RULES: tuple[Rule, ...] = _rules()
_BY_ID = {r.id: r for r in RULES}
assert len(_BY_ID) == len(RULES)


#: (encoding, byte order mark, ``PRIVATE KEY`` in that encoding) of the two UTF-16 readings.
_UTF16 = tuple((enc, bom, "PRIVATE KEY".encode(enc))
               for enc, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")))
#: Index of the UTF-16 ``PRIVATE KEY`` markers in `_NEEDLES` (after the rules' needles).
_UTF16_AT = len(RULES)


@dataclass(frozen=True, slots=True)
class _Needles:
    """The needles of every rule and the UTF-16 ``PRIVATE KEY`` markers as an RE2 set
    (``RE2::Set``), each pattern numbered `index[n]` (its rule's index, `_UTF16_AT` for the
    markers): run on the text, or the pieces of it, where the literal search found something,
    to tell which rules run."""

    set: Any
    index: tuple[int, ...]


def _needle_set() -> _Needles:
    """The `_Needles` of the rule table."""
    needles = re2.Set.SearchSet()
    index: list[int] = []
    for at, r in enumerate(RULES):
        for n in r.needles:
            needles.Add(b"(?i:" + re.escape(n) + b")" if r.fold else re.escape(n))
            index.append(at)
    for _, _, marker in _UTF16:
        needles.Add(re.escape(marker))
        index.append(_UTF16_AT)
    needles.Compile()
    return _Needles(needles, tuple(index))


_NEEDLES = _needle_set()


#: Bytes of the longest needle (a UTF-16 marker).
_LONGEST = max([len(n) for r in RULES for n in r.needles] + [len(m) for _, _, m in _UTF16])

#: Bytes of text one literal search looks at (then `_LONGEST` - 1 more, so that a needle
#: starting in it ends in it): bounds the matches one search returns (a hostile text of
#: needles end to end gives one a few bytes) and the RE2 set's text when it holds one.
PIECE = 1 << 16
#: Patterns in one automaton: up to 64, Aho-Corasick's SIMD searcher (Teddy) runs.
_TEDDY = 64


#: A search for some of the needles: its matches in the text (bytes, or a memoryview of
#: them), (pattern, start, end) each, leftmost first; empty when the text holds none.
_Hit = Callable[[bytes | memoryview], list[tuple[int, int, int]]]

#: Bytes of a folded needle the literal search looks for: its last ones, in every ASCII case
#: (16 variants of ``cret`` for ``secret``: the case-sensitive needles and these fit one
#: automaton, twice as fast as two). A text holding ``cret`` may hold no needle: the RE2 set
#: decides.
_FOLD_CORE = 4


def _literal_patterns() -> list[list[bytes]]:
    """What the literal search looks for, as plain bytes, in groups of at most `_TEDDY`: the
    case-sensitive needles, the UTF-16 markers, and each ASCII case variant of the last
    `_FOLD_CORE` bytes of a `fold` rule's needle (`re` folds ASCII letters only in a bytes
    pattern, so a text a folded rule can match in holds one of them). Every text holding a
    needle holds one of these, a needle's part in its last `_FOLD_CORE` bytes or whole."""
    exact = [n for r in RULES if not r.fold for n in r.needles] + [m for _, _, m in _UTF16]
    folded = sorted({bytes(variant) for r in RULES if r.fold for n in r.needles
                     for variant in itertools.product(*(
                         sorted({c, ord(chr(c).lower()), ord(chr(c).upper())})
                         if chr(c).isascii() else (c,) for c in n[-_FOLD_CORE:]))})
    patterns = exact + folded
    return [patterns[at:at + _TEDDY] for at in range(0, len(patterns), _TEDDY)]


def _literals() -> tuple[_Hit, ...]:
    """The automata of `_literal_patterns` (leftmost-first: the kind Teddy serves)."""
    kind = ahocorasick_rs.MATCHKIND_LEFTMOST_FIRST
    return tuple(ahocorasick_rs.BytesAhoCorasick(group, matchkind=kind).find_matches_as_indexes
                 for group in _literal_patterns())


#: The literal search for needles (see `_needle_pieces`).
_LITERALS = _literals()
#: The longest text of one piece of the literal search.
_ONE_PIECE = PIECE + _LONGEST - 1


def _pieces_from(text: bytes | memoryview, first: int, stop: int) -> list[tuple[int, int]]:
    """(start, end) of each piece of `text` starting at `first`, `first` + `PIECE`, ... (before
    `stop`) where the literal search finds something; a piece runs `_LONGEST` - 1 bytes
    into the next one."""
    size = len(text)
    view = memoryview(text)
    found = []
    searches = _LITERALS
    for start in range(first, stop, PIECE):
        end = min(size, start + PIECE + _LONGEST - 1)
        piece = view[start:end]
        for search in searches:
            if search(piece):
                found.append((start, end))
                break
    return found


def _needle_pieces(text: bytes | memoryview) -> list[tuple[int, int]]:
    """The pieces of `text` where the literal search finds something (empty: it holds no
    needle). A needle lies whole in the piece it starts in (a piece runs `_LONGEST` - 1 bytes
    into the next), and so does the part of it the search looks for: the needles of the text
    are those of these pieces."""
    size = len(text)
    if size <= _ONE_PIECE:
        return [(0, size)] if any(search(text) for search in _LITERALS) else []
    return _pieces_from(text, 0, size)


def _literal_rules() -> tuple[tuple[int, ...], frozenset[int]] | None:
    """What each pattern of the literal search stands for, when it is one automaton and no
    pattern is a prefix of another (else None: the checks below then stand aside): for each
    pattern, the index in `RULES` of the one rule whose needle it is, or whose folded
    needle's core it is (`_UTF16_AT` for a UTF-16 marker), and the patterns that are cores.
    A prefix of another pattern would start where that one does, and the automaton reports
    one match a byte."""
    groups = _literal_patterns()
    if len(groups) != 1:
        return None
    patterns = groups[0]
    if any(o != p and o.startswith(p) for p in patterns for o in patterns):
        return None
    markers = [m for _, _, m in _UTF16]
    rules: list[int] = []
    cores: set[int] = set()
    for at, pattern in enumerate(patterns):
        exact = [i for i, r in enumerate(RULES) if not r.fold and pattern in r.needles]
        folded = [i for i, r in enumerate(RULES) if r.fold for n in r.needles
                  if n[-_FOLD_CORE:].lower() == pattern.lower()]
        owners = exact + folded + ([_UTF16_AT] if pattern in markers else [])
        if len(owners) != 1:
            return None
        rules.append(owners[0])
        if folded:
            cores.add(at)
    return tuple(rules), frozenset(cores)


#: `_literal_rules`: (what each pattern stands for, the cores), or None.
_KINDS = _literal_rules()

#: U+017F, the long s, in UTF-8: RE2 folds it to s.
_LONG_S = "\u017f".encode()
#: The folded needles' bytes before their core (`_has_head` knows ``se``, the only one).
_FOLD_HEADS = tuple({n[:-_FOLD_CORE].lower() for r in RULES if r.fold for n in r.needles})
#: Beyond this many literal matches in a text, `_needles_in` leaves it to the RE2 set.
_FEW = 16


def _has_head(text: bytes, start: int) -> bool:
    """Whether the folded needle's head (``se`` as RE2's ``(?i:...)`` reads it) ends where
    the core found at `start` in `text` begins.

    RE2 reads a bytes pattern as UTF-8 and folds as Unicode: ``(?i:secret)`` matches
    ``[sS\u017f][eE]`` (U+017F, the long s, folds to s) then a core, and no other character
    folds to c, r, e or t (tests/content/test_scan_fast_paths.py asks RE2 of every code point)."""
    return start >= 1 and text[start - 1] in b"eE" and (
        (start >= 2 and text[start - 2] in b"sS")
        or (start >= 3 and text[start - 3:start - 1] == _LONG_S))


def _hides(text: bytes, start: int, end: int) -> bool:
    """Whether a pattern may start inside the literal match ``[start, end)`` of `text` (a
    leftmost-first automaton reports none that starts inside a match it reported): such a
    pattern ends by ``end - 1 + _LONGEST - 1``, and the search of the bytes from the
    match's second reports the leftmost first, so only its first match can start inside."""
    first = _LITERALS[0](text[start + 1:end - 1 + _LONGEST])
    return bool(first) and first[0][1] <= end - start - 2


def _needles_in(text: bytes, found: list[tuple[int, int, int]]) -> set[int] | None:
    """What the RE2 set would say of `text`, from the literal search's matches `found` in it:
    the indexes (in `RULES`, `_UTF16_AT` for a UTF-16 marker) of the needles it holds; or
    None when a pattern may start inside a match (`_hides`), or there are more than `_FEW`
    matches (the RE2 set decides). Every needle of the text is then one reported match: a
    pattern standing for its rule, or the folded needle's core with its head."""
    if _KINDS is None or _FOLD_HEADS != (b"se",) or len(found) > _FEW:
        return None
    rules, cores = _KINDS
    present: set[int] = set()
    for at, start, end in found:
        if _hides(text, start, end):
            return None
        if at not in cores or _has_head(text, start):
            present.add(rules[at])
    return present


def _present(text: bytes) -> tuple[tuple[Rule, ...], bool]:
    """The rules one of whose needles `text` holds (in table order), and whether it holds a
    UTF-16 ``PRIVATE KEY``: the literal search first (most texts hold no needle: one pass);
    for a text of one piece, its matches tell the rules (`_needles_in`) when they can, else
    the RE2 set does, on the pieces where the literal search found something."""
    if len(text) <= _ONE_PIECE and _KINDS is not None:  # one piece, one automaton
        found = _LITERALS[0](text)
        if not found:
            return (), False
        known = _needles_in(text, found)  # what the RE2 set says, told without it
        if known is None:
            known = {_NEEDLES.index[h] for h in _NEEDLES.set.Match(text) or ()}
    else:
        known = {_NEEDLES.index[h] for start, end in _needle_pieces(text)
                 for h in _NEEDLES.set.Match(text[start:end]) or ()}
    if not known:
        return (), False
    ats = sorted(known)
    return tuple(RULES[at] for at in ats if at != _UTF16_AT), ats[-1] == _UTF16_AT


#: The compiled `Rule.gate` of each rule that has one, by rule id.
_GATES = {r.id: re2.compile(r.gate) for r in RULES if r.gate is not None}


def _hex_pattern(text: bytes, fold: bool) -> bytes:
    """An RE2 pattern for the literal `text`, every byte a hex escape (a NUL too); with
    `fold`, an ASCII letter matches either case (as ``(?i:...)`` does in `re`)."""
    out = []
    for byte in text:
        char = chr(byte)
        if fold and char.isascii() and char.isalpha():
            out.append(b"[\\x%02x\\x%02x]" % (ord(char.lower()), ord(char.upper())))
        else:
            out.append(b"\\x%02x" % byte)
    return b"".join(out)


def _may_hold_utf16_needles(data: bytes) -> bool:
    """False when `data` holds no rule's needle encoded in UTF-16 (LE or BE, at either byte
    parity): its UTF-16 reading, in which an ASCII character can only come from one code unit
    ``00 XX``, then holds no needle either, and no rule can find anything in it.

    A needle in UTF-16 starting at byte k has its characters at every other byte from k (LE)
    or k + 1 (BE): it lies, as ASCII, in the bytes at even or in those at odd offsets. Where
    neither half holds one for the literal search (`_needle_pieces`: every needle, a folded
    one by its last letters in any case), the RE2 search cannot find one and is not run."""
    if not (_needle_pieces(data[0::2]) or _needle_pieces(data[1::2])):
        return False
    return _UTF16_NEEDLES.search(data) is not None


_UTF16_NEEDLES = re2.compile(b"|".join(
    _hex_pattern(n.decode("ascii").encode(encoding), r.fold)
    for r in RULES for n in r.needles for encoding in ("utf-16-le", "utf-16-be")))


def rule(rule_id: str) -> Rule:
    """The rule with id `rule_id` (KeyError if there is none)."""
    return _BY_ID[rule_id]


# -- scanning --------------------------------------------------------------------------------

_SAMPLE = 4096  # bytes looked at to tell UTF-16 text by its NULs


#: Characters walked back from a UTF-16 ``PRIVATE KEY`` to tell its byte order (`_utf16_reading`).
_RUN_BACK = 64


def _utf16_reading(data: bytes, offset: int = 0,
                   markers: bool = True) -> tuple[str, int] | None:
    """Whether the text of which `data` is a window (starting at byte `offset` of the file)
    should also be read as UTF-16: (encoding, file offset the reading starts at) or None.

    At the start of a file: a byte order mark, or NULs in every other byte of the first
    4 KiB (UTF-16 text). Anywhere: a UTF-16 ``PRIVATE KEY`` (inside a file that is otherwise
    not UTF-16). One reading at most: ASCII text in UTF-16-LE also holds the UTF-16-BE form
    of each word one byte further on, and the other way round. `markers` False: `_present`
    showed that `data` holds no UTF-16 ``PRIVATE KEY``, which is then not looked for."""
    (le, le_bom, le_marker), (be, be_bom, be_marker) = _UTF16
    if offset == 0 and data.startswith((le_bom, be_bom)):
        return (le, 2) if data.startswith(le_bom) else (be, 2)
    if offset == 0 and data.find(0, 0, _SAMPLE) >= 0:  # one memchr: most files hold no NUL
        sample = data[:_SAMPLE]
        half = max(1, len(sample) // 2)
        even, odd = sample[0::2].count(0) / half, sample[1::2].count(0) / half
        if odd - even > 0.3:
            return le, 0
        if even - odd > 0.3:  # BE text from byte 0, or LE text from byte 1 (after an odd
            # prefix): the same characters but the run's first, which a BE reading merges
            # with the byte before it; BE text of ASCII starts with a NUL
            return (be, 0) if data[0] == 0 else (le, 1)
    if not markers:
        return None
    at_le = data.find(le_marker)
    if at_le < 0:
        at_be = data.find(be_marker)
        return None if at_be < 0 else (be, offset + at_be % 2)
    # ASCII in UTF-16 holds both markers, the BE one a byte before the LE one, at any offset
    # (a key embedded in another file starts where it likes). Both readings give the same
    # characters but one: a BE reading of LE text loses the run's first (merged with the
    # byte before it), an LE reading of BE text its last. So walk back over the run of
    # (ASCII, NUL) pairs before the marker, at most `_RUN_BACK` characters (the `-----BEGIN
    # ...` in front of ``PRIVATE KEY``): a NUL before it means BE text (or an LE run longer
    # than the walk, which a BE reading reads as well), anything else LE text.
    start = at_le
    stop = max(1, at_le - 2 * _RUN_BACK)
    while start >= stop + 1 and data[start - 1] == 0 and 0 < data[start - 2] < 0x80:
        start -= 2
    if start > 0 and data[start - 1] == 0:
        return be, offset + (start - 1) % 2
    return le, offset + start % 2


def _excerpt(text: bytes, match: re.Match[bytes], shown: int) -> str:
    secret = match.group("secret")
    context = text[match.start() : match.start("secret")]
    kept = secret[: min(shown, len(secret))]
    withheld = len(secret) - len(kept)
    tail = f"…[{withheld} characters withheld]" if withheld else ""
    return (context + kept).decode("ascii", "replace") + tail


#: Bytes of a window kept for the next one when a file is scanned in chunks, and the part of
#: them whose matches wait for the next window (the longest match of any rule, under 2 KB,
#: fits in OVERLAP - _MARGIN, so no match is cut; the first _CONTEXT bytes of a window are
#: only there for the look-behinds, their matches were decided in the window before).
OVERLAP = 8192
_MARGIN = 4096
_CONTEXT = 64


class _Window:
    """One text (the file's bytes, or its UTF-16 reading in UTF-8) scanned in overlapping
    windows; findings are counted in lines as they are accepted."""

    def __init__(self, encoding: str, line: int = 1) -> None:
        self.encoding = encoding
        self.tail = b""
        self.offset = 0  # offset in the text of tail[0]
        self.line = line  # line of tail[0]
        self.line_start = 0  # offset in the text where that line starts
        self.seen: set[tuple[str, int]] = set()
        self.findings: list[Finding] = []

    def feed(self, chunk: bytes | memoryview, final: bool,
             present: tuple[Rule, ...] | None = None, window: bytes | None = None) -> None:
        """Scan `chunk` (after the kept tail); `present`: `_present(tail + chunk)`'s, and
        `window`: ``tail + chunk``, when the caller has them (not searched or copied twice)."""
        text: bytes = (window if window is not None
                       else self.tail + chunk if self.tail else bytes(chunk))
        window = text
        limit = len(window) if final else len(window) - _MARGIN
        skip = _CONTEXT if self.offset else 0
        hits: list[tuple[int, str, str]] = []
        if present is None:
            present = _present(window)[0]
        for r in present:
            gate = _GATES.get(r.id)
            if gate is not None and gate.search(window) is None:
                continue  # no match of the rule without its look-arounds: none with them
            for match in r.pattern.finditer(window):
                start = match.start()
                if start < skip or match.end() > limit:
                    continue
                if (r.id, self.offset + start) in self.seen:
                    continue
                if r.validate is None or r.validate(window, match):
                    self.seen.add((r.id, self.offset + start))
                    hits.append((start, r.id, _excerpt(window, match, r.shown)))
        hits.sort()
        line, line_start, position = self.line, self.line_start - self.offset, 0
        for start, rule_id, excerpt in hits:  # lines counted once over the window, in order
            newlines = window.count(b"\n", position, start)
            if newlines:
                line += newlines
                line_start = window.rfind(b"\n", position, start) + 1
            position = start
            self.findings.append(Finding(rule_id, line, start - line_start + 1, excerpt,
                                         encoding=self.encoding))
        if final:
            return
        drop = max(0, len(window) - OVERLAP)
        newlines = window.count(b"\n", 0, drop)
        if newlines:
            self.line += newlines
            self.line_start = self.offset + window.rfind(b"\n", 0, drop) + 1
        self.tail = window[drop:]
        self.offset += drop


class StreamScan:
    """`scan_bytes` over a file read in chunks of any size (the large-file path of the walk:
    memory stays at one chunk and `OVERLAP` bytes): `feed` each chunk, then `finish`."""

    def __init__(self) -> None:
        self._raw = _Window("utf-8")
        self._utf16: _Window | None = None
        self._decoder: codecs.IncrementalDecoder | None = None
        self._head = b""  # the first bytes, until there are enough to tell UTF-16
        self._fed = 0  # bytes of the file fed to the raw window
        self._marker = True  # whether the last window scanned holds ``PRIVATE KEY``

    def feed(self, chunk: bytes | memoryview) -> bool:
        """Scan `chunk`; return False when the window just scanned (the text kept from before
        and `chunk`) holds no ``PRIVATE KEY``, True when it does or was not scanned yet."""
        if self._fed == 0 and len(self._head) + len(chunk) < _SAMPLE:
            self._head += chunk
            return True
        self._feed(self._head + chunk if self._head else chunk, final=False)
        self._head = b""
        return self._marker

    def finish(self) -> list[Finding]:
        """Every finding, UTF-8 ones first, then those of a UTF-16 reading, each in order."""
        self._feed(self._head, final=True)
        self._head = b""
        found = self._raw.findings
        return found + self._utf16.findings if self._utf16 is not None else list(found)

    def _feed(self, chunk: bytes | memoryview, final: bool) -> None:
        raw = self._raw
        window = raw.tail + chunk
        present, utf16 = _present(window)
        self._marker = _BY_ID["private-key"] in present
        if self._utf16 is None:
            reading = _utf16_reading(window, raw.offset, utf16)
            if reading is not None:  # read as UTF-16 from here on (from the start, usually)
                encoding, start = reading
                self._utf16 = _Window(encoding, raw.line)
                self._decoder = codecs.getincrementaldecoder(encoding)("replace")
                self._feed_utf16(window[start - raw.offset :], final)
        elif self._decoder is not None:
            self._feed_utf16(chunk, final)
        raw.feed(chunk, final, present, window)
        self._fed += len(chunk)

    def _feed_utf16(self, data: bytes | memoryview, final: bool) -> None:
        assert self._utf16 is not None and self._decoder is not None
        text = self._decoder.decode(data, final).encode("utf-8")
        self._utf16.feed(text, final)


def scan_bytes(data: bytes) -> list[Finding]:
    """Every secret the rules find in the bytes of one file, in order of position (UTF-8
    findings first, then those of a UTF-16 reading). Linear in ``len(data)``."""
    return scan_text(data)[0]


def scan_text(data: bytes) -> tuple[list[Finding], bool]:
    """`scan_bytes`, and whether `data` holds ``PRIVATE KEY`` (the needle of the `private-key`
    rule: the older PEM-header check of `skillpack.content.scan` needs to look only then), from
    the same single search for needles."""
    present, marked = _present(data)
    found: list[Finding] = []
    if present:  # no rule to run: no finding (most files)
        raw = _Window("utf-8")
        raw.feed(data, final=True, present=present)
        found = raw.findings
    reading = _utf16_reading(data, 0, marked)
    if reading is not None and _may_hold_utf16_needles(data):  # else no rule finds anything
        encoding, start = reading
        utf16 = _Window(encoding)
        utf16.feed(data[start:].decode(encoding, "replace").encode("utf-8"), final=True)
        found += utf16.findings
    return found, _BY_ID["private-key"] in present


def scan_member(
    path: str,
    data: bytes,
    expand: Expand | None,
    *,
    allow: Collection[str] = (),
    _depth: int = 0,
    _member: str = "",
) -> list[Finding]:
    """`scan_bytes` of the file at `path` (relative, ``/``-separated), then of every inner
    member `expand` yields for it (a compressed asset), recursively to `MAX_DEPTH`, each
    finding naming its member. Findings of a rule id in `allow` are returned with
    ``allowed=True`` (the caller refuses the others and records these)."""
    return scan_file(path, data, expand, allow=allow, _depth=_depth, _member=_member)[0]


def scan_file(
    path: str,
    data: bytes,
    expand: Expand | None,
    *,
    allow: Collection[str] = (),
    _depth: int = 0,
    _member: str = "",
) -> tuple[list[Finding], bool]:
    """`scan_member`, and whether `data` itself holds ``PRIVATE KEY`` (see `scan_text`)."""
    top, marker = scan_text(data)
    found = [_mark(f, _member, allow) for f in top]
    if expand is not None and _depth < MAX_DEPTH:
        for inner, inner_data in expand(path, data):
            member = f"{_member}!{inner}" if _member else inner
            found += scan_member(f"{path}!{inner}", inner_data, expand, allow=allow,
                                 _depth=_depth + 1, _member=member)
    return found, marker


def _mark(finding: Finding, member: str, allow: Collection[str]) -> Finding:
    return Finding(finding.rule, finding.line, finding.column, finding.excerpt, member,
                   finding.encoding, finding.rule in allow)


def problem(path: str, finding: Finding) -> Problem:
    """The refusal of one finding in the file at `path`, worded for a person: code ``secret``,
    the file and line (for an inner member of a compressed asset, the member and its line are
    in the message and the problem has no line), and the two ways out."""
    found = _BY_ID[finding.rule]
    where = f"line {finding.line}, column {finding.column}"
    if finding.member:
        where = f"member {finding.member!r}, {where}"
    if finding.encoding != "utf-8":
        where += f", in {finding.encoding.upper()}"
    return Problem(
        "error", "secret",
        f"holds a secret: {found.description} [{finding.rule}] at {where}: {finding.excerpt}. "
        "skillpack refuses to carry secrets: remove it (and revoke it, it was on disk in a "
        "skill folder) or read it from the environment the skill runs in; if it is not a "
        "secret, allow it in the frontmatter with metadata: {skillpack-allow-secrets: "
        f'"{path}#{finding.rule}"}}',
        path, None if finding.member else finding.line,
    )
