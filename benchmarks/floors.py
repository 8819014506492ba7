"""How close `skillpack digest` is to the least any Python implementation could do, on the two
workloads of bench_build.py whose targets it misses: the floors behind docs/PERFORMANCE.md.

    python benchmarks/floors.py [--runs N] [--tmp DIR]
    python benchmarks/floors.py --first-turn [--runs N] [--against TREE]

* small (10,000 files of 4 KiB): Python's ``open``/``read`` (bench_build's "read"); a stripped
  loop making only the calls a safe digest needs (list each folder, open each file without
  following a link, ``fstat``, read, close, BLAKE3, look for the private-key marker), with no
  checks, records or errors; that loop with the secret rules' needle search (issue 18); and
  ``skillpack.packing.verify.digest``;
* big (one 256 MiB file): b3sum; the start-up of the command line (``skillpack --version``,
  bytecode kept: part of every whole-process figure); the private-key marker search alone
  over bytes already in memory (``bytes.find``, one core: it holds the GIL); the search for
  the secret rules' needles alone (issue 18: what the content scan must do at least, the
  literal search of `secret_rules._present` over each 4 MiB window, on one thread; it
  releases the GIL, so the scan searches each window's two halves on two threads at once,
  the second line); reading
  through one reused buffer and hashing with multi-threaded BLAKE3, no search; and
  ``skillpack.packing.verify.digest``;
* corpus (the 181 valid skills of ../shared/corpus): ``pack_skills``; the stripped loop over
  their folders; the same loop with the secret rules' needle search in place of the marker
  (issue 18: the least a digest that scans every file can cost); that search alone over the
  files' bytes in memory; writing the bytes of their 181 archives (made beforehand, in
  memory) as 181 plain files, no fsync; and fsyncing 181 such files one after the other, and
  on 8 threads.

* first turn (``--first-turn`` only; issue 11): the runtime's first turn on the corpus bundle
  against the least a first turn that verifies what it shows must do, as whole processes
  (see benchmarks/runtime_coldstart.py, "floor first turn"); ``--against TREE`` adds the
  first turn of another checkout (main before a change, say) to the same rounds. Inside
  each fresh interpreter that times the first turn's parts, `catalog_text()` on an already
  loaded bundle is then timed beside `catalog_floor` and `catalog_exact_floor` (below), in
  turn, best of 5 each.

Runs taken round-robin after a warm-up, ``os.sync()`` before each (untimed); medians printed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from blake3 import blake3

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_build import cli_command, cli_env, make_big, make_small, timed
from runtime_coldstart import first_turn_floors

MiB = 1 << 20
FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
MARKER = b"PRIVATE KEY"


def catalog_setup(data: bytes) -> list[tuple[str, int, int, str]]:
    """What a loaded bundle already knows when its catalog is asked for (not timed): each
    skill's name, where its SKILL.md lies in `data`, and the BLAKE3 its manifest records for
    it (the manifest checked against the skill digest at load). Found through the central
    directory and the local headers, with no check (a bundle this benchmark built)."""
    end = data.rfind(b"PK\x05\x06")
    count, _, offset = struct.unpack_from("<HII", data, end + 10)
    entry = struct.Struct("<28xHHH8xI")
    local_of: dict[str, int] = {}
    pos = offset
    for _ in range(count):
        name_len, extra_len, comment_len, local = entry.unpack_from(data, pos)
        local_of[data[pos + 46 : pos + 46 + name_len].decode()] = local
        pos += 46 + name_len + extra_len + comment_len

    def span(member: str) -> tuple[int, int]:
        local = local_of[member]
        size, name_len, extra_len = struct.unpack_from("<22xIHH", data, local)
        start = local + 30 + name_len + extra_len
        return start, start + size

    skills = []
    for member in sorted(local_of):
        skill, _, rest = member.partition("/")
        if rest != ".skillpack/manifest.json":
            continue
        start, stop = span(member)
        files = json.loads(data[start:stop])["files"]
        recorded = next(f["blake3"] for f in files if f["path"] == "SKILL.md")
        skills.append((skill, *span(skill + "/SKILL.md"), recorded))
    return skills


def _verified_text(raw: memoryview, skill: str, recorded: str) -> str:
    """A SKILL.md's bytes checked against the BLAKE3 its manifest records, decoded (strict)."""
    if blake3(raw).hexdigest() != recorded:
        raise SystemExit(f"{skill}/SKILL.md: its bytes do not hash to its record")
    return str(raw, "utf-8")


def catalog_floor(view: memoryview, skills: list[tuple[str, int, int, str]]) -> str:
    """The floor of `Bundle.catalog_text()` on an already loaded bundle (issue 11): the least
    an exact catalog must do once load has checked each manifest against its skill digest.

    Does, for each skill (`catalog_setup`'s list, in the bundle's order): slice its SKILL.md
    out of the bundle's bytes, BLAKE3 it (one `blake3(...).hexdigest()` call) and compare
    that with the BLAKE3 its manifest records, decode the whole of it as UTF-8 (strict: what
    a reader needs to know that the text is text), find the frontmatter's closing ``---``,
    take the ``name:`` and ``description:`` lines by `str.find` (each cut at its line end,
    stripped of spaces and quotes), compare the name with the skill's; then one
    ``- name: description`` line each, joined under the heading.

    Skips everything else an exact catalog does: reading the rest of the frontmatter as YAML
    (each line checked and the mapping built, so that what is shown is what the build side
    reads, and nothing it would refuse), the character checks, folding the description's
    spaces, a description quoted or on several lines (this takes the first line as it
    stands), error records, and the caching of the verdict and of the text. It is wrong on
    frontmatter that is not one ``key: value`` a line: a floor, not a reader.
    """
    lines = ["## Available skills", ""]
    for skill, start, stop, recorded in skills:
        text = _verified_text(view[start:stop], skill, recorded)
        close = text.find("\n---", 3)
        at = text.find("name:", 0, close)
        name = text[at + 5 : text.find("\n", at)].strip(" \"'")
        if name != skill:
            raise SystemExit(f"{skill}/SKILL.md names it {name!r}")
        at = text.find("\ndescription:", 0, close)
        description = text[at + 13 : text.find("\n", at + 1)].strip(" \"'")
        lines.append(f"- {skill}: {description}")
    return "\n".join(lines) + "\n"


#: The UTF-8 bytes no frontmatter may hold (as the reader's): C0 controls but the line
#: feed, and DEL.
_BAD_BYTES = bytes([*range(0x0A), *range(0x0B, 0x20), 0x7F])


def catalog_exact_floor(view: memoryview, skills: list[tuple[str, int, int, str]]) -> str:
    """`catalog_floor` plus the least that reading the frontmatter *exactly* adds (issue 11,
    item 3: what is shown is what the build side reads, and nothing it would refuse), which
    no reader in Python without a parser written in C can skip:

    * every character of the frontmatter looked at once, to know it is one YAML allows
      (encoded to UTF-8 and its forbidden bytes deleted in C: `bytes.translate`, the cheapest
      whole-text test the standard library has; the reader does that and more);
    * every line of it looked at once: split at its first ``": "`` and stored in the
      mapping (one `str.partition` and one store a line: what even the simplest exact
      reader must do for each line, since any line may hold a key the build side would read
      or refuse).

    Still skips what the real reader does beyond that: the key and value checks on each
    line, quoted and nested values, block scalars, duplicate keys, the refusals, the
    fallback readers, the verdict and text cached. Wrong, like `catalog_floor`, on
    frontmatter that is not one ``key: value`` a line.
    """
    lines = ["## Available skills", ""]
    for skill, start, stop, recorded in skills:
        text = _verified_text(view[start:stop], skill, recorded)
        close = text.find("\n---", 3)
        front = text[4 : close + 1]
        encoded = front.encode("utf-8")
        if len(encoded.translate(None, _BAD_BYTES)) != len(encoded):
            raise SystemExit(f"{skill}/SKILL.md: its frontmatter holds a forbidden character")
        data: dict[str, str] = {}
        for line in front.split("\n"):
            key, _, value = line.partition(": ")
            data[key] = value
        if data.get("name", "").strip(" \"'") != skill:
            raise SystemExit(f"{skill}/SKILL.md names it {data.get('name')!r}")
        lines.append(f"- {skill}: {data.get('description', '').strip(' ' + chr(34) + chr(39))}")
    return "\n".join(lines) + "\n"


def python_read(files: list[str]) -> None:
    for path in files:
        with open(path, "rb") as handle:
            handle.read()


def stripped_loop(root: str, look: Callable[[bytes], object] | None = None) -> None:
    """The calls a safe digest needs and no more: list each folder through its descriptor,
    open each file without following a link, fstat, read, close, BLAKE3, then `look` at the
    bytes (by default the private-key marker search)."""
    stack = [root]
    while stack:
        folder = stack.pop()
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            with os.scandir(dir_fd) as listing:
                entries = list(listing)
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(os.path.join(folder, entry.name))
                    continue
                fd = os.open(entry.name, FLAGS, dir_fd=dir_fd)
                try:
                    size = os.fstat(fd).st_size
                    data = os.read(fd, size + 1)
                finally:
                    os.close(fd)
                blake3(data).digest()
                if look is None:
                    _ = MARKER in data
                else:
                    look(data)
        finally:
            os.close(dir_fd)


def scanned_loop(root: str) -> None:
    """`stripped_loop` with the content scan's least work: one RE2 search for the rules'
    needles over each file (`secret_rules._present`) instead of the marker search."""
    from skillpack.content.secret_rules import _present

    stripped_loop(root, _present)


def needle_windows(data: bytes, window: int = 4 * MiB, split: bool = True) -> None:
    """The needle search of the content scan over `data` in the windows it reads: each window
    searched in two halves at once, on two threads, as the scan does (`split`), or on this
    thread alone."""
    from skillpack.content import secret_rules

    threshold = secret_rules.SPLIT_SEARCH
    secret_rules.SPLIT_SEARCH = threshold if split else 1 << 62
    try:
        for at in range(0, len(data), window):
            secret_rules._present(data[at:at + window])
    finally:
        secret_rules.SPLIT_SEARCH = threshold


def buffered_hash(path: str) -> None:
    hasher = blake3(max_threads=blake3.AUTO)
    buf = bytearray(4 * MiB)
    view = memoryview(buf)
    fd = os.open(path, FLAGS)
    try:
        while n := os.readv(fd, [buf]):
            hasher.update(view[:n])
    finally:
        os.close(fd)
    hasher.digest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--tmp", type=Path)
    parser.add_argument("--first-turn", action="store_true",
                        help="only the runtime's first-turn floor (issue 11)")
    parser.add_argument("--against", type=Path, metavar="TREE",
                        help="with --first-turn: also time the first turn of another "
                        "checkout (its skillpack first on the path), in the same rounds")
    args = parser.parse_args()
    if args.first_turn:
        first_turn_floors(args.runs, against=args.against)
        return 0
    from skillpack.packing.verify import digest

    root = Path(tempfile.mkdtemp(prefix="skillpack-floors-", dir=args.tmp))
    try:
        small = root / "small"
        make_small(small, 10_000)
        files = sorted(str(p) for p in small.rglob("*") if p.is_file())
        got = timed({
            "python open/read/close": lambda: python_read(files),
            "stripped loop": lambda: stripped_loop(str(small)),
            "stripped loop + needle search": lambda: scanned_loop(str(small)),
            "skillpack digest": lambda: digest(small),
        }, args.runs)
        base = got["python open/read/close"]
        print(f"small: {len(files):,} files, median of {args.runs}")
        for name, seconds in got.items():
            print(f"  {name:<26} {seconds * 1e3:8.1f} ms   rate vs read {base / seconds:5.2f}x")
        shutil.rmtree(small)

        big = root / "big"
        make_big(big, 256 * MiB)
        data = (big / "big.bin").read_bytes()
        jobs: dict[str, Callable[[], object]] = {}
        if shutil.which("b3sum"):
            jobs["b3sum"] = lambda: subprocess.run(
                ["b3sum", str(big / "big.bin")], stdout=subprocess.DEVNULL, check=True)
        env = cli_env()
        jobs["start-up (--version)"] = lambda: subprocess.run(
            [*cli_command(), "--version"], stdout=subprocess.DEVNULL, check=True, env=env)
        jobs.update({
            "marker search alone": lambda: data.find(MARKER),
            "needle search alone": lambda: needle_windows(data, split=False),
            "needle search, 2 threads": lambda: needle_windows(data),
            "read + BLAKE3 (threads)": lambda: buffered_hash(str(big / "big.bin")),
            "skillpack digest": lambda: digest(big),
        })
        got = timed(jobs, args.runs)
        print(f"big: one file of 256 MiB, median of {args.runs}")
        b3 = got.get("b3sum")
        for name, seconds in got.items():
            ratio = f"   speed vs b3sum {b3 / seconds:5.2f}x" if b3 else ""
            print(f"  {name:<26} {seconds * 1e3:8.1f} ms{ratio}")
        shutil.rmtree(big)
        corpus_floors(root, args.runs)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


def corpus_floors(root: Path, runs: int) -> None:
    import io
    from concurrent.futures import ThreadPoolExecutor

    from skillpack.packing.members import write_members
    from skillpack.packing.pack import pack_skills, prepare_many
    from skillpack.storedzip.writer import ZipWriter

    corpus = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
    folders = [p.parent for p in sorted(corpus.glob("*/*/SKILL.md"))
               if p.parent.relative_to(corpus).as_posix() != "anthropics-skills/claude-api"]
    archives = []
    for item in prepare_many(folders):
        buffer = io.BytesIO()
        with ZipWriter(buffer) as writer:
            write_members(writer, item.members())
        archives.append(buffer.getvalue())
    out = root / "out"

    def fresh() -> Path:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        return out

    def plain_files(sync: int) -> None:
        folder = fresh()
        fds = []
        for i, blob in enumerate(archives):
            fd = os.open(folder / f"{i}.skill", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, blob)
            fds.append(fd)
        start = time.perf_counter()
        if sync == 1:
            for fd in fds:
                os.fsync(fd)
        elif sync > 1:
            with ThreadPoolExecutor(sync) as pool:
                list(pool.map(os.fsync, fds))
        synced.setdefault(sync, []).append(time.perf_counter() - start)
        for fd in fds:
            os.close(fd)

    synced: dict[int, list[float]] = {}
    from skillpack.content.secret_rules import _present

    datas = [p.read_bytes() for f in folders for p in f.rglob("*") if p.is_file()]
    got = timed({
        "pack_skills": lambda: pack_skills(folders, fresh()),
        "stripped loop (read, hash)": lambda: [stripped_loop(str(f)) for f in folders],
        "stripped loop + needle search": lambda: [scanned_loop(str(f)) for f in folders],
        "needle search alone": lambda: [_present(d) for d in datas],
        "181 plain files, no fsync": lambda: plain_files(0),
        "181 plain files + fsync x1": lambda: plain_files(1),
        "181 plain files + fsync x8": lambda: plain_files(8),
    }, runs)
    print(f"corpus: {len(folders)} skills, {sum(map(len, archives)):,} bytes of archives, "
          f"median of {runs}")
    for name, seconds in got.items():
        print(f"  {name:<26} {seconds * 1e3:8.1f} ms")
    for threads, values in synced.items():
        if threads:
            print(f"  of which the fsyncs ({'one after the other' if threads == 1 else '8 threads'}"
                  f"): {statistics.median(values[1:]) * 1e3:.1f} ms")


if __name__ == "__main__":
    sys.exit(main())
