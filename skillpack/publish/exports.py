"""Exports in the ecosystem's SHA-256 formats: the well-known discovery index and MCP skills.

* :func:`export_well_known` writes ``SITE/.well-known/agent-skills/`` for the Agent Skills
  Discovery RFC 0.2.0: ``index.json`` (``$schema``, and per skill ``name``, ``type``,
  ``description``, ``url``, ``digest``) plus the artifact each entry names: the SKILL.md
  itself for a single-file skill (``type: "skill-md"``), else a root-layout zip
  (``type: "archive"``, SKILL.md at the archive root, no wrapper folder). Each ``digest`` is
  ``sha256:<hex>`` of the bytes written. The folder is built beside the destination and
  moved into place: on bad input or a failed write nothing changes.
* :func:`mcp_skills_list` renders what an MCP server's ``skills/list`` returns under the
  skills extension (SEP-2640): per skill its ``uri`` (``skill://<name>/SKILL.md``), its
  ``frontmatter`` and ``resources``, a ``{uri, digest, size}`` manifest of every file.

Both take plain :class:`ExportSkill` records (no walk, no archive reader) and give
deterministic bytes: canonical JSON (keys sorted, no spaces, UTF-8), one trailing newline.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote, urlsplit

from skillpack._atomic import FolderLease, remove_tree
from skillpack.errors import Problem, SkillError, SkillpackError, WriteError
from skillpack.formats.paths import SKILL_MD, collision_key, collision_reason, name_problem
from skillpack.packing.selection import Selection
from skillpack.packing.targets import SkillFacts, check_targets, get_targets
from skillpack.storedzip.writer import ZipWriter

__all__ = [
    "DISCOVERY_SCHEMA",
    "MCP_CACHE_SCOPE",
    "MCP_TTL_MS",
    "WELL_KNOWN_DIR",
    "ExportFile",
    "ExportSkill",
    "IndexEntry",
    "base_url_problem",
    "canonical_json",
    "export_problems",
    "export_well_known",
    "exportable",
    "mcp_skill_entry",
    "mcp_skills_list",
    "root_archive",
    "sha256_digest",
    "skill_uri",
    "well_known_entries",
    "well_known_index",
]

DISCOVERY_SCHEMA = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
WELL_KNOWN_DIR = ".well-known/agent-skills"
MCP_TTL_MS = 300_000
MCP_CACHE_SCOPE = "public"
MAX_DESCRIPTION = 1024  # the discovery index and the spec: at most 1,024 characters

# the Agent Skills name rule as the discovery RFC states it: a-z, 0-9, single inner hyphens
# what a killed export leaves beside agent-skills/ (removed by the next export)
_LEFTOVER = re.compile(r"\.agent-skills\.skillpack-(?:tmp|old)-(\d+)-[0-9a-f]+\Z")
# the characters of an RFC 3986 URI (a percent sign only as an escape)
_URI_CHARS = re.compile(r"(?:[A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*")
# RFC 3986 pchar minus what quote() keeps anyway (letters, digits, "_.-~")
_PCHAR_SAFE = "!$&'()*+,;=:@"


@dataclass(frozen=True, slots=True)
class ExportFile:
    """One file of a skill: its path relative to the skill folder, its bytes, its x bit."""

    path: str
    data: bytes
    executable: bool = False


@dataclass(frozen=True, slots=True)
class ExportSkill:
    """One skill to export: its name, description, frontmatter (as the parser gives it) and
    every file of its file set (no ``.skillpack/`` manifest)."""

    name: str
    description: str
    frontmatter: Mapping[str, Any]
    files: tuple[ExportFile, ...]
    #: where it came from, as the user knows it: its folder, its archive, or BUNDLE/NAME
    source: str = ""

    @classmethod
    def from_files(
        cls, name: str, description: str, frontmatter: Mapping[str, Any],
        files: Iterable[tuple[str, bytes, bool]], *, source: str = "",
    ) -> ExportSkill:
        """A record from ``(path, bytes, executable)`` triples, files sorted by path bytes."""
        ordered = sorted((ExportFile(p, d, x) for p, d, x in files),
                         key=lambda f: f.path.encode("utf-8"))
        return cls(name, description, dict(frontmatter), tuple(ordered), source)

    @property
    def skill_md(self) -> str:
        """Where its problems are reported: its SKILL.md in the folder it came from, else
        its archive (``NAME/SKILL.md`` when its source is not known)."""
        if self.source and os.path.isdir(self.source):
            return os.path.join(self.source, "SKILL.md")
        return self.source or f"{self.name}/SKILL.md"

    @property
    def single_file(self) -> bool:
        """True when SKILL.md is the skill's only file (published as ``type: skill-md``)."""
        return len(self.files) == 1 and self.files[0].path == "SKILL.md"


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One ``skills[]`` entry of the discovery index."""

    name: str
    type: Literal["skill-md", "archive"]
    description: str
    url: str
    digest: str  # "sha256:" + 64 lowercase hex digits of the artifact's bytes

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "type": self.type, "description": self.description,
                "url": self.url, "digest": self.digest}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IndexEntry:
        kind = data["type"]
        if kind not in ("skill-md", "archive"):
            raise ValueError(f"unknown entry type {kind!r}")
        return cls(str(data["name"]), kind, str(data["description"]), str(data["url"]),
                   str(data["digest"]))


def canonical_json(value: Any) -> bytes:
    """Keys sorted, ``,``/``:`` separators, UTF-8 without ``\\u`` escapes, one newline."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)
    return text.encode("utf-8") + b"\n"


def sha256_digest(data: bytes) -> str:
    """``sha256:`` + the 64 lowercase hex digits of SHA-256(data)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def export_problems(skill: ExportSkill, host: Literal["mcp", "well-known"]) -> list[Problem]:
    """Every reason the export for `host` refuses `skill` on its own: its description, files
    (SKILL.md at its root, portable paths that do not collide), and the host's rules as
    `check --target HOST` states them (`skillpack.packing.targets.check_targets`: the name,
    ASCII, and its key, the frontmatter's first line, MCP's 512 files and 16 MiB); for
    ``mcp``, a frontmatter whose ``name`` and ``description`` are not the skill's (a host
    compares them with SKILL.md)."""
    where = skill.skill_md
    problems: list[Problem] = []

    def add(code: str, message: str) -> None:
        problems.append(Problem("error", code, message, where))

    if not skill.description.strip():
        add("export-description", f"skill {skill.name!r} has an empty description")
    elif len(skill.description) > MAX_DESCRIPTION:
        add("export-description", f"skill {skill.name!r}: description is "
            f"{len(skill.description):,} characters; the index allows {MAX_DESCRIPTION:,}")
    by_path = {f.path: f for f in skill.files}
    if SKILL_MD not in by_path:
        add("export-no-skill-md", f"skill {skill.name!r} has no SKILL.md at its root")
    keys: dict[str, str] = {}
    for path in by_path:
        reason = name_problem(path)
        if reason is None and collision_key(path) in keys:
            reason = collision_reason(keys[collision_key(path)], path)
        if reason is not None:
            add("export-path", f"skill {skill.name!r}: file {path!r}: {reason}")
        keys.setdefault(collision_key(path), path)
    target = get_targets([host])[0]
    skill_md = by_path.get(SKILL_MD)
    facts = SkillFacts.from_files(
        skill.name, skill.frontmatter, [(f.path, len(f.data)) for f in skill.files],
        layout=target.layout or "wrapped", file=where,
        plain_start=skill_md is None or skill_md.data.startswith((b"---\n", b"---\r\n")))
    problems += [p for p in check_targets([host], facts) if p.severity == "error"]
    if host == "mcp" and (skill.frontmatter.get("name") not in (skill.name, None)
                          or skill.frontmatter.get("description") != skill.description):
        add("export-frontmatter", f"skill {skill.name!r}: the frontmatter's 'name' and "
            "'description' must be the skill's own (an MCP host compares them with "
            "SKILL.md); write 'name:' and 'description:' in SKILL.md")
    return problems


def exportable(skills: Iterable[ExportSkill], host: Literal["mcp", "well-known"],
               selection: Selection) -> list[ExportSkill]:
    """The `skills` the export for `host` takes (`export_problems`); the others refused all
    at once, or with `selection` keeping going skipped and listed."""
    kept: list[ExportSkill] = []
    failures: list[tuple[str, SkillpackError]] = []
    for skill in skills:
        problems = export_problems(skill, host)
        if not problems:
            kept.append(skill)
            continue
        where = skill.source or skill.name
        failures.append((where, SkillError(
            f"skill {skill.name!r} cannot be exported for {host}: {len(problems)} "
            f"problem{'s' * (len(problems) != 1)}", path=where, problems=problems,
            hint="fix what `skillpack check --target " + host + "` reports, then export "
            "again")))
    selection.settle(failures)
    return kept


def _check_skills(skills: Iterable[ExportSkill], host: Literal["mcp", "well-known"],
                  ) -> list[ExportSkill]:
    """The skills sorted by name; SkillError with every problem of every skill first
    (`export_problems`, and two skills of one name)."""
    listed = sorted(skills, key=lambda s: s.name.encode("utf-8"))
    problems: list[Problem] = []
    seen: set[str] = set()
    for skill in listed:
        problems += export_problems(skill, host)
        if skill.name in seen:
            problems.append(Problem("error", "export-duplicate",
                                    f"two skills are named {skill.name!r}", skill.skill_md))
        seen.add(skill.name)
    if problems:
        raise SkillError(
            f"{len(problems)} problem(s) in the skills to export; nothing was written",
            problems=problems, hint="fix the skills listed, then export again")
    return listed


def root_archive(skill: ExportSkill) -> bytes:
    """The skill's files as a deterministic STORED zip with SKILL.md at its root (no top
    folder, no ``.skillpack/`` manifest): what an ``archive`` entry of the index serves."""
    buffer = io.BytesIO()
    with ZipWriter(buffer) as writer:
        for file in sorted(skill.files, key=lambda f: f.path.encode("utf-8")):
            writer.add_bytes(file.path, file.data, executable=file.executable)
    return buffer.getvalue()


def _artifact(skill: ExportSkill) -> tuple[str, Literal["skill-md", "archive"], bytes]:
    """(path under agent-skills/, entry type, bytes served) for one skill."""
    if skill.single_file:
        return f"{skill.name}/SKILL.md", "skill-md", skill.files[0].data
    return f"{skill.name}.zip", "archive", root_archive(skill)


def base_url_problem(url: str) -> str | None:
    """Why `url` cannot be the published URL of ``agent-skills/`` (``--base-url``), or None:
    it must be an absolute ``http``/``https`` URL with a host, or a path-absolute one
    (``/static/skills/``, on the index's own host), with no query or fragment (each skill's
    path is appended to it) and only characters a URI holds (RFC 3986)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a port that is no number raises here)
    except ValueError as exc:  # a bracketed host that is no IPv6 address, an unclosed one
        return f"is not a URL ({exc})"
    on_host = url.startswith("/") and not url.startswith("//")
    if not on_host and (parts.scheme.lower() not in ("http", "https") or not parts.netloc):
        return ("is neither an absolute http:// or https:// URL nor a path starting with "
                "'/' (a client would resolve it against the index's own folder)")
    if "?" in url or "#" in url:
        return "has a query or fragment, and each skill's path is appended to it"
    if not _URI_CHARS.fullmatch(url):
        return "holds characters a URI cannot (a space, a quote...): percent-encode them"
    return None


def _url(relative: str, base_url: str | None) -> str:
    """The entry's URL: `relative` (the artifact's path under ``agent-skills/``) as a
    relative reference, which a client resolves against the index's own URL (the RFC's URL
    Resolution: RFC 3986 section 5), or appended to `base_url`. A name is ``[a-z0-9-]``, so
    its first segment never holds the ``:`` that would read as a scheme."""
    path = quote(relative, safe="/" + _PCHAR_SAFE)
    if base_url is None:
        return path
    return f"{base_url.rstrip('/')}/{path}"


def well_known_entries(
    skills: Iterable[ExportSkill], *, base_url: str | None = None,
) -> list[tuple[IndexEntry, str, bytes]]:
    """Per skill (sorted by name): its index entry, the artifact's path under
    ``.well-known/agent-skills/`` and the artifact's bytes.

    URLs are relative to the index (``<name>.zip``, ``<name>/SKILL.md``: the same files
    whether the site is served at its origin's root or below a path, as a project's GitHub
    Pages are) unless ``base_url`` is given (the published URL of the ``agent-skills/``
    folder, e.g. a CDN)."""
    why = None if base_url is None else base_url_problem(base_url)
    if why is not None:
        raise SkillError(f"the base URL {base_url!r} {why}", path=base_url,
                         hint="give the URL the agent-skills/ folder is published at, "
                              "e.g. https://cdn.example.com/skills/")
    out: list[tuple[IndexEntry, str, bytes]] = []
    for skill in _check_skills(skills, "well-known"):
        relative, kind, data = _artifact(skill)
        entry = IndexEntry(skill.name, kind, skill.description, _url(relative, base_url),
                           sha256_digest(data))
        out.append((entry, relative, data))
    return out


def well_known_index(entries: Iterable[IndexEntry]) -> bytes:
    """``index.json`` of discovery schema 0.2.0 for ``entries``, sorted by name."""
    skills = sorted(entries, key=lambda e: e.name.encode("utf-8"))
    return canonical_json({"$schema": DISCOVERY_SCHEMA,
                           "skills": [e.to_dict() for e in skills]})


def export_well_known(
    skills: Iterable[ExportSkill], out_site_dir: str | os.PathLike[str], *,
    base_url: str | None = None,
) -> list[IndexEntry]:
    """Write ``out_site_dir/.well-known/agent-skills/`` (index.json and every artifact it
    names) and return the index entries.

    The whole ``agent-skills/`` folder is replaced: it is written in full to a temporary
    sibling, fsynced, then moved into place with ``os.replace`` (a previous folder is first
    moved aside, then removed). Bad skills raise SkillError and a failed write WriteError;
    either way the site is left as it was.
    """
    prepared = well_known_entries(skills, base_url=base_url)
    index = well_known_index(e for e, _, _ in prepared)
    parent = Path(out_site_dir) / ".well-known"
    final = parent / "agent-skills"
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    temp = parent / f".agent-skills.skillpack-tmp-{token}"
    old = parent / f".agent-skills.skillpack-old-{token}"
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise WriteError(f"could not write: {err.strerror or err}; nothing was written",
                         path=str(final),
                         hint="check the site folder is writable and the disk not full") from err
    with FolderLease(parent) as lease:  # a writer in another PID namespace keeps its folder
        if lease.alone:
            _clean_leftovers(parent)
        lease.share()
        return _export(prepared, index, parent, final, temp, old)


def _export(prepared: list[tuple[IndexEntry, str, bytes]], index: bytes, parent: Path,
            final: Path, temp: Path, old: Path) -> list[IndexEntry]:
    """`export_well_known` once the site's `.well-known/` folder is leased."""
    try:
        temp.mkdir()
        for _, relative, data in prepared:
            _write(temp / relative, data)
        _write(temp / "index.json", index)
        _fsync_dir(temp)
        if final.is_symlink() or (final.exists() and not final.is_dir()):
            raise WriteError(f"{final} exists and is not a folder; nothing was written",
                             path=str(final), hint="remove it, or choose another site folder")
        moved_old = False
        if final.exists():
            os.replace(final, old)
            moved_old = True
        try:
            os.replace(temp, final)
        except BaseException:
            if moved_old:
                os.replace(old, final)
            raise
        _fsync_dir(parent)
    except OSError as err:
        remove_tree(temp)
        if isinstance(err, WriteError):
            raise
        raise WriteError(f"could not write: {err.strerror or err}; nothing was written",
                         path=str(final),
                         hint="check the site folder is writable and the disk not full") from err
    except BaseException:
        remove_tree(temp)
        raise
    remove_tree(old)
    return [e for e, _, _ in prepared]


def _clean_leftovers(parent: Path) -> None:
    """Remove temporary and moved-aside folders of exports whose process is gone."""
    for entry in sorted(os.listdir(parent)):
        match = _LEFTOVER.match(entry)
        if match is None or _alive(int(match.group(1))):
            continue
        path = parent / entry
        if path.is_dir() and not path.is_symlink():
            remove_tree(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process (or a number no pid can be): keep its folder
    return True


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, 0o644)  # whatever the umask: a site serves these to everyone
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def skill_uri(name: str, path: str = "SKILL.md", *, prefix: str = "") -> str:
    """``skill://[<prefix>/]<name>/<path>``, each part percent-encoded as a URI path (the
    first segment is the URI authority; ``prefix`` is a server-chosen ``a/b`` path)."""
    parts = [p for p in prefix.split("/") if p] + [name]
    skill_path = "/".join(quote(p, safe=_PCHAR_SAFE) for p in parts)
    return f"skill://{skill_path}/{quote(path, safe='/' + _PCHAR_SAFE)}"


def mcp_skill_entry(skill: ExportSkill, *, prefix: str = "") -> dict[str, Any]:
    """The ``Skill`` entry of SEP-2640 for one skill: ``uri``, ``frontmatter`` (as given),
    ``resources`` (``{uri, digest, size}`` for every file, SKILL.md included, sorted by path
    bytes)."""
    frontmatter = dict(skill.frontmatter)
    resources = [
        {"uri": skill_uri(skill.name, f.path, prefix=prefix), "digest": sha256_digest(f.data),
         "size": len(f.data)}
        for f in sorted(skill.files, key=lambda f: f.path.encode("utf-8"))
    ]
    return {"uri": skill_uri(skill.name, prefix=prefix), "frontmatter": frontmatter,
            "resources": resources}


def mcp_skills_list(
    skills: Iterable[ExportSkill], *, prefix: str = "", ttl_ms: int = MCP_TTL_MS,
    cache_scope: str = MCP_CACHE_SCOPE,
) -> bytes:
    """The ``result`` of a ``skills/list`` response (one page, every skill, sorted by name):
    ``{"cacheScope", "resultType": "complete", "skills": [...], "ttlMs"}``, canonical JSON.

    Bad skills (`export_problems`: names, paths, no SKILL.md, MCP's limits, a frontmatter
    whose ``name``/``description`` are not the skill's) raise SkillError with every
    problem."""
    listed = _check_skills(skills, "mcp")
    entries = [mcp_skill_entry(s, prefix=prefix) for s in listed]
    return canonical_json({"resultType": "complete", "skills": entries, "ttlMs": ttl_ms,
                           "cacheScope": cache_scope})
