"""`load` and `Bundle`: packed skills served from bytes, verified, with no filesystem.

``load(data)`` reads a bundle (or a single `.skill` archive) held in memory and checks it
before anything is served: the zip structure (strict, see :mod:`skillpack.storedzip.reader`), the
member order, the index's format version and bundle digest, that every member lies in a
listed skill's folder, each skill's manifest (parsed, named after its folder, hashing to its
digest, equal to the index's digest) and members (exactly the manifest's files, with their
sizes and modes), and the approved digests given in ``expect``. With ``lazy=True`` the
per-skill checks run when a skill is first used instead (a cold start then pays only for the
skills it touches). Each file is hashed the first time it is served; ``verify_all()`` hashes
everything now. What a skill says and does comes from its verified SKILL.md, never from the
manifest's copy.

Importing this module pulls in the standard library only; blake3 is imported by ``load``,
YAML when a SKILL.md is first parsed, :mod:`skillpack.model.calls` when its names are first used.
The formats and the API are described in docs/RUNTIME.md.
"""

from __future__ import annotations

# `_collections_abc.Mapping` is `collections.abc.Mapping`, without importing `collections`
# (see _runtime_check). Neither `json`, `typing` nor `dataclasses` at import: the cold start
# of a deployment pays for every module imported (docs/RUNTIME.md, "Performance").
from _collections_abc import Mapping

from skillpack.errors import (
    ArchiveError,
    ArgumentError,
    IntegrityError,
    Problem,
    ResourceError,
    SkillpackError,
)
from skillpack.formats.bundle_index import BUNDLE_INDEX, read_index
from skillpack.formats.catalog_text import catalog_line, catalog_of
from skillpack.formats.digest import bundle_digest
from skillpack.formats.manifest import json_string
from skillpack.formats.paths import SKILL_MD
from skillpack.runtime.checks import (
    LOCK_HINT,
    Problems,
    SkillSpan,
    approved_digests,
    check_expect,
    check_packed_skill,
    lock_differences,
    lock_finding,
    root_skill_name,
    single_skill_folder,
    skill_spans,
)
from skillpack.runtime.skill import LoadedSkill, close_paths
from skillpack.storedzip.reader import read_zip

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from skillpack.runtime.policy import Policy, Rule
    from skillpack.storedzip.reader import ZipIndex

__all__ = ["Bundle", "catalog_line", "catalog_of", "load", "load_index"]

_NAMES_SHOWN = 30


class Bundle(Mapping[str, LoadedSkill]):
    """The skills of a loaded bundle or archive, by name, sorted by UTF-8 bytes.

    Made by :func:`load`. ``kind`` is ``"bundle"`` or ``"archive"``, ``digest`` the bundle
    digest (SPEC section 2; for an archive, the bundle digest of its one skill).
    """

    def __init__(
        self, kind: str, source: str, digest: str, index: ZipIndex, view: memoryview,
        spans: dict[str, SkillSpan], recorded: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.kind = kind
        self.source = source
        self.digest = digest
        self.names: tuple[str, ...] = tuple(spans)
        self._index = index
        self._view = view
        self._spans = spans
        self._skills: dict[str, LoadedSkill] = {}
        self._failed: dict[str, SkillpackError] = {}
        self._rules: dict[str, tuple[Rule, ...] | None] = {}
        # what the lock given as expect records of each skill (`approved_digests`)
        self._recorded = recorded or {}

    def member_prefix(self, name: str) -> str:
        """The prefix of the names of skill `name`'s members: ``<name>/``, or empty in a
        root-layout archive (SKILL.md at the archive root)."""
        return self._spans[name].prefix

    @property
    def zip_index(self) -> ZipIndex:
        """The strict zip index the bundle was read with (members, offsets, sizes)."""
        return self._index

    # -- the skills, checked on first use ----------------------------------------------------

    def _check(self, name: str, problems: Problems) -> LoadedSkill | None:
        skill = check_packed_skill(self._index, self._view, name, self._spans[name], problems,
                            self.source)
        entry = self._recorded.get(name)
        if skill is not None and entry is not None:
            differ = lock_differences(entry, skill.lock_fields())
            if differ:  # as `verify --lock` says it
                code, message = lock_finding(name, differ)
                problems.add(IntegrityError, code, message if name in message
                             else f"skill '{name}': {message}", hint=LOCK_HINT)
                return None
        if skill is not None:
            self._skills[name] = skill
        return skill

    def _skill(self, name: str) -> LoadedSkill:
        skill = self._skills.get(name)
        if skill is not None:
            return skill
        failed = self._failed.get(name)
        if failed is None:
            problems = Problems(self.source)
            skill = self._check(name, problems)
            if skill is not None:
                return skill
            failed = self._failed[name] = problems.error() or ArchiveError(name)
        raise failed.with_traceback(None)

    def check_all(self) -> None:
        """Run every skill's manifest and member checks now (``load`` does, unless lazy)."""
        problems = Problems(self.source)
        for name in self.names:
            if name not in self._skills:
                self._check(name, problems)
        error = problems.error()
        if error is not None:
            for name in self.names:
                if name not in self._skills:
                    self._failed.setdefault(name, error)
            raise error

    def __getitem__(self, name: str) -> LoadedSkill:
        if not isinstance(name, str) or name not in self._spans:
            raise self._unknown(name)
        return self._skill(name)

    def get(self, name: str, default: Any = None) -> Any:
        """The skill named `name`, or `default` when the bundle holds no such skill."""
        if isinstance(name, str) and name in self._spans:
            return self._skill(name)
        return default

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._spans

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"<Bundle {self.source} ({self.kind}, {len(self)} skills, {self.digest})>"

    def _unknown(self, name: object) -> ResourceError:
        shown = ", ".join(self.names[:_NAMES_SHOWN])
        if len(self.names) > _NAMES_SHOWN:
            shown += f", and {len(self.names) - _NAMES_SHOWN} more"
        hint = "use one of the names in `names`"
        if isinstance(name, str):
            close = close_paths(name, self.names)
            if close:
                hint = "did you mean " + " or ".join(repr(c) for c in close) + "?"
        return ResourceError(f"no skill named {name!r} here; available: {shown or 'none'}",
                             path=self.source, hint=hint)

    # -- what a model is shown --------------------------------------------------------------

    def catalog(self) -> list[dict[str, str]]:
        """Each skill's name and description (from its verified SKILL.md), sorted by name."""
        return [{"name": name, "description": self[name].description} for name in self.names]

    def catalog_text(self, names: Iterable[str] | None = None) -> str:
        """An ``## Available skills`` block: one line per skill, its name and description.

        `names` selects the skills shown (all of them when None); they are listed in the
        bundle's order whatever their order in `names`, each once.
        """
        chosen = self.names if names is None else self._selected(names, "catalog_text")
        return catalog_of([(name, self[name].description) for name in chosen],
                          empty="" if names is None else "(none)")

    def _catalog_line(self, name: str) -> str:
        return catalog_line(name, self[name].description)

    def catalog_update(self, before: Iterable[str], after: Iterable[str]) -> str:
        """The text to append to a running session when its skills change from `before` to
        `after` (the names available): what became available, what was withdrawn, then
        the whole roster as `catalog_text(after)` gives it. Empty when nothing changed.
        The system prompt (a cached prefix) stays as it was."""
        old = self._selected(before, "catalog_update")
        new = self._selected(after, "catalog_update")
        added = [name for name in new if name not in old]
        withdrawn = [name for name in old if name not in new]
        if not added and not withdrawn:
            return ""
        lines = ["## Skills changed", ""]
        if added:
            lines.append("Now available:")
            lines.extend(self._catalog_line(name) for name in added)
            lines.append("")
        if withdrawn:
            lines.append("Withdrawn (no longer available; do not load or use them):")
            lines.extend(f"- {name}" for name in withdrawn)
            lines.append("")
        return "\n".join(lines) + "\n" + self.catalog_text(new)

    def _selected(self, names: Iterable[str], what: str) -> list[str]:
        """The skills `names` names, each once, in the bundle's order; unknown ones refused."""
        if isinstance(names, str):
            raise ArgumentError(f"{what} takes a list of skill names, not one string",
                                path=self.source, hint=f"pass [{names!r}]")
        try:
            given = iter(names)
        except TypeError:
            raise ArgumentError(f"{what} takes a list of skill names, not "
                                f"{type(names).__name__}", path=self.source,
                                hint="pass a list of names, like bundle.names") from None
        chosen = set()
        for name in given:
            if not isinstance(name, str) or name not in self._spans:
                raise self._unknown(name)
            chosen.add(name)
        return [name for name in self.names if name in chosen]

    # -- a turn's skills: what they permit, what they were ----------------------------------

    def _policy(self, active: Iterable[str]) -> Policy:
        # cold path: the allowed-tools rules (and their records) only once they are asked for
        from skillpack.runtime.policy import Policy, skill_rules

        declared = []
        for name in self._selected(active, "the policy"):
            if name not in self._rules:
                self._rules[name] = skill_rules(self[name].skill.allowed_tools)
            declared.append(self._rules[name])
        return Policy(declared)

    def permits(self, active: Iterable[str], tool: str,
                command: list[str] | tuple[str, ...] | None = None) -> bool:
        """Whether the skills `active` in a turn let the model call `tool` (with `command`,
        the argv of a shell-like tool's call), by their `allowed-tools`. The rules are in
        docs/RUNTIME.md: a guard-rail for an honest model, not a security boundary."""
        return self._policy(active).permits(tool, command)

    def permitted_tools(self, active: Iterable[str]) -> frozenset[str] | None:
        """The names of the tools the skills `active` in a turn permit (some perhaps only
        with certain commands: ask `permits`), or None when every tool is permitted."""
        return self._policy(active).tools()

    def set_digest(self, names: Iterable[str]) -> str:
        """The bundle digest (SPEC section 2) of exactly the skills `names` (each counted
        once, in any order): which skills, by digest, a turn had. With every name of the
        bundle, it is `digest`."""
        chosen = self._selected(names, "set_digest")
        return bundle_digest([(name, self[name].digest) for name in chosen])

    def load_skill(self, name: str) -> str:
        """The skill's body framed in ``<skill_instructions>``, then (when it carries other
        files) a ``<skill_resources>`` block naming each with the call that reads it."""
        skill = self[name]
        body = skill.body.strip("\n")
        parts = [f"<skill_instructions>\n{body}\n</skill_instructions>"]
        others = [path for path in skill.files() if path != SKILL_MD]
        if others:
            quoted = json_string(name)
            lines = ["<skill_resources>",
                     f"The skill '{name}' carries these files. Read one with the call shown:"]
            for path in others:
                size = skill.file(path).size
                call = (f"read_skill_resource(name={quoted}, "
                        f"path={json_string(path)})")
                lines.append(f"- {path} ({size:,} bytes): {call}")
            lines.append("</skill_resources>")
            parts.append("\n".join(lines))
        return "\n\n".join(parts) + "\n"

    def read_skill_resource(self, name: str, path: str) -> str:
        """The text of file `path` of skill `name` (verified; a binary file is refused)."""
        return self[name].file(path).text()

    def verify_all(self, hashes: Mapping[str, Mapping[str, str]] | None = None) -> int:
        """Check every skill and hash every file now; raise listing every problem.

        Returns how many files were hashed. With `hashes` (skill name -> path -> BLAKE3 hex,
        computed by a caller that read the files itself: `LoadedSkill.verify`), those are
        compared instead of hashing the files again.
        """
        self.check_all()
        failures: list[IntegrityError] = []
        count = 0
        for name in self.names:
            skill = self._skills[name]
            failures.extend(skill.verify(None if hashes is None else hashes.get(name, {})))
            count += len(skill.files())
        if failures:
            more = f" (and {len(failures) - 1} more files)" if len(failures) > 1 else ""
            raise IntegrityError(
                failures[0].message + more, path=self.source, hint=failures[0].hint,
                problems=[Problem("error", "hash-mismatch", f.message) for f in failures])
        return count


def _as_view(data: Any, source: str) -> memoryview:
    """A read-only view of the input's bytes (no copy)."""
    try:
        view = memoryview(data)
    except TypeError:
        raise ArchiveError(f"load() takes the bytes of a bundle or archive, not "
                           f"{type(data).__name__}", path=source,
                           hint="read the file first: load(open(path, 'rb').read())") from None
    if view.ndim != 1 or view.itemsize != 1 or not view.contiguous:
        try:
            view = view.cast("B")
        except TypeError:
            raise ArchiveError("load() takes a contiguous buffer of bytes", path=source) from None
    return view.toreadonly()


def load(
    data: bytes | bytearray | memoryview, *, expect: Mapping[str, Any] | bytes | None = None,
    source: str = "<bytes>", lazy: bool = False,
) -> Bundle:
    """Load a bundle or a single `.skill` archive from its bytes and check it (see above).

    `expect` pins approved digests: name -> digest, a lock file's content, or its bytes (as
    read from ``skills.lock``). A skill whose
    digest differs, that is missing, or that `expect` does not list is refused. `source`
    names the input in messages. With `lazy`, each skill's manifest and members are checked
    when it is first used rather than now. Raises `ArchiveError`, `FormatVersionError` or
    `IntegrityError`, listing every problem found. The bytes must not change while the
    bundle is in use: files are served as slices of them.
    """
    view = _as_view(data, source)
    recorded: dict[str, dict[str, Any]] = {}
    approved = (approved_digests(expect, source, entries=recorded) if expect is not None
                else None)
    index = read_zip(data if isinstance(data, bytes) else view, source=source)
    return load_index(index, view, approved=approved, source=source, lazy=lazy,
                      recorded=recorded)


def load_index(
    index: ZipIndex, view: memoryview, *, approved: dict[str, str] | None = None,
    source: str = "<bytes>", lazy: bool = False,
    recorded: dict[str, dict[str, Any]] | None = None,
) -> Bundle:
    """`load` of a zip already read and checked (`index`), serving from `view`: what `load`
    does after `read_zip`; `recorded`: the lock's fields of each approved skill that its
    manifest must declare too (`approved_digests`' ``entries``), checked with the skill.
    The build side gives it an archive read from a file
    (`skillpack.storedzip.reader.read_zip_file`, and its `FileBytes` as `view`)."""
    names = index.names
    if list(names) != sorted(names):
        from itertools import pairwise

        first = next(b for a, b in pairwise(names) if b < a)
        raise ArchiveError(f"member {first!r} is out of order: members are sorted by the "
                           "UTF-8 bytes of their names", path=source,
                           hint="rebuild it with `skillpack bundle` or `skillpack pack`")
    listed: list[tuple[str, str | None]]
    root = False
    if BUNDLE_INDEX in index:
        kind = "bundle"
        entry = index.get(BUNDLE_INDEX)
        assert entry is not None
        found = read_index(index.data(entry), source)
        digest, pairs = found.digest, found.skills
        listed = list(pairs)
    else:
        kind, digest = "archive", ""
        folder = single_skill_folder(names, source)
        root = not folder  # the root layout: SKILL.md at the archive root
        listed = [(root_skill_name(index, source) if root else folder, None)]
    spans = skill_spans(names, listed, kind == "bundle", source, root=root)
    bundle = Bundle(kind, source, digest, index, view, spans, recorded)
    if kind == "archive" or not lazy:
        bundle.check_all()
    if kind == "archive":
        skill = bundle[listed[0][0]]
        bundle.digest = bundle_digest([(skill.name, skill.digest)])
        digests = {skill.name: skill.digest}
    else:
        digests = dict(pairs)  # each manifest is checked against these (now, or on first use)
    if approved is not None:
        problems = Problems(source)
        check_expect(approved, digests, problems)
        problems.raise_any()
    return bundle
