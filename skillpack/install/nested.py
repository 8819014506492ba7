"""The other folders of a project the agents asked for read skills from: their folders
spelt in another case, and the nested folders their documentation says they load.

On a case-insensitive checkout (macOS, Windows) git writes ``.Claude/skills/evil``,
``.claude/Skills/evil`` and ``.CLAUDE/SKILLS/evil`` into the one folder ``.claude/skills``,
which the agent loads; on a Linux CI runner they are folders of their own, which a check
of ``.claude/skills`` alone never reads. So every path of the project whose components
equal an agent's folder after case folding (`fold`: Unicode case folding, and the code
points HFS+ ignores, as git's own check of ``.git`` does) but are spelt otherwise is named
(`Reach.miscased`). At the project's root that is cheap: the root and the few folders on
those paths are listed, nothing more.

Some agents also load the skills folders of folders below the project (`Agent.nested`:
Claude Code ``pkg/sub/.claude/skills`` when it works in ``pkg/sub``; Codex and OpenCode
theirs from the working folder up to the repository's root). For those, the project is
walked, as the search for skills walks a repository and with its bounds
(`skillpack.source.discover.never_searched`: ``.git``, ``node_modules``, virtualenvs are
never entered, nor is a symbolic link to a folder), and each such folder found is given
(`Reach.folders`), to be verified against the lock as a subset; one spelt otherwise is
named too.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from skillpack.install.agents import AGENTS, AgentFolder
from skillpack.source.discover import never_searched

__all__ = ["Reach", "agent_reach", "fold"]

#: The code points HFS+ leaves out of a name when it compares two (git's ``is_hfs_dotgit``).
_IGNORED = frozenset(map(chr, (*range(0x200C, 0x2010), *range(0x202A, 0x202F),
                               *range(0x206A, 0x2070), 0xFEFF)))


def fold(name: str) -> str:
    """`name` as a case-insensitive filesystem compares it: composed (NFC), without the code
    points HFS+ ignores, case-folded."""
    if name.isascii():  # most names: no code point to leave out, folded as lowered
        return name.lower()
    return "".join(c for c in unicodedata.normalize("NFC", name)
                   if c not in _IGNORED).casefold()


@dataclass(frozen=True, slots=True)
class Reach:
    """What `agent_reach` found: the nested agents' folders spelt exactly (each with the
    agents that read it, bounded to the project), and each path spelt otherwise with the
    agent folder it is on a case-insensitive checkout."""

    folders: tuple[AgentFolder, ...] = ()
    miscased: tuple[tuple[str, str], ...] = ()


def _listing(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder or os.curdir) as scan:
            return list(scan)
    except OSError:  # a folder this user cannot list: nor can the agent
        return []


def _below(path: str, parts: Sequence[str], exact: bool) -> Iterator[tuple[str, bool]]:
    """Every path below the folder `path` whose components are `parts` after `fold`, and
    whether it (with the part above it, `exact`) is spelt exactly so."""
    if not parts:
        yield path, exact
        return
    if not os.path.isdir(path):
        return
    want = fold(parts[0])
    for entry in _listing(path):
        if fold(entry.name) == want:
            yield from _below(os.path.join(path, entry.name), parts[1:],
                              exact and entry.name == parts[0])


def _matches(folder: str, entries: Sequence[os.DirEntry[str]], paths: Sequence[str]
             ) -> Iterator[tuple[str, str, bool]]:
    """Each path below `folder` (listed: `entries`) that is one of the agent folders
    `paths` after `fold`: the path, that agent folder, whether it is spelt so."""
    folded = [(entry, fold(entry.name)) for entry in entries]
    for rel in paths:
        parts = rel.split("/")
        want = fold(parts[0])
        for entry, name in folded:
            if name == want:
                for found, exact in _below(os.path.join(folder, entry.name), parts[1:],
                                           entry.name == parts[0]):
                    yield found, rel, exact


def agent_reach(agents: Sequence[str], project: str | None = None) -> Reach:
    """The other folders of `project` (default: the working folder; paths are relative to
    it then, as `skillpack.install.agents.agent_folder` gives them) that the `agents` (by
    name, known ones) read skills from: see the module text. Each agent's own project
    folder, spelt exactly, is not among them (it is verified as such)."""
    names = [n for n in dict.fromkeys(agents) if n in AGENTS]
    top = {AGENTS[n].project for n in names}
    nested: dict[str, list[str]] = {}  # each nested folder: the agents that read it
    for name in names:
        for rel in AGENTS[name].nested:
            nested.setdefault(rel, []).append(name)
    root = project if project is not None else ""
    bound = os.path.abspath(root or os.curdir)
    folders: list[AgentFolder] = []
    miscased: list[tuple[str, str]] = []
    pending = [root]
    while pending:
        folder = pending.pop()
        entries = _listing(folder)
        paths = sorted(top | set(nested)) if folder == root else sorted(nested)
        for found, rel, exact in _matches(folder, entries, paths):
            if not exact:
                miscased.append((found, os.path.join(folder, *rel.split("/"))))
            elif not (folder == root and rel in top):
                readers = tuple(nested[rel])
                folders.append(AgentFolder(found, readers, tuple(dict.fromkeys(
                    t for t in (AGENTS[n].target for n in readers) if t)), bound))
        if not nested:
            break  # no agent asked for reads below the root: only the root is listed
        pending.extend(os.path.join(folder, e.name) for e in sorted(
            entries, key=lambda e: e.name, reverse=True)
            if _is_folder(e) and not never_searched(os.path.join(folder, e.name)))
    return Reach(tuple(folders), tuple(sorted(miscased)))


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False
