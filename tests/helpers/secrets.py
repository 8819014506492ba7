"""Fake secrets, made at test time by concatenation from random characters (no secret-looking
literal sits in the repository), and the realistic accidental leaks every scan must find.

Checksummed formats (GitHub, npm) get their CRC32 checksum computed here, independently of
the module under test. `LEAKS` holds (case id, path, file bytes, the rule ids that must fire);
`PROSE` is about 20 KB of text holding no secret.
"""

from __future__ import annotations

import base64
import gzip
import io
import random
import tarfile
import zipfile
import zlib
from collections.abc import Iterable

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


BEGIN, END = "-----BEGIN ", "-----END "
PRIVATE_KEY = "PRIVATE" + " KEY"


def pem_label(kind: str = "") -> str:
    """A private key block's label: ``PRIVATE KEY`` (PKCS#8) for "", ``PGP PRIVATE KEY BLOCK``
    for "PGP", else ``KIND PRIVATE KEY`` ("RSA", "EC", "OPENSSH"...; a trailing space is
    dropped)."""
    kind = kind.strip()
    if kind == "PGP":
        return f"PGP {PRIVATE_KEY} BLOCK"
    return f"{kind} {PRIVATE_KEY}" if kind else PRIVATE_KEY


def pem_block(label: str, body: str, newline: str = "\n") -> str:
    """``-----BEGIN LABEL-----``, the body, ``-----END LABEL-----``, each ended by `newline`."""
    return newline.join([f"{BEGIN}{label}-----", body, f"{END}{label}-----", ""])


def pem_body(lines: int = 6) -> str:
    """`lines` lines of 64 random base64 characters."""
    body = base64.b64encode(RNG.randbytes(48 * lines)).decode()
    GENERATED.append(body)
    return "\n".join(body[i : i + 64] for i in range(0, len(body), 64))


def pem(kind: str = "RSA ", lines: int = 6) -> str:
    """A private key block of `kind` (see `pem_label`) with a random body of `lines` lines."""
    return pem_block(pem_label(kind), pem_body(lines))


def key_block(kind: str = "", newline: str = "\n") -> bytes:
    """A short private key block of `kind` (see `pem_label`): one line of body, lines ended by
    `newline`, the same bytes each call."""
    return pem_block(pem_label(kind), "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
                     newline).encode()


def pypi_token(host: bytes = b"pypi.org") -> str:
    macaroon = b"\x02\x01" + bytes([len(host)]) + host + b"\x02\x06" + RNG.randbytes(86)
    token = base64.urlsafe_b64encode(macaroon).decode().rstrip("=")
    GENERATED.append(token[30:])
    return "pypi-" + token


BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def bech32(hrp: str, data: bytes) -> str:
    """Bech32 (BIP 173), written from the specification's reference code."""
    values, acc, bits = [], 0, 0
    for byte in data:
        acc, bits = (acc << 8) | byte, bits + 8
        while bits >= 5:
            bits -= 5
            values.append((acc >> bits) & 31)
    if bits:
        values.append((acc << (5 - bits)) & 31)

    def polymod(vs: list[int]) -> int:
        gen = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
        chk = 1
        for v in vs:
            top = chk >> 25
            chk = ((chk & 0x1FFFFFF) << 5) ^ v
            for i in range(5):
                chk ^= gen[i] if (top >> i) & 1 else 0
        return chk

    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    mod = polymod(expanded + values + [0] * 6) ^ 1
    check = [(mod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(BECH32[v] for v in values + check)


def age_key() -> str:
    return bech32("age-secret-key-", RNG.randbytes(32)).upper()


def wireguard_key() -> str:
    key = bytearray(RNG.randbytes(32))
    key[0] &= 248  # clamped, as `wg genkey` writes it
    key[31] = (key[31] & 127) | 64
    return base64.b64encode(bytes(key)).decode()


def b64url(n: int) -> str:
    return base64.urlsafe_b64encode(RNG.randbytes(n)).decode().rstrip("=")


def ppk() -> str:
    return ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n"
            "Comment: ed25519-key-20261202\nPublic-Lines: 2\n" + rand(B64, 64) + "\n"
            + rand(B64, 4) + "\nPrivate-Lines: 1\n" + rand(B64, 44) + "\n"
            "Private-MAC: " + rand("0123456789abcdef", 64) + "\n")


def azure_key() -> str:
    return base64.b64encode(RNG.randbytes(64)).decode()


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def tar(members: dict[str, bytes], compression: str = "") -> bytes:
    """A tar of regular files, in order; `compression` "gz" for a .tar.gz (`tar_gz`)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode=f"w:{compression}") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def tar_gz(members: dict[str, bytes]) -> bytes:
    return tar(members, "gz")


def deflated_zip(members: dict[str, str | bytes]) -> bytes:
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
    header = f"{BEGIN}{PRIVATE_KEY}-----"
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
         f"{BEGIN}{pem_label('PGP')}-----\nVersion: GnuPG v2\n\n"
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
        ("age-identity", "keys/age.txt", "# public key: age1" + rand(BECH32, 58) + "\n"
         + age_key() + "\n", {"age-secret-key"}),
        ("wireguard-conf", "vpn/wg0.conf", "[Interface]\nAddress = 10.0.0.2/24\nPrivateKey = "
         + wireguard_key() + "\n\n[Peer]\nPublicKey = " + wireguard_key() + "\n",
         {"wireguard-private-key"}),
        ("jwk", "keys/jwk.json", '{"kty": "OKP", "crv": "Ed25519", "x": "' + b64url(32)
         + '", "d": "' + b64url(32) + '"}\n', {"jwk-private-key"}),
        ("putty", "notes/box.txt", ppk(), {"putty-private-key"}),
        ("sendgrid", "scripts/mail.py", "KEY = 'SG." + rand(URLSAFE, 22) + "."
         + rand(URLSAFE, 43) + "'\n", {"sendgrid-api-key"}),
        ("azure-storage", "config/app.env", "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpoints"
         "Protocol=https;AccountName=demo;AccountKey=" + azure_key()
         + ";EndpointSuffix=core.windows.net\n", {"azure-storage-account-key"}),
        ("telegram", "bot/config.md", "token: " + rand("123456789", 10) + ":AA"
         + rand(URLSAFE, 33) + "\n", {"telegram-bot-token"}),
        ("postgres-url", "notes/db.md", "DATABASE_URL=postgres://app:" + rand(URLSAFE, 20)
         + "@db.internal:5432/app\n", {"database-url-password"}),
        ("header-only-context", "scripts/ssh.sh",
         "cat > ~/.ssh/id_rsa <<'EOF'\n" + header.replace("PRIVATE", "OPENSSH PRIVATE") + "\n"
         + base64.b64encode(RNG.randbytes(200)).decode() + "\nEOF\n", {"private-key"}),
    ]
    return [(c, p, d if isinstance(d, bytes) else d.encode(), r) for c, p, d, r in cases]


LEAKS = _leaks()


def leak(case: str) -> tuple[str, bytes]:
    """The path and bytes of the leak `case`."""
    return next((p, d) for c, p, d, _ in LEAKS if c == case)


PROSE = "".join(f"Line {i} of the reference notes: nothing secret here, just words.\n"
                for i in range(300)).encode()  # about 20 KB
