"""Where each agent reads skills: its folder in a project and in the user's home.

The table is vercel-labs/skills' (``src/agents.ts``, the ``agents`` record: each agent's
``skillsDir``, relative to the project, and ``globalSkillsDir``), as published in the npm
package ``skills`` 1.7.4, so that a folder ``skillpack install --agent NAME`` writes is the
one ``npx skills add --agent NAME`` writes and the agent reads. Like that table,
``CLAUDE_CONFIG_DIR`` moves Claude Code's home folder and ``XDG_CONFIG_HOME`` the
``~/.config`` folders. ``target`` is the host profile of `skillpack.packing.targets` a skill
is checked against before it is written there (None: the Agent Skills rules only).

A folder of a project (an agent's project folder, or a folder given by path inside the
working folder) must really lie in that project: `escape` says where one leads out of it
through a symbolic link (``.claude -> ~/.claude``, which a cloned repository can ship), and
install and verify refuse it. Folders that are one place on disk (``.claude/skills ->
../.agents/skills``) are one folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from skillpack.errors import SkillpackError

__all__ = ["AGENTS", "AGENTS_SOURCE", "NESTED_SOURCES", "Agent", "AgentFolder", "agent_folder",
           "agent_folders", "escape", "folder_by_path", "inside"]

#: Where the table comes from (docs/DEPLOY.md cites it).
AGENTS_SOURCE = ("https://github.com/vercel-labs/skills/blob/main/src/agents.ts "
                 "(npm package skills 1.7.4)")
#: Where each agent's `Agent.nested` folders come from (docs/DEPLOY.md cites them).
NESTED_SOURCES = {
    "claude-code": "https://code.claude.com/docs/en/skills (Automatic discovery from nested "
                   "directories)",
    "codex": "https://developers.openai.com/codex/skills (Where to save skills: REPO scope)",
    "opencode": "https://opencode.ai/docs/skills (Understand discovery)",
}


@dataclass(frozen=True, slots=True)
class Agent:
    """One agent: its project folder (relative to the project), its user folder (relative to
    ``base``: ``home``, ``config`` for ``$XDG_CONFIG_HOME`` or ``~/.config``, ``claude`` for
    ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``), the host profile its skills are checked
    against, and the skills folders (relative to a folder) it also reads in folders of the
    project, per its documentation (`NESTED_SOURCES`): Claude Code's ``.claude/skills`` of
    any folder it works in, Codex's and OpenCode's from the working folder up to the
    repository's root."""

    name: str
    project: str
    user: str
    base: str = "home"
    target: str | None = None
    nested: tuple[str, ...] = ()


AGENTS: Mapping[str, Agent] = {a.name: a for a in (
    Agent("amp", ".agents/skills", "agents/skills", "config"),
    Agent("claude-code", ".claude/skills", "skills", "claude", "claude-code",
          (".claude/skills",)),
    Agent("cline", ".agents/skills", ".agents/skills"),
    Agent("codex", ".agents/skills", ".agents/skills", target="codex",
          nested=(".agents/skills",)),
    Agent("continue", ".continue/skills", ".continue/skills"),
    Agent("cursor", ".agents/skills", ".cursor/skills"),
    Agent("droid", ".agents/skills", ".factory/skills"),
    Agent("gemini-cli", ".agents/skills", ".gemini/skills"),
    Agent("github-copilot", ".agents/skills", ".copilot/skills"),
    Agent("goose", ".goose/skills", "goose/skills", "config"),
    Agent("junie", ".junie/skills", ".junie/skills"),
    Agent("kiro-cli", ".kiro/skills", ".kiro/skills"),
    Agent("opencode", ".agents/skills", "opencode/skills", "config",
          nested=(".agents/skills", ".claude/skills", ".opencode/skills")),
    Agent("roo", ".roo/skills", ".roo/skills"),
    Agent("windsurf", ".windsurf/skills", ".codeium/windsurf/skills"),
)}


@dataclass(frozen=True, slots=True)
class AgentFolder:
    """A folder skills are installed into or verified in: its path, the agents that read it
    (none for a folder given by path), the host profiles their skills are checked against,
    and the project it must really lie in (None: not bounded, the user's own folders and a
    folder given outside the working folder)."""

    path: str
    agents: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    project: str | None = None


def inside(path: str, root: str) -> bool:
    """Whether the absolute `path` is `root` or below it (by name, nothing resolved)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def folder_by_path(path: str) -> AgentFolder:
    """The folder `path` given by path: bounded to the working folder when it lies below it
    by name."""
    here = os.getcwd()
    below = inside(os.path.normpath(os.path.join(here, path)), here)
    return AgentFolder(path, project=here if below else None)


def escape(folder: AgentFolder) -> str | None:
    """Where `folder` really is, when that is outside its project (a symbolic link on the
    way: the folder itself or a parent below the project); None when it lies inside, or is
    not bounded. A folder not made yet is judged by the part of its path that exists."""
    if folder.project is None:
        return None
    real = os.path.realpath(folder.path)
    return None if inside(real, os.path.realpath(folder.project)) else real


def _base(agent: Agent, home: str, environ: Mapping[str, str]) -> str:
    if agent.base == "config":
        return environ.get("XDG_CONFIG_HOME", "").strip() or os.path.join(home, ".config")
    if agent.base == "claude":
        return environ.get("CLAUDE_CONFIG_DIR", "").strip() or os.path.join(home, ".claude")
    return home


def agent_folder(name: str, *, user: bool = False, project: str | None = None,
                 home: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The skills folder of agent `name`: under `project` (default: the working folder), or
    with `user` under the user's home (`home`, default ``~``). An unknown agent raises
    `SkillpackError` naming the known ones."""
    agent = AGENTS.get(name)
    if agent is None:
        raise SkillpackError(f"unknown agent {name!r}", path=name,
                             hint="give one of " + ", ".join(AGENTS)
                             + ", or a folder with --into")
    if not user:  # relative to the working folder unless a project is named
        return os.path.join(*((project,) if project is not None else ()),
                            *agent.project.split("/"))
    env = os.environ if environ is None else environ
    base = _base(agent, home if home is not None else os.path.expanduser("~"), env)
    return os.path.join(base, *agent.user.split("/"))


def agent_folders(agents: Iterable[str], into: Iterable[str] = (), *, user: bool = False,
                  project: str | None = None, home: str | None = None,
                  environ: Mapping[str, str] | None = None) -> list[AgentFolder]:
    """The folders for `agents` (by name) and `into` (by path), in that order, each folder
    once, by where it really is: agents that share one (``.agents/skills``, or a folder
    linked to another one) are named together, and their host profiles all apply. An
    agent's project folder is bounded to `project` (default: the working folder), a folder
    by path to the working folder when it lies below it (`folder_by_path`). Every unknown
    agent is named in one error."""
    names = list(agents)
    unknown = [n for n in names if n not in AGENTS]
    if unknown:
        raise SkillpackError(f"unknown agent{'s' * (len(unknown) > 1)} "
                             + ", ".join(repr(n) for n in unknown), path=unknown[0],
                             hint="give one of " + ", ".join(AGENTS)
                             + ", or a folder with --into")
    found: dict[str, AgentFolder] = {}
    bound = None if user else os.path.abspath(project if project is not None else os.getcwd())
    for name in names:
        path = agent_folder(name, user=user, project=project, home=home, environ=environ)
        key = os.path.realpath(path)
        had = found.get(key, AgentFolder(path, project=bound))
        target = AGENTS[name].target
        found[key] = AgentFolder(
            had.path, tuple(dict.fromkeys((*had.agents, name))),
            tuple(dict.fromkeys((*had.targets, *((target,) if target else ())))), had.project)
    for path in into:
        found.setdefault(os.path.realpath(path), folder_by_path(path))
    return list(found.values())

