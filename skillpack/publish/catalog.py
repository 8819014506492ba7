"""The available-skills catalog of skills on disk or packed: what `skillpack catalog` prints.

Three forms of one list of entries (name, description, location):

* ``text``: the runtime's ``Bundle.catalog_text()`` block (``## Available skills``, a blank
  line, then ``- name: description`` with the description's white space collapsed);
* ``xml``: the ``<available_skills>`` block of skills-ref's ``to-prompt`` (the reference
  validator), byte for byte: each of name, description and location on its own line between
  its tags, name and description stripped of leading and trailing white space (a folded
  ``>`` description ends with a newline) and HTML-escaped, the location the absolute path of
  SKILL.md, escaped too (a folder named ``</location></skill><skill>...`` must not add an
  entry; a path without ``&<>"'`` is byte for byte the reference's);
* ``json``: ``{"skills": [{"name", "description", "location"}]}``, the values as the
  frontmatter gives them.

Entries keep the order of the paths given (the skills of a folder sorted by path; those of
a bundle by name). A folder of archives stands for its archives, and an archive made
elsewhere (Anthropic's `.skill`, a zip, a `.tar.gz`) for the folder it unpacks to. A skill
folder must pass what `check` and `pack` judge (`judge_skill`: its SKILL.md, its file set,
its content: a catalog should not offer a skill that would not be packed); an archive or
bundle is verified completely, and its entries' location is the archive file. The same
skill (name and digest) reached twice is listed once.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from skillpack.errors import Problem, SkillpackError
from skillpack.formats.paths import SKILL_MD
from skillpack.packing.check import name_clashes
from skillpack.packing.prepare import PackOptions, judge_skill
from skillpack.packing.selection import Selection
from skillpack.packing.verify import verified_archive
from skillpack.source.classify import Input, unpacked_foreign

__all__ = ["FORMATS", "CatalogEntry", "catalog_entries", "render_catalog"]

CatalogFormat = Literal["text", "xml", "json"]
FORMATS: tuple[CatalogFormat, ...] = ("text", "xml", "json")


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One skill of the catalog: its name, description and where it is read from."""

    name: str
    description: str
    location: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "location": self.location}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CatalogEntry:
        return cls(str(data["name"]), str(data["description"]), str(data["location"]))


def _entries_of(item: Input, options: PackOptions) -> list[tuple[CatalogEntry, str | None]]:
    """The entries of one input, each with its skill's digest (an archive made elsewhere
    already unpacked: its entry's location is the archive)."""
    if item.kind == "archive":
        with verified_archive(item.path) as report:  # closed after: one descriptor at a time
            loaded = report.loaded
            assert loaded is not None
            location = str(Path(item.path).resolve())
            digests = {s.name: s.digest for s in report.skills}
            return [(CatalogEntry(entry["name"], entry["description"], location),
                     digests.get(entry["name"])) for entry in loaded.catalog()]
    verdict = judge_skill(item.path, options=options, sha256=False)
    if verdict.error is not None:
        raise verdict.error
    assert verdict.skill is not None
    location = (str(Path(item.origin).resolve()) if item.origin is not None
                else str(Path(item.path).resolve() / SKILL_MD))
    return [(CatalogEntry(verdict.skill.name, verdict.skill.description, location),
             verdict.digest)]


def catalog_entries(paths: Iterable[str | os.PathLike[str]], *,
                    selection: Selection | None = None) -> list[CatalogEntry]:
    """The catalog entries of every skill under ``paths`` (what `skillpack.source.classify`
    reads). Raises one `SkillpackError` listing every problem of every skill that cannot be
    listed, each once, and every two skills that share a name (`name_clashes`: an agent
    could not tell them apart). With `selection`, what it excludes is left out and, keeping
    going, what cannot be listed is skipped (``selection.skipped``) and the rest listed."""
    selection = selection or Selection()
    entries: list[tuple[CatalogEntry, str | None]] = []
    shown: list[str] = []  # where each entry is, as the user named it (a clash says so)
    failures: list[tuple[str, SkillpackError]] = []
    # every failure collected, then settled at once
    lenient = selection.collecting()
    found = lenient.inputs(paths)
    selection.excluded += lenient.excluded
    with lenient.each(found, unpacked_foreign) as items:
        for item in items:
            try:
                found_here = _entries_of(item, selection.options())
                entries.extend(found_here)
                shown.extend(item.label for _ in found_here)
            except SkillpackError as err:
                failures.append((item.label, item.relabel(err)))
    failures += [(s.path, s.error) for s in lenient.skipped]
    clashes = name_clashes((e.name, digest, where)
                           for (e, digest), where in zip(entries, shown, strict=True))
    failures += [(p.file or "", SkillpackError(p.message, path=p.file, problems=[p]))
                 for p in clashes]
    if failures and not selection.keep_going:
        problems = [p for _, err in failures for p in _problems(err)]
        count = len(failures)
        raise SkillpackError(
            f"no catalog: {count} skill{'s' * (count != 1)} cannot be listed"
            + (f" ({failures[0][1].message})" if count == 1 else ""),
            problems=problems, hint="fix what is listed, then try again")
    selection.settle(failures)
    bad = {p.file for p in clashes}
    listed: dict[str, CatalogEntry] = {}  # the same skill twice: listed once, the first
    for (entry, _), where in zip(entries, shown, strict=True):
        if where not in bad:
            listed.setdefault(entry.name, entry)
    return list(listed.values())


def _problems(err: SkillpackError) -> tuple[Problem, ...]:
    return err.as_problems()


def render_catalog(entries: Iterable[CatalogEntry], fmt: CatalogFormat) -> str:
    """The catalog in format ``fmt`` (see the module text), ending with a newline."""
    items = list(entries)
    if fmt == "text":
        lines = ["## Available skills", ""]
        lines += [f"- {e.name.strip()}: {' '.join(e.description.split())}" for e in items]
        return "\n".join(lines) + "\n"
    if fmt == "xml":
        out = ["<available_skills>"]
        for e in items:
            out += ["<skill>", "<name>", html.escape(e.name.strip()), "</name>",
                    "<description>", html.escape(e.description.strip()), "</description>",
                    "<location>", html.escape(e.location), "</location>", "</skill>"]
        out.append("</available_skills>")
        return "\n".join(out) + "\n"
    if fmt == "json":
        return json.dumps({"skills": [e.to_dict() for e in items]}, indent=2,
                          ensure_ascii=False) + "\n"
    raise ValueError(f"unknown catalog format {fmt!r}; use one of {', '.join(FORMATS)}")
