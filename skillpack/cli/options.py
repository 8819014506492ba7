"""What every command is made of, declared once: the command class (its exit code, its
failures), and the arguments and options more than one command takes."""

from __future__ import annotations

import itertools
import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from skillpack._regular import read_regular
from skillpack.cli.output import failed
from skillpack.errors import SkillpackError
from skillpack.formats.codes import unknown_code
from skillpack.install.agents import AGENTS
from skillpack.packing.targets import DEFAULT_TARGET, TARGETS
from skillpack.source.ignore import exclude_problem

__all__ = [
    "AGENT",
    "CATALOG_BUDGET",
    "CONFIG_FILE",
    "CONFIG_KEYS",
    "EXCLUDE",
    "EXISTING",
    "GLOBAL",
    "IGNORE",
    "JOBS_ENV",
    "JSON",
    "KEEP_GOING",
    "LAYOUT",
    "QUIET",
    "TARGET",
    "Command",
    "Group",
    "chosen",
    "command",
    "config_defaults",
    "find_config",
    "jobs",
    "json_failures",
    "many",
    "out_file",
    "out_folder",
    "paths",
    "quiet",
    "signed_lock",
    "wants_json",
]

F = TypeVar("F", bound=Callable[..., Any])

#: A path that must exist: a skill folder, its SKILL.md, a folder of skills or of archives,
#: an archive (what `skillpack.source.classify` reads). One that cannot be read is the
#: library's to refuse (exit 1), as when it is reached through a folder.
EXISTING = click.Path(exists=True, file_okay=True, dir_okay=True, readable=False)
_JSON_KEY = "skillpack.json"
#: The environment variable that sets how many processes `check` uses (``1``: this one).
JOBS_ENV = "SKILLPACK_JOBS"
_MAX_JOBS = 8


def jobs() -> int:
    """How many processes share the skills of `check` and `digest`: ``SKILLPACK_JOBS`` (a
    whole number), else one a usable core; at most 8."""
    asked = os.environ.get(JOBS_ENV, "")
    wanted = int(asked) if asked.isdecimal() and int(asked) >= 1 else len(
        os.sched_getaffinity(0))
    return min(wanted, _MAX_JOBS)


class Command(click.Command):
    """A skillpack command: its callback returns the exit code; a `SkillpackError` it raises
    is printed (`failed`: on stderr, or as one JSON document when the command was asked for
    JSON), exit 1; a usage error it raises itself is printed as a JSON document too then,
    exit 2 (otherwise click prints it). Its options' defaults come from the repository's
    configuration file, when there is one (`find_config`, `config_defaults`)."""

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        asked = self._asks_json(args)
        try:
            found = find_config(Path.cwd())
            if found is not None:
                extra.setdefault("default_map", config_defaults(self, *found))
            ctx = super().make_context(info_name, list(args), parent, **extra)
        except click.UsageError as err:  # while reading the command line: before --json's
            if not asked:                # callback could say JSON was asked for
                raise
            raise click.exceptions.Exit(failed(err, True)) from None
        if found is not None:
            ctx.meta[_META + "config"] = found[0]
        return ctx

    def _asks_json(self, args: Sequence[str]) -> bool:
        """Whether the command line asks for JSON (``--json``; ``--format json`` for a
        command whose --format offers it, `catalog`; `tools` prints JSON always), read from
        the words before ``--`` as they are."""
        words = list(args)
        words = words[:words.index("--")] if "--" in words else words
        if any(p.name == "as_json" for p in self.params) and "--json" in words:
            return True
        if self.name == "tools":
            return True
        formats = [b for a, b in itertools.pairwise(words) if a == "--format"]
        formats += [w.split("=", 1)[1] for w in words if w.startswith("--format=")]
        return "json" in formats and any(
            isinstance(p.type, click.Choice) and "json" in p.type.choices
            for p in self.params if p.name == "fmt")

    def invoke(self, ctx: click.Context) -> int:
        try:
            code = super().invoke(ctx)
        except SkillpackError as err:
            return failed(err, wants_json(ctx))
        except click.UsageError as err:
            if not wants_json(ctx):
                raise
            return failed(err, True)
        return code if isinstance(code, int) else 0


class Group(click.Group):
    """A group of skillpack commands (``export``)."""

    command_class = Command


def command(name: str | None = None) -> Callable[[Callable[..., int]], Command]:
    """``@command()``: a skillpack `Command`, its callback returning the exit code."""
    return click.command(name, cls=Command)


def paths(name: str = "paths") -> Callable[[F], F]:
    """PATH...: one or more existing paths (a missing one is a usage error: 2)."""
    return click.argument(name, nargs=-1, required=True, type=EXISTING)


def json_failures(ctx: click.Context, value: bool = True) -> bool:
    """Whether a failure of this command is printed as one JSON document (`value`): what
    `skillpack.cli.app` reads when the command raises."""
    ctx.meta[_JSON_KEY] = value
    return value


def wants_json(ctx: click.Context) -> bool:
    """Whether the running command asked for its failures as JSON (`json_failures`)."""
    return bool(ctx.meta.get(_JSON_KEY, False))


JSON = click.option("--json", "as_json", is_flag=True,
                    callback=lambda ctx, _, value: json_failures(ctx, value),
                    help="Print JSON on stdout (on failure too).")
TARGET = click.option(
    "--target", "targets", multiple=True, type=click.Choice(list(TARGETS)),
    help=f"Check against this host's limits too (repeatable; default {DEFAULT_TARGET}: the "
         "spec only). Each problem names its host. See docs/TARGETS.md.")
CATALOG_BUDGET = click.option(
    "--catalog-budget", type=click.IntRange(min=1), metavar="CHARS",
    help="Warn when a skill's description (+ when_to_use) is over CHARS characters: the "
         "per-skill listing budget (claude-code's default: 1,536).")
LAYOUT = click.option(
    "--layout", type=click.Choice(["wrapped", "root"]),
    help="wrapped: one top folder named after the skill; root: SKILL.md at the archive root "
         "(default: what the targets want, wrapped without one).")


def out_file(help: str, **extra: Any) -> Callable[[F], F]:
    """``-o/--out FILE``: the one file a command writes."""
    return click.option("-o", "--out", "dest", type=click.Path(dir_okay=False), help=help,
                        **extra)


def out_folder(name: str, help: str, **extra: Any) -> Callable[[F], F]:
    """``-o/--out DIR``: the folder a command writes into; ``-`` is a usage error (a folder
    cannot go to stdout), never a folder named ``-``."""
    return click.option("-o", "--out", name, type=click.Path(file_okay=False), help=help,
                        callback=_not_dash, **extra)


def _not_dash(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value == "-":
        raise click.UsageError("-o - writes to stdout, and this command writes a folder; "
                               "give a folder", ctx)
    return value


def _agents(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> Any:
    """--agent's values, each an agent of the table; any other is a bad option value (a
    usage error, exit 2), all named at once, with where else a folder can be given."""
    unknown = [v for v in dict.fromkeys(value) if v not in AGENTS]
    if unknown:
        by_path = ("a folder as TARGET with --agent-folders" if ctx.command.name == "verify"
                   else "a folder with --into")
        raise click.BadParameter(
            f"unknown agent{'s' * (len(unknown) > 1)} {', '.join(map(repr, unknown))}: give "
            f"one of {', '.join(AGENTS)}, or {by_path}", ctx, param)
    return value


AGENT = click.option(
    "--agent", "agents", multiple=True, metavar="NAME", callback=_agents,
    help="An agent's skills folder: its project folder under the working folder, or its "
         "user folder with --global (repeatable; " + ", ".join(AGENTS) + "). See "
         "docs/DEPLOY.md for each folder and its source.")
GLOBAL = click.option("--global", "user", is_flag=True,
                      help="--agent names the agent's folder in your home, not the project's.")


def signed_lock(f: F) -> F:
    """``--lock LOCK [--signature ENVELOPE (--signer KEY... | --signers FILE)]``: a lock,
    required to be signed by a trusted signer when --signature is given
    (`skillpack.cli.commands.verify.given_lock` reads it)."""
    for option in reversed((
        click.option("--lock", "lock_file", type=click.Path(exists=True, dir_okay=False),
                     help="The lock file: the digests an approver pinned."),
        click.option("--signature", type=click.Path(exists=True, dir_okay=False),
                     help="Require the lock to be signed: its DSSE envelope "
                          "(LOCK.intoto.json)."),
        click.option("--signer", "signers", multiple=True,
                     type=click.Path(exists=True, dir_okay=False),
                     help="A trusted signer's Ed25519 public key (PEM or OpenSSH; "
                          "repeatable)."),
        click.option("--signers", "signers_file", type=click.Path(exists=True, dir_okay=False),
                     help="A trusted-signers file: one 'ssh-ed25519 AAAA... name' line per "
                          "signer."),
    )):
        f = option(f)
    return f


_META = "skillpack."


def _kept(key: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """An option's callback that keeps its value in the context, for `chosen`/`quiet`."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        ctx.meta[_META + key] = value
        return value

    return callback


def _globs(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> Any:
    bad = [f"{v!r}: {why}" for v in value if (why := exclude_problem(v)) is not None]
    if bad:
        raise click.BadParameter("; ".join(bad), ctx, param)
    return _kept("exclude")(ctx, param, value)


def _codes(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> Any:
    """--ignore's callback: a code skillpack does not report is a usage error (it would
    silence nothing); the configuration's codes were judged with the file (`config_defaults`)."""
    if ctx.get_parameter_source("ignore") != click.core.ParameterSource.DEFAULT_MAP:
        bad = [why for v in value if (why := unknown_code(v)) is not None]
        if bad:
            raise click.BadParameter("; ".join(bad), ctx, param)
    return _kept("ignore")(ctx, param, value)


KEEP_GOING = click.option(
    "-k", "--keep-going", is_flag=True, expose_value=False, callback=_kept("keep_going"),
    help="Go on past a skill that is refused: write everything valid, list each skill "
         "skipped with its problems; exit 1 when any was skipped (default: all or nothing).")
EXCLUDE = click.option(
    "--exclude", multiple=True, metavar="GLOB", expose_value=False, callback=_globs,
    help="Leave out the skill folders and archives whose path matches GLOB (gitignore "
         "syntax, as .skillignore; repeatable). Not an error.")
IGNORE = click.option(
    "--ignore", multiple=True, metavar="CODE", expose_value=False, callback=_codes,
    help="Silence the warnings with this code, e.g. unknown-key (repeatable; an error is "
         "never silenced; a code skillpack does not report is refused).")
QUIET = click.option(
    "-q", "--quiet", is_flag=True, expose_value=False, callback=_kept("quiet"),
    help="Print only problems and the final line.")


def many(f: F) -> F:
    """The options of a command over many skills: --keep-going, --exclude, --ignore,
    --quiet (read back with `chosen` and `quiet`)."""
    return KEEP_GOING(EXCLUDE(IGNORE(QUIET(f))))


def chosen() -> dict[str, Any]:
    """The running command's --exclude, --ignore and --keep-going, as the keyword arguments
    of `skillpack.packing.selection.Selection` (`skillpack.cli.many.selection` makes it)."""
    ctx = click.get_current_context()
    meta = ctx.meta
    config: Path | None = meta.get(_META + "config")
    from_file = ctx.get_parameter_source("exclude") == click.core.ParameterSource.DEFAULT_MAP
    return {"exclude": tuple(meta.get(_META + "exclude", ())),
            "ignore": frozenset(meta.get(_META + "ignore", ())),
            "keep_going": bool(meta.get(_META + "keep_going", False)),
            "base": str(config.parent) if config is not None and from_file else None}


def quiet() -> bool:
    """Whether the running command was asked for --quiet."""
    return bool(click.get_current_context().meta.get(_META + "quiet", False))


#: The repository's own configuration file (or ``[tool.skillpack]`` in pyproject.toml).
CONFIG_FILE = "skillpack.toml"
PYPROJECT = "pyproject.toml"
_LIST, _TEXT, _FLAG = "a list of strings", "a string", "true or false"
#: The keys of the configuration: each a long option's name, and the type of its value.
CONFIG_KEYS: dict[str, str] = {"target": _LIST, "exclude": _LIST, "ignore": _LIST,
                               "layout": _TEXT, "out": _TEXT, "strict": _FLAG}
#: Commands whose ``-o/--out`` the ``out`` key sets: pack's folder of archives (the other
#: commands' -o each name a file of their own).
_OUT_COMMANDS = frozenset({"pack"})


def find_config(start: Path) -> tuple[Path, Mapping[str, Any]] | None:
    """The configuration that applies in folder `start`: searched upward, as ruff and
    pytest search theirs, the first ``skillpack.toml``, or ``pyproject.toml`` holding a
    ``[tool.skillpack]`` table (one without it is passed over), in `start` or a folder above
    it; the search stops at the repository's root (the folder holding ``.git``). Returns
    the file and its table; a file that is no TOML is a usage error (exit 2)."""
    for folder in (start, *start.parents):
        own = folder / CONFIG_FILE
        if os.path.lexists(own):  # a fifo or a device is refused, not passed over
            return own, _read_toml(own)
        project = folder / PYPROJECT
        if project.is_file():
            tool = _read_toml(project).get("tool", {})
            table = tool.get("skillpack") if isinstance(tool, dict) else None
            if table is not None:
                if not isinstance(table, dict):
                    raise click.UsageError(f"{project}: [tool.skillpack] must be a table")
                return project, table
        if (folder / ".git").exists():
            return None
    return None


#: The most bytes of a configuration read (a fifo, a device or a huge file is refused).
_MAX_CONFIG_BYTES = 1 << 20


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(read_regular(path, limit=_MAX_CONFIG_BYTES).decode("utf-8"))
    except OSError as err:
        raise click.UsageError(f"{path}: cannot read it: {err.strerror or err}") from None
    except RecursionError:  # tomllib recurses once an array or table level
        raise click.UsageError(f"{path}: cannot read it as TOML: it is nested too "
                               "deeply") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise click.UsageError(f"{path}: cannot read it as TOML: {err}") from None
    except ValueError:  # an integer of more digits than Python converts (4,300)
        raise click.UsageError(f"{path}: cannot read it as TOML: it holds a number of "
                               "thousands of digits") from None


def config_defaults(command: click.Command, path: Path,
                    table: Mapping[str, Any]) -> dict[str, Any]:
    """The defaults the configuration `table` (read from `path`) gives `command`'s
    options: each key sets the option of that long name where the command has one (``out``:
    pack's only); the command line wins. An unknown key, a value of the wrong type or
    outside the option's choices, or a code in ``ignore`` that skillpack does not report
    (`skillpack.formats.codes.unknown_code`), is a usage error (exit 2) naming the file and
    the key.
    Paths (``out``, and what ``exclude`` matches: `chosen`) are relative to the file's
    folder."""
    where = "[tool.skillpack] in " if path.name == PYPROJECT else ""
    for key, value in table.items():
        kind = CONFIG_KEYS.get(key)
        if kind is None:
            raise click.UsageError(
                f"{where}{path}: unknown key '{key}'; the keys are "
                + ", ".join(CONFIG_KEYS))
        good = (isinstance(value, list) and all(isinstance(v, str) for v in value)
                if kind == _LIST else isinstance(value, bool) if kind == _FLAG
                else isinstance(value, str))
        if not good:
            raise click.UsageError(f"{where}{path}: '{key}' must be {kind}")
    unknown = [why for code in table.get("ignore", ()) if (why := unknown_code(code))]
    if unknown:
        raise click.UsageError(f"{where}{path}: 'ignore': " + "; ".join(unknown))
    defaults: dict[str, Any] = {}
    base = path.parent
    for param in command.params:
        key = next((o[2:] for o in param.opts if o[2:] in table and o.startswith("--")), "")
        if not key or param.name is None or (
                key == "out" and command.name not in _OUT_COMMANDS):
            continue
        value = table[key]
        if isinstance(param.type, click.Choice):
            wrong = [v for v in (value if isinstance(value, list) else [value])
                     if v not in param.type.choices]
            if wrong:
                raise click.UsageError(
                    f"{where}{path}: '{key}': {', '.join(map(repr, wrong))} is not one of "
                    + ", ".join(map(str, param.type.choices)))
        if key == "out":
            value = os.path.relpath(base / value) if not os.path.isabs(value) else value
        defaults[param.name] = tuple(value) if isinstance(value, list) else value
    return defaults

