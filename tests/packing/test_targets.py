"""Host profiles (skillpack.packing.targets): every documented limit fires just over it and not
at it, each problem names the host, the limit, the measured value and the source."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.skills import make_tree

from skillpack.errors import SkillError
from skillpack.packing.targets import (
    CLAUDE_CODE_KEYS,
    TARGETS,
    FileFact,
    Limit,
    SkillFacts,
    accepted_keys,
    check_request,
    check_targets,
    default_layout,
    get_targets,
)
from skillpack.skillmd.validate import validate_skill
from skillpack.source.load import parse_skill_file


def facts(*, files: int = 1, sizes: list[int] | None = None, description: str = "Does X.",
          frontmatter: dict[str, object] | None = None, layout: str = "wrapped",
          archive_size: int | None = None) -> SkillFacts:
    """Facts of a generated skill: SKILL.md plus ``files - 1`` other files."""
    sizes = sizes if sizes is not None else [10] * files
    paths = ["SKILL.md"] + [f"references/f{i:04d}.md" for i in range(1, len(sizes))]
    data: dict[str, object] = {"name": "demo", "description": description}
    data.update(frontmatter or {})
    return SkillFacts.from_files("demo", data, zip(paths, sizes, strict=True),
                                 layout=layout,  # type: ignore[arg-type]
                                 archive_size=archive_size, file="demo/SKILL.md",
                                 lines={"description": 3, "when_to_use": 4})


def at(limit: Limit, value: int) -> SkillFacts:
    """Facts measuring exactly `value` on `limit`'s measure, everything else tiny."""
    if limit.measure == "files":
        return facts(files=value)
    if limit.measure == "total-bytes":
        return facts(sizes=[value - 3, 3])
    if limit.measure == "archive-bytes":
        return facts(sizes=[10, 10], archive_size=value)
    if limit.measure == "file-bytes":
        return facts(sizes=[10, value])
    if limit.measure == "description-chars":
        return facts(description="d" * value)
    if limit.measure == "description-units":  # well-known's; an emoji is two units
        return facts(description="\U0001f600" * (value // 2) + "d" * (value % 2),
                     layout="root")
    assert limit.measure == "listing-chars"
    return facts(description="d" * (value - 100), frontmatter={"when_to_use": "w" * 100})


LIMITS = [(t.name, lim) for t in TARGETS.values() for lim in t.limits]


def test_every_host_with_limits_is_covered() -> None:
    hosts = {name for name, _ in LIMITS}
    assert hosts == {"claude-ai", "claude-api", "claude-code", "codex", "openai-api", "mcp",
                     "well-known"}


@pytest.mark.parametrize(("host", "limit"), LIMITS,
                         ids=[f"{h}-{lim.measure}" for h, lim in LIMITS])
def test_limit_fires_just_over_and_not_at(host: str, limit: Limit) -> None:
    notes = limit.severity == "note"  # advice the host does not enforce: only when asked
    assert check_targets([host], at(limit, limit.maximum), notes=notes) == []
    if notes:
        assert check_targets([host], at(limit, limit.maximum + 1)) == []
    problems = check_targets([host], at(limit, limit.maximum + 1), notes=notes)
    assert len(problems) == 1, problems
    problem = problems[0]
    assert problem.severity == ("info" if notes else limit.severity)
    assert problem.code.startswith("target-")
    assert problem.message.startswith(f"{host}: ")
    assert f"{limit.maximum + 1:,}" in problem.message  # the measured value
    assert f"the limit is {limit.unit}" in problem.message  # the limit, as documented
    assert f"{limit.maximum:,}" in problem.message  # and exactly
    assert limit.source in problem.message
    assert problem.file == "demo/SKILL.md"


@pytest.mark.parametrize(("host", "count", "size", "code"), [
    ("claude-ai", 200, 30_000_000, None),
    ("claude-ai", 201, 100, "target-too-many-files"),
    ("claude-ai", 2, 30_000_001, "target-too-large"),  # 30 MB is 30,000,000 bytes, not MiB
    ("mcp", 512, 16_777_216, None),
    ("mcp", 513, 100, "target-too-many-files"),
    ("mcp", 2, 16_777_217, "target-too-large"),
    ("openai-api", 500, 100, None),
    ("openai-api", 501, 100, "target-too-many-files"),
])
def test_documented_numbers(host: str, count: int, size: int, code: str | None) -> None:
    sizes = [size - (count - 1)] + [1] * (count - 1)
    found = check_targets([host], facts(sizes=sizes))
    assert [p.code for p in found] == ([] if code is None else [code])
    if code == "target-too-large":
        assert f"{size:,} bytes in all; the limit is " in found[0].message


def test_byte_limits_say_the_exact_bytes() -> None:
    [problem] = check_targets(["claude-ai"], facts(sizes=[30_000_001]))
    assert "the limit is 30 MB uncompressed = 30,000,000 bytes (source:" in problem.message


def test_file_count_of_a_real_tree_ignores_the_manifest(tmp_path: Path) -> None:
    skill = tmp_path / "demo"
    files: dict[str, str | bytes] = {"SKILL.md": "---\nname: demo\ndescription: d\n---\n"}
    files.update({f"assets/a{i:03d}.txt": "x" for i in range(199)})
    make_tree(skill, files)
    listed = [(os.path.relpath(os.path.join(d, f), skill).replace(os.sep, "/"),
               os.path.getsize(os.path.join(d, f)))
              for d, _, names in os.walk(skill) for f in names]
    tree = SkillFacts.from_files("demo", {"name": "demo", "description": "d"}, listed)
    assert len(tree.files) == 200
    assert check_targets(["claude-ai"], tree) == []
    (skill / "assets" / "one-more.txt").write_text("x")
    listed.append(("assets/one-more.txt", 1))
    tree = SkillFacts.from_files("demo", {"name": "demo", "description": "d"}, listed)
    [problem] = check_targets(["claude-ai"], tree)
    assert problem.code == "target-too-many-files"
    assert "201 files; the limit is 200 files" in problem.message


def test_several_targets_one_report_naming_each_host() -> None:
    big = facts(files=600, description="d" * 1100)
    problems = check_targets(["claude-ai", "codex", "mcp"], big)
    assert [(p.message.split(":")[0], p.code) for p in problems] == [
        ("claude-ai", "target-too-many-files"),
        ("codex", "target-description-too-long"),
        ("mcp", "target-too-many-files"),
    ]
    codex = problems[1]
    assert codex.severity == "error"  # a hard error for Codex
    assert "1,100 characters; the limit is 1,024 characters" in codex.message
    assert codex.line == 3  # the description's line


def test_codex_requires_a_description() -> None:
    [problem] = check_targets(["codex"], facts(description="  "))
    assert problem.code == "target-description-missing"
    assert problem.severity == "error"
    assert "developers.openai.com/codex/skills" in problem.message
    assert check_targets(["agentskills"], facts(description="  ")) == []


def test_claude_code_listing_cap_counts_when_to_use() -> None:
    ok = facts(description="d" * 1000, frontmatter={"when_to_use": "w" * 536})
    assert check_targets(["claude-code"], ok) == []
    over = facts(description="d" * 1000, frontmatter={"when_to_use": "w" * 537})
    [problem] = check_targets(["claude-code"], over)
    assert problem.code == "target-catalog-budget"
    assert problem.severity == "warning"
    assert "1,537 characters (description + when_to_use)" in problem.message


def test_catalog_budget_overrides_and_applies_to_any_target() -> None:
    skill = facts(description="d" * 300)
    assert check_targets(["claude-code"], skill) == []
    [problem] = check_targets(["claude-code"], skill, catalog_budget=250)
    assert problem.code == "target-catalog-budget"
    assert "300 characters" in problem.message and "--catalog-budget" in problem.message
    [problem] = check_targets(["codex"], skill, catalog_budget=299)
    assert problem.message.startswith("codex: ")
    assert check_targets(["codex"], skill, catalog_budget=300) == []


def test_layout_and_single_skill_md() -> None:
    [problem] = check_targets(["well-known"], facts(layout="wrapped"))
    assert problem.code == "target-layout"
    assert "pack with --layout root" in problem.message
    assert check_targets(["well-known"], facts(layout="root")) == []
    assert check_targets(["mcp"], facts(layout="root")) == []
    assert check_targets(["mcp"], facts(layout="wrapped")) == []
    nested = SkillFacts.from_files("demo", {"name": "demo", "description": "d"},
                                   [("SKILL.md", 5), ("inner/skill.md", 5)])
    assert nested.skill_md_count == 2
    [problem] = check_targets(["claude-ai"], nested)
    assert problem.code == "target-skill-md-count"
    assert "exactly one SKILL.md, this skill has 2" in problem.message
    assert check_targets(["claude-code"], nested) == []


def test_strict_key_hosts_warn_on_keys_anthropics_validator_refuses() -> None:
    [problem] = check_targets(["claude-api"], facts(frontmatter={"when_to_use": "w"}))
    assert problem.code == "target-unknown-key"
    assert problem.severity == "warning"
    assert "'when_to_use'" in problem.message and "quick_validate.py" in problem.message
    assert problem.line == 4
    assert check_targets(["claude-code"], facts(frontmatter={"when_to_use": "w"})) == []


def test_skills_per_request() -> None:
    assert check_request(["claude-api"], 8) == []
    [problem] = check_request(["claude-api", "mcp"], 9)
    assert problem.code == "target-too-many-skills"
    assert "claude-api: 9 skills; the limit is 8 skills per request" in problem.message


def test_unknown_target_lists_the_known_ones() -> None:
    with pytest.raises(SkillError) as caught:
        check_targets(["claude-ai", "claude-web", "gpt"], facts())
    message = str(caught.value)
    assert "'claude-web', 'gpt'" in message
    for name in TARGETS:
        assert name in message
    assert "--target" in message


def test_get_targets_keeps_order_and_drops_duplicates() -> None:
    assert [t.name for t in get_targets(["mcp", "codex", "mcp"])] == ["mcp", "codex"]


def test_default_layout() -> None:
    assert default_layout([]) == "wrapped"
    assert default_layout(["claude-ai", "openai-api"]) == "wrapped"
    assert default_layout(["well-known", "mcp"]) == "root"
    assert default_layout(["mcp"]) == "wrapped"  # MCP takes no archive: the default stands
    with pytest.raises(SkillError, match="claude-ai wants wrapped; well-known wants root"):
        default_layout(["claude-ai", "well-known"])


def test_every_limit_has_a_source_and_a_code() -> None:
    for target in TARGETS.values():
        assert target.layout in ("wrapped", "root", None) and target.layout_source
        for limit in target.limits:
            assert limit.source and limit.maximum > 0
        assert target.to_dict()["name"] == target.name


CLAUDE_CODE_SKILL = """\
---
name: deploy
description: Deploy the app. Use when the user asks to ship.
when_to_use: When a release is tagged.
argument-hint: "[env]"
disable-model-invocation: true
allowed-tools:
  - Bash(git push:*)
  - Read
context: fork
mystery: 1
---
Run the deploy.
"""


def test_claude_code_keys_are_not_unknown_for_claude_code(tmp_path: Path) -> None:
    make_tree(tmp_path / "deploy", {"SKILL.md": CLAUDE_CODE_SKILL})
    skill = parse_skill_file(tmp_path / "deploy" / "SKILL.md")
    spec = validate_skill(skill)
    unknown = sorted(p.message.split("'")[1] for p in spec if p.code == "unknown-key")
    assert unknown == ["argument-hint", "context", "disable-model-invocation", "mystery",
                       "when_to_use"]
    kept = validate_skill(skill, accepted_keys(["claude-code"]))
    assert [p.message.split("'")[1] for p in kept if p.code == "unknown-key"] == ["mystery"]
    assert [p.code for p in kept if p.code != "unknown-key"] == [
        p.code for p in spec if p.code != "unknown-key"]
    # with a second host that does not document them, the warnings stay
    assert validate_skill(skill, accepted_keys(["claude-code", "codex"])) == spec
    assert validate_skill(skill, accepted_keys([])) == spec


def test_accepted_keys() -> None:
    assert accepted_keys(["claude-code"]) == CLAUDE_CODE_KEYS
    assert accepted_keys(["claude-code", "mcp"]) == frozenset()
    assert accepted_keys([]) == frozenset()


def test_largest_file_is_named() -> None:
    skill = SkillFacts("demo", "d", {}, (FileFact("SKILL.md", 5),
                                         FileFact("assets/video.mp4", 25_000_001)), 1)
    [problem] = check_targets(["openai-api"], skill)
    assert problem.code == "target-file-too-large"
    assert "25,000,001 bytes (assets/video.mp4)" in problem.message
