"""atheris harness: `resolve` on any model answer, as text or as decoded JSON data.

The tools are those of fixtures/waitlist (strings, an email, an integer with a default,
enums, list-form runs). Nothing but `SkillError` may escape, and a call that comes back must
run the tool's own program with the answer's values as whole words.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import atheris

with atheris.instrument_imports():
    from skillpack.errors import SkillError
    from skillpack.model.calls import resolve
    from skillpack.source.load import parse_skill_file

WAITLIST = parse_skill_file(Path(__file__).resolve().parent.parent / "fixtures" / "waitlist")


def test_one_input(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    as_data = provider.ConsumeBool()
    text = provider.ConsumeUnicodeNoSurrogates(len(data))
    answer: object = text
    if as_data:  # an already structured call, as an SDK hands it over
        try:
            answer = json.loads(text)
        except (ValueError, RecursionError):
            return
    try:
        call = resolve(WAITLIST, answer)
    except SkillError:
        return
    if call is not None:
        assert call.argv == call.tool.argv(call.args)
        assert all(isinstance(word, str) for word in call.argv)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
