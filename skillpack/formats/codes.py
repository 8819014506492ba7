"""Every problem code skillpack reports, in one table, and what a code it does not report is.

A `Problem`'s code (and a verdict's, and an error's kind) is stable, so that tools and people
can match on it: ``--ignore CODE`` and ``ignore = [...]`` in skillpack.toml name codes of this
table. A code outside it silences nothing, so it is refused where it is given
(`unknown_code`), with the known code it is likely a misspelling of. The suite collects the
codes the sources can emit and the codes checks print, and holds each to be in `CODES`
(tests/project/test_codes_table.py); docs/SKILL-FORMAT.md and docs/LINT.md describe them.

Standard library only.
"""

from __future__ import annotations

import difflib

__all__ = ["CODES", "unknown_code"]

#: SKILL.md as text: its frontmatter, its tool fences, the Agent Skills rules and the
#: platform warnings (skillmd/; docs/SKILL-FORMAT.md, "Validation codes").
_SKILL_MD = (
    "encoding", "frontmatter-missing", "frontmatter-unterminated", "frontmatter-too-large",
    "frontmatter-not-mapping", "yaml-syntax", "yaml-anchor", "yaml-alias", "yaml-merge-key",
    "yaml-tag", "yaml-key", "yaml-surrogate", "yaml-version", "duplicate-key", "name-conflict",
    "includes-type", "include-empty", "include-absolute", "include-home", "include-dotdot",
    "include-missing", "tool-unterminated", "tool-syntax", "tool-missing-field", "tool-id",
    "tool-duplicate-id", "tool-run-empty", "tool-undeclared-param", "tool-unused-param",
    "tool-param-type", "tool-param-enum", "tool-param-default", "tool-in-comment",
    "tool-in-html", "name-missing", "name-empty", "name-too-long", "name-not-lowercase",
    "name-not-nfkc", "name-invalid-characters", "name-hyphen-edge", "name-double-hyphen",
    "name-mismatch", "description-missing", "description-empty", "description-too-long",
    "compatibility-type", "compatibility-too-long", "license-type", "metadata-type",
    "metadata-not-string", "allow-secrets-type", "allowed-tools-type", "allowed-tools-case",
    "parse", "skill-md-case", "unknown-key", "body-too-long", "claude-angle-brackets",
    "claude-reserved-word", "invalid-call",
)
#: What `lint` adds (docs/LINT.md, "Every code").
_LINT = (
    "run-path-missing", "path-missing", "link-missing", "file-unreferenced",
    "reference-too-deep", "body-tokens", "description-no-when", "program-dynamic",
    "run-code-dynamic", "run-shell-syntax", "text-bidi", "text-invisible", "text-tag",
)
#: A skill's file set: the walk, its content checks, what it carries that is not its own.
_FILES = (
    "symlink", "unreadable", "special-file", "unportable-name", "name-collision", "secret",
    "allow-unused", "changed", "skill-md-ignored", "skillignore-pattern",
    "skillignore-too-large", "carries-virtualenv", "carries-node-modules",
    "carries-nested-skill",
)
#: Many skills at once, and a PATH holding none.
_MANY = ("duplicate-name", "no-skill")
#: The hosts' limits (`--target`, `--catalog-budget`; docs/TARGETS.md).
_TARGETS = (
    "target-description-missing", "target-frontmatter-start", "target-hard-skill-key",
    "target-layout", "target-name", "target-name-key-missing", "target-reserved-word",
    "target-skill-md-count", "target-unknown-key", "target-xml-tag", "target-too-many-files",
    "target-too-large", "target-file-too-large", "target-description-too-long",
    "target-catalog-budget", "target-too-many-skills",
)
#: Archives read or written: bounded inflation, a skill's archive made elsewhere.
_ARCHIVES = (
    "archive-corrupt", "archive-format", "archive-limit", "archive-ratio",
    "archive-too-large", "archive-too-many", "archive-collision", "archive-duplicate",
    "archive-encrypted", "archive-link", "archive-method", "archive-overlap",
    "archive-special", "archive-unsafe-name", "not-a-skill-archive",
)
#: `verify`, the runtime's checks and the lock verdicts (docs/APPROVAL.md, docs/RUNTIME.md).
_VERIFY = (
    "expect-extra", "expect-mismatch", "expect-missing", "hash-mismatch", "index-digest",
    "index-not-canonical", "manifest-field", "manifest-invalid", "manifest-missing",
    "manifest-not-canonical", "manifest-sha256", "member-missing", "member-outside",
    "member-reserved", "member-unlisted", "mode-mismatch", "size-mismatch", "skill-md",
    "skill-md-missing", "zip-not-canonical", "file-beside-folder", "outside-includes",
    "left-out", "lock", "lock-programs", "lock-entry", "runs-in-place", "digest-mismatch",
    "unlisted-files", "unexpected-entry", "outside-project", "agent-folder-case",
    "format-version",
)
#: Skills made in code or from a template, unpacked, installed, exported; a model's calls.
_MADE = (
    "allowed-tools-empty", "allowed-tools-entry", "executable-unknown", "invalid",
    "resource-reserved", "resource-left-out", "target-exists", "write-failed", "not-ours",
    "not-writable", "export-duplicate", "export-description", "export-no-skill-md",
    "export-path", "export-frontmatter", "malformed-call", "several-calls", "unknown-tool",
)
#: The kind of an error that carries no problem of its own (`SkillpackError.code` and its
#: subclasses'), a usage error printed as JSON, and a command stopped by a signal.
_KINDS = ("error", "archive", "integrity", "invalid-skill", "refused", "resource", "write",
          "usage", "interrupted", "terminated")

#: Every code skillpack reports.
CODES = frozenset((*_SKILL_MD, *_LINT, *_FILES, *_MANY, *_TARGETS, *_ARCHIVES, *_VERIFY,
                   *_MADE, *_KINDS))


def unknown_code(code: str) -> str | None:
    """Why `code` names nothing (None: it is a code of `CODES`): the words a refusal says,
    with the known code nearest it when one is close (``unkown-key``: ``unknown-key``)."""
    if code in CODES:
        return None
    near = difflib.get_close_matches(code, CODES, n=1, cutoff=0.75)
    hint = f"did you mean '{near[0]}'?" if near else "the codes are listed in " \
        "docs/SKILL-FORMAT.md and docs/LINT.md"
    return f"'{code}' is no code skillpack reports: {hint}"
