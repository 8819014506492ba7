"""The manifest of a packed skill: ``<name>/.skillpack/manifest.json`` (SPEC section 3).

Canonical JSON (keys sorted, no insignificant whitespace, UTF-8, one trailing newline) with a
``format`` version ``MAJOR.MINOR``. It records the skill's name, description and digest, every
file's path, size, mode and BLAKE3 (and, from format 1.1, its SHA-256), the programs the skill
runs, its tools with their JSON Schemas, and the files it allows past the secret filter.

Versions (docs/FORMAT.md, "Format versions"): a new minor only adds fields a reader may ignore
without serving anything differently; a new major is anything else. So a reader reads every
minor of its major that is not newer than its own (contract 3 of docs/FORMAT.md: a manifest
from the future, a newer minor too, is refused by every reader).

The digest covers the files only. So a reader never trusts the other fields: `verify`
re-derives them from the verified SKILL.md and refuses any difference, and the runtime
derives what a skill says and does from SKILL.md itself.

Standard library only: the runtime imports this module.
"""

from __future__ import annotations

from skillpack._record import Record
from skillpack.errors import ArchiveError, FormatVersionError, IntegrityError
from skillpack.formats.digest import FileRecord, all_hex, digest_records, file_columns, is_digest

# Neither `json` (which imports `re`), `typing` nor `dataclasses` at run time: the runtime
# imports this module at cold start. `Manifest` is a `skillpack._record.Record`.
TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from skillpack.formats.digest import FileColumns

__all__ = [
    "FORMAT",
    "LOCK_FORMAT",
    "MANIFEST_FORMAT",
    "MANIFEST_PATH",
    "Manifest",
    "ManifestFields",
    "TwiceError",
    "canonical_json",
    "canonical_text",
    "check_format",
    "checked_fields",
    "is_text",
    "json_string",
    "load_json",
]

#: The bundle index's format (and the first version of every skillpack format).
FORMAT = "1.0"
#: The manifest's format: 1.1 added each file's ``sha256`` (hex) next to its ``blake3``.
#: Readers read 1.0 and 1.1; a newer 1.x is refused (contract 3).
MANIFEST_FORMAT = "1.1"
#: The lock file's format: 1.1 added each skill's description, tools (run templates) and
#: allowed-tools. Readers of 1.1 also read 1.0 locks.
LOCK_FORMAT = "1.1"
MANIFEST_PATH = ".skillpack/manifest.json"
_KNOWN = ("1.0", MANIFEST_FORMAT)  # the versions whose every field this reader knows
_KEYS = frozenset(
    {"format", "name", "description", "digest", "files", "programs", "tools", "allowances"}
)


class _JSONDefaults:
    """What `_json.make_scanner` reads of a decoder: the settings of ``json.loads(text)``."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"),
                      "NaN": float("nan")}.__getitem__


class TwiceError(ValueError):
    """A key given twice in one JSON object (`load_json` with ``once``): ``key``."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} is given twice in one object")
        self.key = key


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members, each key once."""
    made = dict(pairs)
    if len(made) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise TwiceError(key)
            seen.add(key)
    return made


class _JSONOnce(_JSONDefaults):
    """The same settings, each key of an object once (`_once`)."""

    object_pairs_hook = staticmethod(_once)  # type: ignore[assignment]


_scan: Callable[[str, int], tuple[Any, int]] | None = None
_scan_once: Callable[[str, int], tuple[Any, int]] | None = None


def _scanner(*, once: bool = False) -> Callable[[str, int], tuple[Any, int]]:
    global _scan, _scan_once
    try:
        from _json import make_scanner
    except ImportError:  # not CPython: the json module's own scanner
        import json

        made = json.JSONDecoder(object_pairs_hook=_once if once else None).raw_decode
    else:
        made = make_scanner(_JSONOnce if once else _JSONDefaults)  # type: ignore[arg-type,assignment]
    if once:
        _scan_once = made
    else:
        _scan = made
    return made


def load_json(text: str, *, once: bool = False) -> Any:
    """``json.loads(text)``: the same value, or the same error; with `once`, a key given
    twice in one object is a ValueError (JSON would keep the last).

    Valid JSON is decoded by the scanner ``json.loads`` itself uses (C ``_json``), without
    importing `json`, which imports `re`: about 6 ms of the runtime's cold start. Anything
    else goes to ``json.loads``, which raises its usual error.
    """
    scan = (_scan_once or _scanner(once=True)) if once else (_scan or _scanner())
    blank = " \t\n\r"  # what json.loads skips around the value
    try:
        value, end = scan(text, len(text) - len(text.lstrip(blank)))
    except Exception:  # StopIteration, JSONDecodeError, RecursionError...
        pass
    else:
        if end == len(text) or not text[end:].strip(blank):
            return value
    import json

    return json.loads(text, object_pairs_hook=_once if once else None)


def is_text(value: str) -> bool:
    """Whether `value` is text UTF-8 can carry: not so when it holds a lone surrogate, which
    a JSON (or YAML) escape such as ``"\\ud800"`` makes out of valid UTF-8 source."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def json_string(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)``, without importing `json` (which imports
    `re`: 5 ms and more of a first turn): the C encoder that call itself uses."""
    try:
        from _json import encode_basestring
    except ImportError:  # not CPython
        import json

        return json.dumps(text, ensure_ascii=False)
    quoted: str = encode_basestring(text)
    return quoted


def _string_encoder() -> Callable[[str], str]:
    """`json_string` as one callable, for many strings: the C encoder that
    ``json.dumps(text, ensure_ascii=False)`` uses (that call where there is none)."""
    try:
        from _json import encode_basestring
    except ImportError:  # not CPython
        import json

        return lambda text: json.dumps(text, ensure_ascii=False)
    encoder: Callable[[str], str] = encode_basestring
    return encoder


def _not_serializable(value: Any) -> Any:
    """What `json.JSONEncoder.default` does: refuse, with its words."""
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def canonical_text(data: Any) -> str:
    """`canonical_json` before its encoding and newline: sorted keys, compact separators.

    ``json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    allow_nan=False)``, by the C encoder that call itself uses (`_json.make_encoder`, made
    with the arguments `json.JSONEncoder` gives it), without importing `json`: `check` of
    a skill measures its manifest, and `json` costs its start-up about 2 ms. The same text,
    and the same errors (a value JSON has no form for, NaN, a circular reference)."""
    try:
        from _json import encode_basestring, make_encoder
    except ImportError:  # not CPython: the json module itself
        import json

        dumped: str = json.dumps(data, sort_keys=True, separators=(",", ":"),
                                 ensure_ascii=False, allow_nan=False)
        return dumped
    if isinstance(data, str):  # what `JSONEncoder.encode` does for a string
        quoted: str = encode_basestring(data)
        return quoted
    # a fresh encoder (and markers) each call: an error leaves its markers behind
    encode = make_encoder({}, _not_serializable, encode_basestring, None, ":", ",", True,
                          False, False)
    return "".join(encode(data, 0))


def canonical_json(data: Any) -> bytes:
    """The one byte form of ``data``: sorted keys, compact separators, UTF-8, newline."""
    return canonical_text(data).encode("utf-8") + b"\n"


def _files_text(files: tuple[FileRecord, ...], sha256: tuple[str, ...]) -> str | None:
    """The canonical JSON text of a manifest's files (`Manifest.to_dict`'s ``files``), an
    object a file with its keys in sorted order, each path encoded by the encoder
    `canonical_json` uses; None (then `canonical_json` does it all) unless every size is an
    int, every mode one of the two, every path a string, every BLAKE3 and SHA-256 a string
    of lower-case hex (which JSON writes as it is) and there is one SHA-256 a file or
    none."""
    if not files or len(sha256) not in (0, len(files)):
        return None
    modes = {f.mode for f in files}
    if (not modes <= {"100644", "100755"} or {type(f.size) for f in files} != {int}
            or {type(f.path) for f in files} | {type(f.blake3) for f in files}
            | {type(s) for s in sha256} != {str}
            or not all_hex("".join([f.blake3 for f in files]) + "".join(sha256))):
        return None
    quote = _string_encoder()
    if sha256:
        items = [f'{{"blake3":"{f.blake3}","mode":"{f.mode}","path":{quote(f.path)},'
                 f'"sha256":"{sha}","size":{int.__repr__(f.size)}}}'
                 for f, sha in zip(files, sha256, strict=True)]
    else:
        items = [f'{{"blake3":"{f.blake3}","mode":"{f.mode}","path":{quote(f.path)},'
                 f'"size":{int.__repr__(f.size)}}}' for f in files]
    return "[" + ",".join(items) + "]"


def check_format(value: Any, *, what: str, source: str, ours: str = FORMAT) -> None:
    """Refuse a ``MAJOR.MINOR`` format version of another major, or a newer minor than
    ``ours`` (`FORMAT` by default; `MANIFEST_FORMAT` for a manifest, `LOCK_FORMAT` for a lock
    file): contract 3, a version from the future is refused."""
    if value == ours:  # the common case, checked at every load: readable, same version
        return
    ours_major, ours_minor = (int(x) for x in ours.split("."))
    parts = value.split(".") if isinstance(value, str) else []
    # ASCII digits only (superscript, Arabic-Indic and fullwidth digits pass str.isdigit),
    # no sign, no blank, no leading zero: one spelling per version, so that '1.00' is never
    # read as 1.0 while it escapes the checks keyed on the exact version
    if len(parts) != 2 or not all(p.isascii() and p.isdigit() and (p == "0" or p[0] != "0")
                                  for p in parts):
        raise FormatVersionError(
            f"{what} has no readable format version (found {value!r}, expected like "
            f"'{ours}')", path=source, hint="it was not written by skillpack")
    major, minor = int(parts[0]), int(parts[1])
    if major != ours_major:
        raise FormatVersionError(
            f"{what} is format {value}; this skillpack reads format {ours_major}.x only",
            path=source, hint=f"use a skillpack that reads format {major}.x")
    if minor > ours_minor:
        raise FormatVersionError(
            f"{what} is format {value}, newer than this skillpack reads ({ours})",
            path=source, hint=f"upgrade skillpack to one that reads format {value}")


class ManifestFields(Record):
    """A manifest's fields as `checked_fields` checked them, the files as columns (the
    runtime checks every manifest of a bundle at load without a record per file)."""

    name: str
    description: str
    digest: str
    files: FileColumns
    programs: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...]
    allowances: tuple[str, ...]
    format: str
    sha256: tuple[str, ...] = ()  # each file's SHA-256 hex, in the files' order (from 1.1)


class Manifest(Record):
    """What a packed skill declares. Only ``files`` and ``digest`` are covered by the digest."""

    name: str
    description: str
    digest: str
    files: tuple[FileRecord, ...]
    programs: tuple[dict[str, Any], ...] = ()
    tools: tuple[dict[str, Any], ...] = ()
    allowances: tuple[str, ...] = ()
    format: str = MANIFEST_FORMAT
    #: each file's SHA-256 hex, in the order of ``files`` (format 1.1; empty in 1.0)
    sha256: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        files = [f.to_dict() for f in self.files]
        if self.sha256:
            for item, sha in zip(files, self.sha256, strict=True):
                item["sha256"] = sha
        return self._with_files(files)

    def _with_files(self, files: list[dict[str, Any]] | None) -> dict[str, Any]:
        """`to_dict` with ``files`` as given (None: without the key)."""
        fields = {
            # without SHA-256s it is a 1.0 manifest, whatever `format` says (a Manifest made
            # in code with the default format and no sha256)
            "format": (self.format if self.sha256 or self.format != MANIFEST_FORMAT
                       else "1.0"),
            "name": self.name,
            "description": self.description,
            "digest": self.digest,
            "files": files,
            "programs": list(self.programs),
            "tools": list(self.tools),
            "allowances": list(self.allowances),
        }
        if files is None:
            del fields["files"]
        return fields

    def to_bytes(self) -> bytes:
        """``canonical_json(self.to_dict())``: the same bytes, with the files' list written a
        line of text a file (`_files_text`) rather than a dict a file sorted and encoded
        (two thirds of the time on the corpus's manifests)."""
        files = _files_text(self.files, self.sha256)
        # before "files" in key order come "allowances", "description" and "digest": as
        # strings (quotes escaped inside), no text of theirs can hold ,"format": itself
        if files is None or not all(type(v) is str for v in (
                self.description, self.digest, *self.allowances)):
            return canonical_json(self.to_dict())
        head = self._with_files(None)
        text = canonical_text(head)  # its keys sorted: "files" goes after "digest"
        at = text.index(',"format":')
        return (text[:at] + ',"files":' + files + text[at:]).encode("utf-8") + b"\n"

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
        return cls.from_fields(checked_fields(data, source=source))

    @classmethod
    def from_fields(cls, fields: ManifestFields) -> Manifest:
        """The manifest of the fields `checked_fields` returned; its file records made now."""
        return cls(fields.name, fields.description, fields.digest,
                   tuple(map(FileRecord, *fields.files)), fields.programs, fields.tools,
                   fields.allowances, fields.format, tuple(fields.sha256))

    @classmethod
    def from_bytes(cls, raw: bytes | memoryview, *, source: str = "<manifest>",
                   canonical: bool = False) -> Manifest:
        """Decode a manifest; with ``canonical``, also refuse any non-canonical byte form."""
        try:
            data = load_json(str(raw, "utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise ArchiveError(f"manifest is not valid UTF-8 JSON: {exc}", path=source,
                               hint="the manifest was altered or truncated") from None
        manifest = cls.from_dict(data, source=source)
        if canonical and manifest.to_bytes() != bytes(raw):
            raise ArchiveError("manifest is not in canonical form", path=source,
                               hint="the manifest was altered after packing")
        return manifest


def checked_fields(data: Any, *, source: str = "<manifest>") -> ManifestFields:
    """A manifest's fields from decoded JSON, with every check `Manifest.from_dict` makes (it
    calls this), refusing anything malformed; the files as columns (`file_columns`).

    The runtime checks every manifest of a bundle at load with this, and makes a `Manifest`
    (and its thousands of file records) only when one is asked for (`Manifest.from_fields`).
    """
    if not isinstance(data, dict):
        raise ArchiveError("manifest is not a JSON object", path=source)
    version = data.get("format")
    # contract 3: a reader refuses a manifest from the future (a newer minor too)
    check_format(version, what="manifest", source=source, ours=MANIFEST_FORMAT)
    if version in _KNOWN and data.keys() != _KEYS:
        odd = sorted(set(data) ^ _KEYS)
        raise ArchiveError(f"manifest has unexpected or missing fields: {', '.join(odd)}",
                           path=source)
    name, description, digest = data.get("name"), data.get("description"), data.get("digest")
    if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
        raise ArchiveError(f"manifest has an invalid name {name!r}", path=source)
    if not isinstance(description, str):
        raise ArchiveError("manifest description is not a string", path=source)
    if not is_digest(digest):
        raise ArchiveError(f"manifest has an invalid digest {digest!r}", path=source)
    files_raw, programs, tools = data.get("files"), data.get("programs"), data.get("tools")
    allowances = data.get("allowances")
    if not isinstance(files_raw, list) or not (
        set(map(type, files_raw)) <= {dict} or all(isinstance(f, dict) for f in files_raw)
    ):
        raise ArchiveError("manifest 'files' is not a list of objects", path=source)
    try:
        files = file_columns(files_raw)
    except (KeyError, ValueError) as exc:
        raise ArchiveError(f"manifest has an invalid file entry: {exc}", path=source) from None
    paths = files[0]
    # ASCII strings sort as their UTF-8 bytes do (the common case, without encoding each)
    in_order = ("".join(paths).isascii() and paths == sorted(paths)) or paths == sorted(
        paths, key=lambda p: p.encode("utf-8"))
    if not in_order or len(set(paths)) != len(paths):
        raise ArchiveError("manifest files are not unique and sorted by UTF-8 bytes",
                           path=source)
    for key, value in (("programs", programs), ("tools", tools)):
        if not isinstance(value, list) or not (
            set(map(type, value)) <= {dict} or all(isinstance(v, dict) for v in value)
        ):
            raise ArchiveError(f"manifest '{key}' is not a list of objects", path=source)
    if not isinstance(allowances, list) or not (
        set(map(type, allowances)) <= {str} or all(isinstance(a, str) for a in allowances)
    ):
        raise ArchiveError("manifest 'allowances' is not a list of paths", path=source)
    assert isinstance(programs, list) and isinstance(tools, list)
    sha256: tuple[str, ...] = ()
    if version != "1.0":  # 1.1 and later: each file's SHA-256
        sha256 = _sha256_column(files_raw, paths, source)
    return ManifestFields(name, description, digest, files, tuple(programs), tuple(tools),
                          tuple(allowances), str(version), sha256)


def _sha256_column(items: list[dict[str, Any]], paths: list[str],
                   source: str) -> tuple[str, ...]:
    """Each file item's ``sha256``: 64 lower-case hex digits, refused otherwise."""
    try:
        column = [item["sha256"] for item in items]
    except KeyError:
        missing = next(p for p, item in zip(paths, items, strict=True) if "sha256" not in item)
        raise ArchiveError(f"manifest has an invalid file entry: {missing}: no sha256",
                           path=source) from None
    if not ((set(map(type, column)) <= {str} or all(isinstance(h, str) for h in column))
            and set(map(len, column)) <= {64}
            and all_hex("".join(column))):
        bad = next(p for p, h in zip(paths, column, strict=True)
                   if not (isinstance(h, str) and len(h) == 64 and all_hex(h)))
        raise ArchiveError(f"manifest has an invalid file entry: {bad}: invalid sha256 "
                           "(expected 64 hex digits)", path=source)
    return tuple(column)
