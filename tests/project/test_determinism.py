"""Determinism: the same skill gives the same digest, archive bytes, bundle bytes and lock.

Whatever the mtimes, the umask, the time zone, the order files were created in and the
order the filesystem lists them in. Each build runs in a fresh process, with its own umask
and TZ, and optionally with `os.scandir` listing every folder backwards.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.cli import only_archive
from helpers.paths import NOTES, WAITLIST
from helpers.skills import copy_skill

from skillpack.packing.bundle import write_bundle
from skillpack.packing.pack import pack, pack_skills
from skillpack.packing.verify import digest

# The files of a skill built at test time: nested folders, an executable, an empty file,
# a binary, and names whose UTF-8 order differs from their code-point-agnostic disk order.
FILES: dict[str, bytes] = {
    "SKILL.md": (b"---\nname: steady\ndescription: Built twice in different orders; must pack "
                 b"to the same bytes.\n---\n\n# Steady\n\nRun `scripts/run.sh`.\n"),
    "scripts/run.sh": b"#!/bin/sh\necho steady\n",
    "scripts/helper.py": b"#!/usr/bin/env python3\nprint('help')\n",
    "data/empty.txt": b"",
    "data/blob.bin": bytes(range(256)) * 64,
    "data/Zebra.csv": b"z,1\n",
    "data/apple.csv": b"a,1\n",
    "data/\u00e9t\u00e9.md": "\u00e9t\u00e9\n".encode(),
    "deep/a/b/c/d/leaf.txt": b"leaf\n",
    "README.md": b"readme\n",
}
EXECUTABLES = {"scripts/run.sh", "scripts/helper.py"}


def build(root: Path, order: list[str], *, umask: int, seed: int) -> Path:
    """Create the skill `steady` under ``root``, its files created in ``order`` with ``umask``,
    then give every file and folder a random mtime."""
    folder = root / "steady"
    old = os.umask(umask)
    try:
        folder.mkdir(parents=True)
        for rel in order:
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(FILES[rel])
            if rel in EXECUTABLES:
                path.chmod(0o777 & ~umask | 0o100)
    finally:
        os.umask(old)
    rng = random.Random(seed)
    for path in [folder, *folder.rglob("*")]:
        stamp = rng.randrange(0, 2_000_000_000) * 1_000_000_000 + rng.randrange(10**9)
        os.utime(path, ns=(stamp, stamp))
    return folder


_CHILD = textwrap.dedent("""
    import json, os, sys, time
    umask, tz, listing, out = int(sys.argv[1], 8), sys.argv[2], sys.argv[3], sys.argv[4]
    sources = sys.argv[5:]
    os.umask(umask)
    os.environ["TZ"] = tz
    time.tzset()
    listed = []
    if listing == "reversed":  # every folder listed backwards
        real = os.scandir
        class Backwards:
            def __init__(self, path):
                listed.append(path)
                self._it = real(path)
            def __enter__(self):
                return reversed(list(self._it))
            def __exit__(self, *exc):
                self._it.close()
        os.scandir = Backwards
    from skillpack.packing.pack import pack_skills
    from skillpack.packing.bundle import write_bundle
    from skillpack.cli import main
    results = pack_skills(sources, out)
    bundle = write_bundle(list(reversed(sources)), os.path.join(out, "all.bundle"))
    try:
        main(["lock", *sources, "-o", os.path.join(out, "skills.lock")])
    except SystemExit as done:
        assert done.code in (0, None), done.code
    print(json.dumps({"digests": [r.digest for r in results], "bundle": bundle.digest,
                      "names": sorted(os.listdir(out)), "reversed": len(listed) > 0}))
""")


def build_elsewhere(out: Path, sources: list[Path], *, umask: int, tz: str,
                    listing: str) -> dict[str, object]:
    """Pack, bundle and lock ``sources`` into ``out`` in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, oct(umask)[2:], tz, listing, str(out),
         *map(str, sources)],
        capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def files_of(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir())}


def test_same_skill_built_twice_in_different_ways_gives_identical_bytes(tmp_path: Path) -> None:
    forward = sorted(FILES)
    one = build(tmp_path / "one", forward, umask=0o022, seed=1)
    two = build(tmp_path / "two", forward[::-1], umask=0o077, seed=2)
    assert one.stat().st_mtime_ns != two.stat().st_mtime_ns
    assert digest(one) == digest(two)
    notes_one = copy_skill(NOTES, tmp_path / "one" / "release-notes")
    notes_two = copy_skill(NOTES, tmp_path / "two" / "release-notes")
    a = build_elsewhere(tmp_path / "out-a", [one, notes_one], umask=0o022, tz="UTC",
                        listing="forward")
    b = build_elsewhere(tmp_path / "out-b", [notes_two, two], umask=0o077,
                        tz="Pacific/Kiritimati", listing="reversed")
    c = build_elsewhere(tmp_path / "out-c", [two, notes_two], umask=0o002,
                        tz="America/St_Johns", listing="reversed")
    assert a["bundle"] == b["bundle"] == c["bundle"]
    assert sorted(a["digests"]) == sorted(b["digests"]) == sorted(c["digests"])  # type: ignore
    assert a["names"] == b["names"] == c["names"]
    assert b["reversed"] and c["reversed"] and not a["reversed"]
    assert len(a["names"]) == 4  # type: ignore[arg-type]  # two archives, bundle, lock
    # the archives, the bundle and the lock: byte for byte the same
    assert files_of(tmp_path / "out-a") == files_of(tmp_path / "out-b") == files_of(
        tmp_path / "out-c")
    for out in ("out-a", "out-b", "out-c"):
        for made in (tmp_path / out).iterdir():
            assert made.stat().st_mode & 0o777 == 0o644, made  # whatever the umask


def test_the_listing_order_alone_changes_nothing(tmp_path: Path, rich: Path) -> None:
    """A deep and wide skill, listed forwards and backwards."""
    source = rich
    a = build_elsewhere(tmp_path / "a", [source], umask=0o022, tz="UTC", listing="forward")
    b = build_elsewhere(tmp_path / "b", [source], umask=0o022, tz="UTC", listing="reversed")
    assert b.pop("reversed") and not a.pop("reversed")
    assert a == b
    assert files_of(tmp_path / "a") == files_of(tmp_path / "b")


def test_touching_every_mtime_changes_nothing(tmp_path: Path, rich: Path) -> None:
    source = rich
    [original] = pack(source, tmp_path / "original")
    copy = copy_skill(source, tmp_path / "copy" / source.name)
    for path in [copy, *copy.rglob("*")]:
        os.utime(path, ns=(123_456_789_000_000_001, 123_456_789_000_000_001))
    [touched] = pack(copy, tmp_path / "touched")
    assert touched.name == original.name
    assert touched.read_bytes() == original.read_bytes()
    bundles = [write_bundle([folder, WAITLIST], tmp_path / f"{folder.parent.name}.bundle")
               for folder in (source, copy)]
    assert bundles[0].digest == bundles[1].digest
    assert bundles[0].path.read_bytes() == bundles[1].path.read_bytes()


def test_the_order_of_the_inputs_changes_nothing(tmp_path: Path, rich: Path) -> None:
    skills = [WAITLIST, NOTES, rich]
    forward = pack_skills(skills, tmp_path / "f")
    backward = pack_skills(skills[::-1], tmp_path / "b")
    assert sorted(r.digest for r in forward) == sorted(r.digest for r in backward)
    assert files_of(tmp_path / "f") == files_of(tmp_path / "b")
    one = write_bundle(skills, tmp_path / "one.bundle")
    two = write_bundle(skills[::-1], tmp_path / "two.bundle")
    assert one.path.read_bytes() == two.path.read_bytes()


@pytest.mark.parametrize("tz", ["UTC", "Asia/Kathmandu", "America/Los_Angeles"])
def test_archive_bytes_do_not_depend_on_the_time_zone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tz: str
) -> None:
    import time

    monkeypatch.setenv("TZ", tz)
    time.tzset()
    try:
        [archive] = pack(WAITLIST, tmp_path)
        data = archive.read_bytes()
    finally:
        monkeypatch.undo()
        time.tzset()
    reference = tmp_path / "ref"
    pack(WAITLIST, reference)
    assert data == only_archive(reference).read_bytes()
