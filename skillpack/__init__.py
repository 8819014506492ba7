"""skillpack: the build-time packager and bundler for agent skills.

Public API. Names are imported lazily (PEP 562) so that ``import skillpack`` stays cheap:
serverless cold starts import this module first, and the runtime must not pay for YAML,
blake3 or click before it needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # errors
    "SkillpackError": "skillpack.errors",
    "SkillError": "skillpack.errors",
    "RefusedError": "skillpack.errors",
    "ArchiveError": "skillpack.errors",
    "FormatVersionError": "skillpack.errors",
    "IntegrityError": "skillpack.errors",
    "ResourceError": "skillpack.errors",
    "WriteError": "skillpack.errors",
    "Problem": "skillpack.errors",
    # parsing and validation
    "Skill": "skillpack.skill",
    "parse_skill": "skillpack.skill",
    "parse_skill_file": "skillpack.skill",
    "Tool": "skillpack.tools",
    "Param": "skillpack.tools",
    "CheckResult": "skillpack.validate",
    "validate_skill": "skillpack.validate",
    "check_skill": "skillpack.validate",
    # walk, digest, programs
    "FileSet": "skillpack.walk",
    "LeftOut": "skillpack.walk",
    "walk": "skillpack.walk",
    "included_files": "skillpack.walk",
    "FileRecord": "skillpack.digest",
    "digest": "skillpack.digest",
    "bundle_digest": "skillpack.digest",
    "Program": "skillpack.programs",
    "programs": "skillpack.programs",
    # archives, locks, bundles
    "Manifest": "skillpack.manifest",
    "pack": "skillpack.archive",
    "verify": "skillpack.archive",
    "write_lock": "skillpack.lock",
    "read_lock": "skillpack.lock",
    "write_bundle": "skillpack.bundle",
    # runtime and the model-facing layer
    "load": "skillpack.runtime",
    "Bundle": "skillpack.runtime",
    "compile": "skillpack.model",
    "resolve": "skillpack.model",
    "Call": "skillpack.model",
    "tool_definitions": "skillpack.model",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'skillpack' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from skillpack.archive import pack, verify
    from skillpack.bundle import write_bundle
    from skillpack.digest import FileRecord, bundle_digest, digest
    from skillpack.errors import (
        ArchiveError,
        FormatVersionError,
        IntegrityError,
        Problem,
        RefusedError,
        ResourceError,
        SkillError,
        SkillpackError,
        WriteError,
    )
    from skillpack.lock import read_lock, write_lock
    from skillpack.manifest import Manifest
    from skillpack.model import Call, compile, resolve, tool_definitions
    from skillpack.programs import Program, programs
    from skillpack.runtime import Bundle, load
    from skillpack.skill import Skill, parse_skill, parse_skill_file
    from skillpack.tools import Param, Tool
    from skillpack.validate import CheckResult, check_skill, validate_skill
    from skillpack.walk import FileSet, LeftOut, included_files, walk
