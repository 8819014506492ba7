"""How both sides read a file's `#!` line: pack from the bytes its walk hashed, the runtime
from an archive's verified bytes, so the programs each derives agree.

Standard library only, nothing imported: the runtime uses it.
"""

from __future__ import annotations

__all__ = ["SHEBANG_MAX", "shebang_line"]

#: Bytes read for a `#!` line (kernels read far less).
SHEBANG_MAX = 4096


def shebang_line(head: bytes) -> str | None:
    """The `#!` line at the start of a file's first bytes, decoded leniently, or None.

    The runtime derives programs from verified archive bytes the same way, so pack and
    runtime agree: read at most `SHEBANG_MAX` bytes, cut at the first newline, drop a ``\r``.
    """
    if not head.startswith(b"#!"):
        return None
    return head[:SHEBANG_MAX].split(b"\n", 1)[0].removesuffix(b"\r").decode("utf-8", "replace")

