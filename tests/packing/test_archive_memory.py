"""`verify`, `inspect`, `digest`, `bundle` and `lock` of an archive FILE run in bounded memory.

A skill carrying one 256 MiB file is packed with the real `skillpack pack`; each command then
runs on the archive in a child process, whose peak RSS is read by a small wrapper process
(``getrusage(RUSAGE_CHILDREN).ru_maxrss``). It must stay within `BOUND` of the same
command's peak on a tiny archive: a size-based proof (reading the archive whole would add
its 256 MiB), not a timing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import REPO

from skillpack.packing.pack import pack

BIG = 256 << 20
BOUND = 64 << 20  # over the baseline; an archive read whole would cost BIG more

#: Runs its arguments as a child and prints the child's exit code and peak RSS in bytes.
WRAPPER = (
    "import json, resource, subprocess, sys\n"
    "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "print(json.dumps([rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024]))\n"
)


def _skill(folder: Path, size: int) -> Path:
    """A skill carrying one file of `size` random bytes."""
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {folder.name}\ndescription: Carries one "
                                     "data file of a given size.\n---\n# Data\n")
    with open(folder / "data.bin", "wb") as handle:
        for at in range(0, size, 1 << 20):
            handle.write(os.urandom(min(1 << 20, size - at)))
    return folder


def _peak(*args: str, cwd: Path) -> int:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", WRAPPER, sys.executable, "-m", "skillpack",
                          *args], env=env, cwd=cwd, capture_output=True, text=True, check=True)
    rc, peak = json.loads(out.stdout)
    assert rc == 0, f"skillpack {' '.join(args)} failed ({rc}): {out.stderr}"
    return int(peak)


@pytest.fixture(scope="module")
def archives(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("memory")
    [tiny] = pack(_skill(root / "tiny", 1000), root / "out")
    [big] = pack(_skill(root / "big", BIG), root / "out")
    assert big.stat().st_size > BIG
    return tiny, big


@pytest.mark.slow
@pytest.mark.parametrize("command", ["verify", "inspect", "digest", "bundle", "lock"])
def test_a_command_on_a_large_archive_file_stays_in_bounded_memory(
    command: str, archives: tuple[Path, Path], tmp_path: Path,
) -> None:
    peaks = []
    for archive in archives:
        out = tmp_path / archive.stem
        extra = {"bundle": ["-o", str(out) + ".bundle"],
                 "lock": ["-o", str(out) + ".lock"]}.get(command, [])
        peaks.append(_peak(command, str(archive), *extra, cwd=tmp_path))
    baseline, big = peaks
    assert big - baseline < BOUND, (
        f"skillpack {command}: peak RSS {big / 2**20:.0f} MiB on a {BIG >> 20} MiB archive, "
        f"{baseline / 2**20:.0f} MiB on a tiny one")


@pytest.mark.slow
def test_a_bundle_of_a_large_archive_file_verifies(archives: tuple[Path, Path],
                                                    tmp_path: Path) -> None:
    """What `bundle` streamed from the archive file is the verified member, byte for byte."""
    _, big = archives
    out = tmp_path / "big.bundle"
    _peak("bundle", str(big), "-o", str(out), cwd=tmp_path)
    assert _peak("verify", str(out), cwd=tmp_path) > 0  # exit 0: every member's BLAKE3 holds
