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
from skillpack.errors import SkillpackError


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
    key = tmp_path / "key.pem"
    key.write_bytes(Ed25519PrivateKey.generate().private_bytes(
        Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    page = tmp_path / "page.html"
    for command in (["sign", str(forged), "--key", str(key)],
                    ["verify", str(skill), "--lock", str(forged)],
                    ["review", str(skill), "--lock", str(forged), "-o", str(page)]):
        result = run_cli(*command)
        assert result.exit_code == 1, (command, result.output)
        assert "twice" in result.output, (command, result.output)
        TALLY.add("parser", f"lock listing the {where} twice", f"cli {command[0]}", "refused")
    assert not page.exists() and not Path(str(forged) + ".intoto.json").exists()
