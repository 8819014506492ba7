"""The runtime's frontmatter reader against the build side's YAML parse, on the corpus.

Usage::

    /work/main/.venv/bin/python benchmarks/frontmatter_reader.py [--corpus DIR] [--runs 15]

For every SKILL.md of the corpus (182 skills), in process and warm: `read_frontmatter`
(split + read; the body is not copied), `read_yaml` alone, and the build side's
`normalise_text` + `split_frontmatter` with libyaml and with pure-Python PyYAML. Each figure
is the best of ``--runs`` passes over all files, in CPU time of this thread (the machine is
shared; the best pass is the least disturbed). Then the cost of importing the reader in a
fresh interpreter (``-X importtime``), next to what PyYAML's import costs. A measurement,
not a test: nothing is asserted and the exit status is 0.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from skillpack.skillmd import frontmatter  # noqa: E402
from skillpack.skillmd.frontmatter import normalise_text, split_frontmatter  # noqa: E402
from skillpack.skillmd.frontmatter_reader import read_frontmatter, read_yaml  # noqa: E402


def best(call: Callable[[str], object], texts: list[str], runs: int) -> float:
    """The best of `runs` passes of `call` over `texts`, in ms of this thread's CPU time."""
    fastest = float("inf")
    for _ in range(runs):
        start = time.thread_time()
        for text in texts:
            call(text)
        fastest = min(fastest, time.thread_time() - start)
    return fastest * 1000


def import_us(module: str, cache: str) -> int:
    """Microseconds `import module` takes in a fresh interpreter with bytecode cached (in
    `cache`, written by a first run), as its own line of ``-X importtime`` says."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    total = 0
    for _ in range(2):
        result = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                                capture_output=True, text=True, cwd=REPO, check=True, env=env)
        for line in result.stderr.splitlines():
            parts = line.split("|")
            if len(parts) == 3 and parts[2].strip() == module:
                total = int(parts[1])
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/corpus"))
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    texts = [p.read_text(encoding="utf-8") for p in sorted(args.corpus.glob("*/*/SKILL.md"))]
    yaml_texts = []
    for text in texts:
        rest = text.partition("\n")[2]
        yaml_texts.append(rest[: rest.find("\n---") + 1])
    read = sum(read_frontmatter(t) is not None for t in texts)
    print(f"{len(texts)} SKILL.md, {read} read by the reader, "
          f"{sum(map(len, yaml_texts)):,} characters of frontmatter")
    figures = {
        "reader: read_frontmatter": best(read_frontmatter, texts, args.runs),
        "reader: read_yaml only": best(read_yaml, yaml_texts, args.runs),
        "build: split_frontmatter (libyaml)": best(
            lambda t: split_frontmatter(normalise_text(t)), texts, max(3, args.runs // 3)),
    }
    saved = frontmatter._compose_fast
    frontmatter._compose_fast = lambda text: None
    try:
        figures["build: split_frontmatter (pure Python)"] = best(
            lambda t: split_frontmatter(normalise_text(t)), texts, 3)
    finally:
        frontmatter._compose_fast = saved
    for name, ms in figures.items():
        print(f"  {name:40s} {ms:8.2f} ms")
    with tempfile.TemporaryDirectory() as cache:
        reader_us = import_us("skillpack.skillmd.frontmatter_reader", cache)
        yaml_us = import_us("yaml", cache)
    print(f"  import skillpack.skillmd.frontmatter_reader {reader_us:6d} us (fresh, cached .pyc,")
    print("    with the skillpack package's own import)")
    print(f"  import yaml {yaml_us:38d} us (fresh, cached .pyc)")


if __name__ == "__main__":
    main()
