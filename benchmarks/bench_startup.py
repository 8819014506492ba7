"""Start-up of the `skillpack` command line, whole processes, against a bare interpreter.

Usage::

    PYTHONPATH=$PWD /work/main/.venv/bin/python benchmarks/bench_startup.py [--runs 20]
        [--parts] [--against CHECKOUT]

The commands run round-robin, in a shuffled order each round after two warm-up rounds:
``python -c pass`` (the bare interpreter), ``skillpack --version``, ``skillpack check
fixtures/waitlist``, ``skillpack digest fixtures/waitlist`` (also read without click;
``skillpack`` is the console script pip writes, as users run it), the floor ``python -c
"import click, yaml, re2, blake3, pathspec"`` (the third-party libraries the command line
stands on, which no change to skillpack can make cheaper) and check's own floor ``import
re2, blake3`` (`check` with plain arguments runs without click, skillpack.cli.quick_argv; a
usual skill's frontmatter is read without YAML; pathspec is `pack`'s). With ``--parts``,
each library of the floor is also timed alone (``python -c "import click"``...), and the
standard library's costliest modules check imports (``hashlib``, ``json``) and those it
imports only where used (``typing``, ``threading, queue``, ``tarfile, zipfile``,
``base64``), and check's and digest's imports without the command (``import
skillpack.cli.check_report``, ``import skillpack.cli.digest_report``). ``--against
CHECKOUT`` times another checkout's ``--version``, ``check`` and ``digest`` in the same
rounds (before and after a change, interleaved). Each is a fresh process timed by this one.

Printed: each command's median wall-clock time, its cost over the bare interpreter and its
ratio to it, and its median CPU time (user + system, of the process alone: steadier than
wall-clock on a loaded machine) over the bare interpreter's; ``check`` also with its cost
over each floor (what skillpack itself adds).
Bytecode caching is on, as an installed skillpack has it (``PYTHONDONTWRITEBYTECODE`` is
dropped; the cache goes to a temporary ``PYTHONPYCACHEPREFIX``, not into the repository).
Every command runs in a throwaway venv that finds skillpack and its dependencies through a
.pth file, as a wheel install does, and ``skillpack`` is pip's console script for the entry
point (`bench_build.cli_command`): not the dev venv, whose editable finder imports pathlib,
re, contextlib and urllib.parse (about 24 ms) into every interpreter, the bare one
included, so that what `check` imports of them looked free; not ``python -m skillpack``,
which adds runpy. Figures before 2026-12-01 19:10 were measured in the dev venv with
``python -m skillpack``.

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
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_build import cli_command  # noqa: E402

TARGETS = {"--version": 25.0, "check": 60.0}  # ms over the bare interpreter


#: The third-party libraries the command line imports: the floor no change to skillpack can
#: lower. `check` of a usual skill imports only re2 and blake3 (CHECK_FLOOR): its arguments
#: are read without click, its frontmatter without YAML, and pathspec is `pack`'s.
FLOOR = ("click", "yaml", "re2", "blake3", "pathspec")
CHECK_FLOOR = ("re2", "blake3")
#: Costly standard-library modules `check` once imported, timed alone with ``--parts``:
#: SHA-256 (hashlib: OpenSSL) and json (the manifest whose size the limits measure is now
#: written by `_json`'s C encoder, without `json`).
CHECK_STDLIB = ("hashlib", "json")
#: Costly modules `check` of a usual skill no longer imports (each is imported where it is
#: used: typing only for the type checker, a large file's thread, an archive inside a skill,
#: a secret rule's match).
DEFERRED = ("typing", "threading, queue", "tarfile, zipfile", "base64")

Command = tuple[list[str], dict[str, str]]


def _commands(env: dict[str, str], parts: bool, against: Path | None,
              script: str) -> dict[str, Command]:
    py = str(Path(script).with_name("python"))
    fixture = str(ROOT / "fixtures" / "waitlist")
    commands = {
        "bare": ([py, "-c", "pass"], env),
        "--version": ([script, "--version"], env),
        "check": ([script, "check", fixture], env),
        "digest": ([script, "digest", fixture], env),
        "floor": ([py, "-c", f"import {', '.join(FLOOR)}"], env),
        "check's floor": ([py, "-c", f"import {', '.join(CHECK_FLOOR)}"], env),
    }
    if parts:
        commands.update({f"import {lib}": ([py, "-c", f"import {lib}"], env)
                         for lib in (*FLOOR, *CHECK_STDLIB, *DEFERRED)})
        commands["check's imports"] = (
            [py, "-c", "import skillpack.cli.check_report"], env)
        commands["digest's imports"] = (
            [py, "-c", "import skillpack.cli.digest_report"], env)
    if against is not None:  # another checkout (the commit before a change), same rounds
        other = dict(env, PYTHONPATH=str(against))
        commands["--version, other"] = ([script, "--version"], other)
        commands["check, other"] = ([script, "check", fixture], other)
        commands["digest, other"] = ([script, "digest", fixture], other)
    return commands


def _time(command: Command, cwd: str) -> tuple[float, float]:
    """Wall-clock and CPU (user + system) milliseconds of one run of `command`."""
    argv, env = command
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(child.pid, 0)
    child.returncode = 0  # reaped here, not by Popen
    wall = (time.perf_counter() - start) * 1000
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--parts", action="store_true",
                        help="also time each library of the floor alone")
    parser.add_argument("--against", type=Path, metavar="CHECKOUT",
                        help="also time --version, check and digest of another checkout of "
                             "skillpack "
                             "(e.g. `git archive COMMIT | tar -x -C DIR`) in the same rounds")
    args = parser.parse_args()
    cache = tempfile.TemporaryDirectory(prefix="skillpack-bench-pycache-")
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONPYCACHEPREFIX=cache.name)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # The console script of an installed skillpack and its interpreter (bench_build's
    # cli_command), not this interpreter: a dev venv's editable finder imports pathlib, re,
    # contextlib and urllib.parse at every start, so its bare interpreter already held
    # what `check` imports; and `python -m` adds runpy, which the console script does not.
    script = cli_command()[0]
    commands = _commands(env, args.parts, args.against, script)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for round_ in range(args.runs + 2):
        order = list(commands)
        random.shuffle(order)
        for name in order:
            # run from the cache folder: `-m` puts the working folder first on sys.path,
            # and a checkout there would shadow PYTHONPATH
            wall, cpu = _time(commands[name], cache.name)
            if round_ >= 2:
                walls[name].append(wall)
                cpus[name].append(cpu)
    bare = statistics.median(walls["bare"])
    bare_cpu = statistics.median(cpus["bare"])
    floors = {name: statistics.median(walls[name]) for name in ("floor", "check's floor")}
    print(f"{'command':<17} {'median ms':>10} {'over bare':>10} {'ratio':>6} {'cpu ms':>7} "
          f"{'over':>6}  target")
    for name, taken in walls.items():
        median = statistics.median(taken)
        over = median - bare
        cpu = statistics.median(cpus[name])
        target = TARGETS.get(name.partition(",")[0])
        verdict = "" if target is None else (
            f"<= {target:.0f} ms over: {'met' if over <= target else 'MISSED'}")
        if name.startswith("check,") or name == "check":
            verdict += "; over the floors: " + ", ".join(
                f"{median - value:.1f} ({floor})" for floor, value in floors.items())
        print(f"{name:<17} {median:>10.1f} {over:>10.1f} {median / bare:>6.2f} {cpu:>7.1f} "
              f"{cpu - bare_cpu:>6.1f}  {verdict}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    cache.cleanup()


if __name__ == "__main__":
    main()
