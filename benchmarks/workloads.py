"""The workloads of the suite, each a group of lines on one subject (see harness.py).

* ``startup``: ``skillpack --version`` beside a bare interpreter, and beside what importing
  click costs (both over the bare interpreter); ``skillpack check`` of one skill beside
  ``agentskills validate`` (skills-ref's command) of it.
* ``first-turn``: a deployment's first turn, in a fresh interpreter that has read the
  bundle's bytes: ``runtime.load(data, expect=...)``, ``catalog_text()``, ``load_skill`` of
  one skill, one of its files' ``text()`` and its ``tools``; with ``expect`` the lock file's
  bytes, and as the README writes it, ``skillpack.read_lock(path).digests()``; beside the
  strict floor (the least a first turn that verifies what it shows must do, with the
  runtime's strict zip reader) and each other. Times over a bare interpreter reading the
  bytes.
* on the corpus and on each generated repository (benchmarks/repo.py): ``check`` beside
  skills-ref's ``validate`` of every skill in one interpreter; ``lint`` beside ``check``;
  ``digest`` beside ``cat`` (and ``b3sum``, if installed) of the files it carries; ``pack``
  beside ``zip -r -X`` run once a skill (and Anthropic's packager, ``--packager``);
  ``bundle`` beside ``pack``; ``lock`` beside ``verify --lock``; ``verify --lock`` beside
  ``digest``; ``review --lock`` beside ``verify --lock``; ``verify`` of the bundle beside
  ``unzip -t`` of it, and two floors beside the same: ``verify --help`` (the interpreter,
  click and the modules ``verify`` imports, no bundle read) and its byte floor (those
  imports, then each member's CRC-32, BLAKE3, SHA-256 and content scan, and nothing done once
  a skill: VERIFY_FLOOR).
* ``pull``: ``skillpack pull`` of 50 references (50 generated skills pushed to a local
  ``docker-registry`` on 127.0.0.1) in one process, with and without ``--lock``, beside
  ``skopeo copy`` run once a reference (``docker://`` to ``dir:``); left out, saying why,
  when docker-registry, skopeo or the oras library is missing.
* ``big-file``: a skill carrying one large file of random bytes: ``digest`` beside ``cat``
  (and ``b3sum``), ``pack`` beside ``zip -r -X``, ``verify`` of its archive beside
  ``unzip -t``, with the peak memory of each.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import local_registry
import repo
from harness import REPO, BenchError, Command, Group, Line, MiB, Tree, remove

SKILL_WORKLOADS = ("check", "lint", "digest", "pack", "bundle", "lock", "verify-lock",
                   "review-lock", "verify-bundle")
WORKLOADS = ("startup", "first-turn", *SKILL_WORKLOADS, "pull", "big-file")
PULL_SKILLS = 50


@dataclass
class Context:
    trees: list[Tree]  # this tree first ("new"), then --against's ("old")
    work: Path  # the suite's temp folder
    corpus: Path | None
    packager: Path | None  # Anthropic's package_skill.py, if given
    chosen: list[Path] = field(default_factory=list)  # the corpus skills, once found

    @property
    def new(self) -> Tree:
        return self.trees[0]

    def run(self, *args: str | Path) -> str:
        """This tree's skillpack, untimed (to make what a workload reads)."""
        done = subprocess.run(self.new.skillpack(*args), env=self.new.env, cwd=self.work,
                              capture_output=True, text=True, check=False)
        if done.returncode not in (0, 1):
            raise BenchError(f"skillpack {' '.join(map(str, args))[:200]}: {done.stderr}")
        return done.stdout


def peer(argv: Sequence[str | Path], **kwargs: object) -> Command:
    return Command([str(a) for a in argv], **kwargs)  # type: ignore[arg-type]


def shell(script: str, **kwargs: object) -> Command:
    return peer(["sh", "-c", script], **kwargs)


# -- start-up -----------------------------------------------------------------------------------

def startup(ctx: Context) -> Group:
    fixture = REPO / "fixtures" / "release-notes"  # one skill skills-ref accepts too
    new, cwd = ctx.new, ctx.work
    return Group(
        "start-up",
        [Line("startup", "`--version`", "version", "bare", "`python -c pass`"),
         Line("startup", "`--version`, over bare", "version", "click",
              "`import click`, over bare", base="bare"),
         Line("startup", "`check` of one skill", "check", "validate",
              "`agentskills validate` of it")],
        lambda: "start-up: one skill (fixtures/release-notes)",
        lambda tree: {"version": Command(tree.skillpack("--version"), tree.env, cwd),
                      "check": Command(tree.skillpack("check", fixture), tree.env, cwd)},
        lambda: {"bare": peer([new.python, "-c", "pass"], env=new.env, cwd=cwd),
                 "click": peer([new.python, "-c", "import click"], env=new.env, cwd=cwd),
                 "validate": peer([new.bin / "agentskills", "validate", fixture], env=new.env,
                                  cwd=cwd)},
        runs_factor=4, warmup=1)


# -- the runtime's first turn -------------------------------------------------------------------

READ = "f = open(BUNDLE, 'rb'); data = f.read(); f.close()\n"
READ_LOCK = "f = open(LOCK, 'rb'); lock = f.read(); f.close()\n"
TURN = textwrap.dedent("""
    from skillpack import runtime
    bundle = runtime.load(data, expect=EXPECT)
    bundle.catalog_text()
    bundle.load_skill(SKILL)
    skill = bundle[SKILL]
    skill.file(RESOURCE).text()
    skill.tools
""")
#: The strict floor: the least a first turn that verifies what it shows must do, in plain
#: Python: each member found through the runtime's strict zip reader (every central entry
#: checked against its local header), each skill's manifest parsed, its file records hashed
#: into the digest and compared with the lock's, SKILL.md hashed and compared with its
#: record, the description taken by a naive line scan; then one skill's body and one file.
STRICT_FLOOR = textwrap.dedent("""
    import json, struct
    from blake3 import blake3
    from skillpack.storedzip.reader import read_zip

    index = read_zip(data)

    def member(name):
        local = index.get(name).header_offset
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


def first_turn(ctx: Context, subject: str, skills: Callable[[], list[Path]]) -> Group:
    """The first turn on the bundle of `skills()` (the corpus, or a generated repository)."""
    bundle, lock = ctx.work / "first-turn.bundle", ctx.work / "first-turn.lock"
    chosen: dict[str, str] = {}

    def setup() -> str:
        paths = skills()
        ctx.run("bundle", *paths, "-o", bundle)
        ctx.run("lock", *paths, "-o", lock)
        listed = json.loads(ctx.run("files", "--json", *paths))
        first = min(listed, key=lambda s: s["name"])
        texts = [f for f in first["files"] if f["path"].endswith((".md", ".py", ".txt"))]
        resource = min(texts, key=lambda f: abs(f["size"] - 4096))
        chosen.update(SKILL=first["name"], RESOURCE=resource["path"])
        return (f"first turn: the {subject} bundle ({bundle.stat().st_size / 1e6:.1f} MB), "
                "over a bare interpreter reading its bytes")

    def child(tree: Tree, body: str) -> Command:
        prelude = (f"BUNDLE = {str(bundle)!r}; LOCK = {str(lock)!r}; "
                   f"SKILL = {chosen['SKILL']!r}; RESOURCE = {chosen['RESOURCE']!r}\n")
        return Command([tree.python, "-c", prelude + body], tree.env, ctx.work)

    return Group(
        "first turn",
        [Line("first-turn", "first turn as the README writes it, `expect=` the lock's bytes",
              "lock-bytes", "floor", "the strict floor", base="read"),
         Line("first-turn", "first turn, `expect=read_lock(path).digests()`", "read-lock",
              "lock-bytes", "`expect=` the lock's bytes", yardstick=True, base="read")],
        setup,
        lambda tree: {
            "lock-bytes": child(tree, READ + READ_LOCK + TURN.replace("EXPECT", "lock")),
            "read-lock": child(tree, READ + "import skillpack\n" + TURN.replace(
                "EXPECT", "skillpack.read_lock(LOCK).digests()"))},
        lambda: {"read": child(ctx.new, READ),
                 "floor": child(ctx.new, READ + READ_LOCK + STRICT_FLOOR)},
        runs_factor=4, warmup=1)


# -- commands on many skills --------------------------------------------------------------------

SKILLS_REF = ("import sys\nfrom pathlib import Path\nimport skills_ref.cli\n"
              "from skills_ref.validator import validate\n"
              "for path in sys.argv[1:]:\n    validate(Path(path))\n")


#: The byte floor of `verify` of a bundle: what `verify` must do to every byte, and nothing
#: it does once a skill. The modules `verify` imports (as `verify --help`), the bundle read
#: whole through the strict zip reader, then every member's bytes once, with each check
#: `verify` makes of them: its CRC-32, and for a skill's file its BLAKE3, SHA-256 and the
#: content scan (the function `verify` calls, allowing nothing). No SKILL.md is parsed, no
#: manifest compared, no path judged.
VERIFY_FLOOR = textwrap.dedent("""
    import hashlib, sys, zlib
    from blake3 import blake3
    import skillpack.cli.commands.verify
    from skillpack.content.scan import scan_content
    from skillpack.storedzip.reader import read_zip

    f = open(sys.argv[1], "rb"); data = f.read(); f.close()
    view = memoryview(data)
    for entry in read_zip(data).entries:
        member = view[entry.data_offset : entry.data_offset + entry.size]
        if zlib.crc32(member) != entry.crc32:
            raise SystemExit(entry.name + ": CRC-32")
        if ".skillpack/" not in entry.name:  # the manifests and the index: their CRC only
            blake3(member).hexdigest()
            hashlib.sha256(member).hexdigest()
            scan_content(entry.name, member.tobytes(), frozenset())
""")


def skill_commands(ctx: Context, key: str, subject: str,
                   make: Callable[[], list[Path]]) -> Group:
    """The lines of SKILL_WORKLOADS on the skills `make()` gives (folders, or folders of
    skills); `key` names the group's folder."""
    work = ctx.work / key
    lock, bundle = work / "skills.lock", work / "skills.bundle"
    listing, zips, packaged = work / "files.list", work / "zip.sh", work / "package.sh"
    paths: list[Path] = []
    folders: list[str] = []

    def setup() -> str:
        work.mkdir()
        paths.extend(make())
        skills = json.loads(ctx.run("files", "--json", *paths))
        carried = sorted(f"{s['root']}/{f['path']}" for s in skills for f in s["files"])
        listing.write_bytes("\0".join(carried).encode())
        found = [Path(s["root"]).resolve() for s in skills]
        folders.extend(map(str, found))
        zips.write_text("".join(
            f"cd {shlex.quote(str(f.parent))} && zip -q -r -X {work}/zips/{i}.zip "
            f"{shlex.quote(f.name)}\n" for i, f in enumerate(found)))
        if ctx.packager is not None:
            packaged.write_text("".join(
                f"{shlex.quote(ctx.new.python)} {shlex.quote(str(ctx.packager))} "
                f"{shlex.quote(str(f))} {work}/packaged >/dev/null\n" for f in found))
        ctx.run("lock", *paths, "-o", lock)
        ctx.run("bundle", *paths, "-o", bundle)
        size = sum(f["size"] for s in skills for f in s["files"])
        return (f"{subject}: {len(skills):,} skills, {len(carried):,} files, "
                f"{size / 1e6:.1f} MB")

    def ours(tree: Tree) -> dict[str, Command]:
        out = work / tree.label
        out.mkdir(exist_ok=True)

        def sp(*args: str | Path, before: Callable[[], object] | None = None,
               ok: tuple[int, ...] = (0,)) -> Command:
            return Command(tree.skillpack(*args), tree.env, ctx.work, before, ok)

        return {
            "check": sp("check", *paths, ok=(0, 1)),
            "lint": sp("lint", *paths, ok=(0, 1)),
            "digest": sp("digest", *paths),
            "pack": sp("pack", *paths, "-o", out / "packed", before=remove(out / "packed")),
            "bundle": sp("bundle", *paths, "-o", out / "skills.bundle",
                         before=remove(out / "skills.bundle")),
            "lock": sp("lock", *paths, "-o", out / "skills.lock",
                       before=remove(out / "skills.lock")),
            "verify-lock": sp("verify", "--lock", lock, *paths),
            "review-lock": sp("review", *paths, "--lock", lock, "-o", out / "review.html",
                              before=remove(out / "review.html")),
            "verify-bundle": sp("verify", bundle),
            # `skillpack verify` up to reading a byte (the interpreter, click, the modules the
            # command imports; its help instead of a bundle): the floor of its line, in any
            # revision (`--against` runs it for both trees)
            "verify-start": sp("verify", "--help"),
        }

    def peers() -> dict[str, Command]:
        return {
            "skills-ref": peer([ctx.new.python, "-c", SKILLS_REF, *folders], env=ctx.new.env,
                               cwd=ctx.work),
            "cat": shell(f"xargs -0 cat < {listing} > /dev/null"),
            "b3sum": shell(f"xargs -0 b3sum < {listing} > /dev/null"),
            "zip": peer(["sh", zips], before=fresh(work / "zips")),
            "packager": peer(["sh", packaged], before=fresh(work / "packaged")),
            "unzip": peer(["unzip", "-tq", bundle]),
            # what `verify` must do to every byte, nothing once a skill (VERIFY_FLOOR): the
            # floor below which no `verify` of this bundle goes, in this tree's code
            "verify-floor": peer([ctx.new.python, "-c", VERIFY_FLOOR, bundle], env=ctx.new.env,
                                 cwd=ctx.work),
        }

    lines = [
        Line("check", "`check`", "check", "skills-ref", "skills-ref `validate`, one process"),
        Line("lint", "`lint`", "lint", "check", "`check`", yardstick=True),
        Line("digest", "`digest`", "digest", "cat", "`cat` of the files"),
        *([Line("digest", "`digest`", "digest", "b3sum", "`b3sum` of the files")]
          if shutil.which("b3sum") else []),
        Line("pack", "`pack`", "pack", "zip", "`zip -r -X` each skill"),
        *([Line("pack", "`pack`", "pack", "packager", "Anthropic's `package_skill.py`")]
          if ctx.packager is not None else []),
        Line("bundle", "`bundle`", "bundle", "pack", "`pack`", yardstick=True),
        Line("lock", "`lock`", "lock", "verify-lock", "`verify --lock`", yardstick=True),
        Line("verify-lock", "`verify --lock`", "verify-lock", "digest", "`digest`",
             yardstick=True),
        Line("review-lock", "`review --lock`", "review-lock", "verify-lock", "`verify --lock`",
             yardstick=True),
        Line("verify-bundle", "`verify` of the bundle", "verify-bundle", "unzip",
             "`unzip -t` of it"),
        Line("verify-bundle", "its floor: `verify --help`, no bundle read", "verify-start",
             "unzip", "`unzip -t` of it"),
        Line("verify-bundle", "its byte floor: start-up, then each member's CRC-32, BLAKE3, "
             "SHA-256 and scan", "verify-floor", "unzip", "`unzip -t` of it", floor=True),
    ]
    return Group(subject, lines, setup, ours, peers)


def fresh(folder: Path) -> Callable[[], None]:
    def make() -> None:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
    return make


def corpus_skills(ctx: Context) -> list[Path]:
    """The corpus skills one lock or bundle can hold: those `check` finds valid, one per name
    (the first by path)."""
    assert ctx.corpus is not None
    if not ctx.chosen:
        verdicts = json.loads(ctx.run("check", "--json", ctx.corpus))
        chosen: dict[str, Path] = {}
        for verdict in sorted(verdicts, key=lambda v: v["path"]):
            if verdict["valid"]:
                chosen.setdefault(verdict["name"], Path(verdict["path"]))
        ctx.chosen.extend(sorted(chosen.values()))
    return ctx.chosen


def generated(ctx: Context, skills: int) -> Callable[[], list[Path]]:
    """A maker of the repository of `skills` skills (benchmarks/repo.py), written once."""
    root = ctx.work / f"repository-{skills}"

    def make() -> list[Path]:
        if not root.exists():
            repo.write(root, skills)
        return [root]
    return make


# -- one large file -----------------------------------------------------------------------------

def big_file(ctx: Context, size_mib: int) -> Group:
    work = ctx.work / "big"
    skill = work / "big"
    archive: list[Path] = []

    def setup() -> str:
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text("---\nname: big\ndescription: Carries one large data "
                                        "file. Use when benchmarking.\n---\n# Data\n")
        with open(skill / "data.bin", "wb") as handle:
            for _ in range(size_mib):
                handle.write(os.urandom(MiB))
        ctx.run("pack", skill, "-o", work / "archive")
        archive.extend((work / "archive").glob("*.skill"))
        return f"big file: a skill carrying one file of {size_mib} MiB"

    def ours(tree: Tree) -> dict[str, Command]:
        out = work / tree.label
        return {
            "digest": Command(tree.skillpack("digest", skill), tree.env, ctx.work),
            "pack": Command(tree.skillpack("pack", skill, "-o", out), tree.env, ctx.work,
                            remove(out)),
            "verify": Command(tree.skillpack("verify", archive[0]), tree.env, ctx.work),
        }

    files = [skill / "SKILL.md", skill / "data.bin"]
    return Group(
        "big file",
        [Line("big-file", "`digest`", "digest", "cat", "`cat` of the files"),
         *([Line("big-file", "`digest`", "digest", "b3sum", "`b3sum` of the files")]
           if shutil.which("b3sum") else []),
         Line("big-file", "`pack`", "pack", "zip", "`zip -r -X` the skill"),
         Line("big-file", "`verify` of its archive", "verify", "unzip", "`unzip -t` of it")],
        setup, ours,
        lambda: {"cat": peer(["cat", *files]),
                 "b3sum": peer(["b3sum", *files]),
                 "zip": shell(f"cd {work} && zip -q -r -X {work}/big.zip big",
                              before=remove(work / "big.zip")),
                 "unzip": peer(["unzip", "-tq", archive[0]])})


# -- pull from a registry -----------------------------------------------------------------------

def pull_group(ctx: Context) -> Group | None:
    """`pull` of PULL_SKILLS references beside `skopeo copy` of each; None (and why, on
    stderr) when a piece is missing."""
    registry, skopeo = shutil.which("docker-registry"), shutil.which("skopeo")
    missing = [name for name, found in (("docker-registry", registry), ("skopeo", skopeo))
               if found is None]
    if subprocess.run([ctx.new.python, "-c", "import oras.provider"], env=ctx.new.env,
                      capture_output=True, check=False).returncode != 0:
        missing.append("the oras library (pip install 'skillpack[oci]')")
    if missing:
        print(f"run.py: pull left out: {', '.join(missing)} not installed", file=sys.stderr)
        return None
    assert registry is not None and skopeo is not None
    work = ctx.work / "pull"
    lock = work / "skills.lock"
    refs: list[str] = []

    def setup() -> str:
        work.mkdir()
        host = serve_registry(registry, work)
        skills = repo.write(work / "skills", PULL_SKILLS)
        ctx.run("lock", *skills, "-o", lock)
        pushed = json.loads(ctx.run("push", *skills, f"{host}/bench/skills", "--plain-http",
                                    "--json"))
        if not pushed.get("ok"):
            raise BenchError(f"push to the benchmark registry failed: {pushed}")
        refs.extend(row["ref"] for row in pushed["pushed"])
        size = sum(row["layer_size"] for row in json.loads(
            ctx.run("export", "oci", *skills, "-o", work / "layout", "--json"))["artifacts"])
        return (f"pull: {len(refs)} skills from docker-registry on 127.0.0.1 "
                f"({size / 1e6:.1f} MB of layers)")

    def ours(tree: Tree) -> dict[str, Command]:
        out = work / tree.label

        def pull(*extra: str | Path) -> Command:
            return Command(tree.skillpack("pull", *refs, "-o", out, "--plain-http", *extra),
                           tree.env, ctx.work, remove(out))

        return {"pull": pull(), "pull-lock": pull("--lock", lock)}

    def peers() -> dict[str, Command]:
        copies = work / "skopeo.sh"
        copies.write_text("".join(
            f"{shlex.quote(skopeo)} copy -q --src-tls-verify=false "
            f"docker://{ref} dir:{work}/skopeo/{i}\n" for i, ref in enumerate(refs)))
        return {"skopeo": peer(["sh", "-e", copies], before=fresh(work / "skopeo"))}

    copy = "`skopeo copy` run once a reference"
    return Group(
        "pull",
        [Line("pull", f"`pull` of {PULL_SKILLS} references, one process", "pull", "skopeo",
              copy),
         Line("pull", f"`pull --lock` of {PULL_SKILLS} references", "pull-lock", "skopeo",
              copy)],
        setup, ours, peers)


def serve_registry(binary: str, work: Path) -> str:
    """Start `docker-registry serve` on 127.0.0.1 and a free port (local_registry.py), storage
    under `work`, stopped when the suite exits; its host:port once it answers /v2/."""
    running = contextlib.ExitStack()
    atexit.register(running.close)
    try:
        return str(running.enter_context(local_registry.serve(binary, work)).host)
    except local_registry.RegistryError as err:
        raise BenchError(str(err)) from err
