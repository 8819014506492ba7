"""Seed inputs for the harnesses, built from the repository's own fixtures at run time.

``python fuzz/_seeds.py DIR`` writes, into DIR/parse, DIR/resolve and DIR/zip, a few valid
inputs for each harness to start from (fixture SKILL.md files, call answers in each shape, a
packed archive and a bundle). Nothing here is committed: seeds are made fresh each time.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


def write_seeds(root: Path) -> None:
    from skillpack.packing.bundle import write_bundle
    from skillpack.packing.pack import pack

    for name in ("parse", "resolve", "zip"):
        (root / name).mkdir(parents=True, exist_ok=True)
    for index, path in enumerate(sorted(FIXTURES.glob("*/SKILL.md"))):
        (root / "parse" / f"fixture-{index}").write_bytes(path.read_bytes())
    answers = [
        '{"tool": "list", "args": {"limit": 3}}',
        'Sure.\n```json\n{"tool": "access", "args": {"email": "a@b.c", "operation": '
        '"accept"}}\n```',
        json.dumps({"type": "tool_use", "name": "join", "input": {"email": "a@b.c"}}),
        json.dumps({"name": "count", "arguments": "{}"}),
        json.dumps({"tool_calls": [{"function": {"name": "list", "arguments": '{"limit": "5"}'}}]}),
    ]
    for index, answer in enumerate(answers):
        (root / "resolve" / f"answer-{index}").write_text(answer)
    with tempfile.TemporaryDirectory() as tmp:
        skills = [FIXTURES / "waitlist", FIXTURES / "release-notes"]
        for archive in pack(skills, tmp):
            (root / "zip" / archive.name).write_bytes(archive.read_bytes())
        bundle = write_bundle(skills, Path(tmp) / "fixtures.bundle")
        (root / "zip" / "fixtures.bundle").write_bytes(bundle.path.read_bytes())


if __name__ == "__main__":
    write_seeds(Path(sys.argv[1]))
