"""`runtime.load(expect=<lock bytes>)` compares what a lock entry records that the verified
manifest declares too (programs, description, tools) with it, as `verify --lock` does: the
same codes and words (tests/approve/test_lock_entry_fields.py for `verify`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.approval import EDITS, demo_approved, edited

import skillpack.runtime as rt
from skillpack.errors import IntegrityError


@pytest.fixture
def demo(tmp_path: Path) -> dict[str, Path]:
    return demo_approved(tmp_path)


@pytest.mark.parametrize("case", ["tools", "no tools", "description"])
def test_runtime_refuses_what_the_manifest_contradicts(
        demo: dict[str, Path], tmp_path: Path, case: str) -> None:
    field, edit = EDITS[case]
    lock = edited(demo["lock"], edit, tmp_path / "e.lock").read_bytes()
    data = demo["bundle"].read_bytes()
    with pytest.raises(IntegrityError, match=f"differs in {field} ") as err:
        rt.load(data, expect=lock)
    assert [p.code for p in err.value.problems] == ["lock-entry"]
    lazy = rt.load(data, expect=lock, lazy=True)  # checked with the skill, on first use
    with pytest.raises(IntegrityError, match=f"differs in {field} "):
        lazy["demo"]
    with pytest.raises(IntegrityError, match=f"differs in {field} "):
        rt.load(demo["archive"].read_bytes(), expect=lock)


def test_runtime_refuses_edited_programs_and_accepts_the_lock(demo: dict[str, Path],
                                                              tmp_path: Path) -> None:
    data = demo["bundle"].read_bytes()
    assert rt.load(data, expect=demo["lock"].read_bytes()).names == ("demo",)
    lock = edited(demo["lock"], lambda e: e.update(programs=[]), tmp_path / "p.lock")
    with pytest.raises(IntegrityError, match="programs it runs differ") as err:
        rt.load(data, expect=lock.read_bytes())
    assert [p.code for p in err.value.problems] == ["lock-programs"]
