"""Guard: importing the runtime (or skillpack) pulls in the standard library only.

Each check runs in a fresh interpreter, since this test process has imported everything.
A serverless cold start pays for every module imported; YAML, blake3, click and pathspec
must wait until they are needed (blake3 at load, YAML when a SKILL.md is parsed). Nor may
the standard library's costly modules be on the path (COLD_FORBIDDEN): the runtime's
modules use `skillpack._record` for their records, `load_json` and string checks.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.bundles import build_bundle
from helpers.paths import FIXTURES, REPO

HEAVY = ("yaml", "blake3", "click", "pathspec", "skillpack.source.fileset", "skillpack.cli")
# Measured in a fresh interpreter (docs/RUNTIME.md, "Performance"): `typing` costs 3 to 8 ms,
# `dataclasses` ~12 ms (it imports `inspect`, `ast`, `dis`, `tokenize`, `re`...), `json`
# ~6 ms (it imports `re`, with `enum`, `functools`, `collections`); the whole cold-start
# budget of issue 4 (load a bundle, read one file) is 10 ms.
COLD_FORBIDDEN = ("typing", "dataclasses", "inspect", "json", "re")


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
    assert "yaml" in modules_after("import skillpack.runtime, skillpack.skillmd.frontmatter, yaml")


def modules_without_site(code: str) -> set[str]:
    """The modules an interpreter started without `site` holds after running `code`.

    A development venv's .pth files (the editable install's finder) import `re` and more at
    start-up, which would hide them; skillpack is found in the repository, blake3 where it is
    installed (without running that folder's .pth files).
    """
    import blake3

    deps = str(Path(blake3.__file__).resolve().parent.parent)
    script = (f"import sys; sys.path[:0] = [{str(REPO)!r}]; sys.path.append({deps!r})\n"
              f"{code}\nprint(sorted(sys.modules))")
    result = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True,
                            text=True, cwd=REPO, check=True, timeout=60)
    return set(ast.literal_eval(result.stdout.splitlines()[-1]))


@pytest.mark.parametrize("statement", ["import skillpack.runtime", "import skillpack",
                                       "from skillpack import load, Bundle",
                                       "import skillpack; skillpack.load"])
def test_import_pulls_in_no_typing_dataclasses_inspect_json_or_re(statement: str) -> None:
    loaded = modules_without_site(statement)
    assert "skillpack" in loaded
    assert not loaded & set(COLD_FORBIDDEN), sorted(loaded & set(COLD_FORBIDDEN))


def test_load_and_read_pull_in_no_typing_dataclasses_inspect_json_or_re(tmp_path: Path) -> None:

    bundle = tmp_path / "fixtures.bundle"
    bundle.write_bytes(build_bundle([FIXTURES / "waitlist", FIXTURES / "release-notes"]))
    for lazy in (False, True):
        loaded = modules_without_site(
            f"import skillpack.runtime as rt\n"
            f"b = rt.load(open({str(bundle)!r}, 'rb').read(), lazy={lazy})\n"
            f"assert b['waitlist'].file('data/waitlist.csv').text()")
        assert {"blake3", "skillpack.formats.manifest", "_json"} <= loaded  # it did load and read
        assert not loaded & set(COLD_FORBIDDEN), sorted(loaded & set(COLD_FORBIDDEN))


def test_the_cold_path_guard_sees_what_it_forbids() -> None:
    # Modules off the cold path keep their dataclasses; a JSON error is told by `json`.
    assert {"typing", "dataclasses", "inspect"} <= modules_without_site(
        "import skillpack.runtime, skillpack.packing.verify")
    assert {"json", "re"} <= modules_without_site(
        "from skillpack.formats.manifest import load_json\ntry:\n    load_json('{')\n"
        "except ValueError:\n    pass")
    assert not {"json", "re"} & modules_without_site(  # canonical JSON: the C encoder alone
        "from skillpack.formats.manifest import canonical_json\ncanonical_json({'a': [1]})")
    assert not set(COLD_FORBIDDEN) & modules_without_site("pass")


def test_load_imports_blake3_but_no_yaml_until_a_skill_md_is_read(tmp_path: Path) -> None:

    bundle = tmp_path / "fixtures.bundle"
    bundle.write_bytes(build_bundle([FIXTURES / "waitlist", FIXTURES / "release-notes"]))
    load = (f"import skillpack.runtime as rt\n"
            f"b = rt.load(open({str(bundle)!r}, 'rb').read())\n"
            f"b['waitlist'].file('data/waitlist.csv').text()")
    loaded = modules_after(load)
    assert "blake3" in loaded
    assert not loaded & {"yaml", "click", "pathspec", "skillpack.source.fileset",
                         "skillpack.skillmd.skill"}
    assert "yaml" not in modules_after(load + "\nb['waitlist'].description")


#: Every runtime call a deployment makes, each run alone in a fresh interpreter.
RUNTIME_CALLS = {
    "catalog": "b.catalog()",
    "catalog_text": "b.catalog_text()",
    "load_skill": "b.load_skill('waitlist')",
    "read_skill_resource": "b.read_skill_resource('waitlist', 'data/waitlist.csv')",
    "tools": "b['waitlist'].tools",
    "programs": "b['waitlist'].programs",
    "manifest": "b['waitlist'].manifest",
    "tool_definitions": "rt.tool_definitions(b['waitlist'], 'anthropic')",
    "compile": "rt.compile(b['waitlist'])",
    "resolve": "rt.resolve(b['waitlist'], '{\"tool\": \"list\", \"args\": {}}')",
    "verify_all": "b.verify_all()",
}


@pytest.mark.parametrize("call", sorted(RUNTIME_CALLS))
def test_every_runtime_call_imports_the_standard_library_and_blake3_only(
        tmp_path: Path, call: str) -> None:

    bundle = tmp_path / "fixtures.bundle"
    bundle.write_bytes(build_bundle([FIXTURES / "waitlist", FIXTURES / "release-notes"]))
    code = (f"import skillpack.runtime as rt\n"
            f"b = rt.load(open({str(bundle)!r}, 'rb').read())\n"
            f"{RUNTIME_CALLS[call]}")
    outside = {m.split(".")[0] for m in modules_after(code)} - set(sys.stdlib_module_names)
    assert outside <= {"skillpack", "blake3", "_blake3", "__editable___skillpack_0_1_0_finder",
                       "__main__", "_distutils_hack"}, outside


def test_every_public_name_is_reachable_whatever_was_imported_first() -> None:
    """A public function must not share its name with a submodule: importing the submodule
    would replace `skillpack.<name>` with the module (it once did for digest, walk and
    programs). Checked in a fresh interpreter after importing every submodule."""
    code = (
        "import importlib, pkgutil, skillpack\n"
        "for info in pkgutil.iter_modules(skillpack.__path__, 'skillpack.'):\n"
        "    importlib.import_module(info.name)\n"
        "import skillpack.cli\n"
        "clashes = [n for n in skillpack.__all__ if n != '__version__' and\n"
        "           type(getattr(skillpack, n)).__name__ == 'module']\n"
        "print(','.join(clashes))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == ""


def test_the_policy_module_is_cold_start_safe() -> None:
    loaded = modules_without_site("import skillpack.runtime.policy")
    assert "skillpack.runtime.policy" in loaded
    assert not loaded & set(COLD_FORBIDDEN), sorted(loaded & set(COLD_FORBIDDEN))
    assert "skillpack.runtime.policy" not in modules_without_site("import skillpack.runtime")


def test_the_first_turn_imports_neither_json_nor_re(tmp_path: Path) -> None:
    bundle = tmp_path / "fixtures.bundle"
    bundle.write_bytes(build_bundle([FIXTURES / "waitlist", FIXTURES / "release-notes"]))
    loaded = modules_without_site(
        "import skillpack.runtime as rt\n"
        f"data = open({str(bundle)!r}, 'rb').read()\n"
        "b = rt.load(data, expect={n: rt.load(data)[n].digest for n in rt.load(data).names})\n"
        "b.catalog_text()\n"
        "assert 'read_skill_resource(name=\"waitlist\"' in b.load_skill('waitlist')\n"
        "b.read_skill_resource('waitlist', 'data/waitlist.csv')\n"
        "assert b['release-notes'].tools == ()")  # no tool fence: nothing to parse
    assert "skillpack.skillmd.frontmatter_reader" in loaded  # it did read the SKILL.md files
    assert not loaded & set(COLD_FORBIDDEN), sorted(loaded & set(COLD_FORBIDDEN))
    assert "skillpack.skillmd.skill" not in loaded
