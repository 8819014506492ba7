"""Detached signatures of a lock: a DSSE envelope holding an in-toto Statement v1.

``skills.lock.intoto.json`` is a DSSE JSON envelope (https://github.com/secure-systems-lab/dsse)
of payloadType ``application/vnd.in-toto+json``. Its payload is an in-toto Statement v1 whose
subjects are the approved skills (``name``: the skill's name; ``digest: {"sha256": hex}``, the
SHA-256 of the skill's ``.skill`` archive, which standard verifiers match artifacts by) and
whose predicate, of type `PREDICATE_TYPE`, records what was approved of each skill: its
BLAKE3 skill digest, description, files (path, size, mode, BLAKE3), programs, tools with their
run templates, allowed-tools. The signature is Ed25519 over ``PAE(payloadType, payload)``;
never inside an archive. A statement signed before subjects carried the SHA-256 (a ``blake3``
subject digest) still verifies: its predicate holds everything the lock is checked against.

Everything written is deterministic: canonical JSON (keys sorted, no insignificant whitespace,
UTF-8, one trailing newline) and Ed25519 signatures (deterministic by construction), so signing
one lock with one key twice gives the same bytes.

A signature's ``keyid`` is the SHA-256, in hex, of the signer's raw 32-byte Ed25519 public key.
It only narrows which trusted key to try (DSSE: never a security decision): every signature is
checked against the trusted keys themselves.

Keys: Ed25519 only, read with the `cryptography` library. A private key is PEM (PKCS8,
``-----BEGIN PRIVATE KEY-----``) or OpenSSH (``-----BEGIN OPENSSH PRIVATE KEY-----``); a public
key is PEM (SubjectPublicKeyInfo, ``-----BEGIN PUBLIC KEY-----``) or one OpenSSH line
(``ssh-ed25519 AAAA... comment``). A trusted-signers file holds one OpenSSH public key line per
signer; blank lines and lines starting with ``#`` are ignored.
"""

from __future__ import annotations

import base64
import binascii
import errno
import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

try:  # the `sign` extra: without it everything but signing and its checks still works
    from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
    from cryptography.hazmat.primitives.asymmetric import dsa, ec, rsa
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        PublicFormat,
        load_pem_private_key,
        load_pem_public_key,
        load_ssh_private_key,
        load_ssh_public_key,
    )
except ImportError:  # pragma: no cover - exercised in a subprocess by tests/cli/test_sign.py
    HAVE_CRYPTOGRAPHY = False
else:
    HAVE_CRYPTOGRAPHY = True

from skillpack._regular import read_regular
from skillpack.approve.lock import Lock, read_lock
from skillpack.errors import IntegrityError, SkillpackError
from skillpack.formats.manifest import canonical_json

__all__ = [
    "HAVE_CRYPTOGRAPHY",
    "MAX_READ_BYTES",
    "PAYLOAD_TYPE",
    "PREDICATE_TYPE",
    "STATEMENT_TYPE",
    "SignedLock",
    "Statement",
    "Subject",
    "TrustedKey",
    "check_statement_matches_lock",
    "keyid_of",
    "load_public_key",
    "pae",
    "parse_public_key",
    "read_trusted_signers",
    "sign_statement",
    "statement_for_lock",
    "trusted_keys",
    "verify_envelope",
    "verify_signed_lock",
]

PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://skillpack.dev/approval/v1"
SIGNATURE_SIZE = 64  # an Ed25519 signature
_MAKE_KEY = "make one with: ssh-keygen -t ed25519 -f KEY  (or: openssl genpkey -algorithm ed25519)"
_HEX = frozenset("0123456789abcdef")
#: The most bytes read of a signature, key or trusted-signers file: an approval of a lock
#: of 100,000 skills is about 20 MB; a larger file is refused before it is read.
MAX_READ_BYTES = 64 * 1024 * 1024
_SHOWN = 5  # failed signatures named in a message, or bad lines of a trusted-signers file


@dataclass(frozen=True, slots=True)
class TrustedKey:
    """A signer's Ed25519 public key: its raw 32 bytes, its keyid, and where it was read."""

    public: bytes
    source: str = "<key>"

    @property
    def keyid(self) -> str:
        return keyid_of(self.public)

    def verifies(self, signature: bytes, data: bytes) -> bool:
        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(signature, data)
        except InvalidSignature:
            return False
        return True


@dataclass(frozen=True, slots=True)
class Subject:
    """One approved skill as a Statement subject: its name and the hex SHA-256 of its
    ``.skill`` archive. ``blake3`` is the skill digest a statement signed before subjects
    carried the SHA-256 gave instead (it is in the predicate now); never written."""

    name: str
    sha256: str | None
    blake3: str | None = None

    def to_dict(self) -> dict[str, Any]:
        digest = ({} if self.sha256 is None else {"sha256": self.sha256}) | (
            {} if self.blake3 is None else {"blake3": self.blake3})
        return {"name": self.name, "digest": digest}

    @classmethod
    def from_dict(cls, data: Any) -> Subject:
        """Raises ValueError saying what is wrong."""
        if not isinstance(data, Mapping) or not isinstance(data.get("name"), str):
            raise ValueError(f"a subject must be an object with a 'name', not {data!r}")
        digest = data.get("digest")
        sha256 = digest.get("sha256") if isinstance(digest, Mapping) else None
        blake3 = digest.get("blake3") if isinstance(digest, Mapping) else None
        if sha256 is None and blake3 is None:
            raise ValueError(f"subject '{data['name']}' has no 'sha256' digest")
        if sha256 is not None and not _is_hex(sha256, 64):
            raise ValueError(f"subject '{data['name']}' has an invalid 'sha256' digest")
        if blake3 is not None and not _is_hex(blake3, 64):
            raise ValueError(f"subject '{data['name']}' has an invalid 'blake3' digest")
        return cls(data["name"], sha256, blake3)


@dataclass(frozen=True, slots=True)
class Statement:
    """A verified statement: its subjects, its predicate, the signed payload bytes, and the
    keyid of the trusted key that verified it."""

    subjects: tuple[Subject, ...]
    predicate: Mapping[str, Any]
    payload: bytes
    keyid: str


def pae(payload_type: str, body: bytes) -> bytes:
    """DSSE pre-authentication encoding: ``DSSEv1 SP len(type) SP type SP len(body) SP body``."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(body), body)


def keyid_of(public: bytes) -> str:
    """The keyid of a raw Ed25519 public key: the hex SHA-256 of its 32 bytes."""
    return hashlib.sha256(public).hexdigest()


def statement_for_lock(lock: Lock, archives: Mapping[str, str] | None = None) -> bytes:
    """The canonical in-toto Statement v1 approving ``lock``.

    Each skill's subject carries the hex SHA-256 of its ``.skill`` archive: from
    ``archives`` (a skill's name to the hex SHA-256 of an archive given), else the one its
    lock entry records (``archive``); a skill with neither is refused. The lock must be of
    format 1.1 or later (it records each skill's tools); a 1.0 lock is refused.
    """
    archives = archives or {}
    old = sorted(name for name, entry in lock.skills.items() if entry.tools is None)
    if old:
        raise SkillpackError(f"the lock is format {lock.format}, which does not record the "
                             f"tools an approval covers ({', '.join(old)})",
                             hint="lock the skills again, then sign the new lock")
    unknown = sorted(set(archives) - set(lock.skills))
    bad = sorted(n for n, h in archives.items() if not _is_hex(h, 64))
    if unknown or bad:
        raise SkillpackError(
            "archive digests given for skills not in the lock: " + ", ".join(unknown) if unknown
            else "archive digests that are not 64 hex digits: " + ", ".join(bad))
    sha256 = {name: archives.get(name) or (entry.archive or "").removeprefix("sha256:")
              for name, entry in lock.skills.items()}
    missing = sorted(name for name, sha in sha256.items() if not sha)
    if missing:
        raise SkillpackError(
            "the lock does not record the SHA-256 of the .skill archive of "
            + ", ".join(missing) + ", which a signed statement's subject carries",
            hint="lock the skills again with this skillpack (`skillpack lock`, which records "
                 "it), or give their archives: skillpack sign LOCK --key KEY --archive X.skill")
    subjects = [Subject(name, sha256[name]).to_dict() for name in sorted(lock.skills)]
    return canonical_json({
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": PREDICATE_TYPE,
        "predicate": _predicate(lock),
    })


def _predicate(lock: Lock) -> dict[str, Any]:
    skills: dict[str, Any] = {}
    for name in sorted(lock.skills):
        entry = lock.skills[name]
        data = entry.to_dict()
        data["files"] = [r.to_dict() for r in entry.files]
        skills[name] = data
    return {"lockFormat": lock.format, "skills": skills}


def sign_statement(statement_bytes: bytes, private_key_path: str | os.PathLike[str], *,
                   password: bytes | None = None) -> bytes:
    """A DSSE envelope (canonical JSON bytes) of ``statement_bytes`` signed with the Ed25519
    private key at ``private_key_path`` (PEM PKCS8 or OpenSSH; ``password`` if encrypted)."""
    key = _load_private_key(private_key_path, password)
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    signature = key.sign(pae(PAYLOAD_TYPE, statement_bytes))
    return canonical_json({
        "payload": base64.b64encode(statement_bytes).decode("ascii"),
        "payloadType": PAYLOAD_TYPE,
        "signatures": [{"keyid": keyid_of(public),
                        "sig": base64.b64encode(signature).decode("ascii")}],
    })


def verify_envelope(envelope_bytes: bytes, public_keys: Sequence[TrustedKey], *,
                    source: str = "<signature>") -> Statement:
    """The statement of a DSSE envelope that one of ``public_keys`` signed.

    Refuses (`SkillpackError`) an envelope that is not JSON, lacks a field, holds bad base64
    or another payloadType, and (`IntegrityError`) one whose signatures do not verify with a
    trusted key: a truncated signature, a signature by another key, a payload changed after
    signing. The statement must then be an in-toto Statement v1 of `PREDICATE_TYPE`.
    """
    if not public_keys:
        raise SkillpackError("no trusted signer was given", path=source,
                             hint="give the approver's public key (--signer or --signers)")
    payload, payload_type, signatures = _parse_envelope(envelope_bytes, source)
    if payload_type != PAYLOAD_TYPE:
        raise SkillpackError(f"the envelope's payloadType is {payload_type!r}, not "
                             f"{PAYLOAD_TYPE!r}", path=source,
                             hint="this is not a skillpack approval")
    signed = pae(payload_type, payload)
    trusted = ", ".join(f"{k.keyid[:16]} ({k.source})" for k in public_keys)
    truncated: list[int] = []  # each signature that failed, by why: sizes, then keyids
    changed: list[str] = []
    foreign: list[str] = []
    for keyid, sig in signatures:
        if len(sig) != SIGNATURE_SIZE:
            truncated.append(len(sig))
            continue
        # the keyid is only a hint (DSSE): try the keys it names first, then every key
        named = [k for k in public_keys if k.keyid == keyid]
        for key in named + [k for k in public_keys if k not in named]:
            if key.verifies(sig, signed):
                return _statement(payload, key.keyid, source)
        (changed if named else foreign).append(keyid[:16] or "none")
    problems = [
        *_failed(truncated, "a truncated or malformed signature ({} bytes; an Ed25519 "
                 f"signature is {SIGNATURE_SIZE})", "signatures of the wrong size ({} "
                 f"bytes; an Ed25519 signature is {SIGNATURE_SIZE})"),
        *_failed(changed, "the signature of trusted key {} does not verify: the statement "
                 "or the signature was changed after signing", "signatures of trusted keys "
                 "({}) that do not verify: the statement or the signatures were changed"),
        *_failed(foreign, "a signature by another key (keyid {}), not by a trusted signer",
                 "signatures by other keys (keyids {}), not by a trusted signer"),
    ]
    raise IntegrityError(f"no valid signature by a trusted signer: {'; '.join(problems)}",
                         path=source, hint=f"trusted: {trusted}; sign the lock again with the "
                         f"approver's key")


def _failed(items: Sequence[object], one: str, many: str) -> list[str]:
    """`one` for a lone failed signature, `many` for several: their count and the first
    `_SHOWN` of their distinct sizes or keyids, so that an envelope of thousands gives a
    message of a line."""
    if len(items) <= 1:
        return [one.format(*items)] if items else []
    distinct = list(dict.fromkeys(items))
    shown = ", ".join(map(str, distinct[:_SHOWN]))
    if len(distinct) > _SHOWN:
        shown += f" and {len(distinct) - _SHOWN:,} more"
    return [f"{len(items):,} " + many.format(shown)]


def _parse_envelope(data: bytes, source: str) -> tuple[bytes, str, list[tuple[str, bytes]]]:
    def bad(why: str) -> SkillpackError:
        return SkillpackError(f"malformed signature envelope: {why}", path=source,
                              hint="expected a DSSE envelope written by `skillpack sign`")

    try:
        envelope = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise bad(f"not JSON ({exc})") from None
    if not isinstance(envelope, Mapping):
        raise bad("not a JSON object")
    missing = [k for k in ("payload", "payloadType", "signatures") if k not in envelope]
    if missing:
        raise bad(f"no {', '.join(repr(k) for k in missing)} field")
    payload, payload_type, raw = (envelope["payload"], envelope["payloadType"],
                                  envelope["signatures"])
    if not isinstance(payload, str) or not isinstance(payload_type, str):
        raise bad("'payload' and 'payloadType' must be strings")
    if not isinstance(raw, list) or not raw:
        raise bad("'signatures' must be a non-empty list")
    signatures: list[tuple[str, bytes]] = []
    for item in raw:
        if not isinstance(item, Mapping) or not isinstance(item.get("sig"), str):
            raise bad(f"a signature must be an object with a 'sig' string, not {item!r}")
        keyid = item.get("keyid", "")
        if not isinstance(keyid, str):
            raise bad("a signature's 'keyid' must be a string")
        signatures.append((keyid, _b64(item["sig"], "a signature's 'sig'", bad)))
    return _b64(payload, "'payload'", bad), payload_type, signatures


def _b64(text: str, what: str, bad: Any) -> bytes:
    """Standard or URL-safe base64 (DSSE: verifiers accept either), padding required."""
    alphabet = b"-_" if "-" in text or "_" in text else b"+/"
    try:
        return base64.b64decode(text.encode("ascii"), altchars=alphabet, validate=True)
    except (UnicodeEncodeError, binascii.Error) as exc:
        raise bad(f"{what} is not valid base64 ({exc})") from None


def _statement(payload: bytes, keyid: str, source: str) -> Statement:
    def bad(why: str) -> SkillpackError:
        return SkillpackError(f"the signed statement is not a skillpack approval: {why}",
                              path=source)

    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise bad(f"not JSON ({exc})") from None
    if not isinstance(data, Mapping) or data.get("_type") != STATEMENT_TYPE:
        raise bad(f"its _type is not {STATEMENT_TYPE!r}")
    if data.get("predicateType") != PREDICATE_TYPE:
        raise bad(f"its predicateType is {data.get('predicateType')!r}, not {PREDICATE_TYPE!r}")
    subjects, predicate = data.get("subject"), data.get("predicate")
    if not isinstance(subjects, list) or not isinstance(predicate, Mapping):
        raise bad("it needs a 'subject' list and a 'predicate' object")
    try:
        parsed = tuple(Subject.from_dict(s) for s in subjects)
    except ValueError as exc:
        raise bad(str(exc)) from None
    return Statement(parsed, predicate, payload, keyid)


def check_statement_matches_lock(statement: Statement, lock: Lock, *,
                                 source: str = "<lock>") -> None:
    """Refuse (`IntegrityError`, listing every difference) a verified statement that does
    not approve exactly ``lock``: a skill only in one of them, another digest, or anything
    else the lock records (files, programs, tools, description, allowed-tools) that differs."""
    problems: list[str] = []
    signed = {s.name: s for s in statement.subjects}
    if len(signed) != len(statement.subjects):
        problems.append("the statement names a skill twice")
    for name in sorted(set(lock.skills) - set(signed)):
        problems.append(f"'{name}' is in the lock but was not signed")
    for name in sorted(set(signed) - set(lock.skills)):
        problems.append(f"'{name}' was signed but is not in the lock")
    expected = _predicate(lock)["skills"]
    approved = statement.predicate.get("skills")
    approved = approved if isinstance(approved, Mapping) else {}
    for name in sorted(set(signed) & set(lock.skills)):
        digest = lock.skills[name].digest.removeprefix("blake3:")
        mine, theirs = expected[name], approved.get(name)
        # the skill digest: in the predicate, and in the subject of a statement made before
        # subjects carried the archive's SHA-256
        claimed = signed[name].blake3 or (str(theirs.get("digest", "")).removeprefix("blake3:")
                                          if isinstance(theirs, Mapping) else None)
        if claimed is not None and claimed != digest:
            problems.append(f"'{name}': the lock pins blake3:{digest}, the signature "
                            f"blake3:{claimed}")
            continue
        if not isinstance(theirs, Mapping):
            problems.append(f"'{name}': the signed predicate does not describe it")
        elif mine != theirs:
            fields = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
            problems.append(f"'{name}': its {', '.join(fields)} differ from what was signed")
    if problems:
        raise IntegrityError("the lock is not the one that was signed: " + "; ".join(problems),
                             path=source, hint="the lock was changed after signing: review "
                             "the change and sign it again, or restore the signed lock")


def _need_cryptography(where: str) -> None:
    """Refuse, saying what to install, when the `sign` extra (`cryptography`) is absent."""
    if not HAVE_CRYPTOGRAPHY:
        raise SkillpackError("signing and checking signatures need the 'cryptography' "
                             "library, which is not installed", path=where,
                             hint="pip install 'skillpack[sign]'")


def _load_private_key(path: str | os.PathLike[str], password: bytes | None
                      ) -> Ed25519PrivateKey:
    where = os.fspath(path)
    _need_cryptography(where)
    data = _read(where, "key")
    loader = load_ssh_private_key if b"OPENSSH PRIVATE KEY" in data else load_pem_private_key
    try:
        key = loader(data, password)
    except TypeError as exc:  # encrypted without a password, or a password not needed
        raise SkillpackError(f"cannot use the private key: {exc}", path=where,
                             hint="put the key's password in an environment variable and name "
                                  "it with --key-password-env (sign and lock --sign), or use "
                                  "an unencrypted key") from None
    except (ValueError, UnsupportedAlgorithm) as exc:
        hint = ("this is a public key; signing takes the private key" if b"PUBLIC KEY" in data
                or data.startswith(b"ssh-") else "an encrypted OpenSSH key needs the bcrypt "
                "library: pip install bcrypt, or give a PEM key" if "bcrypt" in str(exc)
                else _MAKE_KEY)
        raise SkillpackError(f"not a PEM (PKCS8) or OpenSSH Ed25519 private key: {exc}",
                             path=where, hint=hint) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SkillpackError(f"unknown key type {_kind(key)}: skillpack signs with Ed25519 "
                             f"keys only", path=where, hint=_MAKE_KEY)
    return key


def load_public_key(path: str | os.PathLike[str]) -> TrustedKey:
    """The Ed25519 public key in a file: PEM SubjectPublicKeyInfo or one OpenSSH line."""
    where = os.fspath(path)
    return parse_public_key(_read(where, "public key"), source=where)


def parse_public_key(data: bytes, *, source: str = "<key>") -> TrustedKey:
    """An Ed25519 public key from PEM (SubjectPublicKeyInfo) or OpenSSH text."""
    _need_cryptography(source)
    text = data.strip()
    if b"PRIVATE KEY" in text:
        raise SkillpackError("this is a private key; a signer is given by its public key",
                             path=source, hint="ssh-keygen -y -f KEY > KEY.pub")
    try:
        key: object = (load_pem_public_key(text) if text.startswith(b"-----BEGIN")
                       else load_ssh_public_key(text))
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise SkillpackError(f"not a PEM or OpenSSH Ed25519 public key: {exc}", path=source,
                             hint="give the approver's public key, e.g. KEY.pub") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SkillpackError(f"unknown key type {_kind(key)}: skillpack verifies Ed25519 "
                             f"signatures only", path=source, hint=_MAKE_KEY)
    return TrustedKey(key.public_bytes(Encoding.Raw, PublicFormat.Raw), source)


def read_trusted_signers(path: str | os.PathLike[str]) -> tuple[TrustedKey, ...]:
    """The signers a trusted-signers file lists: one OpenSSH public key line each
    (``ssh-ed25519 AAAA... comment``); blank lines and ``#`` comments are skipped. Every bad
    line is reported at once, with its number."""
    where = os.fspath(path)
    _need_cryptography(where)
    try:
        text = _read(where, "trusted-signers file").decode("utf-8")
    except UnicodeDecodeError:
        raise SkillpackError("the trusted-signers file is not UTF-8 text", path=where) from None
    keys: list[TrustedKey] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            keys.append(parse_public_key(line.encode("utf-8"), source=f"{where}:{number}"))
        except SkillpackError as exc:
            problems.append(f"line {number}: {exc.message}")
    if len(problems) > _SHOWN:
        problems[_SHOWN:] = [f"and {len(problems) - _SHOWN:,} more bad lines"]
    if problems or not keys:
        raise SkillpackError("; ".join(problems) or "the trusted-signers file lists no key",
                             path=where, hint="one 'ssh-ed25519 AAAA... name' line per signer")
    return tuple(keys)


@dataclass(frozen=True, slots=True)
class SignedLock:
    """A lock whose signature verified with a trusted key, and the statement it signed."""

    lock: Lock
    statement: Statement
    signer: TrustedKey

    def digests(self) -> dict[str, str]:
        """Name -> approved digest: what ``skillpack.runtime.load(data, expect=...)`` takes."""
        return self.lock.digests()


def trusted_keys(signers: Iterable[str | os.PathLike[str]] = (),
                 signers_file: str | os.PathLike[str] | None = None) -> tuple[TrustedKey, ...]:
    """The trusted signers: each public key file in ``signers`` (PEM or one OpenSSH line),
    then every key a trusted-signers file lists."""
    keys = [load_public_key(path) for path in signers]
    if signers_file is not None:
        keys += read_trusted_signers(signers_file)
    return tuple(keys)


def verify_signed_lock(lock_file: str | os.PathLike[str], signature: str | os.PathLike[str],
                       keys: tuple[TrustedKey, ...]) -> SignedLock:
    """Read ``lock_file`` and refuse it unless ``signature`` is a valid envelope signed by one
    of ``keys`` whose statement approves exactly that lock (`IntegrityError` otherwise; a
    malformed envelope, a bad key or a lock of another format: `SkillpackError`)."""
    lock_where, where = os.fspath(lock_file), os.fspath(signature)
    lock = read_lock(lock_where)
    statement = verify_envelope(_read(where, "signature"), keys, source=where)
    check_statement_matches_lock(statement, lock, source=lock_where)
    signer = next(k for k in keys if k.keyid == statement.keyid)
    return SignedLock(lock, statement, signer)


def _read(where: str, what: str) -> bytes:
    try:
        return read_regular(where, limit=MAX_READ_BYTES)
    except OSError as err:
        hint = (f"a {what} of skillpack's is far smaller: is this the right file?"
                if err.errno == errno.EFBIG else None)
        raise SkillpackError(f"cannot read the {what}: {err.strerror}", path=where,
                             hint=hint) from None


def _kind(key: object) -> str:
    """A key's type as a person names it: ``RSA (2048 bits)``, ``ECDSA secp256r1``..."""
    if isinstance(key, rsa.RSAPrivateKey | rsa.RSAPublicKey):
        return f"RSA ({key.key_size} bits)"
    if isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey):
        return f"ECDSA {key.curve.name}"
    if isinstance(key, dsa.DSAPrivateKey | dsa.DSAPublicKey):
        return f"DSA ({key.key_size} bits)"
    return type(key).__name__.removeprefix("_").replace("PrivateKey", "").replace(
        "PublicKey", "")


def _is_hex(value: object, size: int) -> bool:
    return isinstance(value, str) and len(value) == size and set(value) <= _HEX
