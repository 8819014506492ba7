"""`skillpack lint` (and `check --lint`) as a library call: a skill on disk checked, walked
(names only), its texts read, and every approver rule run on them.

What a lint reports, in one `CheckResult`: the problems of `check` (the Agent Skills rules),
the lint rules of `skillpack.skillmd.lint_rules` (paths, links, references, size, description),
`run_problems` of every tool (programs chosen by a model argument, inline code filled by one,
shell syntax in run words; `skillpack.skillmd.commands`), and invisible or deceptive
characters (`skillpack.skillmd.invisible`) in SKILL.md (errors) and in every carried UTF-8
text file (warnings). With `strict`, ``program-dynamic`` and ``run-code-dynamic`` are errors.
A problem of severity ``info`` never fails a skill.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from skillpack._regular import read_regular
from skillpack.errors import Problem, RefusedError
from skillpack.formats.paths import SKILL_MD
from skillpack.packing.check import CheckResult, check_parsed
from skillpack.packing.prepare import silenced
from skillpack.packing.targets import Layout
from skillpack.skillmd.invisible import invisible_problems
from skillpack.skillmd.lint_rules import lint
from skillpack.skillmd.skill import Skill
from skillpack.source.load import skill_fileset
from skillpack.source.readfile import LARGE_FILE

__all__ = ["STRICT_CODES", "lint_problems", "lint_skill"]

#: The codes `strict` turns from warnings into errors.
STRICT_CODES = frozenset({"program-dynamic", "run-code-dynamic"})


def lint_skill(path: str | os.PathLike[str], *, strict: bool = False,
               check_strict: bool = False, targets: Sequence[str] = (),
               catalog_budget: int | None = None, layout: Layout | None = None,
               ignore: Iterable[str] = (), advice: bool = False) -> CheckResult:
    """`check_skill` of the skill at `path` (with `check_strict`, its own ``--strict``; with
    its `targets`, `catalog_budget` and `layout`) and then, when it parses, `lint_problems` (with
    `strict`). Nothing is raised for a bad skill."""
    checked, skill = check_parsed(path, strict=check_strict, targets=targets,
                                  catalog_budget=catalog_budget, layout=layout, ignore=ignore,
                                  advice=advice)
    if skill is None:
        return checked  # the parse error is already among the check's problems
    found = [Problem(p.severity, p.code, p.message,
                     os.path.join(checked.path, p.file or SKILL_MD), p.line)
             for p in silenced(lint_problems(skill, strict=strict), ignore)]
    seen = set(checked.problems)  # a walk refusal is the check's already
    problems = [*checked.problems, *(p for p in found if p not in seen)]
    if strict:  # a model-chosen program is an error under --strict, whoever reported it
        problems = [Problem("error", p.code, p.message, p.file, p.line)
                    if p.code in STRICT_CODES and p.severity == "warning" else p
                    for p in problems]
    return CheckResult(checked.skill, checked.path, tuple(problems), checked.description,
                       checked.digest)


def lint_problems(skill: Skill, *, strict: bool = False) -> list[Problem]:
    """Every approver finding of `skill` (read from a folder): run templates, lint rules and
    invisible characters. A file set the walk refuses is reported (its problems, as errors)
    instead of the rules that need the carried files."""
    problems: list[Problem] = []  # run templates and SKILL.md's own text: `check` reports them
    texts: dict[str, str | None] = {}
    root = skill.workdir

    def read_text(rel: str) -> str | None:
        if rel not in texts:
            texts[rel] = _read_text(os.path.join(root, rel)) if root is not None else None
        return texts[rel]

    if root is not None:
        try:
            carried = list(skill_fileset(skill).paths)
        except RefusedError as err:
            problems.extend(err.problems)
        else:
            problems.extend(lint(skill, carried, read_text))
            for rel in carried:
                if rel != SKILL_MD:
                    text = read_text(rel)
                    if text is not None:
                        problems.extend(invisible_problems(rel, text, False))
    if strict:
        problems = [Problem("error", p.code, p.message, p.file, p.line)
                    if p.code in STRICT_CODES and p.severity == "warning" else p
                    for p in problems]
    return sorted(problems, key=lambda p: (p.file or "", p.line or 0, p.code, p.message))


def _read_text(path: str) -> str | None:
    """The text of a carried file: None when it is not UTF-8, is large, or cannot be read."""
    try:
        if os.stat(path).st_size >= LARGE_FILE:
            return None
        data = read_regular(path)
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
