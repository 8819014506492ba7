"""Each carried file's SHA-256, for the manifest (format 1.1) and the ecosystem's indexes.

Digest v1 stays BLAKE3 (SPEC section 2); SHA-256 is what the distribution formats speak (the
`.well-known/agent-skills/` index, the MCP skills extension). Pack takes each file's SHA-256
from the very bytes its walk read and hashed with BLAKE3 (`HashedFile.sha256`,
`HashedSet.sha256`); this module hashes a written archive, and checks a manifest's SHA-256s
against an archive's verified bytes.
"""

from __future__ import annotations

import hashlib
import os

from skillpack.errors import Problem
from skillpack.runtime import LoadedSkill
from skillpack.spec.manifest import Manifest

__all__ = ["archive_sha256", "sha256_problems"]


def archive_sha256(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of a written file's bytes (an archive or a bundle)."""
    with open(path, "rb") as handle:
        return "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()


def sha256_problems(manifest: Manifest, skill: LoadedSkill, member: str) -> list[Problem]:
    """The files whose SHA-256 in ``manifest`` is not that of their verified bytes (the
    digest covers BLAKE3 only, so `verify` recomputes each SHA-256 from the bytes)."""
    problems: list[Problem] = []
    for record, recorded in zip(manifest.files, manifest.sha256, strict=False):
        actual = hashlib.sha256(skill.file(record.path).view()).hexdigest()  # no copy
        if actual != recorded:
            problems.append(Problem(
                "error", "manifest-sha256", f"the manifest records sha256 {recorded} for "
                f"'{record.path}', its bytes hash to {actual}: it was altered after packing",
                member))
    return problems
