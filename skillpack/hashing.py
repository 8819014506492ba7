"""File hashing and the skill digest, version 1 (SPEC section 2).

Each carried file is opened without following links and without blocking, checked to be the
very regular file the walk saw (same device, inode, size and mode), hashed with BLAKE3 and
scanned for a PEM private-key block on the same bytes. Small files are read whole, in one
``read`` call when they can be (the hot path of a tree of many small files: six system calls
a file). Large ones stream through one fixed buffer, so memory stays flat whatever the file
size (a buffer rather than mmap: a file truncated under an mmap kills the process with
SIGBUS, and mapped pages would count in the process's RSS); each chunk is hashed with
multi-threaded BLAKE3 (which releases the GIL) while a helper thread scans it for the key
header, the two costing about the same.

Only the standard library is imported at module level (the runtime imports this module);
blake3 and the walk are imported inside the functions that need them.
"""

from __future__ import annotations

import errno
import os
import stat

from skillpack._record import Record
from skillpack.errors import ArchiveError, Problem, RefusedError, SkillpackError
from skillpack.secrets import PRIVATE_KEY_HEADER_MAX, PRIVATE_KEY_MARKER, contains_private_key

# Neither `re`, `typing` nor `dataclasses` at run time: the runtime imports this module at cold
# start (`FileRecord` is a `skillpack._record.Record`; DIGEST_RE is compiled on first use).
TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    import re
    from collections.abc import Iterable
    from typing import Any, TypeAlias, TypeGuard

    from skillpack.fileset import FileSet
    from skillpack.skill import Skill

    #: File records as four columns: paths, modes, sizes and BLAKE3 hex digests.
    FileColumns: TypeAlias = tuple[list[str], list[str], list[int], list[str]]

__all__ = [
    "BUNDLE_HEADER",
    "DIGEST_HEADER",
    "OPEN_FLAGS",
    "FileRecord",
    "bundle_digest",
    "digest",
    "digest_columns",
    "digest_records",
    "file_columns",
    "hash_file",
    "is_digest",
    "record_files",
    "record_skill",
]

DIGEST_HEADER = b"skillpack-digest-v1\n"
BUNDLE_HEADER = b"skillpack-bundle-v1\n"
_DIGEST_PATTERN = r"blake3:[0-9a-f]{64}"  # what `is_digest` accepts
_HEX = b"0123456789abcdef"
_MODES = ("100644", "100755")
#: How every carried file is opened: never through a link, never blocking (a fifo).
OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
LARGE_FILE = 4 * 1024 * 1024  # from this size on: streamed, hashed on several threads
READ_CHUNK = 4 * 1024 * 1024


if TYPE_CHECKING:
    DIGEST_RE: re.Pattern[str]  # compiled by __getattr__ below on first use
else:

    def __getattr__(name: str) -> Any:
        if name == "DIGEST_RE":
            import re

            globals()[name] = pattern = re.compile(_DIGEST_PATTERN)
            return pattern
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _all_hex(text: str) -> bool:
    """Whether `text` is lower-case hex digits only (``[0-9a-f]*``)."""
    return text.isascii() and not text.encode("ascii").translate(None, _HEX)


def is_digest(value: object) -> TypeGuard[str]:
    """Whether `value` is a skillpack digest: ``blake3:`` and 64 lower-case hex digits (what
    ``DIGEST_RE.fullmatch`` accepts, without importing `re`)."""
    return (isinstance(value, str) and len(value) == 71 and value.startswith("blake3:")
            and _all_hex(value[7:]))


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
        if not isinstance(digest_hex, str) or len(digest_hex) != 64 or not _all_hex(digest_hex):
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
            and _all_hex("".join(hexes))
        )
    except (KeyError, TypeError):
        vouched = False
    if vouched:
        return paths, modes, sizes, hexes
    records = [FileRecord.from_dict(item) for item in items]
    return ([r.path for r in records], [r.mode for r in records], [r.size for r in records],
            [r.blake3 for r in records])


class _Changed(Exception):
    """The file is not the one the walk saw, or changed while being read."""


def _read_small(fd: int, size: int, *, confirm_eof: bool = True) -> bytes:
    """The `size` bytes of the open file `fd`, read whole; raises `_Changed` otherwise.

    One byte more than expected is asked for, so a file that grew is caught. When the first
    read returns exactly `size` bytes, the read that would confirm the end of the file is
    skipped if `confirm_eof` is false: the caller checks the size and mtime again afterwards.
    """
    data = os.read(fd, size + 1)
    got = len(data)
    if got == size and not confirm_eof:
        return data
    chunks = [data]
    while data and got <= size:
        data = os.read(fd, size + 1 - got)
        chunks.append(data)
        got += len(data)
    if got != size:
        raise _Changed
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class _KeyScan:
    """The private-key check of a file streamed in chunks (the header may straddle two)."""

    def __init__(self, buf: bytearray) -> None:
        self.buf = buf
        self.view = memoryview(buf)
        self.tail = b""
        self.found = False

    def chunk(self, n: int) -> bool:
        """Scan the first `n` bytes of the buffer, the next chunk of the file."""
        if not self.found:
            view = self.view
            seam = self.tail + bytes(view[: min(n, PRIVATE_KEY_HEADER_MAX)])
            self.found = contains_private_key(seam) or (
                self.buf.find(PRIVATE_KEY_MARKER, 0, n) >= 0 and contains_private_key(view[:n])
            )
            self.tail = bytes(view[max(0, n - PRIVATE_KEY_HEADER_MAX) : n])
        return self.found


def _hash_large(fd: int, size: int) -> tuple[str, bool]:
    """`_hash_fd` for a large file: one buffer; hash and key scan of a chunk run together."""
    from concurrent.futures import ThreadPoolExecutor

    from blake3 import blake3

    hasher = blake3(max_threads=blake3.AUTO)
    buf = bytearray(READ_CHUNK)
    scan = _KeyScan(buf)
    view = memoryview(buf)
    total = 0
    try:
        # the scan (bytes.find holds the GIL) runs in the helper while this thread hashes
        # (BLAKE3 releases the GIL); both finish before the buffer is read into again
        with ThreadPoolExecutor(1, thread_name_prefix="skillpack-keyscan") as helper:
            while True:
                n = os.readv(fd, [buf])
                if n == 0:
                    break
                total += n
                if total > size:
                    raise _Changed
                scanned = helper.submit(scan.chunk, n) if not scan.found else None
                hasher.update(view[:n])
                if scanned is not None:
                    scanned.result()
    finally:
        view.release()
        scan.view.release()
    if total != size:
        raise _Changed
    return hasher.hexdigest(), scan.found


def _hash_fd(fd: int, size: int) -> tuple[str, bool]:
    """BLAKE3 hex of the open file `fd` of expected `size`, and whether it holds a private key.

    Raises `_Changed` when the bytes read do not add up to `size`.
    """
    if size < LARGE_FILE:
        from blake3 import blake3

        data = _read_small(fd, size)
        return blake3(data).hexdigest(), contains_private_key(data)
    return _hash_large(fd, size)


def hash_file(path: str | os.PathLike[str]) -> tuple[int, str]:
    """(size, BLAKE3 hex) of the regular file at `path`, opened without following a link."""
    name = os.fspath(path)
    fd = os.open(name, OPEN_FLAGS)
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
    from blake3 import blake3

    records: list[FileRecord] = []
    problems: list[Problem] = []
    allowed = set(fileset.allowed)
    changed = "changed while being read (it is not the file the walk saw); try again"
    base = os.path.join(fileset.root, "")  # the root and one separator: base + relative path
    open_, fstat, close, is_reg = os.open, os.fstat, os.close, stat.S_ISREG
    for walked in fileset.files:
        full = base + (walked.path if walked.fs_path is None else walked.fs_path)
        try:
            fd = open_(full, OPEN_FLAGS)
        except OSError as err:
            code = "symlink" if err.errno == errno.ELOOP else "unreadable"  # now a link
            problems.append(Problem("error", code, f"cannot open it ({err.strerror})", walked.path))
            continue
        try:
            st = fstat(fd)
            size = st.st_size
            mode = "100755" if st.st_mode & stat.S_IXUSR else "100644"
            walked_facts = (walked.dev, walked.ino, walked.size, walked.mode)
            if not is_reg(st.st_mode) or (st.st_dev, st.st_ino, size, mode) != walked_facts:
                problems.append(Problem("error", "changed", changed, walked.path))
                continue
            if size < LARGE_FILE:  # inline: the hot path of a tree of many small files
                data = _read_small(fd, size, confirm_eof=False)  # size and mtime checked below
                hex_digest = blake3(data).hexdigest()
                has_key = PRIVATE_KEY_MARKER in data and contains_private_key(data)
            else:
                hex_digest, has_key = _hash_large(fd, size)
            after = fstat(fd)
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
            close(fd)
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
        records.append(FileRecord(walked.path, mode, size, hex_digest))
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
    ordered = list(records)
    return digest_columns([r.path for r in ordered], [r.mode for r in ordered],
                          [r.size for r in ordered], [r.blake3 for r in ordered])


def digest_columns(paths: list[str], modes: list[str], sizes: list[int], hexes: list[str]) -> str:
    """The digest v1 of file records given as columns (see `file_columns`): one line per
    record, as `FileRecord.line` writes it, sorted by the UTF-8 bytes of the paths."""
    from blake3 import blake3

    rows: Iterable[tuple[str, int, str, str]] = zip(modes, sizes, hexes, paths, strict=True)
    # ASCII paths sort by their UTF-8 bytes as strings do: a sorted list is left as it is
    # (sorted() is stable, so equal paths would keep their order either way).
    if not ("".join(paths).isascii() and paths == sorted(paths)):
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


def record_skill(
    skill: Skill | str | os.PathLike[str],
) -> tuple[Skill, FileSet, list[FileRecord]]:
    """Parse (when given a path), walk and record a skill: what `pack` and `digest` start from."""
    from skillpack.fileset import load_skill, skill_fileset

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
