"""What the workloads share: the trees under test, timing whole processes, the lines and table.

A *tree* is a skillpack source tree installed as a wheel install finds it: a throwaway venv
whose one .pth file names the tree and the site-packages of the interpreter running the
suite (skillpack's dependencies, skills-ref), and pip's console scripts for its entry points.
Every tree, this one and a revision of ``--against``, runs the same way, with its bytecode
kept in a temporary cache (as an installed skillpack has its .pyc files): not the dev venv's
editable finder, which imports pathlib and re into every interpreter it starts.

A *command* is a whole process. `measure` runs a group's commands in rounds, each round in a
new shuffled order (so load on the machine falls on all of them alike), after untimed warm-up
rounds, and keeps each run's wall time and peak RSS (``os.wait4``'s ``ru_maxrss``). A *line*
sets one skillpack command beside its peer (another tool doing that work) or its yardstick
(another skillpack command), by the ratio of their medians.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
MiB = 1 << 20

#: What pip writes for a console script (its entry point: MODULE:FUNCTION).
CONSOLE_SCRIPT = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from {module} import {function}
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit({function}())
"""


class BenchError(Exception):
    """A command of the suite failed: its figures would mean nothing."""


def default_corpus() -> Path | None:
    """``$SKILLPACK_CORPUS``, else ``../shared/corpus`` beside the repository, if it exists."""
    found = Path(os.environ.get("SKILLPACK_CORPUS") or REPO.parent / "shared" / "corpus")
    return found.resolve() if found.is_dir() else None


# -- trees --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Tree:
    """A skillpack tree installed for the suite."""

    label: str  # how the table names it: "new" (this tree) or "old" (--against)
    name: str  # what it is: "this tree" or the revision
    root: Path
    bin: Path  # the venv's bin/: python, skillpack, agentskills
    env: dict[str, str]

    @property
    def python(self) -> str:
        return str(self.bin / "python")

    def skillpack(self, *args: str | Path) -> list[str]:
        return [str(self.bin / "skillpack"), *map(str, args)]


def install(root: Path, venv: Path, label: str, name: str, pycache: Path) -> Tree:
    """Install the tree at `root` into a new venv at `venv` (see the module's docstring)."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], check=True, capture_output=True, text=True)
    here = sysconfig.get_paths()
    deps = dict.fromkeys([here["purelib"], here["platlib"]])  # ordered, once each
    Path(site.stdout.strip(), "skillpack-bench.pth").write_text(
        "\n".join([str(root), *deps]) + "\n", encoding="utf-8")
    scripts = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    entry = {"skillpack": scripts["project"]["scripts"]["skillpack"],
             "agentskills": "skills_ref.cli:main"}  # skills-ref's, as pip writes it
    for script, point in entry.items():
        module, function = point.split(":")
        path = venv / "bin" / script
        path.write_text(CONSOLE_SCRIPT.format(python=python, module=module, function=function),
                        encoding="utf-8")
        path.chmod(0o755)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME")}
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    tree = Tree(label, name, root, venv / "bin", env)
    subprocess.run([tree.python, "-m", "compileall", "-q", str(root / "skillpack")], env=env,
                   cwd=venv, check=True, stdout=subprocess.DEVNULL)  # into PYTHONPYCACHEPREFIX
    found = subprocess.run(tree.skillpack("--version"), env=env, cwd=venv, capture_output=True,
                           text=True, check=False)
    if found.returncode:
        raise BenchError(f"{name}: `skillpack --version` failed: {found.stderr.strip()}")
    return tree


def export(revision: str, dest: Path) -> Path:
    """The files of `revision` of this repository at `dest` (``git archive``: nothing is
    registered in the repository, and removing `dest` removes it all)."""
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", revision],
                             capture_output=True, check=False)
    if archive.returncode:
        raise BenchError(f"git archive {revision}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


def revision_name(revision: str) -> str:
    found = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", revision],
                           capture_output=True, text=True, check=False)
    return found.stdout.strip() or revision


# -- measuring ----------------------------------------------------------------------------------

@dataclass
class Command:
    """One whole process to time; `before` runs untimed before each run (clean its output)."""

    argv: list[str]
    env: dict[str, str] | None = None
    cwd: Path | None = None
    before: Callable[[], object] | None = None
    ok: tuple[int, ...] = (0,)


@dataclass
class Sample:
    walls: list[float] = field(default_factory=list)  # seconds
    peaks: list[int] = field(default_factory=list)  # bytes

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def peak(self) -> int:
        return int(statistics.median(self.peaks))


#: GNU time runs each command and writes its peak RSS: a small parent, so the figure is the
#: command's own (a child forked from this Python process would report at least this
#: process's RSS, which Linux carries into the child's peak across exec).
TIME = "/usr/bin/time"


def run_once(command: Command, scratch: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS of one run of `command` (its output discarded)."""
    if command.before is not None:
        command.before()
    os.sync()  # what an earlier command wrote is not flushed on this one's time
    errors, peak = scratch / "stderr", scratch / "peak"
    timed = os.access(TIME, os.X_OK)
    argv = [TIME, "-f", "%M", "-o", str(peak), *command.argv] if timed else command.argv
    with open(errors, "wb") as err:
        start = time.perf_counter()
        child = subprocess.Popen(argv, env=command.env, cwd=command.cwd,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    child.returncode = code = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    if code not in command.ok:
        tail = errors.read_text(errors="replace").strip().splitlines()[-8:]
        raise BenchError(f"exit {code}: {' '.join(command.argv)[:300]}\n" + "\n".join(tail))
    if timed:
        return wall, int(peak.read_text().split()[-1]) * 1024
    return wall, usage.ru_maxrss * 1024


def measure(commands: dict[str, Command], runs: int, warmup: int, scratch: Path,
            progress: Callable[[str], None]) -> dict[str, Sample]:
    """Every command `runs` times, interleaved (see the module's docstring)."""
    samples = {key: Sample() for key in commands}
    order = list(commands)
    rng = random.Random(0)
    for round_no in range(warmup + runs):
        rng.shuffle(order)
        progress(f"round {round_no + 1}/{warmup + runs}" + (" (warm-up)" if round_no < warmup
                                                             else ""))
        for key in order:
            wall, peak = run_once(commands[key], scratch)
            if round_no >= warmup:
                samples[key].walls.append(wall)
                samples[key].peaks.append(peak)
    return samples


# -- lines and the table ------------------------------------------------------------------------

@dataclass(frozen=True)
class Line:
    """One skillpack command (`ours`, run on every tree) beside `beside`: a peer (a command
    run once, tree-independent) or, with `yardstick`, another skillpack command of the same
    tree. `base`, a peer, is subtracted from both sides (a floor such as a bare interpreter).
    With `floor`, `ours` is a peer too (a floor written against this tree's code, which older
    revisions may lack): run once a round, its time shown in every tree's column."""

    workload: str  # the name --only selects
    label: str  # what the table shows for ours
    ours: str
    beside: str
    beside_label: str
    yardstick: bool = False
    base: str | None = None
    floor: bool = False


@dataclass
class Group:
    """The lines on one subject, with the commands they need: `ours(tree)` gives each tree's
    skillpack commands, `peers()` the rest; both are asked after `setup` (untimed, once),
    which makes what they read and returns the subject as the table shows it."""

    subject: str  # what --only's progress calls it
    lines: list[Line]
    setup: Callable[[], str]
    ours: Callable[[Tree], dict[str, Command]]
    peers: Callable[[], dict[str, Command]]
    runs_factor: int = 1  # fast groups take more runs (their medians are noisier)
    #: Unmeasured rounds first, unless --warmup says: one for the fast groups (the first
    #: processes of a run pay for the cold caches); none for the slow ones, whose setup has
    #: read every file they read (and each tree's modules are compiled when installed).
    warmup: int = 0


@dataclass
class Row:
    workload: str
    subject: str
    label: str
    beside_label: str
    ours: dict[str, float]  # tree label -> seconds
    peak: dict[str, int]  # tree label -> bytes
    beside: float
    yardstick: bool

    @property
    def ratio(self) -> float:
        return self.ours["new"] / self.beside if self.beside > 0 else float("nan")

    def to_dict(self) -> dict[str, Any]:
        found = {"workload": self.workload, "subject": self.subject, "skillpack": self.label,
                 "seconds": self.ours, "peak_rss_bytes": self.peak, "beside": self.beside_label,
                 "beside_seconds": self.beside, "yardstick": self.yardstick,
                 "ratio": self.ratio}
        if "old" in self.ours:
            found["new_over_old"] = self.ours["new"] / self.ours["old"]
        return found


def run_group(group: Group, trees: Sequence[Tree], selected: Iterable[str], runs: int,
              warmup: int | None, scratch: Path, progress: Callable[[str], None]) -> list[Row]:
    """Measure the commands the selected lines of `group` need; one row per line."""
    wanted = set(selected)
    lines = [line for line in group.lines if line.workload in wanted]
    if not lines:
        return []
    description = group.setup()
    need_ours = {line.ours for line in lines if not line.floor}
    need_ours |= {line.beside for line in lines if line.yardstick}
    need_peers = {line.beside for line in lines if not line.yardstick}
    need_peers |= {line.base for line in lines if line.base is not None}
    need_peers |= {line.ours for line in lines if line.floor}
    peers = group.peers()
    commands = {key: peers[key] for key in sorted(need_peers)}
    for tree in trees:
        made = group.ours(tree)
        commands.update({f"{key}@{tree.label}": made[key] for key in sorted(need_ours)})
    warmup = group.warmup if warmup is None else warmup
    progress(f"{description}: {len(commands)} commands, {warmup} + {runs * group.runs_factor} "
             "rounds")
    samples = measure(commands, runs * group.runs_factor, warmup, scratch,
                      lambda text: progress(f"{group.subject}: {text}"))
    rows = []
    for line in lines:
        base = samples[line.base].wall if line.base is not None else 0.0
        beside = samples[f"{line.beside}@new" if line.yardstick else line.beside].wall - base
        ours = {t.label: samples[line.ours if line.floor else f"{line.ours}@{t.label}"]
                for t in trees}
        rows.append(Row(line.workload, description, line.label, line.beside_label,
                        {label: sample.wall - base for label, sample in ours.items()},
                        {label: sample.peak for label, sample in ours.items()},
                        beside, line.yardstick))
    return rows


def seconds(value: float) -> str:
    if abs(value) < 1:
        return f"{value * 1e3:.1f} ms" if abs(value) < 0.1 else f"{value * 1e3:.0f} ms"
    return f"{value:.2f} s"


def mib(value: int) -> str:
    return f"{value / MiB:.0f} MiB"


def table(rows: Sequence[Row], trees: Sequence[Tree]) -> str:
    """The rows as Markdown: a table for each subject, under its name."""
    compare = len(trees) > 1
    if compare:
        head = ["skillpack", "old", "new", "new/old", "peak old", "peak new", "beside",
                "new/beside"]
    else:
        head = ["skillpack", "time", "peak RSS", "beside", "time", "ratio"]
    out: list[str] = []
    for subject in dict.fromkeys(row.subject for row in rows):
        body = []
        for row in (r for r in rows if r.subject == subject):
            beside = row.beside_label + (" (yardstick)" if row.yardstick else "")
            if compare:
                body.append([row.label, seconds(row.ours["old"]), seconds(row.ours["new"]),
                             f"{row.ours['new'] / row.ours['old']:.2f}x", mib(row.peak["old"]),
                             mib(row.peak["new"]), beside, f"{row.ratio:.2f}x"])
            else:
                body.append([row.label, seconds(row.ours["new"]), mib(row.peak["new"]),
                             beside, seconds(row.beside), f"{row.ratio:.2f}x"])
        out += [f"{subject}", "", *markdown(head, body), ""]
    return "\n".join(out)


def markdown(head: list[str], body: list[list[str]]) -> list[str]:
    """A Markdown table, its columns padded; the figures right-aligned."""
    text = {"skillpack", "beside"}
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]

    def fmt(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) if h in text else c.rjust(w)
                                 for c, w, h in zip(cells, widths, head, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) if h in text else "-" * (w + 1) + ":"
                          for w, h in zip(widths, head, strict=True)) + "|"
    return [fmt(head), rule, *map(fmt, body)]


def machine() -> dict[str, Any]:
    return {"cores": os.cpu_count(), "python": sys.version.split()[0],
            "load_average": [round(x, 2) for x in os.getloadavg()]}


def dump(rows: Sequence[Row], trees: Sequence[Tree], settings: dict[str, Any]) -> str:
    return json.dumps({"machine": machine(), "settings": settings,
                       "trees": {t.label: t.name for t in trees},
                       "rows": [row.to_dict() for row in rows]}, indent=2)


def scratch_folder(parent: Path | None) -> Path:
    return Path(tempfile.mkdtemp(prefix="skillpack-bench-", dir=parent))


def remove(path: Path) -> Callable[[], None]:
    """A `before`: remove what the last run wrote at `path`."""
    def clean() -> None:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    return clean
