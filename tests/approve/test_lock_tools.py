"""Lock format 1.1: each skill's description, tools (run templates) and allowed-tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.paths import NOTES, WAITLIST
from helpers.skills import write_skill

import skillpack.runtime as rt
from skillpack.approve.lock import Lock, LockEntry, LockTool, read_lock, write_lock
from skillpack.errors import FormatVersionError, SkillpackError
from skillpack.packing.bundle import write_bundle
from skillpack.packing.verify import verify_folder
from skillpack.source.load import parse_skill_file

ALLOWED = """---
name: gitty
description: Looks at <b>git</b> history.
allowed-tools: Bash(git log:*) Read
---
Run it.

```tool
id: log
description: Show the log.
params:
  count:
    type: integer
    default: 5
run: git log -n $count
```
"""


def entries(*folders: Path, tools: bool = True) -> list[tuple[str, LockEntry, str]]:
    result = []
    for folder in folders:
        [s] = verify_folder(folder).skills
        skill = parse_skill_file(folder / "SKILL.md")
        entry = (LockEntry.for_skill(skill, s.digest, s.files, s.programs) if tools
                 else LockEntry(s.digest, s.files, s.programs))
        result.append((s.name, entry, str(folder)))
    return result


def test_a_lock_with_tools_is_format_1_1(tmp_path: Path) -> None:
    gitty = write_skill(tmp_path / "gitty", ALLOWED)
    dest = tmp_path / "skills.lock"
    lock = write_lock(entries(WAITLIST, gitty), dest)
    data = json.loads(dest.read_text())
    assert data["format"] == lock.format == "1.1"
    assert list(data["skills"]["gitty"]) == ["allowed-tools", "description", "digest", "files",
                                             "mentions", "programs", "tools"]
    assert data["skills"]["gitty"]["allowed-tools"] == ["Bash(git log:*)", "Read"]
    assert data["skills"]["gitty"]["tools"] == [{"id": "log", "run": ["git", "log", "-n",
                                                                      "$count"]}]
    assert data["skills"]["gitty"]["description"] == "Looks at <b>git</b> history."
    waitlist = data["skills"]["waitlist"]
    assert "allowed-tools" not in waitlist  # the skill declares none
    assert [t["id"] for t in waitlist["tools"]] == ["access", "count", "join", "list"]
    assert {"id": "list", "run": ["python3", "scripts/waitlist.py", "list", "--limit=$limit",
                                  "--status=$status"]} in waitlist["tools"]
    again = read_lock(dest)
    assert again == lock and again.to_bytes() == dest.read_bytes()
    assert again.skills["gitty"].tools == (LockTool("log", ("git", "log", "-n", "$count")),)


def test_entries_without_tools_still_write_and_read_format_1_0(tmp_path: Path) -> None:
    dest = tmp_path / "old.lock"
    write_lock(entries(WAITLIST, NOTES, tools=False), dest)
    data = json.loads(dest.read_text())
    assert data["format"] == "1.0" and list(data["skills"]["waitlist"]) == [
        "digest", "files", "programs"]
    old = read_lock(dest)
    assert old.format == "1.0" and old.skills["waitlist"].tools is None


def test_a_lock_mixing_entries_with_and_without_tools_is_not_written(tmp_path: Path) -> None:
    dest = tmp_path / "mixed.lock"
    mixed = entries(WAITLIST) + entries(NOTES, tools=False)
    with pytest.raises(SkillpackError, match=r"a format 1\.1 lock records each skill's tools, and "
                       r"these have none: release-notes"):
        write_lock(mixed, dest)
    assert not dest.exists()


@pytest.mark.parametrize(("version", "message"), [
    ("1.2", "lock file is format 1.2, newer than this skillpack reads (1.1)"),
    ("2.0", "lock file is format 2.0; this skillpack reads format 1.x only"),
])
def test_a_lock_of_another_format_is_refused(tmp_path: Path, version: str,
                                              message: str) -> None:
    dest = tmp_path / "skills.lock"
    write_lock(entries(WAITLIST), dest)
    data = json.loads(dest.read_text())
    dest.write_text(json.dumps(data | {"format": version}))
    with pytest.raises(FormatVersionError) as info:
        read_lock(dest)
    assert str(info.value).startswith(f"{dest}: {message}")


@pytest.mark.parametrize(("change", "message"), [
    (lambda e: e.pop("tools"), "'tools' must be a list (format 1.1)"),
    (lambda e: e.update(tools=[{"id": "x", "run": "echo hi"}]),
     "each tool must be an object with an 'id' and a 'run' list of words"),
    (lambda e: e.update(description=None), "'description' must be a string"),
    (lambda e: e.update({"allowed-tools": "Read"}), "'allowed-tools' must be a list of strings"),
])
def test_a_malformed_1_1_entry_is_refused(tmp_path: Path, change: object,
                                          message: str) -> None:
    dest = tmp_path / "skills.lock"
    write_lock(entries(WAITLIST), dest)
    data = json.loads(dest.read_text())
    change(data["skills"]["waitlist"])  # type: ignore[operator]
    dest.write_text(json.dumps(data))
    with pytest.raises(SkillpackError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_lock(dest)


def test_the_runtime_takes_a_1_1_lock_as_expect(tmp_path: Path) -> None:
    dest = tmp_path / "skills.lock"
    write_lock(entries(WAITLIST, NOTES), dest)
    data = write_bundle([WAITLIST, NOTES], tmp_path / "two.bundle").path.read_bytes()
    assert rt.load(data, expect=json.loads(dest.read_text())).names == ("release-notes",
                                                                        "waitlist")
    newer = json.loads(dest.read_text()) | {"format": "1.2"}
    with pytest.raises(FormatVersionError, match="newer than this skillpack reads"):
        rt.load(data, expect=newer)


def test_a_1_0_lock_cannot_hold_tools() -> None:
    [(name, entry, _)] = entries(WAITLIST)
    with pytest.raises(SkillpackError, match=r"a format 1\.0 lock cannot record tools"):
        Lock({name: entry}, "1.0")
