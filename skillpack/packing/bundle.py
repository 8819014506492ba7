"""Bundle many skills into one file for a deployment (and, optionally, a Python module).

A bundle is a STORED zip: ``.skillpack/bundle.json`` (the index: format, bundle digest, each
skill's name and digest) and, for every skill, exactly the members its `.skill` archive holds.
All members are sorted by the UTF-8 bytes of their names, so a bundle is deterministic, and
since nothing is compressed the runtime serves each file as a slice of the bundle's bytes.

Sources are skill folders, folders of skills, or `.skill` archives; an archive is verified
completely (it is re-verified, not re-trusted) and its verified bytes are copied.

With ``targets`` every skill is checked against those hosts' limits first (an error refuses
the bundle, a warning is reported), and the bundle's skill count against their per-request
limits; the result reports each description's length, the characters of the catalog the
runtime's ``catalog_text()`` gives, and the SHA-256 of the bundle's bytes.
"""

from __future__ import annotations

import hashlib
import keyword
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from skillpack._atomic import atomic_write, clean_stale_temps
from skillpack.errors import Problem, SkillError, SkillpackError, WriteError
from skillpack.formats.bundle_index import BUNDLE_INDEX, index_bytes
from skillpack.formats.manifest import MANIFEST_PATH
from skillpack.packing.check import CatalogReport, catalog_report, name_clashes
from skillpack.packing.members import Member, write_members
from skillpack.packing.prepare import PreparedSkill
from skillpack.packing.selection import Selection
from skillpack.packing.targets import SkillFacts, check_request, check_targets, get_targets
from skillpack.packing.verify import verify_file
from skillpack.skillmd.skill import Skill
from skillpack.source.classify import Input, unpacked_foreign
from skillpack.source.define import DefinedSkill, materialized
from skillpack.storedzip.reader import FileZipIndex, read_zip
from skillpack.storedzip.source import CHUNK
from skillpack.storedzip.writer import ZipWriter

__all__ = ["BundleResult", "BundledSkill", "module_name", "write_bundle", "write_python_module"]


class BundledSkill(NamedTuple):
    """One skill of a bundle written: its name, its digest and where it came from."""

    name: str
    digest: str
    source: str


class _Front(NamedTuple):
    """What the host checks and the catalog read of a skill's SKILL.md: its frontmatter
    (not its body, which a bundle of thousands of skills does not hold)."""

    description: str
    frontmatter: Mapping[str, Any]
    file: str | None
    lines: Mapping[str, int]
    plain_start: bool

    @classmethod
    def of(cls, skill: Skill) -> _Front:
        return cls(skill.description, skill.frontmatter, skill.file, skill.lines,
                   skill.plain_start)


@dataclass(frozen=True)
class _Found:
    """A skill to bundle: its digest, where it came from, and its archive members."""

    digest: str
    source: str
    members: list[Member]
    skill: _Front | None = field(default=None, compare=False)  # its SKILL.md's frontmatter
    files: tuple[tuple[str, int], ...] = ()  # (path, size) of each file


@dataclass(frozen=True)
class BundleResult:
    """The bundle written: its path, its digest and each skill's name, digest and source."""

    path: Path
    digest: str
    skills: tuple[BundledSkill, ...]
    size: int
    sha256: str = ""  # "sha256:<hex>" of the bundle's bytes
    catalog: CatalogReport | None = None
    warnings: tuple[Problem, ...] = ()  # the targets' warnings

    def to_dict(self) -> dict[str, object]:
        return {"bundle": str(self.path), "digest": self.digest, "size": self.size,
                "sha256": self.sha256, "skills": [s._asdict() for s in self.skills],
                "catalog": None if self.catalog is None else self.catalog.to_dict(),
                "warnings": [p.to_dict() for p in self.warnings]}


def _archive_members(path: str) -> dict[str, _Found]:
    """Each skill of a verified archive or bundle file, by name."""
    bundle = verify_file(path).loaded  # read without following a fifo, verified completely
    assert bundle is not None
    found: dict[str, _Found] = {}
    index = bundle.zip_index
    for name in bundle.names:
        skill = bundle[name]
        manifest = skill.manifest.to_bytes()
        members = [Member(f"{name}/{MANIFEST_PATH}", len(manifest), False, data=manifest)]
        prefix = bundle.member_prefix(name)
        for record in skill.manifest.files:
            entry = index.get(prefix + record.path)
            assert entry is not None  # the verified manifest lists it
            # a large verified member is read from the archive file as it is written, a chunk
            # at a time, and checked against its BLAKE3 again (memory stays flat); a small one
            # is read now, so that an archive of small files holds no descriptor open
            data = (index.file.span(entry.data_offset, entry.size)
                    if isinstance(index, FileZipIndex) and entry.size >= CHUNK
                    else skill.file(record.path).bytes())
            members.append(Member(f"{name}/{record.path}", record.size,
                                  record.mode == "100755", record.blake3, data=data))
        found[name] = _Found(skill.digest, path, members, _Front.of(skill.skill),
                             tuple((r.path, r.size) for r in skill.manifest.files))
    return found


def _collect(items: Sequence[Input], outputs: Sequence[str | os.PathLike[str]],
             selection: Selection) -> dict[str, _Found]:
    """Every skill to bundle, by name, in the order of `items` (`outputs`, the files being
    written, left out of any skill folder holding them; the skill folders prepared together,
    every problem of theirs in one error, or skipped: `Selection.prepare`). Refuses two
    different skills with one name (`name_clashes`), or with keep-going skips the later."""
    skills: dict[str, _Found] = {}
    clashes: list[tuple[str, Problem]] = []
    # what is bundled of each skill folder is kept as soon as it is prepared (its members,
    # its frontmatter): its SKILL.md's body and file set let go
    prepared = selection.prepare_as(items, _folder_found, outputs=outputs)
    for item in items:
        if item.kind == "folder":
            p = prepared.get(item.path)
            if p is None:  # skipped
                continue
            found = {p[0]: replace(p[1], source=item.label)}
        else:
            try:
                found = _archive_members(item.path)
            except SkillpackError as err:
                selection.skip(item.path, err)
                continue
        for name, one in found.items():
            clash = name_clashes([(name, skills[name].digest, skills[name].source),
                                  (name, one.digest, one.source)] if name in skills else [])
            if clash:
                clashes.append((one.source, clash[0]))
                continue
            skills.setdefault(name, one)
    selection.settle([(where, SkillpackError(p.message, path=where, problems=[p],
                                             hint=_CLASH_HINT)) for where, p in clashes])
    return skills


_CLASH_HINT = "bundle only one of them, or rename one"


def _folder_found(p: PreparedSkill) -> tuple[str, _Found]:
    return p.name, _Found(p.digest, p.source, p.members(), _Front.of(p.skill),
                          tuple((r.path, r.size) for r in p.manifest.files))


def write_bundle(paths: Iterable[str | os.PathLike[str] | DefinedSkill],
                 dest: str | os.PathLike[str], *,
                 python_module: str | os.PathLike[str] | None = None,
                 targets: Sequence[str] = (),
                 catalog_budget: int | None = None,
                 selection: Selection | None = None) -> BundleResult:
    """Bundle the skills under ``paths`` into ``dest`` (atomically); refuse all on any error.
    A path may be a skill defined in code (`skillpack.define_skill`), bundled as the folder
    it writes would be. Each skill is checked against ``targets`` (host names) and the
    per-skill ``catalog_budget``; a host's error refuses the bundle, nothing written. With
    `selection` (``--exclude``, ``--ignore``, ``--keep-going``), what it excludes is left
    out and, keeping going, a refused skill is skipped (``selection.skipped``)."""
    selection = selection or Selection()
    get_targets(targets)  # an unknown name: refused before anything is read
    if python_module is not None:
        module_name(python_module)  # refused before anything is read or written
        if os.path.abspath(python_module) == os.path.abspath(dest):
            raise SkillpackError("the bundle and its Python module would be one file",
                                 path=os.fspath(dest),
                                 hint="give --python-module another file than -o")
    # read from disk while writing: the folders written and the archives unpacked are kept
    with materialized(paths) as (given, labels):
        # every refusal judged before any is raised: a skill `check` refuses hides neither
        # a name clash nor a host's limit (`Selection.collecting`)
        collected = selection.collecting()
        found = collected.inputs(given)
        with collected.each(found, unpacked_foreign) as items:
            return _write_bundle(items, dest, python_module, labels, tuple(targets),
                                 catalog_budget, selection, collected)


def _host_problems(skills: dict[str, _Found], targets: tuple[str, ...],
                   budget: int | None) -> dict[str, list[Problem]]:
    """Every skill against every target (each in its own layout: a bundle is not what a
    host is sent), by skill name ("" for the skill count against the per-request limits)."""
    problems: dict[str, list[Problem]] = {}
    for name, found in skills.items():
        if found.skill is None:
            continue
        facts = SkillFacts.from_files(name, found.skill.frontmatter, found.files,
                                      file=found.skill.file, lines=found.skill.lines,
                                      plain_start=found.skill.plain_start)
        mine = problems.setdefault(name, [])
        for target in get_targets(targets):
            mine.extend(check_targets(
                [target.name], SkillFacts(facts.name, facts.description, facts.frontmatter,
                                          facts.files, facts.skill_md_count,
                                          target.layout or "wrapped", None, facts.file,
                                          facts.lines, plain_start=facts.plain_start),
                catalog_budget=budget))
        if not targets and budget is not None:
            mine.extend(check_targets([], facts, catalog_budget=budget))
    problems[""] = check_request(targets, len(skills))
    return problems


def _write_bundle(items: Sequence[Input], dest: str | os.PathLike[str],
                  python_module: str | os.PathLike[str] | None,
                  labels: dict[str, str], targets: tuple[str, ...],
                  budget: int | None, selection: Selection,
                  collected: Selection) -> BundleResult:
    skills = _collect(items, [dest] if python_module is None else [dest, python_module],
                      collected)
    for name, found in skills.items():
        if found.source in labels:
            skills[name] = _Found(found.digest, labels[found.source], found.members,
                                  found.skill, found.files)
    hosts = _host_problems(skills, targets, budget) if targets or budget is not None else {}
    # a skill a host refuses is refused (or, keeping going, skipped) as pack refuses it
    for name, problems in hosts.items():
        errors = [p for p in problems if p.severity == "error"]
        if name and errors:
            collected.skip(skills[name].source, SkillError(
                f"skill '{name}' cannot be bundled for {', '.join(targets)}: {len(errors)} "
                f"error{'s' * (len(errors) != 1)}", path=skills.pop(name).source,
                problems=errors, hint="fix what `skillpack check --target` reports, or "
                "bundle without that target"))
    request = [p for p in hosts.get("", []) if p.severity == "error"]
    refused: list[tuple[str, SkillpackError]] = []
    if request:  # the bundle's own refusal (too many skills for one request)
        refused.append((os.fspath(dest), SkillError(
            f"the bundle cannot be made for {', '.join(targets)}: {len(request)} "
            f"error{'s' * (len(request) != 1)}", path=os.fspath(dest), problems=request,
            hint="bundle fewer skills, or bundle without that target")))
        if selection.keep_going:  # nothing to skip: the bundle itself is refused
            raise refused[0][1]
    selection.take(collected, also=refused)
    if not skills:
        raise SkillpackError("nothing to bundle", hint="give skill folders or .skill archives")
    catalog = catalog_report([(n, f.skill.description) for n, f in skills.items()
                              if f.skill is not None])
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
        # everything read of the bundle is read before it takes its name: an interrupt
        # after the rename would otherwise report a failure that had already replaced it
        handle.flush()
        handle.seek(0)
        hasher = hashlib.sha256()
        while chunk := handle.read(1 << 20):
            hasher.update(chunk)
        sha256, size = "sha256:" + hasher.hexdigest(), handle.tell()
        if python_module is not None:  # all or nothing
            handle.seek(0)
            write_python_module(handle.read(), digest, python_module)
    ordered = sorted(skills, key=lambda name: name.encode("utf-8"))
    return BundleResult(out, digest, tuple(
        BundledSkill(name, skills[name].digest, skills[name].source) for name in ordered),
        size, sha256, catalog, selection.quiet(
            p for name, problems in hosts.items() if not name or name in skills
            for p in problems if p.severity == "warning"))


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
