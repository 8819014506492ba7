"""Every rule, one row each, with the exact message a user (or a model) is shown.

Errors are read from ``fixtures/broken/<code>/``: a skill that breaks exactly that rule. The
warnings, which never make a skill fail, are built in tmp_path. A last test greps the
sources for every problem code they can emit, so that a new code without a row fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.paths import FIXTURES, REPO
from helpers.skills import write_skill

from skillpack.errors import Problem, SkillError
from skillpack.packing.check import CheckResult, check_skill
from skillpack.skillmd.skill import parse_skill
from skillpack.skillmd.validate import validate_skill
from skillpack.source.discover import find_skills
from skillpack.source.load import parse_skill_file

BROKEN = FIXTURES / "broken"
BROKEN_FOLDERS = sorted(p for p in BROKEN.iterdir() if p.is_dir())

# (code, line, message) for each fixtures/broken/<code> skill
ERRORS: list[tuple[str, int, str]] = [
    ("allow-secrets-type", 5,
     "metadata 'skillpack-allow-secrets' must be a space separated list of paths"),
    ("allowed-tools-type", 4,
     "'allowed-tools' must be a list or a space/comma separated string of tools"),
    ("compatibility-too-long", 4, "compatibility is 501 characters; the limit is 500"),
    ("compatibility-type", 4, "'compatibility' must be a string"),
    ("description-empty", 3,
     "'description' must be non-empty text saying what the skill does and when to use it"),
    ("description-missing", 1,
     "the frontmatter has no 'description'; say what the skill does and when to use it"),
    ("description-too-long", 3, "description is 1025 characters; the limit is 1024"),
    ("duplicate-key", 5, "frontmatter key 'license' appears twice (lines 4 and 5); keep one"),
    ("encoding", 10, "SKILL.md is not valid UTF-8 (byte 160); save it as UTF-8"),
    ("frontmatter-missing", 1,
     "SKILL.md must start with YAML frontmatter: a '---' line, the fields (name, description, "
     "...), then a closing '---' line"),
    ("frontmatter-not-mapping", 2,
     "the frontmatter must be a mapping of fields ('name: ...'), not a list"),
    ("frontmatter-too-large", 2,
     "the frontmatter is over 64 KiB; keep long text in the body or in references/"),
    ("frontmatter-unterminated", 1,
     "the frontmatter is never closed: add a '---' line after the last field"),
    ("include-absolute", 4,
     "include '/etc/hostname' is absolute; name it relative to the skill folder"),
    ("include-dotdot", 4,
     "include '../waitlist/SKILL.md' has a '..' segment and would leave the skill folder"),
    ("include-empty", 4, "'includes' has an empty entry; remove the stray comma"),
    ("include-home", 4,
     "include '~/notes.md' starts with '~'; name it relative to the skill folder"),
    ("include-missing", 4, "include 'scripts/missing.py' does not exist in the skill folder"),
    ("includes-type", 4, "'includes' must be a comma-separated string or a list of paths"),
    ("license-type", 4, "'license' must be a string (a license name or file)"),
    ("metadata-type", 4, "'metadata' must be a map of names to strings"),
    ("name-conflict", 4,
     "'name: name-conflict' and 'skill: another-name' disagree; a skill has one name (keep "
     "'name:' for Agent Skills or 'skill:' for hard skills)"),
    ("name-double-hyphen", 2, "name 'name--double-hyphen' must not contain '--'"),
    ("name-empty", 2, "'name' must be a non-empty string"),
    ("name-hyphen-edge", 2, "name 'name-hyphen-edge-' must not start or end with a hyphen"),
    ("name-invalid-characters", 2,
     "name 'name_invalid_characters' may hold only letters, digits and hyphens"),
    ("name-mismatch", 2, "name 'not-the-folder-name' must equal its folder name 'name-mismatch'"),
    ("name-missing", 1,
     "the frontmatter has no 'name' (or 'skill' for a hard skill); add one, equal to the "
     "folder name"),
    ("name-not-lowercase", 2, "name 'Name-Not-Lowercase' must be lowercase"),
    ("name-not-nfkc", 2, "name '\ufb01ne-name' is not in NFKC form: it reads as 'fine-name', so "
     "the two would name one skill; write 'fine-name'"),
    ("name-too-long", 2,
     f"name 'name-too-long-{'x' * 51}' is 65 characters; the limit is 64"),
    ("tool-duplicate-id", 16,
     "tool id 'hello' is declared twice (lines 10 and 16); give each tool its own id"),
    ("tool-id", 11, "tool id 'say hello' must be 1-64 letters, digits, '_' or '-'"),
    ("tool-missing-field", 10, "the tool fence has no 'description:' line"),
    ("tool-param-default", 16,
     "tool 'greet': param 'greeting': default 'hey' must be one of hello, hi"),
    ("tool-param-enum", 16, "tool 'repeat': param 'times': enum item 'many' is not an integer"),
    ("tool-param-type", 15,
     "tool 'repeat': param 'times': type 'float' must be string, integer, number or boolean"),
    ("tool-run-empty", 13, "tool 'hello': 'run' names no command"),
    ("tool-syntax", 13,
     "'timeout: 30' is not a tool line: expected 'id: ...', 'description: ...', 'params:' or "
     "'run: ...'"),
    ("tool-undeclared-param", 13,
     "tool 'hello': run uses $who, which is not a declared param (write $$ for a literal $)"),
    ("tool-unterminated", 10,
     "the tool fence opened here is never closed: add a ``` line after it"),
    ("tool-unused-param", 14, "tool 'hello': param 'who' is declared but never used in run"),
    ("yaml-alias", 4, "frontmatter: aliases (*name) are not allowed"),
    ("yaml-anchor", 4, "frontmatter: anchors (&name) are not allowed"),
    ("yaml-key", 4, "frontmatter keys must be plain names"),
    ("yaml-merge-key", 4,
     "frontmatter: a YAML merge key ('<<') is not allowed: readers that merge would take its "
     "keys as this mapping's own; write them out (or quote '<<' if it is meant as a key)"),
    ("yaml-syntax", 4,
     "frontmatter is not valid YAML: expected ',' or ']', but got '<stream end>' (while "
     "parsing a flow sequence)"),
    ("yaml-surrogate", 3,
     "frontmatter 'description' holds U+DC00, a lone surrogate (from a YAML escape), which is "
     "not text; write the character itself or remove the escape"),
    ("yaml-tag", 4, "frontmatter: explicit tags (tag:yaml.org,2002:str) are not allowed"),
]

HEAD = "---\nname: {name}\ndescription: {description}\n"
BODY = "---\n\n# Body\n"

# (code, folder name, SKILL.md text, line, message) for each warning
WARNINGS: list[tuple[str, str, str, int, str]] = [
    ("unknown-key", "versioned",
     HEAD.format(name="versioned", description="Has a version.") + "version: 1.0\n" + BODY,
     4, "unknown frontmatter key 'version'; the Agent Skills fields are name, description, "
     "license, compatibility, metadata and allowed-tools"),
    ("metadata-not-string", "nested",
     HEAD.format(name="nested", description="Nested metadata.")
     + "metadata:\n  author: someone\n  openclaw:\n    emoji: x\n" + BODY,
     6, "metadata 'openclaw' is a map; the spec wants string values"),
    ("metadata-not-string", "listed",
     HEAD.format(name="listed", description="Listed metadata.")
     + "metadata:\n  tags:\n    - a\n    - b\n" + BODY,
     5, "metadata 'tags' is a list; the spec wants string values"),
    ("yaml-version", "answered",
     HEAD.format(name="answered", description="Answers yes.") + "metadata:\n  flag: yes\n" + BODY,
     5, "'yes' reads as true under YAML 1.1 (PyYAML) but as the string 'yes' under YAML 1.2 "
     "(the MCP skills extension's hosts): quote it ('yes') so that every reader gets the same "
     "string"),
    ("body-too-long", "long-body",
     HEAD.format(name="long-body", description="A long body.") + "---\n" + "line\n" * 501,
     5, "the body is 501 lines; keep SKILL.md under 500 lines and move details to "
     "references/"),
    ("claude-angle-brackets", "angled",
     HEAD.format(name="angled", description="Renders <html> pages.") + BODY,
     3, "description holds '<' or '>', which Claude's API refuses"),
    ("claude-reserved-word", "claude-helper",
     HEAD.format(name="claude-helper", description="Helps.") + BODY,
     2, "name 'claude-helper' contains 'claude', which Claude's API refuses in skill names"),
    ("allowed-tools-case", "lowercase-tools",
     HEAD.format(name="lowercase-tools", description="Reads.") + "allowed-tools: read Glob\n"
     + BODY,
     4, "allowed-tools entry 'read' differs from the tool 'Read' only by case: tools are "
     "compared by exact name, so it permits no call of 'Read'; write 'Read'"),
    ("claude-reserved-word", "anthropic-news",
     HEAD.format(name="anthropic-news", description="News.") + BODY,
     2, "name 'anthropic-news' contains 'anthropic', which Claude's API refuses in skill "
     "names"),
    ("tool-in-comment", "commented",
     HEAD.format(name="commented", description="Hides a tool.") + BODY
     + "<!--\n```tool\nid: hi\ndescription: Hi.\nrun: echo hi\n```\n-->\n",
     8, "this tool fence lies in the HTML comment opened at line 7: rendered Markdown hides "
     "it, yet it defines a tool a model may call; move it out of the comment, or delete it"),
    ("tool-in-html", "scripted",
     HEAD.format(name="scripted", description="Hides a tool.") + BODY
     + "<script>\n```tool\nid: hi\ndescription: Hi.\nrun: echo hi\n```\n</script>\n",
     8, "this tool fence lies in the HTML block '<script' opened at line 7, which only a line "
     "holding </script>, </pre>, </style> or </textarea> ends: rendered Markdown shows the "
     "block as HTML, not this fence, yet it defines a tool a model may call; move it out of "
     "the block, or delete it"),
]


def broken_skill(code: str) -> Path:
    """The one skill folder under fixtures/broken/<code> (itself, or one level down)."""
    (folder,) = find_skills(BROKEN / code)
    return folder


def test_every_broken_folder_has_a_row() -> None:
    assert [p.name for p in BROKEN_FOLDERS] == sorted(code for code, _, _ in ERRORS)


@pytest.mark.parametrize("folder", BROKEN_FOLDERS, ids=lambda p: p.name)
def test_broken_fixture_fails_for_its_one_reason(folder: Path) -> None:
    skills = find_skills(folder)
    assert len(skills) == 1
    result = check_skill(skills[0])
    assert not result.valid
    assert [p.code for p in result.problems if p.severity == "error"] == [folder.name]
    assert [p for p in result.problems if p.severity == "warning"] == []


@pytest.mark.parametrize(("code", "line", "message"), ERRORS, ids=[r[0] for r in ERRORS])
def test_error_message(code: str, line: int, message: str) -> None:
    folder = broken_skill(code)
    result = check_skill(folder)
    assert result.problems == (
        Problem("error", code, message, str(folder / "SKILL.md"), line),
    )


@pytest.mark.parametrize(("code", "folder", "text", "line", "message"), WARNINGS,
                         ids=[f"{r[0]}-{r[1]}" for r in WARNINGS])
def test_warning_message(
    tmp_path: Path, code: str, folder: str, text: str, line: int, message: str
) -> None:
    skill = write_skill(tmp_path / folder, text)
    result = check_skill(skill)
    assert result.valid
    assert result.problems == (Problem("warning", code, message, str(skill / "SKILL.md"), line),)
    strict = check_skill(skill, strict=True)
    assert not strict.valid
    assert strict.problems == (Problem("error", code, message, str(skill / "SKILL.md"), line),)


def test_parse_fallback_when_skill_md_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "dir-skill" / "SKILL.md").mkdir(parents=True)
    result = check_skill(tmp_path / "dir-skill")
    (problem,) = result.problems
    assert (problem.severity, problem.code) == ("error", "parse")
    assert problem.message.startswith("cannot read SKILL.md")
    assert problem.file == str(tmp_path / "dir-skill" / "SKILL.md")
    missing = check_skill(tmp_path / "nothing-here")
    assert [(p.code, p.message) for p in missing.problems] == [
        ("parse", "there is no SKILL.md here")]


_EMIT = re.compile(
    r'(?:Problem\(\s*"(?:error|warning)",\s*|_error\(\s*|_YamlRefusal\(\s*|\berr\(\s*'
    r'|\badd\(\s*"(?:error|warning)",\s*)"([a-z][a-z0-9-]+)"'
)


def test_every_code_in_the_sources_has_a_row() -> None:
    emitted: set[str] = set()
    for module in ("skillmd/frontmatter", "skillmd/fences", "skillmd/skill", "skillmd/validate",
                   "source/load", "packing/check", "packing/prepare"):
        emitted |= set(_EMIT.findall((REPO / "skillpack" / f"{module}.py").read_text()))
    tested = {code for code, _, _ in ERRORS} | {code for code, *_ in WARNINGS} | {"parse"}
    tested |= {"skill-md-case"}  # a skill.md not named SKILL.md: tests/cli/test_inputs.py
    # a refusal carrying no problem of its own (packing/prepare.judge_skill)
    tested |= {"refused"}
    assert emitted == tested


def test_name_rules_use_the_nfkc_form(tmp_path: Path) -> None:
    # U+FB01 (the "fi" ligature) is NFKC "fi": the folder 'fine' matches the name 'ﬁne', but
    # the name written is the one used, so it must be NFKC-normal itself (issue 13)
    skill = write_skill(tmp_path / "fine", HEAD.format(name="\ufb01ne", description="d") + BODY)
    assert [p.code for p in check_skill(skill).problems] == ["name-not-nfkc"]
    # full-width letters normalise to ASCII capitals, which are not lowercase
    other = write_skill(tmp_path / "ab", HEAD.format(name="\uff21\uff22", description="d") + BODY)
    assert [p.code for p in check_skill(other).problems] == ["name-not-nfkc",
                                                             "name-not-lowercase",
                                                             "name-mismatch"]


def test_non_ascii_lowercase_names_are_allowed(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "café-notes",
                        HEAD.format(name="café-notes", description="d") + BODY)
    assert check_skill(skill).valid


def test_whitespace_description_is_empty_and_limits_are_inclusive(tmp_path: Path) -> None:
    ok = write_skill(tmp_path / "edge", HEAD.format(name="edge", description="d" * 1024)
                     + "compatibility: " + "c" * 500 + "\n" + BODY)
    assert check_skill(ok).problems == ()
    name64 = "n" * 64
    assert check_skill(write_skill(tmp_path / name64,
                                   HEAD.format(name=name64, description="d") + BODY)).valid
    blank = write_skill(tmp_path / "blank", "---\nname: blank\ndescription: \"\\t \\n\"\n" + BODY)
    assert [p.code for p in check_skill(blank).problems] == ["description-empty"]


def test_allowed_tools_list_or_string(tmp_path: Path) -> None:
    listed = write_skill(tmp_path / "listed", HEAD.format(name="listed", description="d")
                         + "allowed-tools:\n  - Read\n  - Bash(git:*)\n" + BODY)
    spaced = write_skill(tmp_path / "spaced", HEAD.format(name="spaced", description="d")
                         + "allowed-tools: Read, Bash(git status:*) Write\n" + BODY)
    assert check_skill(listed).valid
    assert check_skill(spaced).valid
    assert parse_skill_file(listed).allowed_tools == ("Read", "Bash(git:*)")
    assert parse_skill_file(spaced).allowed_tools == ("Read", "Bash(git status:*)", "Write")


def test_allowed_tools_in_another_case_name_the_right_spelling(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "cased", HEAD.format(name="cased", description="d")
                        + "allowed-tools:\n  - bash(git status:*)\n  - Webfetch\n  - Read\n"
                        "  - mcp__github__get_issue\n  - readfile\n" + BODY)
    found = [(p.code, p.message.rsplit("; ", 1)[1]) for p in check_skill(skill).problems]
    assert found == [("allowed-tools-case", "write 'Bash(git status:*)'"),
                     ("allowed-tools-case", "write 'WebFetch'")]


def test_problems_are_sorted_by_line_and_all_reported(tmp_path: Path) -> None:
    text = ("---\nname: Bad_Name\ndescription: \"\"\ncompatibility:\n  - x\nlicense:\n  - y\n"
            "extra: 1\n---\n")
    skill = write_skill(tmp_path / "bad", text)
    codes = [(p.line, p.code) for p in check_skill(skill).problems]
    assert codes == [(2, "name-not-lowercase"), (2, "name-invalid-characters"),
                     (2, "name-mismatch"), (3, "description-empty"), (4, "compatibility-type"),
                     (6, "license-type"), (8, "unknown-key")]


def test_validate_skill_without_a_folder_skips_the_folder_rule() -> None:
    skill = parse_skill(HEAD.format(name="anything", description="d") + BODY)
    assert validate_skill(skill) == []


def test_hard_skill_named_by_skill_key(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "hard", "---\nskill: hard\ndescription: d\n" + BODY)
    assert check_skill(skill).problems == ()
    wrong = write_skill(tmp_path / "other", "---\nskill: hard\ndescription: d\n" + BODY)
    assert [(p.code, p.line) for p in check_skill(wrong).problems] == [("name-mismatch", 2)]


def test_check_skill_accepts_the_skill_md_path_and_serialises() -> None:
    result = check_skill(FIXTURES / "waitlist" / "SKILL.md")
    description = parse_skill_file(FIXTURES / "waitlist").description
    assert result == CheckResult("waitlist", str(FIXTURES / "waitlist"), (), description)
    assert result.to_dict() == {"name": "waitlist", "path": str(FIXTURES / "waitlist"),
                                "valid": True, "description_chars": 143, "problems": []}


def test_fixtures_of_both_dialects_are_valid() -> None:
    for name in ("waitlist", "release-notes"):
        assert check_skill(FIXTURES / name).problems == ()


def test_parse_error_carries_every_problem() -> None:
    text = ("---\nname: x\ndescription: d\nincludes: /abs, ~/home\n---\n"
            "```tool\nid: a\ndescription: d\nrun: echo $missing\n```\n")
    with pytest.raises(SkillError) as info:
        parse_skill(text, file="SKILL.md")
    err = info.value
    assert [(p.code, p.line) for p in err.problems] == [
        ("tool-undeclared-param", 9), ("include-absolute", 4), ("include-home", 4)]
    assert str(err).startswith("SKILL.md:9: tool 'a': run uses $missing")
    assert str(err).endswith("(and 2 more problems)")


def test_empty_metadata_is_no_metadata(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "bare", HEAD.format(name="bare", description="d")
                        + "metadata:\n" + BODY)
    assert check_skill(skill).problems == ()
    assert parse_skill_file(skill).metadata is None


INCLUDES_HEAD = "---\nskill: inc\ndescription: d\nincludes: {}\n---\n"


@pytest.mark.parametrize(
    ("includes", "expected"),
    [
        ("scripts/run.py, data", None),
        ("scripts/run.py,data/", None),
        ("./scripts/run.py", None),
        ("[scripts/run.py, data]", None),
        ("/etc/passwd", ("include-absolute", "include '/etc/passwd' is absolute; name it "
                         "relative to the skill folder")),
        ("C:/x", ("include-absolute", "include 'C:/x' is absolute; name it relative to the "
                  "skill folder")),
        ("\\\\server\\x", ("include-absolute", "include '\\\\server\\x' is absolute; name it "
                           "relative to the skill folder")),
        ("~/x", ("include-home", "include '~/x' starts with '~'; name it relative to the skill "
                 "folder")),
        ("data/../../x", ("include-dotdot", "include 'data/../../x' has a '..' segment and "
                          "would leave the skill folder")),
        ("data\\..\\x", ("include-dotdot", "include 'data\\..\\x' has a '..' segment and would "
                         "leave the skill folder")),
        ("data/missing.csv", ("include-missing", "include 'data/missing.csv' does not exist "
                              "in the skill folder")),
        ("data, , scripts", ("include-empty", "'includes' has an empty entry; remove the "
                             "stray comma")),
        ("", ("include-empty", "'includes' is empty; list the files the skill carries, or "
              "remove the key")),
        ("{a: b}", ("includes-type", "'includes' must be a comma-separated string or a list of "
                    "paths")),
    ],
)
def test_includes_are_checked_at_parse_time(
    tmp_path: Path, includes: str, expected: tuple[str, str] | None
) -> None:
    folder = write_skill(tmp_path / "inc", INCLUDES_HEAD.format(includes),
                         {"scripts/run.py": "print()\n", "data/a.csv": "a\n"})
    if expected is None:
        skill = parse_skill_file(folder)
        assert skill.include_list is not None
        assert check_skill(folder).problems == ()
        return
    with pytest.raises(SkillError) as info:
        parse_skill_file(folder)
    assert [(p.code, p.message, p.line) for p in info.value.problems] == [(*expected, 4)]


def test_includes_as_declared() -> None:
    text = INCLUDES_HEAD.format("a.py, data/") + "\n"
    skill = parse_skill(text)  # without a folder, existence is not checked
    assert skill.includes == "a.py, data/"
    assert skill.include_list == ("a.py", "data")
    listed = parse_skill(INCLUDES_HEAD.format("[a.py, ./data/x]"))
    assert listed.includes == ("a.py", "./data/x")
    assert listed.include_list == ("a.py", "data/x")
    assert parse_skill(HEAD.format(name="x", description="d") + BODY).includes is None
    waitlist = parse_skill_file(FIXTURES / "waitlist")
    assert waitlist.includes == "scripts/waitlist.py, data/waitlist.csv"


def test_the_codes_table_of_the_docs_is_complete() -> None:
    doc = (REPO / "docs" / "SKILL-FORMAT.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- codes:start -->\n(.*?)<!-- codes:end -->", doc, re.S)
    assert match is not None
    rows = [line.strip("|").split("|") for line in match.group(1).splitlines()[2:]]
    documented = {cell[0].strip().strip("`"): cell[1].strip() for cell in rows}
    expected = {code: "error" for code, _, _ in ERRORS}
    expected |= {code: "warning" for code, *_ in WARNINGS}
    expected |= {"parse": "error", "invalid-call": "error", "skill-md-case": "error"}
    assert documented == expected


def test_a_tool_fence_in_an_html_comment_is_said() -> None:
    """GitHub and CommonMark render `<!-- ... -->` as an HTML block: a reader of SKILL.md
    saw no fence, while the tool in it was defined, and check and lint said nothing."""
    text = ("---\nname: demo\ndescription: A demo skill. Use it for tests.\n---\n# Demo\n\n"
            "<!--\n```tool\nid: greet\ndescription: Greet.\nrun: echo hi\n```\n-->\n\n"
            "```tool\nid: bye\ndescription: Bye.\nrun: echo bye\n```\n"
            "<!-- a comment of one line -->\n```text\n<!--\n```\n")
    skill = parse_skill(text, file="demo/SKILL.md")
    assert [t.id for t in skill.tools] == ["greet", "bye"]
    found = [p for p in validate_skill(skill) if p.code == "tool-in-comment"]
    assert [(p.severity, p.line) for p in found] == [("warning", 8)]
    assert "lies in the HTML comment opened at line 7" in found[0].message
