"""One table of every code (`skillpack.formats.codes.CODES`), which --ignore and skillpack.toml's
`ignore` are judged by: every code the sources can emit is in it, and every code the checks
print on real trees, so that a real code is never refused; and each of its codes is one the
sources emit and the docs describe, so that it holds no stale code."""

from __future__ import annotations

from pathlib import Path

from helpers.codes import emitted_codes
from helpers.paths import FIXTURES, REPO
from helpers.skills import make_tree

from skillpack.formats.codes import CODES, unknown_code
from skillpack.packing.check import check_skill
from skillpack.packing.lint import lint_skill
from skillpack.packing.targets import TARGETS


def test_the_table_is_the_codes_the_sources_emit() -> None:
    emitted = emitted_codes()
    assert {code: sorted(where) for code, where in emitted.items() if code not in CODES} == {}
    assert sorted(CODES - set(emitted)) == []


def test_every_code_of_the_table_is_in_the_docs() -> None:
    docs = "\n".join(p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").rglob("*.md")))
    assert sorted(code for code in CODES if f"`{code}`" not in docs
                  and f"| {code} |" not in docs) == []


def test_every_code_check_and_lint_print_is_in_the_table(tmp_path: Path) -> None:
    """Each fixture skill (one a code of SKILL.md and of lint) checked for every host and
    linted, and a tree carrying what the walk refuses: each code printed is a code of
    the table (--ignore would refuse a code printed and not in it)."""
    folders = sorted(p.parent for p in FIXTURES.rglob("SKILL.md"))
    refused = make_tree(tmp_path / "refused", {
        "SKILL.md": "---\nname: refused\ndescription: Refused. Use when testing.\n"
                    "metadata:\n  skillpack-allow-secrets: nothing.txt\n---\n# R\n",
        "a\\b.txt": "x", ".env": "A=1\n", "keys/id_rsa": "-----BEGIN " + "RSA PRIVATE KEY-----\n"})
    (refused / "link").symlink_to("SKILL.md")
    printed: set[str] = set()
    for folder in [*folders, refused]:
        printed.update(p.code for p in lint_skill(folder, advice=True).problems)
        for target in TARGETS:
            checked = check_skill(folder, targets=[target], catalog_budget=10, advice=True)
            printed.update(p.code for p in checked.problems)
    assert len(printed) > 60
    assert sorted(printed - CODES) == []


def test_an_unknown_code_is_told_with_the_nearest_known() -> None:
    assert unknown_code("unknown-key") is None
    assert unknown_code("unkown-key") == ("'unkown-key' is no code skillpack reports: did you "
                                          "mean 'unknown-key'?")
    assert unknown_code("body-too-lnog") is not None and "'body-too-long'" in str(
        unknown_code("body-too-lnog"))
    assert "docs/SKILL-FORMAT.md" in str(unknown_code("x"))
