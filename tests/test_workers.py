"""`skillpack digest`, `check` and `pack` of many skill folders share them among worker processes
(`skillpack.cli._workers`) and say exactly what one process says: the same stdout, stderr and
exit code (and `pack`, the same archives, and nothing else left behind), byte for byte, with
``SKILLPACK_JOBS=1`` (no worker) and ``SKILLPACK_JOBS=2`` (one worker, whatever the cores), on
skills that digest, skills that fail (a SKILL.md that does not parse, a secret, a link, a mis-
cased SKILL.md), a PATH with no skill and a note from discovery; with and without ``--json``;
and on the corpus. A worker that dies or fails has its share done again by the command itself;
notes said during out-of-turn work wait for their turn.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import CORPUS_SKILLS, REPO, write_skill

from skillpack.cli import _workers
from skillpack.source.notes import held, listen, note, unlisten

#: The command as a process runs it, counting the workers it forks (said last on stderr).
_COUNTED = """
import os, sys
forked = []
fork = os.fork
def counted():
    pid = fork()
    if pid:
        forked.append(pid)
    return pid
os.fork = counted
from skillpack.cli import outcome
code = outcome(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write(f"FORKED {len(forked)}\\n")
sys.exit(code)
"""


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1


#: Workers forked whatever the cores (``SKILLPACK_JOBS=2``): Linux only.
needs_fork = pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux")
#: What the runs that share the work ask for: two processes, on any Linux machine.
SHARED = "2"


def _digest(args: list[str], jobs: str | None, cwd: Path,
            command: str = "digest") -> tuple[int, str, str, int]:
    """``skillpack COMMAND ARGS`` as a process: exit code, stdout, stderr, workers forked."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop(_workers.JOBS_ENV, None)
    if jobs is not None:
        env[_workers.JOBS_ENV] = jobs
    done = subprocess.run([sys.executable, "-c", _COUNTED, command, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)
    err, _, count = done.stderr.rstrip("\n").rpartition("\n")
    err = err + "\n" if err else ""
    if not count.startswith("FORKED "):
        err, count = done.stderr, "FORKED -1"
    return done.returncode, done.stdout, err, int(count.split()[1])


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of 16 skills: 11 that digest, and 5 that cannot be digested, spread out
    (every worker gets some of each)."""
    root = tmp_path_factory.mktemp("many")
    for at in range(16):
        write_skill(root / f"s{at:02}", f"---\nname: s{at:02}\ndescription: Use when a test "
                    f"needs skill {at}.\n---\n\nBody {at}.\n",
                    {f"references/r{n}.md": f"text {at} {n}\n" for n in range(at % 4)})
    (root / "s03" / "SKILL.md").write_text("---\nname: [unclosed\n---\nBody.\n")
    (root / "s06" / "notes.txt").write_text("key = " + "AKIA" + "Q3EGRJ5DFDPQ7Z2N\n")
    (root / "s09" / "link.md").symlink_to(root / "s00" / "SKILL.md")
    (root / "s12" / "SKILL.md").rename(root / "s12" / "skill.md")
    (root / "s13" / "SKILL.md").write_text("no frontmatter at all\n")
    (root / "node_modules").mkdir()  # a note from discovery: "skipped .../node_modules/"
    return root


@needs_fork
@pytest.mark.parametrize("flags", [[], ["--json"]], ids=["text", "json"])
def test_workers_say_what_one_process_says(many: Path, tmp_path: Path,
                                           flags: list[str]) -> None:
    args = [str(many), str(many / "s00"), str(tmp_path), *flags]  # tmp_path: no skill in it
    alone = _digest(args, "1", tmp_path)
    shared = _digest(args, SHARED, tmp_path)
    assert alone[3] == 0 and shared[3] >= 1, (alone[3], shared[3])
    assert shared[:3] == alone[:3]
    code, out, err, _ = alone
    assert code == 1
    if not flags:
        assert out.count("blake3:") == 11, out
        assert "s03" in err and "s06" in err and "s09" in err and "s12" in err, err
        assert "node_modules" in err and "no SKILL.md found in" in err, err


@needs_fork
@pytest.mark.parametrize("flags", [[], ["--json"], ["--strict"], ["--json", "--target",
                                                                  "claude-code"]],
                         ids=["text", "json", "strict", "target"])
def test_check_with_workers_says_what_one_process_says(many: Path, tmp_path: Path,
                                                       flags: list[str]) -> None:
    """`check` too: every problem of every skill, the tally, the PATH with no skill and the
    discovery note, in the order one process gives them."""
    (many / "s07" / "SKILL.md").write_text("---\nname: s07\ndescription: " + "x" * 1100
                                           + "\n---\n\nBody.\n")  # too long: an error
    try:
        args = [str(many), str(many / "s00"), str(tmp_path), *flags]
        alone = _digest(args, "1", tmp_path, "check")
        shared = _digest(args, SHARED, tmp_path, "check")
    finally:
        (many / "s07" / "SKILL.md").write_text("---\nname: s07\ndescription: Use when a "
                                               "test needs skill 7.\n---\n\nBody 7.\n")
    assert alone[3] == 0 and shared[3] >= 1, (alone[3], shared[3])
    assert shared[:3] == alone[:3]
    code, out, err, _ = alone
    assert code == 1
    if not flags or flags == ["--strict"]:
        assert "checked 16 skills: 10 valid, 6 invalid" in out, out
        assert "description" in out and "s06/notes.txt" in out, out
        assert "node_modules" in err and "no SKILL.md found in" in err, err


@needs_fork
def test_check_with_lint_runs_in_one_process(many: Path, tmp_path: Path) -> None:
    """``check --lint`` gives lint's own results: no worker (they carry what a plain check
    result does not)."""
    assert _digest([str(many), "--lint"], SHARED, tmp_path, "check")[3] == 0


def _valid(root: Path, count: int = 12) -> Path:
    """A folder of `count` valid skills (some with a script, a big reference, a subfolder)."""
    for at in range(count):
        files = {f"references/r{n}.md": f"text {at} {n}\n" * (1 + 500 * (at % 3))
                 for n in range(at % 4)}
        if at % 5 == 0:
            files["scripts/run.sh"] = "#!/bin/sh\necho hi\n"
        write_skill(root / f"v{at:02}", f"---\nname: v{at:02}\ndescription: Use when a test "
                    f"needs skill {at}.\n---\n\nBody {at}.\n", files)
        if at % 5 == 0:
            (root / f"v{at:02}" / "scripts" / "run.sh").chmod(0o755)
    return root


def _tree(folder: Path) -> dict[str, bytes]:
    """Every entry of `folder` (hidden temp files too): its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())} if folder.exists() else {}


@needs_fork
def test_pack_with_workers_writes_what_one_process_writes(tmp_path: Path) -> None:
    """The same archives, byte for byte, the same output, nothing else in the folder; then
    packed again (every archive current: "unchanged"), the same again."""
    skills = _valid(tmp_path / "skills")
    alone = _digest([str(skills), "-o", str(tmp_path / "one")], "1", tmp_path, "pack")
    shared = _digest([str(skills), "-o", str(tmp_path / "many")], SHARED, tmp_path, "pack")
    assert alone[0] == 0 and alone[3] == 0 and shared[3] >= 1, (alone, shared[3])
    assert shared[1].replace(str(tmp_path / "many"), "OUT") == alone[1].replace(
        str(tmp_path / "one"), "OUT")
    assert shared[2] == alone[2]
    assert _tree(tmp_path / "many") == _tree(tmp_path / "one")
    assert len(_tree(tmp_path / "one")) == 12 and alone[1].count("(packed)") == 12
    again = _digest([str(skills), "-o", str(tmp_path / "many")], SHARED, tmp_path, "pack")
    assert again[0] == 0 and again[1].count("(unchanged, not rewritten)") == 12, again
    assert _tree(tmp_path / "many") == _tree(tmp_path / "one")


@needs_fork
def test_pack_with_workers_says_its_notes_in_turn(tmp_path: Path) -> None:
    """Packed into a folder inside two of the skills (where the archives of an earlier pack
    lie): the note for each skill that leaves it out, in the order one process says them,
    whichever process packed it."""
    for first in ("one", "many"):
        skills = _valid(tmp_path / first / "skills")
        for inside in ("v03", "v08"):
            (skills / inside / "out").mkdir()
            (skills / inside / "out" / "old.skill").write_bytes(b"an earlier archive")
    alone = _digest([str(tmp_path / "one" / "skills"), "-o", str(tmp_path / "one" / "skills"
                     / "v03" / "out")], "1", tmp_path, "pack")
    shared = _digest([str(tmp_path / "many" / "skills"), "-o", str(tmp_path / "many" / "skills"
                      / "v03" / "out")], SHARED, tmp_path, "pack")
    assert alone[0] == 0 and shared[3] == 1, (alone, shared[3])
    assert shared[2].replace("/many/", "/one/") == alone[2]
    assert alone[2].count("left out") == 1 and "of skill 'v03'" in alone[2], alone[2]


def test_a_packed_skills_notes_travel_with_it(tmp_path: Path) -> None:
    """What a skill's packing notes (its output folder left out) is not said where it is
    packed, which may be a worker: it travels with the result, and is said when the command
    takes the result in, in turn."""
    from skillpack._atomic import AtomicBatch
    from skillpack.packing import pack as packing
    from skillpack.packing.prepare import PackOptions, ResolvedOutputs

    skill = _valid(tmp_path / "skills", 1) / "v00"
    out = skill / "out"
    out.mkdir()
    said: list[str] = []
    listen(said.append)
    try:
        with AtomicBatch() as batch:
            batch.lease(out)
            sent = packing._pack_apart(out, PackOptions(), ResolvedOutputs([out]), os.getpid(),
                                       batch, skill)
            assert sent is not None and said == []
            result = packing._received(batch, sent)
        assert len(said) == 1 and "left out out/ of skill 'v00'" in said[0], said
        assert result.written and result.path.is_file()
    finally:
        unlisten(said.append)


@needs_fork
@pytest.mark.parametrize("flags", [[], ["--json"]], ids=["text", "json"])
def test_pack_with_workers_refuses_as_one_process_does(tmp_path: Path,
                                                       flags: list[str]) -> None:
    """Two refused skills among twelve (a secret, a link): the same errors, exit 1, and no
    folder left behind (it did not exist), no temp file anywhere; into a folder that exists
    and holds an archive, the folder is left exactly as it was."""
    skills = _valid(tmp_path / "skills")
    (skills / "v04" / "notes.txt").write_text("key = " + "AKIA" + "Q3EGRJ5DFDPQ7Z2N\n")
    (skills / "v09" / "link.md").symlink_to(skills / "v00" / "SKILL.md")
    alone = _digest([str(skills), "-o", str(tmp_path / "one"), *flags], "1", tmp_path, "pack")
    shared = _digest([str(skills), "-o", str(tmp_path / "many"), *flags], SHARED, tmp_path,
                     "pack")
    assert alone[0] == 1 and shared[3] >= 1, (alone, shared[3])
    assert shared[:3] == (alone[0], alone[1].replace(str(tmp_path / "one"), str(
        tmp_path / "many")), alone[2].replace(str(tmp_path / "one"), str(tmp_path / "many")))
    assert "v04" in alone[1] + alone[2] and "v09" in alone[1] + alone[2]
    assert not (tmp_path / "one").exists() and not (tmp_path / "many").exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "old.skill").write_bytes(b"an archive from before")
    before = _tree(kept)
    again = _digest([str(skills), "-o", str(kept), *flags], SHARED, tmp_path, "pack")
    assert again[0] == 1 and again[3] >= 1
    assert _tree(kept) == before


@pytest.mark.corpus
@needs_fork
def test_corpus_packs_alike_with_workers(tmp_path: Path) -> None:
    args = [str(p) for p in CORPUS_SKILLS if p.name != "claude-api"]  # that one is refused
    alone = _digest([*args, "-o", str(tmp_path / "one")], "1", tmp_path, "pack")
    shared = _digest([*args, "-o", str(tmp_path / "many")], SHARED, tmp_path, "pack")
    assert alone[0] == 0 and shared[3] >= 1, (alone[2], shared[3])
    assert _tree(tmp_path / "many") == _tree(tmp_path / "one")
    assert len(_tree(tmp_path / "one")) == len(args)


@needs_fork
def test_jobs_sets_the_workers(many: Path, tmp_path: Path) -> None:
    """``SKILLPACK_JOBS=N``: N processes (within the bounds), whatever the cores; unset, one
    a core."""
    assert _digest([str(many)], "2", tmp_path)[3] == 1  # two processes: this one and one
    assert _digest([str(many)], "3", tmp_path)[3] == 2
    assert _digest([str(many)], "64", tmp_path)[3] == 16 // _workers.MIN_SHARE - 1
    assert _digest([str(many), str(many / "s00")], "1", tmp_path)[3] == 0
    assert _digest([str(many / "s00")], "2", tmp_path)[3] == 0  # one skill: not worth it
    assert _digest([str(many)], None, tmp_path)[3] == min(_cores(), 16 // _workers.MIN_SHARE) - 1


@pytest.mark.corpus
@needs_fork
def test_corpus_digests_alike_with_workers(tmp_path: Path) -> None:
    args = [str(p) for p in CORPUS_SKILLS]
    alone = _digest(args, "1", tmp_path)
    shared = _digest(args, SHARED, tmp_path)
    assert shared[3] >= 1
    assert shared[:3] == alone[:3]
    assert alone[1].count("\n") == len(CORPUS_SKILLS)


@pytest.mark.corpus
@needs_fork
@pytest.mark.parametrize("flags", [[], ["--json"]], ids=["text", "json"])
def test_corpus_checks_alike_with_workers(tmp_path: Path, flags: list[str]) -> None:
    args = [str(p) for p in CORPUS_SKILLS] + [str(CORPUS_SKILLS[0].parent.parent), *flags]
    alone = _digest(args, "1", tmp_path, "check")
    shared = _digest(args, SHARED, tmp_path, "check")
    assert shared[3] >= 1
    assert shared[:3] == alone[:3]
    assert alone[0] == 1  # the corpus holds invalid skills


@pytest.fixture
def one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process taken for single-threaded: earlier tests may have left a helper thread
    running here (the scan's `Background`), and `worker_count` forks no worker beside one
    (the work of these tests touches nothing a thread could hold); two processes asked for,
    whatever the cores."""
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setenv(_workers.JOBS_ENV, SHARED)


def test_no_worker_beside_another_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert _workers.worker_count(10_000) == 1


def test_worker_count_follows_the_rules(monkeypatch: pytest.MonkeyPatch,
                                        one_thread: None) -> None:
    monkeypatch.delenv(_workers.JOBS_ENV, raising=False)
    cores = _cores() if sys.platform == "linux" else 1
    assert _workers.worker_count(0) == 1
    assert _workers.worker_count(_workers.MIN_SHARE * 2 - 1) == 1
    assert _workers.worker_count(10_000) == min(cores, _workers.MAX_WORKERS)
    for asked, expected in [("1", 1), ("2", 2), ("5", 5), ("99", 8), ("0", min(cores, 8)),
                            ("-3", min(cores, 8)), ("many", min(cores, 8)), ("", min(cores, 8))]:
        monkeypatch.setenv(_workers.JOBS_ENV, asked)
        assert _workers.worker_count(10_000) == expected, asked


@needs_fork
def test_a_worker_that_dies_has_its_items_redone(one_thread: None) -> None:
    """Every worker dies on the first item it takes (each item takes 5 ms, so the workers
    take some): those items come back None (done again by the caller), and so does item 9,
    whose work failed; every other item comes back with its value."""
    parent = os.getpid()

    def work(item: int) -> int | None:
        if os.getpid() != parent:
            os._exit(7)
        time.sleep(0.005)
        return None if item == 9 else item * 2

    items = list(range(40))
    assert _workers.worker_count(len(items)) == 2
    got = _workers.in_workers(work, items)
    assert got is not None and len(got) == len(items)
    lost = [at for at, value in enumerate(got) if value is None and at != 9]
    assert got[9] is None
    assert 1 <= len(lost) < _workers.worker_count(len(items)), lost  # one item a worker
    assert all(value == at * 2 for at, value in enumerate(got) if at not in lost and at != 9)


@needs_fork
def test_items_are_dealt_as_they_go(one_thread: None) -> None:
    """A worker that drew a slow item takes fewer: one item of 0.3 s among 39 of 10 ms
    (all sleeping: they share no core), on two processes or more. Dealt in fixed shares,
    the process holding the slow one would take about 20 x 10 ms beside it; dealt as they
    go, the others take the rest meanwhile, and every item is done once."""
    parent = os.getpid()

    def work(item: int) -> tuple[int, int]:
        time.sleep(0.3 if item == 0 else 0.01)
        return item, os.getpid()

    items = list(range(40))
    got = _workers.in_workers(work, items)
    assert got is not None and [g[0] for g in got if g is not None] == items
    slow = next(pid for at, pid in (g for g in got if g is not None) if at == 0)
    with_slow = sum(1 for g in got if g is not None and g[1] == slow)
    assert with_slow <= 10, (with_slow, slow == parent)  # fixed shares: 20 at least


def test_no_worker_for_few_items() -> None:
    assert _workers.in_workers(lambda item: item, [1, 2, 3]) is None


def test_held_notes_wait_for_their_turn() -> None:
    said: list[str] = []
    listen(said.append)
    try:
        with held() as kept:
            note("first")
            note("second")
        assert kept == ["first", "second"] and said == []
        note("after")
        assert said == ["after"]
    finally:
        unlisten(said.append)
