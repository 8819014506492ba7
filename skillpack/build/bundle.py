"""Bundle many skills into one file for a deployment (and, optionally, a Python module).

A bundle is a STORED zip: ``.skillpack/bundle.json`` (the index: format, bundle digest, each
skill's name and digest) and, for every skill, exactly the members its `.skill` archive holds.
All members are sorted by the UTF-8 bytes of their names, so a bundle is deterministic, and
since nothing is compressed the runtime serves each file as a slice of the bundle's bytes.

Sources are skill folders, folders of skills, or `.skill` archives; an archive is verified
completely (it is re-verified, not re-trusted) and its verified bytes are copied.
"""

from __future__ import annotations

import keyword
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from skillpack.build.atomic import atomic_write, clean_stale_temps
from skillpack.build.members import Member, write_members
from skillpack.build.pack import ARCHIVE_SUFFIX, PreparedSkill, prepare_many
from skillpack.build.verify import verify_file
from skillpack.errors import SkillpackError, WriteError
from skillpack.spec.bundle_index import BUNDLE_INDEX, index_bytes
from skillpack.spec.manifest import MANIFEST_PATH
from skillpack.storedzip.reader import read_zip
from skillpack.storedzip.writer import ZipWriter

__all__ = ["BundleResult", "BundledSkill", "module_name", "write_bundle", "write_python_module"]


class BundledSkill(NamedTuple):
    """One skill of a bundle written: its name, its digest and where it came from."""

    name: str
    digest: str
    source: str


@dataclass(frozen=True)
class _Found:
    """A skill to bundle: its digest, where it came from, and its archive members."""

    digest: str
    source: str
    members: list[Member]


@dataclass(frozen=True)
class BundleResult:
    """The bundle written: its path, its digest and each skill's name, digest and source."""

    path: Path
    digest: str
    skills: tuple[BundledSkill, ...]
    size: int

    def to_dict(self) -> dict[str, object]:
        return {"bundle": str(self.path), "digest": self.digest, "size": self.size,
                "skills": [s._asdict() for s in self.skills]}


def _archive_members(path: str) -> dict[str, _Found]:
    """Each skill of a verified archive or bundle file, by name."""
    bundle = verify_file(path).loaded  # read without following a fifo, verified completely
    assert bundle is not None
    found: dict[str, _Found] = {}
    for name in bundle.names:
        skill = bundle[name]
        manifest = skill.manifest.to_bytes()
        members = [Member(f"{name}/{MANIFEST_PATH}", len(manifest), False, data=manifest)]
        for record in skill.manifest.files:
            members.append(Member(f"{name}/{record.path}", record.size,
                                  record.mode == "100755", record.blake3,
                                  data=skill.file(record.path).bytes()))
        found[name] = _Found(skill.digest, path, members)
    return found


def _collect(paths: Iterable[str | os.PathLike[str]]) -> dict[str, _Found]:
    """Every skill to bundle, by name. Refuses clashing names."""
    skills: dict[str, _Found] = {}
    clashes: list[str] = []

    def add(name: str, found: _Found) -> None:
        if name in skills and skills[name].digest != found.digest:
            clashes.append(f"'{name}' comes from both {skills[name].source} and {found.source}")
            return
        skills.setdefault(name, found)

    folders: list[str] = []
    for path in (os.fspath(p) for p in paths):
        if os.path.isfile(path) and (path.endswith(ARCHIVE_SUFFIX) or not path.endswith(".md")):
            for name, found in _archive_members(path).items():
                add(name, found)
        else:
            folders.append(path)
    prepared: list[PreparedSkill] = prepare_many(folders) if folders else []
    for item in prepared:
        add(item.name, _Found(item.digest, item.source, item.members()))
    if clashes:
        raise SkillpackError("two different skills have one name: " + "; ".join(clashes),
                             hint="bundle only one of them, or rename one")
    return skills


def write_bundle(paths: Iterable[str | os.PathLike[str]], dest: str | os.PathLike[str], *,
                 python_module: str | os.PathLike[str] | None = None) -> BundleResult:
    """Bundle the skills under ``paths`` into ``dest`` (atomically); refuse all on any error."""
    if python_module is not None:
        module_name(python_module)  # refused before anything is read or written
    skills = _collect(paths)
    if not skills:
        raise SkillpackError("nothing to bundle", hint="give skill folders or .skill archives")
    digest, index = index_bytes([(name, found.digest) for name, found in skills.items()])
    members = [Member(BUNDLE_INDEX, len(index), False, data=index)]
    for found in skills.values():
        members.extend(found.members)
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
    ordered = sorted(skills, key=lambda name: name.encode("utf-8"))
    return BundleResult(out, digest, tuple(
        BundledSkill(name, skills[name].digest, skills[name].source) for name in ordered),
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


def module_name(dest: str | os.PathLike[str]) -> str:
    """The name `import` gives the module file `dest`: its stem, which must be a Python
    identifier (not a keyword). It is written into the generated code, so nothing else is
    taken: a name holding quotes or newlines would write code of its own."""
    module = Path(dest).stem
    if not module.isidentifier() or keyword.iskeyword(module) or not str(dest).endswith(".py"):
        raise SkillpackError(
            f"{Path(dest).name!r} cannot be a Python module: its name must be a Python "
            "identifier ending in .py", path=os.fspath(dest),
            hint="name it like skills_bundle.py (letters, digits, '_')")
    return module


def write_python_module(data: bytes, digest: str, dest: str | os.PathLike[str]) -> Path:
    """Write a module whose ``DATA`` is the bundle's bytes, atomically."""
    module = module_name(dest)
    count = sum(1 for e in read_zip(data).entries if e.name.endswith("/" + MANIFEST_PATH))
    out = Path(dest)
    _make_parent(out)
    head = _MODULE_HEAD.format(count=count, digest=digest, module=module)
    with atomic_write(out) as handle:
        handle.write(head.encode("utf-8"))
        handle.write(b"DATA = ")
        handle.write(repr(data).encode("ascii"))
        handle.write(b"\n")
    return out
