"""Skills authored in code: `define_skill` checks one by the rules of a SKILL.md.

``define_skill(name=..., description=..., instructions=..., resources={...},
allowed_tools=[...])`` writes the SKILL.md text the skill stands for (YAML frontmatter whose
strings are double-quoted, escaped so that any text reads back as it was, then the
instructions as the markdown body), parses it with :func:`skillpack.skillmd.skill.parse_skill`
and checks it with :func:`skillpack.skillmd.validate.validate_skill`: a defined skill breaks
the rules a SKILL.md breaks, with the same problem codes, raised at once as one `SkillError`
listing every problem. Its resources are checked as the walk would check their names and
bytes (portable, not left out, no secret names or private keys, no collisions), so that the
folder `DefinedSkill.write` writes is the skill it describes: `digest` (in memory) equals the
digest of that folder, and `pack` and `write_bundle` accept a defined skill like a folder.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from blake3 import blake3

from skillpack._atomic import fsync_folder, make_folders, remove_tree
from skillpack.content.secrets import contains_private_key, secret_name_reason
from skillpack.errors import ArgumentError, Problem, SkillError, WriteError
from skillpack.formats.digest import FileRecord, digest_records
from skillpack.formats.paths import (
    SKILL_MD,
    collision_key,
    collision_reason,
    name_problem,
    sort_key,
)
from skillpack.skillmd.skill import Skill, parse_skill, split_entries
from skillpack.skillmd.validate import validate_skill
from skillpack.source.ignore import left_out_rule

__all__ = ["DefinedFile", "DefinedSkill", "define_skill", "materialized", "yaml_quote"]


@dataclass(frozen=True, slots=True)
class DefinedFile:
    """One file of a defined skill: its path in the skill folder, its bytes, its mode."""

    path: str
    data: bytes
    executable: bool = False

    def record(self) -> FileRecord:
        """The file's line of the digest (SPEC section 2)."""
        return FileRecord(self.path, "100755" if self.executable else "100644",
                          len(self.data), blake3(self.data).hexdigest())


@dataclass(frozen=True, slots=True, eq=False)
class DefinedSkill:
    """A skill defined in code and checked (see `define_skill`): its SKILL.md text, what that
    text parses to, and its files (SKILL.md first, then the resources by UTF-8 bytes)."""

    name: str
    text: str
    skill: Skill
    files: tuple[DefinedFile, ...]

    def records(self) -> list[FileRecord]:
        """The digest records of the skill's files, as a walk of its folder gives them."""
        return sorted((f.record() for f in self.files), key=lambda r: sort_key(r.path))

    @property
    def digest(self) -> str:
        """The skill's digest: that of the folder `write` writes."""
        return digest_records(self.records())

    def write(self, parent: str | os.PathLike[str]) -> Path:
        """Write the skill folder ``parent/NAME/`` (SKILL.md and the resources): into a
        temporary folder beside it, then renamed, so nothing is left half written. A
        folder already there is refused. Returns the folder's path."""
        dest = Path(parent) / self.name
        if os.path.lexists(dest):
            raise WriteError(f"{dest} already exists", path=str(dest),
                             hint="remove it, or write the skill under another folder")
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            staging = tempfile.mkdtemp(prefix=f".{self.name}.", suffix=".tmp",
                                       dir=dest.parent)
        except OSError as err:
            raise WriteError(f"cannot create the skill folder: {err.strerror}",
                             path=str(dest), hint="choose a folder you can write to") from None
        try:
            for file in self.files:
                _write_file(staging, file)
            os.chmod(staging, 0o755)  # mkdtemp makes it 0700
            fsync_folder(staging)
            os.replace(staging, dest)
            fsync_folder(str(dest.parent))
        except OSError as err:
            remove_tree(staging)
            raise WriteError(f"cannot write the skill folder: {err.strerror}",
                             path=str(dest), hint="check the folder and the free space") from None
        except BaseException:
            remove_tree(staging)
            raise
        return dest

    def __repr__(self) -> str:
        return f"<DefinedSkill {self.name} ({len(self.files)} files, {self.digest})>"


def _write_file(root: str, file: DefinedFile) -> None:
    target = os.path.join(root, *file.path.split("/"))
    folder = os.path.dirname(target)
    make_folders(folder, 0o755)
    mode = 0o755 if file.executable else 0o644
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        view = memoryview(file.data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode)  # whatever the umask
        os.fsync(fd)
    finally:
        os.close(fd)


# -- the SKILL.md text ---------------------------------------------------------------------

def yaml_quote(text: str) -> str:
    """`text` as a YAML double-quoted scalar that reads back exactly (as JSON quotes a string,
    with YAML's escapes for what YAML would refuse or fold: C0 and C1 controls, DEL, the BOM,
    NEL, line and paragraph separators, surrogates, U+FFFE and U+FFFF)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif _plain(code):
            out.append(ch)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}")
    out.append('"')
    return "".join(out)


def _plain(code: int) -> bool:
    """Whether YAML takes the character as it is in a double-quoted scalar."""
    if 0x20 <= code <= 0x7E or code >= 0x10000:
        return True
    if 0xA0 <= code <= 0xD7FF:
        return code not in (0x2028, 0x2029)
    return 0xE000 <= code <= 0xFFFD and code != 0xFEFF


def _skill_md(name: str, description: str, instructions: str, license: str | None,
              compatibility: str | None, allowed_tools: tuple[str, ...] | None) -> str:
    lines = ["---", f"name: {yaml_quote(name)}", f"description: {yaml_quote(description)}"]
    if license is not None:
        lines.append(f"license: {yaml_quote(license)}")
    if compatibility is not None:
        lines.append(f"compatibility: {yaml_quote(compatibility)}")
    if allowed_tools is not None:
        lines.append("allowed-tools:")
        lines.extend(f"  - {yaml_quote(entry)}" for entry in allowed_tools)
    lines.append("---")
    return "\n".join(lines) + "\n" + instructions


# -- the checks ----------------------------------------------------------------------------

def _text_argument(value: object, what: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ArgumentError(f"define_skill: {what} is a string, not {type(value).__name__}",
                            hint=f"pass {what} as text")
    return value


def _allowed_entries(value: object, problems: list[Problem], file: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    listed = list(value) if isinstance(value, Iterable) and not isinstance(value, str) else None
    if listed is None:
        raise ArgumentError(
            f"define_skill: allowed_tools is a list of tool entries, not {type(value).__name__}",
            hint="pass a list such as ['Read', 'Bash(git:*)'], or omit it for no restriction")
    value = listed
    if not value:
        problems.append(Problem(
            "error", "allowed-tools-empty",
            "allowed_tools is an empty list, which is ambiguous (no tool at all, or no "
            "restriction?); omit allowed_tools for no restriction, or list the tools the "
            "skill uses", file))
        return None
    entries: list[str] = []
    for entry in value:
        if not isinstance(entry, str):
            raise ArgumentError(f"define_skill: an allowed_tools entry is a string, not "
                                f"{type(entry).__name__}", hint="pass the tool's name")
        if split_entries(entry) != [entry.strip()] or not entry.strip():
            problems.append(Problem(
                "error", "allowed-tools-entry",
                f"allowed_tools entry {entry!r} is not one tool: give one entry per tool, "
                "like 'Read' or 'Bash(git status:*)'", file))
            continue
        entries.append(entry.strip())
    return tuple(entries)


def _resource_files(resources: object, executable: frozenset[str], problems: list[Problem],
                    name: str) -> list[DefinedFile]:
    if resources is None:
        resources = {}
    if not isinstance(resources, Mapping):
        raise ArgumentError(f"define_skill: resources maps paths to text or bytes, not "
                            f"{type(resources).__name__}", hint="pass {'path': 'text', ...}")
    files: list[DefinedFile] = []
    seen: dict[str, str] = {collision_key(SKILL_MD): SKILL_MD}

    def refuse(code: str, path: str, why: str) -> None:
        problems.append(Problem("error", code, f"resource {path!r}: {why}", f"{name}/{path}"))

    for path, content in resources.items():
        if not isinstance(path, str):
            raise ArgumentError(f"define_skill: a resource path is a string, not "
                                f"{type(path).__name__}", hint="name it like 'docs/guide.md'")
        if isinstance(content, str):
            try:
                data = content.encode("utf-8")
            except UnicodeEncodeError as err:
                refuse("encoding", path, f"its text cannot be written as UTF-8 (character "
                       f"{err.start}); pass bytes, or remove the lone surrogate")
                continue
        elif isinstance(content, bytes | bytearray | memoryview):
            data = bytes(content)
        else:
            raise ArgumentError(f"define_skill: resource {path!r} is text or bytes, not "
                                f"{type(content).__name__}", hint="pass str or bytes")
        why = _path_refusal(path)
        if why is not None:
            refuse(why[0], path, why[1])
            continue
        key = collision_key(path)
        if key in seen:
            if seen[key] == SKILL_MD:
                refuse("resource-reserved", path, "SKILL.md is written from the instructions; "
                       "it is not a resource")
            else:
                refuse("name-collision", path, collision_reason(seen[key], path))
            continue
        seen[key] = path
        if contains_private_key(data):
            refuse("secret", path, "it holds a private key; skillpack refuses to carry secrets")
            continue
        files.append(DefinedFile(path, data, path in executable))
    folders = {f.path.rsplit("/", 1)[0] for f in files if "/" in f.path}
    parents = {"/".join(p.split("/")[:i]) for p in folders for i in range(1, p.count("/") + 2)}
    for file in files:
        if file.path in parents:
            refuse("name-collision", file.path, "it is both a file and a folder of other "
                   "resources")
    for path in sorted(executable - {f.path for f in files}):
        if path not in resources:
            refuse("executable-unknown", path, "executable names a path that is not one of "
                   "the resources")
    return files


def _path_refusal(path: str) -> tuple[str, str] | None:
    """Why a resource path could not be a file the walk carries, as (code, why)."""
    problem = name_problem(path)
    if problem is not None:
        return "unportable-name", problem
    if unicodedata.normalize("NFC", path) != path:
        return "unportable-name", (f"it is not in Unicode NFC form; name it "
                                   f"{unicodedata.normalize('NFC', path)!r}")
    segments = path.split("/")
    for index, segment in enumerate(segments):
        rel = "/".join(segments[: index + 1])
        rule = left_out_rule(rel, segment, index < len(segments) - 1, None)
        if rule is not None:
            return "resource-left-out", f"a skill folder leaves it out ({rule}); rename it"
    reason = secret_name_reason(path)
    if reason is not None:
        return "secret", f"{reason}; skillpack refuses to carry secrets"
    return None


def define_skill(
    *, name: str, description: str, instructions: str,
    resources: Mapping[str, str | bytes] | None = None,
    allowed_tools: Iterable[str] | None = None, executable: Iterable[str] = (),
    license: str | None = None, compatibility: str | None = None,
) -> DefinedSkill:
    """A skill defined in code, checked by the rules of a SKILL.md (see the module).

    `resources` maps each file's path in the skill folder (``/``-separated) to its text
    (written as UTF-8) or bytes; `executable` names those written with mode 0755.
    `allowed_tools` lists the tool entries, one per item (``"Read"``, ``"Bash(git:*)"``);
    omit it for no restriction (an empty list is refused: it is ambiguous). Line ends of
    the instructions are written as LF, as a SKILL.md is read. Raises `SkillError` listing
    every problem, and `ArgumentError` for an argument of the wrong type.
    """
    name_text = _text_argument(name, "name") or ""
    description_text = _text_argument(description, "description") or ""
    body = (_text_argument(instructions, "instructions") or "").replace("\r\n", "\n")
    body = body.replace("\r", "\n")
    license_text = _text_argument(license, "license", optional=True)
    compatibility_text = _text_argument(compatibility, "compatibility", optional=True)
    if isinstance(executable, str):
        raise ArgumentError("define_skill: executable is a list of resource paths, not one "
                            "string", hint=f"pass [{executable!r}]")
    file = f"{name_text or '<unnamed>'}/{SKILL_MD}"
    problems: list[Problem] = []
    allowed = _allowed_entries(allowed_tools, problems, file)
    resource_files = _resource_files(resources, frozenset(executable), problems,
                                     name_text or "<unnamed>")
    text = _skill_md(name_text, description_text, body, license_text, compatibility_text,
                     allowed)
    skill: Skill | None = None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        problems.append(Problem("error", "encoding", f"the skill's text cannot be written as "
                                f"UTF-8 (a lone surrogate at character {err.start})", file))
    else:
        try:
            skill = parse_skill(text, file=file)
        except SkillError as err:
            problems.extend(err.problems or [Problem("error", "invalid", err.message, file)])
    if skill is not None:
        problems.extend(p for p in validate_skill(skill) if p.severity == "error")
    if problems or skill is None:
        first = problems[0].message if problems else "it is invalid"
        extra = len(problems) - 1
        more = f" (and {extra} more problem{'s' if extra > 1 else ''})" if extra else ""
        raise SkillError(f"skill {name_text!r} cannot be defined: {first}{more}", path=file,
                         problems=problems, hint="fix each problem listed, then define it again")
    skill_md = DefinedFile(SKILL_MD, text.encode("utf-8"))
    ordered = sorted(resource_files, key=lambda f: sort_key(f.path))
    return DefinedSkill(skill.name, text, skill, (skill_md, *ordered))


# -- a defined skill where a folder is expected ---------------------------------------------

@contextlib.contextmanager
def materialized(
    paths: Iterable[str | os.PathLike[str] | DefinedSkill],
) -> Iterator[tuple[list[str | os.PathLike[str]], dict[str, str]]]:
    """`paths`, with each defined skill written to a temporary folder (removed on exit), and
    what to call each such folder in a result: ``<defined skill NAME>``."""
    made: list[str] = []
    out: list[str | os.PathLike[str]] = []
    labels: dict[str, str] = {}
    try:
        for path in paths:
            if isinstance(path, DefinedSkill):
                root = tempfile.mkdtemp(prefix="skillpack-defined-")
                made.append(root)
                folder = str(path.write(root))
                labels[folder] = f"<defined skill {path.name}>"
                out.append(folder)
            else:
                out.append(path)
        yield out, labels
    finally:
        for root in made:
            remove_tree(root)
