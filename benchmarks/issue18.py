"""The table of issue 18 (build-side speed on real work), every line with its peer in the same
run: run by ``bench_build.py`` (its ``issue18`` workload) or alone:

    python benchmarks/issue18.py [--quick] [--corpus-only] [--runs N] [--tmp DIR]

Lines (whole process = the CLI in a fresh interpreter, start-up included; in process = the
library call in this interpreter, warm):

* corpus digest, whole process, against ``find | sort | xargs cat`` and b3sum of the same files;
* corpus digest, in process, against reading and BLAKE3-hashing every carried file;
* corpus pack, whole process (fsync'd), against ``zip -r -X`` run once per skill;
* corpus pack, in process, against zipfile STORED of the same files, one zip a skill, no checks;
* one 256 MiB file digest, whole process, against b3sum;
* 10,000 files of 4 KiB digest, whole process, against ``find | sort | xargs cat``;
* the early refusal of a skill of 100,000 empty files (over the 65,534-member limit) by pack,
  in a fresh interpreter: time and peak memory, against listing the tree;
* check of the corpus, in process, against libyaml (PyYAML's CSafeLoader) parsing the same
  frontmatters from memory;
* linearity: digest in process of 1k, 10k, 100k files of 1 KiB and of one 64 MiB, 256 MiB,
  1 GiB file (``--quick``: 1k and 10k files, 64 and 256 MiB).

Four corpus lines also time, in the same rounds, the floor of their work with every check kept
(the in-process digest, two: `scanned_read`, and `walked_floor`, which adds the walk, the rules
where a needle is, and the frontmatter), and print it against the peer (is the target possible
at all?) and ours against it (how close we are): the digest's is every carried file read,
BLAKE3-hashed and searched for the secret rules' needles (`scanned_read`; as a whole process, a
Python interpreter doing just that: `SCANNED_READ_CHILD`); pack's is zipfile STORED plus that,
each archive's SHA-256, and the archives fsync'd and renamed as pack does (`pack_floor`);
check's is the libyaml parse plus the digest's floor, since check reads and scans every file as
pack does (one verdict, issue 12). The big file's line has one too: a Python process that maps
the file and hashes it with BLAKE3's threads while it searches it for the needles
(`BIG_FLOOR_CHILD`). ``--corpus-only`` runs the corpus lines alone.

Medians of N runs (default 5; 3 with ``--quick``) after a warm-up run, the tools of a line
taking their runs in turn, ``os.sync()`` (untimed) before each.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_build import (
    CORPUS,
    HWM_SOURCE,
    REFUSED,
    carried,
    cli_command,
    cli_env,
    make_big,
    make_small,
    timed,
    write_skill_md,
)

MiB = 1 << 20


def run(args: Sequence[str], cwd: Path | None = None, shell: bool = False,
        env: dict[str, str] | None = None) -> None:
    subprocess.run(args if not shell else " ".join(args), cwd=cwd, shell=shell, check=True,
                   stdout=subprocess.DEVNULL, env=env)


def cli(*args: str) -> Callable[[], None]:
    """The command line as a user runs it: with its bytecode kept (`cli_env`; the warm-up
    run of `timed` writes it)."""
    env = cli_env()
    return lambda: run([*cli_command(), *args], env=env)


def cat_floor(root: Path) -> Callable[[], None]:
    return lambda: run([f"find {root} -type f -print0 | sort -z | xargs -0 cat > /dev/null"],
                       shell=True)


def b3sum_files(files: Sequence[Path]) -> Callable[[], None]:
    listing = "\0".join(map(str, files)).encode()
    return lambda: subprocess.run(["xargs", "-0", "b3sum"], input=listing, check=True,
                                  stdout=subprocess.DEVNULL)


def read_blake3(files: Sequence[Path]) -> None:
    from blake3 import blake3

    for path in files:
        with open(path, "rb") as handle:
            blake3(handle.read()).digest()


def zipfile_stored(skills: Sequence[list[tuple[Path, str]]], out: Path) -> None:
    out.mkdir(exist_ok=True)
    for i, items in enumerate(skills):
        with zipfile.ZipFile(out / f"{i}.zip", "w", zipfile.ZIP_STORED) as archive:
            for path, name in items:
                archive.writestr(name, path.read_bytes())


def scanned_read(files: Sequence[Path]) -> None:
    """The least a digest that keeps every check does to the files' bytes: each file read,
    BLAKE3-hashed and searched for the secret rules' needles (`secret_rules._present`, the
    least the content scan does); nothing listed, parsed, recorded or refused. The floor of
    the digest and check lines ("with the scan")."""
    from blake3 import blake3

    from skillpack.content.secret_rules import _present

    for path in files:
        with open(path, "rb") as handle:
            data = handle.read()
        blake3(data).digest()
        _present(data)


#: How the least complete digest opens what it walks (floor_walk): no link followed.
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def walked_floor(folders: Sequence[Path]) -> None:
    """The least a digest that keeps every check of the issue ("every file is still read
    through the hostile-safe walk, hashed once, scanned, and refused as today") does, no more:
    each skill's SKILL.md frontmatter split and read (`split_frontmatter`, skillpack's own
    reader: faster on these than libyaml, so the lower floor); each folder listed through a
    descriptor opened without following a link; each file opened so, ``fstat``'ed, read,
    BLAKE3-hashed and given the whole content scan (`scan_content`: the needle search, and
    the rules where a needle is); nothing recorded, named, sorted or refused, no name check,
    no leave-out rule, no digest line. `scanned_read` less all but the reading, hashing and
    needles: the in-process line's second floor."""
    from blake3 import blake3

    from skillpack.content.scan import scan_content
    from skillpack.skillmd.frontmatter import split_frontmatter

    allow: frozenset[str] = frozenset()
    for folder in folders:
        split_frontmatter((folder / "SKILL.md").read_text(encoding="utf-8"))
        stack = [(str(folder), "")]
        while stack:
            path, rel = stack.pop()
            dir_fd = os.open(path, _DIR_FLAGS)
            try:
                with os.scandir(dir_fd) as listing:
                    entries = list(listing)
                for entry in entries:
                    name = f"{rel}{entry.name}"
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((f"{path}/{entry.name}", f"{name}/"))
                        continue
                    fd = os.open(entry.name, _FILE_FLAGS, dir_fd=dir_fd)
                    try:
                        data = os.read(fd, os.fstat(fd).st_size + 1)
                    finally:
                        os.close(fd)
                    blake3(data).digest()
                    scan_content(name, data, allow)
            finally:
                os.close(dir_fd)


#: `scanned_read` as a process of its own: the least a Python digest that keeps the scan
#: costs as a whole process (interpreter, blake3, the rules' automaton, the files); argv[1]
#: lists the files, NUL-separated.
SCANNED_READ_CHILD = textwrap.dedent("""
    import sys
    from blake3 import blake3
    from skillpack.content.secret_rules import _present
    with open(sys.argv[1], "rb") as handle:
        listing = handle.read().decode().split("\\0")
    for path in listing:
        with open(path, "rb") as handle:
            data = handle.read()
        blake3(data).digest()
        _present(data)
""")


#: The least a digest of one big file that keeps the scan costs as a whole process (the
#: CLI's interpreter, blake3, the rules' automaton): the file mapped once, BLAKE3 on its
#: threads over all of it on one thread while this one searches it for the rules' needles,
#: 4 MiB at a time (both release the GIL: the two cores at once); argv[1] is the file.
BIG_FLOOR_CHILD = textwrap.dedent("""
    import mmap, os, sys, threading
    from blake3 import blake3
    from skillpack.content.secret_rules import _present
    fd = os.open(sys.argv[1], os.O_RDONLY)
    view = memoryview(mmap.mmap(fd, 0, access=mmap.ACCESS_READ))
    hashing = threading.Thread(
        target=lambda: blake3(view, max_threads=blake3.AUTO).digest())
    hashing.start()
    for at in range(0, len(view), 4 << 20):
        _present(view[at:at + (4 << 20)])
    hashing.join()
""")


#: `pack_floor`, the source of it: run in this process (`pack_floor`) and, followed by its
#: call, as a process of its own (`PACK_FLOOR_CHILD`), which must not import this module (its
#: imports would count).
PACK_FLOOR_SOURCE = textwrap.dedent("""
    import hashlib, io, os, zipfile
    from concurrent.futures import ThreadPoolExecutor
    from blake3 import blake3
    from skillpack.content.secret_rules import _present

    def pack_floor(skills, out, prefix=""):
        os.makedirs(out, exist_ok=True)
        written = []
        for i, items in enumerate(skills):
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
                for path, name in items:
                    with open(path, "rb") as handle:
                        data = handle.read()
                    blake3(data).digest()
                    _present(data)
                    archive.writestr(name, data)
            blob = buffer.getvalue()
            hashlib.sha256(blob).digest()
            temp = os.path.join(out, f".{prefix}{i}.tmp")
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, blob)
            written.append((fd, temp))
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(os.fsync, [fd for fd, _ in written]))
        for i, (fd, temp) in enumerate(written):
            os.close(fd)
            os.replace(temp, os.path.join(out, f"{prefix}{i}.zip"))
        folder = os.open(out, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
""")


def pack_floor(skills: Sequence[Sequence[tuple[Path | str, str]]], out: Path | str,
               prefix: str = "") -> None:
    """`zipfile_stored` plus the least every check and durability add, as pack does them:
    each file BLAKE3-hashed and searched for the rules' needles (`scanned_read`), each
    archive's SHA-256 (the pack result's), each archive written to a temp file, the files
    fsync'd on 8 threads, renamed into place, the folder fsync'd. No manifest, no walk,
    no parse, no validation, no records. (`PACK_FLOOR_SOURCE`, run here.)"""
    if not _PACK_FLOOR:
        exec(PACK_FLOOR_SOURCE, _PACK_FLOOR)  # this module's own source text
    _PACK_FLOOR["pack_floor"](skills, out, prefix)


_PACK_FLOOR: dict[str, Any] = {}

#: `pack_floor` as a process of its own (the CLI's interpreter): argv[1] holds its skills'
#: files (a `marshal` list, one list of (path, zip name) a skill), argv[2] the output folder,
#: argv[3] a prefix for its archives' names (two such processes share one folder).
PACK_FLOOR_CHILD = PACK_FLOOR_SOURCE + textwrap.dedent("""
    import marshal, sys
    with open(sys.argv[1], "rb") as handle:
        pack_floor(marshal.load(handle), sys.argv[2], sys.argv[3])
""")


def pack_floor_processes(skills: Sequence[list[tuple[Path, str]]], out: Path, tmp: Path,
                         count: int) -> Callable[[], None]:
    """`PACK_FLOOR_CHILD` as `count` processes at once, each every `count`-th skill, all
    waited for: the least a whole-process pack with every check and fsync costs on `count`
    cores (the same interpreter as the CLI's, with its bytecode kept)."""
    import marshal

    python = str(Path(cli_command()[0]).with_name("python"))
    env = cli_env()
    listings = []
    for first in range(count):
        listing = tmp / f"pack-floor-{count}-{first}.marshal"
        listing.write_bytes(marshal.dumps([[(str(p), n) for p, n in items]
                                           for items in skills[first::count]]))
        listings.append(listing)

    def both() -> None:
        out.mkdir(exist_ok=True)
        children = [subprocess.Popen([python, "-c", PACK_FLOOR_CHILD, str(listing), str(out),
                                      f"p{at}-"], env=env) for at, listing in enumerate(listings)]
        if any(child.wait() != 0 for child in children):
            raise RuntimeError("a pack floor process failed")

    return both


def zip_per_skill(folders: Sequence[Path], out: Path) -> None:
    out.mkdir(exist_ok=True)
    for i, folder in enumerate(folders):
        run(["zip", "-q", "-r", "-X", str(out / f"{i}.zip"), folder.name], cwd=folder.parent)


def frontmatters(folders: Sequence[Path]) -> list[str]:
    out = []
    for folder in folders:
        text = (folder / "SKILL.md").read_text(encoding="utf-8", errors="replace")
        if text.startswith("---"):
            end = text.find("\n---", 3)
            out.append(text[3:end] if end > 0 else "")
    return out


def libyaml(texts: Sequence[str]) -> None:
    import yaml

    for text in texts:
        with contextlib.suppress(yaml.YAMLError):
            yaml.load(text, Loader=yaml.CSafeLoader)  # the C safe loader


_REFUSAL_CHILD = HWM_SOURCE + textwrap.dedent("""
    import json, sys, time
    from skillpack.packing.pack import pack_skills
    from skillpack.errors import ArchiveError
    skill, out = sys.argv[1:3]
    before = hwm()
    start = time.perf_counter()
    try:
        pack_skills([skill], out)
        refused = False
    except ArchiveError:
        refused = True
    print(json.dumps({"seconds": time.perf_counter() - start, "refused": refused,
                      "imported_hwm": before, "peak_hwm": hwm()}))
""")


def list_tree(root: Path) -> int:
    count = 0
    stack = [str(root)]
    while stack:
        with os.scandir(stack.pop()) as listing:
            for entry in listing:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    count += 1
    return count


def make_empty(folder: Path, count: int, per_folder: int = 1000) -> None:
    write_skill_md(folder)
    for i in range(count):
        sub = folder / "data" / f"{i // per_folder:03d}"
        if i % per_folder == 0:
            sub.mkdir(parents=True)
        (sub / f"f{i:06d}").touch()


class Table:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def add(self, work: str, ours: float, peer: str, theirs: float, how: str,
            target: str) -> None:
        if how == "times":  # our time as a multiple of the floor's (lower is better)
            ratio = f"{ours / theirs:.2f}x the floor"
        else:  # speed relative to the peer (higher is better)
            ratio = f"{theirs / ours:.2f}x its speed"
        line = {"work": work, "skillpack_ms": ours * 1e3, "peer": peer, "peer_ms": theirs * 1e3,
                "ratio": ratio, "target": target}
        self.lines.append(line)
        print(f"  {work:<52} {ours * 1e3:9.1f} ms | {peer:<34} {theirs * 1e3:9.1f} ms | "
              f"{ratio:<20} (target: {target})", flush=True)


def corpus_lines(table: Table, tmp: Path, runs: int) -> None:
    from skillpack.packing.check import check_skill
    from skillpack.packing.pack import pack_skills
    from skillpack.packing.verify import digest

    every = sorted(p.parent for p in CORPUS.glob("*/*/SKILL.md"))
    valid = [f for f in every if f.relative_to(CORPUS).as_posix() != REFUSED]
    files = [p for skill in carried(every, CORPUS) for p, _ in skill]
    pack_items = carried(valid, CORPUS)
    out = tmp / "out"

    def clean() -> None:
        shutil.rmtree(out, ignore_errors=True)

    jobs: dict[str, Callable[[], object]] = {
        "cli digest": cli("digest", *map(str, every)),
        "find|sort|xargs cat": cat_floor(CORPUS),
    }
    if shutil.which("b3sum"):
        jobs["b3sum"] = b3sum_files(files)
    listing = tmp / "files.list"
    listing.write_bytes("\0".join(map(str, files)).encode())
    env = cli_env()
    python = str(Path(cli_command()[0]).with_name("python"))  # the CLI's own interpreter
    jobs["python + read, BLAKE3, needles"] = lambda: run(
        [python, "-c", SCANNED_READ_CHILD, str(listing)], env=env)
    got = timed(jobs, runs)
    table.add("corpus digest, whole process", got["cli digest"], "find|sort|xargs cat",
              got["find|sort|xargs cat"], "times", "within 2x the cat floor")
    table.add("  its floor with the scan: a Python process that reads, hashes, searches",
              got["python + read, BLAKE3, needles"], "find|sort|xargs cat",
              got["find|sort|xargs cat"], "times", "floor: under 2x, or 2x is impossible")
    table.add("corpus digest, whole process", got["cli digest"],
              "that floor (python + read, BLAKE3, needles)",
              got["python + read, BLAKE3, needles"], "times", "as close as it allows")
    if "b3sum" in got:
        table.add("corpus digest, whole process", got["cli digest"], "b3sum (same files)",
                  got["b3sum"], "times", "informational")

    got = timed({"digest": lambda: [digest(f) for f in every],
                 "read + BLAKE3": lambda: read_blake3(files),
                 "read + BLAKE3 + needles": lambda: scanned_read(files),
                 "walked floor": lambda: walked_floor(every)}, runs)
    table.add("corpus digest, in process", got["digest"], "read + BLAKE3 of every file",
              got["read + BLAKE3"], "times", "within 1.5x that floor")
    table.add("  its floor with the scan: read, BLAKE3, needle search", got[
        "read + BLAKE3 + needles"], "read + BLAKE3 of every file", got["read + BLAKE3"],
        "times", "floor: under 1.5x, or 1.5x is impossible")
    table.add("corpus digest, in process", got["digest"], "read + BLAKE3 + needle search",
              got["read + BLAKE3 + needles"], "times", "as close as it allows")
    table.add("  its floor with every check: + walk, rules, frontmatter", got["walked floor"],
              "read + BLAKE3 of every file", got["read + BLAKE3"], "times",
              "floor: under 1.5x, or 1.5x is impossible")
    table.add("corpus digest, in process", got["digest"], "that floor (walk, read, BLAKE3, "
              "scan, frontmatter)", got["walked floor"], "times", "as close as it allows")

    got = timed({"cli pack": cli("pack", *map(str, valid), "-o", str(out)),
                 "zip -r -X per skill": lambda: zip_per_skill(valid, out),
                 "floor, 1 process": pack_floor_processes(pack_items, out, tmp, 1),
                 "floor, 2 processes": pack_floor_processes(pack_items, out, tmp, 2)},
                runs, after=clean)
    table.add("corpus pack, whole process (fsync'd)", got["cli pack"], "zip -r -X per skill",
              got["zip -r -X per skill"], "speed", "at least 5x zip's speed")
    for count in (1, 2):
        table.add(f"  its floor: python + pack's floor work, {count} process"
                  f"{'es at once' if count > 1 else ''}", got[f"floor, {count} process"
                  f"{'es' if count > 1 else ''}"], "zip -r -X per skill",
                  got["zip -r -X per skill"], "speed",
                  "floor: over 5x, or 5x is impossible")

    got = timed({"pack": lambda: pack_skills(valid, out),
                 "zipfile STORED": lambda: zipfile_stored(pack_items, out),
                 "pack floor": lambda: pack_floor(pack_items, out)}, runs, after=clean)
    table.add("corpus pack, in process", got["pack"], "zipfile STORED, no checks",
              got["zipfile STORED"], "times", "within 1.2x")
    table.add("  its floor: + BLAKE3, needles, SHA-256, fsync", got["pack floor"],
              "zipfile STORED, no checks", got["zipfile STORED"], "times",
              "floor: under 1.2x, or 1.2x is impossible")
    table.add("corpus pack, in process", got["pack"], "that floor", got["pack floor"], "times",
              "as close as it allows")

    texts = frontmatters(every)
    got = timed({"check": lambda: [check_skill(f) for f in every],
                 "libyaml": lambda: libyaml(texts),
                 "check floor": lambda: (scanned_read(files), libyaml(texts))}, runs)
    table.add("check of the corpus, in process", got["check"], "libyaml parse of frontmatters",
              got["libyaml"], "times", "within 2x")
    table.add("  its floor: libyaml + read, BLAKE3, needles (one verdict)", got[
        "check floor"], "libyaml parse of frontmatters", got["libyaml"], "times",
        "floor: under 2x, or 2x is impossible")
    table.add("check of the corpus, in process", got["check"], "that floor",
              got["check floor"], "times", "as close as it allows")


def generated_lines(table: Table, tmp: Path, runs: int, quick: bool) -> dict[str, Any]:
    from skillpack.packing.verify import digest

    big = tmp / "big256"
    make_big(big, (64 if quick else 256) * MiB)
    size = "64 MiB" if quick else "256 MiB"
    if shutil.which("b3sum"):
        python = str(Path(cli_command()[0]).with_name("python"))  # the CLI's own interpreter
        env = cli_env()
        got = timed({"cli": cli("digest", str(big)),
                     "b3sum": lambda: run(["b3sum", str(big / "big.bin")]),
                     "floor": lambda: run([python, "-c", BIG_FLOOR_CHILD,
                                           str(big / "big.bin")], env=env)}, runs)
        table.add(f"one {size} file digest, whole process", got["cli"], "b3sum", got["b3sum"],
                  "speed", "at least 0.5x b3sum's speed")
        table.add("  its floor: a Python process that hashes and searches it at once",
                  got["floor"], "b3sum", got["b3sum"], "speed",
                  "floor: over 0.5x, or 0.5x is impossible")
        table.add(f"one {size} file digest, whole process", got["cli"], "that floor",
                  got["floor"], "times", "as close as it allows")
    else:
        print("  (b3sum not installed: the big-file line is skipped)")
    shutil.rmtree(big)

    small = tmp / "small"
    make_small(small, 10_000)
    got = timed({"cli": cli("digest", str(small)), "cat": cat_floor(small)}, runs)
    table.add("10,000 x 4 KiB digest, whole process", got["cli"], "find|sort|xargs cat",
              got["cat"], "speed", "at least 0.6x the cat rate")
    shutil.rmtree(small)

    count = 70_000 if quick else 100_000
    many = tmp / "many"
    make_empty(many, count)
    listing = timed({"list": lambda: list_tree(many)}, runs)["list"]
    proc = subprocess.run([sys.executable, "-c", _REFUSAL_CHILD, str(many), str(tmp / "o")],
                          capture_output=True, text=True, check=True)
    refusal = json.loads(proc.stdout)
    assert refusal["refused"], "pack did not refuse a skill over the member limit"
    table.add(f"pack refuses {count:,} empty files (fresh process)", refusal["seconds"],
              "listing the tree (os.scandir)", listing, "times", "right after listing")
    grew = (refusal["peak_hwm"] - refusal["imported_hwm"]) / MiB
    print(f"  {'':<52} peak memory of the refusal: +{grew:.1f} MiB over the imported "
          "interpreter", flush=True)
    shutil.rmtree(many)

    linear: dict[str, Any] = {"files": {}, "bytes": {}}
    print("  linearity: digest in process", flush=True)
    for n in (1_000, 10_000) if quick else (1_000, 10_000, 100_000):
        folder = tmp / f"lin{n}"
        make_small(folder, n, 1024)
        seconds = timed({"d": lambda f=folder: digest(f)}, min(runs, 3))["d"]
        linear["files"][n] = seconds
        print(f"    {n:>9,} files of 1 KiB {seconds * 1e3:9.1f} ms  "
              f"{seconds / n * 1e6:6.1f} us a file", flush=True)
        shutil.rmtree(folder)
    for mib in (64, 256) if quick else (64, 256, 1024):
        folder = tmp / f"big{mib}"
        make_big(folder, mib * MiB)
        seconds = timed({"d": lambda f=folder: digest(f)}, 1 if mib > 256 else min(runs, 3))["d"]
        linear["bytes"][mib] = seconds
        print(f"    one {mib:>5} MiB file   {seconds * 1e3:9.1f} ms  "
              f"{mib * MiB / seconds / 1e6:6.0f} MB/s", flush=True)
        shutil.rmtree(folder)
    return {"refusal": refusal | {"files": count, "listing": listing}, "linear": linear}


def main(argv: Sequence[str] | None = None, tmp: Path | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int)
    parser.add_argument("--tmp", type=Path)
    parser.add_argument("--corpus-only", action="store_true",
                        help="only the corpus lines and their floors")
    args = parser.parse_args(argv)
    runs = args.runs or (3 if args.quick else 5)
    root = Path(tempfile.mkdtemp(prefix="skillpack-issue18-", dir=tmp or args.tmp))
    table = Table()
    print(f"\nissue 18: skillpack | peer | ratio, medians of {runs} (load "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()) + ")", flush=True)
    try:
        corpus_lines(table, root, runs)
        extra = {} if args.corpus_only else generated_lines(table, root, runs, args.quick)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("  load at end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return {"lines": table.lines, **extra}


if __name__ == "__main__":
    main()
