"""What a bundle carried as Python code (``skillpack bundle --python-module``) costs to import.

    python benchmarks/bench_module.py [--quick] [--runs N] [--json FILE] [--tmp DIR]

Builds the corpus bundle (its 180 valid, uniquely named skills: ``anthropics-skills/claude-api``
is invalid and ``openai-skills/skill-creator`` is the second ``skill-creator``) with the CLI,
``skillpack bundle FOLDER... -o corpus.bundle --python-module corpus_bundle.py``, then times,
each in a fresh interpreter (``python -c``, run N times, interleaved, median):

* ``source``: ``import corpus_bundle`` from its ``.py`` alone, with PYTHONDONTWRITEBYTECODE=1
  and no ``__pycache__``: Python compiles the module on every import;
* ``pyc, sourceless``: the module compiled first with ``py_compile`` to ``corpus_bundle.pyc``,
  imported with no ``.py`` beside it;
* ``pyc + source``: the ``.py`` with its ``__pycache__/corpus_bundle.cpython-XY.pyc`` (what a
  deployment that compiles ahead of time has; Python checks the source's mtime and size);
* ``read .bundle``: ``open(path, "rb").read()`` of the bundle file itself;
* and, informational, each of the last three followed by ``skillpack.runtime.load(data)``.

Each child reports the time around the import (or read) alone, after ``import json, time``,
and its peak RSS (VmHWM: ru_maxrss would start from the parent's peak); the parent also times
the whole process, next to a bare ``python -c pass``. Files are in the page cache (warm).
``--quick`` uses 20 skills and 3 runs, for a smoke run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import py_compile
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_build import HWM_SOURCE  # this folder is on sys.path when run as a script

REPO = Path(__file__).resolve().parent.parent
CORPUS = (REPO.parent / "shared" / "corpus").resolve()
LEFT_OUT = ("anthropics-skills/claude-api",  # invalid: its description is too long
            "openai-skills/skill-creator")  # a second skill named skill-creator
MODULE = "corpus_bundle"
MiB = 1 << 20

_CHILD = HWM_SOURCE + textwrap.dedent("""
    import json, sys, time
    what, where, load = sys.argv[1], sys.argv[2], sys.argv[3] == "load"
    if load:
        import skillpack.runtime
    start = time.perf_counter()
    if what == "import":
        sys.path.insert(0, where)
        import corpus_bundle
        data = corpus_bundle.DATA
    else:
        with open(where, "rb") as handle:
            data = handle.read()
    took = time.perf_counter() - start
    loaded = 0.0
    if load:
        start = time.perf_counter()
        bundle = skillpack.runtime.load(data)
        loaded = time.perf_counter() - start
        assert len(bundle.names) > 0
    print(json.dumps({"seconds": took, "load_seconds": loaded, "bytes": len(data),
                      "hwm": hwm()}))
""")


def bundle_corpus(out: Path, quick: bool) -> tuple[Path, Path, float, int]:
    folders = [p.parent for p in sorted(CORPUS.glob("*/*/SKILL.md"))
               if p.parent.relative_to(CORPUS).as_posix() not in LEFT_OUT]
    if quick:
        folders = folders[:20]
    bundle, module = out / "corpus.bundle", out / "src" / f"{MODULE}.py"
    module.parent.mkdir(parents=True)
    script = Path(sys.executable).with_name("skillpack")
    cli = [str(script)] if script.is_file() else [
        sys.executable, "-c", "from skillpack.cli import main; main()"]
    start = time.perf_counter()
    subprocess.run([*cli, "bundle", *map(str, folders), "-o", str(bundle), "--python-module",
                    str(module)], check=True, stdout=subprocess.DEVNULL)
    return bundle, module, time.perf_counter() - start, len(folders)


def layouts(tmp: Path, module: Path) -> dict[str, Path]:
    """A folder for each way of importing the module; returns case -> folder."""
    source_only = module.parent
    sourceless = tmp / "sourceless"
    sourceless.mkdir()
    py_compile.compile(str(module), cfile=str(sourceless / f"{MODULE}.pyc"), doraise=True)
    with_source = tmp / "with-source"
    with_source.mkdir()
    shutil.copy2(module, with_source / module.name)
    cached = Path(importlib.util.cache_from_source(str(with_source / module.name)))
    py_compile.compile(str(with_source / module.name), cfile=str(cached), doraise=True)
    return {"source": source_only, "pyc, sourceless": sourceless, "pyc + source": with_source}


def run_child(what: str, where: Path, load: bool) -> tuple[dict[str, Any], float]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _CHILD, what, str(where),
                           "load" if load else "-"], capture_output=True, text=True, env=env,
                          check=True)
    wall = time.perf_counter() - start
    return json.loads(proc.stdout), wall


def bare_interpreter() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 skills, 3 runs: a smoke run")
    parser.add_argument("--runs", type=int, help="fresh interpreters per case (default 11)")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    parser.add_argument("--tmp", type=Path, help="folder for the generated files")
    args = parser.parse_args(argv)
    runs = args.runs or (3 if args.quick else 11)

    tmp = Path(tempfile.mkdtemp(prefix="skillpack-bench-module-", dir=args.tmp))
    try:
        bundle, module, build_seconds, count = bundle_corpus(tmp, args.quick)
        where = layouts(tmp, module)
        sizes = {"bundle": bundle.stat().st_size, "module .py": module.stat().st_size,
                 "module .pyc": (where["pyc, sourceless"] / f"{MODULE}.pyc").stat().st_size}
        cases: list[tuple[str, str, Path, bool]] = [
            (name, "import", folder, False) for name, folder in where.items()]
        cases.append(("read .bundle", "read", bundle, False))
        cases += [(f"{name} + runtime.load", "import", where[name], True)
                  for name in ("pyc, sourceless", "pyc + source")]
        cases.append(("read .bundle + runtime.load", "read", bundle, True))
        samples: dict[str, list[tuple[dict[str, Any], float]]] = {c[0]: [] for c in cases}
        bare: list[float] = []
        for _name, what, path, load in cases:  # warm-up: page cache, and a first compile
            run_child(what, path, load)
        for _ in range(runs):
            bare.append(bare_interpreter())
            for name, what, path, load in cases:
                samples[name].append(run_child(what, path, load))
                if (Path(where["source"]) / "__pycache__").exists():
                    raise SystemExit("a __pycache__ appeared beside the source-only module")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    bare_s = statistics.median(bare)
    print(f"Bundle of {count} corpus skills built with the CLI in {build_seconds:.2f} s "
          "(one run)")
    for name, size in sizes.items():
        print(f"  {name:<12} {size:>12,} bytes ({size / MiB:.1f} MiB)")
    print(f"\nFresh interpreter per run, median of {runs}; bare `python -c pass`: "
          f"{bare_s * 1000:.1f} ms")
    print(f"{'case':<34} {'import/read':>12} {'load':>10} {'process':>10} {'over bare':>10} "
          f"{'peak RSS':>10}")
    results: dict[str, dict[str, float]] = {}
    for name, _, _, load in cases:
        got = samples[name]
        seconds = statistics.median(s["seconds"] for s, _ in got)
        load_s = statistics.median(s["load_seconds"] for s, _ in got)
        wall = statistics.median(w for _, w in got)
        hwm = statistics.median(s["hwm"] for s, _ in got)
        results[name] = {"seconds": seconds, "load_seconds": load_s, "process_seconds": wall,
                         "over_bare_seconds": wall - bare_s, "peak_rss": hwm}
        load_text = f"{load_s * 1000:7.1f} ms" if load else f"{'-':>10}"
        print(f"{name:<34} {seconds * 1000:9.1f} ms {load_text} {wall * 1000:7.1f} ms "
              f"{(wall - bare_s) * 1000:7.1f} ms {hwm / MiB:6.1f} MiB")
    if args.json is not None:
        args.json.write_text(json.dumps({
            "skills": count, "runs": runs, "quick": args.quick, "build_seconds": build_seconds,
            "sizes": sizes, "bare_seconds": bare_s, "cases": results,
            "python": sys.version}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
