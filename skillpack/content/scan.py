"""The content check of a carried file: the secret rules (`skillpack.content.secret_rules`) over
its bytes, the members of a compressed asset inflated with the bomb caps of unpack
(`skillpack.content.inflate`), the older PEM-header check kept as one more rule, and the
allowances of the frontmatter (``PATH`` for a whole file, ``PATH#RULE-ID`` for one rule).

The walk (`skillpack.source.walk`), the file records (`skillpack.source.records`), the large-file
reader (`skillpack.source.readfile`) and `verify` all check content through here, so the same
bytes give the same refusals wherever they are read.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass

from skillpack.content import secret_rules
from skillpack.content.inflate import (
    DEFAULT_CAPS,
    GZIP_MAGIC,
    Budget,
    gunzip,
    read_tar,
    read_zip,
    sniff,
)
from skillpack.content.secret_rules import (
    Finding,
    StreamScan,
    scan_file,
    scan_member,
)
from skillpack.content.secrets import PRIVATE_KEY_HEADER_MAX, contains_private_key
from skillpack.errors import ArchiveError, Problem
from skillpack.formats import allowances

__all__ = [
    "ASSET_SUFFIXES",
    "CLEAN",
    "Allowances",
    "ContentScan",
    "ContentStream",
    "expand",
    "scan_content",
    "unused_rule_message",
]

#: Names whose members are inflated and scanned (the last name of a nested member counts).
ASSET_SUFFIXES = (".zip", ".gz", ".tgz", ".tar")

#: Rule id the older PEM-header check is reported under when the table's `private-key`
#: rule (which needs key material after the header) did not fire.
_PEM_RULE = "private-key"


def expand(path: str, data: bytes, budget: Budget | None = None
           ) -> Iterator[tuple[str, bytes]]:
    """The `secret_rules.Expand` hook: each file member (inner path, bytes) of the .zip,
    .tar, .tar.gz / .tgz or .gz asset at `path` (for a nested member, ``outer!inner``),
    inflated with `inflate.DEFAULT_CAPS`, counted against `budget` when one is given (one
    for a carried file and every archive nested in it: `scan_content`). A file whose bytes
    are not of the format its name says (a text pointer named ``.tar.gz``) yields nothing;
    a damaged archive or one past a cap raises `ArchiveError`."""
    name = path.rsplit("!", 1)[-1].rsplit("/", 1)[-1].lower()
    fmt = sniff(data)
    if name.endswith((".tar.gz", ".tgz")) and fmt == "tar.gz":
        members = read_tar(data, source=path, budget=budget)
    elif name.endswith(".gz") and data.startswith(GZIP_MAGIC):
        yield name[:-3] or "data", gunzip(data, source=path, budget=budget)
        return
    elif name.endswith(".zip") and fmt == "zip":
        members = read_zip(data, source=path, budget=budget)
    elif name.endswith(".tar") and fmt == "tar":
        members = read_tar(data, source=path, budget=budget)
    else:
        return
    for member in members:
        if member.kind == "file":
            yield member.path, member.data


def _is_asset(path: str) -> bool:
    return path.lower().endswith(ASSET_SUFFIXES)


@dataclass(frozen=True, slots=True)
class ContentScan:
    """What the content check found in one file: every finding of the rule table (those an
    allowance covers marked ``allowed``), whether the older PEM-header check fired with no
    `private-key` finding (``pem_header``), and the problems of an asset that could not be
    inflated within the caps (``unscannable``)."""

    findings: tuple[Finding, ...] = ()
    pem_header: bool = False
    unscannable: tuple[Problem, ...] = ()

    @property
    def refused(self) -> bool:
        return (self.pem_header or bool(self.unscannable)
                or any(not f.allowed for f in self.findings))

    @property
    def allowed_rules(self) -> frozenset[str]:
        """The rule ids an allowance let through in this file."""
        return frozenset(f.rule for f in self.findings if f.allowed)

    def problems(self, path: str) -> list[Problem]:
        """The refusals of the file at `path`, one a finding not allowed (code ``secret``)."""
        out = [secret_rules.problem(path, f) for f in self.findings if not f.allowed]
        if self.pem_header:
            out.append(Problem(
                "error", "secret",
                "holds a PEM private key block (-----BEGIN ... PRIVATE KEY-----); skillpack "
                "refuses to carry secrets. Remove the key, or leave the file out with "
                ".skillignore; if it is a harmless test key, allow it in the frontmatter "
                f'with metadata: {{skillpack-allow-secrets: "{path}"}}', path))
        out.extend(self.unscannable)
        return out


CLEAN = ContentScan()


def _finish(path: str, findings: list[Finding], pem_header: bool,
            allow: frozenset[str], unscannable: tuple[Problem, ...] = ()) -> ContentScan:
    if pem_header and any(f.rule == _PEM_RULE and not f.member for f in findings):
        pem_header = False  # the table's rule found it, with its line: that one is reported
    if pem_header and _PEM_RULE in allow:
        pem_header = False
    if not findings and not pem_header and not unscannable:
        return CLEAN
    return ContentScan(tuple(findings), pem_header, unscannable)


def _unscannable(path: str, err: ArchiveError) -> tuple[Problem, ...]:
    first = err.problems[0] if err.problems else None
    code = first.code if first is not None else "archive-corrupt"
    return (Problem(
        "error", code, f"cannot be scanned for secrets: {err.message}; {err.hint or ''} "
        "If it is trusted, allow the whole file in the frontmatter with metadata: "
        f'{{skillpack-allow-secrets: "{path}"}}', path),)


def scan_content(path: str, data: bytes, allow: frozenset[str] | None) -> ContentScan:
    """The content check of the carried file `path` holding `data`. `allow` is what the
    allowances let through for it: None for the whole file (nothing is checked), else the
    rule ids allowed."""
    if allow is None:
        return CLEAN
    if not _is_asset(path):  # one search for needles tells the rules and the PEM check
        findings, marker = scan_file(path, data, None, allow=allow)
        return _finish(path, findings, marker and contains_private_key(data), allow)
    budget = Budget(DEFAULT_CAPS, len(data))  # one for the file and all nested in it

    def expand_within(inner: str, inner_data: bytes) -> Iterator[tuple[str, bytes]]:
        return expand(inner, inner_data, budget)

    try:
        findings = scan_member(path, data, expand_within, allow=allow)
    except ArchiveError as err:
        findings = scan_member(path, data, None, allow=allow)
        return _finish(path, findings, contains_private_key(data), allow,
                       _unscannable(path, err))
    return _finish(path, findings, contains_private_key(data), allow)


class ContentStream:
    """`scan_content` for a file read in chunks: `feed` each chunk (copied: the caller's
    buffer is reused), then `finish`. Memory stays at one chunk and the scan's overlap, except
    for a compressed asset, whose bytes are kept to be inflated at the end."""

    def __init__(self, path: str, allow: frozenset[str] | None) -> None:
        self.path = path
        self.allow = allow
        self._scan = StreamScan() if allow is not None else None
        self._tail = b""
        self._pem = False
        self._marked = False  # a chunk, or what came before it, held ``PRIVATE KEY``
        self._whole: list[bytes] | None = [] if allow is not None and _is_asset(path) else None

    def feed(self, chunk: bytes | bytearray | memoryview) -> None:
        if self._scan is None:
            return
        view = memoryview(chunk)
        marked = self._scan.feed(view)  # False: no ``PRIVATE KEY`` in this chunk or before it
        if (not self._pem and marked) or self._whole is not None:
            data = bytes(view)  # copied only when needed: most chunks hold no marker
            if not self._pem and marked:  # a header near a seam is decided in a later window
                self._pem = contains_private_key(
                    self._tail + data[:PRIVATE_KEY_HEADER_MAX], final=False) or (
                    contains_private_key(data, final=False))
                self._marked = True
            if self._whole is not None:
                self._whole.append(data)
        self._tail = (self._tail + bytes(view[-PRIVATE_KEY_HEADER_MAX:]))[
            -PRIVATE_KEY_HEADER_MAX:]

    def finish(self) -> ContentScan:
        if self._scan is None or self.allow is None:
            return CLEAN
        if self._whole is not None:  # an asset: its members need the whole archive
            return scan_content(self.path, b"".join(self._whole), self.allow)
        findings = [Finding(f.rule, f.line, f.column, f.excerpt, f.member, f.encoding,
                            f.rule in self.allow) for f in self._scan.finish()]
        pem = self._pem or (self._marked and contains_private_key(self._tail))
        return _finish(self.path, findings, pem, self.allow)


@dataclass(frozen=True, slots=True)
class Allowances:
    """The frontmatter's ``skillpack-allow-secrets`` entries (`Skill.secret_allowances`),
    each stripped, ``./`` dropped and NFC-normalised: ``by_path`` maps a path to None (the
    whole file: neither the name check nor any content rule applies) or the rule ids allowed
    for it (``PATH#RULE-ID``: that content rule only)."""

    by_path: Mapping[str, frozenset[str] | None]

    @classmethod
    def parse(cls, raw: Iterable[str]) -> Allowances:
        return cls(allowances.parse(allowances.normalise(raw)))

    def allow(self, path: str) -> frozenset[str] | None:
        """What `scan_content` is given for the carried file `path`."""
        return self.by_path.get(path, frozenset())

    def whole(self, path: str) -> bool:
        """Whether `path` is allowed whole (it passes the name check too)."""
        return path in self.by_path and self.by_path[path] is None

    def entries(self, carried: Collection[str]) -> tuple[str, ...]:
        """What is recorded (manifest ``allowances``, `FileSet.allowed`): for each entry
        naming a carried file, a bare path as is, else ``PATH#RULE-ID`` a rule, sorted by
        UTF-8 bytes."""
        return allowances.recorded(self.by_path, carried)

    def missing(self, carried: Collection[str]) -> list[str]:
        """The allowed paths the skill does not carry."""
        return [path for path in self.by_path if path not in carried]

    def unused(self, used: Mapping[str, frozenset[str]]) -> list[str]:
        """The ``PATH#RULE-ID`` entries whose rule found nothing in their file, given the
        allowed rules each scanned file's check used (`ContentScan.allowed_rules`); only the
        paths in `used` are looked at."""
        return [f"{path}#{rule_id}" for path, rules in self.by_path.items()
                if rules is not None and path in used
                for rule_id in sorted(rules - used[path])]


def unused_rule_message(entry: str) -> str:
    """The `allow-unused` message of a ``PATH#RULE-ID`` entry whose rule finds nothing."""
    rule_id = entry.rpartition("#")[2]
    return (f"skillpack-allow-secrets allows {entry!r}, but rule {rule_id!r} finds nothing in "
            "that file; remove the entry (or fix the rule id)")
