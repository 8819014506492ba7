"""The program a command line really starts, seen through wrapper commands.

``env FOO=1 timeout 5 curl URL`` starts ``curl``: `env` and `timeout` only set up how it runs.
`effective_program` walks an argv (a tool's run template, or a command line from the body)
past each known wrapper, its options and its fixed operands, and reports the program with the
wrapper chain kept as context. `run_problems` adds the warnings an approver needs for a tool:
a program chosen by a model argument (``program-dynamic``), inline code filled by one
(``run-code-dynamic``: ``sh -c $cmd``) and shell syntax that reaches the
program as literal words (``run-shell-syntax``; there is no shell).

Words are argv template words as `skillpack.skillmd.tools.Tool.words` holds them: ``$name`` is a
param reference and ``$$`` a literal ``$``. Standard library only; touches no file.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from skillpack.errors import Problem
from skillpack.skillmd.tools import Tool, template_params

__all__ = [
    "INLINE_CODE",
    "WRAPPERS",
    "Effective",
    "Wrapper",
    "effective_program",
    "literal_word",
    "run_problems",
    "shell_syntax",
]

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True, slots=True)
class Wrapper:
    """How a wrapper command reads its words before the command it starts.

    ``short_args``: short options taking a value (``-u USER``, or attached ``-uUSER``);
    ``long_args``: long options taking a value (``--user USER`` or ``--user=USER``);
    ``operands``: fixed words before the command (``timeout DURATION``); ``assignments``:
    whether ``NAME=VALUE`` words come before the command (``env``); ``stops``: options after
    which no command is started (``command -v``); ``no_command``: what runs when no command
    follows (``xargs`` runs ``echo``), or None (the wrapper itself is then the program).
    """

    name: str
    short_args: str = ""
    long_args: tuple[str, ...] = ()
    operands: int = 0
    assignments: bool = False
    stops: tuple[str, ...] = ()
    no_command: str | None = None
    operand_options: tuple[str, ...] = ()  # options that replace the operands (taskset -p)


#: The wrappers unwrapped, by the name they are run as (a path's basename also matches).
WRAPPERS: dict[str, Wrapper] = {w.name: w for w in (
    Wrapper("env", short_args="uCS", long_args=("--unset", "--chdir", "--split-string",
            "--block-signal", "--default-signal", "--ignore-signal"), assignments=True),
    Wrapper("timeout", short_args="ks", long_args=("--kill-after", "--signal"), operands=1),
    Wrapper("nice", short_args="n", long_args=("--adjustment",)),
    Wrapper("nohup"),
    Wrapper("time", short_args="fo", long_args=("--format", "--output")),
    Wrapper("stdbuf", short_args="ioe", long_args=("--input", "--output", "--error")),
    Wrapper("setsid"),
    Wrapper("xargs", short_args="aEeIiLlnPsd", long_args=(
        "--arg-file", "--eof", "--replace", "--max-lines", "--max-args", "--max-procs",
        "--max-chars", "--delimiter", "--process-slot-var"), no_command="echo"),
    Wrapper("sudo", short_args="ugCDhpRrtTU", long_args=(
        "--user", "--group", "--close-from", "--chdir", "--host", "--prompt", "--chroot",
        "--role", "--type", "--command-timeout", "--other-user"), stops=("-l", "--list", "-v",
        "--validate", "-k", "-K", "--remove-timestamp", "-e", "--edit", "-V", "--version")),
    Wrapper("doas", short_args="uC"),
    Wrapper("chrt", operands=1, stops=("-p", "--pid", "-m", "--max")),
    Wrapper("ionice", short_args="cnp", long_args=("--class", "--classdata", "--pid"),
            stops=("-p", "--pid")),
    Wrapper("taskset", operands=1, stops=("-p", "--pid")),
    Wrapper("flock", short_args="wEc", long_args=("--timeout", "--conflict-exit-code",
            "--command"), operands=1),
    Wrapper("command", stops=("-v", "-V")),
    Wrapper("exec", short_args="a"),
    Wrapper("nsenter", short_args="tSG", long_args=("--target", "--setuid", "--setgid")),
    Wrapper("unshare"),
    Wrapper("chroot", operands=1, long_args=("--userspec", "--groups")),
    Wrapper("runuser", short_args="ugc", long_args=("--user", "--group", "--command")),
    Wrapper("caffeinate", short_args="tw"),
    Wrapper("watch", short_args="nd", long_args=("--interval", "--differences")),
)}


@dataclass(frozen=True, slots=True)
class Effective:
    """The program an argv starts. ``program`` is its word as written (None for an empty
    argv), ``index`` its position, ``wrappers`` the wrapper words before it, outermost first,
    ``assignments`` the ``NAME=VALUE`` words `env` sets, ``dynamic`` whether a model argument
    chooses the program (its word holds a ``$param``)."""

    program: str | None
    index: int | None
    wrappers: tuple[str, ...] = ()
    assignments: tuple[str, ...] = ()
    dynamic: bool = False

    @property
    def name(self) -> str | None:
        """The program as a name: the literal word (``$$`` as ``$``), or the template word
        itself when it is dynamic."""
        if self.program is None:
            return None
        return self.program if self.dynamic else literal_word(self.program)

    @property
    def context(self) -> str | None:
        """The wrapper chain as shown to a person: ``via sudo, env, timeout``, or None."""
        if not self.wrappers:
            return None
        return "via " + ", ".join(posixpath.basename(literal_word(w)) for w in self.wrappers)


def literal_word(word: str) -> str:
    """A template word with ``$$`` read as ``$`` (param references left as written)."""
    return re.sub(r"\$\$", "$", word)


def _dynamic(word: str) -> bool:
    return bool(template_params(word))


def _wrapper_of(word: str) -> Wrapper | None:
    if _dynamic(word):
        return None
    return WRAPPERS.get(posixpath.basename(literal_word(word)))


def _skip_options(words: Sequence[str], i: int, wrapper: Wrapper) -> tuple[int, bool]:
    """The index after `wrapper`'s options starting at `i`, and whether an option said no
    command follows. ``--`` ends the options."""
    while i < len(words):
        word = literal_word(words[i])
        if word == "--":
            return i + 1, False
        if not word.startswith("-") or word == "-":
            return i, False
        if word in wrapper.stops or word.split("=", 1)[0] in wrapper.stops:
            return i, True
        if word.startswith("--"):
            i += 1 if "=" in word or word not in wrapper.long_args else 2
            continue
        if wrapper.name in ("nice", "ionice") and word[1:].isdigit():  # nice -5
            i += 1
            continue
        skip = 1
        for pos, char in enumerate(word[1:], start=1):
            if "-" + char in wrapper.stops:
                return i, True
            if char in wrapper.short_args:
                if pos == len(word) - 1:
                    skip = 2
                break
        i += skip
    return i, False


#: GNU env's long options: how many words each takes (1: a value, as ``--unset NAME`` or
#: ``--unset=NAME``; 0: none, or an optional ``=VALUE``); `_ENV_STOPS` start no command.
_ENV_LONG = {"--ignore-environment": 0, "--null": 0, "--unset": 1, "--chdir": 1,
             "--split-string": 1, "--argv0": 1, "--block-signal": 0, "--default-signal": 0,
             "--ignore-signal": 0, "--list-signal-handling": 0, "--debug": 0, "--help": 0,
             "--version": 0}
_ENV_STOPS = frozenset({"--list-signal-handling", "--help", "--version"})
#: GNU env's short options taking a value (attached, ``-uHOME``, or the next word).
_ENV_VALUED = "uCSa"


def _env_long(name: str) -> str | None:
    """The long option `name` abbreviates, as getopt_long reads it: itself, or the one long
    option it is a unique prefix of (``--split`` is ``--split-string``); None when unknown or
    ambiguous (``--i``: ``--ignore-environment`` or ``--ignore-signal``)."""
    if name in _ENV_LONG:
        return name
    found = [option for option in _ENV_LONG if option.startswith(name)]
    return found[0] if len(found) == 1 and len(name) > 2 else None


def _env_split(value: str) -> list[str]:
    """The words `env -S` splits a string into (quotes group, ``\\`` escapes, ``#`` starts a
    comment, as GNU env reads it); an unclosed quote falls back to whitespace."""
    try:
        return shlex.split(value, comments=True)
    except ValueError:
        return value.split()


def _read_env(words: list[str], i: int) -> tuple[list[str], int, bool, bool]:
    """GNU env's options from `words[i]` on, as env reads its argv: clustered short options
    (``-iS STRING``, ``-iu NAME``), a value attached or in the next word, unique prefixes of
    long options (``--split=STRING``), ``-`` for ``-i``, ``--`` ending them. ``-S`` splits
    its value into words that are read again, options included (``-S '-iu python3 perl'``).

    Returns the words (rewritten when ``-S`` split one), the index after the options, whether
    an option starts no command (``--help``), and whether the words were rewritten."""
    pending = words[i:][::-1]  # the words still to read, last first: -S pushes its words
    done = words[:i]
    rewritten = False
    while pending:
        word = literal_word(pending[-1])
        if word == "--":
            done.append(pending.pop())
            break
        if word == "-":  # `env -` is `env -i`
            done.append(pending.pop())
            continue
        if not word.startswith("-"):
            break
        done.append(pending.pop())
        value: str | None = None
        if word.startswith("--"):
            name, eq, attached = word.partition("=")
            option = _env_long(name)
            if option in _ENV_STOPS:
                return done + pending[::-1], len(done), True, rewritten
            if option is not None and _ENV_LONG[option] and not eq and pending:
                done.append(pending.pop())
                value = done[-1]
            elif option is not None and _ENV_LONG[option]:
                value = attached if eq else None
            split = option == "--split-string"
        else:
            split = False
            for at, char in enumerate(word[1:], start=1):
                if char in _ENV_VALUED:
                    value = word[at + 1:] or None
                    if value is None and pending:
                        done.append(pending.pop())
                        value = done[-1]
                    split = char == "S"
                    break
        if split and value is not None:
            pending.extend(_env_split(literal_word(value))[::-1])
            rewritten = True
    return done + pending[::-1], len(done), False, rewritten


def effective_program(argv_words: Sequence[str]) -> Effective:
    """The program `argv_words` starts, past every wrapper in `WRAPPERS`.

    ``["sudo", "env", "FOO=1", "timeout", "5", "curl", "URL"]`` gives ``curl`` via sudo, env,
    timeout. A wrapper followed by no command (``env`` alone, ``sudo -l``) is itself the
    program; `xargs` alone runs ``echo``. A ``$param`` word where the program would be makes
    the result ``dynamic``.
    """
    words = list(argv_words)
    wrappers: list[str] = []
    assignments: list[str] = []
    rewritten = False  # after `env -S`, positions no longer index `argv_words`
    i = 0
    while i < len(words):
        word = words[i]
        wrapper = _wrapper_of(word)
        if wrapper is None:
            index = None if rewritten else i
            return Effective(word, index, tuple(wrappers), tuple(assignments), _dynamic(word))
        start = i
        i += 1
        if wrapper.name == "env":
            words, i, stopped, split = _read_env(words, i)
            rewritten = rewritten or split
            while not stopped and i < len(words) and _ASSIGNMENT.match(words[i]):
                assignments.append(words[i])  # env reads no option after an assignment
                i += 1
        else:
            i, stopped = _skip_options(words, i, wrapper)
        if not stopped:
            i += wrapper.operands
        if stopped or i >= len(words):
            if wrapper.no_command is not None and not stopped:
                wrappers.append(word)
                return Effective(wrapper.no_command, None, tuple(wrappers), tuple(assignments))
            return Effective(word, start, tuple(wrappers), tuple(assignments))
        wrappers.append(word)
    return Effective(None, None, tuple(wrappers), tuple(assignments))


_OPERATORS = frozenset({"|", "||", "&&", ";", ";;", "&", "|&", ">", ">>", "<", "<<", "<<<",
                        "2>", "2>>", "&>", "2>&1", ">&2", "1>&2", "(", ")", "{", "}", "!"})
_REDIRECT = re.compile(r"^[0-9]*(?:>>?|<<?|&>|>&)[^\s]")
#: An operator glued to other text in one word (``$msg;``, ``a|b``, ``x>out``, ``job&``): a
#: shell would have split the word there; no shell runs the template, so it reaches the
#: program as it is. A lone ``&`` inside a word (a URL's query) is not one.
_GLUED = re.compile(r"\|\||\||&&|;|&$|>>?|<<?")


def shell_syntax(word: str, *, string_form: bool = True) -> str | None:
    """What shell syntax `word` holds, or None: the construct, named for a person.

    Flagged: an operator word (``|``, ``&&``, ``;``, ``>``, ``2>&1``...), a redirection
    glued to its target (``>out.txt``, ``2>/dev/null``), an operator glued to other text
    in a run string (``$msg;``, ``a|b``, ``x>y``, ``job&``: a shell would split the word
    there; a YAML list's word is taken as meant), backticks, ``$(``, ``${``, a quote
    opening or closing the word, and a leading ``~``. Globs (``*.txt``) are not: many
    programs take them literally (``find -name *.py``).
    """
    text = literal_word(word)
    if text in _OPERATORS:
        return f"the shell operator '{text}'"
    if _REDIRECT.match(text):
        return f"the redirection '{text}'"
    glued = _GLUED.search(text) if string_form else None  # a list's word means itself
    if glued is not None:
        return f"glued to the shell operator '{glued.group(0)}'"
    if "`" in text:
        return "a backtick command substitution"
    if "$(" in word.replace("$$", ""):
        return "a '$(' command substitution"
    if "${" in word.replace("$$", ""):
        return "a '${' parameter expansion"
    if string_form and len(text) > 0 and (text[0] in "'\"" or text[-1] in "'\""):
        return "shell quotes"
    if text.startswith("~"):
        return "a '~' home-folder expansion"
    return None


#: Programs that run the code given after an option: ``sh -c CODE``, ``python3 -c CODE``...
INLINE_CODE: dict[str, tuple[str, ...]] = {
    **{shell: ("-c",) for shell in ("sh", "bash", "zsh", "dash", "ksh", "fish", "pwsh")},
    **{python: ("-c",) for python in ("python", "python2", "python3")},
    "node": ("-e", "--eval", "-p", "--print"), "deno": ("eval",), "bun": ("-e", "--eval"),
    "perl": ("-e", "-E"), "ruby": ("-e",), "php": ("-r",), "Rscript": ("-e",),
    "osascript": ("-e",),
}


def _inline_code(words: Sequence[str], effective: Effective) -> int | None:
    """The position of a code word that holds a ``$param`` (``sh -c $cmd``), or None."""
    if effective.index is None or effective.dynamic:
        return None
    options = INLINE_CODE.get(posixpath.basename(literal_word(words[effective.index])))
    if options is None:
        return None
    letters = {o[1] for o in options if len(o) == 2 and o[0] == "-"}
    for i in range(effective.index + 1, len(words)):
        word = literal_word(words[i])
        cluster = word.startswith("-") and not word.startswith("--") and len(word) > 1
        if word in options or (cluster and word[-1] in letters):  # -c, -lc
            return i + 1 if i + 1 < len(words) and _dynamic(words[i + 1]) else None
        if cluster and any(c in letters for c in word[1:-1]):  # -c$code attached
            return i if _dynamic(words[i]) else None
        if not word.startswith("-"):
            return None  # a script (or a subcommand): what follows is its own
    return None


def run_problems(tool: Tool, file: str | None = None) -> list[Problem]:
    """The approver's warnings for one tool's run template: ``program-dynamic`` when a model
    argument chooses the program (an error under ``--strict``), ``run-code-dynamic`` when a
    model argument fills the inline code of an interpreter (``sh -c $cmd``, ``python3 -c
    $code``; also an error under ``--strict``), ``run-shell-syntax`` for each word holding
    shell syntax (it reaches the program literally)."""
    problems: list[Problem] = []
    effective = effective_program(tool.words)
    where = f"tool '{tool.id}'"
    if effective.dynamic:
        via = f" ({effective.context})" if effective.context else ""
        problems.append(Problem(
            "warning", "program-dynamic",
            f"{where}: the program{via} is '{effective.program}', chosen by a model argument: "
            "the model may run any program; name the program in the template and pass the "
            "choice as an argument or an enum", file, tool.line))
    code = _inline_code(tool.words, effective)
    if code is not None:
        problems.append(Problem(
            "warning", "run-code-dynamic",
            f"{where}: '{effective.name}' runs the code in run word {code + 1} "
            f"'{tool.words[code]}', which a model argument fills: the model may run any "
            "code; put the code in a script the skill carries and pass data as arguments",
            file, tool.line))
    string_form = isinstance(tool.run, str)
    for position, word in enumerate(tool.words, start=1):
        found = shell_syntax(word, string_form=string_form)
        if found is not None:
            problems.append(Problem(
                "warning", "run-shell-syntax",
                f"{where}: run word {position} '{word}' is {found}, but no shell runs the "
                "template: it reaches the program as a literal argument; put pipelines and "
                "redirections in a script the tool runs", file, tool.line))
    return problems
