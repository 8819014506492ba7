"""What the runtime exposes of a manifest is checked: an altered manifest never changes what
a caller is told (issue: `LoadedSkill.manifest` returned unchecked fields), and the runtime
imports and serves where the POSIX-only `os` flags do not exist (as on Windows)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.paths import FIXTURES, REPO
from helpers.zips import zip_members, zip_of

import skillpack
import skillpack.runtime as rt
from skillpack.errors import IntegrityError

MANIFEST = "waitlist/.skillpack/manifest.json"


def _bundle(tmp_path: Path) -> bytes:
    skillpack.write_bundle([FIXTURES / "waitlist", FIXTURES / "release-notes"],
                           tmp_path / "b.bundle")
    return (tmp_path / "b.bundle").read_bytes()


def _altered(data: bytes, **fields: object) -> bytes:
    members = zip_members(data)
    manifest = json.loads(members[MANIFEST][0])
    manifest.update(fields)
    text = json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    members[MANIFEST] = ((text + "\n").encode(), False)
    return zip_of(members)


@pytest.mark.parametrize(("field", "value"), [
    ("programs", [{"dynamic": False, "name": "true", "sources": ["tool:join"],
                   "tools": ["join"]}]),
    ("description", "Harmless: does nothing."),
    ("tools", []),
    ("allowances", ["data/waitlist.csv"]),
])
def test_an_altered_manifest_field_is_never_served(tmp_path: Path, field: str,
                                                   value: object) -> None:
    good = _bundle(tmp_path)
    bad = _altered(good, **{field: value})
    # the digest covers the files only: the approved digests still match
    expect = {name: rt.load(good)[name].digest for name in rt.load(good).names}
    bundle = rt.load(bad, expect=expect)
    skill = bundle["waitlist"]
    assert [p.name for p in skill.programs] == ["awk", "python3"]  # from SKILL.md
    with pytest.raises(IntegrityError, match=f"manifest's {field} does not match"):
        _ = skill.manifest
    assert rt.load(good)["waitlist"].manifest.to_dict()[field] != value
    # verify says which field, with the same definition
    with pytest.raises(IntegrityError) as refused:
        skillpack.verify_bytes(bad)
    assert any(p.code == "manifest-field" and f"'{field}'" in p.message
               for p in refused.value.problems)


def test_the_unaltered_manifest_is_served(tmp_path: Path) -> None:
    skill = rt.load(_bundle(tmp_path))["waitlist"]
    assert skill.manifest.name == "waitlist"
    assert skill.manifest_differences(skill.manifest) == []


_NO_POSIX = textwrap.dedent("""
    import os, sys
    for flag in ("O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC", "O_DIRECTORY"):
        if hasattr(os, flag):
            delattr(os, flag)
    import skillpack.runtime as rt
    data = open(sys.argv[1], "rb").read()
    bundle = rt.load(data, expect={n: d for n, d in zip(sys.argv[2::2], sys.argv[3::2])})
    print(len(bundle.catalog_text()) > 0, bundle.names)
    print(bundle["waitlist"].file("data/waitlist.csv").text().splitlines()[0])
    print(bundle.load_skill("release-notes").startswith("<skill_instructions>"))
    print(bundle.verify_all())
    print(hasattr(os, "O_NOFOLLOW"))
""")


def test_the_runtime_imports_and_serves_without_posix_only_flags(tmp_path: Path) -> None:
    _bundle(tmp_path)
    pairs = []
    for name in ("release-notes", "waitlist"):
        pairs += [name, skillpack.digest(FIXTURES / name)]
    done = subprocess.run([sys.executable, "-c", _NO_POSIX, str(tmp_path / "b.bundle"), *pairs],
                          capture_output=True, text=True, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "True ('release-notes', 'waitlist')", "email,note,status", "True",
        str(rt.load((tmp_path / "b.bundle").read_bytes()).verify_all()), "False"]
