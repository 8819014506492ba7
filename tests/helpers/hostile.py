"""Helpers of the hostile suite: the tally of every hostile input, good inputs to spoil, and
guards (a call that must not hang, a folder that must stay empty, a CLI run with no traceback,
a runtime that reads nothing but the bytes it is given).

The tally
---------
Every hostile input a test tries goes through `TALLY.refused(...)` (it must be refused with
the given `SkillpackError` subclass and a message holding the given fragments),
`TALLY.handled(...)` (a stress input that must work, such as a tree 1,000 folders deep) or
`TALLY.neutralised(...)` (an input the runtime loads but which changes nothing it serves or
runs). conftest.py writes the records as JSON at the end of the session, to the path in
``$SKILLPACK_HOSTILE_TALLY`` (default: ``skillpack-hostile-tally.json`` in pytest's base temp
folder of the run), and prints the counts and that path; ``python benchmarks/hostile_counts.py``
runs the suite and prints them.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
import threading
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from helpers.cli import cli
from helpers.paths import REPO
from helpers.skills import make_tree
from helpers.syscalls import AUDIT_SOURCE
from skillpack.errors import SkillpackError
from skillpack.packing.verify import verify_bytes, verify_file

TALLY_ENV = "SKILLPACK_HOSTILE_TALLY"
OUTCOMES = ("refused", "neutralised", "handled", "accepted", "wrong-error", "crashed")

DEMO_MD = """\
---
name: demo
description: A demo skill that greets someone, used to build hostile inputs.
---

# Demo

Greet someone with the tool below.

```tool
id: hello
description: Say hello to someone.
params:
  who:
    type: string
    default: world
run: python3 scripts/run.py --who $who
```
"""

HELPER_MD = """\
---
name: helper
description: A second small skill, so that a bundle holds more than one.
---

# Helper

Read notes.txt when asked.
"""


# -- the tally -------------------------------------------------------------------------------

class Tally:
    """Every hostile input tried in this session, with what happened to it."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def add(self, category: str, case: str, entry: str, outcome: str, detail: str = "",
            count: int = 1) -> None:
        assert outcome in OUTCOMES, outcome
        self.records.append({"category": category, "case": case, "entry": entry,
                             "outcome": outcome, "detail": detail[:300], "count": count})

    def refused(self, category: str, case: str, entry: str,
                kind: type[SkillpackError] = SkillpackError, *fragments: str) -> Refusal:
        """``with tally.refused(...) as r:`` the block must raise `kind` naming `fragments`."""
        return Refusal(self, category, case, entry, kind, fragments)

    def handled(self, category: str, case: str, entry: str, detail: str = "") -> None:
        self.add(category, case, entry, "handled", detail)

    def neutralised(self, category: str, case: str, entry: str, detail: str = "") -> None:
        self.add(category, case, entry, "neutralised", detail)

    def counts(self) -> dict[str, int]:
        totals: Counter[str] = Counter()
        for record in self.records:
            totals[record["outcome"]] += record["count"]
        return {outcome: totals[outcome] for outcome in OUTCOMES}


class Refusal:
    """Context manager behind `Tally.refused`; ``.value`` is the error once raised."""

    def __init__(self, tally: Tally, category: str, case: str, entry: str,
                 kind: type[SkillpackError], fragments: tuple[str, ...]) -> None:
        self.tally, self.kind, self.fragments = tally, kind, fragments
        self.where = (category, case, entry)
        self.value: SkillpackError | None = None

    def __enter__(self) -> Refusal:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        category, case, entry = self.where
        if exc is None:
            self.tally.add(category, case, entry, "accepted")
            pytest.fail(f"{category}/{case} via {entry}: accepted, not refused")
        if not isinstance(exc, SkillpackError):
            if isinstance(exc, Exception):
                shown = "".join(traceback.format_exception(exc))
                self.tally.add(category, case, entry, "crashed", shown)
            return False  # a traceback: let pytest show it
        text = "\n".join([str(exc), *(str(p) for p in exc.problems)])  # what the CLI prints
        if not isinstance(exc, self.kind):
            self.tally.add(category, case, entry, "wrong-error", f"{type(exc).__name__}: {text}")
            pytest.fail(f"{category}/{case} via {entry}: expected {self.kind.__name__}, got "
                        f"{type(exc).__name__}: {text}")
        missing = [f for f in self.fragments if f not in text]
        if missing:
            self.tally.add(category, case, entry, "wrong-error", f"unclear: {text}")
            pytest.fail(f"{category}/{case} via {entry}: message {text!r} lacks {missing}")
        self.tally.add(category, case, entry, "refused", f"{type(exc).__name__}: {text}")
        self.value = exc
        return True


TALLY = Tally()


def tally_path(basetemp: Path) -> Path:
    """Where the tally goes: ``$SKILLPACK_HOSTILE_TALLY``, else `basetemp` (the run's own
    temp folder, pytest's base temp; never a fixed path shared with other runs)."""
    return Path(os.environ.get(TALLY_ENV) or basetemp / "skillpack-hostile-tally.json")


# -- good inputs to spoil ----------------------------------------------------------------------

def demo_skill(folder: Path, extra: dict[str, str | bytes] | None = None) -> Path:
    """A valid skill `demo` with a tool, an executable script and a note, in `folder`."""
    make_tree(folder, {"SKILL.md": DEMO_MD,
                       "scripts/run.py": "#!/usr/bin/env python3\nprint('hello')\n",
                       "notes.txt": "Some notes.\n", **(extra or {})})
    (folder / "scripts" / "run.py").chmod(0o755)
    return folder


def helper_skill(folder: Path) -> Path:
    return make_tree(folder, {"SKILL.md": HELPER_MD, "notes.txt": "Helper notes.\n"})


# -- guards ------------------------------------------------------------------------------------

#: The one in-process runner (tests/helpers/cli.py): a traceback fails the test.
run_cli = cli


def files_under(folder: Path) -> list[str]:
    """Every entry under `folder` (names relative to it), sorted; [] when it is missing."""
    if not folder.exists():
        return []
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def no_hang(func: Callable[[], Any], *, timeout: float = 30.0,
            unblock: Sequence[Path] = ()) -> Any:
    """Run `func` in a thread; fail if it has not returned within `timeout` seconds.

    Fifos in `unblock` are opened for writing if it hangs, so that a blocked reader returns
    and the thread ends. Returns what `func` returned; re-raises what it raised.
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = func()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        for fifo in unblock:
            fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
            os.close(fd)
        thread.join(5)
        pytest.fail(f"blocked for more than {timeout} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


# -- the runtime reads nothing but the bytes it is given ----------------------------------------

# What `audited_outcomes` runs in a fresh interpreter: every case through `load` (then
# `verify_all`, every file read, description, tools, programs) and `verify_bytes`, twice: first
# to do the lazy imports, then under conftest's `audit()` (an audit hook, and spies on
# stat/lstat/fstat). After that, its `control()` shows that the audit does see such calls.
NOFS = AUDIT_SOURCE + textwrap.dedent('''
    import json, pickle
    with open(sys.argv[1], "rb") as f:
        cases = pickle.load(f)
    from skillpack.runtime import load
    from skillpack.packing.verify import verify_bytes
    from skillpack.errors import SkillpackError

    def run_all():
        seen = {}
        for name, data in cases.items():
            outcome = []
            try:
                bundle = load(data, source="hostile.skill")
                bundle.verify_all()
                for skill_name in bundle.names:
                    skill = bundle[skill_name]
                    for path in skill.files():
                        skill.file(path).bytes()
                    skill.description, skill.tools, skill.programs
                outcome.append("loaded")
            except SkillpackError as exc:
                outcome.append(type(exc).__name__)
            try:
                verify_bytes(data, source="hostile.skill")
                outcome.append("verified")
            except SkillpackError as exc:
                outcome.append(type(exc).__name__)
            seen[name] = outcome
        return seen

    first = run_all()  # lazy imports happen here
    events = audit()
    second = run_all()
    during = list(events)
    control(sys.argv[1])
    print(json.dumps({"first": first, "second": second, "during": during, "control": events}))
''')


def audited_outcomes(cases: dict[str, bytes], tmp_path: Path) -> dict[str, list[str]]:
    """What the runtime did with each case (see `NOFS`), audited in a fresh interpreter.

    For each case name, the outcome of `load` and of `verify_bytes`: ``"loaded"``,
    ``"verified"`` or the name of the `SkillpackError` raised. Fails the test if the audited run
    touched the filesystem in any way (or spawned anything), if the hook missed the control
    accesses (a blind hook proves nothing), or if its outcomes differ from the first run's.
    """
    blob = tmp_path / "cases.pickle"
    blob.write_bytes(pickle.dumps(cases))
    done = subprocess.run([sys.executable, "-c", NOFS, str(blob)], capture_output=True,
                          text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    # (pytest does not rewrite asserts in this module: each says what it saw)
    assert result["during"] == [], f"the runtime touched the filesystem: {result['during']}"
    seen = {e.split(" ", 1)[0] for e in result["control"]}
    assert seen >= {"open", "os.listdir", "stat"}, f"the audit missed the control: {seen}"
    assert result["first"] == result["second"], (result["first"], result["second"])
    second: dict[str, list[str]] = result["second"]
    return second


# -- the file path refuses as the in-memory path does -------------------------------------------

def verify_both(data: bytes, path: Path) -> tuple[SkillpackError | None, SkillpackError | None]:
    """What `verify_bytes` and `verify_file` raise for `data` (None: it verifies)."""
    path.write_bytes(data)
    found: list[SkillpackError | None] = []
    for run in (lambda: verify_bytes(data, source=str(path)), lambda: verify_file(path)):
        try:
            run()
        except SkillpackError as err:
            found.append(err)
        else:
            found.append(None)
    return found[0], found[1]


def same_refusal(data: bytes, path: Path) -> SkillpackError:
    """The error `verify_bytes` and `verify_file` both raise for `data`, of one class and in
    the same words (written to `path` first)."""
    in_memory, from_file = verify_both(data, path)
    assert in_memory is not None
    assert from_file is not None, "the file path accepts what the in-memory path refuses"
    assert type(from_file) is type(in_memory)
    assert from_file.message == in_memory.message
    assert from_file.problems == in_memory.problems
    return from_file
