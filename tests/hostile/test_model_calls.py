"""`resolve` of a model's call (issue 28): a value that would start an argv word with `-` is
refused by looking at the rendered word, not the template: two params side by side
(`$folder$file`) with the first empty still start the word with the second."""

from __future__ import annotations

import pytest
from helpers.hostile import TALLY, no_hang

from skillpack.errors import SkillError
from skillpack.model.calls import resolve
from skillpack.skillmd.skill import parse_skill

SIDE_BY_SIDE = """\
---
name: demo
description: A demo skill whose tool joins two params in one word.
---

```tool
id: show
description: Show a file.
params:
  folder:
    type: string
  file:
    type: string
  mode:
    type: string
    enum: -n, -b
    default: -n
run: cat $mode $folder$file
```
"""


@pytest.mark.parametrize("args", [
    {"folder": "", "file": "-o/tmp/x"},
    {"folder": "", "file": "--output=/tmp/x"},
    {"folder": "", "file": "-"},
])
def test_params_side_by_side_cannot_start_an_option(args: dict[str, str]) -> None:
    skill = parse_skill(SIDE_BY_SIDE)
    with TALLY.refused("parser", f"side-by-side params {args}", "resolve", SkillError,
                       "'file' must not start with '-'"):
        no_hang(lambda: resolve(skill, {"tool": "show", "args": args}))


@pytest.mark.parametrize(("args", "argv"), [
    ({"folder": "docs/", "file": "-x.txt"}, ["cat", "-n", "docs/-x.txt"]),
    ({"folder": "", "file": "notes.txt"}, ["cat", "-n", "notes.txt"]),
    ({"folder": "", "file": "a.txt", "mode": "-b"}, ["cat", "-b", "a.txt"]),
])
def test_a_dash_inside_the_word_or_from_an_enum_is_fine(args: dict[str, str],
                                                        argv: list[str]) -> None:
    call = resolve(parse_skill(SIDE_BY_SIDE), {"tool": "show", "args": args})
    assert call is not None and call.argv == argv


def test_the_first_non_empty_value_of_the_word_is_the_one_checked() -> None:
    skill = parse_skill(SIDE_BY_SIDE)
    with pytest.raises(SkillError, match="'folder' must not start with '-'"):
        resolve(skill, {"tool": "show", "args": {"folder": "-r", "file": "x"}})
