"""Every problem code a user can see is documented: the codes the sources can emit, collected
by the patterns they are emitted with, each listed in docs/ (a `code` mention or a table row).
"""

from __future__ import annotations

import re

from helpers.paths import REPO

_CODE = r'"([a-z][a-z0-9]*(?:-[a-z0-9]+)*)"'
#: How the sources emit a code: a Problem, a collector's add, a walk or scan refusal, the
#: helpers that build an error from a code, a finding tuple, a code keyword, an error kind.
_EMIT = re.compile(
    r'(?:Problem\(\s*"(?:error|warning|info)",\s*'
    r'|\badd\(\s*(?:"(?:error|warning|info)",\s*|[A-Z]\w*Error,\s*)'
    r'|\bproblem\(\s*'
    r'|\b(?:_error|_YamlRefusal|err|call_error|_refused|refuse)\(\s*'
    r'|\bappend\(\(\s*'
    r'|\bcode\s*=\s*'
    r'|\((?:[A-Z]\w*Error),\s*'
    r')' + _CODE
)
#: Codes made outside those patterns: a link or an unreadable file found while hashing
#: (source/records.py), a PATH holding no skill (source/classify.py).
_OTHER = {"symlink", "unreadable", "no-skill", "usage"}
#: Strings the patterns catch that are not problem codes.
_NOT_CODES = {"utf-8", "ascii", "strict", "replace", "ignore"}


def emitted_codes() -> dict[str, set[str]]:
    codes: dict[str, set[str]] = {}
    for source in sorted((REPO / "skillpack").rglob("*.py")):
        for code in _EMIT.findall(source.read_text(encoding="utf-8")):
            if code not in _NOT_CODES:
                codes.setdefault(code, set()).add(str(source.relative_to(REPO)))
    for code in _OTHER:
        codes.setdefault(code, set()).add("(see _OTHER)")
    return codes


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
