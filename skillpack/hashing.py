"""File records and the skill digest, version 1 (SPEC section 2).

`record_files` gives each carried file its record (path, mode, size, BLAKE3). A walk that
read the file (`walk(read=True)`, what `digest` and `pack` run) already hashed it through the
descriptor that classified it; any other file is opened now, without following a link or
blocking, relative to its folder, and checked to be the very regular file the walk saw
(same device, inode, size and mode) before it is read (`skillpack._readfile`: BLAKE3 and
the PEM private-key scan on the same bytes).

Only the standard library is imported at module level (the runtime imports this module);
blake3, the readers and the walk are imported inside the functions that need them.
"""

from __future__ import annotations

import errno
import os
import stat

from skillpack._record import Record
from skillpack.errors import ArchiveError, Problem, RefusedError, SkillpackError

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
    "digest_skill",
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
#: File type and owner-execute bits of ``st_mode`` for each mode of the digest.
_MODE_BITS = {"100644": stat.S_IFREG, "100755": stat.S_IFREG | stat.S_IXUSR}
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


def hash_file(path: str | os.PathLike[str]) -> tuple[int, str]:
    """(size, BLAKE3 hex) of the regular file at `path`, opened without following a link."""
    from skillpack._readfile import Changed, hash_fd

    name = os.fspath(path)
    fd = os.open(name, OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SkillpackError("not a regular file", path=name)
        try:
            hex_digest, _ = hash_fd(fd, st.st_size)
        except Changed:
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
    from skillpack._readfile import DIR_FLAGS, ROOT_FLAGS, Changed, hash_large, small_file_reader

    records: list[FileRecord] = []
    problems: list[Problem] = []
    base = os.path.join(fileset.root, "")  # the root and one separator: base + relative path
    open_, fstat, close, new_record = os.open, os.fstat, os.close, FileRecord
    read_small_file = small_file_reader()
    already = fileset.read  # what the walk hashed through the descriptor it classified by
    # Each file is opened relative to its folder, kept open while the next files share it (as
    # sorted paths mostly do): the kernel then resolves one name a file, not the whole path.
    # A folder is opened without following a link (the root may be one), like the walk.
    folder, folder_fd = "\0", -1  # "\0": no folder open
    try:
        for walked in fileset.files:
            path = walked.path
            found = already.get(path)
            if found is not None and found[0] is walked:
                hex_digest, has_key = found[1], found[2]
                if has_key and path not in fileset.allowed:
                    problems.append(_key_problem(path))
                else:
                    records.append(new_record(path, walked.mode, walked.size, hex_digest))
                continue
            parent, _, name = (path if walked.fs_path is None else walked.fs_path).rpartition("/")
            try:
                if parent != folder:
                    if folder_fd >= 0:
                        close(folder_fd)
                    folder, folder_fd = "\0", -1
                    folder_fd = open_(base + parent, DIR_FLAGS) if parent else open_(
                        fileset.root, ROOT_FLAGS)
                    folder = parent
                fd = open_(name, OPEN_FLAGS, dir_fd=folder_fd)
            except OSError as err:
                code = "symlink" if err.errno == errno.ELOOP else "unreadable"  # now a link
                problems.append(Problem("error", code, f"cannot open it ({err.strerror})", path))
                continue
            try:
                st = fstat(fd)
                size = st.st_size
                # the very file the walk saw: same inode and size, still regular, same mode
                if (st.st_ino != walked.ino or st.st_dev != walked.dev or size != walked.size
                        or st.st_mode & 0o170100 != _MODE_BITS[walked.mode]):
                    raise Changed
                if size < LARGE_FILE:
                    found_now = read_small_file(fd, size)
                    if found_now is None:
                        raise Changed
                    hex_digest, has_key, _ = found_now
                else:  # read in many calls: check it was not rewritten meanwhile
                    hex_digest, has_key = hash_large(fd, size)
                    after = fstat(fd)
                    if (after.st_size, after.st_mtime_ns) != (size, st.st_mtime_ns):
                        raise Changed
            except Changed:
                problems.append(Problem("error", "changed", _CHANGED, path))
                continue
            except OSError as err:
                problems.append(
                    Problem("error", "unreadable", f"cannot read it ({err.strerror})", path)
                )
                continue
            finally:
                close(fd)
            if has_key and path not in fileset.allowed:
                problems.append(_key_problem(path))
                continue
            records.append(new_record(path, walked.mode, size, hex_digest))
    finally:
        if folder_fd >= 0:
            close(folder_fd)
    if problems:
        count = len(problems)
        raise RefusedError(
            f"the file set was refused: {count} problem{'s' if count > 1 else ''}",
            path=fileset.root,
            hint="fix every listed path, then try again",
            problems=problems,
        )
    return records


_CHANGED = "changed while being read (it is not the file the walk saw); try again"


def _key_problem(path: str) -> Problem:
    return Problem(
        "error",
        "secret",
        "holds a PEM private key block (-----BEGIN ... PRIVATE KEY-----); skillpack "
        "refuses to carry secrets. Remove the key, or leave the file out with "
        ".skillignore; if it is a harmless test key, allow it in the frontmatter "
        f'with metadata: {{skillpack-allow-secrets: "{path}"}}',
        path,
    )


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
    """Parse (when given a path), walk and record a skill: what `pack` starts from."""
    from skillpack.fileset import load_skill, skill_fileset

    if isinstance(skill, str | os.PathLike):
        skill = load_skill(skill)
    fileset = skill_fileset(skill, read=True)
    return skill, fileset, record_files(fileset)


def digest(path: str | os.PathLike[str]) -> str:
    """The digest of a skill folder, its SKILL.md, or a packed `.skill` archive."""
    name = os.fspath(path)
    if os.path.isfile(name) and os.path.basename(name) != "SKILL.md":
        from skillpack.archive import archive_digest

        return archive_digest(name)
    return digest_skill(name)[1]


def digest_skill(skill: Skill | str | os.PathLike[str]) -> tuple[Skill, str]:
    """The skill (parsed, when given a path to a folder or its SKILL.md) and its digest."""
    from skillpack.fileset import load_skill, skill_fileset

    if isinstance(skill, str | os.PathLike):
        skill = load_skill(skill)
    fileset = skill_fileset(skill, read=True)
    columns = _columns_read_by_walk(fileset)
    if columns is not None:  # every file hashed by the walk, none holding a key: no records
        return skill, digest_columns(*columns)
    return skill, digest_records(record_files(fileset))


def _columns_read_by_walk(fileset: FileSet) -> FileColumns | None:
    """The digest columns of `fileset` when its walk read every file and found no private
    key in any (what `record_files` would then give, without making a record a file); else
    None."""
    read, files = fileset.read, fileset.files
    if len(read) != len(files):
        return None
    found = [read.get(w.path) for w in files]
    if any(f is None or f[0] is not w or f[2] for f, w in zip(found, files, strict=True)):
        return None
    return ([w.path for w in files], [w.mode for w in files], [w.size for w in files],
            [f[1] for f in found if f is not None])
