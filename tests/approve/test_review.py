"""The review page: what changed since the approval, escaped wherever a skill's text goes."""

from __future__ import annotations

import re
from pathlib import Path

from helpers.approval import (
    ADDED,
    HOSTILE,
    IMG,
    NEW_COUNT,
    SCRIPT,
    lock_of,
    parsed,
    review_of,
    view_of,
)
from helpers.paths import NOTES, WAITLIST
from markdown_it import MarkdownIt

from skillpack.approve.review import (
    CSP,
    SkillView,
    compare,
    md_escape,
    render_html,
    render_markdown,
)


def test_compare_says_what_changed(tmp_path: Path) -> None:
    changes = review_of(tmp_path)
    by_name = {c.name: c for c in changes}
    assert [c.name for c in changes] == sorted(by_name)
    assert {n: c.status for n, c in by_name.items()} == {
        HOSTILE: "new", "gone-skill": "gone", "release-notes": "unchanged", "waitlist": "changed"}
    w = by_name["waitlist"]
    assert w.files_added == (ADDED,)
    assert w.files_changed == ("SKILL.md", "scripts/waitlist.py")
    assert w.files_removed == ()
    assert w.programs_added == ("curl",) and w.programs_removed == ()
    assert w.tools_added == ("fetch",) and w.tools_removed == ()
    [count] = [t for t in w.tools if t.id == "count"]
    assert count.before == ("awk", "-F,", "-v", "want=$status",
                            "$$3 == want { n++ } END { print n+0 }", "data/waitlist.csv")
    assert count.after == tuple(NEW_COUNT) and count.changed
    assert [t.id for t in w.tools if t.changed] == ["count", "fetch"]
    assert w.allowed_tools_before is None and w.allowed_tools_after == ("Bash(curl:*)",)
    assert w.description_before is not None and w.description_before.startswith(
        "Manage a product waitlist")
    assert w.description_after is not None and w.description_after.startswith(HOSTILE)
    assert w.findings[0].endswith(HOSTILE)
    gone = by_name["gone-skill"]
    assert gone.files_removed == ("SKILL.md",) and gone.digest_after is None


def test_the_html_page_escapes_every_value_and_loads_nothing(tmp_path: Path) -> None:
    page = render_html(review_of(tmp_path), lock="<b>skills.lock</b>")
    tags = parsed(page)
    names = {t for t, _ in tags.tags}
    assert names <= {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "h4",
                     "p", "table", "tr", "th", "td", "code", "span", "ul", "li", "section",
                     "details", "summary", "pre"}, names
    for tag, attrs in tags.tags:
        assert set(attrs) <= {"lang", "charset", "http-equiv", "content", "name", "class",
                              "colspan"}, (tag, attrs)
    assert ("meta", {"http-equiv": "Content-Security-Policy", "content": CSP}) in tags.tags
    assert CSP == "default-src 'none'; style-src 'unsafe-inline'"
    assert "<script" not in page and "<img" not in page
    text = "".join(tags.text)
    # every hostile value is shown, as text, where it was put
    assert text.count(SCRIPT) >= 6 and text.count(IMG) >= 3 and ADDED in text
    assert "&amp;quot;&#x27; onmouseover=&#x27;x&#x27;.md" in page
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in page
    assert "<title>skillpack review</title>" in page
    assert "&lt;b&gt;skills.lock&lt;/b&gt;" in page
    assert " ".join(NEW_COUNT) in " ".join(text.split())
    assert render_html(review_of(tmp_path / "again")) == render_html(review_of(tmp_path / "x"))


def test_the_markdown_escapes_every_value(tmp_path: Path) -> None:
    text = render_markdown(review_of(tmp_path))
    assert "`" not in text.replace("\\`", "")  # no code span can open
    assert "<" not in text and ">" not in text
    # rendered the way a forge renders a comment (raw HTML allowed, tables on)
    rendered = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]
                                                               ).render(text)
    tags = {t for t, _ in parsed(rendered).tags}
    assert tags <= {"h2", "h3", "h4", "p", "table", "thead", "tbody", "tr", "th", "td", "strong",
                    "ul", "li", "em"}, tags
    shown = "".join(parsed(rendered).text)
    assert shown.count(HOSTILE) >= 3 and shown.count(SCRIPT) >= 5
    # the changed run template: one table row, before and after
    [row] = [line for line in text.splitlines() if line.startswith("| count |")]
    assert "**changed**" in row and md_escape(SCRIPT) in row
    assert md_escape("$$3 == want { n++ } END { print n+0 }") in row


def test_md_escape_leaves_nothing_active() -> None:
    assert md_escape("a*b_c`d<e>&f\n# g|h") == "a\\*b\\_c\\`d&lt;e&gt;&amp;f \\# g\\|h"
    sample = "".join(chr(c) for c in range(33, 127))  # every printable ASCII character
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(md_escape(sample))
    shown = (sample.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
             .replace('"', "&quot;"))
    assert rendered == f"<p>{shown}</p>\n"


def test_an_unchanged_review_says_so(tmp_path: Path) -> None:
    lock = lock_of(WAITLIST, NOTES)
    approved = {n: SkillView.from_lock_entry(n, e) for n, e in lock.skills.items()}
    changes = compare(approved, [view_of(WAITLIST), view_of(NOTES)])
    assert [c.status for c in changes] == ["unchanged", "unchanged"]
    page = render_html(changes)
    assert "0 changed, 0 new, 0 gone, 2 unchanged" in page
    assert re.search(r"Same digest as approved", page)
    assert "2 unchanged" in render_markdown(changes)
