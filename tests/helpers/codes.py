"""The problem codes the sources can emit, collected by the patterns they are emitted with
(what tests/project holds to be documented, and to be in `skillpack.formats.codes.CODES`)."""

from __future__ import annotations

import ast
import re

from helpers.paths import REPO

_CODE = r'"([a-z][a-z0-9]*(?:-[a-z0-9]+)*)"'
#: How the sources emit a code: a Problem, a collector's add, a walk or scan refusal, the
#: helpers that build an error from a code, a finding tuple, a code keyword, an error kind,
#: a constant said to be a code (``#: The code of ...``, on one line or more, above
#: ``NAME = "code"``).
_EMIT = re.compile(
    r'(?:Problem\(\s*"(?:error|warning|info)",\s*'
    r'|\badd\(\s*(?:"(?:error|warning|info)",\s*|[A-Z]\w*Error,\s*)'
    r'|\bproblem\(\s*'
    r'|\b(?:_error|_YamlRefusal|err|call_error|_refused|refuse)\(\s*'
    r'|\bappend\(\(\s*'
    r'|\bcode\s*=\s*'
    r'|\((?:[A-Z]\w*Error),\s*'
    r'|\bcode\s+or\s+'
    r'|#: [Tt]he codes? [^\n]*\n(?:#:[^\n]*\n)*[A-Z_]+\s*=\s*'
    r')' + _CODE
)
#: Where a code of two words or more comes first: a collector's add or a walk's problem
#: (code, message, ...), a (code, message) returned, a refusal's tuple in a list.
_FIRST = re.compile(r'(?:\badd\(|\.problem\(|\breturn|\[\()\s*'
                    r'"([a-z][a-z0-9]*(?:-[a-z0-9]+)+)",')
#: Codes made outside those patterns: a link or an unreadable file found while hashing
#: (source/records.py), a PATH holding no skill (source/classify.py).
_OTHER = {"symlink", "unreadable", "no-skill", "usage"}
#: Strings the patterns catch that are not problem codes.
_NOT_CODES = {"utf-8", "ascii", "strict", "replace", "ignore"}
_SEVERITIES = {"error", "warning", "info"}


def _tables(source: str) -> set[str]:
    """The codes of a module's tables: a dict of code to severity (lint's rules), and the
    values of a dict named ``..._CODES`` (a measure's or a kind's code)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Dict):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            keys = [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
            values = [v.value for v in node.value.values if isinstance(v, ast.Constant)]
            if values and set(values) <= _SEVERITIES:
                found.update(k for k in keys if isinstance(k, str))
            if any(n.endswith("_CODES") for n in names):
                found.update(v for v in values if isinstance(v, str))
    return found


def emitted_codes() -> dict[str, set[str]]:
    """Each code the sources of skillpack/ can emit, with the files that emit it."""
    codes: dict[str, set[str]] = {}
    for source in sorted((REPO / "skillpack").rglob("*.py")):
        text = source.read_text(encoding="utf-8")
        where = str(source.relative_to(REPO))
        for code in {*_EMIT.findall(text), *_FIRST.findall(text), *_tables(text)}:
            if code not in _NOT_CODES and code not in _SEVERITIES - {"error"}:
                codes.setdefault(code, set()).add(where)
    for code in _OTHER:
        codes.setdefault(code, set()).add("(see _OTHER)")
    return codes
