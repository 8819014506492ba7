"""Programs a SKILL.md body tells the model (or the agent at load time) to run.

A skill's tools are not all it runs: its body says ``python scripts/x.py`` or ``pandoc ...``
in shell code blocks, and Claude Code runs each `` !`command` `` of a SKILL.md (and each line
of a ```` ```! ```` fence) before the model reads it. `mentioned_programs` finds those
commands so an approver sees them beside the tools' programs.

What is scanned, conservatively (prose is never read as commands):

* fenced code blocks whose info string's first word is ``bash``, ``sh``, ``shell``, ``zsh``,
  ``console``, ``shell-session`` or ``shellsession`` (any case). In ``console`` and
  ``shell-session`` blocks only ``$ `` prompt lines are commands; in the others every line
  is, with a leading ``$ `` prompt dropped. Comments, here-document bodies and shell keywords
  (``if``, ``then``, ``do``, ``fi``...) are skipped; ``\\`` continues a line; ``|``, ``||``,
  ``&&``, ``;``, ``&``, ``$(``...``)`` and process substitutions ``<(``...``)`` start further
  commands; code run from a string is read as commands too (``eval "..."``, ``trap '...'
  EXIT``, ``sh -c '...'``, a ``"$(...)"`` inside quotes), four levels deep; ``NAME=VALUE`` words and
  wrappers (`skillpack.skillmd.commands`) are passed over; shell builtins (``cd``, ``export``,
  ``echo``...) are not programs.
* `` !`command` `` anywhere in the body and every line of a ```` ```! ```` fence: kind
  ``runs-at-load`` (Claude Code runs them when the skill loads, before the model sees it).

A program word must look like a command name or path (letters, digits, ``._+-/``), not end
in ``/`` and not be a ``$VAR``. For an interpreter (``python``, ``node``, ``bash``...) the
script it runs is kept as ``script``. Standard library only; touches no file.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass
from typing import Any, Literal

from skillpack.skillmd.commands import effective_program

__all__ = ["SHELL_INFO", "Mention", "mentioned_programs", "split_commands"]

MentionKind = Literal["mentioned", "runs-at-load"]

#: Info-string words of the fences scanned as shell.
SHELL_INFO = frozenset({"bash", "sh", "shell", "zsh", "console", "shell-session",
                        "shellsession"})
_PROMPT_ONLY = frozenset({"console", "shell-session", "shellsession"})
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_AT_LOAD = re.compile(r"!`([^`\n]+)`")
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_PLACEHOLDER = re.compile(r"<([A-Za-z][\w.-]*)>")
_PROGRAM = re.compile(r"[A-Za-z0-9_.+][A-Za-z0-9_.+/-]*")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_SEPARATORS = frozenset({"|", "||", "&&", ";", ";;", "&", "|&", "(", ")", "$(", "{", "}",
                         "!", "\n", "<(", ">("})
_REDIRECTS = frozenset({">", ">>", "<", "<<", "<<<", ">&", "&>", "&>>", "<&", ">|", "<>"})
_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "time"})
_SKIP_COMMAND = frozenset({"fi", "done", "esac", "for", "case", "select", "function", "in"})
#: Shell builtins and keywords: not programs an approver is asked about.
BUILTINS = frozenset({
    ".", ":", "[", "[[", "]]", "alias", "bg", "break", "cd", "continue", "declare", "dirs",
    "echo", "eval", "exit", "export", "false", "fg", "getopts", "hash", "history", "jobs",
    "let", "local", "popd", "printf", "pushd", "pwd", "read", "readonly", "return", "set",
    "shift", "shopt", "source", "test", "trap", "true", "type", "typeset", "ulimit", "umask",
    "unalias", "unset", "wait",
})
#: Package runners: ``uv run X``, ``npx X``... the program stays the runner, X is its script.
RUNNERS = {"uv": "run", "conda": "run", "poetry": "run", "pipx": "run", "pdm": "run",
           "hatch": "run", "mamba": "run", "micromamba": "run", "uvx": None, "npx": None,
           "bunx": None, "pnpx": None}
_RUNNER_ARGS = frozenset({"--with", "--python", "-p", "--project", "--directory", "--env-file",
                          "-n", "--name", "--prefix", "--from", "--package", "--with-requirements",
                          "--spec"})
_NOT_SHELL = re.compile(r"(?:import\s|from\s+[\w.]+\s+import\s|[\w.]+\()")
INTERPRETERS = frozenset({"python", "python3", "python2", "node", "bash", "sh", "zsh", "ruby",
                          "perl", "deno", "bun", "Rscript", "php", "pwsh", "tsx", "ts-node"})


@dataclass(frozen=True, slots=True)
class Mention:
    """One command of the body: the ``program`` it starts, its 1-based ``line`` in SKILL.md,
    ``kind`` (``mentioned`` in a shell code block, ``runs-at-load`` for `` !`...` ``), the
    command ``text`` as written, the wrapper ``context`` (``via sudo``) and, for an
    interpreter, the ``script`` it runs."""

    program: str
    line: int
    kind: MentionKind
    text: str
    context: str | None = None
    script: str | None = None

    @property
    def where(self) -> str:
        """How a person is told where it is: ``mentioned in SKILL.md:12`` or ``runs at load
        in claude-code (SKILL.md:3)``."""
        if self.kind == "runs-at-load":
            return f"runs at load in claude-code (SKILL.md:{self.line})"
        return f"mentioned in SKILL.md:{self.line}"

    def to_dict(self) -> dict[str, Any]:
        return {"program": self.program, "line": self.line, "kind": self.kind,
                "text": self.text, "context": self.context, "script": self.script}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Mention:
        kind = data["kind"]
        if kind not in ("mentioned", "runs-at-load"):
            raise ValueError(f"unknown mention kind {kind!r}")
        return cls(str(data["program"]), int(data["line"]), kind, str(data["text"]),
                   data.get("context"), data.get("script"))


def _tokens(text: str) -> list[str]:
    """Shell-ish tokens of one logical line: words, and operators as their own tokens.

    A line over `_LONG_LINE` characters is read without its quotes by one regular expression
    (shlex builds a token a character at a time, in time quadratic in its length): quoted
    words fall apart into more words, so no command is missed."""
    if len(text) > _LONG_LINE:
        unquoted = text.replace('"', " ").replace("'", " ")
        tokens = re.findall(r"\$\(|[;&|()<>]+|[^\s;&|()<>]+", unquoted)
        return ["$(" if t == "$(" else t for t in tokens]
    if _SHLEX_ONLY.search(text) is None:
        # no quote, escape or comment: shlex (below) would split at its blanks and between
        # operators and words only, which this does in one call, token for token
        tokens = _PLAIN_TOKEN.findall(text)
    else:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            tokens = list(lexer)
        except ValueError:  # an unclosed quote: fall back to words and operators
            tokens = re.findall(r"[;&|()<>]+|[^\s;&|()<>]+", text.split(" #", 1)[0])
    out: list[str] = []
    for token in tokens:  # `$(cmd` arrives as "$" then "("; keep them one separator
        if token == "(" and out and out[-1] == "$":
            out[-1] = "$("
        else:
            out.append(token)
    return out


def split_commands(text: str) -> list[list[str]]:
    """The simple commands of one logical shell line, each a list of words, with operators,
    redirections (and their targets) and leading keywords removed. A ``<name>`` placeholder
    is a word (written ``{name}``), not two redirections."""
    commands: list[list[str]] = []
    current: list[str] = []
    skip_next = False
    text = _PLACEHOLDER.sub(r"{\1}", text)  # `<skill-path>/x.py` is a placeholder, not `<`
    for token in _tokens(text.replace("`", " ; ")):
        if skip_next:
            skip_next = False
            continue
        if token in _SEPARATORS or (set(token) <= set(";&|()") and token):
            if current:
                commands.append(current)
            current = []
            continue
        if token in _REDIRECTS or (set(token) <= set("<>&|") and token):
            skip_next = True
            continue
        if token.endswith("$") and token.strip("$") == "":
            continue
        current.append(token)
    if current:
        commands.append(current)
    return commands


def _program_of(words: list[str]) -> tuple[str, str | None, str | None] | None:
    """(program, wrapper context, script) of one simple command, or None when it starts none
    an approver is asked about (a builtin, a keyword, an assignment only, a ``$VAR``)."""
    while words and (words[0] in _KEYWORDS or _ASSIGNMENT.match(words[0])):
        words = words[1:]
    if not words or words[0] in _SKIP_COMMAND or words[0].endswith("()"):
        return None
    effective = effective_program(words)
    program, index = effective.program, effective.index
    if program is None or program in BUILTINS or not _PROGRAM.fullmatch(program):
        return None
    if program.endswith("/") or program.isdigit():
        return None
    if program == "command" and effective.wrappers == () and len(words) > 1:
        return None  # `command -v git` asks where git is; it runs nothing
    script = None
    base = posixpath.basename(program)
    if index is not None and base in RUNNERS:
        rest = words[index + 1:]
        verb = RUNNERS[base]
        if verb is None or (rest and rest[0] == verb):
            script = _first_operand(rest[0 if verb is None else 1:], _RUNNER_ARGS)
            if script is not None and posixpath.basename(script) in INTERPRETERS:
                after = rest[rest.index(script) + 1:]
                script = _first_operand(after, frozenset()) or script
    elif index is not None and base in INTERPRETERS:
        script = _first_operand(words[index + 1:], frozenset())
    return program, effective.context, script


def _first_operand(words: list[str], takes_value: frozenset[str]) -> str | None:
    """The first word that is not an option (nor an option's value); None after ``-c``,
    ``-m`` or ``-e`` (inline code or a module, not a file)."""
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word in ("-c", "-m", "-e"):
            return None
        if word.startswith("-"):
            skip = word in takes_value
            continue
        return word
    return None


def _logical_lines(lines: list[str], prompt_only: bool) -> list[tuple[int, str]]:
    """(index of first line, text) of each command line of a shell block: prompts dropped,
    ``\\`` continuations joined, here-document bodies and comment lines skipped."""
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        start, raw = i, lines[i].strip()
        i += 1
        if raw.startswith("$ ") or raw == "$":
            raw = raw[1:].strip()
        elif prompt_only:
            continue
        while raw.endswith("\\") and i < len(lines):
            raw = raw[:-1] + " " + lines[i].strip()
            i += 1
        if not raw or raw.startswith("#"):
            continue
        out.append((start, raw))
        heredoc = _HEREDOC.search(raw)
        if heredoc is not None:
            strip, end = heredoc.group(1) == "-", heredoc.group(3)
            while i < len(lines) and (lines[i].strip() if strip else lines[i]) != end:
                i += 1
            i += 1
    return out


#: How deep code inside code is read (``eval "sh -c '...'"``): each level is a part of the
#: line, so a line is read at most this many times over.
_MAX_NESTING = 4
#: Characters of a line read by shlex; a longer one is read by a regular expression.
_LONG_LINE = 4096
#: What only shlex reads right: quotes, a backslash, a comment. A line without any is split
#: by `_PLAIN_TOKEN` (shlex's blanks are these four; its operators are `;&|()<>`).
_SHLEX_ONLY = re.compile(r"[\"'\\#]")
_PLAIN_TOKEN = re.compile(r"[;&|()<>]+|[^ \t\r\n;&|()<>]+")
#: Shells whose ``-c`` word is code (read as a command line too).
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})


def _code_words(words: list[str]) -> list[str]:
    """The words of one simple command that a shell runs as code: every argument of
    ``eval``, the first of ``trap`` (run on a signal or at exit), the word after ``-c`` of a
    shell, and what follows each ``$(`` inside a quoted word (``"$(curl ...)"``)."""
    code: list[str] = []
    first = words[0] if words else ""
    if first == "eval":  # its words are one command line, `$(` included
        rest = 1
        while rest < len(words) and words[rest] == "eval":  # `eval eval x` is `eval x`
            rest += 1
        return [" ".join(words[rest:])]
    if first == "trap" and len(words) > 1 and words[1] not in ("-p", "-l", "--"):
        code.append(words[1])
    elif posixpath.basename(first) in _SHELLS:
        for at, word in enumerate(words[1:-1], start=1):
            if word.startswith("-") and not word.startswith("--") and word.endswith("c"):
                code.append(words[at + 1])
                break
            if not word.startswith("-"):
                break
    for word in words:
        if "$(" in word and word != "$(":
            code.extend(piece.rsplit(")", 1)[0] for piece in word.split("$(")[1:])
    return code


def _commands(text: str, depth: int = 0) -> list[list[str]]:
    """The simple commands of `text` (`split_commands`), then those of the code inside them
    (`_code_words`), to `_MAX_NESTING` levels."""
    found: list[list[str]] = []
    for words in split_commands(text):
        found.append(words)
        if depth < _MAX_NESTING:
            for code in _code_words(words):
                found.extend(_commands(code, depth + 1))
    return found


def _mentions_in(text: str, line: int, kind: MentionKind) -> list[Mention]:
    found: list[Mention] = []
    if _NOT_SHELL.match(text):  # Python in a shell block: `import x`, `gget.module(...)`
        return found
    for words in _commands(text):
        program = _program_of(words)
        if program is not None:
            found.append(Mention(program[0], line, kind, text, program[1], program[2]))
    return found


def mentioned_programs(body_text: str, body_start_line: int = 1) -> list[Mention]:
    """Every command the body's shell code blocks and `` !`...` `` lines start, in order of
    line. `body_start_line` is the SKILL.md line the body starts on (`Skill.body_line`)."""
    lines = body_text.split("\n")
    found: list[Mention] = []
    i = 0
    while i < len(lines):
        line = lines[i]  # most lines are prose: two substring tests pass them over
        if "!`" in line:
            for match in _AT_LOAD.finditer(line):
                found.extend(_mentions_in(match.group(1).strip(), body_start_line + i,
                                          "runs-at-load"))
        if "```" not in line and "~~~" not in line:
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence is None or (fence.group(2)[0] == "`" and "`" in fence.group(3)):
            i += 1
            continue
        marker, info = fence.group(2), fence.group(3).strip()
        close = i + 1
        while close < len(lines):
            end = _FENCE.match(lines[close])
            if (end is not None and end.group(2)[0] == marker[0]
                    and len(end.group(2)) >= len(marker) and not end.group(3).strip()):
                break
            close += 1
        block = lines[i + 1:close]
        first = body_start_line + i + 1
        word = info.split()[0].lower() if info.split() else ""
        if word == "!":
            for offset, text in _logical_lines(block, False):
                found.extend(_mentions_in(text, first + offset, "runs-at-load"))
        elif word in SHELL_INFO:
            for offset, text in _logical_lines(block, word in _PROMPT_ONLY):
                found.extend(_mentions_in(text, first + offset, "mentioned"))
        for offset, text in enumerate(block):  # !`...` inside other fences still runs
            if word != "!" and "!`" in text:
                for match in _AT_LOAD.finditer(text):
                    found.extend(_mentions_in(match.group(1).strip(), first + offset,
                                              "runs-at-load"))
        i = close + 1
    return found
