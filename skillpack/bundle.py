"""Bundle many skills into one file for a deployment (and, optionally, a Python module).

A bundle is a STORED zip: ``.skillpack/bundle.json`` (the index: format, bundle digest, each
skill's name and digest) and, for every skill, exactly the members its `.skill` archive holds.
All members are sorted by the UTF-8 bytes of their names, so a bundle is deterministic, and
since nothing is compressed the runtime serves each file as a slice of the bundle's bytes.

Sources are skill folders, folders of skills, or `.skill` archives; an archive is verified
completely (it is re-verified, not re-trusted) and its verified bytes are copied.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from skillpack.archive import ARCHIVE_SUFFIX, Member, PreparedSkill, prepare_many, write_members
from skillpack.errors import SkillpackError, WriteError
from skillpack.hashing import bundle_digest
from skillpack.manifest import FORMAT, MANIFEST_PATH, canonical_json

__all__ = ["BUNDLE_INDEX", "BundleResult", "write_bundle", "write_python_module"]

BUNDLE_INDEX = ".skillpack/bundle.json"


@dataclass(frozen=True)
class BundleResult:
    """The bundle written: its path, its digest and each skill's name, digest and source."""

    path: Path
    digest: str
    skills: tuple[tuple[str, str, str], ...]
    size: int

    def to_dict(self) -> dict[str, object]:
        return {"bundle": str(self.path), "digest": self.digest, "size": self.size,
                "skills": [{"name": n, "digest": d, "source": s} for n, d, s in self.skills]}


def _archive_members(path: str) -> list[tuple[str, str, list[Member]]]:
    """(name, digest, members) of each skill of a verified archive or bundle file."""
    from skillpack.verify import verify_file

    bundle = verify_file(path).loaded  # read without following a fifo, verified completely
    assert bundle is not None
    found = []
    for name in bundle.names:
        skill = bundle[name]
        manifest = skill.manifest.to_bytes()
        members = [Member(f"{name}/{MANIFEST_PATH}", len(manifest), False, data=manifest)]
        for record in skill.manifest.files:
            members.append(Member(f"{name}/{record.path}", record.size,
                                  record.mode == "100755", record.blake3,
                                  data=skill.file(record.path).bytes()))
        found.append((name, skill.digest, members))
    return found


def _collect(paths: Iterable[str | os.PathLike[str]]) -> dict[str, tuple[str, str, list[Member]]]:
    """Every skill to bundle, by name: (digest, source, members). Refuses clashing names."""
    skills: dict[str, tuple[str, str, list[Member]]] = {}
    clashes: list[str] = []

    def add(name: str, digest: str, source: str, members: list[Member]) -> None:
        if name in skills and skills[name][0] != digest:
            clashes.append(f"'{name}' comes from both {skills[name][1]} and {source}")
            return
        skills.setdefault(name, (digest, source, members))

    folders: list[str] = []
    for path in (os.fspath(p) for p in paths):
        if os.path.isfile(path) and (path.endswith(ARCHIVE_SUFFIX) or not path.endswith(".md")):
            for name, digest, members in _archive_members(path):
                add(name, digest, path, members)
        else:
            folders.append(path)
    prepared: list[PreparedSkill] = prepare_many(folders) if folders else []
    for item in prepared:
        add(item.name, item.digest, item.source, item.members())
    if clashes:
        raise SkillpackError("two different skills have one name: " + "; ".join(clashes),
                             hint="bundle only one of them, or rename one")
    return skills


def write_bundle(paths: Iterable[str | os.PathLike[str]], dest: str | os.PathLike[str], *,
                 python_module: str | os.PathLike[str] | None = None) -> BundleResult:
    """Bundle the skills under ``paths`` into ``dest`` (atomically); refuse all on any error."""
    from skillpack.atomic import atomic_write, clean_stale_temps
    from skillpack.zipwrite import ZipWriter

    skills = _collect(paths)
    if not skills:
        raise SkillpackError("nothing to bundle", hint="give skill folders or .skill archives")
    pairs = [(name, digest) for name, (digest, _, _) in skills.items()]
    digest = bundle_digest(pairs)
    ordered = sorted(pairs, key=lambda p: p[0].encode("utf-8"))
    index = canonical_json({"format": FORMAT, "digest": digest,
                            "skills": [{"name": n, "digest": d} for n, d in ordered]})
    members = [Member(BUNDLE_INDEX, len(index), False, data=index)]
    for _, _, skill_members in skills.values():
        members.extend(skill_members)
    out = Path(dest)
    _make_parent(out)
    clean_stale_temps(out.parent)
    with atomic_write(out) as handle:
        with ZipWriter(handle) as writer:
            write_members(writer, members)
        if python_module is not None:  # before the bundle takes its name: all or nothing
            handle.flush()
            handle.seek(0)
            write_python_module(handle.read(), digest, python_module)
    return BundleResult(out, digest, tuple((n, d, skills[n][1]) for n, d in ordered),
                        out.stat().st_size)


def _make_parent(out: Path) -> None:
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise WriteError(f"cannot create the folder to write {out.name} in: {err.strerror}",
                         path=str(out.parent), hint="choose a folder you can write to") from None


_MODULE_HEAD = '''"""A skillpack bundle carried as code: {count} skills, digest {digest}.

Generated by `skillpack bundle --python-module`; do not edit. Load it with::

    import {module}
    bundle = {module}.load()
"""

DIGEST = {digest!r}


def load(expect=None):
    """The bundle, loaded and checked by skillpack.runtime (stdlib-only at import)."""
    from skillpack.runtime import load as _load

    return _load(DATA, expect=expect, source=__name__)


'''


def write_python_module(data: bytes, digest: str, dest: str | os.PathLike[str]) -> Path:
    """Write a module whose ``DATA`` is the bundle's bytes, atomically."""
    from skillpack.atomic import atomic_write
    from skillpack.zipread import read_zip

    count = sum(1 for e in read_zip(data).entries if e.name.endswith("/" + MANIFEST_PATH))
    out = Path(dest)
    _make_parent(out)
    module = out.stem
    head = _MODULE_HEAD.format(count=count, digest=digest, module=module)
    with atomic_write(out) as handle:
        handle.write(head.encode("utf-8"))
        handle.write(b"DATA = ")
        handle.write(repr(data).encode("ascii"))
        handle.write(b"\n")
    return out
