"""The house in layers: every import arrow points down, and imports sit at module top.

The import-linter contracts in pyproject.toml (layers, and what the runtime may never import)
are checked here, so an upward arrow fails the suite. Imports of skillpack's own modules inside
functions are counted: only the runtime's cold path defers one, each with a one-line reason.
"""

from __future__ import annotations

import ast

import pytest
from helpers.paths import REPO
from importlinter.application.use_cases import lint_imports
from importlinter.configuration import configure

PACKAGE = REPO / "skillpack"
MAX_DEFERRED = 8
#: The process entries (`skillpack --version`, `python -m skillpack --version` without click
#: and the commands).
_PROCESS_ENTRIES = {"skillpack/_launch.py", "skillpack/__main__.py"}


def test_the_import_contracts_are_kept(monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(REPO)
    configure()
    kept = lint_imports(config_filename=str(REPO / "pyproject.toml"), cache_dir=None,
                        no_logo=True)
    report = capsys.readouterr().out
    assert kept, report  # the report names each broken contract and the import chain
    assert "Contracts: 2 kept, 0 broken." in report


def _deferred_imports() -> list[tuple[str, int, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for sub in ast.walk(node):
                own = (isinstance(sub, ast.ImportFrom) and (sub.module or "").startswith(
                    "skillpack")) or (isinstance(sub, ast.Import) and any(
                        a.name.startswith("skillpack") for a in sub.names))
                if own:
                    above = sub.lineno - 2  # the comment above this import (or above the
                    while lines[above].strip().startswith(("from ", "import ")):  # group)
                        above -= 1
                    reason = lines[above].strip()
                    found.append((str(path.relative_to(REPO)), sub.lineno, reason))
    return found


#: The modules that import one of skillpack's own by name when it is first used, and how many
#: such calls each makes: the public API's lazy names (PEP 562) and the click group (a
#: command imports only its own module). Anywhere else an import sits at the module's top.
_BY_NAME = {"skillpack/__init__.py": 1, "skillpack/cli/app.py": 1}


def test_imports_by_name_are_only_where_they_are_the_point() -> None:
    found: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and (
                    (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                    or (isinstance(node.func, ast.Name)
                        and node.func.id in ("import_module", "__import__"))):
                file = str(path.relative_to(REPO))
                found[file] = found.get(file, 0) + 1
    assert found == _BY_NAME


def test_own_imports_inside_functions_are_few_on_the_cold_path_and_say_why() -> None:
    deferred = _deferred_imports()
    assert len(deferred) <= MAX_DEFERRED, deferred
    for file, line, reason in deferred:
        if file in _PROCESS_ENTRIES:  # the command line itself, before click is imported
            assert reason.startswith("# start-up:"), (file, line, reason)
            continue
        assert file.startswith("skillpack/runtime/"), (file, line)
        assert reason.startswith("# cold path:"), (file, line, reason)
