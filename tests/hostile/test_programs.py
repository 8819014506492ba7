"""The programs list must name what really runs, whatever the author writes around it.

* `env` is read as env reads its argv (clustered short options, ``-S``/``--split-string`` and
  its unique prefixes, ``-u NAME``, ``-C DIR``, ``--``), in tool templates, `#!` lines and
  commands that run at load: ``env -iS 'perl -w' true`` runs perl, not true;
* an ``allowed-tools`` entry is read by one parser on both sides
  (`skillpack.formats.allowed_tools`): the program the runtime's policy lets a model start
  is the program `skillpack programs` lists (``Bash (curl:*)`` is curl; ``Bash(env
  python3:*)`` is python3 via env), and an entry open where a wrapper's program goes
  (``Bash(env:*)``) is listed dynamic.

Each skill is built here; the proof of bounds counts sizes (memory peaks), not time.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from helpers.hostile import TALLY, run_cli
from helpers.skills import make_tree

import skillpack.formats.allowed_tools
import skillpack.runtime.policy
from skillpack.runtime.policy import Policy, skill_rules
from skillpack.skillmd.commands import effective_program
from skillpack.skillmd.programs import allowed_tool_program, shebang_program

#: (tool run words, the program that runs, the word a naive reading lists instead)
ENV_TEMPLATES = [
    (["env", "-iS", "perl -w", "true"], "perl", "true"),
    (["env", "--split=perl -w", "true"], "perl", "true"),
    (["env", "--spl", "perl -w", "true"], "perl", "true"),
    (["env", "-S", "-iu python3 perl"], "perl", "python3"),
    (["env", "-iu", "python3", "perl", "x.pl"], "perl", "python3"),
    (["env", "-uHOME", "-C", "/tmp", "ruby", "x.rb"], "ruby", "/tmp"),
    (["env", "--unset", "HOME", "--chdir=/", "node"], "node", "HOME"),
    (["env", "-i0", "--", "A=1", "curl", "u"], "curl", "A=1"),
    (["env", "-S", "-S 'curl -s' u"], "curl", "-S"),
    (["sudo", "env", "-iS", "timeout 5 wget u", "true"], "wget", "true"),
]

#: (`#!` line, the program that runs)
SHEBANGS = [
    ("#!/usr/bin/env -S -iu python3 perl", "perl"),
    ("#!/usr/bin/env --split-string=perl -w", "perl"),
    ("#!/usr/bin/env --split=perl -w", "perl"),
    ("#!/usr/bin/env -iS perl -w", "perl"),
    ("#!/usr/bin/env -S -C /tmp ruby", "ruby"),
    ("#!/usr/bin/env -S A=1 -u B node", "-u"),  # env reads no option after NAME=VALUE
]

#: (allowed-tools entry, argv the runtime permits, the program listed, its via, dynamic)
ENTRIES = [
    ("Bash (curl:*)", ["curl", "-s", "u"], "curl", [], False),
    ("Bash\t(wget:*)", ["wget", "u"], "wget", [], False),
    ("Bash(env python3:*)", ["env", "python3", "-c", "x"], "python3", ["env"], False),
    ("Bash(timeout 5 node:*)", ["timeout", "5", "node", "x.js"], "node", ["timeout"], False),
    ("Bash(env:*)", ["env", "curl", "u"], "env", [], True),
    ("Bash(timeout 5:*)", ["timeout", "5", "curl", "u"], "timeout", [], True),
    ("Bash(sudo -u bob env:*)", ["sudo", "-u", "bob", "env", "sh"], "env", ["sudo"], True),
    ("Bash( git status )", ["git", "status"], "git", [], False),
]


def programs_of(skill: Path) -> dict[str, dict[str, object]]:
    result = run_cli("programs", "--json", skill)
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.output)
    return {p["name"]: p for p in entry["programs"]} | {
        f"at-load:{m['program']}": m for m in entry["mentioned"]}


def yaml_list(words: list[str]) -> str:
    return "".join(f"\n  - {w}" for w in words)


@pytest.mark.parametrize(("words", "runs", "naive"), ENV_TEMPLATES,
                         ids=[" ".join(w) for w, _, _ in ENV_TEMPLATES])
def test_env_options_name_the_program_that_runs(words: list[str], runs: str, naive: str,
                                                tmp_path: Path) -> None:
    assert effective_program(words).program == runs
    line = " ".join(json.dumps(w) if " " in w else w for w in words)
    skill = make_tree(tmp_path / "s", {"SKILL.md": (
        "---\nname: s\ndescription: Runs one program. Use it in tests.\n---\n\n"
        f"!`{line}`\n\n```tool\nid: t\ndescription: x\nrun:{yaml_list(words)}\n```\n")})
    listed = programs_of(skill)
    assert runs in listed and listed[runs]["sources"] == ["tool:t"], listed
    assert naive not in listed and f"at-load:{naive}" not in listed, listed
    assert f"at-load:{runs}" in listed, listed
    for entry in ("tool template", "run at load"):
        TALLY.handled("parser", f"env argv {line!r}", f"programs ({entry})")


@pytest.mark.parametrize(("line", "runs"), SHEBANGS, ids=[s for s, _ in SHEBANGS])
def test_a_shebang_env_line_names_the_program_that_runs(line: str, runs: str,
                                                        tmp_path: Path) -> None:
    assert shebang_program(line.encode() + b"\n") == runs
    skill = make_tree(tmp_path / "s", {
        "SKILL.md": "---\nname: s\ndescription: Carries a script. Use it in tests.\n---\n",
        "scripts/x": line + "\nprint 1;\n"})
    (skill / "scripts" / "x").chmod(0o755)
    assert programs_of(skill)[runs]["sources"] == ["shebang:scripts/x"]
    TALLY.handled("parser", f"shebang {line!r}", "programs")


def test_one_parser_reads_allowed_tools_on_both_sides() -> None:
    assert skillpack.runtime.policy.parse_entry is skillpack.formats.allowed_tools.parse_entry
    assert skillpack.runtime.policy.Rule is skillpack.formats.allowed_tools.Rule


@pytest.mark.parametrize(("entry", "argv", "name", "via", "dynamic"), ENTRIES,
                         ids=[e for e, *_ in ENTRIES])
def test_what_the_policy_permits_is_what_the_programs_list_shows(
        entry: str, argv: list[str], name: str, via: list[str], dynamic: bool,
        tmp_path: Path) -> None:
    policy = Policy([skill_rules([entry])])
    assert policy.permits("Bash", argv)
    assert allowed_tool_program(entry) == (name, dynamic, tuple(via))
    front = f"allowed-tools:\n  - {json.dumps(entry)}\n"
    skill = make_tree(tmp_path / "s", {"SKILL.md": (
        f"---\nname: s\ndescription: Allows one command. Use it in tests.\n{front}---\n")})
    listed = programs_of(skill)[name]
    assert (listed["sources"], listed.get("via", []), listed["dynamic"]) == (
        ["allowed-tools"], via, dynamic)
    if not dynamic:  # the program the policy lets start is the one listed
        assert effective_program(argv).program == name
    TALLY.handled("parser", f"allowed-tools {entry!r}", "programs and policy")


@pytest.mark.parametrize("size", [1_000, 10_000, 100_000])
def test_env_reads_a_long_argv_in_memory_of_its_size(size: int) -> None:
    """Options by the thousand and ``-S`` strings nested in each other are read once each:
    the memory peak stays a fixed multiple of the argv."""
    flat = ["env", *["-i"] * size, "curl"]
    deep = ["env", "-S", " ".join(["-S"] * size + ["-iS 'curl -s'"])]  # each -S splits the next
    for words, runs in ((flat, "curl"), (deep, "curl")):
        tracemalloc.start()
        try:
            found = effective_program(words)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert found.program == runs
        assert peak < 200 * sum(len(w) + 1 for w in words) + 100_000, (size, peak)
    TALLY.handled("parser", f"env with {size:,} options", "effective_program")
