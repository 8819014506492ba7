"""What changed since an approval, per skill, as a page an approver reads.

`compare` takes the approved skills (from the lock: `SkillView.from_lock_entry`) and the current
ones (plain data the caller derives from each skill: files, programs, tools, allowed-tools,
description, secret and lint findings) and says, per skill, whether it is unchanged, changed,
new or gone, with the files added, removed and changed, the programs and tools added and
removed, every run template before and after, allowed-tools and the description.

`render_html` writes a static page: no script, no external resource, inline CSS only, a
Content-Security-Policy of ``default-src 'none'; style-src 'unsafe-inline'`` (nothing loads or
runs even if a value escaped its escaping), every value from a skill through `html.escape`.
`render_markdown` writes the same for a pull-request comment, every value with each ASCII
punctuation character backslash-escaped (``<``, ``>`` and ``&`` as entities), so that nothing
from a skill becomes markup, a link, a mention or a code span.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from skillpack.approve.lock import LockEntry

__all__ = [
    "CSP",
    "SkillChange",
    "SkillView",
    "ToolChange",
    "compare",
    "md_escape",
    "render_html",
    "render_markdown",
]

Status = Literal["unchanged", "changed", "new", "gone"]
CSP = "default-src 'none'; style-src 'unsafe-inline'"
_MD_ACTIVE = frozenset("!\"#$%'()*+,-./:;=?@[\\]^_`{|}~")
_MD_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


@dataclass(frozen=True, slots=True)
class SkillView:
    """One skill as a review sees it. ``files`` maps path to BLAKE3; ``tools`` maps a tool id
    to its argv template (None: not recorded, a format 1.0 lock); ``allowed_tools`` is None
    when the skill declares none; ``findings`` are secret and lint findings, as text."""

    name: str
    digest: str
    description: str = ""
    files: Mapping[str, str] = field(default_factory=dict)
    programs: tuple[str, ...] = ()
    tools: Mapping[str, tuple[str, ...]] | None = field(default_factory=dict)
    allowed_tools: tuple[str, ...] | None = None
    findings: tuple[str, ...] = ()

    @classmethod
    def from_lock_entry(cls, name: str, entry: LockEntry,
                        findings: Iterable[str] = ()) -> SkillView:
        """The skill a lock entry records: the approved one, or a current one through
        `LockEntry.for_skill` (with its secret and lint ``findings``)."""
        return cls(
            name, entry.digest, entry.description, {r.path: r.blake3 for r in entry.files},
            tuple(sorted({str(p.get("name")) for p in entry.programs})),
            None if entry.tools is None else {t.id: t.run for t in entry.tools},
            entry.allowed_tools, tuple(findings))


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

    @property
    def tools_added(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.tools if t.before is None and self.tools_recorded)

    @property
    def tools_removed(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.tools if t.after is None)


def compare(approved: Mapping[str, SkillView], current: Iterable[SkillView]
            ) -> tuple[SkillChange, ...]:
    """Each skill approved or current, sorted by name, with what changed."""
    now = {view.name: view for view in current}
    return tuple(_change(name, approved.get(name), now.get(name))
                 for name in sorted(set(approved) | set(now)))


def _change(name: str, before: SkillView | None, after: SkillView | None) -> SkillChange:
    if before is None or after is None:
        view = after or before
        assert view is not None
        tools = tuple(ToolChange(i, None if before is None else run,
                                 None if after is None else run)
                      for i, run in sorted((view.tools or {}).items()))
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
            findings=after.findings if after else ())
    old_tools, new_tools = before.tools or {}, after.tools or {}
    tools = tuple(ToolChange(i, old_tools.get(i), new_tools.get(i))
                  for i in sorted(set(old_tools) | set(new_tools)))
    return SkillChange(
        name, "unchanged" if before.digest == after.digest else "changed",
        before.digest, after.digest,
        files_added=tuple(sorted(set(after.files) - set(before.files))),
        files_removed=tuple(sorted(set(before.files) - set(after.files))),
        files_changed=tuple(sorted(p for p in set(before.files) & set(after.files)
                                   if before.files[p] != after.files[p])),
        programs_added=tuple(sorted(set(after.programs) - set(before.programs))),
        programs_removed=tuple(sorted(set(before.programs) - set(after.programs))),
        tools=tools, tools_recorded=before.tools is not None,
        allowed_tools_before=before.allowed_tools, allowed_tools_after=after.allowed_tools,
        description_before=before.description, description_after=after.description,
        findings=after.findings)


# -- HTML ---------------------------------------------------------------------------------------

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #1b1b1b;
       padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
h2 { font-size: 1.25em; margin: 1.6em 0 .4em; padding-top: .6em; border-top: 1px solid #ccc; }
h3 { font-size: 1em; margin: 1em 0 .3em; }
table { border-collapse: collapse; margin: .3em 0 .8em; width: 100%; }
th, td { border: 1px solid #d0d0d0; padding: .25em .5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
code { font: 13px/1.4 ui-monospace, monospace; background: #f4f4f4; padding: 0 .2em;
       white-space: pre-wrap; word-break: break-all; }
.status { font-weight: 600; padding: .1em .5em; border-radius: .3em; font-size: .85em; }
.unchanged { background: #e6f4ea; color: #17532b; }
.changed { background: #fff4d6; color: #6b4b00; }
.new { background: #e3ecff; color: #1c3c8c; }
.gone { background: #fde7e7; color: #8a1c1c; }
.before { background: #fdeeee; }
.after { background: #eaf6ec; }
.finding { color: #8a1c1c; }
.muted { color: #666; }
table.kv th { width: 8em; }
td.id code { word-break: normal; white-space: nowrap; }
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _words_html(words: tuple[str, ...] | None) -> str:
    if words is None:
        return '<span class="muted">none</span>'
    return " ".join(f"<code>{_e(w)}</code>" for w in words)


def _list_html(items: Iterable[str]) -> str:
    items = list(items)
    if not items:
        return '<span class="muted">none</span>'
    return ", ".join(f"<code>{_e(i)}</code>" for i in items)


def _allowed(value: tuple[str, ...] | None) -> str:
    return '<span class="muted">not declared</span>' if value is None else _list_html(value)


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
        f"{_e(_summary(changes))}.</p>",
        "<table><tr><th>skill</th><th>status</th><th>approved digest</th>"
        "<th>current digest</th></tr>",
    ]
    for c in changes:
        out.append(f"<tr><td>{_e(c.name)}</td><td><span class=\"status {c.status}\">"
                   f"{c.status}</span></td><td>{_code_or_none(c.digest_before)}</td>"
                   f"<td>{_code_or_none(c.digest_after)}</td></tr>")
    out.append("</table>")
    for c in sorted(changes, key=_attention):
        out.extend(_skill_html(c))
    out += ["</body>", "</html>", ""]
    return "\n".join(out)


def _code_or_none(value: str | None) -> str:
    return '<span class="muted">none</span>' if value is None else f"<code>{_e(value)}</code>"


def _skill_html(c: SkillChange) -> list[str]:
    out = [f'<h2>{_e(c.name)} <span class="status {c.status}">{c.status}</span></h2>']
    if c.findings:
        out.append("<h3>Findings</h3><ul>")
        out += [f'<li class="finding">{_e(f)}</li>' for f in c.findings]
        out.append("</ul>")
    if c.status == "unchanged":
        out.append('<p class="muted">Same digest as approved: same files, programs and '
                   "tools.</p>")
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
    out.append('<h3>Files</h3><table class="kv">')
    out.append(f'<tr class="after"><th>added</th><td>{_list_html(c.files_added)}</td></tr>')
    out.append(f'<tr class="before"><th>removed</th><td>{_list_html(c.files_removed)}</td></tr>')
    out.append(f"<tr><th>changed</th><td>{_list_html(c.files_changed)}</td></tr></table>")
    out.append('<h3>Programs</h3><table class="kv">')
    out.append(f'<tr class="after"><th>added</th><td>{_list_html(c.programs_added)}</td></tr>')
    out.append(f'<tr class="before"><th>removed</th><td>{_list_html(c.programs_removed)}'
               "</td></tr></table>")
    out.append("<h3>Tools and their run templates</h3>")
    if not c.tools_recorded:
        out.append('<p class="muted">The approval (a format 1.0 lock) did not record tools.</p>')
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
    out.append('<h3>allowed-tools</h3><table class="kv">')
    out.append(f'<tr class="before"><th>before</th><td>{_allowed(c.allowed_tools_before)}'
               "</td></tr>")
    out.append(f'<tr class="after"><th>after</th><td>{_allowed(c.allowed_tools_after)}'
               "</td></tr></table>")
    return out


def _attention(change: SkillChange) -> tuple[int, str]:
    """Sections in the order an approver acts on them: changed, new, gone, then unchanged."""
    return ("changed", "new", "gone", "unchanged").index(change.status), change.name


def _summary(changes: list[SkillChange]) -> str:
    counts = {s: sum(1 for c in changes if c.status == s)
              for s in ("changed", "new", "gone", "unchanged")}
    return ", ".join(f"{n} {s}" for s, n in counts.items())


# -- Markdown -----------------------------------------------------------------------------------

def md_escape(text: str) -> str:
    """``text`` as inert Markdown: ASCII punctuation backslash-escaped, ``<>&`` as entities,
    line breaks as spaces (a value never starts a block or leaves a table cell)."""
    out = []
    for ch in text:
        if ch in _MD_ENTITIES:
            out.append(_MD_ENTITIES[ch])
        elif ch in _MD_ACTIVE:
            out.append("\\" + ch)
        elif ch in "\r\n\t\v\f\u2028\u2029\x85":
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


def render_markdown(changes: Iterable[SkillChange], *, title: str = "skillpack review",
                    lock: str = "skills.lock") -> str:
    """The review as Markdown, for a pull-request comment."""
    changes = list(changes)
    out = [f"## {md_escape(title)}", "",
           f"Compared with the approval in {md_escape(lock)}: {_summary(changes)}.", "",
           "| skill | status |", "|---|---|"]
    out += [f"| {md_escape(c.name)} | **{c.status}** |" for c in changes]
    for c in sorted(changes, key=_attention):
        out += ["", f"### {md_escape(c.name)}: {c.status}", ""]
        out += [f"- finding: {md_escape(f)}" for f in c.findings]
        if c.status == "unchanged":
            if not c.findings:
                out.append("Same digest as approved.")
            continue
        if c.description_before != c.description_after:
            if c.description_before is not None:
                out.append(f"- description before: {md_escape(c.description_before)}")
            if c.description_after is not None:
                out.append(f"- description after: {md_escape(c.description_after)}")
        out.append(f"- files added: {_md_list(c.files_added)}")
        out.append(f"- files removed: {_md_list(c.files_removed)}")
        out.append(f"- files changed: {_md_list(c.files_changed)}")
        out.append(f"- programs added: {_md_list(c.programs_added)}")
        out.append(f"- programs removed: {_md_list(c.programs_removed)}")
        if c.allowed_tools_before != c.allowed_tools_after:
            out.append(f"- allowed-tools before: {_md_list(c.allowed_tools_before)}")
            out.append(f"- allowed-tools after: {_md_list(c.allowed_tools_after)}")
        if not c.tools_recorded:
            out.append("- tools: the approval (a format 1.0 lock) did not record them")
        if c.tools:
            out += ["", "| tool | change | run before | run after |", "|---|---|---|---|"]
            for t in c.tools:
                change = ("added" if t.before is None else "removed" if t.after is None
                          else "**changed**" if t.changed else "same")
                out.append(f"| {md_escape(t.id)} | {change} | {_md_words(t.before)} | "
                           f"{_md_words(t.after)} |")
    return "\n".join(out) + "\n"
