"""atheris harness: `parse_skill`, `split_frontmatter` and validation on any text.

Nothing but `SkillError` may escape; anything else (a traceback, a hang, a crash of the
interpreter) is a finding. See fuzz/README.md for how to run it.
"""

from __future__ import annotations

import contextlib
import sys

import atheris

with atheris.instrument_imports():
    from skillpack.errors import SkillError
    from skillpack.skillmd.frontmatter import split_frontmatter
    from skillpack.skillmd.skill import parse_skill
    from skillpack.skillmd.validate import validate_skill


def test_one_input(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    framed = provider.ConsumeBool()
    text = provider.ConsumeUnicode(len(data))
    if framed:  # reach the YAML parser more often: give it a frontmatter to chew on
        text = f"---\n{text}\n---\nBody\n"
    with contextlib.suppress(SkillError):
        split_frontmatter(text, file="SKILL.md")
    try:
        skill = parse_skill(text, file="SKILL.md")
    except SkillError:
        return
    validate_skill(skill)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
