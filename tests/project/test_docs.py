"""The documents tell the truth.

- docs/CLI.md has a section for every command of the click app (subcommands of a group such
  as ``export`` included), names each of its options (long form) in that section and each
  argument in its heading, and has no section for a command that does not exist;
- every ``console`` example of README.md and docs/CLI.md runs, in a copy of ``fixtures/``,
  and prints what it shows: text exactly, a JSON document with the same shape (the same keys
  at every level, values of the same type); docs/CLI.md shows the ``--json`` of ``check``,
  ``digest`` and ``verify`` at least; the README's Python examples run as doctests;
- every ``skillpack/...py`` path (or ``source/x.py``), ``skillpack.dotted.name``,
  ``benchmarks/FILE`` and ``tests/...py`` a doc names exists, and no doc names a path of one
  machine.
"""

from __future__ import annotations

import doctest
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib import import_module
from pathlib import Path
from typing import Any

import click
import pytest

from skillpack.cli.app import main

REPO = Path(__file__).resolve().parents[2]
CLI_MD = REPO / "docs" / "CLI.md"
README = REPO / "README.md"
DOCS = [README, *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "benchmarks").glob("*.md")),
        REPO / "fuzz" / "README.md", *sorted((REPO / "fixtures").glob("*/README.md"))]
#: Commands whose ``--json`` docs/CLI.md must show by a console example that runs.
JSON_SHOWN = ("check", "digest", "verify")


def commands() -> dict[str, click.Command]:
    """Every command a user can run, by its words (``check``, ``export oci``)."""
    ctx = click.Context(main)
    found: dict[str, click.Command] = {}

    def walk(group: click.Group, prefix: str) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            assert command is not None, f"{prefix}{name}: listed, not found"
            if isinstance(command, click.Group):
                walk(command, f"{prefix}{name} ")
            else:
                found[prefix + name] = command

    walk(main, "")
    return found


def sections(text: str) -> dict[str, tuple[str, str]]:
    """The ``### `` sections under ``## Commands`` (headings in code blocks are not
    headings): the command words of each heading (its leading lower-case words) → (the
    heading, the section's text)."""
    found: dict[str, tuple[str, str]] = {}
    part, fence, heading, body = False, False, "", []
    for line in [*text.splitlines(), "## end"]:
        fence = fence != line.startswith("```")
        if fence or line.startswith("```") or not line.startswith(("## ", "### ")):
            body.append(line)
            continue
        if part and heading:
            words = re.match(r"[a-z][a-z-]*(?: [a-z][a-z-]*)*", heading)
            found[words.group(0) if words else heading] = (heading, "\n".join(body))
        heading, body = "", []
        if line.startswith("## "):
            part = line == "## Commands"
        else:
            heading = line[4:]
    return found


def undocumented(command: click.Command, heading: str, body: str) -> list[str]:
    """What of `command` its section does not name: an option's long form (anywhere in the
    section), an argument's name (in the heading: ``PATH...`` for ``paths``)."""
    missing = []
    for param in command.params:
        if isinstance(param, click.Argument):
            name = (param.metavar or param.name or "").upper()
            shown = [name] + ([f"{name[:-1]}..."] if param.nargs == -1 and name.endswith("S")
                              else [])
            if not any(re.search(rf"(?<![\w-]){re.escape(s)}(?![\w])", heading) for s in shown):
                missing.append(f"argument {name}")
            continue
        for opt in [*param.opts, *param.secondary_opts]:
            if opt.startswith("--") and not re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])",
                                                      heading + "\n" + body):
                missing.append(f"option {opt}")
    return missing


def test_every_command_has_a_section_in_cli_md() -> None:
    documented = sections(CLI_MD.read_text(encoding="utf-8"))
    assert len(commands()) >= 21
    assert sorted(set(commands()) - set(documented)) == []


def test_every_section_of_cli_md_is_a_command() -> None:
    documented = sections(CLI_MD.read_text(encoding="utf-8"))
    assert sorted(set(documented) - set(commands())) == []


def test_every_option_and_argument_is_in_its_commands_section() -> None:
    documented = sections(CLI_MD.read_text(encoding="utf-8"))
    missing = {name: undocumented(command, *documented[name])
               for name, command in commands().items() if name in documented}
    assert {name: what for name, what in missing.items() if what} == {}


def test_an_option_or_command_added_without_docs_is_caught() -> None:
    added = click.Command("frobnicate", params=[click.Argument(["paths"], nargs=-1),
                                                click.Option(["--fast/--slow"])])
    assert undocumented(added, "frobnicate PATH...", "`--fast` only") == ["option --slow"]
    assert undocumented(added, "frobnicate FILE", "--fast --slow") == ["argument PATHS"]
    text = "## Commands\n\n### check PATH... [--json]\n\ntext\n\n### frob X\n\n## JSON\n"
    assert sorted(sections(text)) == ["check", "frob"]
    assert set(sections(text)) - set(commands()) == {"frob"}


# --- the examples run --------------------------------------------------------------------


def console_steps(text: str) -> list[tuple[str, str]]:
    """Each ``$ COMMAND`` of the ``console`` blocks of `text`, with the output shown under it."""
    steps = []
    for block in re.findall(r"^```console\n(.*?)^```", text, flags=re.M | re.S):
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, _, output = chunk.partition("\n")
            steps.append((command, output))
    return steps


def shape(value: Any) -> Any:
    """The keys at every level and the type of each value (every item of a list)."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    return type(value).__name__


def as_json(text: str) -> Any:
    """`text` as a JSON document, or None when it is not one."""
    if not text.lstrip().startswith(("[", "{")):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding a copy of ``fixtures/``, and a ``skillpack`` on PATH that runs this
    checkout's skillpack with this interpreter; the current folder during the test."""
    shutil.copytree(REPO / "fixtures", tmp_path / "fixtures", symlinks=True)
    bin_dir = tmp_path.parent / f"{tmp_path.name}-bin"
    bin_dir.mkdir()
    script = bin_dir / "skillpack"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m skillpack "$@"\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_steps(steps: list[tuple[str, str]], cwd: Path) -> Iterator[str]:
    """Run each step in `cwd` (stderr with stdout, as a terminal shows them); yield what
    differs from the documents: text compared exactly, JSON by its shape."""
    code = 0
    for command, shown in steps:
        if command.strip() == "echo $?":
            if shown.strip() != str(code):
                yield f"$ {command}: the doc shows {shown.strip()}, the exit code was {code}"
            continue
        done = subprocess.run(["bash", "-c", command], cwd=cwd, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, check=False)
        code = done.returncode
        printed, documented = as_json(done.stdout), as_json(shown)
        if documented is not None:
            if printed is None or shape(printed) != shape(documented):
                yield f"$ {command}: the JSON differs in shape; it prints:\n{done.stdout}"
        elif done.stdout.rstrip("\n") != shown.rstrip("\n"):
            yield f"$ {command}: the doc shows\n{shown}it prints\n{done.stdout}"


def test_cli_md_examples_print_what_they_show(workdir: Path) -> None:
    steps = console_steps(CLI_MD.read_text(encoding="utf-8"))
    json_shown = {m.group(1) for command, _ in steps if "--json" in command
                  for m in [re.match(r"skillpack ([a-z-]+)", command)] if m}
    assert set(JSON_SHOWN) <= json_shown
    assert list(run_steps(steps, workdir)) == []


def test_readme_examples_run_and_print_what_they_show(workdir: Path) -> None:
    text = README.read_text(encoding="utf-8")
    steps = console_steps(text)
    assert len(steps) > 10
    assert list(run_steps(steps, workdir)) == []
    python = "".join(re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S))
    python = re.sub(r"^(?=\n)", "<BLANKLINE>", python, flags=re.M)  # a blank line is output there
    test = doctest.DocTestParser().get_doctest(python, {}, "README.md", str(README), 0)
    assert len(test.examples) > 10
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_the_runner_catches_a_wrong_example(workdir: Path) -> None:
    steps = console_steps(
        "```console\n$ skillpack digest --json fixtures/waitlist\n[{\"name\": \"x\"}]\n"
        "$ echo $?\n1\n$ skillpack files fixtures/release-notes\nSKILL.md\n```\n")
    found = list(run_steps(steps, workdir))
    assert [line.split(":")[0] for line in found] == [
        "$ skillpack digest --json fixtures/waitlist", "$ echo $?",
        "$ skillpack files fixtures/release-notes"]


# --- names in the documents ---------------------------------------------------------------

MODULE_PATH = re.compile(r"(?<![\w./-])skillpack/(?:\w+/)*(?:\w+\.py\b)?")
#: ``skillpack.toml`` is the configuration file's name, not a module.
DOTTED = re.compile(r"(?<![\w./-])skillpack(?!\.toml\b)(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?"
                    r"(?![\w/-])")
#: A module named by its path inside the package (`source/classify.py`), or in a stage folder
#: that no longer exists (`build/`, `spec/`).
STAGE_PATH = re.compile(r"(?<![\w./-])(?:build|spec|formats|storedzip|skillmd|model|runtime|"
                        r"content|source|packing|approve|publish|cli)/(?:\w+/)*\w+\.py\b")
TEST_PATH = re.compile(r"(?<![\w./-])tests/(?:\w+/)*\w+\.py\b")
BENCHMARK = re.compile(r"(?<![\w./-])benchmarks/[\w-]+(?:\.\w+)?")
#: Paths of one machine.
MACHINE = re.compile(r"/work/|/root/|/home/\w")


def dotted_exists(name: str) -> bool:
    """Whether ``skillpack.a.b.C.attr`` names a module, or an attribute of its longest
    module prefix."""
    parts = name.replace(":", ".").split(".")
    for cut in range(len(parts), 0, -1):
        base = REPO.joinpath(*parts[:cut])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            obj: Any = import_module(".".join(parts[:cut]))
            for attr in parts[cut:]:
                if not hasattr(obj, attr):
                    return False
                obj = getattr(obj, attr)
            return True
    return False


def stale_names(text: str) -> list[str]:
    """The module paths, dotted names and benchmark files `text` names that do not exist."""
    stale = [p for p in MODULE_PATH.findall(text) if not (REPO / p).exists()]
    stale += [n for n in DOTTED.findall(text) if not dotted_exists(n)]
    stale += [b for b in BENCHMARK.findall(text) if not (REPO / b).exists()]
    stale += [t for t in TEST_PATH.findall(text) if not (REPO / t).exists()]
    stale += [p for p in STAGE_PATH.findall(text) if not (REPO / "skillpack" / p).exists()]
    return stale


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_module_and_benchmark_a_doc_names_exists(doc: Path) -> None:
    assert stale_names(doc.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_no_doc_names_a_path_of_one_machine(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    assert [line for line in text.splitlines() if MACHINE.search(line)] == []


def test_the_name_checks_catch_stale_names() -> None:
    text = ("see skillpack/build/pack.py, skillpack/source/classify.py, skillpack/cli/, "
            "skillpack.cli.quick_argv, skillpack.source.classify.classify, "
            "skillpack.runtime.Bundle.catalog_text, `dev.skillpack.skill.digest`, "
            "skillpack.cli:run, skillpack._launch:run, "
            "https://skillpack.dev/approval/v1, benchmarks/issue18.py, benchmarks/run.py, "
            "`source/inputs.py`, `source/classify.py`, build/pathtext.py, "
            "tests/test_quick_argv.py, tests/conftest.py.")
    assert stale_names(text) == ["skillpack/build/pack.py", "skillpack.cli.quick_argv",
                                 "skillpack.cli:run",
                                 "benchmarks/issue18.py", "tests/test_quick_argv.py",
                                 "source/inputs.py", "build/pathtext.py"]
    assert MACHINE.search("python /work/venv/bin/x") and not MACHINE.search("../shared/corpus")


def test_the_readme_and_performance_page_stay_short() -> None:
    readme = README.read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 200
    speed = readme.split("\n## Speed\n", 1)[1].split("\n## ", 1)[0].strip().splitlines()
    assert len(speed) == 6 and "(docs/PERFORMANCE.md)" in speed[-1]
    performance = (REPO / "docs" / "PERFORMANCE.md").read_text(encoding="utf-8")
    assert len(performance.splitlines()) < 250
