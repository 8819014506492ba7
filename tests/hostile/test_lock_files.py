"""A lock file that names a skill twice (issue 28): JSON keeps the last entry, so the approver
reviewed one digest while `verify`, `sign` and `load(expect=...)` would trust another. Every
key must appear once in its object; such a lock is refused by `read_lock` and by each
command that reads a lock.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
)
from helpers.hostile import TALLY, demo_skill, run_cli

from skillpack.approve.lock import read_lock
from skillpack.errors import IntegrityError, SkillpackError
from skillpack.runtime import load


def twice(text: str, where: str) -> str:
    """The lock text with its skill `demo` (or one of its fields) listed a second time, with
    another digest: what a bad merge or an attacker leaves."""
    data = json.loads(text)
    entry = data["skills"]["demo"]
    other = dict(entry, digest="blake3:" + "0" * 64)
    body = json.dumps(entry, indent=2, sort_keys=True)
    if where == "skill":
        forged = json.dumps(other, indent=2, sort_keys=True)
        head = '{"format": ' + json.dumps(data["format"]) + ', "skills": {'
        return head + '"demo": ' + body + ', "demo": ' + forged + "}}"
    field = body.replace('"digest":', '"digest": "blake3:' + "0" * 64 + '", "digest":', 1)
    return '{"format": ' + json.dumps(data["format"]) + ', "skills": {"demo": ' + field + "}}"


def _private_key(folder: Path) -> Path:
    """A new Ed25519 private key, PEM, in `folder`."""
    key = folder / "key.pem"
    key.write_bytes(Ed25519PrivateKey.generate().private_bytes(
        Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    return key


@pytest.mark.parametrize("where", ["skill", "field"])
def test_a_lock_listing_a_skill_twice_is_refused(where: str, tmp_path: Path) -> None:
    skill = demo_skill(tmp_path / "skills" / "demo")
    good = tmp_path / "skills.lock"
    assert run_cli("lock", str(skill), "-o", str(good)).exit_code == 0
    read_lock(good)  # the lock as written is read
    forged = tmp_path / "forged.lock"
    forged.write_text(twice(good.read_text(), where))
    with TALLY.refused("parser", f"lock listing the {where} twice", "read_lock",
                       SkillpackError, "twice", "forged.lock"):
        read_lock(forged)
    key = _private_key(tmp_path)
    page = tmp_path / "page.html"
    for command in (["sign", str(forged), "--key", str(key)],
                    ["verify", str(skill), "--lock", str(forged)],
                    ["review", str(skill), "--lock", str(forged), "-o", str(page)]):
        result = run_cli(*command)
        assert result.exit_code == 1, (command, result.output)
        assert "twice" in result.output, (command, result.output)
        TALLY.add("parser", f"lock listing the {where} twice", f"cli {command[0]}", "refused")
    assert not page.exists() and not Path(str(forged) + ".intoto.json").exists()


@pytest.mark.parametrize("where", ["skill", "field"])
def test_the_runtime_refuses_a_lock_listing_a_skill_twice(where: str, tmp_path: Path) -> None:
    """`load(expect=<the lock's bytes>)`, the README's deployment form, reads the lock as
    `read_lock` does: a key twice in one object is refused, not the last one trusted."""
    skill = demo_skill(tmp_path / "skills" / "demo")
    good = tmp_path / "skills.lock"
    bundle = tmp_path / "skills.bundle"
    assert run_cli("lock", str(skill), "-o", str(good)).exit_code == 0
    assert run_cli("bundle", str(skill), "-o", str(bundle)).exit_code == 0
    data = bundle.read_bytes()
    assert load(data, expect=good.read_bytes()).names == ("demo",)
    forged = twice(good.read_text(), where).encode()
    with TALLY.refused("parser", f"lock listing the {where} twice", "load(expect=)",
                       IntegrityError, "twice"):
        load(data, expect=forged)


def _approved_then_changed(tmp_path: Path) -> tuple[Path, bytes]:
    """The lock of the demo skill, and the bytes of a bundle of it changed since (a file
    added, never approved)."""
    skill = demo_skill(tmp_path / "skills" / "demo")
    good = tmp_path / "skills.lock"
    assert run_cli("lock", str(skill), "-o", str(good)).exit_code == 0
    (skill / "notes.txt").write_text("Other notes, never approved.\n")
    bundle = tmp_path / "skills.bundle"
    assert run_cli("bundle", str(skill), "-o", str(bundle)).exit_code == 0
    return good, bundle.read_bytes()


def test_the_runtime_refuses_a_lock_whose_digest_alone_was_changed(tmp_path: Path) -> None:
    """A lock whose `digest` was changed and its file lines left as approved: a review of
    the lock's diff sees files unchanged. `read_lock` refuses it, and so does the runtime."""
    good, data = _approved_then_changed(tmp_path)
    text = good.read_text()
    entry = json.loads(text)["skills"]["demo"]
    forged = text.replace(entry["digest"], load(data)["demo"].digest)
    assert forged != text
    (tmp_path / "forged.lock").write_text(forged)
    with TALLY.refused("parser", "lock whose digest alone changed", "read_lock",
                       SkillpackError, "do not hash to its digest"):
        read_lock(tmp_path / "forged.lock")
    with TALLY.refused("parser", "lock whose digest alone changed", "load(expect=)",
                       IntegrityError, "do not hash to its digest"):
        load(data, expect=forged.encode())


#: A lock changed so that its entry no longer carries what `read_lock` checks the digest by:
#: its file lines removed, its skills as a list, its format removed (each with the digest of
#: the unapproved skill), and what each reader says.
HOLLOWED = {
    "file lines removed": (lambda lock, evil: {**lock, "skills": {"demo": {
        k: v for k, v in lock["skills"]["demo"].items() if k != "files"} | {"digest": evil}}},
        "'files' must be a list of lines", "not an object with 'digest' and its 'files'"),
    "skills as a list": (lambda lock, evil: {"format": lock["format"], "skills": [
        {"name": "demo", "digest": evil}]}, "has no 'skills' object",
        "'skills' is not an object"),
    "format removed": (lambda lock, evil: {"skills": lock["skills"]},
                       "no readable format version", "no readable format version"),
}


@pytest.mark.parametrize("case", sorted(HOLLOWED))
def test_the_runtime_refuses_a_lock_read_lock_refuses(case: str, tmp_path: Path) -> None:
    """The runtime checked the file lines only of an entry that had them, and took skills
    as a list: a lock with its lines removed approved any digest at deployment."""
    good, data = _approved_then_changed(tmp_path)
    change, by_read_lock, by_runtime = HOLLOWED[case]
    forged = tmp_path / "forged.lock"
    forged.write_text(json.dumps(change(json.loads(good.read_text()), load(data)["demo"].digest),
                                 indent=2))
    with TALLY.refused("parser", f"lock with its {case}", "read_lock", SkillpackError,
                       by_read_lock):
        read_lock(forged)
    for form, expect in (("bytes", forged.read_bytes()), ("content", json.loads(
            forged.read_bytes()))):
        with TALLY.refused("parser", f"lock with its {case}", f"load(expect=its {form})",
                           SkillpackError, by_runtime):
            load(data, expect=expect)


@pytest.mark.parametrize("where", ["name", "description"])
def test_a_lock_holding_a_lone_surrogate_is_refused(where: str, tmp_path: Path) -> None:
    """An escape such as \\ud800 is valid JSON but no text: `verify` and `sign` could not
    print or sign it (a traceback); `read_lock` refuses it, naming the file."""
    skill = demo_skill(tmp_path / "skills" / "demo")
    good = tmp_path / "skills.lock"
    assert run_cli("lock", str(skill), "-o", str(good)).exit_code == 0
    text = good.read_text()
    forged = tmp_path / "forged.lock"
    if where == "name":
        forged.write_text(text.replace('"skills": {', '"skills": {"\\ud800": '
                                       + json.dumps(json.loads(text)["skills"]["demo"]) + ",",
                                       1))
    else:
        entry = json.loads(text)["skills"]["demo"]
        forged.write_text(text.replace(json.dumps(entry["description"]), '"x\\ud800"', 1))
    assert forged.read_text() != text
    with TALLY.refused("parser", f"lock with a lone surrogate in a {where}", "read_lock",
                       SkillpackError, "lone surrogate", "forged.lock"):
        read_lock(forged)
    key = _private_key(tmp_path)
    for command in (["sign", str(forged), "--key", str(key)],
                    ["verify", str(skill), "--lock", str(forged)]):
        result = run_cli(*command)
        assert result.exit_code == 1 and "lone surrogate" in result.output, result.output
        assert "Traceback" not in result.output
