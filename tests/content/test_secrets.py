"""The secret deny list: names (whole names and patterns, never substrings) and PEM contents.

Secret-looking names and key headers are built by concatenation, so that no such literal sits
in the repository to trip a scanner.
"""

from __future__ import annotations

import mmap
from pathlib import Path

import pytest
from helpers.paths import REPO

from skillpack.content import secrets
from skillpack.content.secrets import contains_private_key, secret_name_reason
from skillpack.errors import RefusedError
from skillpack.source.walk import walk

DOT = "."
SECRET_PATHS = [
    DOT + "env",
    "config/" + DOT + "env",
    DOT + "ENV",
    DOT + "env" + ".local",
    DOT + "env" + ".production",
    DOT + "envrc",
    DOT + "dev" + ".vars",
    DOT + "dev" + ".vars.staging",
    DOT + "npm" + "rc",
    DOT + "pypi" + "rc",
    DOT + "net" + "rc",
    "_net" + "rc",
    DOT + "git-" + "credentials",
    DOT + "pg" + "pass",
    DOT + "ht" + "passwd",
    "cred" + "entials.json",
    "Cred" + "entials.JSON",
    DOT + "aws/" + "credentials",
    DOT + "aws/" + "config",
    "home/" + DOT + "ssh/" + "known_hosts",
    DOT + "ssh/" + "id_ed25519" + ".pub",
    DOT + "gnupg/" + "pubring.kbx",
    DOT + "docker/" + "config.json",
    "id_" + "rsa",
    "keys/id_" + "dsa",
    "id_" + "ecdsa",
    "id_" + "ed25519",
    "server" + DOT + "pem",
    "tls" + DOT + "key",
    "TLS" + DOT + "KEY",
    "bundle" + DOT + "p12",
    "bundle" + DOT + "pfx",
    "store" + DOT + "jks",
    "release" + DOT + "keystore",
    "vault" + DOT + "kdbx",
    "putty" + DOT + "ppk",
    "secret",
    "secrets",
    "secret" + DOT + "json",
    "secrets" + DOT + "yaml",
    "Secrets" + DOT + "YML",
    "secrets" + DOT + "toml",
    "secret" + DOT + "env",
    "secrets" + DOT + "ini",
    "secret" + DOT + "txt",
    "secrets" + DOT + "cfg",
    "secrets" + DOT + "conf",
    DOT + "s3" + "cfg",
    DOT + "boto",
    DOT + "passwd-" + "s3fs",
    "home/" + DOT + "my" + ".cnf",
    DOT + "my" + "login.cnf",
    DOT + "docker" + "cfg",
    DOT + "vault-" + "token",
    DOT + "terraform" + "rc",
    "cred" + "entials.tfrc.json",
    DOT + "databricks" + "cfg",
    "infra/terraform" + DOT + "tfstate",
    "terraform" + DOT + "tfstate.backup",
    "prod" + DOT + "tfstate",
    "gcloud/application_default_" + "credentials.json",
    "client_" + "secret.json",
    "AuthKey_ABC123" + DOT + "p8",
    "login" + DOT + "keychain",
    "login" + DOT + "keychain-db",
    DOT + "kube/" + "config",
    "home/" + DOT + "kube/" + "config",
    DOT + "config/gh/" + "hosts.yml",
    DOT + "gem/" + "credentials",
    DOT + "config/gcloud/" + "credentials.db",
    DOT + "config/gcloud/legacy_credentials/me/" + "adc.json",
]

HARMLESS_PATHS = [
    DOT + "env" + ".example",
    DOT + "env" + ".sample",
    DOT + "env" + ".template",
    DOT + "env" + ".dist",
    DOT + "env" + ".production.example",
    "id_" + "rsa" + ".pub",
    "id_" + "ed25519" + ".pub",
    "references/secrets.md",
    "token-counting.md",
    "tokenizers.md",
    "references/keybindings.md",
    "environment-variables.md",
    "scripts/check_environment.py",
    "pem-format.md",
    "keys.md",
    "monkey.txt",
    "config.json",
    "docker/config.json",
    "secret_santa.py",
    "secrets.md",
    "secretary.txt",
    "uid_mapping_validator.py",
    ".gitignore",
    "SKILL.md",
    "kube/config",
    DOT + "kube/" + "cache.json",
    "gh/hosts.yml",
    DOT + "config/" + "settings.json",
    "terraform.tf",
    "my.cnf.md",
    "gcloud/setup.md",
]


@pytest.mark.parametrize("path", SECRET_PATHS)
def test_secret_names_are_recognised(path: str) -> None:
    reason = secret_name_reason(path)
    assert reason is not None and reason.strip()


@pytest.mark.parametrize("path", HARMLESS_PATHS)
def test_harmless_names_pass(path: str) -> None:
    assert secret_name_reason(path) is None


@pytest.mark.parametrize("path", SECRET_PATHS)
def test_walk_refuses_each_secret_name(tmp_path: Path, path: str) -> None:
    (tmp_path / "SKILL.md").write_text("x\n")
    target = tmp_path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("value\n")
    with pytest.raises(RefusedError) as info:
        walk(tmp_path)
    assert [(p.code, p.file) for p in info.value.problems] == [("secret", path)]
    assert "skillpack-allow-secrets" in info.value.problems[0].message


def test_walk_passes_harmless_names(tmp_path: Path) -> None:
    for path in HARMLESS_PATHS:
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("nothing to hide\n")
    assert set(walk(tmp_path).paths) == set(HARMLESS_PATHS)


BEGIN, END = "-----BEGIN ", "-----END "
KEY_KINDS = ["", "RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED "]


def pem(kind: str) -> bytes:
    label = kind + "PRIVATE" + " KEY-----"
    return (BEGIN + label + "\nTUlJRXZnSUJBREFOQmdr\n" + END + label + "\n").encode()


@pytest.mark.parametrize("kind", KEY_KINDS)
def test_private_key_blocks_are_found(kind: str) -> None:
    data = b"some notes\n" + pem(kind) + b"more\n"
    assert contains_private_key(data)
    assert contains_private_key(bytearray(data))
    assert contains_private_key(memoryview(data))


def test_pgp_private_key_block_is_found() -> None:
    assert contains_private_key((BEGIN + "PGP PRIVATE" + " KEY BLOCK-----\n").encode())


def test_private_key_in_mmap(tmp_path: Path) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(b"\0" * 10000 + pem("RSA "))
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        assert contains_private_key(mm)


@pytest.mark.parametrize(
    "text",
    [
        BEGIN + "CERTIFICATE-----\nMIIB\n" + END + "CERTIFICATE-----\n",
        BEGIN + "PUBLIC" + " KEY-----\nMIIB\n",
        BEGIN + "RSA PUBLIC" + " KEY-----\n",
        "Never commit your private key; keep the PRIVATE KEY file out of the repo.\n",
        "BEGIN RSA PRIVATE KEY without the dashes\n",
        "",
    ],
)
def test_public_material_and_prose_pass(text: str) -> None:
    assert not contains_private_key(text.encode())


def test_key_in_harmless_name_is_refused_by_content(tmp_path: Path) -> None:
    """The name passes, so the walk accepts it; reading it (pack, files) refuses it."""
    from skillpack.source.records import included_files

    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: demo\ndescription: d\n---\nbody\n")
    (folder / "notes.txt").write_bytes(b"see below\n" + pem("OPENSSH "))
    assert "notes.txt" in walk(folder).paths
    with pytest.raises(RefusedError) as info:
        included_files(folder)
    assert [(p.code, p.file) for p in info.value.problems] == [("secret", "notes.txt")]
    assert "PRIVATE KEY" in info.value.problems[0].message


def test_docs_describe_every_name_rule() -> None:
    """docs/SECRETS.md lists the deny list; a rule added in code must be documented."""

    doc = (REPO / "docs" / "SECRETS.md").read_text()
    names = [*secrets.SECRET_NAMES, *secrets.SECRET_EXTENSIONS, *secrets.SECRET_DIRS,
             *secrets.SECRET_PATHS]
    missing = [name for name in names if f"`{name}" not in doc and f"`*{name}`" not in doc]
    assert missing == []
    assert "skillpack-allow-secrets" in doc


def test_each_rule_gives_its_own_reason_first_rule_first() -> None:
    """The reason said is the first rule's that matches, in the order the list is read:
    folders, then paths, then whole names, then extensions (upper case as lower)."""
    for folder, reason in secrets.SECRET_DIRS.items():
        assert secret_name_reason(f"A/{folder.upper()}/b/id_rsa") == reason
    for entry, reason in secrets.SECRET_PATHS.items():
        path = entry + "x" if entry.endswith("/") else entry
        assert secret_name_reason(path) == reason
        assert secret_name_reason("deep/er/" + path) == reason
        assert secret_name_reason("x" + path) is None or path.startswith(".config/gcloud/")
    for name, reason in secrets.SECRET_NAMES.items():
        assert secret_name_reason("a/" + name.upper()) == reason
    for ext, reason in secrets.SECRET_EXTENSIONS.items():
        assert secret_name_reason("a/b" + ext) == reason
    assert secret_name_reason(".kube/id_rsa") == secrets.SECRET_NAMES["id_rsa"]
    assert secret_name_reason(".ssh/.kube/config") == secrets.SECRET_DIRS[".ssh"]
