"""The secret deny list: file names and contents a skill must never carry.

Names are matched case-insensitively against whole names or glob-like patterns, never against
substrings, so ordinary documents such as ``references/secrets.md`` or ``token-counting.md``
pass. The list is documented in docs/SECRETS.md; keep the two in step.

A skill that really must carry such a file (a CA certificate, a test fixture) names it in its
frontmatter, ``metadata: {skillpack-allow-secrets: "certs/ca.pem"}``; the walk then lets that
exact path through both checks and records it, so an approver sees it.
"""

from __future__ import annotations

import mmap
import re

__all__ = [
    "ENV_TEMPLATE_SUFFIXES",
    "PRIVATE_KEY_MARKER",
    "SECRET_DATA_EXTENSIONS",
    "SECRET_DIRS",
    "SECRET_EXTENSIONS",
    "SECRET_NAMES",
    "SECRET_PATHS",
    "contains_private_key",
    "documentation_follows",
    "secret_name_reason",
]

# Whole file names (compared after lower-casing).
SECRET_NAMES: dict[str, str] = {
    ".env": "a .env file holds environment secrets",
    ".envrc": "an .envrc (direnv) file exports environment secrets",
    ".npmrc": "an .npmrc file can hold npm registry tokens",
    ".pypirc": "a .pypirc file can hold PyPI upload credentials",
    ".netrc": "a .netrc file holds login credentials",
    "_netrc": "a _netrc file holds login credentials",
    ".git-credentials": "a .git-credentials file holds git passwords and tokens",
    ".pgpass": "a .pgpass file holds PostgreSQL passwords",
    ".htpasswd": "an .htpasswd file holds password hashes",
    "credentials.json": "a credentials.json file holds service credentials",
    "id_rsa": "an SSH private key (id_rsa)",
    "id_dsa": "an SSH private key (id_dsa)",
    "id_ecdsa": "an SSH private key (id_ecdsa)",
    "id_ed25519": "an SSH private key (id_ed25519)",
    "id_ecdsa_sk": "an SSH private key (id_ecdsa_sk)",
    "id_ed25519_sk": "an SSH private key (id_ed25519_sk)",
    ".s3cfg": "an .s3cfg (s3cmd) file holds AWS access keys",
    ".boto": "a .boto file holds AWS or Google Cloud Storage credentials",
    ".passwd-s3fs": "a .passwd-s3fs file holds AWS access keys",
    ".my.cnf": "a .my.cnf file holds MySQL client passwords",
    ".mylogin.cnf": "a .mylogin.cnf file holds MySQL login paths with passwords",
    ".dockercfg": "a .dockercfg file holds container registry credentials",
    ".vault-token": "a .vault-token file holds a HashiCorp Vault token",
    ".terraformrc": "a .terraformrc file can hold Terraform Cloud API tokens",
    "credentials.tfrc.json": "a credentials.tfrc.json file holds Terraform Cloud API tokens",
    ".databrickscfg": "a .databrickscfg file holds Databricks access tokens",
    "terraform.tfstate": "a Terraform state file holds every secret of the managed resources",
    "terraform.tfstate.backup": "a Terraform state backup holds every secret of the resources",
    "application_default_credentials.json":
        "an application_default_credentials.json file holds Google Cloud credentials",
    "client_secret.json": "a client_secret.json file holds a Google OAuth client secret",
}

# Last extension of the name (lower-cased, with its dot).
SECRET_EXTENSIONS: dict[str, str] = {
    ".pem": "a .pem file can hold a private key",
    ".key": "a .key file holds a private key",
    ".p12": "a .p12 (PKCS#12) file holds a private key and certificate",
    ".pfx": "a .pfx (PKCS#12) file holds a private key and certificate",
    ".jks": "a .jks Java keystore holds private keys",
    ".keystore": "a .keystore file holds private keys",
    ".kdbx": "a .kdbx file is a KeePass password database",
    ".ppk": "a .ppk file is a PuTTY private key",
    ".p8": "a .p8 (PKCS#8) file holds a private key (Apple AuthKey_*.p8 and others)",
    ".tfstate": "a .tfstate file (Terraform state) holds every secret of the resources",
    ".keychain": "a .keychain file is a macOS keychain of passwords and keys",
    ".keychain-db": "a .keychain-db file is a macOS keychain of passwords and keys",
}

# Folders whose every file is a secret (any depth in the skill).
SECRET_DIRS: dict[str, str] = {
    ".aws": "files under .aws/ hold AWS credentials",
    ".ssh": "files under .ssh/ hold SSH keys and host credentials",
    ".gnupg": "files under .gnupg/ hold GnuPG private keys",
}

# Paths matched at the end of the file's path (any depth), lower-cased; an entry ending in
# `/` is a folder whose every file is a secret.
SECRET_PATHS: dict[str, str] = {
    ".docker/config.json": "a .docker/config.json file holds registry credentials",
    ".kube/config": "a .kube/config file holds Kubernetes cluster credentials",
    ".config/gh/hosts.yml": "a .config/gh/hosts.yml file holds GitHub CLI tokens",
    ".gem/credentials": "a .gem/credentials file holds a RubyGems API key",
    ".config/gcloud/": "files under .config/gcloud/ hold Google Cloud credentials",
}

# `.env.<x>` passes when its last suffix marks a template.
ENV_TEMPLATE_SUFFIXES = frozenset({"example", "sample", "template", "dist"})

# `secret` / `secrets` with one of these extensions (or none) is a secret.
SECRET_DATA_EXTENSIONS = frozenset(
    {"", ".json", ".yaml", ".yml", ".toml", ".env", ".ini", ".txt", ".cfg", ".conf"}
)

PRIVATE_KEY_MARKER = b"PRIVATE KEY"
# `-----BEGIN PRIVATE KEY-----`, `-----BEGIN RSA PRIVATE KEY-----`, `... EC ...`,
# `... OPENSSH ...`, `... ENCRYPTED ...`, `-----BEGIN PGP PRIVATE KEY BLOCK-----`.
_PRIVATE_KEY = re.compile(rb"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
# What documentation writes after a header instead of a key: up to eight blanks, quotes,
# commas, line breaks or ``\n`` escapes, then ``...``, ``…`` or a template (``<key>``,
# ``[key]``, ``{key}``, ``${KEY}``). No key's base-64 material starts with any of them.
_PLACEHOLDER = re.compile(rb"(?:[ \t\"',+]|\r?\n|(?:\\r)?\\n){0,8}"
                          rb"(?:\.\.\.|\xe2\x80\xa6|<|\[|\{|\$)")
#: What follows a header up to its first line of material: blanks, quotes, commas, ``+``,
#: line breaks or their escapes (at most 64), then, after a line break, a comment or quote
#: prefix (``#``, ``//``, ``>``, ``;``, ``*``, ``|``) and blanks. Then the line itself: up
#: to a line break, its escape, a quote or any other control character (text, not the NULs
#: of a binary file: a header there is judged as before), at most 256 bytes.
_LEAD = re.compile(rb"(?P<sep>(?:[ \t\"',+]|\r?\n|(?:\\r)?\\n){0,64})"
                   rb"(?:(?<=\n)[ \t]{0,16}(?:[>#;*|]|//)[ \t]{0,16})?"
                   rb"(?P<line>(?:[^\x00-\x1f\x7f\\\"']|\t|\\(?![rn])){0,256})")
_BREAK_IN = re.compile(rb"\n|\\n")
_BASE64_LINE = re.compile(rb"[A-Za-z0-9+/=]+")
_ELIDED_LINE = re.compile(rb"[A-Za-z0-9+/=]*(?:\.{2,}|\xe2\x80\xa6)")
_ARMOUR = re.compile(rb"[A-Za-z-]{1,30}: ")
#: Bytes after a header that decide it (`_PLACEHOLDER`, then `_LEAD`: 64 separators, a
#: prefix of 33, a line of 256).
PLACEHOLDER_LOOKAHEAD = 360
# Longest header the pattern above can match, and what follows it that decides it, for
# callers that scan in windows.
PRIVATE_KEY_HEADER_MAX = 128 + PLACEHOLDER_LOOKAHEAD


# SECRET_PATHS as `secret_name_reason` matches them, in their order: ("/" + the entry,
# whether it is a folder, the reason).
_PATHS = tuple(("/" + entry, entry.endswith("/"), reason)
               for entry, reason in SECRET_PATHS.items())


def secret_name_reason(path: str) -> str | None:
    """Why the file at relative `path` (``/``-separated) is a secret by its name, or None."""
    lowered = path.lower()
    folder, _, name = lowered.rpartition("/")
    if folder:
        for part in folder.split("/"):
            reason = SECRET_DIRS.get(part)
            if reason is not None:
                return reason
    slashed = "/" + lowered
    inside = "/" + folder + "/" if folder else "/"  # the folders it is in, each as /f/
    for entry, whole_folder, reason in _PATHS:
        if (entry in inside) if whole_folder else slashed.endswith(entry):
            return reason
    reason = SECRET_NAMES.get(name)
    if reason is not None:
        return reason
    if name.startswith(".env."):
        suffix = name.rsplit(".", 1)[1]
        if suffix in ENV_TEMPLATE_SUFFIXES:
            return None
        return "a .env.* file holds environment secrets (templates ending in .example pass)"
    if name.startswith(".dev.vars"):
        return "a .dev.vars file holds Cloudflare Workers secrets"
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:  # no extension, or a dot-file like `.key`
        stem, ext = name, ""
    else:
        ext = "." + ext
        reason = SECRET_EXTENSIONS.get(ext)
        if reason is not None:
            return reason
    if stem in ("secret", "secrets") and ext in SECRET_DATA_EXTENSIONS:
        return f"a file named {name!r} holds secrets by its name"
    return None


def contains_private_key(data: bytes | bytearray | memoryview | mmap.mmap, *,
                         final: bool = True) -> bool:
    """Whether `data` holds a PEM private-key header (``-----BEGIN ... PRIVATE KEY-----``)
    that documentation does not follow with a placeholder (``...``, ``<your key>``): the
    header of ``privateKey: "-----BEGIN RSA PRIVATE KEY-----\\n..."`` holds no key.

    With `final` False, `data` is a window of a longer file: a header too near its end to see
    what follows (`PLACEHOLDER_LOOKAHEAD` bytes) does not count; the caller's next window,
    or its last one with `final`, holds it whole."""
    if isinstance(data, bytes | bytearray | mmap.mmap) and data.find(PRIVATE_KEY_MARKER) < 0:
        return False
    size = len(data)
    for match in _PRIVATE_KEY.finditer(data):
        end = match.end()
        if not final and end + PLACEHOLDER_LOOKAHEAD > size:
            continue  # undecided here: the next window sees what follows
        if _PLACEHOLDER.match(data, end) is None and not documentation_follows(data, end):
            return True
    return False


def documentation_follows(data: bytes | bytearray | memoryview | mmap.mmap, end: int) -> bool:
    """Whether what follows a private-key header ending at `end` is documentation, not key
    material: the first line after it is prose (``-----BEGIN RSA PRIVATE KEY----- and
    -----END ... lines``, a header in backticks, an empty block's ``-----END`` line), an
    example cut short (``MIIEpAIBAAKCAQEA...``, ``MIIE..``, ``…``), or a short word on the
    header's own line (``the "-----BEGIN ... KEY-----" line``). Key material is a line of
    base-64 characters only (any length, on a line of its own or 32 characters or more on
    the header's), or an armour header (``Proc-Type: 4,ENCRYPTED``); nothing at all after
    the header is not documentation either (the key may be cut off)."""
    lead = _LEAD.match(bytes(data[end : end + PLACEHOLDER_LOOKAHEAD]))
    assert lead is not None  # every part may be empty
    line = lead.group("line").rstrip(b" \t,+")
    if not line or _ARMOUR.match(line):
        return False
    if _BASE64_LINE.fullmatch(line):
        return _BREAK_IN.search(lead.group("sep")) is None and len(line) < 32
    return True
