"""`-o -`: a command that produces one file (a bundle, a lock) writes it to stdout instead.

The file is written as always (atomically, by the library) into a private temp folder, then
copied to stdout and the folder removed: stdout gets the whole file or, when the command
fails, nothing. Where a command writes a folder or several files (`pack`, `unpack`, `new`),
``-o -`` is a usage error (2), never a file named ``-``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from typing import TypeVar

from skillpack.cli._common import usage

__all__ = ["DASH", "refuse_dash", "write_to_stdout"]

DASH = "-"
T = TypeVar("T")


def refuse_dash(value: str | None, what: str) -> None:
    """A usage error when `value` is ``-``: this command's output cannot go to stdout."""
    if value == DASH:
        usage(f"-o - writes to stdout, and {what} is not one file; give a folder")


def write_to_stdout(write: Callable[[str], T], name: str) -> T:
    """Call ``write(path)`` with a path in a private temp folder, then copy that file to
    stdout (binary); return what `write` returned."""
    with tempfile.TemporaryDirectory(prefix="skillpack-stdout-") as folder:
        path = os.path.join(folder, name)
        result = write(path)
        sys.stdout.flush()  # what was printed before, then the file's bytes
        stdout = sys.stdout.buffer
        with open(path, "rb") as handle:
            shutil.copyfileobj(handle, stdout)
        stdout.flush()
    return result
