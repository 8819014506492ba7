"""One skill of a loaded bundle: its files served as verified slices, and what its SKILL.md says.

A `LoadedSkill` is built by :func:`skillpack.runtime.load` once the skill's manifest has been
checked against its digest and its members. It serves only the files its manifest lists; each
file's bytes are checked against their BLAKE3 the first time they are served (the verdict is
cached per file). What the skill says and does (description, body, tools, programs) is derived
from its verified SKILL.md, never from the manifest's copy: the digest covers the files only.

Standard library only at import: blake3 is imported at load (by the manifest check), the YAML
parser when a SKILL.md is first parsed.
"""

from __future__ import annotations

import builtins

from skillpack.errors import IntegrityError, ResourceError, SkillError
from skillpack.formats import allowances
from skillpack.formats.manifest import Manifest, ManifestFields
from skillpack.formats.paths import SKILL_MD
from skillpack.formats.shebang import SHEBANG_MAX, shebang_line
from skillpack.skillmd.fence_probe import may_open_a_tool_fence

# Neither `re`, `unicodedata`, `typing` nor `dataclasses` at import (the runtime's cold
# start): `re` and `unicodedata` are imported when a path is refused.
TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any, TypeAlias

    from skillpack.skillmd.frontmatter import Frontmatter
    from skillpack.skillmd.frontmatter_reader import FrontmatterText
    from skillpack.skillmd.programs import Program
    from skillpack.skillmd.skill import Skill
    from skillpack.skillmd.tools import Tool

__all__ = ["LoadedSkill", "Resource", "close_paths", "path_refusal"]

if TYPE_CHECKING:
    #: What a loaded skill knows of a file: size, BLAKE3 hex, executable, offset of its data.
    FileEntry: TypeAlias = tuple[int, str, bool, int]
# Only compiled when a path is refused (the `re` module caches them), not at import.
_DRIVE = r"[A-Za-z]:"
_PERCENT = r"(?i)%(?:2e|2f|5c|00)"
_CONTROL = r"[\x00-\x1f\x7f-\x9f]"
_hasher: Callable[[Any], Any] | None = None
#: The bytes of a SKILL.md decoded first: the frontmatter of every corpus skill closes in
#: them (1.8 KiB at most); a longer one is read from the whole text.
_HEAD = 4096
_read_frontmatter: Callable[[str, memoryview | None], FrontmatterText | None] | None = None


def _yaml_frontmatter(text: str, name: str) -> Frontmatter:
    """The frontmatter of a SKILL.md the exact reader does not read (a flow mapping, a key
    with a space...), read as `check` and `pack` read it: normalised, then PyYAML's failsafe
    loader with the build side's refusals (`SkillError` naming the line). It costs the import
    of PyYAML, once, and only for such a skill: none of the corpus's 182 is one."""
    # cold path: PyYAML and the build side's frontmatter module only for such a skill
    from skillpack.skillmd.frontmatter import normalise_text, split_frontmatter

    return split_frontmatter(normalise_text(text), file=f"{name}/{SKILL_MD}")


def _frontmatter_reader() -> Callable[[str, memoryview | None], FrontmatterText | None]:
    """`read_frontmatter`, imported on first use, then kept (a catalog reads 180 SKILL.md)."""
    global _read_frontmatter
    # cold path: the frontmatter reader only once a SKILL.md is read (not at load)
    from skillpack.skillmd.frontmatter_reader import read_frontmatter

    _read_frontmatter = read_frontmatter
    return read_frontmatter


def _blake3_hex(data: memoryview) -> str:
    """BLAKE3-256 hex of `data` (blake3 is imported on first use, then kept)."""
    global _hasher
    if _hasher is None:
        from blake3 import blake3

        _hasher = blake3
    try:
        result: str = _hasher(data).hexdigest()
    except TypeError:  # a large span of an archive file (skillpack.storedzip.source): chunked
        result = data.blake3_hex()  # type: ignore[attr-defined]
    return result



def path_refusal(path: object) -> str:
    """Why `path` cannot name a file of a skill (for a path its manifest does not list)."""
    if not isinstance(path, str):
        return f"a path is a string, not {type(path).__name__}"
    import re

    if not path:
        return "the path is empty"
    if "\x00" in path:
        return "the path holds a NUL character"
    if "\\" in path:
        return "the path holds a backslash; paths use '/' only"
    if path.startswith("/") or re.match(_DRIVE, path):
        return "the path is absolute; name the file relative to the skill folder"
    if path.startswith("~"):
        return "the path starts with '~'; name the file relative to the skill folder"
    if re.search(_PERCENT, path):
        return ("the path holds a percent-encoded dot, slash, backslash or NUL (like '%2e' or "
                "'%2f'); paths are never URL-decoded, name the file as files() lists it")
    segments = path.split("/")
    if ".." in segments:
        return "the path has a '..' segment; a path never leaves the skill folder"
    if "." in segments or "" in segments:
        return ("the path has a '.' or empty segment (like './x', 'a//b' or a trailing '/'); "
                "name the file as files() lists it")
    if segments[0] == ".skillpack":
        return "'.skillpack/' holds the skill's manifest, which is not a file of the skill"
    if re.search(_CONTROL, path):
        return "the path holds a control character"
    return "the skill carries no such file"


class Resource:
    """A file of a loaded skill: its path, size and mode, and its verified bytes on demand."""

    __slots__ = ("_skill", "blake3", "executable", "path", "size")

    def __init__(self, skill: LoadedSkill, path: str, entry: FileEntry) -> None:
        self._skill = skill
        self.path: str = path
        self.size: int = entry[0]
        self.blake3: str = entry[1]
        self.executable: bool = entry[2]

    def view(self) -> memoryview:
        """The file's bytes as a read-only, zero-copy slice of the bundle (verified)."""
        return self._skill._serve(self.path)

    def bytes(self) -> builtins.bytes:
        """The file's bytes (verified)."""
        return self._skill._serve(self.path).tobytes()

    def text(self) -> str:
        """The file's text, decoded as UTF-8; a binary file raises `ResourceError`."""
        data = self._skill._serve(self.path)
        try:
            try:
                text = str(data, "utf-8")
            except TypeError:  # a large span of an archive file (storedzip.source): read whole
                text = str(data.tobytes(), "utf-8")
        except UnicodeDecodeError as exc:
            raise self._binary(f"it is not UTF-8 text (byte {exc.start})") from None
        if "\x00" in text:
            raise self._binary("it holds NUL bytes")
        return text

    def _binary(self, why: str) -> ResourceError:
        return ResourceError(
            f"skill '{self._skill.name}', file '{self.path}' is binary ({self.size:,} bytes): "
            f"{why}, so it cannot be read as text", path=self._skill.source,
            hint="read its bytes with file(path).bytes() instead")

    def __repr__(self) -> str:
        return f"<Resource {self._skill.name}/{self.path} ({self.size} bytes)>"


class LoadedSkill:
    """A skill of a loaded bundle or archive. Built by :func:`skillpack.runtime.load` only."""

    __slots__ = ("_checked", "_files", "_front", "_manifest", "_parsed", "_programs",
                 "_refused", "_resources", "_verified", "_view", "digest", "name", "source")

    def __init__(
        self, manifest: Manifest | ManifestFields, view: memoryview,
        files: dict[str, FileEntry], source: str,
    ) -> None:
        self.name: str = manifest.name
        self.digest: str = manifest.digest
        self._manifest = manifest
        self.source = source
        self._view = view
        self._files = files  # path -> (size, blake3, executable, offset of its data)
        self._verified: set[str] = set()
        self._resources: dict[str, Resource] = {}
        self._parsed: Skill | None = None
        self._front: FrontmatterText | Frontmatter | None = None
        #: why its SKILL.md was refused, once read: raised again, never read again (a hostile
        #: frontmatter costs its parse once, not once a property)
        self._refused: SkillError | IntegrityError | None = None
        self._checked = False  # whether the manifest's fields were checked against SKILL.md
        self._programs: tuple[Program, ...] | None = None

    def declared_manifest(self) -> Manifest:
        """The manifest as the skill's member declares it: its files checked at load, its
        other fields not yet against SKILL.md. A build-side hook: `skillpack verify` checks
        those fields itself, field by field (`manifest_differences`), and says which differ
        where `manifest` would only refuse. Made once, from what load read (no second
        decoding, no second copy of its records); `manifest` then checks and returns this
        very object."""
        manifest = self._manifest
        if isinstance(manifest, ManifestFields):
            manifest = self._manifest = Manifest.from_fields(manifest)
        return manifest

    def let_go(self) -> None:
        """Drop what was read of SKILL.md (its text, the parsed skill), read again if asked.
        A build-side hook: `skillpack verify` of a bundle calls it once it has checked a
        skill, so that a bundle of thousands of skills is verified holding their records,
        not every SKILL.md."""
        self._front = None
        self._parsed = None

    @property
    def manifest(self) -> Manifest:
        """The skill's manifest, every field checked: its files against the digest (at load),
        and its description, programs, tools and allowances against what the verified
        SKILL.md and files give (on first use; any difference raises `IntegrityError`)."""
        manifest = self._manifest
        if not self._checked:
            built = (Manifest.from_fields(manifest) if isinstance(manifest, ManifestFields)
                     else manifest)
            differ = self.manifest_differences(built)
            if differ:
                raise IntegrityError(
                    f"skill '{self.name}': its manifest's {', '.join(differ)} "
                    f"{'do' if len(differ) > 1 else 'does'} not match what its verified "
                    "SKILL.md and files give: the manifest was altered", path=self.source,
                    hint="do not use this bundle; rebuild it or fetch it again")
            manifest = self._manifest = built
            self._checked = True
        assert isinstance(manifest, Manifest)
        return manifest

    def manifest_differences(self, manifest: Manifest) -> list[str]:
        """The fields of `manifest` beyond its files (``description``, ``programs``,
        ``tools``, ``allowances``) that differ from what the verified SKILL.md and files
        give: the one definition `skillpack verify` and `manifest` use."""
        derived = {
            "description": self.description,
            "programs": [p.to_dict() for p in self.programs],
            "tools": [t.to_dict() for t in self.tools],
            "allowances": list(self.allowances()),
        }
        declared = {"description": manifest.description, "programs": list(manifest.programs),
                    "tools": list(manifest.tools), "allowances": list(manifest.allowances)}
        return [key for key, value in derived.items() if not _same(declared[key], value)]

    def lock_fields(self) -> dict[str, Any]:
        """What a lock records of this skill that its manifest declares too, as the lock
        writes it (`skillpack.runtime.checks.RUNTIME_LOCK_FIELDS`), and its ``digest``:
        ``programs``,
        ``description`` and ``tools`` (each ``{"id", "run"}``, ``run`` its argv words, by
        id). From the manifest as load read it, SKILL.md not parsed: `manifest` checks those
        fields against SKILL.md on first use."""
        declared = self._manifest
        tools = [{"id": t.get("id"), "run": t["run"].split() if isinstance(t.get("run"), str)
                  else list(t.get("run") or ())} for t in declared.tools]
        return {"digest": self.digest, "programs": list(declared.programs),
                "description": declared.description,
                "tools": sorted(tools, key=lambda t: str(t["id"]))}

    def allowances(self) -> tuple[str, ...]:
        """The carried files SKILL.md lets past the secret filter, NFC, in UTF-8 order."""
        return allowances.recorded(
            allowances.parse(allowances.normalise(self.skill.secret_allowances)), self._files)

    # -- files ------------------------------------------------------------------------------

    def files(self) -> tuple[str, ...]:
        """The paths of the skill's files, sorted by UTF-8 bytes (the manifest is not one)."""
        return tuple(self._files)

    def file(self, path: str) -> Resource:
        """The file at `path`, one of `files()`; any other path raises `ResourceError`."""
        resource = self._resources.get(path) if isinstance(path, str) else None
        if resource is not None:
            return resource
        found = self._files.get(path) if isinstance(path, str) else None
        if found is None:
            raise self._refuse(path)
        resource = self._resources[path] = Resource(self, path, found)
        return resource

    def _refuse(self, path: object) -> ResourceError:
        reason = path_refusal(path)
        hint = "call files() for the paths it carries"
        if isinstance(path, str) and reason == "the skill carries no such file":
            import unicodedata

            nfc = unicodedata.normalize("NFC", path)
            if nfc != path and nfc in self._files:
                reason = f"the path is not in Unicode NFC form; the skill carries {nfc!r}"
            elif any(p.startswith(path + "/") for p in self._files):
                reason = "that is a folder; name a file in it"
            else:
                close = close_paths(path, self._files)
                if close:
                    hint = "did you mean " + " or ".join(repr(c) for c in close) + "?"
                    if close[0].lower() == path.lower():
                        hint += " (paths are compared by exact case)"
        return ResourceError(f"skill '{self.name}' does not serve {path!r}: {reason}",
                             path=self.source, hint=hint)

    def _serve(self, path: str) -> memoryview:
        """The verified bytes of a listed file: hashed the first time, then trusted."""
        size, expected, _, offset = self._files[path]
        data = self._view[offset : offset + size]
        if path not in self._verified:
            self._check(path, expected, data)
            self._verified.add(path)
        return data

    def _check(self, path: str, expected: str, data: memoryview) -> None:
        self._compare(path, expected, _blake3_hex(data))

    def _compare(self, path: str, expected: str, actual: str) -> None:
        if actual != expected:
            raise IntegrityError(
                f"skill '{self.name}', file '{path}': its bytes hash to {actual}, the "
                f"manifest records {expected}: the file was altered or damaged",
                path=self.source, hint="do not use this bundle; rebuild it or fetch it again")

    def verify(self, hashes: Mapping[str, str] | None = None) -> list[IntegrityError]:
        """Hash every file now (cached verdicts are not trusted); return the mismatches.

        With `hashes` (path -> BLAKE3 hex of every file, computed by a caller that read each
        file's bytes itself for checks of its own: `skillpack verify`'s one pass over an
        archive), those are compared instead of reading and hashing the files again."""
        failures: list[IntegrityError] = []
        for path, (size, expected, _, offset) in self._files.items():
            try:
                if hashes is None:
                    self._check(path, expected, self._view[offset : offset + size])
                else:
                    self._compare(path, expected, hashes.get(path, ""))
            except IntegrityError as exc:
                self._verified.discard(path)
                failures.append(exc)
            else:
                self._verified.add(path)
        return failures

    # -- what SKILL.md says -----------------------------------------------------------------

    def _frontmatter(self) -> FrontmatterText | Frontmatter:
        """The verified SKILL.md's frontmatter, read without YAML by the exact reader, or, where
        it uses YAML beyond that reader, by the build side's own (`_yaml_frontmatter`): what
        `check` and `pack` read, never a guess. Its name must be the skill's folder name."""
        if self._refused is not None:
            raise self._refused
        if self._front is None:
            try:
                self._front = self._read_frontmatter()
            except (SkillError, IntegrityError) as refused:
                self._refused = refused
                raise
        return self._front

    def _read_frontmatter(self) -> FrontmatterText | Frontmatter:
        """SKILL.md's frontmatter read (see `_frontmatter`), or why it is refused."""
        raw = self._serve(SKILL_MD)
        read_frontmatter = _read_frontmatter or _frontmatter_reader()
        # The head alone is decoded and read when the frontmatter closes in it; the rest
        # is checked to be UTF-8 and let go (a catalog's 180 decoded SKILL.md kept alive
        # cost a fresh process 2 ms of page faults), decoded again when the body is asked.
        front: FrontmatterText | Frontmatter | None = None
        at = 0
        try:
            if isinstance(raw, memoryview) and len(raw) > _HEAD:
                cut = raw[:_HEAD].tobytes().rfind(b"\n") + 1  # never inside a character
                if cut:
                    front = read_frontmatter(str(raw[:cut], "utf-8"), raw[cut:])
                    if front is not None:
                        at = cut
                        str(raw[cut:], "utf-8")
            if front is None:
                try:
                    text = str(raw, "utf-8")
                except TypeError:  # a large span of an archive file (storedzip.source)
                    text = str(raw.tobytes(), "utf-8")
                front = read_frontmatter(text, None)
            if front is None:  # YAML beyond the exact reader (no corpus skill has any)
                front = _yaml_frontmatter(text, self.name)
        except UnicodeDecodeError as exc:
            raise SkillError(f"SKILL.md is not valid UTF-8 (byte {at + exc.start})",
                             path=f"{self.name}/{SKILL_MD}") from None
        data = front.data
        name = data.get("name") if "name" in data else data.get("skill")
        named = name.strip() if isinstance(name, str) else ""
        if named != self.name or ("name" in data and "skill" in data
                                  and data["name"] != data["skill"]):
            raise IntegrityError(
                f"skill '{self.name}': its SKILL.md names it {named!r}; the bundle "
                "and the manifest call it by its folder's name", path=self.source,
                hint="rebuild the bundle from the skill; do not edit bundles by hand")
        return front

    @property
    def skill(self) -> Skill:
        """The parsed, verified SKILL.md: the same `Skill` a folder would give (no workdir),
        from the frontmatter `_frontmatter` read (no YAML)."""
        if self._parsed is None:
            front = self._frontmatter()
            # cold path: the body's tool fences (`re`, dataclasses) only when they are asked for
            from skillpack.skillmd import frontmatter, skill

            self._parsed = skill.parse_skill(
                "", file=f"{self.name}/{SKILL_MD}",
                front=frontmatter.Frontmatter(front.data, {}, front.body, front.body_line))
        return self._parsed

    @property
    def description(self) -> str:
        """The description of the verified SKILL.md (what a catalog shows)."""
        value = self._frontmatter().data.get("description")
        return value if isinstance(value, str) else ""

    @property
    def body(self) -> str:
        """The markdown body of the verified SKILL.md."""
        return self._frontmatter().body

    @property
    def rendered(self) -> str:
        return self.skill.rendered

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The tools of `skill`: none, without parsing it, when the verified SKILL.md
        declares no `includes` and no body line opens a tool fence (then `parse_skill` has
        nothing to refuse either: `_frontmatter` refuses a name conflict)."""
        if self._parsed is None:
            front = self._frontmatter()
            if "includes" not in front.data and not may_open_a_tool_fence(front.body):
                return ()
        return self.skill.tools

    @property
    def programs(self) -> tuple[Program, ...]:
        """The programs the skill runs: from its tools, allowed-tools and `#!` lines."""
        if self._programs is None:
            # cold path: `re` and dataclasses only when a skill's programs are asked for
            from skillpack.skillmd.programs import derive_programs

            self._programs = tuple(derive_programs(self.skill, self.shebangs()))
        return self._programs

    def shebangs(self) -> dict[str, str]:
        """Each executable file's `#!` line, from its verified bytes, by path (read as
        :func:`skillpack.skillmd.programs.shebang_line` reads a file when packing)."""
        found: dict[str, str] = {}
        for path, (_, _, executable, _) in self._files.items():
            if executable:
                line = shebang_line(self._serve(path)[:SHEBANG_MAX].tobytes())
                if line is not None:
                    found[path] = line
        return found

    def __repr__(self) -> str:
        return f"<LoadedSkill {self.name} {self.digest}>"


def _same(a: object, b: object) -> bool:
    """Equal as JSON values, types included (``1`` is not ``true``, nor ``1.0``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(map(_same, a, b))
    return a == b


#: Suggestions for a missed path compare it with at most this many paths, of at most
#: `_SUGGEST_LENGTH` characters: a miss costs the same on a skill of 60,000 long names.
_SUGGEST_POOL, _SUGGEST_LENGTH = 500, 256


def close_paths(path: str, paths: Iterable[str]) -> list[str]:
    """Up to three carried paths close to the missed `path`: first those that differ from it
    only by case (``forms.md`` for ``FORMS.md``, which a similarity ratio misses), then those
    looked for among the files of its folder first, then the others, `_SUGGEST_POOL` at most;
    none for a path too long."""
    if len(path) > _SUGGEST_LENGTH:
        return []
    import difflib  # cold path: only for a miss

    folder = path.rpartition("/")[0]
    lowered = path.lower()
    cased: list[str] = []
    near: list[str] = []
    far: list[str] = []
    for candidate in paths:
        if len(candidate) > _SUGGEST_LENGTH:
            continue
        if len(candidate) == len(path) and len(cased) < 3 and candidate.lower() == lowered:
            cased.append(candidate)
        if candidate.rpartition("/")[0] == folder:
            near.append(candidate)
            if len(near) >= _SUGGEST_POOL:
                break
        elif len(far) < _SUGGEST_POOL:
            far.append(candidate)
    pool = (near + far)[:_SUGGEST_POOL]
    close = [c for c in difflib.get_close_matches(path, pool, n=3) if c not in cased]
    return (cased + close)[:3]
