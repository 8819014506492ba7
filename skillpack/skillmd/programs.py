"""The programs a skill runs: from its tools' argv templates, its `allowed-tools` Bash
entries, and the `#!` line of its executable files.

A template that starts with wrapper commands (``env A=1 timeout 5 curl ...``) runs the
program they start (`skillpack.skillmd.commands.effective_program`): ``curl`` is listed,
with ``env`` and ``timeout`` as its ``via``.

An approver reads this list to know what a skill will execute; `skillpack programs --check`
looks each one up on PATH before the skill is deployed. `derive_programs` touches no file, so
the runtime re-derives the same list from an archive's verified bytes.

Touches no file: the build side passes the `#!` lines of the bytes it hashed, the runtime
those of an archive's verified bytes.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skillpack.formats.allowed_tools import parse_entry
from skillpack.formats.shebang import shebang_line
from skillpack.skillmd.commands import WRAPPERS, effective_program, literal_word
from skillpack.skillmd.skill import Skill
from skillpack.skillmd.tools import PARAM_REF

__all__ = [
    "Program",
    "allowed_tool_command",
    "allowed_tool_program",
    "derive_programs",
    "shebang_program",
]

@dataclass(frozen=True, slots=True)
class Program:
    """A program a skill runs. ``dynamic`` when its name is chosen by a tool argument.

    ``tools`` are the ids of the tools whose template starts it; ``sources`` say where it
    was found: ``tool:<id>``, ``allowed-tools``, ``shebang:<path>``; ``via`` the wrapper
    commands a template starts it through (``sudo``, ``env``, ``timeout``...), by name,
    outermost first, each once (empty when no template wraps it; then not in `to_dict`, so
    the manifest of a skill without wrappers is what it was).
    """

    name: str
    dynamic: bool
    tools: tuple[str, ...]
    sources: tuple[str, ...]
    via: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "dynamic": self.dynamic,
            "tools": list(self.tools),
            "sources": list(self.sources),
        }
        if self.via:
            out["via"] = list(self.via)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Program:
        name, dynamic = data["name"], data["dynamic"]
        if not isinstance(name, str) or not name:
            raise ValueError(f"invalid program name {name!r}")
        if not isinstance(dynamic, bool):
            raise ValueError(f"program {name!r}: 'dynamic' must be true or false")
        tools = data.get("tools", [])
        sources = data.get("sources", [])
        via = data.get("via", [])
        if not all(isinstance(t, str) for t in tools) or not all(
            isinstance(s, str) for s in sources
        ):
            raise ValueError(f"program {name!r}: 'tools' and 'sources' must be lists of strings")
        if not isinstance(via, list) or not all(isinstance(v, str) and v for v in via):
            raise ValueError(f"program {name!r}: 'via' must be a list of wrapper names")
        return cls(name=name, dynamic=dynamic, tools=tuple(tools), sources=tuple(sources),
                   via=tuple(via))


def _template_word(word: str) -> tuple[str, bool]:
    """A template word as a program name: (name, dynamic)."""
    dynamic = False

    def replace(match: re.Match[str]) -> str:
        nonlocal dynamic
        if match.group(1) == "$":
            return "$"
        dynamic = True
        return match.group(0)

    literal = PARAM_REF.sub(replace, word)
    return (word if dynamic else literal), dynamic


#: A word no entry holds, put where a model's words would go after a prefix entry.
_PROBE = "\x00program"


def allowed_tool_program(entry: str) -> tuple[str, bool, tuple[str, ...]] | None:
    """The program an `allowed-tools` entry lets run, as (name, dynamic, via), read as the
    runtime's policy reads the entry (`skillpack.formats.allowed_tools.parse_entry`) and past
    its wrappers as a template is (`effective_program`): ``Bash(git:*)`` gives git,
    ``Bash (curl:*)`` curl, ``Bash(env python3:*)`` python3 via env, ``Bash(timeout 5
    node:*)`` node via timeout. An entry that ends where a wrapper's program would be
    (``Bash(env:*)``, ``Bash(timeout:*)``: the words the model adds pick the program)
    gives the last wrapper, dynamic.
    Other tools, bare ``Bash`` and ``Bash(*)`` give None."""
    rule = parse_entry(entry)
    if rule is None or rule.tool != "Bash" or not rule.words or rule.words[0] == "*":
        return None
    if rule.prefix:  # the words the model may add: do they reach the program's place?
        probed = effective_program([*rule.words, *(_PROBE,) * 3])
        if probed.program == _PROBE and probed.wrappers:
            *outer, last = (posixpath.basename(literal_word(w)) for w in probed.wrappers)
            return last, True, tuple(outer)
    effective = effective_program(rule.words)
    if effective.program is None:
        return None
    name = literal_word(effective.program)
    via = tuple(posixpath.basename(literal_word(w)) for w in effective.wrappers)
    return name, any(c in name for c in "*?["), via


def allowed_tool_command(entry: str) -> str | None:
    """The name of the program an `allowed-tools` entry lets run (`allowed_tool_program`):
    ``Bash(git:*)`` and ``Bash(git status)`` give ``git``; other tools and bare ``Bash``
    give None."""
    found = allowed_tool_program(entry)
    return None if found is None else found[0]


def shebang_program(line: str | bytes) -> str | None:
    """The program a `#!` line runs: ``#!/usr/bin/env python3`` gives ``python3``,
    ``#!/bin/bash`` gives ``bash``, ``#!/usr/bin/env -S uv run`` gives ``uv``.

    The kernel passes what follows the interpreter as one argument: an `env` line is read as
    env reads that argv (`skillpack.skillmd.commands.effective_program`), so
    ``#!/usr/bin/env -S -iu python3 perl`` and ``#!/usr/bin/env --split-string=perl -w`` give
    ``perl``. A line whose argument holds no ``-S`` is split on blanks (``#!/usr/bin/env -i
    PATH=/bin node`` gives ``node``, as a BSD kernel splits it)."""
    if isinstance(line, bytes):
        decoded = shebang_line(line)
        if decoded is None:
            return None
        line = decoded
    if not line.startswith("#!"):
        return None
    interpreter, _, argument = line[2:].split("\n", 1)[0].strip().partition(" ")
    interpreter, _, tabbed = interpreter.partition("\t")
    argument = (tabbed + " " + argument).strip()
    program = posixpath.basename(interpreter)
    if not program:
        return None
    if program not in WRAPPERS:
        return program
    split = argument.startswith("-") and _splits(argument)
    words = [interpreter, *([argument] if split else argument.split())]
    effective = effective_program(words)
    if effective.program is None or not effective.wrappers:  # the wrapper starts nothing:
        return None if program == "env" else program  # `#!/usr/bin/env` alone runs nothing
    return posixpath.basename(literal_word(effective.program)) or None


def _splits(argument: str) -> bool:
    """Whether env's one argument from a `#!` line starts with a ``-S`` option (in a cluster,
    ``-iS``, or a long option abbreviated, ``--split=``)."""
    first = argument.split(None, 1)[0]
    if first.startswith("--"):
        return "--split-string".startswith(first.partition("=")[0]) and len(first) > 3
    return "S" in first[1:]


def derive_programs(skill: Skill, shebangs: Mapping[str, str]) -> list[Program]:
    """Every program `skill` runs, given the `#!` line of each executable file by path
    (as `shebang_line` gives it). Touches no file: the runtime calls it on verified bytes."""
    found: dict[str, tuple[bool, set[str], set[str], list[str]]] = {}

    def add(name: str, dynamic: bool, source: str, tool: str | None = None,
            via: tuple[str, ...] = ()) -> None:
        was_dynamic, tools, sources, wrappers = found.setdefault(
            name, (dynamic, set(), set(), []))
        found[name] = (was_dynamic or dynamic, tools, sources, wrappers)
        sources.add(source)
        if tool is not None:
            tools.add(tool)
        wrappers.extend(w for w in via if w not in wrappers)

    for tool in skill.tools:
        words = tool.words
        if words:
            effective = effective_program(words)
            if effective.program is None or not effective.wrappers:
                name, dynamic = _template_word(words[0])
                add(name, dynamic, f"tool:{tool.id}", tool.id)
            else:
                name, dynamic = _template_word(effective.program)
                via = tuple(posixpath.basename(literal_word(w)) for w in effective.wrappers)
                add(name, dynamic, f"tool:{tool.id}", tool.id, via)
    for entry in skill.allowed_tools or ():
        allowed = allowed_tool_program(entry)
        if allowed is not None:
            add(allowed[0], allowed[1], "allowed-tools", None, allowed[2])
    for path, line in shebangs.items():
        interpreter = shebang_program(line)
        if interpreter is not None:
            add(interpreter, False, f"shebang:{path}")
    return [
        Program(name, dynamic, tuple(sorted(tools)), tuple(sorted(sources)), tuple(via))
        for name, (dynamic, tools, sources, via) in sorted(found.items())
    ]


