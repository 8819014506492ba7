"""Serve packed skills from bytes: verified, with no filesystem, at serverless cold start.

``load(data)`` reads a bundle (or a single `.skill` archive) held in memory and checks it
before anything is served (`skillpack.runtime.bundle`, `skillpack.runtime.checks`); each
skill's files are served as verified slices (`skillpack.runtime.skill`). The formats and the
API are described in docs/RUNTIME.md, and so is the cold-start rule: what this package may
import.
"""

from __future__ import annotations

from skillpack.formats.bundle_index import BUNDLE_INDEX
from skillpack.runtime.bundle import Bundle, load
from skillpack.runtime.skill import LoadedSkill, Resource

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from typing import Any

    from skillpack.model.calls import Call, compile, resolve, tool_definitions

__all__ = [
    "BUNDLE_INDEX",
    "Bundle",
    "Call",
    "LoadedSkill",
    "Resource",
    "compile",
    "load",
    "resolve",
    "tool_definitions",
]

_MODEL_NAMES = frozenset({"Call", "compile", "resolve", "tool_definitions"})


def __getattr__(name: str) -> Any:
    """The model-facing names, imported on first use."""
    if name in _MODEL_NAMES:
        # cold path: the model layer (and the `re`, `json` it needs) only once it is used
        from skillpack.model import calls

        value = getattr(calls, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'skillpack.runtime' has no attribute {name!r}")
