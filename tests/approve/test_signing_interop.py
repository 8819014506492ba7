"""Our DSSE envelopes against a second, independent implementation: securesystemslib's.

securesystemslib (the TUF / in-toto project's library) parses the envelope with its own
`Envelope.from_dict`, computes PAE itself and verifies the Ed25519 signature with its own key
class: if our envelope, PAE or keyid were off, it would refuse them. It also signs an envelope
that our verifier must accept.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)
from helpers.approval import lock_of
from helpers.paths import NOTES, WAITLIST
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import CryptoSigner, SSlibKey  # type: ignore[attr-defined]

from skillpack.approve.signing import (
    PAYLOAD_TYPE,
    TrustedKey,
    keyid_of,
    sign_statement,
    statement_for_lock,
    verify_envelope,
)
from skillpack.errors import IntegrityError


def key_file(tmp_path: Path) -> tuple[Ed25519PrivateKey, Path]:
    key = Ed25519PrivateKey.generate()
    path = tmp_path / "approver_ed25519"
    path.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.OpenSSH, NoEncryption()))
    return key, path


def sslib_key(key: Ed25519PrivateKey) -> SSlibKey:
    raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return SSlibKey.from_crypto(key.public_key(), keyid=keyid_of(raw))


def test_securesystemslib_verifies_our_envelope(tmp_path: Path) -> None:
    key, path = key_file(tmp_path)
    statement = statement_for_lock(lock_of(WAITLIST, NOTES))
    envelope = Envelope.from_dict(json.loads(sign_statement(statement, path)))
    assert envelope.payload_type == PAYLOAD_TYPE and envelope.payload == statement
    public = sslib_key(key)
    accepted = envelope.verify([public], 1)
    assert list(accepted) == [public.keyid]


def test_securesystemslib_refuses_what_we_refuse(tmp_path: Path) -> None:
    """The control: the independent verifier does check, so the test above can fail."""
    key, path = key_file(tmp_path)
    statement = statement_for_lock(lock_of(WAITLIST))
    signed = json.loads(sign_statement(statement, path))
    changed = dict(signed, payload=base64.b64encode(statement.replace(b"waitlist.py",
                                                                      b"waitlist.sh")).decode())
    with pytest.raises(VerificationError):
        Envelope.from_dict(changed).verify([sslib_key(key)], 1)
    other = Ed25519PrivateKey.generate()  # another key under the signer's keyid
    with pytest.raises(VerificationError):
        Envelope.from_dict(json.loads(sign_statement(statement, path))).verify(
            [SSlibKey.from_crypto(other.public_key(), keyid=sslib_key(key).keyid)], 1)


def test_we_verify_an_envelope_securesystemslib_signed() -> None:
    private = Ed25519PrivateKey.generate()
    raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    signer = CryptoSigner(private, SSlibKey.from_crypto(private.public_key(),
                                                        keyid=keyid_of(raw)))
    statement = statement_for_lock(lock_of(WAITLIST))
    envelope = Envelope(statement, PAYLOAD_TYPE, {})
    envelope.sign(signer)
    data = json.dumps(envelope.to_dict()).encode()
    verified = verify_envelope(data, [TrustedKey(raw, "approver")])
    assert verified.payload == statement and verified.keyid == keyid_of(raw)
    # its default keyid (not ours) is only a hint: the signature still verifies
    default = CryptoSigner(private)
    assert default.public_key.keyid != keyid_of(raw)
    envelope = Envelope(statement, PAYLOAD_TYPE, {})
    envelope.sign(default)
    assert verify_envelope(json.dumps(envelope.to_dict()).encode(),
                           [TrustedKey(raw)]).payload == statement
    with pytest.raises(IntegrityError, match="a signature by another key"):
        verify_envelope(json.dumps(envelope.to_dict()).encode(),
                        [TrustedKey(Ed25519PrivateKey.generate().public_key().public_bytes(
                            Encoding.Raw, PublicFormat.Raw))])
