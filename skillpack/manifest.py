"""The manifest of a packed skill: ``<name>/.skillpack/manifest.json`` (SPEC section 3).

Canonical JSON (keys sorted, no insignificant whitespace, UTF-8, one trailing newline) with a
``format`` version ``MAJOR.MINOR``. It records the skill's name, description and digest, every
file's path, size, mode and BLAKE3, the programs the skill runs, its tools with their JSON
Schemas, and the files it allows past the secret filter.

The digest covers the files only. So a reader never trusts the other fields: `verify`
re-derives them from the verified SKILL.md and refuses any difference, and the runtime
derives what a skill says and does from SKILL.md itself.

Standard library only: the runtime imports this module.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from skillpack.digest import DIGEST_RE, FileRecord, digest_records
from skillpack.errors import ArchiveError, FormatVersionError, IntegrityError

__all__ = [
    "FORMAT",
    "MANIFEST_PATH",
    "Manifest",
    "canonical_json",
    "check_format",
]

FORMAT = "1.0"
MANIFEST_PATH = ".skillpack/manifest.json"
_KEYS = frozenset(
    {"format", "name", "description", "digest", "files", "programs", "tools", "allowances"}
)


def canonical_json(data: Any) -> bytes:
    """The one byte form of ``data``: sorted keys, compact separators, UTF-8, newline."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)
    return text.encode("utf-8") + b"\n"


def check_format(value: Any, *, what: str, source: str) -> None:
    """Refuse a ``MAJOR.MINOR`` format version of another major or a newer minor."""
    ours_major, ours_minor = (int(x) for x in FORMAT.split("."))
    parts = value.split(".") if isinstance(value, str) else []
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise FormatVersionError(
            f"{what} has no readable format version (found {value!r}, expected like "
            f"'{FORMAT}')", path=source, hint="it was not written by skillpack")
    major, minor = int(parts[0]), int(parts[1])
    if major != ours_major:
        raise FormatVersionError(
            f"{what} is format {value}; this skillpack reads format {ours_major}.x only",
            path=source, hint=f"use a skillpack that reads format {major}.x")
    if minor > ours_minor:
        raise FormatVersionError(
            f"{what} is format {value}, newer than this skillpack reads ({FORMAT})",
            path=source, hint=f"upgrade skillpack to one that reads format {value}")


@dataclass(frozen=True)
class Manifest:
    """What a packed skill declares. Only ``files`` and ``digest`` are covered by the digest."""

    name: str
    description: str
    digest: str
    files: tuple[FileRecord, ...]
    programs: tuple[dict[str, Any], ...] = ()
    tools: tuple[dict[str, Any], ...] = ()
    allowances: tuple[str, ...] = ()
    format: str = FORMAT

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "name": self.name,
            "description": self.description,
            "digest": self.digest,
            "files": [f.to_dict() for f in self.files],
            "programs": list(self.programs),
            "tools": list(self.tools),
            "allowances": list(self.allowances),
        }

    def to_bytes(self) -> bytes:
        return canonical_json(self.to_dict())

    def file(self, path: str) -> FileRecord | None:
        for record in self.files:
            if record.path == path:
                return record
        return None

    def check_digest(self, *, source: str = "<manifest>") -> None:
        """Refuse a manifest whose file list does not hash to its digest."""
        actual = digest_records(self.files)
        if actual != self.digest:
            raise IntegrityError(
                f"manifest of '{self.name}' lists files that hash to {actual}, not to its "
                f"digest {self.digest}", path=source,
                hint="the manifest was altered; rebuild the archive from the skill")

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<manifest>") -> Manifest:
        """Build a manifest from decoded JSON, refusing anything malformed."""
        if not isinstance(data, dict):
            raise ArchiveError("manifest is not a JSON object", path=source)
        check_format(data.get("format"), what="manifest", source=source)
        if data.get("format") == FORMAT and set(data) != _KEYS:
            odd = sorted(set(data) ^ _KEYS)
            raise ArchiveError(f"manifest has unexpected or missing fields: {', '.join(odd)}",
                               path=source)
        name, description, digest = data.get("name"), data.get("description"), data.get("digest")
        if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
            raise ArchiveError(f"manifest has an invalid name {name!r}", path=source)
        if not isinstance(description, str):
            raise ArchiveError("manifest description is not a string", path=source)
        if not isinstance(digest, str) or not DIGEST_RE.fullmatch(digest):
            raise ArchiveError(f"manifest has an invalid digest {digest!r}", path=source)
        files_raw, programs, tools = data.get("files"), data.get("programs"), data.get("tools")
        allowances = data.get("allowances")
        if not isinstance(files_raw, list) or not all(isinstance(f, dict) for f in files_raw):
            raise ArchiveError("manifest 'files' is not a list of objects", path=source)
        try:
            files = tuple(FileRecord.from_dict(f) for f in files_raw)
        except (KeyError, ValueError) as exc:
            raise ArchiveError(f"manifest has an invalid file entry: {exc}", path=source) from None
        paths = [f.path for f in files]
        if paths != sorted(paths, key=lambda p: p.encode("utf-8")) or len(set(paths)) != len(paths):
            raise ArchiveError("manifest files are not unique and sorted by UTF-8 bytes",
                               path=source)
        for key, value in (("programs", programs), ("tools", tools)):
            if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                raise ArchiveError(f"manifest '{key}' is not a list of objects", path=source)
        if not isinstance(allowances, list) or not all(isinstance(a, str) for a in allowances):
            raise ArchiveError("manifest 'allowances' is not a list of paths", path=source)
        assert isinstance(programs, list) and isinstance(tools, list)
        return cls(name, description, digest, files, tuple(programs), tuple(tools),
                   tuple(allowances), str(data["format"]))

    @classmethod
    def from_bytes(cls, raw: bytes | memoryview, *, source: str = "<manifest>",
                   canonical: bool = False) -> Manifest:
        """Decode a manifest; with ``canonical``, also refuse any non-canonical byte form."""
        try:
            data = json.loads(bytes(raw).decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ArchiveError(f"manifest is not valid UTF-8 JSON: {exc}", path=source,
                               hint="the manifest was altered or truncated") from None
        manifest = cls.from_dict(data, source=source)
        if canonical and manifest.to_bytes() != bytes(raw):
            raise ArchiveError("manifest is not in canonical form", path=source,
                               hint="the manifest was altered after packing")
        return manifest
