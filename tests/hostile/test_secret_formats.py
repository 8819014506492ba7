"""Secrets of formats the first rules did not know, carried in ordinary files (issue 28):
a GCP service-account key in a Kubernetes Secret (its JSON base64-encoded whole, the PEM
header at each of the 3 byte offsets), age, WireGuard, JWK and PuTTY private keys, SendGrid,
Azure storage, Telegram tokens and database URL passwords. Each is refused by `pack` naming
the file and the rule; each near miss (a placeholder, the published emulator key, an
example cut short, prose about a key) passes.

Every secret is built from random characters (tests/helpers/secrets.py); no literal sits in
the repository.
"""

from __future__ import annotations

import base64
import hashlib
import json
import tracemalloc
from pathlib import Path

import pytest
from helpers.hostile import TALLY, demo_skill, files_under
from helpers.secrets import (
    B64,
    BECH32,
    BEGIN,
    END,
    PRIVATE_KEY,
    URLSAFE,
    age_key,
    azure_key,
    b64url,
    pem,
    pem_body,
    ppk,
    rand,
    wireguard_key,
)

from skillpack.content.secret_rules import scan_bytes
from skillpack.errors import RefusedError
from skillpack.packing.pack import pack

PRIVATE = PRIVATE_KEY + "-----"


def service_account(pad: int) -> bytes:
    """A GCP service-account key file as `gcloud iam service-accounts keys create` writes it;
    `pad` moves the PEM header through the 3 byte offsets of its base64."""
    return json.dumps({
        "type": "service_account", "project_id": "demo-project" + "x" * pad,
        "private_key_id": rand("0123456789abcdef", 40),
        "private_key": pem("", lines=4),
        "client_email": "svc@demo-project.iam.gserviceaccount.com",
        "client_id": rand("0123456789", 21), "token_uri": "https://oauth2.googleapis.com/token",
    }, indent=2).encode()


def k8s_secret(payload: bytes) -> bytes:
    return (b"apiVersion: v1\nkind: Secret\nmetadata:\n  name: gcp-key\ntype: Opaque\n"
            b"data:\n  key.json: " + base64.b64encode(payload) + b"\n")


#: case -> (path, bytes, rule)
POSITIVES: dict[str, tuple[str, bytes, str]] = {
    **{f"GCP key in a Kubernetes Secret, header at byte offset {pad} mod 3": (
        "deploy/gcp-key.yaml", k8s_secret(service_account(pad)), "private-key-base64")
       for pad in range(3)},
    "age identity file": ("keys.txt", (
        "# created: 2026-12-02T10:00:00Z\n# public key: age1" + rand(BECH32, 58) + "\n"
        + age_key() + "\n").encode(), "age-secret-key"),
    "WireGuard config": ("vpn/wg0.conf", (
        "[Interface]\nAddress = 10.0.0.2/24\nPrivateKey = " + wireguard_key()
        + "\nDNS = 1.1.1.1\n\n[Peer]\nPublicKey = " + wireguard_key()
        + "\nEndpoint = vpn.example.org:51820\nAllowedIPs = 0.0.0.0/0\n").encode(),
        "wireguard-private-key"),
    "EC JWK, kty first": ("jwks.json", json.dumps({"keys": [{
        "kty": "EC", "crv": "P-256", "x": b64url(32), "y": b64url(32), "d": b64url(32),
        "use": "sig", "kid": "k1"}]}, indent=2).encode(), "jwk-private-key"),
    "Ed25519 JWK, kty last (as Node writes it)": ("key.jwk", json.dumps({
        "crv": "Ed25519", "d": b64url(32), "x": b64url(32), "kty": "OKP"}).encode(),
        "jwk-private-key"),
    "RSA JWK": ("rsa.json", json.dumps({
        "kty": "RSA", "n": b64url(256), "e": "AQAB", "d": b64url(256), "p": b64url(128),
        "q": b64url(128)}).encode(), "jwk-private-key"),
    "PuTTY key inside notes": ("notes/server.txt", ("Key for the box:\n\n" + ppk()).encode(),
                                "putty-private-key"),
    "SendGrid key in a .py": ("scripts/mail.py", (
        "SENDGRID_API_KEY = 'SG." + rand(URLSAFE, 22) + "." + rand(URLSAFE, 43) + "'\n"
    ).encode(), "sendgrid-api-key"),
    "Azure storage connection string": ("config/app.json", json.dumps({
        "Storage": "DefaultEndpointsProtocol=https;AccountName=demostore;AccountKey="
        + azure_key() + ";EndpointSuffix=core.windows.net"}).encode(),
        "azure-storage-account-key"),
    "Telegram bot token": ("bot.env.md", (
        "export TELEGRAM_BOT_TOKEN=" + rand("123456789", 10) + ":AA" + rand(URLSAFE, 33)
        + "\n").encode(), "telegram-bot-token"),
    "postgres URL": ("db.md", (
        "DATABASE_URL=postgresql://app:" + rand(URLSAFE, 20) + "@db.internal:5432/app\n"
    ).encode(), "database-url-password"),
    "mysql URL": ("settings.py", (
        "DB = 'mysql+pymysql://svc:" + rand(URLSAFE, 16) + "@10.0.0.5/shop'\n").encode(),
        "database-url-password"),
    "mongodb+srv URL": ("conn.txt", (
        "mongodb+srv://reader:" + rand(URLSAFE, 24) + "@cluster0.ab1cd.mongodb.net/db\n"
    ).encode(), "database-url-password"),
}

AGE = age_key()

#: case -> file bytes that hold no secret
NEAR_MISSES: dict[str, bytes] = {
    "a certificate in a Kubernetes Secret": k8s_secret(
        (BEGIN + "CERTIFICATE-----\n" + pem_body(4) + "\n").encode()),
    "age's documentation": b"Keys look like AGE-SECRET-KEY-1QQQQQQQQ... (keep them secret)\n",
    "an age key with a broken checksum": (
        AGE[:-1] + ("Q" if not AGE.endswith("Q") else "P")).encode(),
    "WireGuard PrivateKey placeholder": b"[Interface]\nPrivateKey = <your private key>\n",
    "a PrivateKey outside an [Interface] section": (
        "settings:\n  PrivateKey = " + wireguard_key() + "\n").encode(),
    "a public JWK": json.dumps({"kty": "EC", "crv": "P-256", "x": b64url(32),
                                "y": b64url(32)}).encode(),
    "a \"d\" in a JSON object without kty": json.dumps({"d": b64url(32), "v": 1}).encode(),
    "PuTTY format documentation": (
        b"A .ppk starts with PuTTY-User-Key-File-3: ssh-rsa\nthen Private-Lines: N\n...\n"),
    "SendGrid placeholder": b"SENDGRID_API_KEY=SG.xxxxxxxxxxxxxxxxxxxxxx.xxxxxxxxxxxxxxxxxxxx"
                            b"xxxxxxxxxxxxxxxxxxxxxxx\n",
    "Azure placeholder": b"AccountKey=<account-key>;EndpointSuffix=core.windows.net\n",
    "Azure truncated key": ("AccountKey=" + azure_key()[:40] + "...\n").encode(),
    "a Telegram token from the Bot API docs": (
        b"https://api.telegram.org/bot123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11/getMe\n"),
    "database URL placeholders": (
        b"postgres://user:password@localhost:5432/db\n"
        b"postgresql://postgres:postgres@localhost/app\n"
        b"mysql://root:<password>@127.0.0.1/shop\n"
        b"mongodb+srv://admin:${MONGO_PASSWORD}@cluster0.example.net/\n"
        b"redis://:changeme@redis:6379/0\n"
        b"postgresql://app:{password}@db/app and amqp://guest:guest@rabbit//\n"),
    "a database URL without a password": b"postgresql://app@db.internal/app\n",
    "prose about a PEM header": (
        "The key file starts with " + BEGIN + "RSA " + PRIVATE + " and ends with "
        + END + "RSA " + PRIVATE + " lines.\n").encode(),
    "a PEM header in backticks": ("Look for `" + BEGIN + PRIVATE + "` in the file.\n").encode(),
    "an example key cut short": (
        "```\n" + BEGIN + "RSA " + PRIVATE + "\nMIIEpAIBAAKCAQEA" + rand(B64, 30)
        + "...\n" + END + "RSA " + PRIVATE + "\n```\n").encode(),
    "an empty example block": (BEGIN + "EC " + PRIVATE + "\n" + END + "EC " + PRIVATE
                               + "\n").encode(),
}


@pytest.mark.parametrize("case", list(POSITIVES))
def test_a_secret_of_a_new_format_is_refused(case: str, tmp_path: Path) -> None:
    path, data, rule = POSITIVES[case]
    skill = demo_skill(tmp_path / "demo", {path: data})
    with TALLY.refused("secret", f"by content: {case}", "pack", RefusedError, path,
                       f"[{rule}]") as refusal:
        pack(skill, tmp_path / "out")
    assert refusal.value is not None
    assert [(p.code, p.file) for p in refusal.value.problems] == [("secret", path)]
    assert files_under(tmp_path / "out") == []
    assert [f.rule for f in scan_bytes(data)] == [rule]


@pytest.mark.parametrize("case", list(NEAR_MISSES))
def test_a_near_miss_is_carried(case: str, tmp_path: Path) -> None:
    data = NEAR_MISSES[case]
    assert scan_bytes(data) == [], case
    skill = demo_skill(tmp_path / "demo", {"references/notes.md": data})
    [archive] = pack(skill, tmp_path / "out")
    assert archive.exists()


def test_the_emulator_key_microsoft_publishes_is_not_a_secret() -> None:
    """Azurite's well-known key (in Microsoft's docs) passes; the rule knows it by its hash,
    here rebuilt from its published pieces."""
    published = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
                 "K1SZFPTOtr/KBHBeksoGMGw==")
    assert hashlib.sha256(published.encode()).hexdigest().startswith("0011cc25")
    text = ("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="
            + published + ";BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;\n")
    assert scan_bytes(text.encode()) == []


@pytest.mark.parametrize("size", [1 << 20, 4 << 20, 16 << 20])
def test_near_matches_of_the_new_rules_are_scanned_in_memory_of_a_window(size: int) -> None:
    """Needles of every new rule over and over (each almost a match): the scan reads them in
    time linear in the size and memory of the text, finding nothing."""
    unit = ("AGE-SECRET-KEY-1" + "Q" * 57 + " [Interface]\nPrivateKey = " + "A" * 43 + "\n"
            '{"kty": "EC", "d": "' + "a" * 31 + '"}\nPuTTY-User-Key-File-3: ssh-rsa\n'
            + "x\n" * 70 + "SG." + "a" * 22 + ".b\nAccountKey=" + "A" * 85 + "==\n"
            + "123456789:AA" + "a" * 32 + " postgres://u:" + "p" * 7 + "@h\n").encode()
    data = unit * (size // len(unit) + 1)
    tracemalloc.start()
    try:
        found = scan_bytes(data[:size])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found == []
    assert peak < 3 * size + (4 << 20), (size, peak)
    TALLY.add("secret", f"{size >> 20} MiB of near matches of the new rules", "scan_bytes",
              "handled")
