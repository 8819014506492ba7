"""How long parsing takes on large and hostile SKILL.md files, and on hostile model answers.

    python benchmarks/bench_parse.py [--repeat N]

Prints the best and median of N runs (default 5) for each input, built here in memory:

* a 1 MB SKILL.md in three shapes (prose; 1,200 tool fences; fences nested in longer fences)
  must parse in well under a second;
* YAML aliases (billion laughs, alias bombs), oversized frontmatter (just over 64 KiB, 1 MB,
  10 MB never closed) and deep nesting must be refused quickly, before anything expands;
* hostile model answers (a megabyte of braces, a call nested 100,000 deep, 100,000 call
  starts) must be refused or read quickly by `resolve`.

The tests (tests/hostile/test_parsers.py) prove the refusals without timing them; this
script gives the times. No assertion: it reports.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from skillpack.errors import SkillError
from skillpack.model.calls import resolve
from skillpack.skillmd.frontmatter import MAX_FRONTMATTER_BYTES
from skillpack.skillmd.skill import parse_skill
from skillpack.source.load import parse_skill_file

REPO = Path(__file__).resolve().parent.parent
HEAD = "---\nname: demo\ndescription: A demo skill used to time the parser.\n---\n\n"
FENCE = ("```tool\nid: hello{i}\ndescription: Say hello.\nparams:\n  who:\n    type: string\n"
         "    default: world\nrun: python3 scripts/run.py --who $who\n```\n")


def megabyte_prose() -> str:
    line = "Prose with `code`, *emphasis*, $dollars and [links](https://example.com).\n"
    return HEAD + line * (1_000_000 // len(line) + 1)


def megabyte_of_tools() -> str:
    section = "## Section\n\n" + "Some prose about the tool below.\n" * 20
    return HEAD + "".join(section + FENCE.format(i=i) for i in range(1200))


def megabyte_of_nested_fences() -> str:
    block = "````markdown\n```tool\nid: shown\n```\n````\n" + "```\nunclosed?\n```\n"
    return HEAD + block * (1_000_000 // len(block) + 1)


def laughs(levels: int) -> str:
    lines = ["name: demo", "description: lol", 'a: &a ["lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        prev, this = chr(96 + i), chr(97 + i)
        lines.append(f"{this}: &{this} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "---\n" + "\n".join(lines) + "\n---\nBody\n"


def parse_cases() -> dict[str, str]:
    big = "x" * MAX_FRONTMATTER_BYTES
    return {
        "1 MB SKILL.md, prose": megabyte_prose(),
        "1 MB SKILL.md, 1,200 tool fences": megabyte_of_tools(),
        "1 MB SKILL.md, nested fences": megabyte_of_nested_fences(),
        "billion laughs (9 levels)": laughs(9),
        "alias bomb, 30 aliases of one anchor": "---\nname: demo\na: &a [x]\n"
        + "".join(f"k{i}: *a\n" for i in range(30)) + "---\nBody\n",
        "frontmatter just over 64 KiB": f"---\nname: demo\ndescription: {big}\n---\nBody\n",
        "frontmatter of 1 MB": "---\nname: demo\n" + "k: v\n" * 250_000 + "---\nBody\n",
        "10 MB, frontmatter never closed": "---\nname: demo\n" + "k: v\n" * 2_500_000,
        "flow lists nested 30,000 deep": "---\nname: demo\nd: " + "[" * 30_000 + "]" * 30_000
        + "\n---\nBody\n",
        "flow maps nested 10,000 deep": "---\nname: demo\nd: " + "{a: " * 10_000 + "}" * 10_000
        + "\n---\nBody\n",
    }


def answer_cases() -> dict[str, str]:
    return {
        "a megabyte of '{'": "{" * 1_000_000,
        "100,000 '{\"' pairs": '{"' * 100_000,
        "a call nested 100,000 deep": '{"tool": "list", "args": ' + "[" * 100_000 + "]" * 100_000
        + "}",
        "a call after a megabyte of prose": "x" * 1_000_000 + '{"tool": "list", "args": {}}',
        "100,000 call starts": "{tool: " * 100_000,
        "an unterminated 1 MB string": '{"tool": "join", "args": {"email": "' + "a" * 1_000_000,
    }


def timed(func: Callable[[], object], repeat: int) -> tuple[float, float, str]:
    times = []
    outcome = ""
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            result = func()
            outcome = "parsed" if result is not None else "no call"
        except SkillError as err:
            outcome = f"refused: {err.problems[0].code if err.problems else err.message[:40]}"
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times), outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    waitlist = parse_skill_file(REPO / "fixtures" / "waitlist")
    parse_skill("---\nname: warm\ndescription: up\n---\n")  # import YAML before timing
    print(f"{'input':42} {'size':>10} {'best':>9} {'median':>9}  outcome")
    for name, text in parse_cases().items():
        best, median, outcome = timed(partial(parse_skill, text), args.repeat)
        print(f"{name:42} {len(text.encode()):>10,} {best * 1e3:>7.1f}ms {median * 1e3:>7.1f}ms"
              f"  {outcome}")
    print()
    for name, text in answer_cases().items():
        best, median, outcome = timed(partial(resolve, waitlist, text), args.repeat)
        print(f"resolve: {name:33} {len(text.encode()):>10,} {best * 1e3:>7.1f}ms "
              f"{median * 1e3:>7.1f}ms  {outcome}")


if __name__ == "__main__":
    main()
