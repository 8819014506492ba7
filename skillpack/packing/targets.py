"""Host profiles as data, and the check of a skill against the hosts it is meant for.

Each :class:`Target` is one host (``claude-ai``, ``codex``, ``mcp``...) with every limit it
documents, each :class:`Limit` carrying the value in the unit the host documents and the
source it comes from. Where a source is ambiguous the stricter reading is taken (30 MB is
30,000,000 bytes, not 30 MiB). What a host refuses is an error; file counts and uncompressed
totals count every member the archive holds when the facts know them (``SkillFacts.members``;
an archive packed for a host holds the skill's files only: `carries_manifest`); advice a host
does not enforce is a ``note`` limit, reported (as ``info``) only with ``notes=True``.

:func:`check_targets` measures a :class:`SkillFacts` (plain data the build side fills in from
the walk and the parsed SKILL.md) against each named target and returns one :class:`Problem`
per limit broken, its message naming the host, the limit, the measured value and the source.
:func:`accepted_keys` is what the targets say about the Agent Skills rules' own problems:
keys every host named documents are not "unknown" for them (``validate_skill(skill,
accepted_keys(targets))``).

Nothing here reads the filesystem.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from skillpack.errors import Problem, SkillError

__all__ = [
    "CLAUDE_CODE_KEYS",
    "DEFAULT_TARGET",
    "LAYOUTS",
    "SPEC_KEYS",
    "TARGETS",
    "FileFact",
    "Limit",
    "SkillFacts",
    "Target",
    "accepted_keys",
    "carries_manifest",
    "check_request",
    "check_targets",
    "default_layout",
    "get_targets",
    "name_key_problem",
]

Layout: TypeAlias = Literal["wrapped", "root"]
Measure: TypeAlias = Literal[
    "files",  # how many members the archive holds (the skill's files when not known)
    "total-bytes",  # the sum of the skill's file sizes (uncompressed)
    "archive-bytes",  # the size of the uploaded archive (the files' sum when not known)
    "file-bytes",  # the largest single file
    "description-chars",  # len(description), in Unicode code points
    "description-units",  # the description's length in UTF-16 units (JavaScript's .length)
    "listing-chars",  # len(description) + len(when_to_use): what a host lists per skill
    "skills-per-request",  # how many skills one request (a bundle) carries
]

#: ``wrapped``: one top folder named after the skill holds everything; ``root``: SKILL.md
#: and the other files sit at the archive's root.
LAYOUTS: tuple[Layout, ...] = ("wrapped", "root")

DEFAULT_TARGET = "agentskills"

#: The Agent Skills specification's frontmatter fields (what skillpack's validate knows,
#: with skillpack's own ``skill`` and ``includes``).
SPEC_KEYS = frozenset(
    {"name", "skill", "description", "license", "compatibility", "metadata", "allowed-tools",
     "includes"}
)

#: The frontmatter keys Claude Code documents beyond the spec's.
CLAUDE_CODE_KEYS = frozenset(
    {"when_to_use", "argument-hint", "arguments", "disable-model-invocation",
     "user-invocable", "allowed-tools", "disallowed-tools", "model", "effort", "context",
     "agent", "hooks", "paths", "shell"}
)

#: The keys Anthropic's own packager validator accepts (anything else fails its check).
_ANTHROPIC_VALIDATOR_KEYS = frozenset(
    {"name", "description", "license", "allowed-tools", "metadata", "compatibility"}
)

_XML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_SPEC = "https://agentskills.io/specification"
_CLAUDE_AI = "https://support.claude.com/en/articles/12512198-how-to-create-custom-skills"
_CLAUDE_API = "https://platform.claude.com/docs/en/build-with-claude/skills-guide"
_CLAUDE_API_GA = (_CLAUDE_API + " (raised from 8 MB at general availability, 2026-08-20, as "
                  "reported by https://apidog.com/blog/claude-skills-api-ga/; not confirmed on "
                  "Anthropic's page: docs/TARGETS.md)")
_ANTHROPIC_RULES = ("https://platform.claude.com/docs/en/agents-and-tools/agent-skills/overview "
                    "(name: no XML tags, no reserved words 'anthropic', 'claude'; description: "
                    "no XML tags)")
_CLAUDE_CODE = "https://code.claude.com/docs/en/skills#frontmatter-reference"
_CODEX = "https://developers.openai.com/codex/skills"
_OPENAI_API = "https://developers.openai.com/api/docs/guides/tools-skills"
_MCP = ("https://github.com/modelcontextprotocol/ext-skills/blob/main/specification/stable/"
        "skills.mdx#limits (SEP-2640)")
_MCP_START = ("https://github.com/modelcontextprotocol/ext-skills/blob/main/specification/"
              "stable/skills.mdx#skill-format (SKILL.md MUST begin with YAML frontmatter; the "
              "reference SDK reads it with /^---\\r?\\n/)")
_MCP_LAYOUT = ("https://github.com/modelcontextprotocol/ext-skills/blob/main/specification/"
               "stable/skills.mdx#resource-mapping (no archive: each file is a resource "
               "skill://<name>/<path>, SKILL.md at the skill root)")
_WELL_KNOWN = ("https://github.com/cloudflare/agent-skills-discovery-rfc#archive-structure "
               "(Agent Skills Discovery 0.2.0)")
_CODEX_NAME = ("openai/codex codex-rs/core/src/skills/loader.rs (SkillFrontmatter: name and "
               "description required; a SKILL.md without them is dropped)")
_MCP_NAME = ("https://github.com/modelcontextprotocol/ext-skills/blob/main/specification/"
             "stable/skills.mdx (each entry's frontmatter is SKILL.md's, compared field by "
             "field) and https://agentskills.io/specification (name: required)")
_WELL_KNOWN_NAME = ("https://github.com/cloudflare/agent-skills-discovery-rfc (an entry's name "
                    "is its SKILL.md's) and https://agentskills.io/specification (name: "
                    "required)")
_WELL_KNOWN_UNITS = ("https://github.com/cloudflare/agent-skills-discovery-rfc (description: "
                     "max 1024 characters) as vercel's skills reads it (isValidSkillEntryV2: "
                     "JavaScript's description.length, in UTF-16 units; a longer entry is "
                     "skipped without a word)")
_ASCII_NAME_WELL_KNOWN = ("https://github.com/cloudflare/agent-skills-discovery-rfc#uri-"
                          "structure (lowercase alphanumeric and hyphens only: a-z, 0-9, -); "
                          "vercel's skills skips any other name")
_ASCII_NAME_MCP = ("https://agentskills.io/specification (lowercase a-z, 0-9 and hyphens), "
                   "which skill://NAME URIs carry")
#: A name every host reads: ASCII lowercase letters and digits, single inner hyphens.
_ASCII_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
_ANTHROPIC_VALIDATOR = ("anthropics/skills skills/skill-creator/scripts/quick_validate.py "
                        "(ALLOWED_PROPERTIES)")


@dataclass(frozen=True, slots=True)
class Limit:
    """One documented limit of a host: ``measure`` may be at most ``maximum``."""

    measure: Measure
    maximum: int
    unit: str  # how the host states it, e.g. "30 MB" or "1,024 characters"
    source: str
    #: ``note``: advice the host does not enforce, reported (as ``info``) only when asked
    severity: Literal["error", "warning", "note"] = "error"

    def to_dict(self) -> dict[str, Any]:
        return {"measure": self.measure, "maximum": self.maximum, "unit": self.unit,
                "source": self.source, "severity": self.severity}


@dataclass(frozen=True, slots=True)
class Target:
    """A host profile: its limits, layout, accepted keys and catalog budget, with sources."""

    name: str
    title: str
    layout: Layout | None  # None: the host takes no archive (MCP serves files one by one)
    layout_source: str
    limits: tuple[Limit, ...] = ()
    #: the archive must hold exactly one SKILL.md (nested ones are refused)
    one_skill_md: str | None = None  # the source, when the host requires it
    #: the description must be present and non-empty (an error naming the host)
    description_required: str | None = None  # the source, when the host requires it
    #: the host refuses a name holding a reserved word (``anthropic``, ``claude``) and a name
    #: or description holding an XML tag
    anthropic_rules: str | None = None  # the source, when the host enforces them
    #: the frontmatter must say ``name:`` (a hard skill's ``skill:`` alone is not read)
    name_key_required: str | None = None  # the source, when the host requires it
    #: SKILL.md must begin with exactly ``---`` and a line end (no BOM, no trailing blanks)
    plain_start: str | None = None  # the source, when the host requires it
    #: the name must be 1-64 of ``a-z``, ``0-9`` and single inner hyphens (no other letter)
    ascii_name: str | None = None  # the source, when the host requires it
    #: frontmatter keys beyond the spec's that the host documents (no unknown-key warning)
    extra_keys: frozenset[str] = frozenset()
    extra_keys_source: str | None = None
    #: when set, keys outside this set draw a target-unknown-key warning
    strict_keys: frozenset[str] | None = None
    strict_keys_source: str | None = None
    #: at most this many skills in one request (checked by :func:`check_request`)
    max_skills_per_request: Limit | None = None
    #: the per-skill catalog budget (characters the host lists per skill), if it has one
    catalog_budget: Limit | None = None
    #: what is packed for this target carries skillpack's ``.skillpack/manifest.json``: only
    #: skillpack's own ``.skill`` archive (``agentskills``); a host or another installer is
    #: sent the skill's files and nothing of the packager's (SPEC section 3b)
    manifest: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "layout": self.layout,
            "layout_source": self.layout_source,
            "limits": [limit.to_dict() for limit in self.limits],
            "one_skill_md": self.one_skill_md,
            "description_required": self.description_required,
            "name_key_required": self.name_key_required,
            "plain_start": self.plain_start,
            "anthropic_rules": self.anthropic_rules,
            "extra_keys": sorted(self.extra_keys),
            "strict_keys": None if self.strict_keys is None else sorted(self.strict_keys),
            "max_skills_per_request": (None if self.max_skills_per_request is None
                                       else self.max_skills_per_request.to_dict()),
            "catalog_budget": (None if self.catalog_budget is None
                               else self.catalog_budget.to_dict()),
            "manifest": self.manifest,
        }


_LISTING = Limit("listing-chars", 1536, "1,536 characters (description + when_to_use)",
                 _CLAUDE_CODE, "warning")

TARGETS: Mapping[str, Target] = MappingProxyType({t.name: t for t in (
    Target(
        "agentskills", "Agent Skills specification (the default)", "wrapped",
        "skillpack's .skill archive: one folder named after the skill", (),
        manifest=True,
    ),
    Target(
        "claude-ai", "Claude.ai skill upload (Settings > Capabilities > Skills)", "wrapped",
        _CLAUDE_AI + " (the ZIP holds the skill folder)",
        (
            Limit("files", 200, "200 files", _CLAUDE_AI),
            Limit("total-bytes", 30_000_000, "30 MB uncompressed", _CLAUDE_AI),
            Limit("description-chars", 200, "200 characters", _CLAUDE_AI + " (advice: "
                  "not enforced as far as we know)", "note"),
        ),
        one_skill_md=_CLAUDE_AI,
        anthropic_rules=_ANTHROPIC_RULES,
        strict_keys=_ANTHROPIC_VALIDATOR_KEYS,
        strict_keys_source=_ANTHROPIC_VALIDATOR,
    ),
    Target(
        "claude-api", "Claude API custom skills (POST /v1/skills)", "wrapped",
        _CLAUDE_API + " (all files under one top-level folder, SKILL.md at its root)",
        (Limit("total-bytes", 30_000_000, "30 MB uncompressed per upload", _CLAUDE_API_GA),),
        anthropic_rules=_ANTHROPIC_RULES,
        strict_keys=_ANTHROPIC_VALIDATOR_KEYS,
        strict_keys_source=_ANTHROPIC_VALIDATOR,
        max_skills_per_request=Limit("skills-per-request", 8, "8 skills per request",
                                     _CLAUDE_API),
    ),
    Target(
        "claude-code", "Claude Code (~/.claude/skills, .claude/skills, plugins)", "wrapped",
        _CLAUDE_CODE + " (a skill is a folder holding SKILL.md)",
        (_LISTING,),
        extra_keys=CLAUDE_CODE_KEYS,
        extra_keys_source=_CLAUDE_CODE,
        catalog_budget=_LISTING,
    ),
    Target(
        "codex", "OpenAI Codex (CLI, IDE extension, app)", "wrapped",
        _CODEX + " (a skill is a folder holding SKILL.md)",
        (Limit("description-chars", 1024, "1,024 characters", _CODEX),),
        description_required=_CODEX,
        name_key_required=_CODEX_NAME,
    ),
    Target(
        "openai-api", "OpenAI API skills (POST /v1/skills)", "wrapped",
        _OPENAI_API + " (a .zip that contains a single top-level folder)",
        (
            Limit("files", 500, "500 files", _OPENAI_API),
            Limit("archive-bytes", 50_000_000, "50 MB zip", _OPENAI_API),
            Limit("file-bytes", 25_000_000, "25 MB per file (uncompressed)", _OPENAI_API),
        ),
        one_skill_md=_OPENAI_API,
    ),
    Target(
        "mcp", "MCP skills extension (io.modelcontextprotocol/skills)", None,
        _MCP_LAYOUT,
        (
            Limit("files", 512, "512 resources per skill", _MCP),
            Limit("total-bytes", 16_777_216, "16 MiB (16,777,216 bytes) per skill", _MCP),
        ),
        name_key_required=_MCP_NAME,
        plain_start=_MCP_START,
        ascii_name=_ASCII_NAME_MCP,
    ),
    Target(
        "well-known", "/.well-known/agent-skills/ discovery index 0.2.0", "root",
        _WELL_KNOWN + " (SKILL.md at the archive root, no wrapper folder)",
        (Limit("description-units", 1024, "1,024 UTF-16 units", _WELL_KNOWN_UNITS),),
        name_key_required=_WELL_KNOWN_NAME,
        ascii_name=_ASCII_NAME_WELL_KNOWN,
    ),
)})


def get_targets(names: Iterable[str]) -> tuple[Target, ...]:
    """The targets named, in the order given, duplicates dropped; an unknown name is a
    SkillError listing every known target."""
    chosen: dict[str, Target] = {}
    unknown: list[str] = []
    for name in names:
        if name in TARGETS:
            chosen.setdefault(name, TARGETS[name])
        elif name not in unknown:
            unknown.append(name)
    if unknown:
        known = ", ".join(TARGETS)
        raise SkillError(
            f"unknown target {', '.join(repr(n) for n in unknown)}; the known targets are "
            f"{known}",
            hint="pass --target with one of the known names (repeat it for several hosts)",
        )
    return tuple(chosen.values())


def default_layout(names: Iterable[str]) -> Layout:
    """The layout the named targets want (``wrapped`` with none); a SkillError when they
    want different ones (pack for each host separately, or pass --layout)."""
    targets = [t for t in get_targets(names) if t.layout is not None]
    layouts = {t.layout for t in targets}
    if len(layouts) > 1:
        wants = "; ".join(f"{t.name} wants {t.layout}" for t in targets)
        raise SkillError(
            f"the targets want different archive layouts ({wants})",
            hint="pack once per layout, or choose one with --layout wrapped|root",
        )
    layout = targets[0].layout if targets else TARGETS[DEFAULT_TARGET].layout
    assert layout is not None  # the default target has one
    return layout


def carries_manifest(names: Iterable[str], layout: Layout) -> bool:
    """Whether the archive packed for the named targets in `layout` carries skillpack's
    manifest (SPEC sections 3 and 3b): only the ``wrapped`` archive made for no host (no
    target, or ``agentskills`` alone), skillpack's ``.skill``. Any archive with a host among
    its targets, and any ``root`` archive, holds the skill's files only: what a host or an
    installer receives is the skill, and skillpack reads it back by its content."""
    return layout == "wrapped" and all(t.manifest for t in get_targets(names))


@dataclass(frozen=True, slots=True)
class FileFact:
    """One file of the skill: its path relative to the skill folder and its size."""

    path: str
    size: int


@dataclass(frozen=True, slots=True)
class SkillFacts:
    """What a target check needs to know about one skill, as plain data.

    ``frontmatter`` is the top-level mapping as skillpack's parser gives it (failsafe: strings,
    lists, dicts); ``files`` the skill's file set (no ``.skillpack/manifest.json``);
    ``skill_md_count`` how many of those files are named SKILL.md (any case, any folder);
    ``layout`` the layout being packed; ``archive_size`` the packed archive's size in bytes
    when known (limits on the upload then measure it; else the files' total stands in).
    """

    name: str
    description: str | None
    frontmatter: Mapping[str, Any]
    files: tuple[FileFact, ...]
    skill_md_count: int
    layout: Layout = "wrapped"
    archive_size: int | None = None
    file: str | None = None  # the SKILL.md path, for the problems' location
    lines: Mapping[str, int] = field(default_factory=dict)  # frontmatter key -> line
    #: every member the archive holds and their uncompressed bytes, when known: the host
    #: counts what it is sent (a manifest too, were one sent), not the skill's own files
    members: int | None = None
    member_bytes: int | None = None
    #: SKILL.md begins with exactly ``---`` and a line end (`Skill.plain_start`)
    plain_start: bool = True

    @property
    def total_size(self) -> int:
        return sum(f.size for f in self.files)

    def with_layout(self, layout: Layout) -> SkillFacts:
        """These facts, for an archive in `layout`."""
        return SkillFacts(self.name, self.description, self.frontmatter, self.files,
                          self.skill_md_count, layout, self.archive_size, self.file, self.lines,
                          self.members, self.member_bytes, self.plain_start)

    @classmethod
    def from_files(
        cls, name: str, frontmatter: Mapping[str, Any], files: Iterable[tuple[str, int]], *,
        layout: Layout = "wrapped", archive_size: int | None = None, file: str | None = None,
        lines: Mapping[str, int] | None = None, members: Iterable[int] | None = None,
        plain_start: bool = True,
    ) -> SkillFacts:
        """Facts from the frontmatter and ``(path, size)`` pairs of the skill's files."""
        facts = tuple(sorted((FileFact(p, s) for p, s in files),
                             key=lambda f: f.path.encode("utf-8")))
        count = sum(1 for f in facts if posixpath.basename(f.path).lower() == "skill.md")
        description = frontmatter.get("description")
        sizes = None if members is None else list(members)
        return cls(name, description if isinstance(description, str) else None,
                   dict(frontmatter), facts, count, layout, archive_size, file,
                   dict(lines or {}), None if sizes is None else len(sizes),
                   None if sizes is None else sum(sizes), plain_start)


def _measure(measure: Measure, facts: SkillFacts) -> tuple[int, str]:
    """The measured value and the words for it."""
    if measure == "files":
        if facts.members is not None:
            return facts.members, "files (every member of the archive)"
        return len(facts.files), "files"
    if measure == "total-bytes":
        if facts.member_bytes is not None:
            return facts.member_bytes, "bytes in all (every member of the archive)"
        return facts.total_size, "bytes in all"
    if measure == "archive-bytes":
        if facts.archive_size is not None:
            return facts.archive_size, "bytes (the archive)"
        return facts.total_size, "bytes (the files; the archive is larger)"
    if measure == "file-bytes":
        largest = max(facts.files, key=lambda f: f.size, default=None)
        if largest is None:
            return 0, "bytes"
        return largest.size, f"bytes ({largest.path})"
    description = facts.description or ""
    if measure == "description-chars":
        return len(description), "characters"
    if measure == "description-units":
        return (len(description.encode("utf-16-le")) // 2,
                "UTF-16 units (JavaScript's length: a character past U+FFFF counts two)")
    if measure != "listing-chars":
        raise ValueError(f"{measure} is not a per-skill measure (see check_request)")
    when = facts.frontmatter.get("when_to_use")
    extra = len(when) if isinstance(when, str) else 0
    return len(description) + extra, "characters (description + when_to_use)"


_CODES: Mapping[Measure, str] = {
    "files": "target-too-many-files",
    "total-bytes": "target-too-large",
    "archive-bytes": "target-too-large",
    "file-bytes": "target-file-too-large",
    "description-chars": "target-description-too-long",
    "description-units": "target-description-too-long",
    "listing-chars": "target-catalog-budget",
    "skills-per-request": "target-too-many-skills",
}

_HINTS: Mapping[Measure, str] = {
    "files": "move rarely used files out of the skill, or merge small ones",
    "total-bytes": "move large assets out of the skill (fetch them at run time instead)",
    "archive-bytes": "move large assets out of the skill (fetch them at run time instead)",
    "file-bytes": "split or shrink that file, or fetch it at run time",
    "description-chars": "shorten the description; put details in the body",
    "description-units": "shorten the description (emoji and other characters past U+FFFF "
                         "count two); put details in the body",
    "listing-chars": "shorten description and when_to_use; the key use case first",
    "skills-per-request": "split the skills over several requests",
}


def check_targets(
    targets: Sequence[str], facts: SkillFacts, *, catalog_budget: int | None = None,
    notes: bool = False,
) -> list[Problem]:
    """Every limit of the named targets that ``facts`` breaks, as problems naming the host.

    ``catalog_budget`` (``--catalog-budget CHARS``) replaces each target's per-skill listing
    budget, and applies one to targets that have none. ``notes``: also the advice a host
    gives but does not enforce (severity ``info``). An unknown target name raises
    SkillError listing the known ones. Problems are ordered by target, then by limit.
    """
    problems: list[Problem] = []
    named = get_targets(targets)
    for target in named or (TARGETS[DEFAULT_TARGET],):
        problems.extend(_check_one(target, facts, catalog_budget, notes))
    if any(t.name == DEFAULT_TARGET for t in named):
        problems.extend(_dialect_keys(facts))
    return problems


def _check_one(target: Target, facts: SkillFacts, budget: int | None,
               notes: bool = False) -> list[Problem]:
    found: list[Problem] = []
    host = target.name

    def add(severity: Literal["error", "warning", "info"], code: str, message: str,
            key: str | None = None) -> None:
        found.append(Problem(severity, code, f"{host}: {message}", facts.file,
                             facts.lines.get(key) if key else None))

    if target.layout is not None and facts.layout != target.layout:
        add("error", "target-layout",
            f"wants the {target.layout} layout, this archive is {facts.layout} "
            f"(source: {target.layout_source}); pack with --layout {target.layout}")
    if target.one_skill_md is not None and facts.skill_md_count != 1:
        add("error", "target-skill-md-count",
            f"the archive must hold exactly one SKILL.md, this skill has "
            f"{facts.skill_md_count} (source: {target.one_skill_md}); rename or remove the "
            "nested ones")
    if target.anthropic_rules is not None:
        for word in ("anthropic", "claude"):
            if word in facts.name.lower():
                add("error", "target-reserved-word",
                    f"refuses a name holding the reserved word '{word}' ('{facts.name}') "
                    f"(source: {target.anthropic_rules}); rename the skill", "name")
        for where, text in (("name", facts.name), ("description", facts.description or "")):
            tag = _XML_TAG.search(text)
            if tag is not None:
                add("error", "target-xml-tag",
                    f"refuses an XML tag in the {where} ({tag.group()!r}) (source: "
                    f"{target.anthropic_rules}); write it without angle brackets", where)
    if target.plain_start is not None and not facts.plain_start:
        found.append(Problem(
            "error", "target-frontmatter-start",
            f"{host}: SKILL.md must begin with its '---' line, nothing before it (a "
            f"byte-order mark) and nothing after it on that line (source: "
            f"{target.plain_start}); save SKILL.md as UTF-8 without a BOM, '---' alone on "
            "its first line", facts.file, 1))
    if target.ascii_name is not None and (len(facts.name) > 64
                                          or not _ASCII_NAME.match(facts.name)):
        add("error", "target-name",
            f"takes only a name of 1-64 of a-z, 0-9 and single inner hyphens, not "
            f"{facts.name!r} (source: {target.ascii_name}); rename the skill",
            "name" if "name" in facts.frontmatter else "skill")
    named = name_key_problem(target, facts.name, facts.frontmatter, facts.file,
                             facts.lines.get("skill"))
    if named is not None:
        found.append(named)
    if target.description_required is not None and not (facts.description or "").strip():
        add("error", "target-description-missing",
            f"requires a non-empty description (source: {target.description_required})",
            "description")
    limits = list(target.limits)
    if budget is not None:
        limits = [lim for lim in limits if lim.measure != "listing-chars"]
        limits.append(Limit("listing-chars", budget, f"{budget:,} characters (description + "
                            "when_to_use)", "--catalog-budget", "warning"))
    for limit in limits:
        if limit.severity == "note" and not notes:
            continue
        value, words = _measure(limit.measure, facts)
        if value <= limit.maximum:
            continue
        key = ("description" if limit.measure in ("description-chars", "description-units",
                                                   "listing-chars") else None)
        exact = "" if limit.unit.startswith(f"{limit.maximum:,}") else f" = {limit.maximum:,}"
        if exact and limit.measure.endswith("bytes"):
            exact += " bytes"
        add("info" if limit.severity == "note" else limit.severity, _CODES[limit.measure],
            f"{value:,} {words}; the limit is {limit.unit}{exact} (source: {limit.source}); "
            f"{_HINTS[limit.measure]}", key)
    if target.strict_keys is not None:
        for key in facts.frontmatter:
            if key not in target.strict_keys:
                add("warning", "target-unknown-key",
                    f"frontmatter key '{key}' is not one of "
                    f"{', '.join(sorted(target.strict_keys))} (source: "
                    f"{target.strict_keys_source})", key)
    return found


#: The keys of skillpack's hard-skill dialect, which the Agent Skills specification lacks.
_HARD_SKILL_KEYS = ("skill", "includes")


def _dialect_keys(facts: SkillFacts) -> list[Problem]:
    """``--target agentskills`` named: the hard-skill keys of `facts`, which the reference
    validator (skills-ref) refuses as unexpected, and which leave a skill named by
    ``skill:`` alone with no name for it. Warnings: skillpack reads both dialects, and so
    does the default check, which says nothing of them."""
    found = []
    for key in _HARD_SKILL_KEYS:
        if key in facts.frontmatter:
            unnamed = (" and, without 'name:', reads no name" if key == "skill"
                       and "name" not in facts.frontmatter else "")
            fix = ("clients of the Agent Skills format alone ignore it and carry the whole "
                   "folder" if key == "includes" else "drop it: skillpack reads 'name:' alone"
                   if not unnamed else f"write 'name: {facts.name}' in its place (skillpack "
                   "reads either)")
            found.append(Problem(
                "warning", "target-hard-skill-key",
                f"{DEFAULT_TARGET}: '{key}:' is a key of skillpack's hard-skill dialect, "
                f"which the specification does not have: its reference validator "
                f"(skills-ref) refuses it as unexpected{unnamed} (source: {_SPEC}); {fix}",
                facts.file, facts.lines.get(key)))
    return found


def name_key_problem(target: Target | str, name: str, frontmatter: Mapping[str, Any],
                     file: str | None = None, line: int | None = None) -> Problem | None:
    """The error of a host that reads ``name:`` given a hard skill's frontmatter without it
    (``skill:`` alone): the same words from `check --target` and from the export that
    writes for that host. None when the host does not require it or the key is there."""
    target = get_targets([target])[0] if isinstance(target, str) else target
    if target.name_key_required is None or "name" in frontmatter or "skill" not in frontmatter:
        return None
    return Problem(
        "error", "target-name-key-missing",
        f"{target.name}: the frontmatter has no 'name:' key, which this host reads ('skill:' "
        f"is skillpack's own key for hard skills, which it ignores) (source: "
        f"{target.name_key_required}); add 'name: {name}' beside 'skill: {name}'", file, line)


def check_request(targets: Sequence[str], skill_count: int) -> list[Problem]:
    """Problems for sending ``skill_count`` skills at once (a bundle) to the named targets."""
    problems: list[Problem] = []
    for target in get_targets(targets):
        limit = target.max_skills_per_request
        if limit is not None and skill_count > limit.maximum:
            problems.append(Problem(
                "info" if limit.severity == "note" else limit.severity,
                "target-too-many-skills",
                f"{target.name}: {skill_count:,} skills; the limit is {limit.unit} "
                f"({limit.maximum:,}) (source: {limit.source}); split them over several "
                "requests"))
    return problems


def accepted_keys(targets: Sequence[str]) -> frozenset[str]:
    """Frontmatter keys beyond the spec's that EVERY named target documents (empty with no
    targets): the keys whose ``unknown-key`` warning these targets suppress."""
    chosen = get_targets(targets)
    if not chosen:
        return frozenset()
    keys = chosen[0].extra_keys
    for target in chosen[1:]:
        keys &= target.extra_keys
    return keys
