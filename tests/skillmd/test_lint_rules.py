"""`lint`: each rule fires on its fixture (fixtures/lint/<code>/), and the corpus holds no
error a person would let through."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from helpers.paths import CORPUS_SKILLS, FIXTURES
from helpers.skills import make_tree

from skillpack.errors import Problem
from skillpack.skillmd.invisible import find_invisible
from skillpack.skillmd.lint_rules import RULES, estimate_tokens, lint
from skillpack.skillmd.mentions import mentioned_programs
from skillpack.skillmd.skill import parse_skill
from skillpack.source.load import parse_skill_file

LINT_FIXTURES = FIXTURES / "lint"


def _lint(folder: Path) -> list[Problem]:
    carried = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())

    def read_text(path: str) -> str | None:
        try:
            return (folder / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    return lint(parse_skill_file(folder), carried, read_text)


def test_every_rule_has_a_fixture() -> None:
    assert sorted(p.name for p in LINT_FIXTURES.iterdir()) == sorted(RULES)


@pytest.mark.parametrize("code", sorted(RULES))
def test_each_fixture_fires_its_rule_alone(code: str) -> None:
    problems = _lint(LINT_FIXTURES / code)
    assert [(p.code, p.severity) for p in problems] == [(code, RULES[code])]


def test_what_the_fixtures_report() -> None:
    shown = {code: str(_lint(LINT_FIXTURES / code)[0]) for code in RULES}
    assert shown["run-path-missing"] == (
        "SKILL.md:8: error: [run-path-missing] tool 'count' runs 'scripts/count.py', which the "
        "skill does not carry: add the file to the skill (or to 'includes:'), or fix the path")
    assert shown["link-missing"].startswith(
        "SKILL.md:8: warning: [link-missing] the link to 'references/format.md'")
    assert shown["path-missing"].startswith(
        "SKILL.md:8: warning: [path-missing] 'scripts/convert.py' is named here")
    assert shown["file-unreferenced"].startswith(
        "scripts/orphan.py: info: [file-unreferenced]")
    assert shown["reference-too-deep"].startswith(
        "references/checklist.md:4: warning: [reference-too-deep] 'references/checklist.md' "
        "(linked from SKILL.md) links on to 'references/style.md'")
    assert "about 5571 tokens (characters / 4)" in shown["body-tokens"]
    assert shown["description-no-when"].startswith("SKILL.md:3: warning: [description-no-when]")


def test_carrying_the_files_silences_the_path_rules(tmp_path: Path) -> None:
    make_tree(tmp_path / "fix", {
        "SKILL.md": (LINT_FIXTURES / "run-path-missing" / "SKILL.md").read_text(),
        "scripts/count.py": "print(1)\n",
    })
    assert _lint(tmp_path / "fix") == []


def test_a_path_written_from_the_repository_root_is_told_its_skill_path(tmp_path: Path) -> None:
    folder = make_tree(tmp_path / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: Demo. Use when testing.\n---\n\n"
                    "```bash\npython skills/demo/scripts/go.py\n```\n",
        "scripts/go.py": "print(1)\n",
    })
    (problem,) = _lint(folder)
    assert problem.code == "path-missing"
    assert "write 'scripts/go.py'" in problem.message


def test_links_that_are_not_files_are_not_checked(tmp_path: Path) -> None:
    folder = make_tree(tmp_path / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: Demo. Use when testing.\n---\n\n"
                    "[site](https://example.com) [top](#top) [cite](url) [^1]\n\n"
                    "[^1]: Mermaid. A note.\n\n```md\n[in code](missing.md)\n```\n"
                    "Example: `scripts/rotate.py` for a rotation task.\n",
    })
    assert _lint(folder) == []


def test_a_folder_reference_covers_its_files(tmp_path: Path) -> None:
    folder = make_tree(tmp_path / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: Demo. Use when testing.\n---\n\n"
                    "Helpers live in `scripts/`; see [the guide](references/guide.md).\n",
        "scripts/a.py": "", "scripts/b.py": "",
        "references/guide.md": "Uses helper.txt.\n", "references/helper.txt": "x\n",
        "LICENSE.txt": "MIT\n",
    })
    assert _lint(folder) == []


@pytest.mark.parametrize(("description", "fires"), [
    ("Formats tables.", True),
    ("Formats tables. Use when the user pastes a table.", False),
    ("Use geniml for genomic intervals.", False),
    ("Toolkit for tables; invoke it whenever columns drift.", False),
    ("Table formatter, for spreadsheets and reports.", True),
    # datamol: "Preferred for standard drug discovery ..." says when to choose it
    ("Wrapper around RDKit. Preferred for standard drug discovery.", False),
])
def test_the_description_test(tmp_path: Path, description: str, fires: bool) -> None:
    folder = make_tree(tmp_path / "demo", {
        "SKILL.md": f"---\nname: demo\ndescription: {description}\n---\n\nBody.\n"})
    assert [p.code for p in _lint(folder)] == (["description-no-when"] if fires else [])


def test_tokens_are_characters_over_four_rounded_up() -> None:
    assert [estimate_tokens("x" * n) for n in (0, 1, 4, 5, 20000, 20001)] == [
        0, 1, 1, 2, 5000, 5001]


@pytest.mark.corpus
def test_the_corpus_has_no_lint_error_and_the_counts_of_the_report() -> None:
    counts: Counter[str] = Counter()
    for folder in CORPUS_SKILLS:
        problems = _lint(folder)
        assert [p for p in problems if p.severity == "error"] == [], folder
        counts.update(p.code for p in problems)
    # Counts when written (see docs/LINT.md); a rule that starts reporting
    # many more on text nobody changed has lost precision.
    assert counts["link-missing"] == 0
    assert counts["path-missing"] <= 55  # 50 (benchmarks/lint_counts.py)
    assert counts["description-no-when"] <= 33  # 31
    assert counts["reference-too-deep"] == 0  # every further file is linked from SKILL.md
    assert counts["body-tokens"] <= 8  # 7


def test_a_python_module_name_references_its_file(tmp_path: Path) -> None:
    folder = make_tree(tmp_path / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: Demo. Use when testing.\n---\n\n"
                    "```python\nfrom core.easing import ease\n```\n",
        "core/easing.py": "", "core/__init__.py": "", "core/unused.py": "",
    })
    assert [(p.code, p.file) for p in _lint(folder)] == [
        ("file-unreferenced", "core/unused.py")]


def test_hostile_text_is_read_in_one_pass() -> None:
    # 5,000 unclosed brackets, backticks, folder prefixes, `$(`, pipes, `!` + backtick and
    # zero-width spaces on a few lines. A pattern that goes back over the line from each
    # bracket (the link pattern once did) needs most of a minute here; every finding is
    # still reported once.
    n = 5_000
    body = ("[" * n + "`" * n + "scripts/" * n + "a/" * n + "!`" * n + "\u200b" * n
            + "\n```bash\n" + "x | " * n + "\n" + "$(" * n + "\n```\n")
    text = "---\nname: big\ndescription: Big. Use when testing.\n---\n" + body
    skill = parse_skill(text)
    assert [p.code for p in lint(skill, ["SKILL.md"], lambda path: None)] == ["body-tokens"]
    assert len(mentioned_programs(skill.body, skill.body_line)) == n  # one `x` per pipe
    assert len(find_invisible(text)) == n


# -- false positives found measuring the public repositories (issue 15) ----------------------

def test_a_reference_linking_to_a_file_skill_md_also_links_is_not_too_deep(
        tmp_path: Path) -> None:
    """As in geomaster: every reference links to code-examples.md, which SKILL.md links
    too; it is one level deep. A file only the reference names is still too deep."""
    folder = make_tree(tmp_path / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: Demo. Use when testing.\n---\n\n"
                    "See [GIS](references/gis.md) and [examples](references/examples.md); "
                    "`references/setup.md` installs it.\n",
        "references/gis.md": "More in [examples](examples.md) and [setup](setup.md).\n",
        "references/examples.md": "Code.\n",
        "references/setup.md": "Install.\n",
    })
    assert _lint(folder) == []
    (folder / "references" / "gis.md").write_text(
        "More in [examples](examples.md), then [deep](deep.md).\n")
    (folder / "references" / "deep.md").write_text("Deep.\n")
    assert [(p.code, p.file, p.line) for p in _lint(folder)] == [
        ("reference-too-deep", "references/gis.md", 1)]
    assert "links on to 'references/deep.md'" in str(_lint(folder)[0])


def test_a_shell_block_running_a_file_of_the_users_project_names_no_skill_file(
        tmp_path: Path) -> None:
    """As in diffdock (`python app/main.py`) and bun-nuxt (`bun .output/server/index.mjs`):
    scripts outside the usual skill folders are the user's files; a skill folder's script,
    or one written from the repository root, is still checked."""
    folder = make_tree(tmp_path / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: Demo. Use when testing.\n---\n\n"
                    "```bash\npython app/main.py\npython datasets/prepare.py --csv x.csv\n"
                    "bun .output/server/index.mjs\nbun --preload ./setup.ts run index.ts\n"
                    "python dags/my_dag.py\n```\n",
    })
    assert _lint(folder) == []
    (folder / "SKILL.md").write_text(
        "---\nname: demo\ndescription: Demo. Use when testing.\n---\n\n"
        "```bash\npython scripts/missing.py\npython skills/demo/tools/go.py\n```\n")
    make_tree(folder, {"tools/go.py": "print(1)\n"})
    assert [(p.code, p.line) for p in _lint(folder)] == [
        ("path-missing", 7), ("path-missing", 8)]


def test_files_python_imports_load_are_referenced(tmp_path: Path) -> None:
    """As in anthropics/skills' pptx: scripts/office/validate.py runs with its folder on
    sys.path, imports the package `validators`, whose __init__ imports `.base`, which names
    the schemas it loads. A module nothing imports is still reported."""
    folder = make_tree(tmp_path / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: Demo. Use when testing.\n---\n\n"
                    "```bash\npython scripts/office/validate.py doc.pptx\n```\n",
        "scripts/office/validate.py": "import sys\nfrom validators import PPTXValidator\n"
                                      "import helpers.merge as merge\n",
        "scripts/office/validators/__init__.py": "from .base import Base\n"
                                                 "from . import pptx\n",
        "scripts/office/validators/base.py": 'SCHEMAS = {"ppt": "pml.xsd"}\n',
        "scripts/office/validators/pptx.py": "from .base import Base\n",
        "scripts/office/helpers/merge.py": "",
        "scripts/office/schemas/pml.xsd": "<xsd/>\n",
        "scripts/office/validators/unused.py": "",
    })
    assert [(p.code, p.file) for p in _lint(folder)] == [
        ("file-unreferenced", "scripts/office/validators/unused.py")]


def test_a_file_named_by_its_stem_beside_its_folder_is_referenced(tmp_path: Path) -> None:
    """As in secondsky's react-best-practices: the rules are listed as `rule-name` under
    "read rules/<rule>.md". A stem with no mention of its folder is not enough."""
    folder = make_tree(tmp_path / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: Demo. Use when testing.\n---\n\n"
                    "Read the files under rules, e.g. rules/list-virtualize.md.\n\n"
                    "- `list-virtualize` - use FlashList\n- `js-hoist-intl` - hoist Intl\n"
                    "- `unrelated-stem` - no such folder\n",
        "rules/list-virtualize.md": "x\n", "rules/js-hoist-intl.md": "y\n",
        "rules/_template.md": "z\n", "other/unrelated-stem.md": "w\n",
    })
    assert [(p.code, p.file) for p in _lint(folder)] == [
        ("file-unreferenced", "other/unrelated-stem.md"),
        ("file-unreferenced", "rules/_template.md")]


def test_a_file_named_in_another_case_is_reached_and_told(tmp_path: Path) -> None:
    """As in anthropics/skills' pdf: SKILL.md says FORMS.md, the skill carries forms.md
    (which names the scripts it uses): not unreferenced, but a path a Linux host cannot
    open."""
    folder = make_tree(tmp_path / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: Demo. Use when testing.\n---\n\n"
                    "Intro.\n\nTo fill a form, read FORMS.md.\n",
        "forms.md": "Run scripts/fill.py.\n", "scripts/fill.py": "",
    })
    assert [str(p) for p in _lint(folder)] == [
        "SKILL.md:8: warning: [path-missing] 'FORMS.md' names no file the skill carries: the "
        "skill carries 'forms.md', which differs in case, and a case-sensitive file system "
        "(Linux) does not open it; write 'forms.md'"]


def test_a_name_of_a_carried_file_is_not_another_case_of_a_second_one(tmp_path: Path) -> None:
    """SKILL.md names SKILL.md; a carried templates/skill.md is not what it means."""
    folder = make_tree(tmp_path / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: Demo. Use when testing.\n---\n\n"
                    "Every skill has a SKILL.md.\n",
        "templates/skill.md": "x\n",
    })
    assert [(p.code, p.file) for p in _lint(folder)] == [
        ("file-unreferenced", "templates/skill.md")]


def test_paths_in_the_block_after_an_example_line_are_examples(tmp_path: Path) -> None:
    """As in skill-creator: "Example: when building a big-query skill ...:", a blank line,
    then "2. A `references/schema.md` file ... would be helpful". The block after it ends at
    a blank line; a path there is checked again."""
    folder = make_tree(tmp_path / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: Demo. Use when testing.\n---\n\n"
                    "Example: when building a big-query skill, the analysis shows:\n\n"
                    "1. Schemas are re-discovered each time\n"
                    "2. A `references/schema.md` file would be helpful\n\n"
                    "See references/workflows.md for sequential workflows.\n",
    })
    assert [(p.code, p.line, p.message.split("'")[1]) for p in _lint(folder)] == [
        ("path-missing", 11, "references/workflows.md")]


def test_a_line_that_only_mentions_an_example_does_not_hide_the_next_lines(
        tmp_path: Path) -> None:
    """As in cloudflare-mcp-server: "- `templates/tools-example.ts` - Tool definitions"
    ends no list: the missing template on the next line is still reported."""
    folder = make_tree(tmp_path / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: Demo. Use when testing.\n---\n\n"
                    "### Templates\n- `templates/tools-example.ts` - Tool definitions\n"
                    "- `templates/durable-object-mcp.ts` - Stateful MCP\n",
        "templates/tools-example.ts": "export {}\n",
    })
    assert [(p.code, p.line) for p in _lint(folder)] == [("path-missing", 8)]


def test_only_paths_in_the_skill_tree_shape_are_reported_missing(tmp_path: Path) -> None:
    """As hugo's "Don't push `resources/_gen/`" (secondsky): a folder of the user's site, in
    a skill with no resources/, is no file the skill lacks. Under the specification's
    folders, a folder the skill has, or naming a file it carries elsewhere, it is."""
    folder = make_tree(tmp_path / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: Demo. Use when testing.\n---\n\n"
                    "Don't push `resources/_gen/`: generated assets.\n"
                    "Your app's `templates/vue/` and agents/code-reviewer.md stay yours.\n"
                    "Run `scripts/build.py`, then read references/guide.md.\n"
                    "Copy `rules/extra.md` and see reference/dark-mode.md.\n",
        "rules/base.md": "base\n",
        "references/dark-mode.md": "dark\n",
    })
    assert [(p.line, p.message.split("'")[1]) for p in _lint(folder)
            if p.code == "path-missing"] == [
        (8, "references/guide.md"), (8, "scripts/build.py"), (9, "reference/dark-mode.md"),
        (9, "rules/extra.md")]


def test_a_link_out_of_the_skill_folder_says_so(tmp_path: Path) -> None:
    """As in obra/superpowers: ../requesting-code-review/code-reviewer.md is a file of a
    sibling skill, there in the repository, absent from this skill's archive."""
    folder = make_tree(tmp_path / "skills" / "demo", {
        "SKILL.md": "---\nname: demo\ndescription: Demo. Use when testing.\n---\n\n"
                    "Use [the reviewer](../review/code-reviewer.md).\n"})
    make_tree(tmp_path / "skills" / "review", {"code-reviewer.md": "x\n"})
    (problem,) = _lint(folder)
    assert (problem.code, problem.line) == ("link-missing", 6)
    assert "leads outside the skill folder" in problem.message
