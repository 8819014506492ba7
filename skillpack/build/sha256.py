"""Each carried file's SHA-256, for the manifest (format 1.1) and the ecosystem's indexes.

Digest v1 stays BLAKE3 (SPEC section 2); SHA-256 is what the distribution formats speak (the
`.well-known/agent-skills/` index, the MCP skills extension). A file whose bytes the walk
kept is hashed from them; any other is read again from disk, through the flags every
carried file is opened with, and hashed with BLAKE3 on the same pass: a file that is not,
byte for byte, the one the walk hashed refuses the pack.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping, Sequence

from blake3 import blake3

from skillpack.build.fileset import HashedFile, WalkedFile
from skillpack.build.readfile import OPEN_FLAGS, READ_CHUNK
from skillpack.errors import Problem, RefusedError
from skillpack.runtime import LoadedSkill
from skillpack.spec.digest import FileRecord
from skillpack.spec.manifest import Manifest

__all__ = ["archive_sha256", "file_sha256s", "sha256_problems"]


def file_sha256s(root: str, files: Sequence[WalkedFile], records: Sequence[FileRecord],
                 kept: Mapping[str, HashedFile]) -> tuple[str, ...]:
    """The SHA-256 hex of each file, in the order of ``records`` (``files[i]`` is the walk's
    entry of ``records[i]``). Raises `RefusedError` listing every file that changed since it
    was hashed or cannot be read."""
    found: list[str] = []
    problems: list[Problem] = []
    for walked, record in zip(files, records, strict=True):
        held = kept.get(record.path)
        if held is not None and held.walked is walked and held.data is not None:
            found.append(hashlib.sha256(held.data).hexdigest())
            continue
        disk = os.path.join(root, walked.disk_path)
        try:
            found.append(_from_disk(disk, record))
        except _Changed as why:
            problems.append(Problem("error", "changed", f"{record.path}: {why}", disk))
        except OSError as err:
            problems.append(Problem("error", "unreadable", f"{record.path}: cannot read it: "
                                    f"{err.strerror}", disk))
    if problems:
        raise RefusedError(f"{problems[0].message} (and {len(problems) - 1} more)"
                           if len(problems) > 1 else problems[0].message,
                           path=root, problems=problems,
                           hint="try again once the skill's files are written")
    return tuple(found)


class _Changed(Exception):
    pass


def _from_disk(path: str, record: FileRecord) -> str:
    fd = os.open(path, OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size != record.size:
            raise _Changed("changed since it was hashed (its size or type)")
        sha, check = hashlib.sha256(), blake3()
        total = 0
        while chunk := os.read(fd, READ_CHUNK):
            sha.update(chunk)
            check.update(chunk)
            total += len(chunk)
        if total != record.size or check.hexdigest() != record.blake3:
            raise _Changed("changed since it was hashed (its bytes)")
        return sha.hexdigest()
    finally:
        os.close(fd)


def archive_sha256(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of a written file's bytes (an archive or a bundle)."""
    with open(path, "rb") as handle:
        return "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()


def sha256_problems(manifest: Manifest, skill: LoadedSkill, member: str) -> list[Problem]:
    """The files whose SHA-256 in ``manifest`` is not that of their verified bytes (the
    digest covers BLAKE3 only, so `verify` recomputes each SHA-256 from the bytes)."""
    problems: list[Problem] = []
    for record, recorded in zip(manifest.files, manifest.sha256, strict=False):
        actual = hashlib.sha256(skill.file(record.path).bytes()).hexdigest()
        if actual != recorded:
            problems.append(Problem(
                "error", "manifest-sha256", f"the manifest records sha256 {recorded} for "
                f"'{record.path}', its bytes hash to {actual}: it was altered after packing",
                member))
    return problems
