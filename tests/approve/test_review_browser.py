"""The review page in a real browser (Debian's headless Chromium): the changed run template is
shown, and nothing from a skill ran.

Skipped, saying why, where /usr/bin/chromium is absent, unless SKILLPACK_REQUIRE_BROWSER=1 (CI
sets it, and installs the browser), where it fails instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.approval import IMG, NEW_COUNT, SCRIPT, Tags, changed_waitlist, parsed, review_of
from helpers.browser import need_browser, run_chromium
from helpers.cli import cli
from helpers.paths import NOTES, WAITLIST

from skillpack.approve.review import render_html


@pytest.fixture
def browser() -> Path:
    return need_browser()



def rendered_dom(browser: Path, page: Path, tmp_path: Path) -> tuple[str, Tags]:
    dom = run_chromium(browser, page, tmp_path / "profile-dom", "--dump-dom")
    assert "</html>" in dom, dom[-500:]
    return dom, parsed(dom)


def test_the_control_page_does_run_its_script(browser: Path, tmp_path: Path) -> None:
    """The control: the same payloads unescaped, without the CSP, do run in this browser, so
    the test below can fail."""
    page = tmp_path / "control.html"
    page.write_text(f"<!DOCTYPE html><html><head><title>skillpack review</title></head>"
                    f"<body>{SCRIPT}{IMG}</body></html>", encoding="utf-8")
    dom, tags = rendered_dom(browser, page, tmp_path)
    assert "<title>pwned</title>" in dom
    assert ("body", {"data-pwned": "1"}) in tags.tags


def test_the_review_page_in_chromium(browser: Path, tmp_path: Path) -> None:
    page = tmp_path / "review.html"
    page.write_text(render_html(review_of(tmp_path / "skills")), encoding="utf-8")
    dom, tags = rendered_dom(browser, page, tmp_path)
    # nothing from a skill ran: the title is ours, no element or attribute was injected
    assert "<title>skillpack review</title>" in dom and "<title>pwned" not in dom
    assert all(t not in ("script", "img", "iframe", "object", "a") for t, _ in tags.tags)
    assert all("data-pwned" not in attrs and not any(a.startswith("on") for a in attrs)
               for _, attrs in tags.tags)
    # what the approver must see is rendered: the changed run template, word for word
    text = " ".join("".join(tags.text).split())
    assert " ".join(NEW_COUNT) in text
    assert "awk -F, -v want=$status $$3 == want { n++ } END { print n+0 } data/waitlist.csv" in text
    assert f"curl {IMG}" in text
    shot = tmp_path / "shot.png"
    run_chromium(browser, page, tmp_path / "profile-shot", f"--screenshot={shot}",
                 "--window-size=1200,2000", "--hide-scrollbars")
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    keep = os.environ.get("SKILLPACK_REVIEW_SHOT")
    if keep:  # where a person wants to look at it
        Path(keep).write_bytes(data)


def test_the_page_skillpack_review_writes_in_chromium(browser: Path, tmp_path: Path) -> None:
    """The same, on the page the command line writes from a lock and a changed folder."""
    _, folder = changed_waitlist(tmp_path / "skills")
    lock = tmp_path / "skills.lock"
    assert cli("lock", WAITLIST, NOTES, "-o", lock).exit_code == 0
    page = tmp_path / "review.html"
    assert cli("review", "--lock", lock, folder, NOTES, "-o", page).exit_code == 0
    dom, tags = rendered_dom(browser, page, tmp_path)
    assert "<title>skillpack review</title>" in dom and "<title>pwned" not in dom
    assert all(t not in ("script", "img", "iframe", "object", "a") for t, _ in tags.tags)
    assert all("data-pwned" not in attrs and not any(a.startswith("on") for a in attrs)
               for _, attrs in tags.tags)
    text = " ".join("".join(tags.text).split())
    assert " ".join(NEW_COUNT) in text and f"curl {IMG}" in text
