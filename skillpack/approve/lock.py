"""Lock files: what an approver pinned, so that a pipeline can verify it later.

``skills.lock`` is JSON, indented, keys sorted, one file per line, so that a reviewer reads a
diff of it::

    {
      "format": "1.0",
      "skills": {
        "waitlist": {
          "digest": "blake3:...",
          "files": ["100644 1843 <blake3> SKILL.md", "100644 97 <blake3> data/waitlist.csv"],
          "programs": [{"dynamic": false, "name": "awk", ...}]
        }
      }
    }

Each ``files`` line is exactly the skill's digest line (SPEC section 2) without its newline:
the digest can be recomputed from the lock alone. Written atomically.

Format 1.1 also records what an approver approved beyond the files, so that ``review`` shows
it before and after without a signature: ``description``, ``tools`` (each ``{"id", "run"}``,
``run`` the argv template as a list of words) and, when the skill declares it,
``allowed-tools`` (a list), and ``archive``: ``sha256:<hex>`` of the skill's ``.skill``
archive, what a signed statement's subject carries. A lock is written as 1.1 when every
entry carries its tools and as 1.0 when none does (entries made without them, as before);
1.0 locks are still read.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from skillpack._atomic import atomic_write
from skillpack._regular import read_regular
from skillpack.errors import IntegrityError, MissingPathError, SkillpackError
from skillpack.formats.digest import DIGEST_RE, FileRecord, digest_records
from skillpack.formats.manifest import FORMAT, LOCK_FORMAT, TwiceError, check_format, load_json
from skillpack.packing.recorded import Recorded, recorded_fields
from skillpack.skillmd.skill import Skill

__all__ = ["Lock", "LockEntry", "LockTool", "LockedSkill", "make_lock", "read_lock",
           "write_lock"]

_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class LockTool:
    """One approved tool: its id and its argv template, one item per word."""

    id: str
    run: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "run": list(self.run)}

    @classmethod
    def from_dict(cls, data: Any, *, where: str, source: str) -> LockTool:
        tool_id, run = (data.get("id"), data.get("run")) if isinstance(data, Mapping) else (
            None, None)
        if (not isinstance(tool_id, str) or not tool_id or not isinstance(run, list)
                or not all(isinstance(w, str) for w in run)):
            raise SkillpackError(f"{where}: each tool must be an object with an 'id' and a "
                                 f"'run' list of words, not {data!r}", path=source)
        return cls(tool_id, tuple(run))


@dataclass(frozen=True)
class LockEntry:
    """One approved skill: its digest, files and programs and (format 1.1) its description,
    tools, allowed-tools and the programs its SKILL.md mentions (shell blocks, `` !`...` ``
    lines: `skillpack.skillmd.mentions`). ``tools`` is None when not recorded (a 1.0 lock);
    ``allowed_tools`` is None when the skill declares none."""

    digest: str
    files: tuple[FileRecord, ...]
    programs: tuple[dict[str, Any], ...] = ()
    tools: tuple[LockTool, ...] | None = None
    description: str = ""
    allowed_tools: tuple[str, ...] | None = None
    #: each mention as ``{"program", "line", "kind", "script"}`` (kind ``mentioned`` or
    #: ``runs-at-load``), in SKILL.md order
    mentions: tuple[dict[str, Any], ...] = ()
    #: ``sha256:<hex>`` of the skill's ``.skill`` archive (the one ``skillpack pack`` writes,
    #: or the archive it was locked from): what a signed statement's subject carries (1.1;
    #: None in a lock written before it was recorded)
    archive: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "digest": self.digest,
            "files": [r.line().rstrip("\n") for r in self.files],
            "programs": list(self.programs),
        }
        if self.tools is not None:
            data["tools"] = [t.to_dict() for t in sorted(self.tools, key=lambda t: t.id)]
            data["description"] = self.description
            if self.allowed_tools is not None:
                data["allowed-tools"] = list(self.allowed_tools)
            data["mentions"] = list(self.mentions)
            if self.archive is not None:
                data["archive"] = self.archive
        return data

    @classmethod
    def for_skill(cls, skill: Skill, digest: str, files: Iterable[FileRecord],
                  programs: Iterable[dict[str, Any]], archive: str | None = None) -> LockEntry:
        """The format 1.1 entry approving ``skill`` (its parsed SKILL.md) with these files
        (``archive``: ``sha256:<hex>`` of its ``.skill`` archive)."""
        return cls.recorded(digest, files, programs, recorded_fields(skill), archive)

    @classmethod
    def recorded(cls, digest: str, files: Iterable[FileRecord],
                 programs: Iterable[dict[str, Any]], fields: Recorded,
                 archive: str | None = None) -> LockEntry:
        """The format 1.1 entry of a skill whose recorded `fields` are these
        (`skillpack.packing.recorded`: what `for_skill` derives from its SKILL.md)."""
        return cls(digest, tuple(files), tuple(programs),
                   tuple(LockTool(i, words) for i, words in fields.tools), fields.description,
                   fields.allowed_tools, fields.mentions, archive)

    @classmethod
    def from_dict(cls, data: Any, *, name: str, source: str,
                  format: str = LOCK_FORMAT) -> LockEntry:
        where = f"lock entry '{name}'"
        if not isinstance(data, Mapping):
            raise SkillpackError(f"{where} is not an object", path=source)
        digest, files, programs = data.get("digest"), data.get("files"), data.get("programs", [])
        if not isinstance(digest, str) or not DIGEST_RE.fullmatch(digest):
            raise SkillpackError(f"{where} has an invalid digest {digest!r}", path=source)
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise SkillpackError(f"{where}: 'files' must be a list of lines", path=source)
        if not isinstance(programs, list) or not all(isinstance(p, dict) for p in programs):
            raise SkillpackError(f"{where}: 'programs' must be a list of objects", path=source)
        records = []
        for line in files:
            parts = line.split(" ", 3)
            try:
                if len(parts) != 4:
                    raise ValueError("expected '<mode> <size> <blake3> <path>'")
                records.append(FileRecord.from_dict(
                    {"mode": parts[0], "size": int(parts[1]), "blake3": parts[2],
                     "path": parts[3]}))
            except ValueError as exc:
                raise SkillpackError(f"{where}: bad file line {line!r}: {exc}",
                                     path=source) from None
        tools: tuple[LockTool, ...] | None = None
        description: Any = ""
        allowed: Any = None
        mentions: Any = []
        archive: Any = None
        if format != FORMAT:  # 1.1 and later minors: description, tools, allowed-tools
            raw_tools, description = data.get("tools"), data.get("description")
            allowed = data.get("allowed-tools")
            if not isinstance(raw_tools, list):
                raise SkillpackError(f"{where}: 'tools' must be a list (format {format})",
                                     path=source, hint="lock again")
            tools = tuple(LockTool.from_dict(t, where=where, source=source) for t in raw_tools)
            if not isinstance(description, str):
                raise SkillpackError(f"{where}: 'description' must be a string", path=source)
            mentions = data.get("mentions", [])
            if not isinstance(mentions, list) or not all(
                    isinstance(m, dict) and isinstance(m.get("program"), str)
                    and isinstance(m.get("line"), int) and m.get("kind") in (
                        "mentioned", "runs-at-load") for m in mentions):
                raise SkillpackError(f"{where}: 'mentions' must be a list of {{program, line, "
                                     "kind, script}} objects", path=source, hint="lock again")
            archive = data.get("archive")
            if archive is not None and not (isinstance(archive, str) and _SHA256.fullmatch(
                    archive)):
                raise SkillpackError(f"{where}: 'archive' must be 'sha256:' and 64 hex digits",
                                     path=source, hint="lock again")
            if allowed is not None and (not isinstance(allowed, list)
                                        or not all(isinstance(a, str) for a in allowed)):
                raise SkillpackError(f"{where}: 'allowed-tools' must be a list of strings",
                                     path=source)
        entry = cls(digest, tuple(records), tuple(programs), tools, description,
                    None if allowed is None else tuple(allowed), tuple(mentions), archive)
        if digest_records(entry.files) != digest:
            raise IntegrityError(f"{where}: its file lines do not hash to its digest {digest}",
                                 path=source, hint="the lock file was edited by hand; lock again")
        return entry


@dataclass(frozen=True)
class Lock:
    """Approved skills by name."""

    skills: Mapping[str, LockEntry]
    format: str = LOCK_FORMAT

    def __post_init__(self) -> None:
        missing = sorted(n for n, e in self.skills.items() if e.tools is None)
        if self.format != FORMAT and missing:
            raise SkillpackError(f"a format {self.format} lock records each skill's tools, "
                                 f"and these have none: {', '.join(missing)}",
                                 hint="lock them with their tools, or write format " + FORMAT)
        if self.format == FORMAT and len(missing) != len(self.skills):
            raise SkillpackError(f"a format {FORMAT} lock cannot record tools",
                                 hint=f"write format {LOCK_FORMAT}")

    def to_dict(self) -> dict[str, Any]:
        return {"format": self.format,
                "skills": {name: self.skills[name].to_dict() for name in sorted(self.skills)}}

    def to_bytes(self) -> bytes:
        return b"".join(self.chunks())

    def chunks(self) -> Iterator[bytes]:
        """`to_bytes` a skill at a time: ``json.dumps(self.to_dict(), indent=2,
        sort_keys=True, ensure_ascii=False)`` and a newline, byte for byte, without holding
        the whole lock as one object and one text (a lock of thousands of skills is written
        from its entries as it goes)."""
        if not self.skills:
            yield _json(self.to_dict()).encode("utf-8") + b"\n"
            return
        yield ('{\n  "format": ' + _json(self.format) + ',\n  "skills": {').encode("utf-8")
        comma = ""
        for name in sorted(self.skills):
            # an entry's text, one level deeper: JSON text holds no newline but its indents
            entry = _json(self.skills[name].to_dict()).replace("\n", "\n    ")
            yield f"{comma}\n    {_json(name)}: {entry}".encode()
            comma = ","
        yield b"\n  }\n}\n"

    def digests(self) -> dict[str, str]:
        """Name -> digest: what `skillpack.runtime.load(expect=...)` takes."""
        return {name: entry.digest for name, entry in self.skills.items()}

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<lock>") -> Lock:
        if not isinstance(data, Mapping):
            raise SkillpackError("a lock file is a JSON object", path=source)
        check_format(data.get("format"), what="lock file", source=source, ours=LOCK_FORMAT)
        skills = data.get("skills")
        if not isinstance(skills, Mapping):
            raise SkillpackError("lock file has no 'skills' object", path=source)
        version = str(data["format"])
        return cls({str(name): LockEntry.from_dict(value, name=str(name), source=source,
                                                   format=version)
                    for name, value in skills.items()}, version)


def _json(value: Any) -> str:
    """A lock's JSON text of `value`: indented by two, keys sorted, Unicode as it is."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def read_lock(path: str | os.PathLike[str]) -> Lock:
    """Read and check a lock file; a key twice in one object (a skill listed twice) is
    refused, not read as its last entry."""
    where = os.fspath(path)
    try:
        text = read_regular(where).decode("utf-8")
        data = load_json(text, once=True)
    except TwiceError as twice:
        raise SkillpackError(
            f"the lock file lists {twice.key!r} twice in one object (JSON would keep only the "
            "last, so which was approved is unclear)", path=where,
            hint="write the lock again with `skillpack lock`; never merge locks by hand") from None
    except FileNotFoundError:
        raise MissingPathError("no such lock file", path=where,
                               hint="give the lock `skillpack lock` wrote") from None
    except OSError as err:
        raise SkillpackError(f"cannot read the lock file: {err.strerror}", path=where) from None
    except ValueError as exc:
        raise SkillpackError(f"the lock file is not valid JSON: {exc}", path=where) from None
    except RecursionError:
        raise SkillpackError("the lock file is nested too deeply to be a lock file",
                             path=where, hint="it was not written by skillpack") from None
    if "\\ud" in text.lower():  # an escaped surrogate: a lone one is no text
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise SkillpackError("the lock file holds a lone surrogate (an escape such as "
                                 "\\ud800), which is no text", path=where,
                                 hint="it was edited by hand; lock again") from None
    return Lock.from_dict(data, source=where)


class LockedSkill(NamedTuple):
    """A skill to lock: its name, what is approved of it, and where it was found."""

    name: str
    entry: LockEntry
    source: str


def write_lock(entries: Iterable[LockedSkill], dest: str | os.PathLike[str]) -> Lock:
    """Write a lock of skills atomically; one name, one entry."""
    lock = make_lock(entries)
    with atomic_write(dest) as handle:
        for chunk in lock.chunks():
            handle.write(chunk)
    return lock


def make_lock(entries: Iterable[LockedSkill]) -> Lock:
    """The lock of skills, in the lowest format that holds what the entries carry (1.0 for
    entries without tools); one name, one entry. Writes nothing."""
    skills: dict[str, LockEntry] = {}
    sources: dict[str, str] = {}
    for name, entry, source in entries:
        if name in skills and skills[name] != entry:
            raise SkillpackError(f"two different skills are named '{name}': {sources[name]} "
                                 f"and {source}", hint="lock one of them, or rename one")
        skills[name] = entry
        sources[name] = source
    # the lowest format that holds what the entries carry: 1.0 for entries without tools
    with_tools = any(e.tools is not None for e in skills.values())
    return Lock(skills, LOCK_FORMAT if with_tools else FORMAT)
