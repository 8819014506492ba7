"""The file set of a skill (SPEC section 1): what it carries, what it leaves out, and why.

The records the walk (`skillpack.source.walk`) returns: each carried file with the facts it
was classified by, what a reading walk hashed, and what was left out, with the rule that
matched (nothing is left out silently).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from skillpack.content.scan import ContentScan

__all__ = ["FileSet", "HashedFile", "LeftOut", "WalkedFile", "display_path"]


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A path the walk saw and did not carry; a folder's path ends with ``/``."""

    path: str
    rule: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "rule": self.rule}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LeftOut:
        return cls(path=str(data["path"]), rule=str(data["rule"]))


@dataclass(frozen=True, slots=True)
class WalkedFile:
    """A carried regular file, with the ``lstat`` facts the reader checks again on open.

    ``fs_path`` is the name on disk when it differs from ``path`` (a name that is not NFC).
    """

    path: str
    size: int
    mode: str
    dev: int
    ino: int
    fs_path: str | None = None

    @property
    def disk_path(self) -> str:
        """The relative path to open, as the filesystem spells it."""
        return self.fs_path if self.fs_path is not None else self.path


@dataclass(frozen=True, slots=True)
class HashedFile:
    """What a reading walk learnt of a file through the descriptor it classified the file
    by: its BLAKE3, what its content check found (`skillpack.content.scan`), its bytes when the
    walk kept them (for `pack` to write), and its `#!` line when it is executable and has
    one."""

    walked: WalkedFile
    blake3: str
    content: ContentScan
    data: bytes | None = None
    shebang: str | None = None
    #: its SHA-256 hex, from the same bytes, when the walk was asked for it (else "")
    sha256: str = ""
    #: its CRC-32, from the same bytes, for a large file read by a walk asked for SHA-256s
    #: (pack's: the zip writer then writes its header at once), else None
    crc32: int | None = None


@dataclass(frozen=True, slots=True)
class FileSet:
    """What a skill carries: ``files`` sorted by UTF-8 bytes of their path, and what was left out.

    ``allowed`` lists the secret allowances that named a carried file (a bare path, or
    ``PATH#RULE-ID`` for one content rule; `skillpack.content.scan.Allowances.entries`).
    """

    root: str
    files: tuple[WalkedFile, ...]
    left_out: tuple[LeftOut, ...]
    allowed: tuple[str, ...] = ()
    #: What a walk with ``read=True`` hashed, by path. `skillpack.source.records` uses it
    #: instead of opening the file again, and `pack` writes the kept bytes.
    hashed: Mapping[str, HashedFile] = field(default_factory=dict, compare=False, repr=False)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "files": [{"path": f.path, "size": f.size, "mode": f.mode} for f in self.files],
            "left_out": [item.to_dict() for item in self.left_out],
            "allowed": list(self.allowed),
        }


def display_path(path: str) -> str:
    """`path` made safe to print on one line: undecodable bytes and control characters escaped."""
    if path.isprintable():
        return path
    out = []
    for char in path:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 or 0x7F <= code < 0xA0:
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(char, f"\\x{code:02x}"))
        else:
            out.append(char)
    return "".join(out)


