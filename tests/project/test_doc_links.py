"""Every relative link in README.md and docs/*.md resolves to a file in the repository (and
its #anchor to a heading there): the docs a user reads never point outside the checkout."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.paths import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
INLINE = re.compile(r"\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.M)
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def prose(text: str) -> str:
    """`text` without its fenced code blocks and inline code spans (links there are not
    links)."""
    kept, fence = [], ""
    for line in text.splitlines():
        match = FENCE.match(line)
        if fence:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = ""
            continue
        if match:
            fence = match.group(1)
            continue
        kept.append(re.sub(r"(`+).*?\1", "", line))
    return "\n".join(kept)


def anchors(path: Path) -> set[str]:
    """GitHub's anchors for the headings of `path`."""
    found = set()
    for line in prose(path.read_text(encoding="utf-8")).splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().replace("`", "").lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def links(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    headings = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    body = prose(text) + "\n" + re.sub(r"`", "", headings)
    return INLINE.findall(body) + REFERENCE.findall(body)


def relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_resolves_inside_the_repository(doc: Path) -> None:
    bad = []
    for target in filter(relative, links(doc)):
        file, _, anchor = target.partition("#")
        where = (doc.parent / file).resolve() if file else doc
        if "shared/" in file or not where.is_relative_to(REPO) or not where.exists():
            bad.append(f"{target}: no such file in the repository")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            bad.append(f"{target}: no heading #{anchor} in {where.relative_to(REPO)}")
    assert bad == [], f"{doc.relative_to(REPO)}: broken links"


def test_the_checker_sees_links_and_catches_a_broken_one(tmp_path: Path) -> None:
    readme = REPO / "README.md"
    found = links(readme)
    assert "docs/FORMAT.md#contracts" in found and len(found) > 10
    assert "contracts" in anchors(REPO / "docs" / "FORMAT.md")
    assert "2-the-skill-digest-version-1" in anchors(REPO / "docs" / "FORMAT.md")
    doc = tmp_path / "x.md"
    doc.write_text("See [spec](../shared/SPEC.md) and `[no](link.md)`.\n\n```\n[no](x.md)\n```\n")
    assert links(doc) == ["../shared/SPEC.md"]
    assert not any("shared/" in target for d in DOCS for target in links(d))
