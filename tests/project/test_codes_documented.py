"""Every problem code a user can see is documented: the codes the sources can emit, collected
by the patterns they are emitted with, each listed in docs/ (a `code` mention or a table row).
"""

from __future__ import annotations

import re

from helpers.codes import emitted_codes
from helpers.paths import REPO


def documented(docs: str, code: str) -> bool:
    row = re.search(rf"^\|\s*{re.escape(code)}\s*\|", docs, re.M)
    return f"`{code}`" in docs or row is not None


def test_the_collector_finds_the_codes_of_every_layer() -> None:
    codes = emitted_codes()
    for code in ("secret", "symlink", "name-mismatch", "expect-missing", "archive-limit",
                 "frontmatter-unterminated", "skill-md-case", "format-version", "no-skill"):
        assert code in codes, code
    assert len(codes) > 100


def test_every_code_a_user_can_see_is_in_the_docs() -> None:
    docs = "\n".join(p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").rglob("*.md")))
    missing = {code: sorted(where) for code, where in emitted_codes().items()
               if not documented(docs, code)}
    assert missing == {}
