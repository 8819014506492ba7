"""What changed since an approval, per skill, as a page an approver can sign from.

`compare` takes the approved skills (from the lock: `SkillView.from_lock_entry`, with the
approved text of files where it could be read: `SkillView.contents`) and the current ones
(plain data the caller derives from each skill: files, programs, tools, allowed-tools, what
SKILL.md runs at load or mentions, description, findings, and the bytes of the files that
differ from the approval) and says, per skill, whether it is unchanged, changed, new or gone,
and whether `verify` would refuse it; with each changed text file's line diff (SKILL.md
first, then scripts, then references), a new skill's text files in full, binary files by size
and digest, the programs, tools, run-at-load commands, mentions and allowed-tools added and
removed, every run template before and after, and the description.

Size bounds: a file's diff (or text) is cut after `MAX_SHOWN_LINES` lines or
`MAX_SHOWN_BYTES` bytes, and the page says how many lines and bytes were left out; a file
over `MAX_DIFF_INPUT_BYTES` or `MAX_DIFF_INPUT_LINES` on either side is not compared line by
line (the page says so), so the work is bounded whatever a skill carries.

`render_html` writes a static page: no script, no external resource, inline CSS only, a
Content-Security-Policy of ``default-src 'none'; style-src 'unsafe-inline'`` (nothing loads or
runs even if a value escaped its escaping), every value from a skill through `visible` (bidi
controls, zero-width and other invisible characters shown as ``\\u202e``) and then
`html.escape`. Digests are shown short, the full value one click away (``<details>``).
`render_markdown` writes the same content for a pull-request comment, every value made
`visible` and then with each ASCII punctuation character backslash-escaped (``<``, ``>`` and
``&`` as entities), so that nothing from a skill becomes markup, a link, a mention or a code
span; file text and diffs go in fenced code blocks whose fence is longer than any run of
backticks in them.
"""

from __future__ import annotations

import difflib
import html
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from skillpack.approve.lock import LockEntry

__all__ = [
    "CSP",
    "MAX_DIFF_INPUT_BYTES",
    "MAX_DIFF_INPUT_LINES",
    "MAX_SHOWN_BYTES",
    "MAX_SHOWN_LINES",
    "REFUSED",
    "FileChange",
    "SkillChange",
    "SkillView",
    "ToolChange",
    "compare",
    "md_escape",
    "render_html",
    "render_markdown",
    "visible",
]

Status = Literal["unchanged", "changed", "new", "gone"]
CSP = "default-src 'none'; style-src 'unsafe-inline'"
#: The digest a review shows for a skill whose files could not be read as a whole.
REFUSED = "refused: not verifiable"
#: A file's diff or text is cut after this many lines, or this many bytes, shown.
MAX_SHOWN_LINES = 400
MAX_SHOWN_BYTES = 64 * 1024
#: A file larger than this on either side is not compared line by line.
MAX_DIFF_INPUT_BYTES = 2 * 1024 * 1024
MAX_DIFF_INPUT_LINES = 20_000
_MD_ACTIVE = frozenset("!\"#$%'()*+,-./:;=?@[\\]^_`{|}~")
_MD_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
_SEVERITY = re.compile(r": (error|warning|info): \[")
#: Code points Unicode says to draw as nothing (beyond the Cf/Cc/Zl/Zp categories): the
#: Hangul fillers, Mongolian selectors, the combining grapheme joiner, variation selectors.
_IGNORABLE = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
              (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xE0100, 0xE01EF))
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})


def _hidden(ch: str) -> bool:
    point = ord(ch)
    if point < 0x80:
        return point < 0x20 or point == 0x7F
    return (unicodedata.category(ch) in _HIDDEN_CATEGORIES
            or any(lo <= point <= hi for lo, hi in _IGNORABLE))


def visible(text: str, *, keep: str = "") -> str:
    """``text`` with every invisible or direction-changing character (bidi controls such as
    U+202E, zero-width characters, other controls, variation selectors, unassigned code
    points) written as ``\\uXXXX`` (``\\U0010XXXX`` above the BMP), so that what a reader
    sees is what is there; characters in ``keep`` (e.g. a tab) are left alone."""
    if text.isascii() and text.isprintable():
        return text
    out = []
    for ch in text:
        if ch not in keep and _hidden(ch):
            point = ord(ch)
            out.append(f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}")
        else:
            out.append(ch)
    return "".join(out)


def severity_of(finding: str) -> str:
    """The severity a finding's text states (``error``, ``warning``, ``info``); a finding
    without one is a refusal's reason: ``error``."""
    found = _SEVERITY.search(finding)
    return found.group(1) if found else "error"


@dataclass(frozen=True, slots=True)
class SkillView:
    """One skill as a review sees it. ``files`` maps path to BLAKE3 and ``sizes`` path to
    size; ``tools`` maps a tool id to its argv template (None: not recorded, a format 1.0
    lock); ``allowed_tools`` is None when the skill declares none; ``mentions`` are what its
    SKILL.md runs at load or mentions (the lock's ``mentions``); ``findings`` are validation,
    secret and lint findings, as text; ``contents`` the bytes of the files the review shows
    (those that differ from the approval; for an approved view, the approved bytes read
    back and matched to the lock's BLAKE3); ``archive`` the SHA-256 of its ``.skill``
    archive (the lock's, or the one its lock would record: None when not known)."""

    name: str
    digest: str
    description: str = ""
    files: Mapping[str, str] = field(default_factory=dict)
    programs: tuple[str, ...] = ()
    tools: Mapping[str, tuple[str, ...]] | None = field(default_factory=dict)
    allowed_tools: tuple[str, ...] | None = None
    findings: tuple[str, ...] = ()
    sizes: Mapping[str, int] = field(default_factory=dict)
    mentions: tuple[Mapping[str, Any], ...] = ()
    contents: Mapping[str, bytes] = field(default_factory=dict)
    archive: str | None = None

    @property
    def refused(self) -> bool:
        """True when `verify` would refuse it: no digest, or an error among its findings."""
        return self.digest == REFUSED or any(severity_of(f) == "error" for f in self.findings)

    @classmethod
    def from_lock_entry(cls, name: str, entry: LockEntry,
                        findings: Iterable[str] = (),
                        contents: Mapping[str, bytes] | None = None) -> SkillView:
        """The skill a lock entry records: the approved one, or a current one through
        `LockEntry.for_skill` (with its secret and lint ``findings`` and the ``contents``
        of the files to show)."""
        return cls(
            name, entry.digest, entry.description, {r.path: r.blake3 for r in entry.files},
            tuple(sorted({str(p.get("name")) for p in entry.programs})),
            None if entry.tools is None else {t.id: t.run for t in entry.tools},
            entry.allowed_tools, tuple(findings), {r.path: r.size for r in entry.files},
            entry.mentions, dict(contents or {}), entry.archive)


@dataclass(frozen=True, slots=True)
class ToolChange:
    """One tool's run template before (None: not there) and after (None: gone)."""

    id: str
    before: tuple[str, ...] | None
    after: tuple[str, ...] | None

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file added, removed or changed, as the page shows it. ``lines`` are the shown
    lines of its diff (``+``/``-``/`` `` prefixed, ``@@`` hunk heads) or of its whole text
    (a new skill's file: every line ``+``), cut after the size bounds: ``cut_lines`` and
    ``cut_bytes`` say what was left out. ``added``/``removed`` count the lines of the whole
    diff (None: not compared line by line, ``note`` says why). ``binary``: shown by size and
    digest only."""

    path: str
    change: Literal["added", "removed", "changed"]
    digest_before: str | None
    digest_after: str | None
    size_before: int | None
    size_after: int | None
    binary: bool = False
    lines: tuple[str, ...] = ()
    added: int | None = None
    removed: int | None = None
    cut_lines: int = 0
    cut_bytes: int = 0
    note: str | None = None


@dataclass(frozen=True, slots=True)
class SkillChange:
    """What changed in one skill since its approval."""

    name: str
    status: Status
    digest_before: str | None
    digest_after: str | None
    files_added: tuple[str, ...] = ()
    files_removed: tuple[str, ...] = ()
    files_changed: tuple[str, ...] = ()
    programs_added: tuple[str, ...] = ()
    programs_removed: tuple[str, ...] = ()
    tools: tuple[ToolChange, ...] = ()
    tools_recorded: bool = True  # False: the approval (a 1.0 lock) did not record tools
    allowed_tools_before: tuple[str, ...] | None = None
    allowed_tools_after: tuple[str, ...] | None = None
    description_before: str | None = None
    description_after: str | None = None
    findings: tuple[str, ...] = ()
    refused: bool = False  # `verify` would refuse the current skill
    files: tuple[FileChange, ...] = ()
    #: what SKILL.md runs when the skill loads / mentions, as ``program (line N)`` words
    at_load_before: tuple[str, ...] = ()
    at_load_after: tuple[str, ...] = ()
    mentioned_before: tuple[str, ...] = ()
    mentioned_after: tuple[str, ...] = ()
    #: the SHA-256 of its ``.skill`` archive, approved and now (None: not known)
    archive_before: str | None = None
    archive_after: str | None = None

    @property
    def tools_added(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.tools if t.before is None and self.tools_recorded)

    @property
    def tools_removed(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.tools if t.after is None)

    @property
    def allowed_tools_added(self) -> tuple[str, ...]:
        before = set(self.allowed_tools_before or ())
        return tuple(a for a in self.allowed_tools_after or () if a not in before)

    @property
    def allowed_tools_removed(self) -> tuple[str, ...]:
        after = set(self.allowed_tools_after or ())
        return tuple(a for a in self.allowed_tools_before or () if a not in after)

    @property
    def at_load_added(self) -> tuple[str, ...]:
        return _programs_of(self.at_load_after, self.at_load_before)

    @property
    def at_load_removed(self) -> tuple[str, ...]:
        return _programs_of(self.at_load_before, self.at_load_after)

    @property
    def mentioned_added(self) -> tuple[str, ...]:
        return _programs_of(self.mentioned_after, self.mentioned_before)

    @property
    def mentioned_removed(self) -> tuple[str, ...]:
        return _programs_of(self.mentioned_before, self.mentioned_after)


def _programs_of(these: tuple[str, ...], other: tuple[str, ...]) -> tuple[str, ...]:
    """The program names of ``these`` (``curl (line 3)`` words) not named in ``other``."""
    gone = {w.split(" (line ", 1)[0] for w in other}
    return tuple(dict.fromkeys(n for n in (w.split(" (line ", 1)[0] for w in these)
                               if n not in gone))


def _mention_words(view: SkillView | None, kind: str) -> tuple[str, ...]:
    if view is None:
        return ()
    return tuple(f"{m.get('program')} (line {m.get('line')})" for m in view.mentions
                 if m.get("kind") == kind)


def compare(approved: Mapping[str, SkillView], current: Iterable[SkillView]
            ) -> tuple[SkillChange, ...]:
    """Each skill current (two of one name each shown, in their order) or approved and
    gone, sorted by name, with what changed."""
    now: dict[str, list[SkillView]] = {}
    for view in current:
        now.setdefault(view.name, []).append(view)
    return tuple(_change(name, approved.get(name), view)
                 for name in sorted(set(approved) | set(now))
                 for view in now.get(name, [None]))


def _same_record(before: SkillView, after: SkillView) -> bool:
    """Whether what the approval records beyond the files (programs and, where it records
    them, description, tools, allowed-tools, mentions, archive) is what the skill gives."""
    if before.programs != after.programs:
        return False
    if before.tools is None:  # a format 1.0 lock: programs only
        return True
    return (before.description == after.description and before.tools == after.tools
            and before.allowed_tools == after.allowed_tools
            and [dict(m) for m in before.mentions] == [dict(m) for m in after.mentions]
            and (before.archive is None or after.archive is None
                 or before.archive == after.archive))


def _change(name: str, before: SkillView | None, after: SkillView | None) -> SkillChange:
    mentions = {
        "at_load_before": _mention_words(before, "runs-at-load"),
        "at_load_after": _mention_words(after, "runs-at-load"),
        "mentioned_before": _mention_words(before, "mentioned"),
        "mentioned_after": _mention_words(after, "mentioned"),
    }
    refused = after is not None and after.refused
    if before is None or after is None:
        view = after or before
        assert view is not None
        tools = tuple(ToolChange(i, None if before is None else run,
                                 None if after is None else run)
                      for i, run in sorted((view.tools or {}).items()))
        files = sorted(view.files, key=_file_order)
        return SkillChange(
            name, "new" if before is None else "gone",
            None if before is None else before.digest, None if after is None else after.digest,
            files_added=tuple(sorted(after.files)) if after else (),
            files_removed=tuple(sorted(before.files)) if before else (),
            programs_added=after.programs if after else (),
            programs_removed=before.programs if before else (),
            tools=tools, tools_recorded=view.tools is not None,
            allowed_tools_before=before.allowed_tools if before else None,
            allowed_tools_after=after.allowed_tools if after else None,
            description_before=before.description if before else None,
            description_after=after.description if after else None,
            findings=after.findings if after else (), refused=refused,
            files=tuple(_file_change(p, "added", before, after) for p in files)
            if after else (),  # a gone skill: its files are listed, not shown
            archive_before=before.archive if before else None,
            archive_after=after.archive if after else None,
            **mentions)
    old_tools, new_tools = before.tools or {}, after.tools or {}
    tools = tuple(ToolChange(i, old_tools.get(i), new_tools.get(i))
                  for i in sorted(set(old_tools) | set(new_tools)))
    added = set(after.files) - set(before.files)
    removed = set(before.files) - set(after.files)
    changed = {p for p in set(before.files) & set(after.files)
               if before.files[p] != after.files[p]}
    unchanged = before.digest == after.digest and _same_record(before, after)
    return SkillChange(
        name, "unchanged" if unchanged else "changed",
        before.digest, after.digest,
        files_added=tuple(sorted(added)), files_removed=tuple(sorted(removed)),
        files_changed=tuple(sorted(changed)),
        programs_added=tuple(sorted(set(after.programs) - set(before.programs))),
        programs_removed=tuple(sorted(set(before.programs) - set(after.programs))),
        tools=tools, tools_recorded=before.tools is not None,
        allowed_tools_before=before.allowed_tools, allowed_tools_after=after.allowed_tools,
        description_before=before.description, description_after=after.description,
        findings=after.findings, refused=refused,
        files=() if unchanged else tuple(
            _file_change(p, "added" if p in added else "removed" if p in removed
                         else "changed", before, after)
            for p in sorted(added | removed | changed, key=_file_order)),
        archive_before=before.archive, archive_after=after.archive,
        **mentions)


def _file_order(path: str) -> tuple[int, bytes]:
    """SKILL.md first, then scripts, then references, then the rest, each by path."""
    top = path.split("/", 1)[0] if "/" in path else ""
    rank = (0 if path == "SKILL.md" else 1 if top == "scripts" else 2 if top == "references"
            else 3)
    return rank, path.encode("utf-8")


def _text_of(data: bytes | None) -> str | None:
    """The text of a file's bytes (None: binary). Bytes cut at `MAX_DIFF_INPUT_BYTES` + 1
    (a large file's head) may end inside a character: that partial character is dropped."""
    if data is None or b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        if len(data) > MAX_DIFF_INPUT_BYTES and err.start >= len(data) - 3 and (
                err.reason == "unexpected end of data"):
            return data[:err.start].decode("utf-8")
        return None


def _lines_of(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _file_change(path: str, change: Literal["added", "removed", "changed"],
                 before: SkillView | None, after: SkillView | None) -> FileChange:
    side_before = before if change != "added" else None
    side_after = after if change != "removed" else None
    digest_before = side_before.files.get(path) if side_before else None
    digest_after = side_after.files.get(path) if side_after else None
    size_before = side_before.sizes.get(path) if side_before else None
    size_after = side_after.sizes.get(path) if side_after else None
    raw_before = side_before.contents.get(path) if side_before else None
    raw_after = side_after.contents.get(path) if side_after else None
    text_before, text_after = _text_of(raw_before), _text_of(raw_after)
    base = FileChange(path, change, digest_before, digest_after, size_before, size_after)
    if (raw_before is not None and text_before is None) or (
            raw_after is not None and text_after is None):
        return _with(base, binary=True)
    if digest_after == "refused":
        return _with(base, note="refused: its content is not shown")
    missing_after = side_after is not None and raw_after is None
    missing_before = side_before is not None and raw_before is None
    if missing_after or (missing_before and side_after is None):
        return _with(base, note="its text is not at hand: shown by size and digest")
    if change == "changed" and missing_before:
        note = ("the approved text is not at hand (a lock records digests, not text): pass "
                "--base with the approved skills to see the line diff; its text now:")
        assert text_after is not None
        return _cut(base, [" " + line for line in _lines_of(text_after)], None, None, note)
    old = _lines_of(text_before) if text_before is not None else []
    new = _lines_of(text_after) if text_after is not None else []
    too_big = max(len(raw_before or b""), len(raw_after or b"")) > MAX_DIFF_INPUT_BYTES or (
        max(len(old), len(new)) > MAX_DIFF_INPUT_LINES)
    if too_big and change == "changed":
        return _with(base, note=f"over {MAX_DIFF_INPUT_BYTES // (1024 * 1024)} MiB or "
                     f"{MAX_DIFF_INPUT_LINES:,} lines: not compared line by line")
    if change != "changed":  # a whole file, added or removed
        sign = "+" if change == "added" else "-"
        whole = [sign + line for line in (new or old)]
        if too_big:
            return _cut(base, whole, None, None, f"over {MAX_DIFF_INPUT_BYTES // 1048576} "
                        f"MiB or {MAX_DIFF_INPUT_LINES:,} lines: only its first lines")
        return _cut(base, whole, len(new), len(old), None)
    diff = list(difflib.unified_diff(old, new, lineterm="", n=3))[2:]
    added = sum(1 for line in diff if line.startswith("+"))
    removed = sum(1 for line in diff if line.startswith("-"))
    return _cut(base, diff, added, removed, None)


def _with(base: FileChange, **changes: Any) -> FileChange:
    fields = {f: getattr(base, f) for f in FileChange.__dataclass_fields__}
    fields.update(changes)
    return FileChange(**fields)


def _cut(base: FileChange, lines: list[str], added: int | None, removed: int | None,
         note: str | None) -> FileChange:
    shown: list[str] = []
    used = 0
    for at, line in enumerate(lines):
        size = len(line.encode("utf-8", "surrogatepass")) + 1
        if at >= MAX_SHOWN_LINES or used + size > MAX_SHOWN_BYTES:
            rest = lines[at:]
            return _with(base, lines=tuple(shown), added=added, removed=removed, note=note,
                         cut_lines=len(rest),
                         cut_bytes=sum(len(r.encode("utf-8", "surrogatepass")) + 1
                                       for r in rest))
        shown.append(line)
        used += size
    return _with(base, lines=tuple(shown), added=added, removed=removed, note=note)


def _short(digest: str) -> str:
    """A digest cut to 12 hex digits (after its ``blake3:`` prefix, if any)."""
    prefix, _, value = digest.rpartition(":")
    if not re.fullmatch(r"[0-9a-f]{13,}", value):
        return digest
    return f"{prefix}:{value[:12]}…" if prefix else f"{value[:12]}…"


def _counts(changes: list[SkillChange]) -> dict[str, int]:
    counts = {s: sum(1 for c in changes if c.status == s)
              for s in ("changed", "new", "gone", "unchanged")}
    counts["refused"] = sum(1 for c in changes if c.refused)
    return counts


def _summary(changes: list[SkillChange]) -> str:
    return ", ".join(f"{n} {s}" for s, n in _counts(changes).items())


def _attention(change: SkillChange) -> tuple[int, int, str]:
    """Sections in the order an approver acts on them: refused, changed, new, gone, then
    unchanged."""
    return (0 if change.refused else 1,
            ("changed", "new", "gone", "unchanged").index(change.status), change.name)


def _file_heading(f: FileChange) -> str:
    """``added``/``removed``/``changed``, with the lines counted, as plain words."""
    counts = []
    if f.added is not None:
        counts.append(f"+{f.added}")
    if f.removed is not None:
        counts.append(f"-{f.removed}")
    size = f.size_after if f.size_after is not None else f.size_before
    words = f"{f.change}, {', '.join(counts)} lines" if counts else f.change
    return f"{words}; {size:,} bytes" if size is not None else words


def _cut_words(f: FileChange) -> str:
    return (f"… {f.cut_lines:,} more line(s) ({f.cut_bytes:,} bytes) not shown: the first "
            f"{MAX_SHOWN_LINES:,} lines or {MAX_SHOWN_BYTES // 1024} KiB are")


# -- HTML ---------------------------------------------------------------------------------------

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #1b1b1b;
       padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
h2 { font-size: 1.25em; margin: 1.6em 0 .4em; padding-top: .6em; border-top: 1px solid #ccc; }
h3 { font-size: 1em; margin: 1em 0 .3em; }
h4 { font-size: .95em; margin: .8em 0 .2em; font-weight: 600; }
table { border-collapse: collapse; margin: .3em 0 .8em; width: 100%; }
th, td { border: 1px solid #d0d0d0; padding: .25em .5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
code { font: 13px/1.4 ui-monospace, monospace; background: #f4f4f4; padding: 0 .2em;
       white-space: pre-wrap; word-break: break-all; }
pre.diff { font: 13px/1.35 ui-monospace, monospace; background: #fafafa; border: 1px solid #ddd;
           padding: .4em 0; margin: .2em 0 .6em; overflow-x: auto; white-space: pre-wrap;
           word-break: break-all; }
pre.diff span { display: block; padding: 0 .6em; }
pre.diff .add { background: #e6ffec; color: #0f4d1f; }
pre.diff .del { background: #ffebe9; color: #7d1a12; }
pre.diff .hunk { background: #eef3fb; color: #44608c; }
pre.diff .cut { background: #fff8c5; color: #5c4a00; font-style: italic; }
.esc { color: #b3006b; font-weight: 600; }
.status { font-weight: 600; padding: .1em .5em; border-radius: .3em; font-size: .85em; }
.unchanged { background: #e6f4ea; color: #17532b; }
.changed { background: #fff4d6; color: #6b4b00; }
.new { background: #e3ecff; color: #1c3c8c; }
.gone { background: #ececec; color: #444; }
.refused { background: #b42318; color: #fff; }
section.refused-skill { border-left: 4px solid #b42318; padding-left: .8em; }
.before { background: #fdeeee; }
.after { background: #eaf6ec; }
.severity-error { color: #b42318; font-weight: 600; }
.severity-warning { color: #8a5a00; }
.severity-info { color: #555; }
.badge { font-size: .8em; font-weight: 600; padding: 0 .35em; border-radius: .25em;
         margin-right: .4em; text-transform: uppercase; }
.badge.error { background: #b42318; color: #fff; }
.badge.warning { background: #ffd479; color: #5c3b00; }
.badge.info { background: #e4e4e4; color: #333; }
.at-load { color: #b42318; font-weight: 600; }
.muted { color: #666; }
details.digest { display: inline; }
details.digest summary { display: inline; cursor: pointer; list-style: none; }
details.digest[open] summary { display: none; }
table.kv th { width: 10em; }
td.id code { word-break: normal; white-space: nowrap; }
"""

_ESCAPED = re.compile(r"\\u[0-9a-f]{4}|\\U[0-9a-f]{8}")


def _e(text: str) -> str:
    """A value from a skill as HTML text: invisible characters made visible (and marked),
    then escaped."""
    shown = visible(text, keep="\t\n")
    if shown is text:
        return html.escape(text, quote=True)
    # mark each \\uXXXX this function wrote (a backslash-u the text had is escaped the same)
    out, at = [], 0
    for found in _ESCAPED.finditer(shown):
        out.append(html.escape(shown[at:found.start()], quote=True))
        out.append(f'<span class="esc">{found.group()}</span>')
        at = found.end()
    out.append(html.escape(shown[at:], quote=True))
    return "".join(out)


def _words_html(words: tuple[str, ...] | None) -> str:
    if words is None:
        return '<span class="muted">none</span>'
    return " ".join(f"<code>{_e(w)}</code>" for w in words)


def _list_html(items: Iterable[str], cls: str = "") -> str:
    items = list(items)
    if not items:
        return '<span class="muted">none</span>'
    attr = f' class="{cls}"' if cls else ""
    return ", ".join(f"<code{attr}>{_e(i)}</code>" for i in items)


def _allowed(value: tuple[str, ...] | None) -> str:
    return '<span class="muted">not declared</span>' if value is None else _list_html(value)


def _digest_html(value: str | None) -> str:
    """A digest short, the whole of it one click away (and in the page's text)."""
    if value is None:
        return '<span class="muted">none</span>'
    short = _short(value)
    if short == value:
        return f"<code>{_e(value)}</code>"
    return (f'<details class="digest"><summary><code>{_e(short)}</code></summary>'
            f"<code>{_e(value)}</code></details>")


def render_html(changes: Iterable[SkillChange], *, title: str = "skillpack review",
                lock: str = "skills.lock") -> str:
    """The review as a static HTML page (no script, no external resource)."""
    changes = list(changes)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_e(CSP)}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="muted">Compared with the approval in <code>{_e(lock)}</code>: '
        f"{_e(_summary(changes))}. Digests are shown short: click one for the whole "
        "value.</p>",
        "<table><tr><th>skill</th><th>status</th><th>approved digest</th>"
        "<th>current digest</th></tr>",
    ]
    for c in changes:
        out.append(f"<tr><td>{_e(c.name)}</td><td>{_badges(c)}</td>"
                   f"<td>{_digest_html(c.digest_before)}</td>"
                   f"<td>{_digest_html(c.digest_after)}</td></tr>")
    out.append("</table>")
    for c in sorted(changes, key=_attention):
        out.extend(_skill_html(c))
    out += ["</body>", "</html>", ""]
    return "\n".join(out)


def _badges(c: SkillChange) -> str:
    badge = f'<span class="status {c.status}">{c.status}</span>'
    if c.refused:
        badge = '<span class="status refused">refused</span> ' + badge
    return badge


def _findings_html(findings: tuple[str, ...]) -> list[str]:
    out = ["<h3>Findings</h3><ul>"]
    for f in findings:
        level = severity_of(f)
        out.append(f'<li class="severity-{level}"><span class="badge {level}">{level}</span>'
                   f"{_e(f)}</li>")
    out.append("</ul>")
    return out


def _skill_html(c: SkillChange) -> list[str]:
    out = [f'<section class="{"refused-skill" if c.refused else "skill"}">',
           f"<h2>{_e(c.name)} {_badges(c)}</h2>"]
    if c.refused:
        out.append('<p class="severity-error">Refused: <code>skillpack verify</code> would '
                   "not accept this skill; its problems are below.</p>")
    if c.findings:
        out.extend(_findings_html(c.findings))
    if c.status == "unchanged":
        out.append('<p class="muted">Same digest as approved: same files, programs and '
                   "tools.</p></section>")
        return out
    out.append('<h3>Description</h3><table class="kv">')
    if c.description_before == c.description_after:
        out.append(f"<tr><th>same</th><td>{_e(c.description_after or '')}</td></tr>")
    else:
        if c.description_before is not None:
            out.append(f'<tr class="before"><th>before</th><td>{_e(c.description_before)}'
                       "</td></tr>")
        if c.description_after is not None:
            out.append(f'<tr class="after"><th>after</th><td>{_e(c.description_after)}'
                       "</td></tr>")
    out.append("</table>")
    out.append("<h3>Programs</h3>")
    at_load = c.at_load_before or c.at_load_after
    mentioned = c.mentioned_before or c.mentioned_after
    out += _rows([
        ("after", "added", c.programs_added, ""),
        ("before", "removed", c.programs_removed, ""),
        ("after", "runs at load, added", c.at_load_added, "at-load"),
        ("before", "runs at load, removed", c.at_load_removed, ""),
        ("", "runs at load, before", c.at_load_before if at_load else None, ""),
        ("", "runs at load, now", c.at_load_after if at_load else None, "at-load"),
        ("after", "mentioned, added", c.mentioned_added, ""),
        ("before", "mentioned, removed", c.mentioned_removed, ""),
        ("", "mentioned, before", c.mentioned_before if mentioned else None, ""),
        ("", "mentioned, now", c.mentioned_after if mentioned else None, ""),
    ], "no program added or removed; SKILL.md runs and mentions none")
    out.append("<h3>Tools and their run templates</h3>")
    if not c.tools_recorded:
        out.append('<p class="muted">The approval (a format 1.0 lock) did not record tools.</p>')
    out += _rows([("after", "added", c.tools_added, ""),
                  ("before", "removed", c.tools_removed, "")], "")
    out.append("<table><tr><th>tool</th><th>change</th><th>run before</th><th>run after</th>"
               "</tr>")
    for t in c.tools:
        change = ("added" if t.before is None else "removed" if t.after is None
                  else "changed" if t.changed else "same")
        before, after = (' class="before"', ' class="after"') if t.changed else ("", "")
        out.append(f'<tr><td class="id"><code>{_e(t.id)}</code></td><td>{change}</td>'
                   f"<td{before}>{_words_html(t.before)}</td>"
                   f"<td{after}>{_words_html(t.after)}</td></tr>")
    if not c.tools:
        out.append('<tr><td colspan="4" class="muted">no tools</td></tr>')
    out.append("</table>")
    out.append("<h3>allowed-tools</h3>")
    out += _rows([("after", "added", c.allowed_tools_added, ""),
                  ("before", "removed", c.allowed_tools_removed, "")], "")
    out.append(f'<table class="kv"><tr><th>before</th><td>{_allowed(c.allowed_tools_before)}'
               f"</td></tr><tr><th>now</th><td>{_allowed(c.allowed_tools_after)}</td></tr>"
               "</table>")
    if c.archive_before != c.archive_after and None not in (c.archive_before,
                                                             c.archive_after):
        out.append(f'<h3>Archive (SHA-256)</h3><table class="kv"><tr class="before"><th>'
                   f"before</th><td>{_digest_html(c.archive_before)}</td></tr>"
                   f'<tr class="after"><th>now</th><td>{_digest_html(c.archive_after)}</td>'
                   "</tr></table>")
    out.append("<h3>Files</h3>")
    out += _rows([("after", "added", c.files_added, ""),
                  ("before", "removed", c.files_removed, ""),
                  ("", "changed", c.files_changed, "")], "no file added, removed or changed")
    for f in c.files:
        out.extend(_file_html(f))
    out.append("</section>")
    return out


def _rows(rows: list[tuple[str, str, tuple[str, ...] | None, str]], empty: str) -> list[str]:
    """A two-column table of the rows that list something (``(row class, heading, items,
    item class)``; items None: never shown, empty: shown only beside another row); ``empty``
    when none does."""
    if not any(items for _, _, items, _ in rows):
        return [f'<p class="muted">{empty}</p>'] if empty else []
    shown = [(row, head, items, cls) for row, head, items, cls in rows if items is not None
             and (items or not row)]
    if not shown:
        return [f'<p class="muted">{empty}</p>'] if empty else []
    out = ['<table class="kv">']
    for row, head, items, cls in shown:
        attr = f' class="{row}"' if row else ""
        out.append(f"<tr{attr}><th>{head}</th><td>{_list_html(items, cls)}</td></tr>")
    out.append("</table>")
    return out


def _file_html(f: FileChange) -> list[str]:
    out = [f"<h4><code>{_e(f.path)}</code> "
           f'<span class="muted">{_e(_file_heading(f))}</span></h4>']
    if f.binary or (f.note is not None and not f.lines):
        what = "binary: shown by size and digest" if f.binary else f.note or ""
        out.append(f'<p class="muted">{_e(what)}</p><table class="kv">')
        if f.change != "added":
            out.append(f'<tr class="before"><th>before</th><td>{_size(f.size_before)} '
                       f"{_digest_html(f.digest_before)}</td></tr>")
        if f.change != "removed":
            out.append(f'<tr class="after"><th>after</th><td>{_size(f.size_after)} '
                       f"{_digest_html(f.digest_after)}</td></tr>")
        out.append("</table>")
        return out
    if f.note is not None:
        out.append(f'<p class="muted">{_e(f.note)}</p>')
    body = []
    for line in f.lines:
        cls = ("hunk" if line.startswith("@@") else "add" if line.startswith("+")
               else "del" if line.startswith("-") else "ctx")
        body.append(f'<span class="{cls}">{_e(line) or " "}</span>')
    if f.cut_lines:
        body.append(f'<span class="cut">{_e(_cut_words(f))}</span>')
    out.append('<pre class="diff">' + "".join(body) + "</pre>")
    return out


def _size(value: int | None) -> str:
    return '<span class="muted">none</span>' if value is None else f"{value:,} bytes"


# -- Markdown -----------------------------------------------------------------------------------

def md_escape(text: str) -> str:
    """``text`` as inert Markdown: invisible characters made visible (`visible`), ASCII
    punctuation backslash-escaped, ``<>&`` as entities, line breaks as spaces (a value never
    starts a block or leaves a table cell)."""
    out = []
    for ch in visible(text, keep="\r\n\t\v\f"):
        if ch in _MD_ENTITIES:
            out.append(_MD_ENTITIES[ch])
        elif ch in _MD_ACTIVE:
            out.append("\\" + ch)
        elif ch in "\r\n\t\v\f":
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def _md_list(items: Iterable[str] | None, empty: str = "none") -> str:
    if items is None:
        return "*not declared*"
    items = [md_escape(i) for i in items]
    return ", ".join(items) if items else f"*{empty}*"


def _md_words(words: tuple[str, ...] | None) -> str:
    return "*none*" if words is None else " ".join(md_escape(w) for w in words) or "*empty*"


def _md_digest(value: str | None) -> str:
    return "*none*" if value is None else md_escape(value)


def _md_fence(lines: list[str]) -> list[str]:
    """Lines in a fenced ``diff`` block no line of theirs can close: the fence is longer
    than any run of backticks in them."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + "diff", *lines, fence]


def render_markdown(changes: Iterable[SkillChange], *, title: str = "skillpack review",
                    lock: str = "skills.lock") -> str:
    """The review as Markdown, for a pull-request comment: the same content as the HTML."""
    changes = list(changes)
    out = [f"## {md_escape(title)}", "",
           f"Compared with the approval in {md_escape(lock)}: {_summary(changes)}.", "",
           "| skill | status | approved digest | current digest |", "|---|---|---|---|"]
    out += [f"| {md_escape(c.name)} | {'**REFUSED** ' if c.refused else ''}**{c.status}** | "
            f"{md_escape(_short(c.digest_before)) if c.digest_before else '*none*'} | "
            f"{md_escape(_short(c.digest_after)) if c.digest_after else '*none*'} |"
            for c in changes]
    for c in sorted(changes, key=_attention):
        refused = " **REFUSED**" if c.refused else ""
        out += ["", f"### {md_escape(c.name)}: {c.status}{refused}", ""]
        if c.refused:
            out += ["**Refused**: skillpack verify would not accept this skill.", ""]
        out.append(f"- approved digest: {_md_digest(c.digest_before)}")
        out.append(f"- current digest: {_md_digest(c.digest_after)}")
        for finding in c.findings:
            level = severity_of(finding)
            mark = f"**{level.upper()}**" if level == "error" else f"*{level}*"
            out.append(f"- {mark}: {md_escape(finding)}")
        if c.status == "unchanged":
            if not c.findings:
                out.append("- Same digest as approved.")
            continue
        if c.description_before != c.description_after:
            if c.description_before is not None:
                out.append(f"- description before: {md_escape(c.description_before)}")
            if c.description_after is not None:
                out.append(f"- description after: {md_escape(c.description_after)}")
        out.append(f"- programs added: {_md_list(c.programs_added)}")
        out.append(f"- programs removed: {_md_list(c.programs_removed)}")
        out.append(f"- runs at load, added: {_md_list(c.at_load_added)}")
        out.append(f"- runs at load, removed: {_md_list(c.at_load_removed)}")
        out.append(f"- runs at load, before: {_md_list(c.at_load_before)}")
        out.append(f"- runs at load, after: {_md_list(c.at_load_after)}")
        out.append(f"- mentioned, added: {_md_list(c.mentioned_added)}")
        out.append(f"- mentioned, removed: {_md_list(c.mentioned_removed)}")
        out.append(f"- mentioned, before: {_md_list(c.mentioned_before)}")
        out.append(f"- mentioned, after: {_md_list(c.mentioned_after)}")
        out.append(f"- tools added: {_md_list(c.tools_added)}")
        out.append(f"- tools removed: {_md_list(c.tools_removed)}")
        out.append(f"- allowed-tools added: {_md_list(c.allowed_tools_added)}")
        out.append(f"- allowed-tools removed: {_md_list(c.allowed_tools_removed)}")
        if c.allowed_tools_before != c.allowed_tools_after:
            out.append(f"- allowed-tools before: {_md_list(c.allowed_tools_before)}")
            out.append(f"- allowed-tools after: {_md_list(c.allowed_tools_after)}")
        if c.archive_before != c.archive_after and None not in (c.archive_before,
                                                                 c.archive_after):
            out.append(f"- archive before: {_md_digest(c.archive_before)}")
            out.append(f"- archive after: {_md_digest(c.archive_after)}")
        out.append(f"- files added: {_md_list(c.files_added)}")
        out.append(f"- files removed: {_md_list(c.files_removed)}")
        out.append(f"- files changed: {_md_list(c.files_changed)}")
        if not c.tools_recorded:
            out.append("- tools: the approval (a format 1.0 lock) did not record them")
        if c.tools:
            out += ["", "| tool | change | run before | run after |", "|---|---|---|---|"]
            for t in c.tools:
                change = ("added" if t.before is None else "removed" if t.after is None
                          else "**changed**" if t.changed else "same")
                out.append(f"| {md_escape(t.id)} | {change} | {_md_words(t.before)} | "
                           f"{_md_words(t.after)} |")
        for f in c.files:
            out += ["", f"#### {md_escape(f.path)}: {md_escape(_file_heading(f))}", ""]
            if f.binary or (f.note is not None and not f.lines):
                what = ("binary: shown by size and digest" if f.binary
                        else f"*{md_escape(f.note or '')}*")
                out.append(f"- {what}")
                if f.change != "added":
                    out.append(f"- before: {f.size_before or 0:,} bytes, "
                               f"{_md_digest(f.digest_before)}")
                if f.change != "removed":
                    out.append(f"- after: {f.size_after or 0:,} bytes, "
                               f"{_md_digest(f.digest_after)}")
                continue
            if f.note is not None:
                out += [f"*{md_escape(f.note)}*", ""]
            shown = [visible(line, keep="\t") for line in f.lines]
            if f.cut_lines:
                shown.append(_cut_words(f))
            out += _md_fence(shown)
    return "\n".join(out) + "\n"
