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
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from skillpack.build.atomic import atomic_write
from skillpack.build.load import read_regular
from skillpack.errors import IntegrityError, SkillpackError
from skillpack.spec.digest import DIGEST_RE, FileRecord, digest_records
from skillpack.spec.manifest import FORMAT, check_format

__all__ = ["Lock", "LockEntry", "LockedSkill", "read_lock", "write_lock"]


@dataclass(frozen=True)
class LockEntry:
    """One approved skill: its digest, files and programs."""

    digest: str
    files: tuple[FileRecord, ...]
    programs: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "digest": self.digest,
            "files": [r.line().rstrip("\n") for r in self.files],
            "programs": list(self.programs),
        }

    @classmethod
    def from_dict(cls, data: Any, *, name: str, source: str) -> LockEntry:
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
        entry = cls(digest, tuple(records), tuple(programs))
        if digest_records(entry.files) != digest:
            raise IntegrityError(f"{where}: its file lines do not hash to its digest {digest}",
                                 path=source, hint="the lock file was edited by hand; lock again")
        return entry


@dataclass(frozen=True)
class Lock:
    """Approved skills by name."""

    skills: Mapping[str, LockEntry]
    format: str = FORMAT

    def to_dict(self) -> dict[str, Any]:
        return {"format": self.format,
                "skills": {name: self.skills[name].to_dict() for name in sorted(self.skills)}}

    def to_bytes(self) -> bytes:
        text = json.dumps(self.to_dict(), indent=2, sort_keys=True, ensure_ascii=False)
        return text.encode("utf-8") + b"\n"

    def digests(self) -> dict[str, str]:
        """Name -> digest: what `skillpack.runtime.load(expect=...)` takes."""
        return {name: entry.digest for name, entry in self.skills.items()}

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<lock>") -> Lock:
        if not isinstance(data, Mapping):
            raise SkillpackError("a lock file is a JSON object", path=source)
        check_format(data.get("format"), what="lock file", source=source)
        skills = data.get("skills")
        if not isinstance(skills, Mapping):
            raise SkillpackError("lock file has no 'skills' object", path=source)
        return cls({str(name): LockEntry.from_dict(value, name=str(name), source=source)
                    for name, value in skills.items()}, str(data["format"]))


def read_lock(path: str | os.PathLike[str]) -> Lock:
    """Read and check a lock file."""
    where = os.fspath(path)
    try:
        data = json.loads(read_regular(where).decode("utf-8"))
    except OSError as err:
        raise SkillpackError(f"cannot read the lock file: {err.strerror}", path=where) from None
    except ValueError as exc:
        raise SkillpackError(f"the lock file is not valid JSON: {exc}", path=where) from None
    return Lock.from_dict(data, source=where)


class LockedSkill(NamedTuple):
    """A skill to lock: its name, what is approved of it, and where it was found."""

    name: str
    entry: LockEntry
    source: str


def write_lock(entries: Iterable[LockedSkill], dest: str | os.PathLike[str]) -> Lock:
    """Write a lock of skills atomically; one name, one entry."""
    skills: dict[str, LockEntry] = {}
    sources: dict[str, str] = {}
    for name, entry, source in entries:
        if name in skills and skills[name] != entry:
            raise SkillpackError(f"two different skills are named '{name}': {sources[name]} "
                                 f"and {source}", hint="lock one of them, or rename one")
        skills[name] = entry
        sources[name] = source
    lock = Lock(skills)
    with atomic_write(dest) as handle:
        handle.write(lock.to_bytes())
    return lock
