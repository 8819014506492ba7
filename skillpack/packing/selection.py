"""What a many-skill command takes of what its PATHs hold, and how it goes on past a bad skill.

A `Selection` is the ``--exclude``, ``--ignore`` and ``--keep-going`` of one command run:

* ``exclude``: skill folders and archives left out on purpose (`skillpack.source.classify`):
  no error, listed in `Selection.excluded`;
* ``ignore``: problem codes silenced: a warning or a note with such a code is dropped from
  every verdict (`skillpack.packing.prepare.silenced`); an error is never silenced;
* ``keep_going``: a skill (or a PATH, or an archive) that cannot be used is skipped, with its
  error, into `Selection.skipped`, and everything valid is still written; without it the
  command is all or nothing (`settle` raises every failure at once, as `refuse_all` does).

A command judges every input before it raises any refusal, so that one stray archive hides
neither the others nor a broken skill: it works on a `collecting` copy, which keeps going
whatever, and `take` settles what that copy skipped, before anything is written. The command
reads `skipped` after the library call: it lists each, and exits 1 when any.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from skillpack.errors import Problem, SkillpackError
from skillpack.packing.prepare import (
    Outputs,
    PackOptions,
    PreparedSkill,
    prepare_each_as,
    refuse_all,
    silenced,
)
from skillpack.source.classify import Exclude, Input, classify

__all__ = ["OpenOne", "Selection", "SkippedSkill"]

T = TypeVar("T")

#: What turns inputs into skill folders for a block (`as_skill_folders`, `unpacked_foreign`).
OpenOne = Callable[[Sequence[Input]], AbstractContextManager[list[Input]]]


@dataclass(frozen=True, slots=True)
class SkippedSkill:
    """A skill, archive or PATH a ``--keep-going`` run left out: what the user knows it by,
    and the error refusing it (every problem in it)."""

    path: str
    error: SkillpackError

    @property
    def problems(self) -> tuple[Problem, ...]:
        return self.error.as_problems(self.path)


@dataclass
class Selection:
    """The ``--exclude``/``--ignore``/``--keep-going`` of one command run, and what it left
    out (see the module text)."""

    exclude: Sequence[str] = ()
    ignore: frozenset[str] = frozenset()
    keep_going: bool = False
    #: The folder ``exclude`` matches paths relative to (None: the working folder).
    base: str | None = None
    skipped: list[SkippedSkill] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # a bad pattern: refused before anything runs
        self._exclude = Exclude(self.exclude, base=self.base)
        self.ignore = frozenset(self.ignore)

    @property
    def excluder(self) -> Exclude:
        """The ``exclude`` patterns compiled (`skillpack.source.classify.Exclude`)."""
        return self._exclude

    def quiet(self, problems: Iterable[Problem]) -> tuple[Problem, ...]:
        """`problems` without those ``ignore`` silences (`silenced`)."""
        return silenced(problems, self.ignore)

    def options(self, options: PackOptions | None = None) -> PackOptions:
        """`options` (default: none) with this selection's ``ignore``."""
        o = options or PackOptions()
        return PackOptions(o.targets, o.layout, o.catalog_budget, self.ignore | o.ignore)

    def skip(self, path: str, err: SkillpackError) -> None:
        """Leave out what is at `path`, refused by `err`; raises `err` unless keep-going."""
        if not self.keep_going:
            raise err
        self.skipped.append(SkippedSkill(path, err))

    def settle(self, failures: Sequence[tuple[str, SkillpackError]]) -> None:
        """The skills that failed (what the user knows each by, its error): raised all at
        once (`refuse_all`) unless keep-going, then each listed in `skipped`."""
        if not self.keep_going:
            refuse_all([err for _, err in failures])
        self.skipped += [SkippedSkill(path, err) for path, err in failures]

    def collecting(self) -> Selection:
        """A selection of this one's ``exclude`` and ``ignore`` that keeps going whatever this
        one says: a pipeline of several judgements (each skill, then two skills of one
        name, then a host's limits) runs each on what passed the one before, then `take`
        gives this selection every failure at once, before anything is written."""
        return Selection(self.exclude, self.ignore, True, self.base)

    def take(self, collected: Selection, *,
             also: Sequence[tuple[str, SkillpackError]] = ()) -> None:
        """Everything `collected` (a `collecting` copy) skipped, and the failures `also`,
        settled here at once: raised together unless this selection keeps going, else
        skipped; what it excluded is this selection's too."""
        self.excluded += collected.excluded
        collected.excluded = []
        failures = [(s.path, s.error) for s in collected.skipped] + list(also)
        collected.skipped = []
        self.settle(failures)

    def inputs(self, paths: Iterable[str | os.PathLike[str]]) -> list[Input]:
        """What `paths` hold (`classify`, each input once, those excluded left out and
        listed); a PATH that holds nothing or cannot be read raises, or with keep-going is
        skipped."""
        seen: set[str] = set()
        items: list[Input] = []
        for path in paths:
            try:
                found = classify(path, seen=seen, exclude=self._exclude)
            except SkillpackError as err:
                self.skip(os.fspath(path), err)
                continue
            items += found.items
            self.excluded += found.excluded
        return items

    @contextmanager
    def each(self, items: Sequence[Input], open_one: OpenOne) -> Iterator[list[Input]]:
        """``with collected.each(items, as_skill_folders) as ready:`` `open_one` of each
        input on its own (an archive verified and written out, one made elsewhere unpacked),
        kept open for the block; one that fails is skipped (`skip`: on a selection that does
        not keep going, raised; commands call it on a `collecting` copy)."""
        with ExitStack() as stack:
            ready: list[Input] = []
            for item in items:
                try:
                    ready += stack.enter_context(open_one([item]))
                except SkillpackError as err:
                    self.skip(item.label, item.relabel(err))
            yield ready

    def prepare(self, items: Sequence[Input], *, options: PackOptions | None = None,
                outputs: Outputs = ()) -> dict[str, PreparedSkill]:
        """Each skill folder among `items` prepared (`prepare_each_as`, with this selection's
        ``ignore``), by its path; every failure settled at once (`settle`): raised, or with
        keep-going skipped, so that the others are prepared still."""
        return self.prepare_as(items, lambda p: p, options=options, outputs=outputs)

    def prepare_as(self, items: Sequence[Input], keep: Callable[[PreparedSkill], T], *,
                   options: PackOptions | None = None,
                   outputs: Outputs = (), keep_bytes: int = 0) -> dict[str, T]:
        """`prepare`, keeping of each skill what ``keep(prepared)`` returns, made as soon as
        it is prepared (`prepare_each_as`, with `keep_bytes`): memory grows with what is
        kept, not with every skill's SKILL.md and file set held until the last is
        prepared."""
        folders = [i for i in items if i.kind == "folder"]
        done = prepare_each_as([i.path for i in folders], keep, options=self.options(options),
                               outputs=outputs, keep_bytes=keep_bytes)
        self.settle([(i.label, i.relabel(d)) for i, d in zip(folders, done, strict=True)
                     if isinstance(d, SkillpackError)])
        return {i.path: d for i, d in zip(folders, done, strict=True)
                if not isinstance(d, SkillpackError)}
