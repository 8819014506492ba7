"""Guard: importing the runtime (or skillpack) pulls in the standard library only.

Each check runs in a fresh interpreter, since this test process has imported everything.
A serverless cold start pays for every module imported; YAML, blake3, click and pathspec
must wait until they are needed (blake3 at load, YAML when a SKILL.md is parsed).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO

HEAVY = ("yaml", "blake3", "click", "pathspec", "skillpack.walk", "skillpack.cli")


def modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code`."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=REPO, check=True, timeout=60)
    return set(json.loads(result.stdout.splitlines()[-1]))


@pytest.mark.parametrize("statement", ["import skillpack.runtime", "import skillpack",
                                       "from skillpack import load, Bundle"])
def test_import_pulls_in_the_standard_library_only(statement: str) -> None:
    loaded = modules_after(statement)
    assert "skillpack" in loaded
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_the_guard_sees_a_heavy_import() -> None:
    assert "yaml" in modules_after("import skillpack.runtime, skillpack.frontmatter, yaml")


def test_load_imports_blake3_but_no_yaml_until_a_skill_md_is_read(tmp_path: Path) -> None:
    from test_runtime import build_bundle

    bundle = tmp_path / "fixtures.bundle"
    bundle.write_bytes(build_bundle([FIXTURES / "waitlist", FIXTURES / "release-notes"]))
    load = (f"import skillpack.runtime as rt\n"
            f"b = rt.load(open({str(bundle)!r}, 'rb').read())\n"
            f"b['waitlist'].file('data/waitlist.csv').text()")
    loaded = modules_after(load)
    assert "blake3" in loaded
    assert not loaded & {"yaml", "click", "pathspec", "skillpack.walk", "skillpack.skill"}
    assert "yaml" in modules_after(load + "\nb['waitlist'].description")
