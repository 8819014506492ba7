"""The rules of the Agent Skills specification, plus the platform warnings, as `Problem`s.

Every rule is applied to the NFKC-normalised name, as the reference validator (skills-ref)
does, and a name that is not already NFKC-normal is an error of its own (`name-not-nfkc`):
the name written is the one used, so a full-width look-alike of ``waitlist`` may not stand
beside it. Each problem has a stable code, a severity, a message, the file and the line of the
offending key. Warnings (not errors): unknown frontmatter keys, metadata values that are not
strings, an `allowed-tools` entry naming a known tool in another case (``read``), a body over
500 lines, and what Claude's API refuses though the spec allows it
(``<``/``>`` in name or description, ``anthropic``/``claude`` in the name).
"""

from __future__ import annotations

import os
import unicodedata
from typing import Any

from skillpack.errors import Problem
from skillpack.formats.paths import SKILL_MD
from skillpack.skillmd.commands import run_problems
from skillpack.skillmd.host_tools import case_twin, tool_of_entry
from skillpack.skillmd.html_blocks import HiddenFence, tool_fences_in_html
from skillpack.skillmd.invisible import invisible_problems
from skillpack.skillmd.skill import ALLOW_SECRETS_KEY, Skill
from skillpack.skillmd.yaml_core import version_differences

__all__ = [
    "KNOWN_KEYS",
    "MAX_BODY_LINES",
    "MAX_COMPATIBILITY",
    "MAX_DESCRIPTION",
    "MAX_NAME",
    "validate_skill",
]

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_BODY_LINES = 500
KNOWN_KEYS = frozenset(
    {"name", "skill", "description", "license", "compatibility", "metadata", "allowed-tools",
     "includes"}
)


def validate_skill(skill: Skill, accepted_keys: frozenset[str] = frozenset()) -> list[Problem]:
    """Every rule of the Agent Skills specification, as problems sorted by line.

    ``accepted_keys`` are frontmatter keys beyond the spec's that draw no ``unknown-key``
    warning (the keys the hosts checked against document: `skillpack.packing.targets`
    `accepted_keys`)."""
    data, file = skill.frontmatter, skill.file
    problems: list[Problem] = []

    def add(severity: str, code: str, message: str, key: str | None) -> None:
        # a missing key has no line of its own: point at the frontmatter's opening line
        line = 1 if key is None else skill.lines.get(key)
        problems.append(Problem("error" if severity == "error" else "warning", code, message,
                                file, line))

    name_key = "name" if "name" in data else "skill"
    _check_name(data.get(name_key), name_key, skill.workdir, add)
    _check_description(data, add)
    compatibility = data.get("compatibility")
    if "compatibility" in data:
        if not isinstance(compatibility, str):
            add("error", "compatibility-type", "'compatibility' must be a string",
                "compatibility")
        elif len(compatibility) > MAX_COMPATIBILITY:
            add("error", "compatibility-too-long",
                f"compatibility is {len(compatibility)} characters; the limit is "
                f"{MAX_COMPATIBILITY}", "compatibility")
    if "license" in data and not isinstance(data["license"], str):
        add("error", "license-type", "'license' must be a string (a license name or file)",
            "license")
    _check_metadata(data, add)
    allowed = data.get("allowed-tools")
    if "allowed-tools" in data and not (
        isinstance(allowed, str)
        or (isinstance(allowed, list) and all(isinstance(v, str) for v in allowed))
    ):
        add("error", "allowed-tools-type",
            "'allowed-tools' must be a list or a space/comma separated string of tools",
            "allowed-tools")
    for entry in skill.allowed_tools or ():
        named = tool_of_entry(entry)
        known = case_twin(named)
        if known is not None:
            fixed = entry.strip().replace(named, known, 1)
            add("warning", "allowed-tools-case",
                f"allowed-tools entry '{entry}' differs from the tool '{known}' only by case: "
                f"tools are compared by exact name, so it permits no call of '{known}'; "
                f"write '{fixed}'", "allowed-tools")
    for key in data:
        if key not in KNOWN_KEYS and key not in accepted_keys:
            add("warning", "unknown-key",
                f"unknown frontmatter key '{key}'; the Agent Skills fields are name, "
                "description, license, compatibility, metadata and allowed-tools", key)
    body_lines = skill.body.count("\n") + (0 if skill.body.endswith("\n") or not skill.body else 1)
    if body_lines > MAX_BODY_LINES:
        problems.append(Problem(
            "warning", "body-too-long",
            f"the body is {body_lines} lines; keep SKILL.md under {MAX_BODY_LINES} lines and "
            "move details to references/", file, skill.body_line))
    for tool in skill.tools:  # what the approver must see: the program a model may choose
        problems.extend(run_problems(tool, file))
    for hidden in tool_fences_in_html(skill.body):
        problems.append(_hidden_tool(hidden, skill.body_line, file))
    problems.extend(_invisible(skill))
    problems.extend(_yaml_versions(skill))
    problems.sort(key=lambda p: (p.line or 0))
    return problems


def _yaml_versions(skill: Skill) -> list[Problem]:
    """A plain scalar YAML 1.1 readers (PyYAML) and YAML 1.2 hosts (npm ``yaml``, the MCP
    skills extension) read differently: a warning to quote it (`yaml_core`)."""
    return [Problem(
        "warning", "yaml-version",
        f"'{text}' reads as {_shown(old)} under YAML 1.1 (PyYAML) but as {_shown(new)} under "
        f"YAML 1.2 (the MCP skills extension's hosts): quote it ('{text}') so that every "
        "reader gets the same string", skill.file, line + 2)
        for line, text, old, new in version_differences(skill.yaml_text)]


def _shown(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the string '{value}'"
    return f"{type(value).__name__} {value}"


def _hidden_tool(hidden: HiddenFence, body_line: int, file: str | None) -> Problem:
    """The warning of a tool fence CommonMark reads as part of an HTML block: the block's
    opening line, and what ends it (`tool-in-comment` for a comment, else `tool-in-html`)."""
    opened = body_line + hidden.opened
    if hidden.kind == 2:
        return Problem(
            "warning", "tool-in-comment",
            f"this tool fence lies in the HTML comment opened at line {opened}: rendered "
            "Markdown hides it, yet it defines a tool a model may call; move it out of the "
            "comment, or delete it", file, body_line + hidden.line)
    if hidden.closer:
        where, fix = (f"which only a line holding {hidden.closer} ends",
                      "move it out of the block")
    else:
        where, fix = ("which a blank line ends, and none came before the fence",
                      "put a blank line before the fence")
    return Problem(
        "warning", "tool-in-html",
        f"this tool fence lies in the HTML block '{hidden.opener}' opened at line {opened}, "
        f"{where}: rendered Markdown shows the block as HTML, not this fence, yet it defines "
        f"a tool a model may call; {fix}, or delete it", file, body_line + hidden.line)


def _invisible(skill: Skill) -> list[Problem]:
    """Invisible and bidi characters in what SKILL.md tells a model (its frontmatter values,
    at their key's line, and its body): errors, a person reading the file does not see them."""
    found: list[Problem] = []
    for key, value in skill.frontmatter.items():
        texts = [value] if isinstance(value, str) else [
            v for v in (value.values() if isinstance(value, dict) else value)
            if isinstance(v, str)] if isinstance(value, dict | list) else []
        for text in texts:
            found.extend(Problem(p.severity, p.code, f"'{key}': {p.message}", skill.file,
                                 skill.lines.get(key))
                         for p in invisible_problems(SKILL_MD, text, True))
    found.extend(Problem(p.severity, p.code, p.message, skill.file,
                         (p.line or 1) + skill.body_line - 1)
                 for p in invisible_problems(SKILL_MD, skill.body, True))
    return found


def _check_name(value: Any, key: str, workdir: str | None, add: Any) -> None:
    if value is None:
        add("error", "name-missing", "the frontmatter has no 'name' (or 'skill' for a hard "
            "skill); add one, equal to the folder name", None)
        return
    if not isinstance(value, str) or not value.strip():
        add("error", "name-empty", f"'{key}' must be a non-empty string", key)
        return
    name = unicodedata.normalize("NFKC", value.strip())
    if name != value.strip():  # the name used (folders, bundles, catalogs) is the one written
        add("error", "name-not-nfkc",
            f"name {value.strip()!r} is not in NFKC form: it reads as {name!r}, so the two "
            f"would name one skill; write {name!r}", key)
    if len(name) > MAX_NAME:
        add("error", "name-too-long",
            f"name '{name}' is {len(name)} characters; the limit is {MAX_NAME}", key)
    if name != name.lower():
        add("error", "name-not-lowercase", f"name '{name}' must be lowercase", key)
    if not all(c.isalnum() or c == "-" for c in name):
        add("error", "name-invalid-characters",
            f"name '{name}' may hold only letters, digits and hyphens", key)
    if name.startswith("-") or name.endswith("-"):
        add("error", "name-hyphen-edge", f"name '{name}' must not start or end with a hyphen",
            key)
    if "--" in name:
        add("error", "name-double-hyphen", f"name '{name}' must not contain '--'", key)
    if workdir is not None:
        folder = unicodedata.normalize("NFKC", os.path.basename(os.path.abspath(workdir)))
        if folder != name:
            add("error", "name-mismatch",
                f"name '{name}' must equal its folder name '{folder}'", key)
    if "<" in name or ">" in name:
        add("warning", "claude-angle-brackets",
            f"name '{name}' holds '<' or '>', which Claude's API refuses", key)
    lowered = name.lower()
    for word in ("anthropic", "claude"):
        if word in lowered:
            add("warning", "claude-reserved-word",
                f"name '{name}' contains '{word}', which Claude's API refuses in skill names",
                key)


def _check_description(data: dict[str, Any], add: Any) -> None:
    if "description" not in data:
        add("error", "description-missing",
            "the frontmatter has no 'description'; say what the skill does and when to use it",
            None)
        return
    value = data["description"]
    if not isinstance(value, str) or not value.strip():
        add("error", "description-empty",
            "'description' must be non-empty text saying what the skill does and when to use it",
            "description")
        return
    if len(value) > MAX_DESCRIPTION:
        add("error", "description-too-long",
            f"description is {len(value)} characters; the limit is {MAX_DESCRIPTION}",
            "description")
    if "<" in value or ">" in value:
        add("warning", "claude-angle-brackets",
            "description holds '<' or '>', which Claude's API refuses", "description")


def _check_metadata(data: dict[str, Any], add: Any) -> None:
    # 'metadata:' with no value is YAML null, read failsafe as "": no metadata, not a bad type
    if "metadata" not in data or data["metadata"] == "":
        return
    metadata = data["metadata"]
    if not isinstance(metadata, dict):
        add("error", "metadata-type", "'metadata' must be a map of names to strings", "metadata")
        return
    for key, value in metadata.items():
        if not isinstance(value, str) and key != ALLOW_SECRETS_KEY:  # that one is an error
            add("warning", "metadata-not-string",
                f"metadata '{key}' is a {'list' if isinstance(value, list) else 'map'}; the "
                "spec wants string values", f"metadata.{key}")
    allow = metadata.get(ALLOW_SECRETS_KEY)
    if allow is not None and not isinstance(allow, str):
        add("error", "allow-secrets-type",
            f"metadata '{ALLOW_SECRETS_KEY}' must be a space separated list of paths",
            f"metadata.{ALLOW_SECRETS_KEY}")
