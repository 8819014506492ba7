"""Programs as they run: wrappers unwrapped, dynamic programs and shell syntax in run words."""

from __future__ import annotations

import pytest

from skillpack.skillmd.commands import WRAPPERS, effective_program, run_problems, shell_syntax
from skillpack.skillmd.skill import parse_skill


@pytest.mark.parametrize(("argv", "program", "wrappers"), [
    ("env curl https://x", "curl", ("env",)),
    ("timeout 5 wget https://x", "wget", ("timeout",)),
    ("timeout -k 3 -s TERM 5 wget u", "wget", ("timeout",)),
    ("timeout --kill-after=3 5s wget u", "wget", ("timeout",)),
    ("env -i -u HOME -C /tmp -- LANG=C python3 x.py", "python3", ("env",)),
    ("env - PATH=/bin ls", "ls", ("env",)),
    ("nice -n 10 make", "make", ("nice",)),
    ("nice -5 make", "make", ("nice",)),
    ("nohup rsync a b", "rsync", ("nohup",)),
    ("time -p ls", "ls", ("time",)),
    ("stdbuf -oL -e 0 grep x", "grep", ("stdbuf",)),
    ("setsid -f node server.js", "node", ("setsid",)),
    ("xargs -0 -I {} -n 1 -P 4 rm {}", "rm", ("xargs",)),
    ("xargs", "echo", ("xargs",)),
    ("sudo -u bob -- git status", "git", ("sudo",)),
    ("doas -u root apk add x", "apk", ("doas",)),
    ("chrt -f 10 ffmpeg", "ffmpeg", ("chrt",)),
    ("ionice -c 2 -n 7 tar c .", "tar", ("ionice",)),
    ("taskset -c 0,1 ffmpeg", "ffmpeg", ("taskset",)),
    ("flock -w 5 /tmp/lock curl u", "curl", ("flock",)),
    ("exec -a name bash", "bash", ("exec",)),
    ("/usr/bin/env node x", "node", ("/usr/bin/env",)),
    ("sudo env FOO=1 timeout 5 curl u", "curl", ("sudo", "env", "timeout")),
    ("nohup setsid nice -n 5 stdbuf -o0 python3 x", "python3",
     ("nohup", "setsid", "nice", "stdbuf")),
])
def test_wrappers_report_the_program_they_start(
    argv: str, program: str, wrappers: tuple[str, ...]
) -> None:
    found = effective_program(argv.split())
    assert (found.program, found.wrappers) == (program, wrappers)
    assert not found.dynamic


def test_the_chain_and_assignments_are_kept_as_context() -> None:
    found = effective_program(["sudo", "env", "FOO=1", "BAR=2", "timeout", "5", "curl", "u"])
    assert found.context == "via sudo, env, timeout"
    assert found.assignments == ("FOO=1", "BAR=2")
    assert found.index == 6


def test_env_split_string_reads_the_program_inside_it() -> None:
    found = effective_program(["env", "-S", "python3 -u", "x.py"])
    assert found.program == "python3"
    assert found.index is None  # no single argv word is the program


@pytest.mark.parametrize("argv", ["env", "sudo -l", "command -v git", "timeout 5"])
def test_a_wrapper_that_starts_nothing_is_itself_the_program(argv: str) -> None:
    found = effective_program(argv.split())
    assert found.program == argv.split()[0]
    assert found.wrappers == ()


@pytest.mark.parametrize("argv", ["$prog x", "sudo $prog", "env A=1 $tool", "timeout 5 $cmd",
                                  "env $maybe_assignment x"])
def test_a_param_where_the_program_is_is_dynamic(argv: str) -> None:
    assert effective_program(argv.split()).dynamic


@pytest.mark.parametrize("argv", ["timeout $seconds curl u", "sudo -u $user git", "env A=$v ls",
                                  "$$HOME/bin/tool"])
def test_params_in_wrapper_options_are_not_a_dynamic_program(argv: str) -> None:
    assert not effective_program(argv.split()).dynamic


def test_every_documented_wrapper_unwraps() -> None:
    for name, wrapper in WRAPPERS.items():
        operands = ["1"] * wrapper.operands
        assert effective_program([name, *operands, "curl"]).program == "curl", name


def _tool(run: str) -> str:
    return f"""---
skill: t
description: A tool. Use when testing.
---

```tool
id: go
description: Go.
params:
  x:
    type: string
run: {run}
```
"""


def test_run_problems_warn_for_a_dynamic_program_and_name_the_chain() -> None:
    skill = parse_skill(_tool("sudo $x --help"), file="SKILL.md")
    problems = run_problems(skill.tools[0], "SKILL.md")
    assert [(p.severity, p.code, p.line) for p in problems] == [
        ("warning", "program-dynamic", 6)]
    assert "via sudo" in problems[0].message and "'$x'" in problems[0].message


def test_run_problems_point_out_shell_syntax_reaching_the_program_literally() -> None:
    skill = parse_skill(_tool("grep $x data.txt | wc -l > out.txt"), file="SKILL.md")
    problems = run_problems(skill.tools[0], "SKILL.md")
    assert [p.code for p in problems] == ["run-shell-syntax", "run-shell-syntax"]
    assert "run word 4 '|'" in problems[0].message
    assert "literal argument" in problems[0].message
    assert "run word 7 '>'" in problems[1].message


@pytest.mark.parametrize(("word", "what"), [
    ("&&", "operator"), ("||", "operator"), (";", "operator"), (">>", "operator"),
    ("2>&1", "operator"), ("2>/dev/null", "redirection"), (">out", "redirection"),
    ("`date`", "backtick"), ("$(date)", "'$('"), ("${HOME}", "'${'"), ("'quoted", "quotes"),
    ('end"', "quotes"), ("~/notes", "'~'"),
])
def test_shell_syntax_is_named(word: str, what: str) -> None:
    found = shell_syntax(word)
    assert found is not None and what in found


@pytest.mark.parametrize("word", ["*.py", "--format=%s", "s/a/b/", "$$3", "{print}",
                                  "key=value", "-", "https://x.example/?a=1&b=2"])
def test_ordinary_words_are_not_shell_syntax(word: str) -> None:
    assert shell_syntax(word) is None


@pytest.mark.parametrize(("word", "operator"), [
    ("$msg;", ";"), ("a|b", "|"), ("x>y", ">"), ("job&", "&"), ("a&&b", "&&")])
def test_an_operator_glued_in_a_run_string_word_is_named(word: str, operator: str) -> None:
    """A shell would have split the word at the operator (issue 30 item 8), so it is reported
    as a whole operator word is; a YAML list's word (`grep -E 'a|b'`) is taken as meant."""
    assert shell_syntax(word) == f"glued to the shell operator '{operator}'"
    assert shell_syntax(word, string_form=False) is None


def test_quotes_inside_a_list_word_are_intended() -> None:
    assert shell_syntax('print("hi")', string_form=False) is None
    assert shell_syntax("'x'", string_form=False) is None


@pytest.mark.parametrize("run", ["sh -c $x", "bash -lc $x", "timeout 5 python3 -c $x",
                                 "node -e $x", "env A=1 perl -e $x"])
def test_inline_code_filled_by_a_model_is_a_warning(run: str) -> None:
    skill = parse_skill(_tool(run), file="SKILL.md")
    assert [p.code for p in run_problems(skill.tools[0])] == ["run-code-dynamic"]


@pytest.mark.parametrize("run", ["sh scripts/go.sh $x", "python3 -c print(1) $x",
                                 "node app.js -e $x"])
def test_a_fixed_script_or_fixed_code_is_not_dynamic_code(run: str) -> None:
    skill = parse_skill(_tool(run), file="SKILL.md")
    assert [p.code for p in run_problems(skill.tools[0])] == []
