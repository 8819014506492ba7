"""A path that does not exist is a `FileNotFoundError` and a `SkillpackError`, from every
public call that takes one (issue 30 item 8): `except FileNotFoundError` catches it as it
catches `open`'s, and it carries the path and a hint like every skillpack error.
(`check_skill` reports it instead, as every problem of a skill: tests/test_validate.py.)"""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import skillpack

CALLS: dict[str, Callable[[Path, Path], Any]] = {
    "parse_skill_file": lambda missing, tmp: skillpack.parse_skill_file(missing),
    "walk": lambda missing, tmp: skillpack.walk(missing),
    "read_lock": lambda missing, tmp: skillpack.read_lock(missing),
    "digest": lambda missing, tmp: skillpack.digest(missing),
    "archive_digest": lambda missing, tmp: skillpack.archive_digest(missing),
    "included_files": lambda missing, tmp: skillpack.included_files(missing),
    "find_skills": lambda missing, tmp: skillpack.find_skills(missing),
    "pack": lambda missing, tmp: skillpack.pack(missing, tmp / "out"),
    "pack_skills": lambda missing, tmp: skillpack.pack_skills([missing], tmp / "out"),
    "write_bundle": lambda missing, tmp: skillpack.write_bundle([missing], tmp / "b.bundle"),
    "verify_target": lambda missing, tmp: skillpack.verify_target(missing),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_missing_path_is_file_not_found_and_skillpack_error(tmp_path: Path,
                                                              name: str) -> None:
    missing = tmp_path / "no-such-skill"
    with pytest.raises(FileNotFoundError) as info:
        CALLS[name](missing, tmp_path)
    err = info.value
    assert isinstance(err, skillpack.SkillpackError)
    assert err.errno == errno.ENOENT and err.filename == str(missing)
    assert err.path == str(missing) and err.hint
    assert not (tmp_path / "out").exists() and not (tmp_path / "b.bundle").exists()
