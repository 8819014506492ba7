"""Start-up of the `skillpack` command line, whole processes, against a bare interpreter.

Usage::

    PYTHONPATH=$PWD /work/main/.venv/bin/python benchmarks/bench_startup.py [--runs 20] [--parts]

The commands run round-robin, in a shuffled order each round after two warm-up rounds:
``python -c pass`` (the bare interpreter), ``python -m skillpack --version``,
``python -m skillpack check fixtures/waitlist``, and the floor: ``python -c "import click,
yaml, re2, blake3, pathspec"``, the third-party libraries skillpack's command line stands
on, which no change to skillpack can make cheaper (``check`` imports all but pathspec;
pathspec, a few ms, is `pack`'s). With ``--parts``, each of those libraries is also timed
alone (``python -c "import click"``...). Each is a fresh process timed by this one.
Medians are printed with each command's cost over the bare interpreter and its ratio to it;
``check`` also with its cost over the floor (skillpack's own share).
Bytecode caching is on, as an installed skillpack has it (``PYTHONDONTWRITEBYTECODE`` is
dropped; the cache goes to a temporary ``PYTHONPYCACHEPREFIX``, not into the repository).

Targets (issue 12): ``--version`` at most 25 ms over bare, ``check`` of one small skill at
most 60 ms over bare. A measurement, not a test: the exit status is 0 either way. For where
the time goes: ``python -X importtime -m skillpack check fixtures/waitlist``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"--version": 25.0, "check": 60.0}  # ms over the bare interpreter


#: The third-party libraries the command line imports (check: all but pathspec).
FLOOR = ("click", "yaml", "re2", "blake3", "pathspec")


def _commands(parts: bool) -> dict[str, list[str]]:
    py = sys.executable
    commands = {
        "bare": [py, "-c", "pass"],
        "--version": [py, "-m", "skillpack", "--version"],
        "check": [py, "-m", "skillpack", "check", str(ROOT / "fixtures" / "waitlist")],
        "floor": [py, "-c", f"import {', '.join(FLOOR)}"],
    }
    if parts:
        commands.update({f"import {lib}": [py, "-c", f"import {lib}"] for lib in FLOOR})
    return commands


def _time(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--parts", action="store_true",
                        help="also time each library of the floor alone")
    args = parser.parse_args()
    cache = tempfile.TemporaryDirectory(prefix="skillpack-bench-pycache-")
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONPYCACHEPREFIX=cache.name)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    commands = _commands(args.parts)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    times: dict[str, list[float]] = {name: [] for name in commands}
    for round_ in range(args.runs + 2):
        order = list(commands)
        random.shuffle(order)
        for name in order:
            took = _time(commands[name], env)
            if round_ >= 2:
                times[name].append(took)
    bare = statistics.median(times["bare"])
    floor = statistics.median(times["floor"])
    print(f"{'command':<16} {'median ms':>10} {'over bare':>10} {'ratio':>6}  target")
    for name, taken in times.items():
        median = statistics.median(taken)
        over = median - bare
        target = TARGETS.get(name)
        verdict = "" if target is None else (
            f"<= {target:.0f} ms over: {'met' if over <= target else 'MISSED'}")
        if name == "check":
            verdict += f"; {median - floor:.1f} ms over the floor"
        print(f"{name:<16} {median:>10.1f} {over:>10.1f} {median / bare:>6.2f}  {verdict}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    cache.cleanup()


if __name__ == "__main__":
    main()
