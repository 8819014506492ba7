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
    "ArgumentError": "skillpack.errors",
    "FormatVersionError": "skillpack.errors",
    "IntegrityError": "skillpack.errors",
    "ResourceError": "skillpack.errors",
    "WriteError": "skillpack.errors",
    "Problem": "skillpack.errors",
    # parsing and validation
    "Skill": "skillpack.skillmd.skill",
    "parse_skill": "skillpack.skillmd.skill",
    "parse_skill_file": "skillpack.build.load",
    "Tool": "skillpack.skillmd.tools",
    "Param": "skillpack.skillmd.tools",
    "CheckResult": "skillpack.build.check",
    "validate_skill": "skillpack.skillmd.validate",
    "check_skill": "skillpack.build.check",
    "define_skill": "skillpack.build.define",
    "DefinedSkill": "skillpack.build.define",
    # walk, digest, programs
    "FileSet": "skillpack.build.fileset",
    "LeftOut": "skillpack.build.fileset",
    "walk": "skillpack.build.walk",
    "included_files": "skillpack.build.records",
    "FileRecord": "skillpack.spec.digest",
    "digest": "skillpack.build.verify",
    "bundle_digest": "skillpack.spec.digest",
    "Program": "skillpack.skillmd.programs",
    "programs": "skillpack.build.records",
    # archives, locks, bundles
    "Manifest": "skillpack.spec.manifest",
    "find_skills": "skillpack.build.discover",
    "PackResult": "skillpack.build.pack",
    "pack": "skillpack.build.pack",
    "pack_skills": "skillpack.build.pack",
    "archive_digest": "skillpack.build.verify",
    "VerifyReport": "skillpack.build.verify",
    "verify_target": "skillpack.build.verify",
    "verify_bytes": "skillpack.build.verify",
    "Lock": "skillpack.build.lock",
    "LockEntry": "skillpack.build.lock",
    "write_lock": "skillpack.build.lock",
    "read_lock": "skillpack.build.lock",
    "SignedLock": "skillpack.build.approval",
    "trusted_keys": "skillpack.build.approval",
    "verify_signed_lock": "skillpack.build.approval",
    "BundleResult": "skillpack.build.bundle",
    "write_bundle": "skillpack.build.bundle",
    # runtime and the model-facing layer
    "load": "skillpack.runtime",
    "Bundle": "skillpack.runtime",
    "compile": "skillpack.model.calls",
    "resolve": "skillpack.model.calls",
    "Call": "skillpack.model.calls",
    "tool_definitions": "skillpack.model.calls",
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
    from skillpack.build.approval import SignedLock as SignedLock
    from skillpack.build.approval import trusted_keys as trusted_keys
    from skillpack.build.approval import verify_signed_lock as verify_signed_lock
    from skillpack.build.bundle import BundleResult as BundleResult
    from skillpack.build.bundle import write_bundle as write_bundle
    from skillpack.build.check import CheckResult as CheckResult
    from skillpack.build.check import check_skill as check_skill
    from skillpack.build.define import DefinedSkill as DefinedSkill
    from skillpack.build.define import define_skill as define_skill
    from skillpack.build.discover import find_skills as find_skills
    from skillpack.build.fileset import FileSet as FileSet
    from skillpack.build.fileset import LeftOut as LeftOut
    from skillpack.build.load import parse_skill_file as parse_skill_file
    from skillpack.build.lock import Lock as Lock
    from skillpack.build.lock import LockEntry as LockEntry
    from skillpack.build.lock import read_lock as read_lock
    from skillpack.build.lock import write_lock as write_lock
    from skillpack.build.pack import PackResult as PackResult
    from skillpack.build.pack import pack as pack
    from skillpack.build.pack import pack_skills as pack_skills
    from skillpack.build.records import included_files as included_files
    from skillpack.build.records import programs as programs
    from skillpack.build.verify import VerifyReport as VerifyReport
    from skillpack.build.verify import archive_digest as archive_digest
    from skillpack.build.verify import digest as digest
    from skillpack.build.verify import verify_bytes as verify_bytes
    from skillpack.build.verify import verify_target as verify_target
    from skillpack.build.walk import walk as walk
    from skillpack.errors import ArchiveError as ArchiveError
    from skillpack.errors import ArgumentError as ArgumentError
    from skillpack.errors import FormatVersionError as FormatVersionError
    from skillpack.errors import IntegrityError as IntegrityError
    from skillpack.errors import Problem as Problem
    from skillpack.errors import RefusedError as RefusedError
    from skillpack.errors import ResourceError as ResourceError
    from skillpack.errors import SkillError as SkillError
    from skillpack.errors import SkillpackError as SkillpackError
    from skillpack.errors import WriteError as WriteError
    from skillpack.model.calls import Call as Call
    from skillpack.model.calls import compile as compile
    from skillpack.model.calls import resolve as resolve
    from skillpack.model.calls import tool_definitions as tool_definitions
    from skillpack.runtime import Bundle as Bundle
    from skillpack.runtime import load as load
    from skillpack.skillmd.programs import Program as Program
    from skillpack.skillmd.skill import Skill as Skill
    from skillpack.skillmd.skill import parse_skill as parse_skill
    from skillpack.skillmd.tools import Param as Param
    from skillpack.skillmd.tools import Tool as Tool
    from skillpack.skillmd.validate import validate_skill as validate_skill
    from skillpack.spec.digest import FileRecord as FileRecord
    from skillpack.spec.digest import bundle_digest as bundle_digest
    from skillpack.spec.manifest import Manifest as Manifest
