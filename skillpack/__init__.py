"""skillpack: the build-time packager and bundler for agent skills.

Public API. Names are imported lazily (PEP 562) so that ``import skillpack`` stays cheap:
serverless cold starts import this module first, and the runtime must not pay for YAML,
blake3 or click before it needs them.
"""

from __future__ import annotations

# Neither `typing` (3 to 8 ms of a cold start) nor `importlib` (0.5 ms) at import.
TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from typing import Any

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
    "FileSet": "skillpack.fileset",
    "LeftOut": "skillpack.fileset",
    "walk": "skillpack.fileset",
    "included_files": "skillpack.fileset",
    "FileRecord": "skillpack.hashing",
    "digest": "skillpack.hashing",
    "bundle_digest": "skillpack.hashing",
    "Program": "skillpack.program",
    "programs": "skillpack.program",
    # archives, locks, bundles
    "Manifest": "skillpack.manifest",
    "find_skills": "skillpack.discover",
    "PackResult": "skillpack.archive",
    "pack": "skillpack.archive",
    "pack_skills": "skillpack.archive",
    "archive_digest": "skillpack.archive",
    "VerifyReport": "skillpack.verify",
    "verify_target": "skillpack.verify",
    "verify_bytes": "skillpack.verify",
    "Lock": "skillpack.lock",
    "LockEntry": "skillpack.lock",
    "write_lock": "skillpack.lock",
    "read_lock": "skillpack.lock",
    "BundleResult": "skillpack.bundle",
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
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from skillpack.archive import PackResult as PackResult
    from skillpack.archive import archive_digest as archive_digest
    from skillpack.archive import pack as pack
    from skillpack.archive import pack_skills as pack_skills
    from skillpack.bundle import BundleResult as BundleResult
    from skillpack.bundle import write_bundle as write_bundle
    from skillpack.discover import find_skills as find_skills
    from skillpack.errors import ArchiveError as ArchiveError
    from skillpack.errors import FormatVersionError as FormatVersionError
    from skillpack.errors import IntegrityError as IntegrityError
    from skillpack.errors import Problem as Problem
    from skillpack.errors import RefusedError as RefusedError
    from skillpack.errors import ResourceError as ResourceError
    from skillpack.errors import SkillError as SkillError
    from skillpack.errors import SkillpackError as SkillpackError
    from skillpack.errors import WriteError as WriteError
    from skillpack.fileset import FileSet as FileSet
    from skillpack.fileset import LeftOut as LeftOut
    from skillpack.fileset import included_files as included_files
    from skillpack.fileset import walk as walk
    from skillpack.hashing import FileRecord as FileRecord
    from skillpack.hashing import bundle_digest as bundle_digest
    from skillpack.hashing import digest as digest
    from skillpack.lock import Lock as Lock
    from skillpack.lock import LockEntry as LockEntry
    from skillpack.lock import read_lock as read_lock
    from skillpack.lock import write_lock as write_lock
    from skillpack.manifest import Manifest as Manifest
    from skillpack.model import Call as Call
    from skillpack.model import compile as compile
    from skillpack.model import resolve as resolve
    from skillpack.model import tool_definitions as tool_definitions
    from skillpack.program import Program as Program
    from skillpack.program import programs as programs
    from skillpack.runtime import Bundle as Bundle
    from skillpack.runtime import load as load
    from skillpack.skill import Skill as Skill
    from skillpack.skill import parse_skill as parse_skill
    from skillpack.skill import parse_skill_file as parse_skill_file
    from skillpack.tools import Param as Param
    from skillpack.tools import Tool as Tool
    from skillpack.validate import CheckResult as CheckResult
    from skillpack.validate import check_skill as check_skill
    from skillpack.validate import validate_skill as validate_skill
    from skillpack.verify import VerifyReport as VerifyReport
    from skillpack.verify import verify_bytes as verify_bytes
    from skillpack.verify import verify_target as verify_target
