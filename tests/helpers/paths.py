"""Where the suite's inputs are: the repository, fixtures/ and the corpus of real skills.

``CORPUS`` is ``$SKILLPACK_CORPUS``, else ``../shared/corpus`` beside the repository;
``CORPUS_SKILLS`` every skill folder in it, sorted (empty when there is no corpus). Tests whose
subject is the corpus are marked ``@pytest.mark.corpus`` (tests/conftest.py skips them, with
`CORPUS_REASON`, when there is none).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
CORPUS_ENV = "SKILLPACK_CORPUS"
REQUIRE_ENV = "SKILLPACK_REQUIRE_CORPUS"
CORPUS = Path(os.environ.get(CORPUS_ENV) or REPO.parent / "shared" / "corpus").resolve()
CORPUS_SKILLS = sorted(p.parent for p in CORPUS.glob("*/*/SKILL.md"))
CORPUS_REASON = (f"needs the corpus of real skills, absent at {CORPUS}: set "
                 f"{CORPUS_ENV}=/path/to/corpus, or put it at ../shared/corpus beside the checkout")

#: The two valid example skills of fixtures/.
WAITLIST = FIXTURES / "waitlist"
NOTES = FIXTURES / "release-notes"
#: Corpus skills some tests single out: invalid for its description alone, and the two
#: different skills of one name (``skill-creator``).
CLAUDE_API = CORPUS / "anthropics-skills" / "claude-api"
CREATOR_A = CORPUS / "anthropics-skills" / "skill-creator"
CREATOR_O = CORPUS / "openai-skills" / "skill-creator"
#: The fixture that is invalid for its description alone (1,025 characters; the limit is 1,024).
TOO_LONG = FIXTURES / "broken" / "description-too-long"


def load_benchmark(name: str) -> ModuleType:
    """The script ``benchmarks/NAME.py`` as a module (benchmarks/ is not a package), so that
    a test runs the very code a benchmark or a doc's table comes from."""
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
