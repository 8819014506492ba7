"""Paths as text, spelt and ordered as `pathlib` spells and orders them, without importing it.

``str(Path(text))`` is how every path the library returns or reports is spelt (``skills/``
is ``skills``, ``./a//b`` is ``a/b``), and a list of skill folders is sorted as a list of
``Path`` objects sorts (by their parts: ``a/b`` before ``a-b``). `check` and `digest` of
skill folders need nothing else from pathlib, whose import (with ``urllib.parse`` and
``ipaddress``, which it imports) is about 5 ms of every start-up: these functions give the
same strings from the text alone (tests/test_load_paths.py compares them with pathlib's on
every spelling it lists). POSIX paths only, as skillpack's.
"""

from __future__ import annotations

import os

__all__ = ["joined", "name_of", "parent_spelling", "path_order", "spelling", "spelt_as_pathlib"]


def spelt_as_pathlib(text: str) -> bool:
    """Whether ``str(Path(text)) == text``: a relative or absolute path with no empty, ``.``
    or trailing part (``a/b``, ``/a/b``, ``../a``)."""
    return (bool(text) and text != "." and not text.endswith(("/", "/."))
            and not text.startswith(("./", "//")) and "//" not in text and "/./" not in text)


def spelling(text: str) -> str:
    """``str(Path(text))``: empty and ``.`` parts dropped (``..`` kept, as pathlib keeps it),
    a leading ``//`` kept as POSIX allows (three or more slashes are one), ``.`` for none."""
    if spelt_as_pathlib(text):
        return text
    root = ""
    if text.startswith("/"):
        root = "//" if text.startswith("//") and not text.startswith("///") else "/"
    return root + "/".join(p for p in text.split("/") if p and p != ".") or "."


def parent_spelling(text: str) -> str:
    """``str(Path(text).parent)``."""
    return os.path.dirname(spelling(text)) or "."  # a root is its own parent, as in pathlib


def name_of(text: str) -> str:
    """``Path(text).name``: the last part, ``""`` for ``.`` or a root."""
    spelt = spelling(text)
    return "" if spelt == "." else os.path.basename(spelt)


def joined(folder: str, name: str) -> str:
    """``str(Path(folder) / name)`` for a `folder` spelt as pathlib spells it and a plain
    file `name` (no ``/``, not ``.`` or empty)."""
    if folder == ".":
        return name
    return folder + name if folder.endswith("/") else f"{folder}/{name}"  # a root: / or //


def path_order(text: str) -> list[str]:
    """A sort key that orders spellings of paths under one root as their ``Path`` objects
    order: part by part (so ``a/b`` comes before ``a-b``, where the text has ``-`` first)."""
    return text.split("/")
