"""Pack's write step on the corpus, in one process: archives built in memory and written with
writev (`skillpack.packing.pack.JOIN_BYTES` as shipped) against member by member through
`HashingFile` (``JOIN_BYTES = 0``), the two in turn, medians and minima.

* ``writer``: the 181 archives written one after the other into one temp file (emptied
  before each), with their SHA-256: the writer and its sink alone, no file created;
* ``write step``: every prepared skill's `_write_one` into one `AtomicBatch` and its commit
  (temp files created, written, fsync'd on 8 threads, renamed, the folder fsync'd).

The skills are prepared (walked, hashed, scanned) once, before any timing.

    PYTHONPATH=$PWD python benchmarks/pack_write.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, cast

from bench_build import CORPUS, REFUSED

from skillpack._atomic import AtomicBatch
from skillpack.packing import pack as pack_module
from skillpack.packing.pack import PACK_KEEP_BYTES, PackOptions, prepare_skill


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="pairs of timed runs")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"no corpus at {CORPUS}")
    folders = sorted(p.parent for p in CORPUS.glob("*/*/SKILL.md"))
    folders = [f for f in folders if f.relative_to(CORPUS).as_posix() != REFUSED]
    root = Path(tempfile.mkdtemp(prefix="skillpack-pack-write-"))
    out = root / "out"
    items = [prepare_skill(f, keep_bytes=PACK_KEEP_BYTES, outputs=[out]) for f in folders]
    options = PackOptions()
    join = pack_module.JOIN_BYTES
    sink = tempfile.TemporaryFile(dir=root)  # noqa: SIM115  (closed in `finally`)

    def writer() -> float:
        """CPU time of the writer and its sink: each archive written over the last one."""
        start = time.thread_time()
        for item in items:
            sink.seek(0)
            sink.truncate()
            batch = _OneFile(sink)
            pack_module._write_one(cast(AtomicBatch, batch), item, out, None, options)
        return time.thread_time() - start

    def write_step() -> float:
        out.mkdir()
        os.sync()
        start = time.perf_counter()
        with AtomicBatch() as batch:
            for item in items:
                pack_module._write_one(batch, item, out, None, options)
        took = time.perf_counter() - start
        shutil.rmtree(out)
        return took

    try:
        out.mkdir()
        for name, job in (("writer (CPU)", writer), ("write step (wall)", write_step)):
            joined, apart = _pairs(job, join, args.runs)
            print(f"{name}: member by member {_ms(apart)} | joined {_ms(joined)}", flush=True)
            if name.startswith("writer"):
                shutil.rmtree(out)
    finally:
        pack_module.JOIN_BYTES = join
        sink.close()
        shutil.rmtree(root, ignore_errors=True)


class _OneFile:
    """What `_write_one` needs of an `AtomicBatch`: `write` giving the same file each time."""

    def __init__(self, file: object) -> None:
        self._file = file

    def write(self, dest: object) -> _Given:
        return _Given(self._file)

    def write_parts(self, dest: object, parts: list[bytes]) -> None:
        file = cast(BinaryIO, self._file)
        file.writelines(parts)
        file.flush()


class _Given:
    def __init__(self, file: object) -> None:
        self._file = file

    def __enter__(self) -> BinaryIO:
        return cast(BinaryIO, self._file)

    def __exit__(self, *_: object) -> None:
        cast(BinaryIO, self._file).flush()


def _pairs(job: Callable[[], float], join: int, runs: int) -> tuple[list[float], list[float]]:
    """`job` with JOIN_BYTES as shipped and 0, in turn, after one untimed run of each."""
    joined: list[float] = []
    apart: list[float] = []
    for size, into in ((join, None), (0, None)) + ((join, joined), (0, apart)) * runs:
        pack_module.JOIN_BYTES = size
        took = job()
        if into is not None:
            into.append(took)
    return joined, apart


def _ms(times: list[float]) -> str:
    ordered = sorted(times)
    return f"median {ordered[len(ordered) // 2] * 1e3:.1f} ms (min {ordered[0] * 1e3:.1f})"


if __name__ == "__main__":
    main()
