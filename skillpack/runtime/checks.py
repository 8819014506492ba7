"""The checks `skillpack.runtime.load` runs on a bundle or archive before serving anything.

Three levels:

* the layout (`single_skill_folder`, `root_skill_name`, `skill_spans`; the index itself is
  checked by `skillpack.formats.bundle_index.read_index`): every member under a listed skill's
  folder, each skill with its manifest member. A single archive is ``wrapped`` (one top
  folder named after the skill) or ``root`` (SKILL.md and ``.skillpack/manifest.json`` at
  the archive root, the skill's name read from that manifest);
* one skill (`check_packed_skill`): its manifest parsed, named after its folder, hashing to its
  digest, equal to the index's digest, and its members exactly the manifest's files with the
  recorded sizes and modes;
* the approved digests (`approved_digests`, `check_expect`) and, for a lock, the fields its
  entries record that the manifest declares too (`lock_differences`, `lock_finding`).

Problems are collected in a `Problems` and raised once, listing them all.
"""

from __future__ import annotations

# `_collections_abc.Mapping` is `collections.abc.Mapping`; importing it from there spares
# the cold start `collections` and its imports (about 1.4 ms). Neither `json` (see
# `load_json`), `typing` nor `dataclasses` at run time.
from _collections_abc import Mapping
from bisect import bisect_left

from skillpack._record import Record
from skillpack.errors import ArchiveError, IntegrityError, Problem, SkillpackError
from skillpack.formats.bundle_index import ALTERED, BUNDLE_INDEX, HINT
from skillpack.formats.digest import DIGEST_HEADER, digest_columns, is_digest
from skillpack.formats.manifest import (
    LOCK_FORMAT,
    MANIFEST_PATH,
    Manifest,
    check_format,
    checked_fields,
    is_text,
    load_json,
)
from skillpack.formats.paths import SKILL_MD
from skillpack.runtime.skill import LoadedSkill

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from typing import Any

    from skillpack.runtime.skill import FileEntry
    from skillpack.storedzip.reader import ZipIndex

__all__ = [
    "APPROVAL_HINT",
    "LOCK_ENTRY",
    "LOCK_HINT",
    "LOCK_PROGRAMS",
    "RUNTIME_LOCK_FIELDS",
    "Problems",
    "SkillSpan",
    "approval_findings",
    "approved_digests",
    "check_expect",
    "check_packed_skill",
    "check_skill_in_bulk",
    "lock_differences",
    "lock_finding",
    "root_skill_name",
    "single_skill_folder",
    "skill_spans",
]


class SkillSpan(Record):
    """Where a listed skill's members are (``names[start:end]`` of the sorted zip index), its
    digest in the bundle index (None for a single archive), and the prefix of its members'
    names (``<name>/``; empty for a root-layout archive)."""

    digest: str | None
    start: int
    end: int
    prefix: str = ""


class Problems:
    """Problems found while checking, collected so that one error lists them all."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.found: list[tuple[type[SkillpackError], Problem, str | None]] = []

    def add(self, kind: type[SkillpackError], code: str, message: str, member: str | None = None,
            hint: str | None = None) -> None:
        self.found.append((kind, Problem("error", code, message, member), hint))

    def take(self, exc: SkillpackError, code: str, member: str) -> None:
        message = exc.message if member in exc.message else f"member {member!r}: {exc.message}"
        self.add(type(exc), code, message, member, exc.hint)

    def error(self) -> SkillpackError | None:
        """One error of the first problem's kind, listing every problem; None if none."""
        if not self.found:
            return None
        kind, first, hint = self.found[0]
        more = len(self.found) - 1
        message = first.message + (f" (and {more} more problem{'s' if more > 1 else ''})"
                                   if more else "")
        return kind(message, path=self.source, hint=hint or HINT,
                    problems=[problem for _, problem, _ in self.found])

    def raise_any(self) -> None:
        error = self.error()
        if error is not None:
            raise error


def single_skill_folder(names: tuple[str, ...], source: str) -> str:
    """The one top folder of a single `.skill` archive; ``""`` for a root-layout archive (its
    manifest, ``.skillpack/manifest.json``, at the root: no skill name can be ``.skillpack``).
    """
    if MANIFEST_PATH in names:  # a tuple: found by a scan, as cheap as the loop below
        return ""
    _refuse_manifest_free(names, source)
    loose = [name for name in names if "/" not in name]
    if loose:
        raise ArchiveError(f"member {loose[0]!r} is outside the skill's folder (a .skill "
                           "archive holds one top folder)", path=source, hint=HINT)
    heads = sorted({name.partition("/")[0] for name in names})
    if len(heads) != 1:
        found = ", ".join(heads) if heads else "no members at all"
        raise ArchiveError(f"a .skill archive holds one top folder; found {found}",
                           path=source, hint=HINT)
    return heads[0]


def _refuse_manifest_free(names: tuple[str, ...], source: str) -> None:
    """Refuse, saying what it is, a skill's files without skillpack's manifest: what `pack`
    writes for a host or a discovery site (SPEC section 3b), or an archive made elsewhere,
    which skillpack's commands read by content but the runtime does not load."""
    if any(name.endswith("/" + MANIFEST_PATH) for name in names):
        return
    heads = {name.partition("/")[0] for name in names}
    if "SKILL.md" in names:
        expected = MANIFEST_PATH
    elif len(heads) == 1 and f"{next(iter(heads))}/SKILL.md" in names:
        expected = f"{next(iter(heads))}/{MANIFEST_PATH}"
    else:
        return
    raise ArchiveError(
        f"no manifest member {expected!r}: the archive holds a skill's files only, as "
        "skillpack packs them for a host or a discovery site (pack --target, --layout root) "
        "or as another tool makes them; the runtime loads .skill archives and bundles",
        path=source, hint="bundle it first: `skillpack bundle ARCHIVE -o skills.bundle` "
        "reads it by its content, to the same digest")


def root_skill_name(index: ZipIndex, source: str) -> str:
    """The skill's name in a root-layout archive: its manifest's ``name`` (the manifest is
    checked in full later, `check_packed_skill`)."""
    entry = index.get(MANIFEST_PATH)
    assert entry is not None  # single_skill_folder() found it
    try:
        name = load_json(str(index.data(entry), "utf-8")).get("name")
    except (UnicodeDecodeError, ValueError, AttributeError, RecursionError):
        name = None
    if (not isinstance(name, str) or not name or "/" in name or name in (".", "..")
            or not name.isprintable() or not is_text(name)):
        raise ArchiveError(f"manifest {MANIFEST_PATH!r} of a root-layout archive names no "
                           "skill (a JSON object with a 'name' string of printable text)",
                           path=source, hint=HINT)
    return name


def skill_spans(
    names: tuple[str, ...], listed: list[tuple[str, str | None]], bundle: bool, source: str,
    *, root: bool = False,
) -> dict[str, SkillSpan]:
    """Where each listed skill's members are; refuse members outside every listed skill and
    skills without a manifest member. `names` is sorted, so a skill's members are contiguous.
    With ``root``, the one listed skill is every member (a root-layout archive)."""
    if root:
        [(name, digest)] = listed
        return {name: SkillSpan(digest, 0, len(names), "")}
    spans: dict[str, SkillSpan] = {}
    owned = 1 if bundle else 0  # the index
    problems = Problems(source)
    for name, digest in listed:
        start = bisect_left(names, name + "/")
        end = bisect_left(names, name + "0", start)  # "0" follows "/"
        spans[name] = SkillSpan(digest, start, end, name + "/")
        owned += end - start
        manifest = f"{name}/{MANIFEST_PATH}"
        at = bisect_left(names, manifest, start, end)
        if at == end or names[at] != manifest:
            problems.add(ArchiveError, "manifest-missing",
                         f"skill '{name}' has no manifest member {manifest!r}", manifest)
    if owned != len(names):
        for member in names:
            head = member.partition("/")[0]
            if member != BUNDLE_INDEX and head not in spans:
                problems.add(ArchiveError, "member-outside", f"member {member!r} is outside "
                             "every skill the bundle lists", member)
    problems.raise_any()
    return spans


def check_packed_skill(
    index: ZipIndex, view: memoryview, name: str, span: SkillSpan, problems: Problems, source: str,
) -> LoadedSkill | None:
    """Check one skill's manifest and members; return it, or None with `problems` said."""
    skill = check_skill_in_bulk(index, view, name, span, source)
    if skill is not None:
        return skill
    listed = span.digest
    before = len(problems.found)
    member = span.prefix + MANIFEST_PATH
    where = f"{source}/{member}"
    entry = index.get(member)
    assert entry is not None  # skill_spans() checked it
    try:
        manifest = Manifest.from_bytes(index.data(entry), source=where)
    except SkillpackError as exc:
        problems.take(exc, "manifest-invalid", member)
        return None
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        problems.add(ArchiveError, "manifest-invalid", f"manifest {member!r} is malformed: "
                     f"{exc}", member)
        return None
    if manifest.name != name:
        problems.add(ArchiveError, "name-mismatch", f"manifest {member!r} names the skill "
                     f"{manifest.name!r}, not its folder's name {name!r}", member)
        return None
    try:
        manifest.check_digest(source=where)
    except IntegrityError as exc:
        problems.take(exc, "manifest-digest", member)
    if listed is not None and manifest.digest != listed:
        problems.add(IntegrityError, "index-digest", f"skill '{name}': its manifest has "
                     f"digest {manifest.digest}, the bundle index lists {listed}", member,
                     ALTERED)
    files = _check_members(index, name, manifest, span, problems)
    if manifest.file(SKILL_MD) is None:
        problems.add(ArchiveError, "skill-md-missing", f"skill '{name}' carries no SKILL.md",
                     span.prefix + SKILL_MD)
    if len(problems.found) != before:
        return None
    return LoadedSkill(manifest, view, files, source)


def check_skill_in_bulk(
    index: ZipIndex, view: memoryview, name: str, span: SkillSpan, source: str,
) -> LoadedSkill | None:
    """The skill when it passes every check of `check_packed_skill`, checked in bulk and
    without a record per file; None as soon as anything is amiss (`check_packed_skill` then
    runs its checks one by one, to name every problem). An eager load of a large bundle runs
    this for each skill.
    """
    listed, start, end, prefix = span.digest, span.start, span.end, span.prefix
    member = prefix + MANIFEST_PATH
    names = index.names
    at = bisect_left(names, member, start, end)  # skill_spans() checked it is there
    sizes, executables, offsets = index.facts(start, end)
    raw = view[offsets[at - start] : offsets[at - start] + sizes[at - start]]
    del sizes[at - start], executables[at - start], offsets[at - start]
    try:  # what Manifest.from_bytes(raw) checks, with the files as columns
        fields = checked_fields(load_json(str(raw, "utf-8")), source=source)
    except (SkillpackError, ValueError, TypeError, KeyError, RecursionError):
        return None
    files = fields.files
    paths, modes, file_sizes, hexes = files
    # The members are sorted, and so are the manifest's paths (checked_fields checks it):
    # when all is well, the skill's members but its manifest are exactly its paths, in order.
    reserved = bisect_left(paths, ".skillpack/")
    if not (
        fields.name == name
        and (listed is None or fields.digest == listed)
        and names[start:at] + names[at + 1 : end] == tuple([prefix + path for path in paths])
        and (reserved == len(paths) or not paths[reserved].startswith(".skillpack/"))
        and sizes == file_sizes
        and executables == [mode == "100755" for mode in modes]
        and SKILL_MD in paths
        and digest_columns(*files, ordered=True) == fields.digest  # checked_fields sorted
    ):
        return None
    entries = zip(file_sizes, hexes, executables, offsets, strict=True)
    return LoadedSkill(fields, view, dict(zip(paths, entries, strict=True)), source)


def _check_members(
    index: ZipIndex, name: str, manifest: Manifest, span: SkillSpan, problems: Problems,
) -> dict[str, FileEntry]:
    """Say what is wrong with a skill's members, one by one; the files that are right."""
    start, end, prefix = span.start, span.end, span.prefix
    get = index.get
    files: dict[str, FileEntry] = {}
    for record in manifest.files:
        path = record.path
        found = None if path.startswith(".skillpack/") else get(prefix + path)
        if found is None and path.startswith(".skillpack/"):
            problems.add(ArchiveError, "member-reserved", f"the manifest of '{name}' lists "
                         f"{path!r}: '.skillpack/' holds the manifest, never a file of the "
                         "skill", prefix + path)
        elif found is None:
            problems.add(ArchiveError, "member-missing", f"the manifest of '{name}' lists "
                         f"{path!r}, but there is no member {prefix + path!r}", prefix + path)
        elif found.size != record.size:
            problems.add(IntegrityError, "size-mismatch", f"member {found.name!r} is "
                         f"{found.size} bytes; the manifest records {record.size}", found.name)
        elif found.executable != (record.mode == "100755"):
            mode = "executable" if found.executable else "not executable"
            problems.add(IntegrityError, "mode-mismatch", f"member {found.name!r} is {mode}; "
                         f"the manifest records mode {record.mode}", found.name)
        else:
            files[path] = (record.size, record.blake3, found.executable, found.data_offset)
    if end - start != len(manifest.files) + 1 or len(files) != len(manifest.files):
        listed_paths = {record.path for record in manifest.files}
        for other in index.names[start:end]:
            rest = other[len(prefix):]
            if rest != MANIFEST_PATH and rest not in listed_paths:
                problems.add(ArchiveError, "member-unlisted", f"member {other!r} is not in "
                             f"the manifest of '{name}'", other)
    return files


def approved_digests(expect: Mapping[str, Any] | bytes, source: str, *,
                     entries: dict[str, dict[str, Any]] | None = None) -> dict[str, str]:
    """Approved digests by name, from a name -> digest mapping or a lock file, decoded or as
    its bytes (read without importing `json`).

    A lock (the bytes, or a mapping whose ``skills`` is not a digest: a name -> digest
    mapping may approve a skill named ``skills``) is read as
    `read_lock` reads it where it matters to what is approved: each key once, a readable
    format, ``skills`` an object, and each entry an object whose ``digest`` its ``files``
    lines hash to (a digest changed alone, or its lines removed, would approve other
    files).

    With `entries`, each lock entry's ``digest`` and fields among `RUNTIME_LOCK_FIELDS` that
    its format records go there by name (``programs`` read as `read_lock` reads it: absent,
    none), for `lock_differences`; a name -> digest mapping records none."""
    given_bytes = isinstance(expect, bytes | bytearray | memoryview)
    if isinstance(expect, bytes | bytearray | memoryview):
        try:
            expect = load_json(str(expect, "utf-8"), once=True)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise IntegrityError(f"expect: the lock file given is not UTF-8 JSON with each "
                                 f"key once: {exc}", path=source,
                                 hint="pass the bytes of a skills.lock") from None
    lock = isinstance(expect, Mapping) and not isinstance(expect.get("skills", ""), str)
    if given_bytes and not lock:
        raise IntegrityError("expect: the lock file given is not a lock (a JSON object "
                             "with 'format' and a 'skills' object)", path=source,
                             hint="pass the bytes of a skills.lock")
    if not isinstance(expect, Mapping):
        raise IntegrityError(f"expect must map skill names to digests, not "
                             f"{type(expect).__name__}", path=source)
    items: Any = expect.items()
    if lock:
        check_format(expect.get("format"), what="the lock file given as expect",
                     source=source, ours=LOCK_FORMAT)
        skills = expect.get("skills")
        if not isinstance(skills, Mapping):
            raise IntegrityError("expect: the lock file's 'skills' is not an object of "
                                 "name -> entry", path=source, hint=LOCK_HINT)
        items = skills.items()
    found: dict[str, str] = {}
    for name, value in items:
        if lock and not (isinstance(value, Mapping) and isinstance(value.get("files"), list)):
            raise IntegrityError(f"expect: the lock's entry {name!r} is not an object with "
                                 "'digest' and its 'files' lines", path=source,
                                 hint=LOCK_HINT)
        digest = value.get("digest") if lock else value
        if not isinstance(name, str) or not is_text(name):
            raise IntegrityError(f"expect: the skill name {name!r} is not text (a lone "
                                 "surrogate, from an escape such as \\ud800)", path=source,
                                 hint="pass a lock file's content or name -> digest")
        if not is_digest(digest):
            raise IntegrityError(f"expect: the approved digest of {name!r} is not a skillpack "
                                 f"digest ('blake3:' and 64 hex digits): {digest!r}",
                                 path=source, hint="pass a lock file's content or name -> digest")
        if lock:
            _check_file_lines(name, value["files"], digest, source)
            if entries is not None:
                entries[name] = {
                    key: value.get(key, [] if key == "programs" else None)
                    for key in (("programs",) if expect.get("format") == _FORMAT_1_0
                                else RUNTIME_LOCK_FIELDS)} | {"digest": digest}
        found[name] = digest
    return found


#: What to do with a lock edited by hand (`approved_digests`, `lock_finding`).
LOCK_HINT = "the lock file was edited by hand; lock again"
_FORMAT_1_0 = "1.0"  # a lock of skillpack 1.0 records programs, no description or tools

#: The code of a skill whose lock entry's ``programs`` (and maybe more) are not what
#: ``skillpack lock`` records for it, its digest the approved one (`lock_finding`).
LOCK_PROGRAMS = "lock-programs"
#: The code of a skill whose lock entry's other recorded fields (``description``, ``tools``,
#: ``allowed-tools``, ``mentions``, ``archive``) are not what ``skillpack lock`` records.
LOCK_ENTRY = "lock-entry"
#: The fields of a lock entry ``load(expect=)`` compares, with what the skill's verified
#: manifest declares (`LoadedSkill.lock_fields`); ``verify --lock`` compares every field.
RUNTIME_LOCK_FIELDS = ("programs", "description", "tools")


def lock_finding(name: str, fields: list[str], detail: str = "") -> tuple[str, str]:
    """``(code, message)`` of a skill whose lock entry's `fields` are not what ``skillpack
    lock`` records for it, its digest the approved one: the one wording of ``load(expect=)``
    and ``verify --lock`` (``detail``: more about a field, e.g. both archive SHA-256s)."""
    if fields == ["programs"]:
        return LOCK_PROGRAMS, ("the programs it runs differ from the lock's list (the lock "
                               "was edited); lock it again")
    return (LOCK_PROGRAMS if "programs" in fields else LOCK_ENTRY,
            f"skill '{name}': its lock entry differs in {', '.join(fields)} from what "
            f"`skillpack lock` records for this skill{detail}: the lock was edited; lock it "
            "again")


def lock_differences(entry: Mapping[str, Any], declared: Mapping[str, Any]) -> list[str]:
    """The fields of a lock `entry` (what `approved_digests` gives in ``entries``) that are
    not `declared` (`LoadedSkill.lock_fields`), in `RUNTIME_LOCK_FIELDS` order; ``tools``
    compared by id, as the lock writes them. None when the digests differ (`check_expect`
    says so)."""
    if entry.get("digest") != declared.get("digest"):
        return []
    differ = []
    for key in RUNTIME_LOCK_FIELDS:
        if key not in entry:
            continue
        value = entry[key]
        if key == "tools" and isinstance(value, list) and all(
                isinstance(t, Mapping) and isinstance(t.get("id"), str) for t in value):
            value = sorted(value, key=lambda t: t["id"])
        if value != declared[key]:
            differ.append(key)
    return differ


def _check_file_lines(name: str, files: Any, digest: str, source: str) -> None:
    """Refuse a lock entry whose file lines do not hash to its digest, as `read_lock` does:
    what an approver reads in a lock's diff is its files, not the hash (a digest changed
    alone would approve other files)."""
    try:  # the lines as the lock writes them, sorted and canonical: hashed as they are
        text = "".join([line + "\n" for line in files])
        if text.count("\n") == len(files):
            from blake3 import blake3

            if "blake3:" + blake3(DIGEST_HEADER + text.encode("utf-8")).hexdigest() == digest:
                return
    except (TypeError, UnicodeError):
        pass
    try:  # each line "MODE SIZE BLAKE3 PATH" read, as `read_lock` reads it
        rows = [line.split(" ", 3) for line in files]
        actual = digest_columns([r[3] for r in rows], [r[0] for r in rows],
                                [int(r[1]) for r in rows], [r[2] for r in rows])
    except (TypeError, AttributeError, IndexError, ValueError, UnicodeError):
        actual = None
    if actual != digest:
        raise IntegrityError(f"expect: the lock's entry '{name}': its file lines do not hash "
                             f"to its digest {digest}", path=source, hint=LOCK_HINT)


#: What to do when skills do not match their approval (`check_expect`, `verify --lock`).
APPROVAL_HINT = ("approve the bundle's digests (a new lock file), or deploy the approved "
                 "bundle")


def approval_findings(approved: Mapping[str, str],
                      digests: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """The one definition of "matches the approval", shared by ``load(expect=)`` and
    ``skillpack verify --lock``: ``(code, name, message)`` for each approved skill that is
    missing (``expect-missing``), whose digest differs (``expect-mismatch``), and each skill
    that is not approved (``expect-extra``); approved skills first, in their order."""
    found: list[tuple[str, str, str]] = []
    for name, digest in approved.items():
        actual = digests.get(name)
        if actual is None:
            found.append(("expect-missing", name, f"skill '{name}' is approved with digest "
                          f"{digest}, but it is missing (digest: none)"))
        elif actual != digest:
            found.append(("expect-mismatch", name, f"skill '{name}' has digest {actual}, but "
                          f"the approved digest is {digest}"))
    for name, actual in digests.items():
        if name not in approved:
            found.append(("expect-extra", name, f"skill '{name}' (digest {actual}) is not "
                          "approved"))
    return found


def check_expect(approved: dict[str, str], digests: dict[str, str], problems: Problems) -> None:
    """Refuse a skill whose digest differs from its approved one, missing, or not approved
    (`approval_findings`)."""
    for code, _name, message in approval_findings(approved, digests):
        problems.add(IntegrityError, code, message, hint=APPROVAL_HINT)
