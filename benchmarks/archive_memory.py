"""Peak memory of the commands that read an archive file (issue 13: bounded memory).

Packs a skill carrying one file of ``--size`` MiB (random bytes) and a tiny one, with the
skillpack on PYTHONPATH, then runs ``verify``, ``inspect``, ``digest``, ``bundle`` and ``lock``
on each archive in a child, whose peak RSS a small wrapper process reads
(``getrusage(RUSAGE_CHILDREN).ru_maxrss``), and prints a Markdown table. Memory is not noisy
like time: one run each.

    PYTHONPATH=$PWD python benchmarks/archive_memory.py --size 1024
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

COMMANDS = ("verify", "inspect", "digest", "bundle", "lock")
WRAPPER = (
    "import json, resource, subprocess, sys\n"
    "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "print(json.dumps([rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024]))\n"
)


def skill(folder: Path, size: int) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {folder.name}\ndescription: Carries one "
                                     "data file of a given size.\n---\n# Data\n")
    with open(folder / "data.bin", "wb") as handle:
        for at in range(0, size, 1 << 20):
            handle.write(os.urandom(min(1 << 20, size - at)))
    return folder


def peak(*args: str) -> int:
    out = subprocess.run([sys.executable, "-c", WRAPPER, sys.executable, "-m", "skillpack",
                          *args], capture_output=True, text=True, check=True)
    rc, found = json.loads(out.stdout)
    if rc != 0:
        raise SystemExit(f"skillpack {' '.join(args)} exited {rc}")
    return int(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256, help="MiB in the large archive")
    size = parser.parse_args().size << 20
    with tempfile.TemporaryDirectory(prefix="skillpack-memory-") as tmp:
        root = Path(tmp)
        for name, n in (("tiny", 1000), ("big", size)):
            skill(root / name, n)
            subprocess.run([sys.executable, "-m", "skillpack", "pack", str(root / name), "-o",
                            str(root / "out")], check=True, stdout=subprocess.DEVNULL)
            (root / name / "data.bin").unlink()
        tiny = next((root / "out").glob("tiny-*.skill"))
        big = next((root / "out").glob("big-*.skill"))
        print(f"| command | tiny archive | {big.stat().st_size / 2**20:,.0f} MiB archive "
              "| growth |")
        print("| --- | ---: | ---: | ---: |")
        for command in COMMANDS:
            found = []
            for archive in (tiny, big):
                out = root / f"{archive.stem}.{command}"
                extra = ["-o", str(out)] if command in ("bundle", "lock") else []
                found.append(peak(command, str(archive), *extra))
                out.unlink(missing_ok=True)
            print(f"| `skillpack {command}` | {found[0] / 2**20:.1f} MiB | "
                  f"{found[1] / 2**20:.1f} MiB | +{(found[1] - found[0]) / 2**20:.1f} MiB |")


if __name__ == "__main__":
    main()
