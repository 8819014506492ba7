"""A skill author trying to smuggle a secret: by name, by content, through a hand-built
archive, or through a forged allowance. Every attempt is refused through `pack` (or
`verify` / `bundle` for archives), naming the file; no corpus skill is refused.

Secret-looking names are built by concatenation, and key blocks by tests/helpers/secrets.py,
so that no such literal sits in the repository to trip a scanner.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.hostile import TALLY, demo_skill, files_under, run_cli
from helpers.paths import CORPUS_SKILLS
from helpers.secrets import BEGIN, key_block, pem_block
from helpers.zips import (
    Member,
    build,
    change,
    insert,
    manifest_dict,
    members_of,
    reseal,
    set_manifest,
)

from skillpack.errors import IntegrityError, RefusedError
from skillpack.packing.pack import pack
from skillpack.packing.verify import verify_bytes
from skillpack.runtime import load
from skillpack.source.records import record_skill

D = "."
NAMES = [
    D + "env", D + "ENV", D + "Env", "config/" + D + "env", D + "env" + ".local",
    D + "env" + ".production", D + "env" + ".PROD", D + "envrc", D + "dev" + ".vars",
    D + "dev" + ".vars.staging", D + "npm" + "rc", D + "pypi" + "rc", D + "net" + "rc",
    "_net" + "rc", D + "git-" + "credentials", D + "pg" + "pass", D + "ht" + "passwd",
    "cred" + "entials.json", "CRED" + "ENTIALS.JSON", "deep/er/cred" + "entials.json",
    D + "aws/" + "credentials", "home/" + D + "aws/" + "config", D + "ssh/" + "known_hosts",
    D + "ssh/" + "authorized_keys", D + "gnupg/" + "secring.gpg",
    D + "docker/" + "config.json", "id_" + "rsa", "keys/id_" + "dsa", "id_" + "ecdsa",
    "id_" + "ed25519", "id_" + "ecdsa_sk", "ID_" + "RSA", "tls" + D + "pem", "tls" + D + "key",
    "TLS" + D + "KEY", "site" + D + "p12", "site" + D + "pfx", "app" + D + "jks",
    "release" + D + "keystore", "vault" + D + "kdbx", "putty" + D + "ppk", "secret",
    "secrets" + D + "json", "Secrets" + D + "YAML", "secret" + D + "toml",
    "config/secrets" + D + "ini", "secret" + D + "env", "secrets" + D + "txt",
]


def test_at_least_twenty_name_variants() -> None:
    assert len(NAMES) >= 20 and len(set(NAMES)) == len(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_a_secret_by_name_is_refused_by_pack(name: str, tmp_path: Path) -> None:
    skill = demo_skill(tmp_path / "demo", {name: "harmless=1\n"})
    out = tmp_path / "out"
    with TALLY.refused("secret", f"by name: {name}", "pack", RefusedError, name,
                       "[secret]") as refusal:
        pack(skill, out)
    assert refusal.value is not None
    assert [(p.code, p.file) for p in refusal.value.problems] == [("secret", name)]
    assert files_under(out) == []


def test_every_secret_is_listed_at_once_by_the_command(tmp_path: Path) -> None:
    skill = demo_skill(tmp_path / "demo", {name: "x\n" for name in NAMES})
    out = tmp_path / "out"
    result = run_cli("pack", str(skill), "-o", str(out))
    assert result.exit_code == 1
    listed = [line for line in result.output.splitlines() if "[secret]" in line]
    assert len(listed) == len(NAMES)  # (names equal but for case also collide: listed too)
    assert files_under(out) == []
    TALLY.add("secret", "every name variant in one skill", "cli pack", "refused",
              f"{len(listed)} secrets listed")


def test_declared_includes_cannot_carry_a_secret(tmp_path: Path) -> None:
    env = D + "env"
    skill = demo_skill(tmp_path / "demo", {"config/" + env: "TOKEN=x\n"})
    text = (skill / "SKILL.md").read_text().replace(
        "description:", f"includes: scripts/run.py, config/{env}\ndescription:", 1)
    (skill / "SKILL.md").write_text(text)
    with TALLY.refused("secret", "a secret named in includes", "pack", RefusedError,
                       "config/" + env, "[secret]"):
        pack(skill, tmp_path / "out")


# -- by content ------------------------------------------------------------------------------------

CONTENT = {
    "PKCS#8 key in notes.txt": ("notes.txt", key_block("")),
    "RSA key in a .md": ("references/setup.md", b"# Setup\n\n" + key_block("RSA")),
    "EC key with CRLF": ("data/ec.txt", key_block("EC", "\r\n")),
    "DSA key": ("dsa.txt", key_block("DSA")),
    "OpenSSH key named like a public key": ("keys/deploy.pub", key_block("OPENSSH")),
    "encrypted key": ("enc.dat", key_block("ENCRYPTED")),
    "PGP private key block": ("pgp.asc", key_block("PGP")),
    "key inside a binary file": ("image.png", b"\x89PNG\r\n\x1a\n" + os.urandom(4096)
                                 + key_block("RSA") + os.urandom(4096)),
    "key in an executable script": ("scripts/run.py", b"#!/usr/bin/env python3\nKEY = '''"
                                    + key_block("RSA") + b"'''\n"),
    "key in SKILL.md itself": ("SKILL.md", None),
    "key across the 4 MiB read seam": ("big.bin", b"\0" * ((4 << 20) - 20) + key_block("RSA")),
    "key at the end of a 9 MiB file": ("huge.bin", b"a" * (9 << 20) + key_block("")),
}


@pytest.mark.parametrize("case", list(CONTENT))
def test_a_private_key_is_found_by_content(case: str, tmp_path: Path) -> None:
    path, data = CONTENT[case]
    skill = demo_skill(tmp_path / "demo")
    if data is None:
        data = (skill / "SKILL.md").read_bytes() + b"\n" + key_block("RSA")
    (skill / path).parent.mkdir(parents=True, exist_ok=True)
    (skill / path).write_bytes(data)
    with TALLY.refused("secret", f"by content: {case}", "pack", RefusedError, path,
                       "PEM private key") as refusal:
        pack(skill, tmp_path / "out")
    assert refusal.value is not None
    assert [(p.code, p.file) for p in refusal.value.problems] == [("secret", path)]
    assert files_under(tmp_path / "out") == []


#: A UTF-16 key inside another file starts at any byte: after a prefix of either parity,
#: short (the head is then mostly UTF-16) or long, in a small file and past a large file's
#: first chunk (streamed), little- and big-endian.
UTF16_OFFSETS = [(encoding, prefix, where)
                 for encoding in ("utf-16-le", "utf-16-be")
                 for prefix in (0, 1, 7, 8, 4999, 5000)
                 for where in ("small", "large")]


@pytest.mark.parametrize(("encoding", "prefix", "where"), UTF16_OFFSETS,
                         ids=[f"{e}-{p}-{w}" for e, p, w in UTF16_OFFSETS])
def test_a_utf16_key_is_found_at_any_offset(encoding: str, prefix: int, where: str,
                                             tmp_path: Path) -> None:
    skill = demo_skill(tmp_path / "demo")
    junk = bytes((b % 255) + 1 for b in os.urandom(prefix))  # no NUL: not itself UTF-16
    lead = b"\x01" * ((3 << 20) + 1) if where == "large" else b""
    (skill / "blob.bin").write_bytes(lead + junk + key_block("RSA").decode().encode(encoding))
    case = f"UTF-16 key at byte {len(lead) + prefix} ({encoding}, {where} file)"
    with TALLY.refused("secret", f"by content: {case}", "pack", RefusedError, "blob.bin",
                       "PEM private key") as refusal:
        pack(skill, tmp_path / "out")
    assert refusal.value is not None
    assert [(p.code, p.file) for p in refusal.value.problems] == [("secret", "blob.bin")]
    assert files_under(tmp_path / "out") == []


def test_public_material_is_not_a_false_positive(tmp_path: Path) -> None:
    skill = demo_skill(tmp_path / "demo", {
        "certs/ca.crt": pem_block("CERTIFICATE", "MIIB"),
        "keys/deploy.pub": "ssh-ed25519 AAAAC3Nza deploy@example\n",
        "references/pem.md": "A PEM private key starts with " + BEGIN.strip() + " and ends.\n",
        "references/secrets.md": "How to keep secrets out of a skill.\n",
        "token-counting.md": "Tokens.\n",
    })
    [archive] = pack(skill, tmp_path / "out")
    assert archive.exists()


@pytest.mark.corpus
def test_no_false_positive_on_the_corpus() -> None:
    """The walk, the name rules and the content check on all 182 corpus skills."""
    assert len(CORPUS_SKILLS) == 182
    refused = []
    for folder in CORPUS_SKILLS:
        try:
            record_skill(folder)
        except RefusedError as err:
            refused.append((folder.name, [str(p) for p in err.problems]))
    assert refused == []
    TALLY.handled("secret", "the 182 corpus skills", "walk and content check",
                  "no false positive")


# -- secrets smuggled past pack ---------------------------------------------------------------

def _smuggled(good_archive: bytes) -> dict[str, bytes]:
    members = members_of(good_archive)
    env = D + "env"
    return {
        "a secret file added to a resealed archive": build(reseal(insert(
            members, Member("demo/config/" + env, b"TOKEN=x\n")))),
        "a key written into a member of a resealed archive": build(reseal(change(
            members, "demo/notes.txt", data=key_block("RSA")))),
    }


@pytest.mark.parametrize("case", ["a secret file added to a resealed archive",
                                  "a key written into a member of a resealed archive"])
def test_a_hand_built_archive_cannot_smuggle_a_secret(case: str, good_archive: bytes,
                                                      tmp_path: Path) -> None:
    data = _smuggled(good_archive)[case]
    with TALLY.refused("secret", case, "verify_bytes", IntegrityError, "secret") as refusal:
        verify_bytes(data)
    assert refusal.value is not None and [p.code for p in refusal.value.problems] == ["secret"]
    approved = {"demo": load(good_archive)["demo"].digest}
    with TALLY.refused("secret", case, "load(expect=approved)", IntegrityError, "skill 'demo'",
                       approved["demo"]):
        load(data, expect=approved)
    target = tmp_path / "demo.skill"
    target.write_bytes(data)
    out = tmp_path / "out"
    for command in (["verify", str(target)], ["bundle", str(target), "-o", str(out / "b")]):
        result = run_cli(*command)
        assert result.exit_code == 1 and "secret" in result.output, result.output
        TALLY.add("secret", case, f"cli {command[0]}", "refused")
    assert files_under(out) == []


def test_a_forged_allowance_in_the_manifest_is_refused(good_archive: bytes) -> None:
    members = members_of(good_archive)
    env = D + "env"
    members = reseal(insert(members, Member("demo/" + env, b"TOKEN=x\n")))
    manifest = manifest_dict(members, "demo")
    manifest["allowances"] = [env]
    data = build(set_manifest(members, "demo", manifest))
    with TALLY.refused("secret", "an allowance forged in the manifest", "verify_bytes",
                       IntegrityError, "allowances") as refusal:
        verify_bytes(data)
    assert refusal.value is not None
    assert {p.code for p in refusal.value.problems} == {"manifest-field", "secret"}


def test_an_allowance_is_explicit_exact_and_recorded(tmp_path: Path) -> None:
    key = "certs/test" + D + "key"
    skill = demo_skill(tmp_path / "demo", {key: key_block("RSA").decode()})
    text = (skill / "SKILL.md").read_text().replace(
        "description:", f'metadata:\n  skillpack-allow-secrets: "{key} typo{D}pem"\n'
        "description:", 1)
    (skill / "SKILL.md").write_text(text)
    with TALLY.refused("secret", "an allowance naming a file the skill does not carry",
                       "pack", RefusedError, "typo" + D + "pem", "[allow-unused]"):
        pack(skill, tmp_path / "out")
    (skill / "SKILL.md").write_text(text.replace(f" typo{D}pem", ""))
    [archive] = pack(skill, tmp_path / "out")
    loaded = load(archive.read_bytes())["demo"]
    assert loaded.manifest.allowances == (key,)  # an approver sees it
    assert run_cli("inspect", str(archive)).output.count(key) >= 2
    TALLY.handled("secret", "a key allowed by name in the frontmatter", "pack, inspect",
                  "carried, and recorded in the manifest")
