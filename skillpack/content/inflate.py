"""Bounded decompression of archives from elsewhere: zip, gzip, tar and tar.gz, from bytes.

Every reader takes the archive's bytes and a :class:`Caps` record, and returns the members
as :class:`Member` records (files and folders, in archive order) or raises one
:class:`~skillpack.errors.ArchiveError` listing every problem found.

The caps are checked while inflating, never from the sizes an archive declares:

* ``total``: bytes produced by decompression, counted as they come out of zlib (for a
  tar.gz: every byte of the inflated tar stream, its 512-byte headers included);
* ``members``: entries (files and folders) of the archive, counted as they are listed;
* ``ratio``: bytes produced per byte of the archive given, over the whole archive.

zlib is asked for at most :data:`CHUNK` bytes at a time (``max_length``), so a reader stops
at most one chunk past a cap however small the input: a few kilobytes of gzip that would
inflate to gigabytes cost what the cap allows, not what the bomb asks for.

Refused, each named with its member: unsafe names (absolute, ``..``, ``.`` or empty segments,
backslashes, drive letters, control characters, invalid UTF-8), symbolic and hard links,
devices, fifos and other special entries, duplicate names and names equal after NFC
normalisation or case folding (or a file and a folder sharing a name), encrypted zip
members, compression methods other than STORED and DEFLATE, and damaged data (bad CRC,
truncated streams, lying sizes). A leading ``./`` (as ``tar -C dir .`` writes) is dropped.
"""

from __future__ import annotations

import io
import stat
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal, TypeAlias

from skillpack.errors import ArchiveError, Problem
from skillpack.formats.paths import MAX_NAME, collision_key, collision_reason, name_problem

Kind: TypeAlias = Literal["file", "dir"]
Format: TypeAlias = Literal["zip", "tar", "tar.gz"]

__all__ = [
    "CHUNK",
    "DEFAULT_CAPS",
    "Budget",
    "Caps",
    "Member",
    "gunzip",
    "read_archive",
    "read_tar",
    "read_zip",
    "sniff",
]

CHUNK = 1 << 16  # the most zlib is asked to produce in one call
FEED = 1 << 14  # compressed bytes handed to zlib at a time
GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_HINT = "this archive cannot be brought in safely; ask its publisher for a clean one"
_CAP_HINT = ("if the archive is trusted and really this large, raise the cap "
             "(--max-total, --max-members, --max-ratio; Caps(...) from Python)")


@dataclass(frozen=True, slots=True)
class Caps:
    """Limits on what reading one archive may cost; each must be a positive integer.

    ``total``: bytes produced by decompression (default 1 GiB). ``members``: entries listed
    (default 10,000). ``ratio``: bytes produced per byte of archive (default 200).
    """

    total: int = 1 << 30
    members: int = 10_000
    ratio: int = 200

    def __post_init__(self) -> None:
        for field, value in (("total", self.total), ("members", self.members),
                             ("ratio", self.ratio)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Caps.{field} must be a positive integer, not {value!r}")

    def to_dict(self) -> dict[str, int]:
        return {"members": self.members, "ratio": self.ratio, "total": self.total}

    @classmethod
    def from_dict(cls, data: dict[str, int]) -> Caps:
        return cls(**{k: data[k] for k in ("total", "members", "ratio") if k in data})


DEFAULT_CAPS = Caps()


@dataclass(frozen=True, slots=True)
class Member:
    """One entry of an archive: its checked name, bytes (b"" for a folder), execute bit."""

    path: str  # '/'-separated, no trailing '/', leading './' dropped
    data: bytes
    executable: bool
    kind: Kind


class _CapExceeded(Exception):
    """Raised from inside a stream (tarfile reading through it) when a cap is passed."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


class Budget:
    """Counts bytes produced by decompression against the total and ratio caps of `caps`,
    the ratio over `size` bytes. A reader given one (``budget=``) counts against it instead
    of a budget of its own: the secret scan of a carried file passes one to every archive
    nested in it, at any depth, so that nesting cannot multiply the caps."""

    def __init__(self, caps: Caps, size: int) -> None:
        self.caps = caps
        self.size = size
        self.used = 0
        self.limit = min(caps.total, caps.ratio * max(size, 1))

    def room(self) -> int:
        """How many more bytes may be produced before a cap is passed (plus one, to see it)."""
        return max(self.limit - self.used, 0) + 1

    def take(self, n: int, member: str | None) -> None:
        self.used += n
        if self.used <= self.limit:
            return
        if self.used > self.caps.total:
            message = (f"decompresses to more than the cap of {self.caps.total} bytes "
                       f"(stopped after {self.used} bytes)")
            code = "archive-too-large"
        else:
            message = (f"decompresses to more than {self.caps.ratio} times the archive's "
                       f"{self.size} bytes (stopped after {self.used} bytes): a "
                       "decompression bomb")
            code = "archive-ratio"
        raise _CapExceeded(Problem("error", code, message, member))


class _Problems:
    """Problems collected while reading, and the name checks shared by zip and tar."""

    def __init__(self, source: str, caps: Caps) -> None:
        self.source = source
        self.caps = caps
        self.items: list[Problem] = []
        self.count = 0
        self.seen: dict[str, tuple[str, Kind]] = {}  # collision key -> (first name, kind)

    def add(self, code: str, message: str, member: str | None) -> None:
        self.items.append(Problem("error", code, message, member))

    def listed(self) -> None:
        """One more entry was listed: refuse (now, stop reading) past the member cap."""
        self.count += 1
        if self.count > self.caps.members:
            raise _CapExceeded(Problem(
                "error", "archive-too-many",
                f"has more than the cap of {self.caps.members} members", None))

    def listed_past(self, why: str) -> None:
        """Refuse (now, stop reading) an archive known to list more entries than the cap."""
        raise _CapExceeded(Problem(
            "error", "archive-too-many",
            f"has more than the cap of {self.caps.members} members ({why})", None))

    def name(self, raw: str, is_dir: bool) -> str | None:
        """The member's checked path, or None (and a problem recorded) when it is unsafe."""
        name = raw
        while name.startswith("./"):
            name = name[2:]
        if is_dir:
            name = name[:-1] if name.endswith("/") else name
            if name in ("", "."):
                return None  # the archive's own root folder: nothing to check or create
        try:
            size = len(name.encode("utf-8"))
        except UnicodeEncodeError:
            self.add("archive-unsafe-name", "name is not valid UTF-8", _shown(raw))
            return None
        why = name_problem(name)
        if why is not None and size > MAX_NAME:  # too long: shown by its start
            self.add("archive-unsafe-name", why, _shown(raw[:64]) + "...")
            return None
        if why is not None:
            self.add("archive-unsafe-name", why, raw)
            return None
        self.register(name, "dir" if is_dir else "file", raw)
        return name

    def register(self, name: str, kind: Kind, raw: str) -> None:
        parts = name.split("/")
        for depth in range(1, len(parts)):
            self._claim("/".join(parts[:depth]), "dir", raw)
        self._claim(name, kind, raw)

    def _claim(self, name: str, kind: Kind, raw: str) -> None:
        key = collision_key(name)
        prior = self.seen.get(key)
        if prior is None:
            self.seen[key] = (name, kind)
            return
        first, first_kind = prior
        if kind == "dir" and first_kind == "dir" and first == name:
            return  # the same folder, met again
        if kind != first_kind:
            self.add("archive-collision",
                     f"a file and a folder share the name {first!r}"
                     + ("" if first == name else f" (as {name!r})"), raw)
        elif first == name:
            self.add("archive-duplicate", f"duplicate name (appears twice): {name!r}", raw)
        else:
            self.add("archive-collision", collision_reason(first, name), raw)

    def error(self, extra: Iterable[Problem] = ()) -> ArchiveError:
        problems = [*self.items, *extra]
        first = problems[0]
        where = f"member {first.file!r}: " if first.file else ""
        others = len(problems) - 1
        more = f" (and {others} more problem{'s' if others > 1 else ''})" if others else ""
        hint = _CAP_HINT if first.code in ("archive-too-large", "archive-too-many",
                                           "archive-ratio") else _HINT
        return ArchiveError(f"refused: {where}{first.message}{more}", path=self.source,
                            hint=hint, problems=problems)


def _shown(name: str) -> str:
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def sniff(data: bytes) -> Format | None:
    """The archive format of `data` from its first bytes, or None when it is none of ours."""
    if data.startswith(ZIP_MAGICS):
        return "zip"
    if data.startswith(GZIP_MAGIC):
        return "tar.gz"
    if len(data) >= 512 and data[257:262] == b"ustar":
        return "tar"
    return None


def read_archive(data: bytes, caps: Caps = DEFAULT_CAPS, *,
                 source: str = "<archive>") -> tuple[Format, tuple[Member, ...]]:
    """Read a zip, tar or tar.gz (told apart by their first bytes); return format, members."""
    fmt = sniff(data)
    if fmt == "zip":
        return fmt, read_zip(data, caps, source=source)
    if fmt is not None:
        return fmt, read_tar(data, caps, source=source)
    message = "not a zip, tar or tar.gz archive (unknown first bytes)"
    raise ArchiveError(message, path=source, hint="give a .skill, .zip, .tar or .tar.gz file",
                       problems=[Problem("error", "archive-format", message)])


# -- zip ---------------------------------------------------------------------------------------

def read_zip(data: bytes, caps: Caps = DEFAULT_CAPS, *, source: str = "<archive>",
             budget: Budget | None = None) -> tuple[Member, ...]:
    """Every member of the zip `data` (STORED or DEFLATE), checked, within `caps`.

    Names, kinds and flags of every entry are checked first (all problems reported at once);
    only then is anything inflated.
    """
    budget = budget or Budget(caps, len(data))
    found = _Problems(source, budget.caps)
    try:
        _zip_count(data, found)  # before zipfile builds an object for every entry
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            for _ in infos:
                found.listed()
            wanted = [(info, name) for info in infos
                      if (name := _zip_entry(info, found)) is not None]
            _zip_overlaps(data, infos, archive.start_dir, found)
            members = [] if found.items else [
                Member(name, b"", False, "dir") if info.is_dir()
                else Member(name, _inflate_zip(data, info, budget), _zip_exec(info), "file")
                for info, name in wanted]
    except _CapExceeded as exc:
        raise found.error([exc.problem]) from None
    except _Corrupt as exc:
        raise found.error([Problem("error", "archive-corrupt", str(exc), exc.member)]) from None
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, OverflowError,
            NotImplementedError, RuntimeError) as exc:
        raise found.error([Problem("error", "archive-corrupt",
                                   f"damaged or unreadable zip: {exc}", None)]) from None
    if found.items:
        raise found.error()
    return tuple(members)


_END = struct.Struct("<4sHHHHIIH")  # the end of central directory record
_END64 = struct.Struct("<4sQHHIIQQQQ")  # the Zip64 one (its size field counts from `need`)
_ENTRY = struct.Struct("<4s24xHHH12x")  # a central entry: its name, extra, comment lengths


def _zip_count(data: bytes, found: _Problems) -> None:
    """Refuse a zip of more entries than the member cap from its end record's counts, then
    from a walk over its central directory that stops at the cap (the counts may lie): the
    work is the cap's, never the entries'. An end record that cannot be read is left to
    zipfile, which says so."""
    cap = found.caps.members
    end = data.rfind(b"PK\x05\x06", max(0, len(data) - _END.size - 0xFFFF))
    if end < 0 or len(data) - end < _END.size:
        return
    _, _, _, on_disk, total, size, _, _ = _END.unpack_from(data, end)
    cd_end = end
    locator = end - 20
    if locator >= 0 and data[locator:locator + 4] == b"PK\x06\x07":
        at = data.rfind(b"PK\x06\x06", max(0, locator - _END64.size - 0xFFFF), locator)
        if at >= 0 and locator - at >= _END64.size:
            _, _, _, _, _, _, on_disk64, total64, size64, _ = _END64.unpack_from(data, at)
            on_disk, total, size, cd_end = on_disk64, total64, size64, at
    if max(on_disk, total) > cap:
        found.listed_past(f"{max(on_disk, total)} entries, says its end record")
    pos, count = max(cd_end - size, 0), 0
    while pos + _ENTRY.size <= cd_end:
        sig, name, extra, comment = _ENTRY.unpack_from(data, pos)
        if sig != b"PK\x01\x02":
            return
        count += 1
        if count > cap:
            found.listed_past("its central directory lists more")
        pos += _ENTRY.size + name + extra + comment


def _zip_overlaps(data: bytes, infos: list[zipfile.ZipInfo], start_dir: int,
                  found: _Problems) -> None:
    """Refuse members whose bytes (local header, name, extra field, data) overlap another's
    or the central directory: a "non-recursive" zip bomb has every entry share one member's
    data. (A data descriptor after a member is not counted: it can only hide an overlap of
    at most 16 bytes, never make one.)"""
    spans = []
    for info in infos:
        start = info.header_offset
        head = data[start:start + 30]
        if len(head) < 30:
            continue  # zipfile says the member is truncated
        name, extra = struct.unpack_from("<HH", head, 26)
        spans.append((start, start + 30 + name + extra + info.compress_size, info.filename))
    spans.sort()
    reach, first = 0, ""  # the furthest end so far, and the member it ends
    for start, end, name in spans:
        if start < reach:
            found.add("archive-overlap", f"its bytes overlap those of member {first!r} "
                      "(overlapping members are refused: a zip bomb shares one member's data "
                      "among many entries)", name)
        if end > reach:
            reach, first = end, name
    if reach > start_dir:
        found.add("archive-overlap", "its bytes overlap the central directory", first)


def _zip_entry(info: zipfile.ZipInfo, found: _Problems) -> str | None:
    """The checked name of a zip entry worth reading, or None (and problems recorded). The
    name as stored (`zipfile` cuts ``filename`` at a NUL, which an extractor may not)."""
    raw = info.orig_filename
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    refused = False
    if kind == stat.S_IFLNK:
        found.add("archive-link", "symbolic link (links are refused)", raw)
        refused = True
    elif kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        found.add("archive-special", f"not a regular file (Unix mode {mode:06o}: a device, "
                  "fifo or socket)", raw)
        refused = True
    elif kind == stat.S_IFDIR and not info.is_dir():
        found.add("archive-special", "folder mode on an entry that is not a folder", raw)
        refused = True
    if info.flag_bits & 0x1:
        found.add("archive-encrypted", "encrypted member (encrypted archives are refused)", raw)
        refused = True
    elif info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        found.add("archive-method", f"compression method {info.compress_type} (only STORED "
                  "and DEFLATE are read)", raw)
        refused = True
    second = _second_name(info.extra, raw)
    if second is not None:
        found.add("archive-unsafe-name", second, _shown(raw))
        refused = True
    name = found.name(raw, info.is_dir())
    return None if refused else name


#: The Info-ZIP Unicode Path extra field: version 1, the CRC-32 of the header's name, then
#: the name in UTF-8, which Info-ZIP's unzip writes in place of the header's name.
_UNICODE_PATH = 0x7075


def _second_name(extra: bytes, name: str) -> str | None:
    """Why a member's extra field (central or local) gives it a second name, or None.

    Info-ZIP's unzip names a member by its Unicode Path field when the field's CRC-32 is the
    header name's: a member shown here as ``notes.md`` would be written as ``.env`` or as a
    second ``SKILL.md``. A field naming the member as its header does (what 7-Zip and Info-ZIP
    zip write for non-ASCII names) is harmless; any other, or one that cannot be read, is
    refused (zipfile ignores the field)."""
    at = 0
    while at + 4 <= len(extra):
        kind, size = struct.unpack_from("<HH", extra, at)
        body = extra[at + 4:at + 4 + size]
        at += 4 + size
        if kind != _UNICODE_PATH:
            continue
        try:
            other = body[5:].decode("utf-8") if len(body) >= 5 and body[0] == 1 else None
        except UnicodeDecodeError:
            other = None
        if other is None:
            return ("an Info-ZIP Unicode Path field (0x7075) that cannot be read: an unzip "
                    "may name the member otherwise")
        if other != name:
            return (f"a second name in an Info-ZIP Unicode Path field (0x7075), {other!r}, "
                    "which unzip writes it as")
    return None


def _zip_exec(info: zipfile.ZipInfo) -> bool:
    return bool((info.external_attr >> 16) & stat.S_IXUSR)


def _inflate_zip(data: bytes, info: zipfile.ZipInfo, budget: Budget) -> bytes:
    """A member's bytes, from the whole of its compressed span as the central directory
    sizes it: STORED, the span itself (its two sizes equal); DEFLATE, one deflate stream
    that fills the span exactly and inflates to the declared size, produced CHUNK at a time
    against the budget. Then its CRC-32. A member that says less than its data holds is
    refused, not cut short: an extractor that reads the local header or inflates to the
    stream's end (Info-ZIP's unzip) would write the rest, unchecked."""
    member = info.filename
    start = info.header_offset
    head = data[start:start + 30]
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        raise _Corrupt("no local header where the central directory says", member)
    flags, = struct.unpack_from("<H", head, 6)
    name_len, extra_len = struct.unpack_from("<HH", head, 26)
    raw_name = data[start + 30:start + 30 + name_len]
    try:
        local = raw_name.decode("utf-8" if flags & 0x800 else "cp437")
    except UnicodeDecodeError:
        local = None
    if local != info.orig_filename:
        raise _Corrupt("its local header names another file than its central entry", member)
    second = _second_name(data[start + 30 + name_len:start + 30 + name_len + extra_len], local)
    if second is not None:
        raise _Corrupt(f"its local header holds {second}", member)
    begin = start + 30 + name_len + extra_len
    span = data[begin:begin + info.compress_size]
    if len(span) != info.compress_size:
        raise _Corrupt("truncated member", member)
    parts: list[bytes] = []
    if info.compress_type == zipfile.ZIP_STORED:
        if info.compress_size != info.file_size:
            raise _Corrupt(f"a STORED member of {info.compress_size:,} bytes declares "
                           f"{info.file_size:,}", member)
        for at in range(0, len(span), CHUNK):
            budget.take(min(CHUNK, len(span) - at), member)
        parts.append(span)
    else:
        inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        pending, total = span, 0
        try:
            while not inflater.eof:
                out = inflater.decompress(pending, min(CHUNK, budget.room()))
                pending = inflater.unconsumed_tail
                if not out and not pending:
                    break  # every byte of the span read, and the stream goes on
                total += len(out)
                if total > info.file_size:
                    raise _Corrupt(f"inflates past its declared {info.file_size:,} bytes",
                                   member)
                budget.take(len(out), member)
                parts.append(out)
        except zlib.error as exc:
            raise _Corrupt(f"damaged member: {exc}", member) from None
        if not inflater.eof:
            raise _Corrupt("its deflate stream does not end within its compressed size",
                           member)
        if pending or inflater.unused_data:
            raise _Corrupt("bytes follow its deflate stream within its compressed size",
                           member)
        if total != info.file_size:
            raise _Corrupt(f"inflates to {total:,} bytes, not the {info.file_size:,} it "
                           "declares", member)
    body = b"".join(parts)
    if zlib.crc32(body) != info.CRC:
        raise _Corrupt("its CRC-32 does not match its bytes", member)
    return body


# -- gzip --------------------------------------------------------------------------------------

class _Gunzip(io.RawIOBase):
    """The inflated bytes of a gzip stream (members concatenated), counted by a budget.

    Input is handed to zlib :data:`FEED` bytes at a time, output asked for at most the room
    left under the caps; concatenated gzip members count against ``Caps.members``.
    """

    def __init__(self, data: bytes, budget: Budget) -> None:
        self.view = memoryview(data)
        self.pos = 0
        self.budget = budget
        self.inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
        self.pending = b""  # compressed input handed to zlib but not consumed yet
        self.done = False
        self.streams = 1

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        out = self._next(len(buffer))
        buffer[: len(out)] = out
        return len(out)

    def _next(self, wanted: int) -> bytes:
        while not self.done:
            if not self.pending:
                self.pending = bytes(self.view[self.pos : self.pos + FEED])
                self.pos += len(self.pending)
                if not self.pending:
                    raise _Corrupt("truncated gzip stream (it ends before its trailer)")
            out = self.inflater.decompress(self.pending, min(wanted, self.budget.room()))
            self.pending = self.inflater.unconsumed_tail
            if self.inflater.eof:
                self._next_member()
            if out:
                self.budget.take(len(out), None)
                return out
        return b""

    def _next_member(self) -> None:
        # All input after the member's end is in unused_data; unconsumed_tail may still
        # hold a copy of it when the last call was cut short by max_length (so it was
        # counted twice: 40 bytes of "trailing data" for bgzip's 20-byte end block)
        start = self.pos - len(self.inflater.unused_data)
        self.pending = b""
        rest = self.view[start:]
        if rest[:2] == GZIP_MAGIC:
            self.streams += 1
            if self.streams > self.budget.caps.members:
                raise _CapExceeded(Problem(
                    "error", "archive-too-many",
                    f"has more than the cap of {self.budget.caps.members} gzip members "
                    "joined end to end", None))
            self.pos = start
            self.inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
            return
        self.done = True
        if bytes(rest).strip(b"\x00"):
            raise _Corrupt(f"{len(rest)} bytes of trailing data after the gzip stream")


class _Counted(io.RawIOBase):
    """A plain tar's bytes, counted by the budget like an inflated stream's."""

    def __init__(self, data: bytes, budget: Budget) -> None:
        self.view = memoryview(data)
        self.pos = 0
        self.budget = budget

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        n = min(len(buffer), len(self.view) - self.pos, CHUNK)
        buffer[:n] = self.view[self.pos : self.pos + n]
        self.pos += n
        self.budget.take(n, None)
        return n


class _Corrupt(Exception):
    """Damaged input found inside a stream (tarfile reading through it passes it on)."""

    def __init__(self, message: str, member: str | None = None) -> None:
        super().__init__(message)
        self.member = member


def gunzip(data: bytes, caps: Caps = DEFAULT_CAPS, *, source: str = "<archive>",
           budget: Budget | None = None) -> bytes:
    """The inflated bytes of the gzip `data` (several members are joined), within `caps`."""
    budget = budget or Budget(caps, len(data))
    found = _Problems(source, budget.caps)
    stream = _Gunzip(data, budget)
    parts: list[bytes] = []
    try:
        if not data.startswith(GZIP_MAGIC):
            raise _Corrupt("not a gzip stream (no 1f 8b magic)")
        while chunk := stream.read(CHUNK):
            parts.append(chunk)
    except _CapExceeded as exc:
        raise found.error([exc.problem]) from None
    except (_Corrupt, zlib.error) as exc:
        raise found.error([Problem("error", "archive-corrupt", f"damaged gzip: {exc}",
                                   None)]) from None
    return b"".join(parts)


# -- tar ---------------------------------------------------------------------------------------

def read_tar(data: bytes, caps: Caps = DEFAULT_CAPS, *, source: str = "<archive>",
             budget: Budget | None = None) -> tuple[Member, ...]:
    """Every member of the tar or tar.gz `data` (stream mode, one pass), within `caps`."""
    budget = budget or Budget(caps, len(data))
    found = _Problems(source, budget.caps)
    raw: io.RawIOBase = (_Gunzip(data, budget) if data.startswith(GZIP_MAGIC)
                         else _Counted(data, budget))
    members: list[Member] = []
    try:
        with tarfile.open(fileobj=io.BufferedReader(raw, CHUNK), mode="r|",
                          tarinfo=_StrictTarInfo) as archive:
            for entry in _entries(archive, found):
                name = _tar_entry(entry, found)
                if name is None:
                    continue
                if entry.isdir():
                    members.append(Member(name, b"", False, "dir"))
                    continue
                body = _tar_body(archive, entry, budget)
                if len(body) != entry.size:
                    raise _Corrupt("truncated member", _shown(entry.name))
                members.append(Member(name, body, bool(entry.mode & stat.S_IXUSR), "file"))
            while rest := archive.fileobj.read(CHUNK):
                if rest.strip(b"\0"):
                    raise _Corrupt("data after its end (a zero block), which an extractor that "
                                   "reads on (bsdtar, tar -i) takes for more members", None)
    except _CapExceeded as exc:
        raise found.error([exc.problem]) from None
    except _Corrupt as exc:
        raise found.error([Problem("error", "archive-corrupt", str(exc), exc.member)]) from None
    except RecursionError:  # tarfile reads each pax or GNU long-name header by recursing
        raise found.error([Problem(
            "error", "archive-corrupt", "damaged or unreadable tar: too many extended headers "
            "(pax or GNU long name) chained before one member", None)]) from None
    except (tarfile.TarError, zlib.error, EOFError, UnicodeError, ValueError,
            OverflowError) as exc:
        raise found.error([Problem("error", "archive-corrupt",
                                   f"damaged or unreadable tar: {exc}", None)]) from None
    if found.items:
        raise found.error()
    return tuple(members)


#: tarfile's errors for a header block it cannot read (not in typeshed's stubs)
_UNREADABLE: tuple[type[Exception], ...] = tuple(
    getattr(tarfile, name) for name in ("InvalidHeaderError", "TruncatedHeaderError"))


class _StrictTarInfo(tarfile.TarInfo):
    """tarfile ends an archive, without a word, at a header it cannot read past the first
    (a bad checksum, a field that is no number, a block cut short); GNU tar skips such a
    block and extracts the members after it. Here it is damage, and the archive refused."""

    @classmethod
    def fromtarfile(cls, archive: tarfile.TarFile) -> tarfile.TarInfo:  # type: ignore[override]
        try:
            return super().fromtarfile(archive)
        except _UNREADABLE as exc:
            if archive.offset == 0:
                raise  # tarfile's own "not a tar" (ReadError)
            raise _Corrupt(f"an unreadable header at byte {archive.offset:,} ({exc}), which "
                           "GNU tar skips to read the members after it", None) from None


def _tar_body(archive: tarfile.TarFile, entry: tarfile.TarInfo, budget: Budget) -> bytes:
    """A file member's bytes, read CHUNK at a time. Those of a sparse member (GNU ``S``, pax
    ``GNU.sparse.*``: what ``tar --sparse`` writes) are counted as they come out, since
    tarfile fills its holes itself: a few stored bytes may declare gigabytes of zeros. Its
    stored data is then counted twice (read, then produced): a bound that no map can fool."""
    stream = archive.extractfile(entry)
    if stream is None:
        return b""
    sparse = entry.issparse()
    parts: list[bytes] = []
    while chunk := stream.read(min(CHUNK, budget.room()) if sparse else CHUNK):
        if sparse:
            budget.take(len(chunk), _shown(entry.name))
        parts.append(chunk)
    return b"".join(parts)


def _entries(archive: tarfile.TarFile, found: _Problems) -> Iterator[tarfile.TarInfo]:
    while (entry := archive.next()) is not None:
        found.listed()
        yield entry


def _tar_entry(entry: tarfile.TarInfo, found: _Problems) -> str | None:
    raw = entry.name
    if entry.issym():
        found.add("archive-link", f"symbolic link to {entry.linkname!r} (links are refused)",
                  _shown(raw))
    elif entry.islnk():
        found.add("archive-link", f"hard link to {entry.linkname!r} (links are refused)",
                  _shown(raw))
    elif not (entry.isfile() or entry.isdir()):
        what = ("character device" if entry.ischr() else "block device" if entry.isblk()
                else "fifo" if entry.isfifo() else f"entry of type {entry.type!r}")
        found.add("archive-special", f"{what} (only files and folders are read)", _shown(raw))
    else:
        return found.name(raw, entry.isdir())
    found.name(raw, entry.isdir())  # its name is checked too, but nothing of it is read
    return None
