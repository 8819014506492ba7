"""Signed statements as standard verifiers read them.

Every subject carries the SHA-256 of the skill's `.skill` archive (what cosign, `gh
attestation verify` and slsa-verifier match an artifact by), computed without writing the
archive; the BLAKE3 skill digest is in the predicate. Checked with real clients installed
from PyPI: sigstore-python's statement model (`sigstore.dsse`), in-toto's DSSE envelope and
securesystemslib's; and a statement signed before this change still verifies.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)
from helpers.paths import FIXTURES

from skillpack.approve.signing import keyid_of, sign_statement
from skillpack.cli import main
from skillpack.formats.manifest import canonical_json

WAITLIST = FIXTURES / "waitlist"
NOTES = FIXTURES / "release-notes"


def _cli(*args: object) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert "Traceback" not in result.output
    return result


@pytest.fixture
def signed(tmp_path: Path) -> dict[str, Any]:
    """A lock of both fixtures signed in one step, the key, and the archives `pack` writes."""
    key = Ed25519PrivateKey.generate()
    private = tmp_path / "approver"
    private.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.OpenSSH, NoEncryption()))
    public = tmp_path / "approver.pub"
    public.write_bytes(key.public_key().public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH))
    lock = tmp_path / "skills.lock"
    result = _cli("lock", WAITLIST, NOTES, "-o", lock, "--sign", private)
    assert result.exit_code == 0, result.output
    assert _cli("pack", WAITLIST, NOTES, "-o", tmp_path / "out").exit_code == 0
    envelope = (tmp_path / "skills.lock.intoto.json").read_bytes()
    return {"key": key, "private": private, "public": public, "lock": lock,
            "envelope": envelope, "archives": sorted((tmp_path / "out").glob("*.skill")),
            "payload": base64.b64decode(json.loads(envelope)["payload"])}


def test_each_subject_is_the_sha256_of_the_archive_pack_writes(signed: dict[str, Any]) -> None:
    statement = json.loads(signed["payload"])
    want = {p.name.rsplit("-", 1)[0]: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in signed["archives"]}
    assert statement["subject"] == [{"name": n, "digest": {"sha256": want[n]}}
                                    for n in sorted(want)]
    lock = json.loads(signed["lock"].read_bytes())
    for name, approved in statement["predicate"]["skills"].items():
        assert approved["digest"] == lock["skills"][name]["digest"]  # BLAKE3: the predicate's
        assert approved["archive"] == "sha256:" + want[name]


def test_sigstore_python_accepts_the_statement_and_matches_the_archive(
        signed: dict[str, Any]) -> None:
    dsse = pytest.importorskip("sigstore.dsse", reason="pip install sigstore (the test extra)")
    from sigstore.hashes import Hashed
    from sigstore_models.common.v1 import HashAlgorithm

    statement = dsse.Statement(signed["payload"])  # its pydantic model validates it
    for archive in signed["archives"]:
        digest = Hashed(algorithm=HashAlgorithm.SHA2_256,
                        digest=hashlib.sha256(archive.read_bytes()).digest())
        assert statement._matches_digest(digest)
    assert not statement._matches_digest(Hashed(algorithm=HashAlgorithm.SHA2_256,
                                                digest=hashlib.sha256(b"other").digest()))
    envelope = dsse.Envelope._from_json(signed["envelope"])  # sigstore's PAE, our signature
    signed["key"].public_key().verify(envelope.signature, envelope.pae())
    # what the issue found: a blake3 subject digest is refused outright
    old = json.loads(signed["payload"])
    old["subject"][0]["digest"]["blake3"] = "0" * 64
    with pytest.raises(dsse.Error, match="malformed in-toto statement"):
        dsse.Statement(json.dumps(old).encode())


def _sslib_key(signed: dict[str, Any]) -> dict[str, Any]:
    raw = signed["key"].public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return {"keyid": keyid_of(raw), "keytype": "ed25519", "scheme": "ed25519",
            "keyval": {"public": raw.hex()}}


def test_in_toto_verifies_the_envelope(signed: dict[str, Any]) -> None:
    metadata = pytest.importorskip("in_toto.models.metadata",
                                   reason="pip install in-toto (the test extra)")
    envelope = metadata.Envelope.from_dict(json.loads(signed["envelope"]))
    envelope.verify_signature(_sslib_key(signed))
    assert envelope.payload == signed["payload"]
    tampered = json.loads(signed["envelope"])
    body = json.loads(signed["payload"])
    body["subject"][0]["digest"]["sha256"] = "0" * 64
    tampered["payload"] = base64.b64encode(json.dumps(body).encode()).decode()
    with pytest.raises(metadata.SignatureVerificationError):
        metadata.Envelope.from_dict(tampered).verify_signature(_sslib_key(signed))


def test_securesystemslib_verifies_the_envelope(signed: dict[str, Any]) -> None:
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import SSlibKey  # type: ignore[attr-defined]

    key = SSlibKey.from_dict(*(lambda d: (d.pop("keyid"), d))(_sslib_key(signed)))
    assert list(Envelope.from_dict(json.loads(signed["envelope"])).verify([key], 1)) == [
        key.keyid]


def _legacy(tmp_path: Path, signed: dict[str, Any]) -> tuple[Path, Path]:
    """The lock and signature as the previous skillpack wrote them: no `archive` in the lock,
    a `blake3` subject digest."""
    lock = json.loads(signed["lock"].read_bytes())
    for entry in lock["skills"].values():
        del entry["archive"]
    old_lock = tmp_path / "old.lock"
    old_lock.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")
    statement = json.loads(signed["payload"])
    statement["subject"] = [{"name": s["name"], "digest": {"blake3": statement["predicate"][
        "skills"][s["name"]]["digest"].removeprefix("blake3:")}} for s in statement["subject"]]
    for approved in statement["predicate"]["skills"].values():
        del approved["archive"]
    signature = tmp_path / "old.lock.intoto.json"
    signature.write_bytes(sign_statement(canonical_json(statement), signed["private"]))
    return old_lock, signature


def test_a_statement_signed_before_still_verifies(tmp_path: Path,
                                                  signed: dict[str, Any]) -> None:
    old_lock, signature = _legacy(tmp_path, signed)
    result = _cli("verify", "--lock", old_lock, "--signature", signature, "--signer",
                  signed["public"], WAITLIST, NOTES)
    assert result.exit_code == 0, result.output
    # its skill digest is still checked: a changed skill is refused
    changed = tmp_path / "waitlist"
    shutil.copytree(WAITLIST, changed)
    (changed / "SKILL.md").write_text((changed / "SKILL.md").read_text() + "\nMore.\n")
    assert _cli("verify", "--lock", old_lock, "--signature", signature, "--signer",
                signed["public"], changed, NOTES).exit_code == 1


def test_signing_an_old_lock_says_how(tmp_path: Path, signed: dict[str, Any]) -> None:
    old_lock, _ = _legacy(tmp_path, signed)
    result = _cli("sign", old_lock, "--key", signed["private"], "-o", tmp_path / "new.json")
    assert result.exit_code == 1
    assert ("the lock does not record the SHA-256 of the .skill archive of release-notes, "
            "waitlist") in result.output
    assert "lock the skills again" in result.output and "--archive" in result.output
    assert not (tmp_path / "new.json").exists()
    # or given the archives, it signs the old lock
    result = _cli("sign", old_lock, "--key", signed["private"], "-o", tmp_path / "new.json",
                  *[a for p in signed["archives"] for a in ("--archive", p)])
    assert result.exit_code == 0, result.output


def test_a_skill_locked_from_a_bundle_records_the_same_archive(tmp_path: Path,
                                                               signed: dict[str, Any]) -> None:
    bundle = tmp_path / "skills.skillbundle"
    assert _cli("bundle", WAITLIST, NOTES, "-o", bundle).exit_code == 0
    assert _cli("lock", bundle, "-o", tmp_path / "b.lock").exit_code == 0
    assert (tmp_path / "b.lock").read_bytes() == signed["lock"].read_bytes()
