"""Parse a SKILL.md of either dialect into a `Skill`.

Two dialects share one file shape: YAML frontmatter, then a markdown body.

* Agent Skills: ``name``, ``description``, ``license``, ``compatibility``, ``metadata``,
  ``allowed-tools``.
* Hard skills: the same, with the name under ``skill:`` (both may appear only if equal),
  ``includes:`` listing the files the skill carries, and ```tool fences in the body.

`parse_skill` raises `SkillError` for what makes a file unreadable as a skill (frontmatter
syntax, tool fences, run templates, includes), with every problem in ``.problems``. The
rules of the Agent Skills specification (name format, lengths...) are checked by
`skillpack.skillmd.validate`, so that a skill breaking them can still be parsed and reported.

Standard library only at import (YAML is loaded when a frontmatter is parsed).
"""

from __future__ import annotations

import os
import posixpath
import re

from skillpack._record import Record, field
from skillpack.errors import Problem, SkillError
from skillpack.skillmd.fences import parse_body
from skillpack.skillmd.frontmatter import Frontmatter, normalise_text, split_frontmatter
from skillpack.skillmd.tools import Tool

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ALLOW_SECRETS_KEY", "Skill", "parse_skill",
           "split_entries"]

#: The metadata key through which a skill allows named files past the secret filter.
ALLOW_SECRETS_KEY = "skillpack-allow-secrets"

_DRIVE = re.compile(r"^[A-Za-z]:")
_ENTRY_TOKEN = re.compile(r"[^\s,()]+(?:\([^)]*\))?|\([^)]*\)")
_ENTRY_WORD = re.compile(r"[^\s,()]+")


class Skill(Record):
    """A parsed SKILL.md. ``includes`` is as declared; ``include_list`` is normalised."""

    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, Any] | None = None
    allowed_tools: tuple[str, ...] | None = None
    includes: str | tuple[str, ...] | None = None
    body: str = ""
    rendered: str = ""
    tools: tuple[Tool, ...] = ()
    file: str | None = None
    workdir: str | None = None
    frontmatter: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    lines: dict[str, int] = field(default_factory=dict, compare=False, repr=False)
    body_line: int = field(default=1, compare=False, repr=False)
    #: the frontmatter's YAML text, as written (empty when read without YAML: the runtime)
    yaml_text: str = field(default="", compare=False, repr=False)
    #: SKILL.md begins with exactly ``---`` and a line end: no byte-order mark before it,
    #: nothing after it (what an MCP host's frontmatter reader requires)
    plain_start: bool = field(default=True, compare=False, repr=False)

    @property
    def include_list(self) -> tuple[str, ...] | None:
        """The declared includes as normalised relative paths, or None without ``includes:``."""
        if self.includes is None:
            return None
        entries = split_entries(self.includes, commas_only=True)
        return tuple(posixpath.normpath(e) for e in entries)

    @property
    def secret_allowances(self) -> tuple[str, ...]:
        """Paths the skill allows past the secret filter (metadata ``skillpack-allow-secrets``)."""
        value = (self.metadata or {}).get(ALLOW_SECRETS_KEY)
        if not isinstance(value, str):
            return ()
        return tuple(posixpath.normpath(e) for e in split_entries(value))

    def tool(self, tool_id: str) -> Tool | None:
        for tool in self.tools:
            if tool.id == tool_id:
                return tool
        return None


def split_entries(
    value: str | tuple[str, ...] | list[Any], *, commas_only: bool = False
) -> list[str]:
    """Split a declared list: a YAML list, or a comma (and, unless ``commas_only``, space)
    separated string. Parentheses keep their content together: ``Bash(git status:*)``."""
    if not isinstance(value, str):
        return [str(v).strip() for v in value]
    if commas_only:
        return [part.strip() for part in value.split(",")]
    # `\([^)]*\)` scans to the end from every '(' that no ')' follows (quadratic on a
    # value full of '('); after the last ')' no group can close, so only words are read there.
    # No token spans the last ')': a token holds a ')' only as its last character.
    cut = value.rfind(")") + 1
    return _ENTRY_TOKEN.findall(value, 0, cut) + _ENTRY_WORD.findall(value, cut)


def parse_skill(source: str, *, file: str | None = None, workdir: str | None = None,
                front: Frontmatter | None = None) -> Skill:
    """Parse the text of a SKILL.md. ``workdir`` (the skill folder) enables include checks.
    ``front`` is its frontmatter when already read (the runtime reads it without YAML)."""
    if front is None:
        front = split_frontmatter(normalise_text(source), file=file)
    data, lines = front.data, front.lines
    problems: list[Problem] = []

    def err(code: str, message: str, key: str) -> None:
        problems.append(Problem("error", code, message, file, lines.get(key)))

    name = _name(data, err)
    parsed = parse_body(front.body, file=file, first_line=front.body_line)
    problems.extend(parsed.problems)
    includes = _includes(data.get("includes"), workdir, err) if "includes" in data else None
    allowed = data.get("allowed-tools")
    metadata = data.get("metadata")
    skill = Skill(
        name=name,
        description=_text(data.get("description")) or "",
        license=_text(data.get("license")),
        compatibility=_text(data.get("compatibility")),
        metadata=metadata if isinstance(metadata, dict) else None,
        allowed_tools=tuple(split_entries(allowed)) if isinstance(allowed, (str, list)) else None,
        includes=includes,
        body=front.body,
        rendered=parsed.rendered,
        tools=parsed.tools,
        file=file,
        workdir=workdir,
        frontmatter=data,
        lines=lines,
        body_line=front.body_line,
        yaml_text=front.text,
        plain_start=source.startswith(("---\n", "---\r\n")),
    )
    if problems:
        raise SkillError(_summary(problems), path=file, line=problems[0].line, problems=problems)
    return skill


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _name(data: dict[str, Any], err: Any) -> str:
    name, skill = data.get("name"), data.get("skill")
    if "name" in data and "skill" in data and name != skill:
        err("name-conflict", f"'name: {name}' and 'skill: {skill}' disagree; a skill has one "
            "name (keep 'name:' for Agent Skills or 'skill:' for hard skills)", "skill")
    value = name if "name" in data else skill
    return value.strip() if isinstance(value, str) else ""


def _includes(value: Any, workdir: str | None, err: Any) -> str | tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        declared: str | tuple[str, ...] = tuple(value)
    elif isinstance(value, str):
        declared = value
    else:
        err("includes-type", "'includes' must be a comma-separated string or a list of paths",
            "includes")
        return None
    if isinstance(declared, str) and not declared.strip():
        err("include-empty", "'includes' is empty; list the files the skill carries, or "
            "remove the key", "includes")
        return declared
    for entry in split_entries(declared, commas_only=True):
        if not entry:
            err("include-empty", "'includes' has an empty entry; remove the stray comma",
                "includes")
        elif entry.startswith(("/", "\\")) or _DRIVE.match(entry):
            err("include-absolute", f"include '{entry}' is absolute; name it relative to the "
                "skill folder", "includes")
        elif entry.startswith("~"):
            err("include-home", f"include '{entry}' starts with '~'; name it relative to the "
                "skill folder", "includes")
        elif ".." in re.split(r"[/\\]", entry):
            err("include-dotdot", f"include '{entry}' has a '..' segment and would leave the "
                "skill folder", "includes")
        elif workdir is not None and not _there(os.path.join(workdir, entry)):
            err("include-missing", f"include '{entry}' does not exist in the skill folder",
                "includes")
    return declared


def _there(path: str) -> bool:
    """Whether something is at `path` (a link too); one that cannot be looked at (a folder
    on the way not readable) counts as there: the walk says why it cannot be read."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return True


def _summary(problems: list[Problem]) -> str:
    first = problems[0].message
    return first if len(problems) == 1 else f"{first} (and {len(problems) - 1} more problems)"
