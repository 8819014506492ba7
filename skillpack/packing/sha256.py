"""Each carried file's SHA-256, for the manifest (format 1.1) and the ecosystem's indexes.

Digest v1 stays BLAKE3 (SPEC section 2); SHA-256 is what the distribution formats speak (the
`.well-known/agent-skills/` index, the MCP skills extension). Pack takes each file's SHA-256
from the very bytes its walk read and hashed with BLAKE3 (`HashedFile.sha256`,
`HashedSet.sha256`); this module hashes an archive as it is written (`HashingFile`: the
bytes are hashed on their way to the file, never read back) or, failing that, once written,
and checks a manifest's SHA-256s against an archive's verified bytes. `prepared_sha256` is
the SHA-256 of the `.skill` archive ``skillpack pack`` writes for a prepared skill, computed
without writing it (packing is reproducible): what a signed statement's subject carries.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from typing import BinaryIO, cast

from skillpack.errors import Problem
from skillpack.formats.manifest import MANIFEST_PATH
from skillpack.packing.members import Member, write_members
from skillpack.packing.prepare import PreparedSkill
from skillpack.runtime import LoadedSkill
from skillpack.storedzip.writer import ZipWriter

__all__ = ["HashingFile", "archive_sha256", "loaded_sha256", "parts_sha256", "prepared_sha256",
           "sha256_problem"]


class HashingFile:
    """The binary file `file` (positioned at its start) as a `ZipWriter` writes to it, with a
    SHA-256 of the bytes written at its end, in order. A write anywhere else (the writer
    patching a CRC it learned only after streaming a large member) makes the running hash
    wrong: `sha256` is then None, and the caller hashes the written file instead."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file
        self._hash = hashlib.sha256()
        self._at = self._end = file.tell()
        self._exact = self._at == 0

    def write(self, data: bytes | bytearray | memoryview) -> int:
        written = self._file.write(data)
        if self._at == self._end:
            self._hash.update(memoryview(data)[:written])
            self._end += written
        else:
            self._exact = False
        self._at += written
        self._end = max(self._end, self._at)
        return written

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        self._at = self._file.seek(offset, whence)
        return self._at

    def tell(self) -> int:
        return self._at

    def flush(self) -> None:
        self._file.flush()

    def sha256(self) -> str | None:
        """``sha256:<hex>`` of the bytes written, or None when some were written over."""
        return "sha256:" + self._hash.hexdigest() if self._exact else None


class _Nowhere:
    """A seekable binary file that keeps nothing: what `HashingFile` hashes on its way."""

    def __init__(self) -> None:
        self._at = self._end = 0

    def write(self, data: bytes | bytearray | memoryview) -> int:
        self._at += len(data)
        self._end = max(self._end, self._at)
        return len(data)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        self._at = {os.SEEK_SET: 0, os.SEEK_CUR: self._at, os.SEEK_END: self._end}[whence]
        self._at += offset
        return self._at

    def tell(self) -> int:
        return self._at

    def flush(self) -> None:
        pass


def prepared_sha256(prepared: PreparedSkill, *, root: bool = False) -> str:
    """``sha256:<hex>`` of the `.skill` archive ``skillpack pack`` (no target, the wrapped
    layout) writes for `prepared`, with its manifest whatever it was prepared for (a host's
    archive holds none), or with `root` the root layout's (``SKILL.md`` and
    ``.skillpack/manifest.json`` at the archive root, which the runtime loads and a lock made
    from such an archive records). Hashed as its writer writes it, never kept: byte for byte
    the archive pack writes, since packing is reproducible. Only an archive whose writer
    patches a CRC it learned late (a file too large to be kept in memory, changed since it
    was hashed) is written to a temporary file and hashed there."""
    skill = PreparedSkill(prepared.source, prepared.skill, prepared.fileset, prepared.manifest,
                          "root" if root else "wrapped", True)
    return _members_sha256(skill.members)


def loaded_sha256(skill: LoadedSkill, *, root: bool = False) -> str:
    """``sha256:<hex>`` of the `.skill` archive of a verified skill (one of a bundle): its
    manifest and files under ``<name>/``, as ``skillpack pack`` writes them (with `root`, at
    the archive root: the root layout with its manifest)."""
    def members() -> list[Member]:
        prefix = "" if root else f"{skill.name}/"
        manifest = skill.manifest.to_bytes()
        out = [Member(prefix + MANIFEST_PATH, len(manifest), False, data=manifest)]
        for record in skill.manifest.files:
            out.append(Member(prefix + record.path, record.size, record.mode == "100755",
                              record.blake3, data=skill.file(record.path).view()))
        return out
    return _members_sha256(members)


def _members_sha256(members: Callable[[], Sequence[Member]]) -> str:
    hashing = HashingFile(cast(BinaryIO, _Nowhere()))
    with ZipWriter(cast(BinaryIO, hashing)) as writer:
        write_members(writer, members())
    found = hashing.sha256()
    if found is not None:
        return found
    with tempfile.TemporaryFile() as handle:
        with ZipWriter(cast(BinaryIO, handle)) as writer:
            write_members(writer, members())
        handle.seek(0)
        return "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()


def parts_sha256(parts: Iterable[bytes]) -> str:
    """``sha256:<hex>`` of `parts` joined, without joining them: an archive built in memory
    as the list of its writer's writes, hashed as it is written."""
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part)
    return "sha256:" + hasher.hexdigest()


def archive_sha256(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of a written file's bytes (an archive or a bundle)."""
    with open(path, "rb") as handle:
        return "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()


def sha256_problem(path: str, recorded: str, actual: str, member: str) -> Problem:
    """The refusal of a file whose SHA-256 in its manifest (`recorded`, under `member`) is not
    that of its verified bytes (`actual`): the digest covers BLAKE3 only, so `verify`
    recomputes each SHA-256 from the bytes."""
    return Problem("error", "manifest-sha256", f"the manifest records sha256 {recorded} for "
                   f"'{path}', its bytes hash to {actual}: it was altered after packing",
                   member)
