"""A turn's skills at run time: allowed-tools as a policy, a live catalog, an audit digest.

Every bundle here is written by `write_bundle` from skill folders made at test time and
loaded by the runtime, as an application would.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.paths import CORPUS_SKILLS
from helpers.skills import make_tree

import skillpack.runtime as rt
from skillpack.errors import ArgumentError, ResourceError, SkillpackError
from skillpack.packing.bundle import write_bundle
from skillpack.runtime.policy import Rule, parse_entry


def restricted_to(*tools: str) -> frozenset[str]:
    """A permitted set: `tools` and the framework's own."""
    return frozenset({*tools, "load_skill", "read_skill_resource"})


def skill_md(name: str, description: str, allowed: str | None = None) -> str:
    front = f"name: {name}\ndescription: {description}\n"
    if allowed is not None:
        front += allowed if allowed.startswith("allowed-tools") else f"allowed-tools: {allowed}\n"
    return f"---\n{front}---\n# {name}\n\nDo the {name} thing.\n"


def bundle_of(tmp_path: Path, skills: dict[str, str]) -> rt.Bundle:
    folders = []
    for name, text in skills.items():
        folders.append(make_tree(tmp_path / "src" / name, {"SKILL.md": text}))
    result = write_bundle(folders, tmp_path / "all.bundle")
    return rt.load(result.path.read_bytes())


@pytest.fixture
def bundle(tmp_path: Path) -> rt.Bundle:
    return bundle_of(tmp_path, {
        "lookup-only": skill_md("lookup-only", "Looks things up.", "lookup"),
        "free": skill_md("free", "Declares no tools."),
        "git-reader": skill_md("git-reader", "Reads git history.", "Read Bash(git:*)"),
        "listed": skill_md("listed", "A YAML list.",
                           "allowed-tools:\n  - Write\n  - Bash(git status)\n  - Bash(jq *)\n"),
        "empty": skill_md("empty", "Declares an empty string.", '""'),
    })


# -- allowed-tools as a policy -------------------------------------------------------------

def test_a_restricting_skill_permits_its_tools_and_the_framework_s_only(
        bundle: rt.Bundle) -> None:
    assert bundle.permits(["lookup-only"], "lookup")
    assert not bundle.permits(["lookup-only"], "Write")
    assert bundle.permits(["lookup-only"], "load_skill")
    assert bundle.permits(["lookup-only"], "read_skill_resource")
    assert bundle.permitted_tools(["lookup-only"]) == restricted_to("lookup")


def test_a_skill_that_declares_nothing_neither_restricts_nor_widens(bundle: rt.Bundle) -> None:
    assert bundle.permitted_tools(["free"]) is None
    assert bundle.permits(["free"], "Anything")
    # A restricts to lookup, B declares nothing: A+B still restricts to lookup
    assert bundle.permitted_tools(["lookup-only", "free"]) == restricted_to("lookup")
    assert not bundle.permits(["free", "lookup-only"], "Write")


def test_two_restricting_skills_give_the_union_not_the_intersection(bundle: rt.Bundle) -> None:
    tools = bundle.permitted_tools(["lookup-only", "git-reader"])
    assert tools == restricted_to("lookup", "Read", "Bash")
    assert bundle.permits(["lookup-only", "git-reader"], "lookup")
    assert bundle.permits(["lookup-only", "git-reader"], "Read")
    assert not bundle.permits(["lookup-only", "git-reader"], "Write")


def test_no_active_skill_or_only_unrestricted_ones_permit_everything(bundle: rt.Bundle) -> None:
    assert bundle.permitted_tools([]) is None
    assert bundle.permits([], "Write")
    assert bundle.permits([], "Bash", ["rm", "-rf", "/"])
    assert bundle.permitted_tools(["free", "free"]) is None


def test_an_empty_allowed_tools_is_read_as_no_restriction(bundle: rt.Bundle) -> None:
    assert bundle["empty"].skill.allowed_tools == ()
    assert bundle.permitted_tools(["empty"]) is None
    assert bundle.permitted_tools(["empty", "lookup-only"]) == restricted_to("lookup")


def test_both_written_forms_are_read(bundle: rt.Bundle) -> None:
    assert bundle["git-reader"].skill.allowed_tools == ("Read", "Bash(git:*)")
    assert bundle.permitted_tools(["git-reader"]) == restricted_to("Read", "Bash")
    assert bundle["listed"].skill.allowed_tools == ("Write", "Bash(git status)", "Bash(jq *)")
    assert bundle.permitted_tools(["listed"]) == restricted_to("Write", "Bash")
    assert bundle.permits(["listed"], "Write")
    assert not bundle.permits(["listed"], "Read")


def test_bash_git_star_matches_the_program_and_any_arguments(bundle: rt.Bundle) -> None:
    active = ["git-reader"]
    assert bundle.permits(active, "Bash", ["git"])
    assert bundle.permits(active, "Bash", ["git", "log", "--oneline"])
    assert bundle.permits(active, "Bash", ("git", "status"))
    assert not bundle.permits(active, "Bash", ["gitk"])  # word by word, not by characters
    assert not bundle.permits(active, "Bash", ["/usr/bin/git", "log"])  # the program as named
    assert not bundle.permits(active, "Bash", ["rm", "git"])
    assert not bundle.permits(active, "Bash", [])
    assert not bundle.permits(active, "Bash")  # a scoped tool needs its command to be checked
    assert bundle.permits(active, "Read", ["anything"])  # a bare entry takes any arguments


def test_an_entry_without_star_matches_the_command_exactly(bundle: rt.Bundle) -> None:
    assert bundle.permits(["listed"], "Bash", ["git", "status"])
    assert not bundle.permits(["listed"], "Bash", ["git", "status", "--short"])
    assert not bundle.permits(["listed"], "Bash", ["git", "push"])
    assert bundle.permits(["listed"], "Bash", ["jq", ".name", "x.json"])  # `jq *` is `jq:*`
    assert not bundle.permits(["listed"], "Bash", ["jqx"])


def test_entry_forms() -> None:
    assert parse_entry("Read") == Rule("Read")
    assert parse_entry("  ") is None
    assert parse_entry("Bash(git:*)") == Rule("Bash", ("git",), True)
    assert parse_entry("Bash(git status:*)") == Rule("Bash", ("git", "status"), True)
    assert parse_entry("Bash(npm run build)") == Rule("Bash", ("npm", "run", "build"), False)
    assert parse_entry("Bash(git *)") == Rule("Bash", ("git",), True)
    for anything in ("Bash(*)", "Bash()", "Bash(:*)", "Bash( * )"):
        assert parse_entry(anything) == Rule("Bash"), anything
    # any other `*` is compared as it is: it matches less, never more
    rule = parse_entry("Bash(git * main)")
    assert rule is not None and not rule.matches("Bash", ["git", "push", "main"])
    assert rule.matches("Bash", ["git", "*", "main"])


def test_tool_names_are_compared_exactly(bundle: rt.Bundle) -> None:
    assert bundle.permits(["git-reader"], "Read")
    assert not bundle.permits(["git-reader"], "read")
    assert not bundle.permits(["git-reader"], "Read ")


def test_an_unknown_skill_name_is_refused(bundle: rt.Bundle) -> None:
    with pytest.raises(ResourceError, match="no skill named 'lookup'") as info:
        bundle.permits(["lookup"], "lookup")
    assert "did you mean 'lookup-only'" in str(info.value)
    with pytest.raises(ResourceError):
        bundle.permitted_tools(["free", 3])  # type: ignore[list-item]


def test_a_tool_or_command_of_the_wrong_type_is_refused(bundle: rt.Bundle) -> None:
    with pytest.raises(ArgumentError, match="a tool is named by a string, not int"):
        bundle.permits(["git-reader"], 3)  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match="not str") as info:
        bundle.permits(["git-reader"], "Bash", "git status")  # type: ignore[arg-type]
    assert "shlex.split" in str(info.value)
    with pytest.raises(ArgumentError, match="every word of a command is a string"):
        bundle.permits(["git-reader"], "Bash", ["git", 1])  # type: ignore[list-item]
    # refused even where the answer would not need it: the caller's bug shows at once
    with pytest.raises(ArgumentError):
        bundle.permits([], None)  # type: ignore[arg-type]
    assert isinstance(ArgumentError("x"), TypeError | SkillpackError)


def test_one_name_given_as_a_string_is_refused(bundle: rt.Bundle) -> None:
    with pytest.raises(ArgumentError, match="takes a list of skill names, not one string"):
        bundle.permits("git-reader", "Read")
    with pytest.raises(ArgumentError, match="not NoneType"):
        bundle.permitted_tools(None)  # type: ignore[arg-type]


# -- a live catalog ------------------------------------------------------------------------

def test_catalog_text_without_names_is_the_whole_catalog(bundle: rt.Bundle) -> None:
    text = bundle.catalog_text()
    lines = ["## Available skills", ""]
    lines += [f"- {item['name']}: {item['description']}" for item in bundle.catalog()]
    assert text == "\n".join(lines) + "\n"
    assert bundle.catalog_text(bundle.names) == text
    assert bundle.catalog_text(reversed(bundle.names)) == text


def test_catalog_text_of_some_names_in_the_bundle_s_order(bundle: rt.Bundle) -> None:
    assert bundle.catalog_text(["lookup-only", "free", "free"]) == (
        "## Available skills\n\n- free: Declares no tools.\n- lookup-only: Looks things up.\n")
    assert bundle.catalog_text([]) == "## Available skills\n\n(none)\n"
    with pytest.raises(ResourceError, match="no skill named 'nope'"):
        bundle.catalog_text(["free", "nope"])


def test_catalog_update_says_what_changed_then_the_roster(bundle: rt.Bundle) -> None:
    update = bundle.catalog_update(["free", "git-reader"], ["lookup-only", "free", "listed"])
    assert update == (
        "## Skills changed\n"
        "\n"
        "Now available:\n"
        "- listed: A YAML list.\n"
        "- lookup-only: Looks things up.\n"
        "\n"
        "Withdrawn (no longer available; do not load or use them):\n"
        "- git-reader\n"
        "\n"
        "## Available skills\n"
        "\n"
        "- free: Declares no tools.\n"
        "- listed: A YAML list.\n"
        "- lookup-only: Looks things up.\n")
    # the same roster gives the same bytes, whatever the order of the names
    assert bundle.catalog_update(["git-reader", "free"], ["listed", "free", "lookup-only"]) \
        == update


def test_catalog_update_with_only_additions_or_only_withdrawals(bundle: rt.Bundle) -> None:
    added = bundle.catalog_update([], ["free"])
    assert added == ("## Skills changed\n\nNow available:\n- free: Declares no tools.\n\n"
                     "## Available skills\n\n- free: Declares no tools.\n")
    withdrawn = bundle.catalog_update(["free"], [])
    assert withdrawn == ("## Skills changed\n\n"
                         "Withdrawn (no longer available; do not load or use them):\n- free\n\n"
                         "## Available skills\n\n(none)\n")


def test_catalog_update_is_empty_when_nothing_changed(bundle: rt.Bundle) -> None:
    assert bundle.catalog_update(["free", "listed"], ["listed", "free", "free"]) == ""


def test_catalog_update_refuses_unknown_names(bundle: rt.Bundle) -> None:
    with pytest.raises(ResourceError, match="no skill named 'gone'"):
        bundle.catalog_update(["gone"], ["free"])
    with pytest.raises(ResourceError, match="no skill named 'new'"):
        bundle.catalog_update(["free"], ["new"])


# -- an audit digest of a turn's skill set -------------------------------------------------

def test_set_digest_of_every_skill_is_the_bundle_digest(bundle: rt.Bundle) -> None:
    assert bundle.set_digest(bundle.names) == bundle.digest
    assert bundle.set_digest([*reversed(bundle.names), "free"]) == bundle.digest


def test_set_digest_names_exactly_the_skills_given(tmp_path: Path, bundle: rt.Bundle) -> None:
    two = bundle.set_digest(["listed", "free"])
    assert two == bundle.set_digest(["free", "listed", "listed"])  # order and duplicates
    assert two != bundle.set_digest(["free"])
    assert two != bundle.digest
    # it is the bundle digest a bundle of exactly those skills has
    alone = bundle_of(tmp_path / "other", {
        "free": skill_md("free", "Declares no tools."),
        "listed": skill_md("listed", "A YAML list.",
                           "allowed-tools:\n  - Write\n  - Bash(git status)\n  - Bash(jq *)\n")})
    assert alone.digest == two
    assert bundle.set_digest([]).startswith("blake3:")


def test_set_digest_refuses_unknown_names(bundle: rt.Bundle) -> None:
    with pytest.raises(ResourceError, match="no skill named 'ghost'"):
        bundle.set_digest(["free", "ghost"])
    with pytest.raises(ArgumentError):
        bundle.set_digest("free")


def test_a_single_archive_serves_all_three(tmp_path: Path) -> None:
    from skillpack.packing.pack import pack

    folder = make_tree(tmp_path / "src" / "lone", {"SKILL.md": skill_md(
        "lone", "Alone.", "Read")})
    [archive] = pack([folder], tmp_path / "out")
    loaded = rt.load(archive.read_bytes())
    assert loaded.set_digest(["lone"]) == loaded.digest
    assert loaded.permitted_tools(["lone"]) == restricted_to("Read")
    assert loaded.catalog_update([], ["lone"]).endswith(loaded.catalog_text())


def test_a_lazy_bundle_answers_the_same(tmp_path: Path, bundle: rt.Bundle) -> None:
    lazy = rt.load((tmp_path / "all.bundle").read_bytes(), lazy=True)
    assert lazy.set_digest(lazy.names) == bundle.digest
    assert lazy.permitted_tools(["git-reader"]) == bundle.permitted_tools(["git-reader"])


@pytest.mark.corpus
def test_corpus_skills_restrict_to_what_their_allowed_tools_line_says(tmp_path: Path) -> None:
    declaring: dict[str, tuple[str, ...]] = {}
    for folder in CORPUS_SKILLS:
        lines = (folder / "SKILL.md").read_text(encoding="utf-8").splitlines()
        found = [line for line in lines if line.startswith("allowed-tools: ")]
        if found and folder.name not in declaring:
            declaring[folder.name] = tuple(found[0].removeprefix("allowed-tools: ").split())
        if len(declaring) == 6:
            break
    assert len(declaring) == 6
    chosen = [f for f in CORPUS_SKILLS if f.name in declaring]
    chosen = [f for i, f in enumerate(chosen) if f.name not in {g.name for g in chosen[:i]}]
    loaded = rt.load(write_bundle(chosen, tmp_path / "corpus.bundle").path.read_bytes())
    for name, tools in declaring.items():
        assert loaded.permitted_tools([name]) == restricted_to(*tools), name
        assert not loaded.permits([name], "WebFetch")
    first, second = list(declaring)[:2]
    assert loaded.permitted_tools([first, second]) == restricted_to(
        *declaring[first], *declaring[second])
