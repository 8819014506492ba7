"""File hashing and the skill digest, version 1 (SPEC section 2).

Each carried file is opened without following links and without blocking, checked to be the
very regular file the walk saw (same device, inode, size and mode), hashed with BLAKE3 and
scanned for a PEM private-key block on the same bytes. Small files are read whole; large ones
stream through one fixed buffer with multi-threaded hashing, so memory stays flat whatever the
file size (a buffer rather than mmap: a file truncated under an mmap kills the process with
SIGBUS).

Only the standard library is imported at module level (the runtime imports this module);
blake3 and the walk are imported inside the functions that need them.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillpack.errors import ArchiveError, Problem, RefusedError, SkillpackError
from skillpack.secrets import PRIVATE_KEY_HEADER_MAX, PRIVATE_KEY_MARKER, contains_private_key

if TYPE_CHECKING:
    from skillpack.skill import Skill
    from skillpack.walk import FileSet

__all__ = [
    "BUNDLE_HEADER",
    "DIGEST_HEADER",
    "FileRecord",
    "bundle_digest",
    "digest",
    "digest_records",
    "hash_file",
    "record_files",
    "record_skill",
]

DIGEST_HEADER = b"skillpack-digest-v1\n"
BUNDLE_HEADER = b"skillpack-bundle-v1\n"
DIGEST_RE = re.compile(r"blake3:[0-9a-f]{64}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_MODES = ("100644", "100755")
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
LARGE_FILE = 4 * 1024 * 1024  # from this size on: streamed, hashed on several threads
READ_CHUNK = 4 * 1024 * 1024


@dataclass(frozen=True)
class FileRecord:
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
        if not isinstance(digest_hex, str) or not _HEX64.fullmatch(digest_hex):
            raise ValueError(f"{path}: invalid blake3 {digest_hex!r} (expected 64 hex digits)")
        return cls(path=path, mode=mode, size=size, blake3=digest_hex)


class _Changed(Exception):
    """The file is not the one the walk saw, or changed while being read."""


def _hash_fd(fd: int, size: int) -> tuple[str, bool]:
    """BLAKE3 hex of the open file `fd` of expected `size`, and whether it holds a private key.

    Raises `_Changed` when the bytes read do not add up to `size`.
    """
    from blake3 import blake3

    if size < LARGE_FILE:
        chunks = []
        want = size + 1  # one byte more than expected: a file that grew is caught
        while want > 0:
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            want -= len(chunk)
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        if len(data) != size:
            raise _Changed
        return blake3(data).hexdigest(), contains_private_key(data)
    hasher = blake3(max_threads=blake3.AUTO)
    buf = bytearray(READ_CHUNK)
    view = memoryview(buf)
    total = 0
    has_key = False
    tail = b""
    while True:
        n = os.readv(fd, [buf])
        if n == 0:
            break
        total += n
        if total > size:
            raise _Changed
        hasher.update(view[:n])
        if not has_key:
            # the header may straddle two chunks: check the seam, then the chunk itself
            seam = tail + bytes(view[: min(n, PRIVATE_KEY_HEADER_MAX)])
            has_key = contains_private_key(seam) or (
                buf.find(PRIVATE_KEY_MARKER, 0, n) >= 0 and contains_private_key(view[:n])
            )
            tail = bytes(view[max(0, n - PRIVATE_KEY_HEADER_MAX) : n])
    view.release()
    if total != size:
        raise _Changed
    return hasher.hexdigest(), has_key


def hash_file(path: str | os.PathLike[str]) -> tuple[int, str]:
    """(size, BLAKE3 hex) of the regular file at `path`, opened without following a link."""
    name = os.fspath(path)
    fd = os.open(name, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SkillpackError("not a regular file", path=name)
        try:
            hex_digest, _ = _hash_fd(fd, st.st_size)
        except _Changed:
            raise SkillpackError(
                "changed while being read", path=name, hint="try again once it is written"
            ) from None
        return st.st_size, hex_digest
    finally:
        os.close(fd)


def record_files(fileset: FileSet) -> list[FileRecord]:
    """Hash every file of `fileset` and check its content; one record per file, in order.

    Raises `RefusedError` once, listing every file that could not be read, changed since the
    walk, or holds a private key (unless allowed).
    """
    records: list[FileRecord] = []
    problems: list[Problem] = []
    allowed = set(fileset.allowed)
    changed = "changed while being read (it is not the file the walk saw); try again"
    for walked in fileset.files:
        full = os.path.join(fileset.root, walked.disk_path)
        try:
            fd = os.open(full, _OPEN_FLAGS)
        except OSError as err:
            code = "symlink" if err.errno == errno.ELOOP else "unreadable"  # now a link
            problems.append(Problem("error", code, f"cannot open it ({err.strerror})", walked.path))
            continue
        try:
            st = os.fstat(fd)
            mode = "100755" if st.st_mode & stat.S_IXUSR else "100644"
            walked_facts = (walked.dev, walked.ino, walked.size, walked.mode)
            if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino, st.st_size, mode) != (
                walked_facts
            ):
                problems.append(Problem("error", "changed", changed, walked.path))
                continue
            hex_digest, has_key = _hash_fd(fd, st.st_size)
            after = os.fstat(fd)
            if (after.st_size, after.st_mtime_ns) != (st.st_size, st.st_mtime_ns):
                raise _Changed
        except _Changed:
            problems.append(Problem("error", "changed", changed, walked.path))
            continue
        except OSError as err:
            problems.append(
                Problem("error", "unreadable", f"cannot read it ({err.strerror})", walked.path)
            )
            continue
        finally:
            os.close(fd)
        if has_key and walked.path not in allowed:
            problems.append(
                Problem(
                    "error",
                    "secret",
                    "holds a PEM private key block (-----BEGIN ... PRIVATE KEY-----); skillpack "
                    "refuses to carry secrets. Remove the key, or leave the file out with "
                    ".skillignore; if it is a harmless test key, allow it in the frontmatter "
                    f'with metadata: {{skillpack-allow-secrets: "{walked.path}"}}',
                    walked.path,
                )
            )
            continue
        records.append(FileRecord(walked.path, mode, st.st_size, hex_digest))
    if problems:
        count = len(problems)
        raise RefusedError(
            f"the file set was refused: {count} problem{'s' if count > 1 else ''}",
            path=fileset.root,
            hint="fix every listed path, then try again",
            problems=problems,
        )
    return records


def _utf8(path: str) -> bytes:
    return path.encode("utf-8")


def digest_records(records: Iterable[FileRecord]) -> str:
    """The digest v1 of a file set's records (SPEC section 2)."""
    from blake3 import blake3

    hasher = blake3(DIGEST_HEADER)
    for record in sorted(records, key=lambda r: _utf8(r.path)):
        hasher.update(record.line().encode("utf-8"))
    return "blake3:" + hasher.hexdigest()


def bundle_digest(pairs: Iterable[tuple[str, str]]) -> str:
    """The digest of a set of skills, from (name, digest) pairs (SPEC section 2)."""
    from blake3 import blake3

    items = sorted(pairs, key=lambda pair: _utf8(pair[0]))
    names = [name for name, _ in items]
    for name, skill_digest in items:
        if not name or any(c.isspace() for c in name):
            raise ArchiveError(f"invalid skill name {name!r} in a bundle")
        if not DIGEST_RE.fullmatch(skill_digest):
            raise ArchiveError(f"invalid digest {skill_digest!r} for skill {name!r}")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ArchiveError(f"a bundle holds two skills named {', '.join(duplicates)}")
    hasher = blake3(BUNDLE_HEADER)
    for name, skill_digest in items:
        hasher.update(f"{skill_digest} {name}\n".encode())
    return "blake3:" + hasher.hexdigest()


def record_skill(
    skill: Skill | str | os.PathLike[str],
) -> tuple[Skill, FileSet, list[FileRecord]]:
    """Parse (when given a path), walk and record a skill: what `pack` and `digest` start from."""
    from skillpack.walk import load_skill, skill_fileset

    if isinstance(skill, str | os.PathLike):
        skill = load_skill(skill)
    fileset = skill_fileset(skill)
    return skill, fileset, record_files(fileset)


def digest(path: str | os.PathLike[str]) -> str:
    """The digest of a skill folder, its SKILL.md, or a packed `.skill` archive."""
    name = os.fspath(path)
    if os.path.isfile(name) and os.path.basename(name) != "SKILL.md":
        from skillpack.archive import archive_digest

        return archive_digest(name)
    _, _, records = record_skill(name)
    return digest_records(records)
