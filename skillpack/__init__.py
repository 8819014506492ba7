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
    "parse_skill_file": "skillpack.source.load",
    "Tool": "skillpack.skillmd.tools",
    "Param": "skillpack.skillmd.tools",
    "CheckResult": "skillpack.packing.check",
    "validate_skill": "skillpack.skillmd.validate",
    "check_skill": "skillpack.packing.check",
    "define_skill": "skillpack.source.define",
    "DefinedSkill": "skillpack.source.define",
    # walk, digest, programs
    "FileSet": "skillpack.source.fileset",
    "LeftOut": "skillpack.source.fileset",
    "walk": "skillpack.source.walk",
    "included_files": "skillpack.source.records",
    "FileRecord": "skillpack.formats.digest",
    "digest": "skillpack.packing.verify",
    "bundle_digest": "skillpack.formats.digest",
    "Program": "skillpack.skillmd.programs",
    "programs": "skillpack.source.records",
    # archives, locks, bundles
    "Manifest": "skillpack.formats.manifest",
    "find_skills": "skillpack.source.discover",
    "PackResult": "skillpack.packing.pack",
    "pack": "skillpack.packing.pack",
    "pack_skills": "skillpack.packing.pack",
    "archive_digest": "skillpack.packing.verify",
    "VerifyReport": "skillpack.packing.verify",
    "verify_target": "skillpack.packing.verify",
    "verify_bytes": "skillpack.packing.verify",
    "Lock": "skillpack.approve.lock",
    "LockEntry": "skillpack.approve.lock",
    "write_lock": "skillpack.approve.lock",
    "read_lock": "skillpack.approve.lock",
    "SignedLock": "skillpack.approve.signing",
    "trusted_keys": "skillpack.approve.signing",
    "verify_signed_lock": "skillpack.approve.signing",
    "BundleResult": "skillpack.packing.bundle",
    # installing into agents' folders, and verifying them
    "AgentFolder": "skillpack.install.agents",
    "agent_folders": "skillpack.install.agents",
    "InstallReport": "skillpack.install.pipeline",
    "install_skills": "skillpack.install.pipeline",
    "verify_folders": "skillpack.install.folders",
    "write_bundle": "skillpack.packing.bundle",
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
    from skillpack.approve.lock import Lock as Lock
    from skillpack.approve.lock import LockEntry as LockEntry
    from skillpack.approve.lock import read_lock as read_lock
    from skillpack.approve.lock import write_lock as write_lock
    from skillpack.approve.signing import SignedLock as SignedLock
    from skillpack.approve.signing import trusted_keys as trusted_keys
    from skillpack.approve.signing import verify_signed_lock as verify_signed_lock
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
    from skillpack.formats.digest import FileRecord as FileRecord
    from skillpack.formats.digest import bundle_digest as bundle_digest
    from skillpack.formats.manifest import Manifest as Manifest
    from skillpack.install.agents import AgentFolder as AgentFolder
    from skillpack.install.agents import agent_folders as agent_folders
    from skillpack.install.folders import verify_folders as verify_folders
    from skillpack.install.pipeline import InstallReport as InstallReport
    from skillpack.install.pipeline import install_skills as install_skills
    from skillpack.model.calls import Call as Call
    from skillpack.model.calls import compile as compile
    from skillpack.model.calls import resolve as resolve
    from skillpack.model.calls import tool_definitions as tool_definitions
    from skillpack.packing.bundle import BundleResult as BundleResult
    from skillpack.packing.bundle import write_bundle as write_bundle
    from skillpack.packing.check import CheckResult as CheckResult
    from skillpack.packing.check import check_skill as check_skill
    from skillpack.packing.pack import PackResult as PackResult
    from skillpack.packing.pack import pack as pack
    from skillpack.packing.pack import pack_skills as pack_skills
    from skillpack.packing.verify import VerifyReport as VerifyReport
    from skillpack.packing.verify import archive_digest as archive_digest
    from skillpack.packing.verify import digest as digest
    from skillpack.packing.verify import verify_bytes as verify_bytes
    from skillpack.packing.verify import verify_target as verify_target
    from skillpack.runtime import Bundle as Bundle
    from skillpack.runtime import load as load
    from skillpack.skillmd.programs import Program as Program
    from skillpack.skillmd.skill import Skill as Skill
    from skillpack.skillmd.skill import parse_skill as parse_skill
    from skillpack.skillmd.tools import Param as Param
    from skillpack.skillmd.tools import Tool as Tool
    from skillpack.skillmd.validate import validate_skill as validate_skill
    from skillpack.source.define import DefinedSkill as DefinedSkill
    from skillpack.source.define import define_skill as define_skill
    from skillpack.source.discover import find_skills as find_skills
    from skillpack.source.fileset import FileSet as FileSet
    from skillpack.source.fileset import LeftOut as LeftOut
    from skillpack.source.load import parse_skill_file as parse_skill_file
    from skillpack.source.records import included_files as included_files
    from skillpack.source.records import programs as programs
    from skillpack.source.walk import walk as walk
