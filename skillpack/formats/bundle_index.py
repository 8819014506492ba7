"""The index of a bundle, ``.skillpack/bundle.json`` (docs/FORMAT.md, "Bundles").

Canonical JSON: the format version, the bundle digest (SPEC section 2) and each skill's name
and digest, sorted by name. `index_bytes` writes it (`skillpack bundle`); `read_index` checks
it (the runtime, at every load of a bundle).

Standard library only: the runtime imports this module at cold start.
"""

from __future__ import annotations

from skillpack._record import Record
from skillpack.errors import ArchiveError, IntegrityError
from skillpack.formats.digest import bundle_digest, is_digest
from skillpack.formats.manifest import FORMAT, canonical_json, check_format, load_json

__all__ = ["BUNDLE_INDEX", "HINT", "BundleIndex", "index_bytes", "read_index"]

#: The member of a bundle that lists its skills.
BUNDLE_INDEX = ".skillpack/bundle.json"
HINT = "rebuild it with `skillpack bundle` or `skillpack pack`; do not edit bundles by hand"
ALTERED = "do not use this bundle; rebuild it or fetch it again"
_INDEX_KEYS = frozenset({"format", "digest", "skills"})
_ENTRY_KEYS = frozenset({"name", "digest"})


class BundleIndex(Record):
    """What a checked bundle index says: the bundle digest and each skill's (name, digest),
    sorted by name."""

    digest: str
    skills: list[tuple[str, str]]


def index_bytes(pairs: list[tuple[str, str]]) -> tuple[str, bytes]:
    """The bundle digest of (name, digest) pairs and the canonical bytes of their index."""
    digest = bundle_digest(pairs)
    ordered = sorted(pairs, key=lambda p: p[0].encode("utf-8"))
    return digest, canonical_json({"format": FORMAT, "digest": digest,
                                   "skills": [{"name": n, "digest": d} for n, d in ordered]})


def read_index(raw: bytes | memoryview, source: str) -> BundleIndex:
    """Parse and check the bytes of ``.skillpack/bundle.json`` of the bundle `source`."""
    where = f"{source}/{BUNDLE_INDEX}"
    try:
        data = load_json(str(raw, "utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ArchiveError(f"the bundle index is not valid UTF-8 JSON: {exc}", path=where,
                           hint=HINT) from None
    if not isinstance(data, dict):
        raise ArchiveError("the bundle index is not a JSON object", path=where, hint=HINT)
    check_format(data.get("format"), what="the bundle index", source=where)
    if data.get("format") == FORMAT and set(data) != _INDEX_KEYS:
        odd = ", ".join(sorted(set(data) ^ _INDEX_KEYS))
        raise ArchiveError(f"the bundle index has unexpected or missing fields: {odd}",
                           path=where, hint=HINT)
    digest, skills = data.get("digest"), data.get("skills")
    if not is_digest(digest):
        raise ArchiveError(f"the bundle index has an invalid digest {digest!r}", path=where,
                           hint=HINT)
    if not isinstance(skills, list) or not all(
        isinstance(s, dict) and set(s) == _ENTRY_KEYS and isinstance(s["name"], str)
        and isinstance(s["digest"], str) for s in skills
    ):
        raise ArchiveError("the bundle index's 'skills' is not a list of {name, digest} "
                           "objects", path=where, hint=HINT)
    pairs = [(s["name"], s["digest"]) for s in skills]
    names = [name for name, _ in pairs]
    if names != sorted(set(names)):
        raise ArchiveError("the bundle index's skills are not unique and sorted by name",
                           path=where, hint=HINT)
    bad = [name for name in names if "/" in name or name in (".", "..", ".skillpack")]
    if bad:
        raise ArchiveError(f"the bundle index lists an invalid skill name {bad[0]!r}",
                           path=where, hint=HINT)
    actual = bundle_digest(pairs)  # also refuses empty names, whitespace, invalid digests
    if actual != digest:
        raise IntegrityError(
            f"the bundle index lists skills whose bundle digest is {actual}, but records "
            f"{digest}: the index was altered", path=where, hint=ALTERED)
    return BundleIndex(digest, pairs)

