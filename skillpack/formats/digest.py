"""The skill digest, version 1, and the bundle digest (SPEC section 2); reads no file.

A `FileRecord` is one line of the digest (mode, size, BLAKE3, path). `digest_records` and
`digest_columns` compute a skill's digest from its records (the build side from the files it
hashed, the runtime from a manifest it checks), `bundle_digest` a set of skills' digest.

Standard library only at import (the runtime imports this module at cold start): blake3 is
imported by the functions that hash, `re` only for `DIGEST_RE`.
"""

from __future__ import annotations

from skillpack._record import Record
from skillpack.errors import ArchiveError

# Neither `re`, `typing` nor `dataclasses` at run time: the runtime imports this module at cold
# start (`FileRecord` is a `skillpack._record.Record`; DIGEST_RE is compiled on first use).
TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    import re
    from collections.abc import Iterable
    from typing import Any, TypeAlias, TypeGuard

    #: File records as four columns: paths, modes, sizes and BLAKE3 hex digests (the bulk
    #: check of a manifest's files at load, `file_columns`, makes no record per file).
    FileColumns: TypeAlias = tuple[list[str], list[str], list[int], list[str]]

__all__ = [
    "BUNDLE_HEADER",
    "DIGEST_HEADER",
    "DIGEST_RE",
    "FileRecord",
    "all_hex",
    "bundle_digest",
    "digest_columns",
    "digest_records",
    "file_columns",
    "is_digest",
]

DIGEST_HEADER = b"skillpack-digest-v1\n"
BUNDLE_HEADER = b"skillpack-bundle-v1\n"
_DIGEST_PATTERN = r"blake3:[0-9a-f]{64}"  # what `is_digest` accepts
_HEX = b"0123456789abcdef"
_MODES = ("100644", "100755")


if TYPE_CHECKING:
    DIGEST_RE: re.Pattern[str]  # compiled by __getattr__ below on first use
else:

    def __getattr__(name: str) -> Any:
        if name == "DIGEST_RE":
            import re

            globals()[name] = pattern = re.compile(_DIGEST_PATTERN)
            return pattern
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def all_hex(text: str) -> bool:
    """Whether `text` is lower-case hex digits only (``[0-9a-f]*``)."""
    return text.isascii() and not text.encode("ascii").translate(None, _HEX)


def is_digest(value: object) -> TypeGuard[str]:
    """Whether `value` is a skillpack digest: ``blake3:`` and 64 lower-case hex digits (what
    ``DIGEST_RE.fullmatch`` accepts, without importing `re`)."""
    return (isinstance(value, str) and len(value) == 71 and value.startswith("blake3:")
            and all_hex(value[7:]))


class FileRecord(Record):
    """One line of the digest: a carried file's path, mode, size and BLAKE3."""

    path: str
    mode: str
    size: int
    blake3: str

    def line(self) -> str:
        return f"{self.mode} {self.size} {self.blake3} {self.path}\n"

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "mode": self.mode, "size": self.size, "blake3": self.blake3}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileRecord:
        path, mode, size, digest_hex = data["path"], data["mode"], data["size"], data["blake3"]
        if not isinstance(path, str) or not path or "\n" in path:
            raise ValueError(f"invalid file path {path!r}")
        if mode not in _MODES:
            raise ValueError(f"{path}: invalid mode {mode!r} (expected 100644 or 100755)")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"{path}: invalid size {size!r}")
        if not isinstance(digest_hex, str) or len(digest_hex) != 64 or not all_hex(digest_hex):
            raise ValueError(f"{path}: invalid blake3 {digest_hex!r} (expected 64 hex digits)")
        return cls(path=path, mode=mode, size=size, blake3=digest_hex)


def file_columns(items: list[dict[str, Any]]) -> FileColumns:
    """The fields of ``FileRecord.from_dict(item)`` for each item, as columns: paths, modes,
    sizes, BLAKE3s. An item ``from_dict`` refuses raises the very error it raises.

    The runtime reads every manifest of a bundle at load (thousands of records): each field of
    the whole list is checked at once, at a fraction of the cost of checking record by record,
    and no record is made (``map(FileRecord, *columns)`` makes them). Anything the bulk check
    cannot vouch for goes through ``from_dict``, item by item.
    """
    try:
        paths = [item["path"] for item in items]
        modes = [item["mode"] for item in items]
        sizes = [item["size"] for item in items]
        hexes = [item["blake3"] for item in items]
        vouched = bool(items) and (
            "" not in paths
            and "\n".join(paths).count("\n") == len(paths) - 1  # no path holds a newline
            and set(modes) <= {"100644", "100755"}
            and set(map(type, sizes)) == {int}  # not bool, not a subclass
            and min(sizes) >= 0
            and set(map(len, hexes)) == {64}
            and all_hex("".join(hexes))
        )
    except (KeyError, TypeError):
        vouched = False
    if vouched:
        return paths, modes, sizes, hexes
    records = [FileRecord.from_dict(item) for item in items]
    return ([r.path for r in records], [r.mode for r in records], [r.size for r in records],
            [r.blake3 for r in records])


def _utf8(path: str) -> bytes:
    return path.encode("utf-8")


def digest_records(records: Iterable[FileRecord]) -> str:
    """The digest v1 of a file set's records (SPEC section 2)."""
    ordered = list(records)
    return digest_columns([r.path for r in ordered], [r.mode for r in ordered],
                          [r.size for r in ordered], [r.blake3 for r in ordered])


def digest_columns(paths: list[str], modes: list[str], sizes: list[int], hexes: list[str], *,
                   ordered: bool = False) -> str:
    """The digest v1 of file records given as columns (see `file_columns`): one line per
    record, as `FileRecord.line` writes it, sorted by the UTF-8 bytes of the paths.
    `ordered` says the caller checked that they are (`skillpack.formats.manifest.checked_fields`
    does for a manifest's files): they are not looked at again."""
    from blake3 import blake3

    rows: Iterable[tuple[str, int, str, str]] = zip(modes, sizes, hexes, paths, strict=True)
    # ASCII paths sort by their UTF-8 bytes as strings do: a sorted list is left as it is
    # (sorted() is stable, so equal paths would keep their order either way).
    if not (ordered or ("".join(paths).isascii() and paths == sorted(paths))):
        rows = sorted(rows, key=lambda row: _utf8(row[3]))
    lines = "".join([f"{mode} {size} {hex_} {path}\n" for mode, size, hex_, path in rows])
    return "blake3:" + blake3(DIGEST_HEADER + lines.encode("utf-8")).hexdigest()


def bundle_digest(pairs: Iterable[tuple[str, str]]) -> str:
    """The digest of a set of skills, from (name, digest) pairs (SPEC section 2)."""
    from blake3 import blake3

    items = sorted(pairs, key=lambda pair: _utf8(pair[0]))
    names = [name for name, _ in items]
    for name, skill_digest in items:
        if name.split() != [name]:  # empty, or holds whitespace (what str.isspace() calls so)
            raise ArchiveError(f"invalid skill name {name!r} in a bundle")
        if not is_digest(skill_digest):
            raise ArchiveError(f"invalid digest {skill_digest!r} for skill {name!r}")
    if len(set(names)) != len(names):
        duplicates = sorted({n for n in names if names.count(n) > 1})
        raise ArchiveError(f"a bundle holds two skills named {', '.join(duplicates)}")
    lines = "".join([f"{skill_digest} {name}\n" for name, skill_digest in items])
    return "blake3:" + blake3(BUNDLE_HEADER + lines.encode()).hexdigest()


