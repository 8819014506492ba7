"""A new skill folder from a template: what `skillpack new NAME` writes.

`new_skill` writes ``PARENT/NAME/`` holding a SKILL.md that passes `skillpack check` with no
error and no warning; a hard skill (``hard=True``) also declares one tool, which runs the
executable script it carries (``scripts/greet.py``). The SKILL.md is parsed and validated
before a byte is written (a NAME the Agent Skills rules refuse is refused here, with the same
problem codes), the folder is built in a temp folder beside the target and renamed onto it,
and an existing target (other than an empty folder) is refused: nothing is overwritten.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from skillpack._atomic import remove_tree
from skillpack.errors import Problem, SkillError, WriteError
from skillpack.formats.paths import SKILL_MD
from skillpack.skillmd.skill import parse_skill
from skillpack.skillmd.validate import validate_skill

__all__ = ["new_skill", "skill_template"]

_SOFT = """\
---
name: {name}
description: Describe what the {name} skill does and when an agent should use it, in one or \
two sentences (this is what the agent reads to choose it).
---

# {title}

Write the instructions here: what to do, step by step, and what to check before
answering. Files the skill carries (scripts, references, data) go beside this SKILL.md;
name them here so the agent knows when to read or run them.
"""

_HARD = """\
---
name: {name}
skill: {name}
description: Describe what the {name} skill does and when an agent should use it, in one or \
two sentences (this is what the agent reads to choose it).
---

# {title}

Write the instructions here. The tool below runs one fixed command; the agent only chooses
its arguments, each checked against its declared type before anything runs.

Greet someone:

```tool
id: greet
description: Greet a person by name.
params:
  who:
    type: string
    description: The name of the person to greet.
run: python3 scripts/greet.py --name $who
```
"""

_GREET = """\
#!/usr/bin/env python3
\"\"\"The greet tool of this skill: prints a greeting for --name.\"\"\"

import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--name", required=True)
print(f"Hello, {parser.parse_args().name}!")
"""


def skill_template(name: str, *, hard: bool = False) -> dict[str, tuple[str, bool]]:
    """The files of a new skill: relative path -> (text, executable)."""
    title = name.replace("-", " ").capitalize()
    files = {SKILL_MD: ((_HARD if hard else _SOFT).format(name=name, title=title), False)}
    if hard:
        files["scripts/greet.py"] = (_GREET, True)
    return files


def _refuse_existing(target: Path) -> None:
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode) and not os.listdir(target):
        return
    message = "already exists; nothing was written"
    raise WriteError(message, path=str(target),
                     hint="choose another name, or another parent folder with -o",
                     problems=[Problem("error", "target-exists", message, str(target))])


def new_skill(name: str, parent: str | os.PathLike[str] = ".", *, hard: bool = False) -> Path:
    """Write a new skill named `name` into ``parent/name/``; return that folder.

    Raises `SkillError` when `name` is not a valid skill name (every problem listed),
    `WriteError` when the target exists or cannot be written (nothing is left behind).
    """
    out = Path(parent)
    target = out / name
    files = skill_template(name, hard=hard)
    skill = parse_skill(files[SKILL_MD][0], file=str(target / SKILL_MD), workdir=str(target))
    errors = [p for p in validate_skill(skill) if p.severity == "error"]
    if errors or os.sep in name or name in ("", ".", ".."):
        errors = errors or [Problem("error", "name-invalid-characters",
                                    f"name {name!r} is not a folder name", None)]
        raise SkillError(f"cannot make a skill named {name!r}: {errors[0].message}",
                         problems=errors, hint="a skill name is lowercase letters, digits "
                         "and single hyphens, at most 64 characters")
    _refuse_existing(target)
    tmp: str | None = None
    try:
        out.mkdir(parents=True, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=f".{name}.skillpack-new-", dir=out)
        os.chmod(tmp, 0o755)
        for rel, (text, executable) in files.items():
            path = Path(tmp, rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            os.chmod(path, 0o755 if executable else 0o644)
        _refuse_existing(target)
        os.replace(tmp, target)
        tmp = None
    except WriteError:
        raise
    except OSError as err:
        message = f"could not write the skill: {err.strerror or err}; nothing was written"
        raise WriteError(message, path=str(target), hint="check the parent folder and the disk",
                         problems=[Problem("error", "write-failed", message, str(target))]
                         ) from None
    finally:
        if tmp is not None:
            remove_tree(tmp)
    return target
