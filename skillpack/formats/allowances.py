"""The ``skillpack-allow-secrets`` syntax, as both sides read it (docs/SECRETS.md).

Each entry of the frontmatter's ``metadata.skillpack-allow-secrets`` is stripped, a leading
``./`` dropped and NFC-normalised. A bare path allows the whole file (neither the name check
nor any content rule applies); ``PATH#RULE-ID`` allows one content rule for one file, where
the part after the last ``#`` counts only when it is one of `RULE_IDS`, so a file name
holding ``#`` still works as a bare path. What a packed skill records (its manifest's
``allowances``) is `recorded`: the entries naming a carried file. The build side scans with
these allowances; the runtime checks a manifest's ``allowances`` against them.

Standard library only, `unicodedata` imported when first needed: the runtime uses it.
"""

from __future__ import annotations

from skillpack.formats.paths import sort_key

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping

__all__ = ["RULE_IDS", "normalise", "parse", "recorded"]

#: The ids of the content rules (`skillpack.content.secret_rules.RULES`; a test keeps them
#: equal). Here because the runtime reads allowances and never imports the build side.
RULE_IDS = frozenset({
    "anthropic-api-key", "aws-access-key-id", "aws-secret-access-key",
    "github-fine-grained-token", "github-token", "gitlab-token", "google-api-key",
    "google-oauth-client-secret", "huggingface-token", "npm-legacy-token", "npm-token",
    "openai-api-key", "private-key", "private-key-base64", "pypi-test-token", "pypi-token",
    "slack-app-token", "slack-bot-token", "slack-user-token", "slack-webhook",
    "stripe-live-key", "age-secret-key", "wireguard-private-key", "jwk-private-key",
    "putty-private-key", "sendgrid-api-key", "azure-storage-account-key", "telegram-bot-token",
    "database-url-password",
})


def normalise(raw: Iterable[str]) -> list[str]:
    """The entries as written, stripped, ``./`` dropped, NFC; empty ones left out."""
    import unicodedata

    entries = [unicodedata.normalize("NFC", e.strip().removeprefix("./")) for e in raw]
    return [e for e in entries if e]


def parse(entries: Iterable[str]) -> dict[str, frozenset[str] | None]:
    """Normalised entries (`normalise`) as path -> the rule ids allowed for it, or None for
    the whole file. A bare path wins over rule entries for the same file."""
    allowed: dict[str, frozenset[str] | None] = {}
    for entry in entries:
        path, mark, rule_id = entry.rpartition("#")
        if not mark or rule_id not in RULE_IDS:
            allowed[entry] = None
        elif path not in allowed or allowed[path] is not None:
            allowed[path] = (allowed.get(path) or frozenset()) | {rule_id}
    return allowed


def recorded(by_path: Mapping[str, frozenset[str] | None],
             carried: Collection[str]) -> tuple[str, ...]:
    """What is recorded (manifest ``allowances``, `FileSet.allowed`): for each entry naming a
    carried file, a bare path as is, else ``PATH#RULE-ID`` a rule, sorted by UTF-8 bytes."""
    out: list[str] = []
    for path, rules in by_path.items():
        if path in carried:
            out.extend([path] if rules is None else [f"{path}#{r}" for r in sorted(rules)])
    return tuple(sorted(out, key=sort_key))
