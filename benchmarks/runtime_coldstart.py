"""Cold start of `skillpack.runtime` on the corpus bundle, against a bare interpreter and zipfile.

Usage::

    /work/venv/bin/python benchmarks/runtime_coldstart.py [--runs 40] [--bundle FILE] [--json]

Each measured run is a fresh interpreter that reads the bundle's bytes with one open() and
then either does nothing more, loads them with `skillpack.runtime.load` (eager, the default,
or ``lazy=True``) and reads one SKILL.md, or opens the same bytes with
``zipfile.ZipFile(io.BytesIO(data))`` and reads the same member. Wall times are taken by this
process around each child; variants run round-robin in shuffled order after warm-up rounds, and
medians are reported. Children run in a throwaway venv whose site-packages only points at the
repository and at the packages skillpack needs (no editable-install finder pre-importing
modules), with bytecode caching on (in a temporary PYTHONPYCACHEPREFIX), as a deployment runs.

In-process figures come from the same kind of child: where import time goes, load's parts,
and reading a ~4 KiB file after load, first (hashed) and again (cached).

Targets (issue 4): load + read one SKILL.md at most 10 ms over the bare interpreter; the 4 KiB
read at most 50 us. Both the runtime and zipfile need the bundle's bytes, so each cold-start
variant is reported over the bare interpreter and over the bare interpreter that also reads
the bytes (the fair comparison), each with its verdict against the target. This is a
measurement, not a test: nothing here asserts a time, and the exit status is 0 either way.

Issue 11's first turn (``load(data, expect=lock)`` + ``catalog_text()`` + ``load_skill`` +
one file's ``text()``, target 10 ms over bare+read) runs beside two floors: the least a first
turn that verifies what it shows must do (each skill's manifest parsed, its file records
hashed into the digest and compared with the lock's, SKILL.md hashed and compared with its
record, the description taken by a naive line scan, with only what zip reading needs to find
members), and the same floor with the runtime's strict zip reader. ``benchmarks/floors.py
--first-turn`` runs just these three, then times the first turn's parts inside fresh
interpreters and, after them in each, `catalog_text()` on an already loaded bundle beside
its floor (``floors.catalog_floor``: each SKILL.md hashed against its record, decoded, its
name and description found by `str.find`) and its exact floor (``floors.catalog_exact_floor``:
that, plus every frontmatter character checked once and every line split and stored once, the
least an exact reader adds), in turn, best of 5 each.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SKILL = "adaptyv"  # the first skill of the corpus bundle
RESOURCE = "SKILL.md"  # the file the first turn reads (set from the bundle in main)
LOCK_PATH = Path("skills.lock")  # the lock of the bundle's skills (written in main)
TARGET_MS = 10.0  # load + read one SKILL.md, over the bare interpreter (issue 4)
TARGET_READ_US = 50.0  # reading a ~4 KiB file after load (issue 4)
# The cold-start variants the target applies to, and how the report names them.
TARGETED = {
    "runtime load+read": "load(data) + read (eager, the default)",
    "runtime lazy load+read": "load(data, lazy=True) + read",
    "runtime mmap load+read": "load(mmap) + read (eager)",
    "runtime mmap lazy load+read": "load(mmap, lazy=True) + read",
    "zipfile open+read": "zipfile.ZipFile(BytesIO(data)).read",
    "runtime first turn": "first turn: load(data, expect=lock) + catalog_text() + "
                          "load_skill + one file's text()",
    "floor first turn": "floor of that first turn (plain Python, minimal zip reading)",
    "floor first turn, strict zip": "floor of that first turn with the strict zip reader",
}
#: What a user would write by hand for the same first turn, reported beside it.
FIRST_TURN_PEER = "zipfile + yaml first turn"

READ = "f = open(BUNDLE, 'rb'); data = f.read(); f.close()\n"
LOCK = "f = open(LOCK, 'rb'); lock = f.read(); f.close()\n"
# The bundle file mapped rather than read: the runtime gets the same bytes as a buffer, and
# only the pages it touches (central directory, manifests, the file served) are ever read.
MMAP = ("import mmap; f = open(BUNDLE, 'rb')\n"
        "data = memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)); f.close()\n")
#: The first-turn floor's code (see "floor first turn" in VARIANTS).
FLOOR = textwrap.dedent("""
    import json, struct
    from blake3 import blake3

    def central(data):
        end = data.rfind(b"PK\\x05\\x06")
        count, size, offset = struct.unpack_from("<HII", data, end + 10)
        entry, found, pos = struct.Struct("<28xHHH8xI"), {}, offset
        for _ in range(count):
            nlen, xlen, clen, local = entry.unpack_from(data, pos)
            found[data[pos + 46 : pos + 46 + nlen].decode()] = local
            pos += 46 + nlen + xlen + clen
        return found

    class strict:  # the runtime's strict reader; offsets of the members asked for only
        def __init__(self, data):
            from skillpack.storedzip.reader import read_zip
            self.index = read_zip(data)

        def __getitem__(self, name):
            return self.index.get(name).header_offset

    members = central(data)

    def member(name):
        local = members[name]
        size, nlen, xlen = struct.unpack_from("<22xIHH", data, local)
        start = local + 30 + nlen + xlen
        return data[start : start + size]

    approved = {k: v["digest"] for k, v in json.loads(lock)["skills"].items()}
    lines = ["## Available skills", ""]
    for name, digest in approved.items():
        files = json.loads(member(name + "/.skillpack/manifest.json"))["files"]
        rows = "".join([f"{f['mode']} {f['size']} {f['blake3']} {f['path']}\\n" for f in files])
        if "blake3:" + blake3(b"skillpack-digest-v1\\n" + rows.encode()).hexdigest() != digest:
            raise SystemExit(name + ": digest")
        text = member(name + "/SKILL.md")
        if blake3(text).hexdigest() != [f["blake3"] for f in files if f["path"] == "SKILL.md"][0]:
            raise SystemExit(name + ": SKILL.md")
        description = ""
        for line in text.decode().split("---", 2)[1].splitlines():
            if line.startswith("description:"):
                description = line[12:].strip().strip("\\"'")
        lines.append(f"- {name}: {' '.join(description.split())}")
    catalog = "\\n".join(lines)
    body = member(SKILL + "/SKILL.md").decode().split("---", 2)[2]
    member(SKILL + "/" + RESOURCE).decode()
""")
VARIANTS = {
    "bare": "pass",
    "read bytes": READ,
    "import typing+dataclasses": "import typing, dataclasses",  # what the runtime avoids
    "import runtime": "import skillpack.runtime",
    "runtime load+read": READ + textwrap.dedent("""
        import skillpack.runtime as rt
        rt.load(data)[SKILL].file("SKILL.md").bytes()
    """),
    "runtime lazy load+read": READ + textwrap.dedent("""
        import skillpack.runtime as rt
        rt.load(data, lazy=True)[SKILL].file("SKILL.md").bytes()
    """),
    "runtime mmap load+read": MMAP + textwrap.dedent("""
        import skillpack.runtime as rt
        rt.load(data)[SKILL].file("SKILL.md").bytes()
    """),
    "runtime mmap lazy load+read": MMAP + textwrap.dedent("""
        import skillpack.runtime as rt
        rt.load(data, lazy=True)[SKILL].file("SKILL.md").bytes()
    """),
    "zipfile open+read": READ + textwrap.dedent("""
        import io, zipfile
        zipfile.ZipFile(io.BytesIO(data)).read(SKILL + "/SKILL.md")
    """),
    # A deployment's first turn: the system prompt's catalog, the model loads a skill, then
    # reads one of its files. Every SKILL.md shown is hashed and bound to its skill digest.
    "runtime first turn": READ + LOCK + textwrap.dedent("""
        import skillpack.runtime as rt
        bundle = rt.load(data, expect=lock)
        bundle.catalog_text()
        bundle.load_skill(SKILL)
        bundle[SKILL].file(RESOURCE).text()
    """),
    # The floor (issue 11): the least a first turn that verifies what it shows must do, in
    # plain Python with no checks beyond that: find each member through the central
    # directory, parse each skill's manifest, hash its file records into the skill digest and
    # compare it with the lock's, hash SKILL.md and compare it with its record, take the
    # description by a naive line scan (no YAML), build the catalog; then one skill's body.
    "floor first turn": READ + LOCK + FLOOR,
    # The same with the strict zip reader the runtime uses (every central entry checked
    # against its local header, names screened): what safe zip reading adds to the floor.
    "floor first turn, strict zip": READ + LOCK + FLOOR.replace(
        "members = central(data)", "members = strict(data)"),
    # The same by hand: zipfile, and a YAML parse of each SKILL.md for the catalog (nothing
    # verified, no digest checked).
    "zipfile + yaml first turn": READ + textwrap.dedent("""
        import io, zipfile, yaml
        z = zipfile.ZipFile(io.BytesIO(data))
        lines = ["## Available skills", ""]
        for name in z.namelist():
            if name.count("/") == 1 and name.endswith("/SKILL.md"):
                text = z.read(name).decode()
                meta = yaml.safe_load(text.split("---", 2)[1])
                description = " ".join(str(meta["description"]).split())
                lines.append("- %s: %s" % (meta["name"], description))
        body = z.read(SKILL + "/SKILL.md").decode().split("---", 2)[2]
        z.read(SKILL + "/" + RESOURCE).decode()
    """),
}

INSIDE = textwrap.dedent("""
    import sys, time
    clock = time.perf_counter
    t0 = clock()
    import skillpack.errors
    t1 = clock()
    import skillpack.storedzip.reader
    t2 = clock()
    import skillpack.formats.manifest
    t3 = clock()
    import skillpack.runtime as rt
    t4 = clock()
    import blake3
    t5 = clock()
    heavy = sorted({"typing", "dataclasses", "inspect", "json", "re"} & set(sys.modules))
    f = open(BUNDLE, 'rb'); data = f.read(); f.close()
    from skillpack.storedzip.reader import read_zip
    rt.load(data)[SKILL].file("SKILL.md").bytes()
    heavy_after = sorted({"typing", "dataclasses", "inspect", "json", "re"} & set(sys.modules))
    import json
    out = {"import skillpack.errors (+ skillpack, _record)": t1 - t0,
           "import skillpack.storedzip.reader (+ layout, spec.paths, struct)": t2 - t1,
           "import skillpack.formats.manifest (+ digest, secrets)": t3 - t2,
           "import skillpack.runtime (+ its two helpers, bisect)": t4 - t3,
           "import blake3": t5 - t4,
           "typing/dataclasses/inspect/json/re after the imports": ", ".join(heavy) or "none",
           "... after load() + reading SKILL.md": ", ".join(heavy_after) or "none"}
    parts = {"read_zip": [], "load lazy": [], "load eager": [], "first skill (lazy)": [],
             "4 KiB first read (hashed)": [], "4 KiB read again (cached)": [],
             "4 KiB text() again": []}
    a = clock(); first = rt.load(data, lazy=True); b = clock()
    first[SKILL].file("SKILL.md").bytes(); c = clock()
    out["first lazy load in this process"] = b - a
    out["first skill + its SKILL.md read"] = c - b
    bundle = rt.load(data)
    size, name, path = min((abs(bundle[n].file(p).size - 4096), n, p)
                           for n in bundle.names for p in bundle[n].files()
                           if not p.endswith((".png", ".pdf", ".ttf")))
    out["4 KiB file"] = f"{name}/{path} ({bundle[name].file(path).size} bytes)"
    for _ in range(RUNS):
        a = clock(); read_zip(data); b = clock()
        parts["read_zip"].append(b - a)
        a = clock(); rt.load(data); b = clock()
        parts["load eager"].append(b - a)
        a = clock(); lazy = rt.load(data, lazy=True); b = clock()
        parts["load lazy"].append(b - a)
        a = clock(); skill = lazy[name]; b = clock()
        parts["first skill (lazy)"].append(b - a)
        a = clock(); skill.file(path).bytes(); b = clock()
        skill.file(path).bytes(); c = clock()
        skill.file(path).text(); d = clock()
        parts["4 KiB first read (hashed)"].append(b - a)
        parts["4 KiB read again (cached)"].append(c - b)
        parts["4 KiB text() again"].append(d - c)
    for key, values in parts.items():
        out[key] = sorted(values)[len(values) // 2]
    texts = []
    for _ in range(RUNS):
        loaded = rt.load(data)
        a = clock(); loaded.catalog_text(); b = clock()
        texts.append(b - a)
    out["catalog_text() on a loaded bundle, first call (reads 180 SKILL.md)"] = sorted(
        texts)[len(texts) // 2]
    a = clock(); rt.load(data, lazy=True).catalog_text(); b = clock()
    out["catalog_text() on a fresh lazy load"] = b - a
    print(json.dumps(out))
""")


def corpus_bundle(dest: Path) -> Path:
    """Write the corpus bundle (the 180 skills of the tests) to `dest`."""
    sys.path[:0] = [str(REPO / "tests"), str(REPO)]
    from test_runtime import BUNDLE_SKILLS, build_bundle  # type: ignore[import-not-found,unused-ignore]

    dest.write_bytes(build_bundle(BUNDLE_SKILLS))
    return dest


def write_lock(bundle: Path, dest: Path) -> tuple[str, Path]:
    """A lock of every skill of `bundle`, as `skillpack lock` writes it, at `dest`; and the
    first turn's file: the text file of `SKILL` closest to 4 KiB."""
    sys.path[:0] = [str(REPO)]
    import skillpack.runtime as rt
    from skillpack.approve.lock import Lock, LockEntry

    loaded = rt.load(bundle.read_bytes())
    dest.write_bytes(Lock({name: LockEntry(loaded[name].digest, loaded[name].manifest.files,
                                           loaded[name].manifest.programs)
                           for name in loaded.names}, "1.0").to_bytes())
    skill = loaded[SKILL]
    texts = [p for p in skill.files() if p.endswith((".md", ".py", ".txt", ".json"))]
    return min(texts, key=lambda p: abs(skill.file(p).size - 4096)), dest


def clean_python(root: Path) -> str:
    """A venv whose site-packages points at the repository and skillpack's dependencies
    (`bench_build.installed_python`: as a wheel install finds them, no editable finder)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_build import installed_python

    return installed_python(root)


def child_env(pycache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "PYTHONSTARTUP")}
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


#: Variants run with another checkout's skillpack first on the path (``floors.py
#: --first-turn --against TREE``): variant name -> that checkout.
TREES: dict[str, Path] = {}


def run_child(python: str, code: str, env: dict[str, str], bundle: Path, runs: int = 0) -> str:
    bundle = bundle.resolve()
    prelude = (f"BUNDLE = {str(bundle)!r}; SKILL = {SKILL!r}; RUNS = {runs}; "
               f"LOCK = {str(LOCK_PATH.resolve())!r}; RESOURCE = {RESOURCE!r}; "
               f"BENCH = {str(REPO / 'benchmarks')!r}\n")
    # run in the bundle's folder: `-c` puts the working directory first on the path, and a
    # checkout there would shadow the one a variant asks for
    result = subprocess.run([python, "-c", prelude + code], env=env, capture_output=True,
                            text=True, check=False, cwd=bundle.parent)
    if result.returncode:
        raise SystemExit(f"child failed:\n{code}\n{result.stderr}")
    return result.stdout


def measure(python: str, env: dict[str, str], bundle: Path, runs: int,
            warmup: int, only: tuple[str, ...] = ()) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in only or VARIANTS}
    rng = random.Random(0)
    for round_no in range(warmup + runs):
        order = list(times)
        rng.shuffle(order)
        for name in order:
            tree = TREES.get(name)
            start = time.perf_counter()
            run_child(python, VARIANTS[name], env if tree is None else
                      {**env, "PYTHONPATH": str(tree)}, bundle)
            elapsed = time.perf_counter() - start
            if round_no >= warmup:
                times[name].append(elapsed)
    return times


FIRST_EAGER = textwrap.dedent("""
    import json, time
    f = open(BUNDLE, 'rb'); data = f.read(); f.close()
    import skillpack.runtime as rt
    a = time.perf_counter(); bundle = rt.load(data); b = time.perf_counter()
    bundle[SKILL].file("SKILL.md").bytes(); c = time.perf_counter()
    print(json.dumps([b - a, c - b]))
""")


def report(times: dict[str, list[float]], inside: dict[str, Any], bundle: Path,
           python: str) -> dict[str, Any]:
    medians = {name: statistics.median(values) for name, values in times.items()}
    bare, read = medians["bare"], medians["read bytes"]
    over_bare = {k: (v - bare) * 1e3 for k, v in medians.items()}
    over_read = {k: (v - read) * 1e3 for k, v in medians.items()}
    first_read_us = inside["4 KiB first read (hashed)"] * 1e6
    result: dict[str, Any] = {
        "bundle": str(bundle), "bundle_bytes": bundle.stat().st_size, "python": python,
        "runs": len(times["bare"]), "median_ms": {k: v * 1e3 for k, v in medians.items()},
        "min_ms": {k: min(v) * 1e3 for k, v in times.items()},
        "over_bare_ms": over_bare,
        "over_read_ms": over_read,
        "target": {
            "cold_start_ms": TARGET_MS,
            "cold_start": {name: {"over_bare_ms": over_bare[name],
                                  "over_bare_met": over_bare[name] <= TARGET_MS,
                                  "over_read_ms": over_read[name],
                                  "over_read_met": over_read[name] <= TARGET_MS}
                           for name in TARGETED},
            "read_4kib_us": TARGET_READ_US,
            "read_4kib_first_us": first_read_us,
            "read_4kib_met": first_read_us <= TARGET_READ_US,
        },
        "inside": inside,
    }
    return result


def verdict(value: float, target: float, unit: str = "ms") -> str:
    if value <= target:
        return f"met ({target - value:.1f} {unit} to spare)"
    return f"MISSED by {value - target:.1f} {unit}"


def print_report(result: dict[str, Any]) -> None:
    print(f"bundle: {result['bundle']} ({result['bundle_bytes']:,} bytes); "
          f"{result['runs']} runs per variant; python {result['python']}")
    print(f"{'variant':<26}{'median ms':>11}{'min ms':>9}{'over bare':>11}{'over read':>11}")
    for name, value in result["median_ms"].items():
        print(f"{name:<26}{value:>11.2f}{result['min_ms'][name]:>9.2f}"
              f"{result['over_bare_ms'][name]:>11.2f}{result['over_read_ms'][name]:>11.2f}")
    print("(medians; 'over read' subtracts the bare interpreter plus reading the bundle's "
          "bytes)")
    target = result["target"]
    print(f"\ntarget (issue 4): load + read one SKILL.md in at most {target['cold_start_ms']:.0f} "
          "ms over the bare interpreter;\n'over bare+read' is the fair comparison: every "
          "variant needs the bytes first")
    print(f"  {'(medians, ms)':<40}{'over bare':<28}over bare+read")
    for name, label in TARGETED.items():
        row = target["cold_start"][name]
        print(f"  {label:<40}{row['over_bare_ms']:>5.1f} "
              f"{verdict(row['over_bare_ms'], TARGET_MS):<22}{row['over_read_ms']:>5.1f} "
              f"{verdict(row['over_read_ms'], TARGET_MS)}")
    over = result["over_read_ms"]
    floor, strict, turn = (over[k] for k in ("floor first turn", "floor first turn, strict zip",
                                             "runtime first turn"))
    if floor > 0 and strict > 0:
        print(f"  the first turn is {turn / floor:.1f}x its floor and {turn / strict:.1f}x the "
              "floor with strict zip reading (over bare+read)")
    first = target["read_4kib_first_us"]
    print(f"  reading a ~4 KiB file after load, first time (hashed): {first:.1f} us, target "
          f"{TARGET_READ_US:.0f} us: {verdict(first, TARGET_READ_US, 'us')}")
    print("\nin-process (medians):")
    for name, value in result["inside"].items():
        if isinstance(value, float):
            shown = f"{value * 1e6:.1f} us" if value < 1e-3 else f"{value * 1e3:.2f} ms"
        else:
            shown = str(value)
        print(f"  {name:<58}{shown}")


FLOOR_VARIANTS = ("bare", "read bytes", "runtime first turn", "floor first turn",
                  "floor first turn, strict zip")
#: The first turn's parts, each timed around its call inside a fresh interpreter.
TURN_PARTS = ("import skillpack.runtime", "load(data, expect=lock)", "catalog_text()",
              "load_skill(name)", "one file's text()")
#: Timed after the first turn, in the same interpreter: not part of it (not in its total).
WARM_PARTS = ("catalog_text(), warm", "its floor (floors.py)",
              "its exact floor (floors.py)")
FIRST_TURN_PARTS = textwrap.dedent("""
    import time
    clock = time.perf_counter
    f = open(BUNDLE, 'rb'); data = f.read(); f.close()
    f = open(LOCK, 'rb'); lock = f.read(); f.close()
    t0 = clock()
    import skillpack.runtime as rt
    t1 = clock()
    bundle = rt.load(data, expect=lock)
    t2 = clock()
    bundle.catalog_text()
    t3 = clock()
    bundle.load_skill(SKILL)
    t4 = clock()
    bundle[SKILL].file(RESOURCE).text()
    t5 = clock()
    import sys  # the floor of that (benchmarks/floors.py), after the first turn: untimed
    sys.path.insert(0, BENCH)
    from floors import catalog_exact_floor, catalog_floor, catalog_setup
    skills = catalog_setup(data)
    view = memoryview(data)
    warm, floor, exact = [], [], []  # catalog_text() on an already loaded bundle (best of
    for _ in range(5):               # 5 fresh loads) and its two floors, in turn
        again = rt.load(data, expect=lock)
        a = clock(); again.catalog_text(); warm.append(clock() - a)
        a = clock(); catalog_floor(view, skills); floor.append(clock() - a)
        a = clock(); catalog_exact_floor(view, skills); exact.append(clock() - a)
    print(repr([t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, min(warm), min(floor),
                min(exact)]))
""")


def first_turn_floors(runs: int, warmup: int = 3, against: Path | None = None) -> None:
    """Issue 11's floor: the first turn and its two floors, whole processes, medians over the
    bare interpreter that reads the bundle's bytes (what `benchmarks/floors.py --first-turn`
    prints). With `against` (another checkout of skillpack, say main before a change), its
    first turn runs in the same rounds, interleaved: before and after from one run."""
    global RESOURCE, LOCK_PATH
    variants = FLOOR_VARIANTS
    if against is not None:
        other = f"runtime first turn ({against.name})"
        VARIANTS[other] = VARIANTS["runtime first turn"]
        TREES[other] = against.resolve()
        variants = (*FLOOR_VARIANTS[:3], other, *FLOOR_VARIANTS[3:])
    with tempfile.TemporaryDirectory(prefix="skillpack-bench-") as tmp:
        root = Path(tmp)
        bundle = corpus_bundle(root / "corpus.bundle")
        RESOURCE, LOCK_PATH = write_lock(bundle, root / "skills.lock")
        python = clean_python(root / "venv")
        env = child_env(root / "pycache")
        times = measure(python, env, bundle, runs, warmup, variants)
        trees: dict[str, dict[str, str]] = {"this checkout": env}
        if against is not None:
            trees[against.name] = {**env, "PYTHONPATH": str(against.resolve())}
        parts: dict[str, list[list[float]]] = {tree: [] for tree in trees}
        for _ in range(runs):  # alternately
            for tree, tree_env in trees.items():
                parts[tree].append(ast.literal_eval(
                    run_child(python, FIRST_TURN_PARTS, tree_env, bundle)))
    medians = {name: statistics.median(values) * 1e3 for name, values in times.items()}
    read = medians["read bytes"]
    print(f"first turn (issue 11), corpus bundle, median of {runs} interleaved processes, "
          "ms over a bare interpreter that reads the bundle's bytes (target 10 ms); load "
          f"average {os.getloadavg()[0]:.2f}")
    for name in variants[2:]:
        print(f"  {name:<30} {medians[name] - read:7.1f} ms")
    floor = medians["floor first turn, strict zip"] - read
    print(f"  the first turn is {(medians['runtime first turn'] - read) / floor:.1f}x the floor "
          "with strict zip reading")
    print(f"its parts, timed inside {runs} fresh interpreters each (ms, best / median):")
    print(f"  {'':<26}" + "".join(f"{tree:>21} " for tree in parts))
    def row(label: str, values: list[list[float]]) -> None:
        print(f"  {label:<26}" + "".join(
            f"{min(v) * 1e3:9.2f} / {statistics.median(v) * 1e3:7.2f}  " for v in values))

    for at, part in enumerate(TURN_PARTS):
        row(part, [[r[at] for r in rows] for rows in parts.values()])
    row("total", [[sum(r[: len(TURN_PARTS)]) for r in rows] for rows in parts.values()])
    for at, part in enumerate(WARM_PARTS, len(TURN_PARTS)):
        row(part, [[r[at] for r in rows] for rows in parts.values()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=40, help="measured runs per variant")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured rounds first")
    parser.add_argument("--bundle", type=Path, help="a bundle to use instead of the corpus")
    parser.add_argument("--python", help="interpreter for the children (default: a clean "
                        "throwaway venv over this interpreter)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="skillpack-bench-") as tmp:
        root = Path(tmp)
        bundle = args.bundle or corpus_bundle(root / "corpus.bundle")
        global RESOURCE, LOCK_PATH
        RESOURCE, LOCK_PATH = write_lock(bundle, root / "skills.lock")
        python = args.python or clean_python(root / "venv")
        env = child_env(root / "pycache")
        times = measure(python, env, bundle, args.runs, args.warmup)
        inside = json.loads(run_child(python, INSIDE, env, bundle, runs=max(args.runs, 30)))
        firsts = [json.loads(run_child(python, FIRST_EAGER, env, bundle)) for _ in range(9)]
        inside["first eager load in this process"] = statistics.median(f[0] for f in firsts)
        inside["first SKILL.md read after it"] = statistics.median(f[1] for f in firsts)
        result = report(times, inside, bundle, python)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_report(result)


if __name__ == "__main__":
    main()
