"""Zip archives for the tests: written by skillpack's own writer (`zip_of`), read with the
stdlib (`zip_members`), written as Anthropic's packager writes them (`anthropic_zip`), and a
good archive or bundle taken apart and put back together, byte by byte.

`members_of(data)` reads what `skillpack pack` or `skillpack bundle` wrote into a list of
`Member`s; `build(members)` writes them back with `struct.pack`, exactly as
skillpack/storedzip/writer.py does, unless a member (or the end record) says otherwise: a hostile
input is a good one with one field changed. `test_the_builder_models_the_writer` (in
tests/hostile/test_archives.py) proves that an untouched list rebuilds to the very same bytes.

`reseal(members)` rewrites a skill's manifest so that it agrees with the members as they now
are (files, sizes, modes, BLAKE3, digest) and, for a bundle, the index: what an author who
builds an archive by hand, rather than with `pack`, can always do.
"""

from __future__ import annotations

import hashlib
import io
import json
import struct
import zipfile
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skillpack.formats.digest import FileRecord, bundle_digest, digest_records
from skillpack.formats.manifest import canonical_json
from skillpack.storedzip.reader import read_zip
from skillpack.storedzip.writer import ZipWriter

LOCAL = struct.Struct("<IHHHHHIIIHH")
CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")
END = struct.Struct("<IHHHHIIH")
MANIFEST = ".skillpack/manifest.json"
INDEX = ".skillpack/bundle.json"
MODE_FILE = 0o100644 << 16
MODE_EXEC = 0o100755 << 16


@dataclass(frozen=True)
class Member:
    """One member. ``both`` overrides fields of both headers, ``local``/``central`` of one
    (field names as in `build`); ``local_name`` is the name the local header carries."""

    name: str
    data: bytes
    executable: bool = False
    raw_name: bytes | None = None
    local_name: bytes | None = None
    both: dict[str, int] = field(default_factory=dict)
    local: dict[str, int] = field(default_factory=dict)
    central: dict[str, int] = field(default_factory=dict)
    gap: bytes = b""

    @property
    def encoded(self) -> bytes:
        return self.raw_name if self.raw_name is not None else self.name.encode("utf-8")


def members_of(data: bytes) -> list[Member]:
    """The members of a good archive or bundle, in archive order."""
    index = read_zip(data)
    return [Member(e.name, bytes(index.data(e)), e.executable) for e in index.entries]


def build(members: list[Member], *, prefix: bytes = b"", tail: bytes = b"",
          before_cd: bytes = b"", **end: int) -> bytes:
    """The zip holding `members` in the given order, laid out as ZipWriter lays it out."""
    out = bytearray(prefix)
    central = bytearray()
    for m in members:
        out += m.gap
        name = m.encoded
        fields = {"need": 20, "flags": 0x0800, "method": 0, "time": 0, "date": 0x21,
                  "crc": zlib.crc32(m.data), "csize": len(m.data), "size": len(m.data),
                  "nlen": len(name), "xlen": 0, **m.both}
        loc = {"sig": 0x04034B50, **fields, **m.local}
        local_name = m.local_name if m.local_name is not None else name
        cen = {"sig": 0x02014B50, "made": 0x0314, **fields, "clen": 0, "disk": 0, "iattr": 0,
               "eattr": MODE_EXEC if m.executable else MODE_FILE,
               "offset": len(out) - len(prefix), **m.central}
        out += LOCAL.pack(loc["sig"], loc["need"], loc["flags"], loc["method"], loc["time"],
                          loc["date"], loc["crc"], loc["csize"], loc["size"], loc["nlen"],
                          loc["xlen"]) + local_name + m.data
        central += CENTRAL.pack(
            cen["sig"], cen["made"], cen["need"], cen["flags"], cen["method"], cen["time"],
            cen["date"], cen["crc"], cen["csize"], cen["size"], cen["nlen"], cen["xlen"],
            cen["clen"], cen["disk"], cen["iattr"], cen["eattr"], cen["offset"]) + name
    out += before_cd
    e = {"disk": 0, "cd_disk": 0, "count_disk": len(members), "count": len(members),
         "cd_size": len(central), "cd_off": len(out) - len(prefix), "clen": 0, **end}
    out += central
    out += END.pack(0x06054B50, e["disk"], e["cd_disk"], e["count_disk"], e["count"],
                    e["cd_size"], e["cd_off"], e["clen"]) + tail
    return bytes(out)


def find(members: list[Member], member: str) -> int:
    for at, m in enumerate(members):
        if m.name == member:
            return at
    raise KeyError(member)


def change(members: list[Member], member: str, /, **over: Any) -> list[Member]:
    """A copy of `members` with the member named `member` changed (dataclass fields)."""
    out = list(members)
    at = find(out, member)
    out[at] = replace(out[at], **over)
    return out


def insert(members: list[Member], new: Member) -> list[Member]:
    """A copy with `new` added in its sorted place (by UTF-8 bytes of the name)."""
    out = [*members, new]
    return sorted(out, key=lambda m: m.encoded)


def drop(members: list[Member], name: str) -> list[Member]:
    return [m for m in members if m.name != name]


def manifest_dict(members: list[Member], skill: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(members[find(members, f"{skill}/{MANIFEST}")].data)
    return data


def set_manifest(members: list[Member], skill: str, manifest: dict[str, Any] | bytes
                 ) -> list[Member]:
    raw = manifest if isinstance(manifest, bytes) else canonical_json(manifest)
    return change(members, f"{skill}/{MANIFEST}", data=raw)


def reseal(members: list[Member], *, keep: tuple[str, ...] = ()) -> list[Member]:
    """Rewrite every manifest (and the bundle index, if any) to agree with the members.

    Fields named in `keep` are left as they were (say, a description an attacker chose).
    """
    from blake3 import blake3

    skills = sorted({m.name.split("/", 1)[0] for m in members if m.name.endswith(MANIFEST)})
    out = list(members)
    pairs = []
    for skill in skills:
        manifest = manifest_dict(out, skill)
        records = [FileRecord(m.name[len(skill) + 1:], "100755" if m.executable else "100644",
                              len(m.data), blake3(m.data).hexdigest())
                   for m in out if m.name.startswith(skill + "/")
                   and not m.name.endswith(MANIFEST)]
        records.sort(key=lambda r: r.path.encode("utf-8"))
        if "files" not in keep:
            manifest["files"] = [r.to_dict() for r in records]
            if manifest.get("format") != "1.0":  # format 1.1: each file's SHA-256 too
                data = {m.name[len(skill) + 1:]: m.data for m in out
                        if m.name.startswith(skill + "/")}
                for item in manifest["files"]:
                    item["sha256"] = hashlib.sha256(data[item["path"]]).hexdigest()
        if "digest" not in keep:
            manifest["digest"] = digest_records(records)
        out = set_manifest(out, skill, manifest)
        pairs.append((skill, manifest["digest"]))
    if any(m.name == INDEX for m in out):
        index = json.loads(out[find(out, INDEX)].data)
        index["skills"] = [{"name": n, "digest": d} for n, d in pairs]
        index["digest"] = bundle_digest(pairs)
        out = change(out, INDEX, data=canonical_json(index))
    return out


def flip(data: bytes, at: int, xor: int = 0x01) -> bytes:
    out = bytearray(data)
    out[at] ^= xor
    return bytes(out)


def central_offset(data: bytes) -> int:
    """Where the central directory of a good archive starts."""
    return int(END.unpack_from(data, len(data) - END.size)[6])


Members = dict[str, tuple[bytes, bool]]  # zip member name -> (bytes, executable)


def zip_of(members: Members) -> bytes:
    """A zip of ``members`` written by skillpack's own writer (valid, self-consistent)."""
    out = io.BytesIO()
    with ZipWriter(out) as writer:
        for name in sorted(members, key=lambda n: n.encode("utf-8")):
            data, executable = members[name]
            writer.add_bytes(name, data, executable=executable)
    return out.getvalue()


def zip_members(data: bytes) -> Members:
    """Every member of a zip as name -> (bytes, executable), read with the stdlib zipfile."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: (archive.read(info), bool(info.external_attr >> 16 & 0o100))
                for info in archive.infolist()}


def anthropic_zip(folder: Path) -> bytes:
    """What Anthropic's skill-creator `package_skill.py` writes of ``folder``: DEFLATE (stdlib
    zipfile), one top folder, no manifest."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder.parent))
    return out.getvalue()
