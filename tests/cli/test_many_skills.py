"""A repository as users have it: many skills, a few broken. Every many-skill command is
all or nothing by default; --keep-going writes what is valid and lists what it skipped
(exit 1); --exclude leaves skills out on purpose (exit 0); --ignore silences a code;
--quiet prints only problems and the final line; skillpack.toml or [tool.skillpack] sets
their defaults; check reports two skills with one name; catalog lists every problem once."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import skillpack.runtime as rt
from skillpack.approve.lock import read_lock
from skillpack.cli import main

GOOD = [f"skill-{n:02d}" for n in range(10)]
BROKEN = {"template": "---\nname: {{name}}\ndescription: x\n---\n",
          "no-description": "---\nname: no-description\n---\n# body\n"}


def good(name: str, extra: str = "") -> str:
    return (f"---\nname: {name}\ndescription: Does {name} things. Use when {name} is "
            f"needed.\n{extra}---\n# {name}\n")


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``skills/`` of ten valid skills (one with an unknown key) and two broken ones, in a
    git repository (the configuration search stops there); the working folder."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    for name in GOOD:
        (root / "skills" / name).mkdir(parents=True)
        (root / "skills" / name / "SKILL.md").write_text(
            good(name, "version: 1\n" if name == GOOD[0] else ""))
    for name, text in BROKEN.items():
        (root / "skills" / name).mkdir(parents=True)
        (root / "skills" / name / "SKILL.md").write_text(text)
    monkeypatch.chdir(root)
    yield root


def remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


#: Every many-skill command (push needs a registry: tests/test_cli_export.py), writing into
#: the path given: the command's words, and what it wrote.
COMMANDS: dict[str, tuple[list[str], str]] = {
    "pack": (["pack", "skills", "-o", "out"], "out"),
    "bundle": (["bundle", "skills", "-o", "out.bundle"], "out.bundle"),
    "lock": (["lock", "skills", "-o", "skills.lock"], "skills.lock"),
    "export oci": (["export", "oci", "skills", "-o", "oci"], "oci"),
    "export well-known": (["export", "well-known", "skills", "-o", "site"], "site"),
    "export mcp": (["export", "mcp", "skills", "-o", "mcp.json"], "mcp.json"),
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_all_or_nothing_by_default_keep_going_writes_the_valid_ones(repo: Path,
                                                                    name: str) -> None:
    words, written = COMMANDS[name]
    refused = run(*words)
    assert refused.exit_code == 1
    assert not (repo / written).exists()
    assert "skills/template" in refused.stderr and "skills/no-description" in refused.stderr

    kept = run(*words, "--keep-going")
    assert kept.exit_code == 1, kept.output
    assert (repo / written).exists()
    for broken in BROKEN:
        assert f"skillpack: skipped skills/{broken}: " in kept.stderr
    assert "[description-missing]" in kept.stderr  # each with its problems
    assert "skill-03" not in kept.stderr

    remove(repo / written)  # a layout is never merged into
    excluded = run(*words, "--exclude", "template", "--exclude", "no-description",
                   "--keep-going")
    assert excluded.exit_code == 0, excluded.output
    assert "excluded 2 skills or archives (--exclude)" in excluded.stderr


def test_keep_going_writes_every_valid_skill(repo: Path) -> None:
    pack = run("pack", "skills", "-o", "out", "-k")
    assert sorted(p.name.rsplit("-", 1)[0] for p in (repo / "out").iterdir()) == GOOD
    assert pack.stdout.splitlines()[-1] == "packed 10 skills into out, 2 skipped"
    lock = run("lock", "skills", "-o", "skills.lock", "-k")
    assert sorted(read_lock(repo / "skills.lock").skills) == GOOD
    assert lock.stdout == "locked 10 skill(s) in skills.lock, 2 skipped\n"
    bundle = json.loads(run("bundle", "skills", "-o", "b.bundle", "-k", "--json").stdout)
    assert [s["name"] for s in bundle["skills"]] == GOOD
    assert [(s["path"], s["ok"]) for s in bundle["skipped"]] == [
        ("skills/no-description", False), ("skills/template", False)]
    assert bundle["skipped"][0]["problems"][0]["code"] == "description-missing"


def test_pack_json_lists_the_skipped_after_the_archives(repo: Path) -> None:
    result = run("pack", "skills", "-o", "out", "-k", "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert [d["name"] for d in data] == [*GOOD, None, None]
    assert [d.get("skipped") for d in data[-2:]] == [True, True]
    assert data[-1]["path"] == "skills/template"


def test_catalog_keep_going_and_every_problem_once(repo: Path) -> None:
    refused = run("catalog", "skills")
    assert refused.exit_code == 1 and refused.stdout == ""
    first, *rest = refused.stderr.splitlines()
    assert first == ("skillpack: error: no catalog: 2 skills cannot be listed (fix what is "
                     "listed, then try again)")
    assert len(rest) == 2 and len(set(rest)) == 2  # each problem once, no hint twice
    assert refused.stderr.count("fix what") == 1
    assert "no-description" in rest[0] and "template" in rest[1]
    kept = run("catalog", "skills", "-k", "--format", "json")
    assert kept.exit_code == 1
    data = json.loads(kept.stdout)
    assert [s["name"] for s in data["skills"]] == GOOD
    assert [s["path"] for s in data["skipped"]] == ["skills/no-description", "skills/template"]


def test_review_keep_going_skips_a_path_holding_no_skill(repo: Path) -> None:
    assert run("lock", "skills", "-o", "skills.lock", "--exclude", "template",
               "--exclude", "no-description").exit_code == 0
    (repo / "empty").mkdir()
    refused = run("review", "skills", "empty", "--lock", "skills.lock", "-o", "r.html")
    assert refused.exit_code == 1 and not (repo / "r.html").exists()
    kept = run("review", "skills", "empty", "--lock", "skills.lock", "-o", "r.html", "-k")
    assert kept.exit_code == 1 and (repo / "r.html").exists()
    assert "skillpack: skipped empty: no SKILL.md found in empty" in kept.stderr


def test_ignore_silences_a_warning_never_an_error(repo: Path) -> None:
    noisy = run("check", "skills/skill-00")
    assert "[unknown-key]" in noisy.stdout
    quiet = run("check", "skills/skill-00", "--ignore", "unknown-key")
    assert quiet.exit_code == 0 and "[unknown-key]" not in quiet.stdout
    still = run("check", "skills/no-description", "--ignore", "description-missing")
    assert still.exit_code == 1 and "[description-missing]" in still.stdout


@pytest.mark.parametrize("command", ["check", "lint", "pack", "catalog"])
def test_an_ignored_code_skillpack_does_not_report_is_refused(repo: Path,
                                                               command: str) -> None:
    """`--ignore unknown-keyy` silenced nothing and said nothing: the warning the user
    believed silenced still failed `--strict` in CI."""
    out = ["-o", "out"] if command == "pack" else []
    result = run(command, "skills/skill-00", *out, "--ignore", "unknown-keyy", "--ignore",
                 "zzz", "--ignore", "unknown-key")
    assert result.exit_code == 2 and not (repo / "out").exists()
    assert ("Invalid value for '--ignore': 'unknown-keyy' is no code skillpack reports: did "
            "you mean 'unknown-key'?; 'zzz' is no code skillpack reports: the codes are "
            "listed in docs/SKILL-FORMAT.md and docs/LINT.md") in result.stderr
    if command in ("check", "lint"):
        as_json = run(command, "skills/skill-00", "--ignore", "unkown-key", "--json")
        assert as_json.exit_code == 2
        assert "did you mean 'unknown-key'?" in json.loads(as_json.stdout)["error"]


def test_quiet_prints_only_problems_and_the_final_line(repo: Path) -> None:
    result = run("pack", "skills", "-o", "out", "-k", "-q")
    assert result.stdout == "packed 10 skills into out, 2 skipped\n"
    assert "[description-missing]" in result.stderr
    assert "excluded" not in result.stderr
    bundle = run("bundle", "skills", "-o", "b.bundle", "-k", "--quiet")
    [line] = bundle.stdout.splitlines()
    assert line.startswith("bundled 10 skill(s) into b.bundle (") and line.endswith(
        ", 2 skipped")


def test_exclude_is_gitignore_syntax_on_the_skill_folder_s_path(repo: Path) -> None:
    result = run("pack", "skills", "-o", "out", "--exclude", "skills/skill-0[1-9]/",
                 "--exclude", "template", "--exclude", "*-description")
    assert result.exit_code == 0, result.output
    assert [p.name.rsplit("-", 1)[0] for p in (repo / "out").iterdir()] == ["skill-00"]
    bad = run("pack", "skills", "-o", "out", "--exclude", "a*b*c*d*e")
    assert bad.exit_code == 2 and "exponential" in bad.stderr


@pytest.mark.parametrize("spelt", ["./skills/template", "{repo}/skills/template",
                                   "./skills/template/", "{repo}/skills/template/"])
def test_an_exclude_written_as_a_shell_path_means_that_path(repo: Path, spelt: str) -> None:
    """`./skills/template` or an absolute path matched nothing, without a word (gitignore
    syntax knows neither), and the broken template failed the run."""
    checked = run("check", "skills", "--exclude", spelt.format(repo=repo),
                  "--exclude", "no-description")
    assert checked.exit_code == 0, checked.output
    assert "excluded 2 skills or archives" in checked.stderr


@pytest.mark.parametrize("command", ["pack", "check", "lint", "verify", "catalog"])
def test_every_command_says_how_many_it_excluded(repo: Path, command: str) -> None:
    args = ["-o", "out"] if command == "pack" else []
    result = run(command, "skills", *args, "--exclude", "template", "--exclude",
                 "no-description")
    assert result.exit_code == 0, result.output
    assert "skillpack: excluded 2 skills or archives (--exclude)" in result.stderr


# -- the configuration file -------------------------------------------------------------------

def test_skillpack_toml_sets_the_defaults_and_the_command_line_wins(repo: Path) -> None:
    (repo / "skillpack.toml").write_text(
        'exclude = ["template/", "no-description"]\nignore = ["unknown-key"]\n'
        'out = "dist"\nstrict = true\n')
    os.chdir(repo / "skills")  # found upward, its paths relative to its own folder
    checked = run("check", ".")
    assert checked.exit_code == 0, checked.output  # strict, and the warning silenced
    assert "checked 10 skills: 10 valid" in checked.stdout
    packed = run("pack", ".")
    assert packed.exit_code == 0, packed.output
    assert len(list((repo / "dist").iterdir())) == 10
    loud = run("check", ".", "--ignore", "body-too-long")  # the command line wins
    assert loud.exit_code == 1 and "error: [unknown-key]" in loud.stdout


def test_verify_lock_reads_what_lock_read(repo: Path) -> None:
    """`lock` then `verify --lock` of one repository, its broken templates excluded in
    skillpack.toml (what the pre-commit hook runs): verify leaves out what lock left out;
    without the file each broken skill is a failure of its own, the others verified."""
    (repo / "skillpack.toml").write_text('exclude = ["template/", "no-description"]\n')
    assert run("lock", "skills", "-o", "skills.lock").exit_code == 0
    verified = run("verify", "--lock", "skills.lock", "skills")
    assert verified.exit_code == 0, verified.output
    assert verified.stdout.count("ok  ") == 10
    assert "skillpack: excluded 2 skills or archives (--exclude)" in verified.stderr
    (repo / "skillpack.toml").unlink()
    verified = run("verify", "--lock", "skills.lock", "skills")
    assert verified.exit_code == 1
    assert verified.stdout.count("ok  ") == 10 and "MISMATCH" not in verified.stdout
    assert "skills/template" in verified.stderr and "skills/no-description" in verified.stderr
    assert run("verify", "--lock", "skills.lock", "skills", "--exclude", "template",
               "--exclude", "no-description").exit_code == 0


def test_pyproject_tool_table_is_read_and_one_without_it_passed_over(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[tool.skillpack]\nexclude = ["template"]\n')
    (repo / "skills" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    os.chdir(repo / "skills")
    result = run("check", ".")
    assert "template" not in result.stdout and "checked 11 skills" in result.stdout


@pytest.mark.parametrize(("text", "said"), [
    ('exlude = ["x"]\n', "unknown key 'exlude'"),
    ('exclude = "x"\n', "'exclude' must be a list of strings"),
    ('strict = "yes"\n', "'strict' must be true or false"),
    ('layout = "flat"\n', "'layout': 'flat' is not one of wrapped, root"),
    ('target = ["nowhere"]\n', "'target': 'nowhere' is not one of"),
    # a misspelt code silenced nothing, without a word (an unknown key is refused)
    ('ignore = ["unknown-key", "unkown-key"]\n',
     "'ignore': 'unkown-key' is no code skillpack reports: did you mean 'unknown-key'?"),
    ("exclude = [\n", "cannot read it as TOML"),
    # tomllib recurses once a level: a RecursionError traceback, exit 1, on every command
    ("exclude = [" + "[" * 5_000 + "]" * 5_000 + "]\n",
     "cannot read it as TOML: it is nested too deeply"),
    ("exclude = [" + "[" * 50_000 + "]" * 50_000 + "]\n",
     "cannot read it as TOML: it is nested too deeply"),
    ("# " + "x" * (1 << 20) + "\n", "cannot read it: it holds over 1,048,576 bytes"),
    # Python converts at most 4,300 digits: a ValueError traceback on every command
    ("x = " + "9" * 100_000 + "\n", "cannot read it as TOML: it holds a number of thousands"),
])
def test_a_bad_configuration_is_a_usage_error_naming_file_and_key(repo: Path, text: str,
                                                                  said: str) -> None:
    (repo / "skillpack.toml").write_text(text)
    result = run("check", "skills")
    assert result.exit_code == 2
    assert f"{repo / 'skillpack.toml'}: " in result.stderr and said in result.stderr


def test_a_configuration_that_is_no_regular_file_is_refused_not_passed_over(
        repo: Path) -> None:
    """A `skillpack.toml` that is a fifo was passed over without a word, and a folder
    above's configuration applied instead."""
    os.mkfifo(repo / "skillpack.toml")
    result = run("check", "skills")
    assert result.exit_code == 2
    assert f"{repo / 'skillpack.toml'}: cannot read it: it is a fifo" in result.stderr


def test_the_search_stops_at_the_repository_root(repo: Path) -> None:
    (repo.parent / "skillpack.toml").write_text('exclude = ["*"]\n')
    result = run("check", "skills/skill-01")
    assert result.exit_code == 0 and "checked 1 skill" in result.stdout


# -- check reports what later commands refuse --------------------------------------------------

def test_check_reports_two_skills_with_one_name_both_paths(repo: Path) -> None:
    (repo / "other" / "skill-01").mkdir(parents=True)
    (repo / "other" / "skill-01" / "SKILL.md").write_text(good("skill-01") + "changed\n")
    result = run("check", "skills/skill-01", "other/skill-01")
    assert result.exit_code == 0  # each packs on its own
    assert ("other/skill-01: warning: [duplicate-name] two different skills are named "
            "'skill-01': skills/skill-01 and other/skill-01") in result.stdout
    assert run("check", "--strict", "skills/skill-01", "other/skill-01").exit_code == 1
    bundle = run("bundle", "skills/skill-01", "other/skill-01", "-o", "b.bundle")
    assert bundle.exit_code == 1 and "[duplicate-name]" in bundle.stderr
    lock = run("lock", "skills/skill-01", "other/skill-01", "-o", "l.lock", "-k")
    assert lock.exit_code == 1 and "skipped other/skill-01" in lock.stderr
    assert list(read_lock(repo / "l.lock").skills) == ["skill-01"]
    catalog = run("catalog", "skills/skill-01", "other/skill-01")
    assert catalog.exit_code == 1 and "[duplicate-name]" in catalog.stderr
    assert ("other/skill-01: error: [duplicate-name] two different skills are named "
            "'skill-01': skills/skill-01 and other/skill-01") in catalog.stderr  # as given
    assert str(repo) not in catalog.stderr
    same = run("check", "skills/skill-01", repo / "skills" / "skill-01")
    assert "duplicate-name" not in same.stdout  # one skill, given twice


def test_check_reports_every_problem_of_every_skill_in_one_run(repo: Path) -> None:
    result = run("check", "skills")
    assert result.exit_code == 1
    assert "skills/template/SKILL.md:2: error:" in result.stdout
    assert "skills/no-description/SKILL.md:1: error: [description-missing]" in result.stdout


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_stray_archives_hide_no_other_refusal(repo: Path, name: str) -> None:
    """Archives beside the skills (a `fixtures.zip`, a `backup.tar.gz`) are read whole, and
    are no skill: the first one refused stopped pack, bundle, lock and the exports, which
    said nothing of the other, nor of the broken skills. Now every one is listed at once."""
    (repo / "skills" / "tmp").mkdir()
    (repo / "skills" / "tmp" / "readme.txt").write_text("hi\n")
    shutil.make_archive(str(repo / "skills" / "fixtures"), "zip", repo / "skills" / "tmp")
    shutil.make_archive(str(repo / "skills" / "backup"), "gztar", repo / "skills" / "tmp")
    remove(repo / "skills" / "tmp")
    words, written = COMMANDS[name]
    refused = run(*words)
    assert refused.exit_code == 1, refused.output
    for what in ("skills/backup.tar.gz: error: [not-a-skill-archive]",
                 "skills/fixtures.zip: error: [not-a-skill-archive]",
                 "skills/no-description/SKILL.md:1: error: [description-missing]"):
        assert what in refused.output, refused.output
    assert not (repo / written).exists()


#: Commands that judge a skill, then two skills of one name, then a host's limits: each
#: judgement was raised alone, so a CI run needed a round per kind of problem.
JUDGED_TOGETHER = {
    "bundle": (["bundle", "skills", "other", "-o", "out.bundle", "--target", "claude-ai"],
               True),
    "lock": (["lock", "skills", "other", "-o", "skills.lock"], False),
    "export mcp": (["export", "mcp", "skills", "other", "-o", "mcp.json"], True),
}


@pytest.mark.parametrize("name", sorted(JUDGED_TOGETHER))
def test_every_kind_of_refusal_is_listed_in_one_run(repo: Path, name: str) -> None:
    words, host = JUDGED_TOGETHER[name]
    (repo / "other" / GOOD[1]).mkdir(parents=True)  # a second, different skill-01
    (repo / "other" / GOOD[1] / "SKILL.md").write_text(good(GOOD[1], "license: MIT\n"))
    refs = repo / "skills" / GOOD[2] / "refs"  # over claude-ai's 200 files, MCP's 16 MiB
    refs.mkdir()
    for n in range(201):
        (refs / f"r{n}.md").write_text(f"{n}\n")
    (refs / "big.bin").write_bytes(bytes(17 << 20))
    refused = run(*words)
    assert refused.exit_code == 1
    said = refused.output
    assert "skills/no-description/SKILL.md:1: error: [description-missing]" in said
    assert f"other/{GOOD[1]}: error: [duplicate-name]" in said
    assert ("[target-too-many-files]" in said or "[target-too-large]" in said) is host
    assert not any(p.name in ("out.bundle", "skills.lock", "mcp.json") for p in repo.iterdir())


def test_bundle_for_a_host_refuses_or_skips_each_skill_the_host_refuses(repo: Path) -> None:
    """`bundle --target` named the bundle file for a skill a host refuses, and with -k it
    refused the whole bundle where pack -k skips that skill and writes the rest."""
    refs = repo / "skills" / GOOD[3] / "refs"
    refs.mkdir()
    for n in range(201):  # over claude-ai's 200 files
        (refs / f"r{n}.md").write_text(f"{n}\n")
    refused = run("bundle", "skills", "-o", "b.bundle", "--target", "claude-ai")
    assert refused.exit_code == 1 and not (repo / "b.bundle").exists()
    assert f"skills/{GOOD[3]}/SKILL.md: error: [target-too-many-files]" in refused.stderr
    assert "b.bundle" not in refused.stderr.splitlines()[0]  # the skill is named, not the file
    kept = run("bundle", "skills", "-o", "b.bundle", "--target", "claude-ai", "-k")
    assert kept.exit_code == 1 and (repo / "b.bundle").exists()
    assert f"skipped skills/{GOOD[3]}: skill '{GOOD[3]}' cannot be bundled for claude-ai" in (
        kept.stderr)
    assert GOOD[3] not in rt.load((repo / "b.bundle").read_bytes()).names
