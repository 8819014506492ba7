"""`skillpack lint`: advice about a skill's text and files beyond what `check` requires.

Each rule has a stable code (docs/LINT.md lists them with examples):

* ``run-path-missing`` (error): a tool's run template runs a relative path (the program word,
  or the script after an interpreter such as ``python3``) that the skill does not carry.
* ``path-missing`` (warning): any other relative path a run template, a shell code block's
  script, or a path in backticks or prose (``scripts/x.py``) names, that the skill does not
  carry. Only paths under a usual skill folder (`SKILL_FOLDERS`) or starting with ``./``
  count in prose; fenced code blocks other than scripts run by shell lines are not read. A
  shell block's script counts when it is under a usual skill folder or ends with a carried
  path (``skills/x/scripts/a.py``): ``python app/main.py`` runs a file of the user's project.
  A path is reported only when it is in the skill's own tree shape: under ``scripts/``,
  ``references/`` or ``assets/`` (`SPEC_FOLDERS`), under a folder the skill carries, ending
  with a carried path, or naming a file the skill carries elsewhere; ``resources/_gen/`` in
  a skill with no ``resources/`` names the user's own project (a site generator's output),
  not a file the skill lacks.
* ``link-missing`` (warning): a markdown link (``[text](target)`` or a ``[ref]: target``
  definition) in SKILL.md to a relative target the skill does not carry.
* ``file-unreferenced`` (info): a carried file whose path or name appears in no text that
  SKILL.md leads to (SKILL.md itself, then every carried text file it names, transitively;
  Python imports and rule files listed by stem count as names). A file named only in another
  case (``FORMS.md`` for ``forms.md``) is reached, and that name is a ``path-missing``.
  ``LICENSE*``, ``README*``, ``NOTICE*``, ``COPYING*`` and ``__init__.py`` are never
  reported.
* ``reference-too-deep`` (warning): a file SKILL.md links to that links on to further files of
  the skill, which SKILL.md itself neither links to nor names: agents read references one
  level deep, so a second level may never be read.
* ``body-tokens`` (warning): the body is over `MAX_BODY_TOKENS` tokens, estimated as
  ``ceil(characters / 4)`` (code points of the body). Over 500 lines is `check`'s
  ``body-too-long``, not repeated here.
* ``description-no-when`` (warning): the description does not say when to use the skill: its
  lower-cased text (blanks collapsed) holds none of `WHEN_PHRASES` and no verb of use
  (use, used, invoke, apply, choose, call) followed within five words by when, whenever,
  for, if or to.

Pure: files are read through the ``read_text`` callable the caller gives.
"""

from __future__ import annotations

import math
import posixpath
import re
import string
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from skillpack.errors import Problem

if TYPE_CHECKING:
    from skillpack.errors import Severity
from skillpack.skillmd.commands import effective_program, literal_word
from skillpack.skillmd.mentions import INTERPRETERS, mentioned_programs
from skillpack.skillmd.skill import Skill
from skillpack.skillmd.tools import template_params

__all__ = ["MAX_BODY_TOKENS", "RULES", "SKILL_FOLDERS", "SPEC_FOLDERS", "WHEN_PHRASES",
           "estimate_tokens", "lint"]

MAX_BODY_TOKENS = 5000
#: Folders whose paths are recognised in prose and backticks.
SKILL_FOLDERS = ("scripts", "references", "reference", "assets", "templates", "examples",
                 "resources", "agents", "themes", "fonts", "rules", "workflows", "guides")
#: The folders of the Agent Skills specification's skill shape: a path under one of them
#: that the skill does not carry is reported even when the skill has no such folder.
SPEC_FOLDERS = ("scripts", "references", "assets")
#: A description says when to use the skill if its lower-cased text holds one of these.
WHEN_PHRASES = ("use when", "use this", "use for", "use it", "use if", "use whenever",
                "use to ", "use on ", "use in ", "use during", "use with", "use after",
                "use before", "used when", "used for", "used to", "when the user",
                "when a user", "when you", "when users", "when asked", "when working",
                "when the task", "whenever", "trigger", "invoke when", "should be used",
                "apply when", "for when", "best for", "ideal for", "useful for", "useful when",
                "helps when", "when needing", "when creating", "when building", "when writing",
                "preferred for", "preferred when", "prefer when", "prefer it")
#: Every lint code with its severity.
RULES: dict[str, Severity] = {
    "run-path-missing": "error",
    "path-missing": "warning",
    "link-missing": "warning",
    "file-unreferenced": "info",
    "reference-too-deep": "warning",
    "body-tokens": "warning",
    "description-no-when": "warning",
}
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# Link text holds no `[` (a nested bracket is missed, not scanned again: linear time).
# No part of a link crosses a '[' (an escaped one included): each attempt ends at the next
# '[' of the line, so a line of n links that never close costs n, not n squared.
_LINK = re.compile(
    r"!?\[(?:[^\[\]\\]|\\[^\[])*+\]\(\s*<?([^)\s>\[]++)>?(?:\s+[\"'(][^)\[]*+)?\)")
_REF_DEF = re.compile(r"^ {0,3}\[[^\]^][^\]]*\]:\s*<?(\S+?)>?(?:\s.*)?$")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_PROSE_PATH = re.compile(
    r"(?<![\w/.~$-])((?:\./)?(?:" + "|".join(SKILL_FOLDERS) + r")/[\w.+-]+(?:/[\w.+-]+)*)")
_PLAIN_PATH = re.compile(r"(?:\./)?[\w.+-]+(?:/[\w.+-]+)+/?")
#: "use geniml for ...", "invoke it when ...": a verb of use, up to four words, a condition.
_WHEN_VERB = re.compile(r"\b(?:use|used|invoke|apply|choose|call)\b(?:\s+\S+){0,4}?\s+"
                        r"(?:when|whenever|for|if|to)\b")
_EXAMPLE = re.compile(r"\bexamples?\b|\be\.g\.|\bfor instance\b", re.IGNORECASE)
#: A line that starts an example ("Example: ...", "For example, ...", "**E.g.** ...").
_EXAMPLE_INTRO = re.compile(r"^\W*(?:for\s+)?(?:examples?\b|e\.g\.|instance\b)", re.IGNORECASE)
_NAME_WORD = re.compile(r"[\w.+-]+")
_FOLDER_REF = re.compile(r"(?<![\w.+/-])([\w.+/-]*[\w.+-])/(?![\w.+-])")
#: Where a `_FOLDER_REF` may end (a ``/`` no name character follows), and the word from there.
_SLASH_END = re.compile(r"/(?![\w.+-])")
_FOLDER_WORD = re.compile(r"[\w.+/-]*")
_ASCII_NAME_CHARS = frozenset(string.ascii_letters + string.digits + "_.+-")
#: ``from .x.y import a, b`` (groups 1-3; names on the same line only) or ``import a.b, c as
#: d`` (group 4), at a line start.
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\(?[\w., \t]+)"
                     r"|import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+"
                     r"(?:[ \t]+as[ \t]+\w+)?)*))", re.MULTILINE)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_ALWAYS_REFERENCED = re.compile(r"^(LICEN[CS]E|README|NOTICE|COPYING|__init__\.py$)",
                                re.IGNORECASE)


def estimate_tokens(text: str) -> int:
    """The token estimate of the lint: one token per four characters, rounded up."""
    return math.ceil(len(text) / 4)


def _problem(code: str, message: str, file: str | None, line: int | None) -> Problem:
    return Problem(RULES[code], code, message, file, line)


def _prose_lines(text: str, first_line: int) -> Iterator[tuple[int, str]]:
    """(file line, text) of each line outside fenced code blocks."""
    marker: str | None = None
    for offset, line in enumerate(text.split("\n")):
        fence = _FENCE.match(line) if "`" in line or "~" in line else None
        if marker is None:
            if fence is not None and not (fence.group(1)[0] == "`" and "`" in fence.group(2)):
                marker = fence.group(1)
                continue
            yield first_line + offset, line
        elif (fence is not None and fence.group(1)[0] == marker[0]
              and len(fence.group(1)) >= len(marker) and not fence.group(2).strip()):
            marker = None


def _link_target(raw: str) -> str | None:
    """A link target as a path relative to its file, or None for a URL, an anchor, an
    absolute path or a template."""
    if _SCHEME.match(raw) or raw.startswith(("#", "/", "~", "<", "{", "$")):
        return None
    target = urllib.parse.unquote(raw.split("#", 1)[0].split("?", 1)[0])
    if "/" not in target and "." not in target.strip("."):  # `[Smith 2025](url)`
        return None
    return target or None


def _links(text: str, first_line: int) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for line, prose in _prose_lines(text, first_line):
        if "[" not in prose:  # every link and definition has one
            continue
        stripped = _CODE_SPAN.sub("", prose)
        for match in _LINK.finditer(stripped):
            target = _link_target(match.group(1))
            if target is not None:
                found.append((line, target))
        definition = _REF_DEF.match(prose)
        if definition is not None:
            target = _link_target(definition.group(1))
            if target is not None:
                found.append((line, target))
    return found


def _usable_path(word: str) -> bool:
    return (bool(_PLAIN_PATH.fullmatch(word)) and not word.startswith(("/", "~", "-"))
            and ".." not in word.split("/") and not _SCHEME.match(word)
            and not any(c in word for c in "*?[]{}<>$"))


def _prose_paths(text: str, first_line: int) -> list[tuple[int, str, bool]]:
    """Paths in backticks (any relative path with a ``/`` under a skill folder or ``./``)
    and in plain prose (the same, with a file extension), each with whether it is outside
    the lines that give examples (True) or on one of them (False)."""
    found: list[tuple[int, str, bool]] = []
    # The lines with an example word, from one search of the whole text (no match spans
    # a line).
    examples: set[int] = set()
    line, counted = first_line, 0
    for match in _EXAMPLE.finditer(text):
        line += text.count("\n", counted, match.start())
        counted = match.start()
        examples.add(line)
    # An example's scope: its line, then, for a line that starts with it, the block after it
    # up to a blank line ("Example:
    # when building a big-query skill ...:", blank, "2. A `references/schema.md` file ...").
    scope = ""  # "", "line" (the example line, blanks after it), "block" (the block after)
    for line, prose in _prose_lines(text, first_line):
        blank = not prose.strip()
        outside = True
        if line in examples:  # "Example: `scripts/rotate_pdf.py`"
            scope = "line" if _EXAMPLE_INTRO.match(prose) else ""
            outside = False
        elif scope == "line" and not blank and not prose.lstrip().startswith("#"):
            scope = "block"
        elif (scope == "block" and blank) or prose.lstrip().startswith("#"):
            scope = ""
        if "/" not in prose:  # every path found has a `/`
            continue
        outside = outside and not scope
        for span in _CODE_SPAN.findall(prose):
            word = span.strip()
            first = word.removeprefix("./").split("/", 1)[0]
            if _usable_path(word) and first in SKILL_FOLDERS and " " not in word:
                found.append((line, word, outside))
        bare = _LINK.sub(" ", _CODE_SPAN.sub(" ", prose))
        for match in _PROSE_PATH.finditer(bare):
            word = match.group(1).rstrip(".")
            if _usable_path(word) and "." in word.rsplit("/", 1)[-1]:
                found.append((line, word, outside))
    return found


class _Files:
    """The carried paths, with folder lookups."""

    def __init__(self, carried: Iterable[str]) -> None:
        self.paths = {posixpath.normpath(p) for p in carried}
        self.longest = max(map(len, self.paths), default=0)
        self.names = {posixpath.basename(p) for p in self.paths}
        self.folders = {posixpath.dirname(p) for p in self.paths}
        for folder in list(self.folders):
            while folder:
                folder = posixpath.dirname(folder)
                self.folders.add(folder)

    def has(self, path: str, base: str = "") -> bool:
        joined = posixpath.normpath(posixpath.join(base, path.removeprefix("./")))
        return joined in self.paths or joined.rstrip("/") in self.folders

    def resolve(self, path: str, base: str = "") -> str:
        return posixpath.normpath(posixpath.join(base, path.removeprefix("./")))


def _run_paths(skill: Skill, files: _Files, file: str | None) -> list[Problem]:
    problems: list[Problem] = []
    for tool in skill.tools:
        effective = effective_program(tool.words)
        index = effective.index
        runs: set[int] = set()
        if index is not None:
            runs.add(index)
            if posixpath.basename(literal_word(tool.words[index])) in INTERPRETERS:
                for later in range(index + 1, len(tool.words)):
                    if not tool.words[later].startswith("-"):
                        runs.add(later)
                        break
        for position, word in enumerate(tool.words):
            if template_params(word):
                continue
            text = literal_word(word)
            if "/" not in text or not _usable_path(text) or files.has(text):
                continue
            if position in runs:
                problems.append(_problem(
                    "run-path-missing",
                    f"tool '{tool.id}' runs '{text}', which the skill does not carry: add "
                    "the file to the skill (or to 'includes:'), or fix the path", file,
                    tool.line))
            else:
                problems.append(_problem(
                    "path-missing",
                    f"tool '{tool.id}' passes the path '{text}', which the skill does not "
                    "carry; if the tool reads it, add it to the skill", file, tool.line))
    return problems


def lint(
    skill: Skill, carried_paths: list[str], read_text: Callable[[str], str | None]
) -> list[Problem]:
    """Every lint finding of `skill`, which carries `carried_paths` (relative, ``/``
    separated, SKILL.md among them or not). `read_text(path)` gives a carried file's text, or
    None for a binary or unreadable one. Sorted by file, line and code."""
    file = "SKILL.md"
    files = _Files(carried_paths)
    body, first = skill.body, skill.body_line
    problems = _run_paths(skill, files, file)
    reported: set[str] = set()
    links = _links(body, first)
    for line, target in links:
        if not files.has(target) and target not in reported:
            reported.add(target)
            fix = ("it leads outside the skill folder, which a packed or installed skill does "
                   "not carry: copy the file into the skill, or link to it by URL"
                   if files.resolve(target).split("/", 1)[0] == ".." else
                   "add the file, or fix the link")
            problems.append(_problem(
                "link-missing", f"the link to '{target}' leads to no file the skill carries: "
                f"{fix}", file, line))
    paths = _prose_paths(body, first)
    named = [(line, path) for line, path, outside in paths if outside]
    for mention in mentioned_programs(body, first):  # `python scripts/x.py` in a shell block
        script = mention.script
        if (script and "/" in script and _usable_path(script)
                and (script.removeprefix("./").split("/", 1)[0] in SKILL_FOLDERS
                     or _carried_tail(script, files) is not None)):
            named.append((mention.line, script))
    for line, path in named:
        if not files.has(path) and path not in reported and _in_skill_shape(path, files):
            reported.add(path)
            problems.append(_problem(
                "path-missing", f"'{path}' is named here but the skill does not carry it: "
                f"{_fix(path, files)}", file, line))
    problems.extend(_too_deep(links, [path for _line, path, _outside in paths], files,
                              read_text))
    problems.extend(_unreferenced(skill, files, read_text))
    tokens = estimate_tokens(body)
    if tokens > MAX_BODY_TOKENS:
        problems.append(_problem(
            "body-tokens", f"the body is about {tokens} tokens (characters / 4); keep SKILL.md "
            f"under {MAX_BODY_TOKENS} and move details to files it links to", file, first))
    description = " ".join(skill.description.lower().split())
    if description and not (any(phrase in description for phrase in WHEN_PHRASES)
                            or _WHEN_VERB.search(description)):
        problems.append(_problem(
            "description-no-when", "the description says what the skill does but not when to "
            "use it; add a sentence such as 'Use when the user asks to ...'", file,
            skill.lines.get("description")))
    return sorted(problems, key=lambda p: (p.file or "", p.line or 0, p.code, p.message))


def _in_skill_shape(path: str, files: _Files) -> bool:
    """Whether a path SKILL.md names is one of the skill's own, so that its absence is
    reported: under a folder of the specification's shape (`SPEC_FOLDERS`), under a folder
    the skill carries, ending with a carried path, or naming a file the skill carries
    elsewhere (``reference/x.md`` for ``references/x.md``). Any other (``resources/_gen/``
    of the user's site generator, ``templates/vue/`` of the user's app) names the user's
    project."""
    first = path.removeprefix("./").split("/", 1)[0]
    return (first in SPEC_FOLDERS or first in files.folders
            or _carried_tail(path, files) is not None
            or posixpath.basename(path.rstrip("/")) in files.names)


def _fix(path: str, files: _Files) -> str:
    """What to do about a missing path: the carried path it ends with, when there is one
    (``skills/geniml/scripts/x.py`` for ``scripts/x.py``: paths are relative to the skill)."""
    tail = _carried_tail(path, files)
    if tail is not None:
        return f"paths are relative to the skill folder; write '{tail}'"
    return "add the file, or fix the path"


def _carried_tail(path: str, files: _Files) -> str | None:
    """The carried path `path` ends with after one or more leading folders, or None (only
    tails no longer than the longest carried path are looked at: a word of thousands of
    folders costs its length, not its length squared)."""
    path = path.removeprefix("./")
    at = path.find("/")
    while at >= 0:
        if len(path) - at - 1 <= files.longest and path[at + 1:] in files.paths:
            return path[at + 1:]
        at = path.find("/", at + 1)
    return None


def _too_deep(links: list[tuple[int, str]], named: list[str], files: _Files,
              read_text: Callable[[str], str | None]) -> list[Problem]:
    """`links` and `named`: SKILL.md's links and the paths its prose names (examples too)."""
    problems: list[Problem] = []
    seen: set[str] = set()
    # What SKILL.md itself links to or names is one level deep, wherever else it is linked.
    direct = {files.resolve(target) for _line, target in links}
    direct |= {files.resolve(path) for path in named}
    for _line, target in links:
        path = files.resolve(target)
        if path in seen or path not in files.paths or path == "SKILL.md":
            continue
        seen.add(path)
        text = read_text(path)
        if text is None or not path.endswith((".md", ".markdown", ".txt")):
            continue
        base = posixpath.dirname(path)
        for inner_line, inner in _links(text, 1):
            further = files.resolve(inner, base)
            if (further in files.paths and further not in (path, "SKILL.md")
                    and further not in direct):
                problems.append(_problem(
                    "reference-too-deep", f"'{path}' (linked from SKILL.md) links on to "
                    f"'{further}': agents read references one level deep; link '{further}' "
                    "from SKILL.md", path, inner_line))
                break
    return problems


def _unreferenced(skill: Skill, files: _Files,
                  read_text: Callable[[str], str | None]) -> list[Problem]:
    """Carried files named by no text reachable from SKILL.md: by file name, as a Python
    module (``core.easing`` for ``core/easing.py``), or by a folder written as ``folder/``
    (or `` `folder` ``) holding them. Each text is searched for the names of the files not
    yet reached (`_written`) and read once for folders and imports, so the time is the size
    of the texts times the names still sought, plus files times folder depth."""
    pending = ["SKILL.md"]
    texts: dict[str, str] = {"SKILL.md": skill.body + "\n" + "\n".join(
        " ".join(t.words) for t in skill.tools) + "\n" + " ".join(skill.include_list or ())}
    referenced: set[str] = {"SKILL.md"}
    candidates = sorted(files.paths - {"SKILL.md"})
    # What each candidate is named by: its file name, its module, its folders, its stem.
    facts = {path: _Candidate(path) for path in candidates}
    remaining = list(candidates)
    # Every name a reached text writes that lower-cases to a sought name: (as written, the
    # text), the first text first. A file named only in another case (`FORMS.md` for
    # forms.md) is reached too, and told: a case-sensitive file system does not open it.
    lowered: dict[str, tuple[str, str]] = {}
    basenames = {posixpath.basename(path) for path in files.paths}
    problems: list[Problem] = []
    while pending:
        while pending:
            current = pending.pop()
            text = texts.pop(current)
            base = posixpath.dirname(current)
            spans = {span.strip() for span in _CODE_SPAN.findall(text)}
            keys = {key for path in remaining for key in facts[path].keys(spans)}
            written = _written(text, keys)
            for key in sorted(written):  # `SKILL.md` names SKILL.md, not skill.md
                forms = sorted(written[key] - basenames)
                if forms:
                    lowered.setdefault(key, (forms[0], current))
            folders = _folders_in(text, base, spans,
                                  {f.rsplit("/", 1)[-1] for p in remaining
                                   for f in facts[p].parents})
            imported = (_imported_paths(text, base)  # .py files only
                        if "import" in text and any(p.endswith(".py") for p in remaining)
                        else set())
            reached: list[str] = []
            for path in remaining:
                fact = facts[path]
                if (fact.name in written.get(fact.name.lower(), ())
                        or (fact.module is not None
                            and fact.module in written.get(fact.module.lower(), ()))
                        or path in imported
                        or any(f in folders for f in fact.parents)
                        or (fact.stem in spans
                            and (not fact.folder
                                 or fact.folder_name in written.get(fact.folder_name.lower(),
                                                                    ())))):
                    reached.append(path)
                    _reach(path, referenced, texts, pending, read_text)
            if reached:
                remaining = [path for path in remaining if path not in referenced]
        for path in candidates:
            name = posixpath.basename(path)
            if path in referenced or "." not in name or name.lower() not in lowered:
                continue
            written_as, where = lowered[name.lower()]
            _reach(path, referenced, texts, pending, read_text)
            problems.append(_problem(
                "path-missing", f"'{written_as}' names no file the skill carries: the skill "
                f"carries '{path}', which differs in case, and a case-sensitive file system "
                f"(Linux) does not open it; write '{name}'", where,
                _line_of(written_as, where, skill, read_text)))
        remaining = [path for path in remaining if path not in referenced]
    for path in candidates:
        if path not in referenced and not _ALWAYS_REFERENCED.match(posixpath.basename(path)):
            problems.append(_problem(
                "file-unreferenced", f"nothing in SKILL.md (or the files it names) refers "
                f"to '{path}': a model never learns it is there; mention it, or leave it out",
                path, None))
    return problems


class _Candidate:
    """A carried file as texts may name it."""

    def __init__(self, path: str) -> None:
        self.folder, self.name = posixpath.split(path)
        self.module = path[:-3].replace("/", ".") if path.endswith(".py") else None
        self.parents = _parents(path)
        self.stem = self.name.rsplit(".", 1)[0]
        self.folder_name = posixpath.basename(self.folder)

    def keys(self, spans: set[str]) -> Iterator[str]:
        """The lower-cased words a text is searched for: the file name, the module, and the
        folder's name when the stem is in a code span."""
        yield self.name.lower()
        if self.module is not None:
            yield self.module.lower()
        if self.folder and self.stem in spans:
            yield self.folder_name.lower()


def _reach(path: str, referenced: set[str], texts: dict[str, str], pending: list[str],
           read_text: Callable[[str], str | None]) -> None:
    referenced.add(path)
    loaded = read_text(path)
    if loaded is not None:
        texts[path] = loaded
        pending.append(path)


def _line_of(word: str, file: str, skill: Skill,
             read_text: Callable[[str], str | None]) -> int | None:
    """The line of `file` (SKILL.md: of its body) where `word` first appears."""
    text, first = (skill.body, skill.body_line) if file == "SKILL.md" else (read_text(file), 1)
    at = text.find(word) if text is not None else -1
    return None if text is None or at < 0 else first + text.count("\n", 0, at)


def _name_char(char: str) -> bool:
    return char in _ASCII_NAME_CHARS if char.isascii() else bool(_NAME_WORD.match(char))


def _written(text: str, keys: Iterable[str]) -> dict[str, set[str]]:
    """For each lower-cased name of `keys`, the names `text` writes that lower-case to it. A
    name is a word of name characters (``[\\w.+-]``), a trailing ``.`` of a sentence dropped;
    each key is found with `str.find` on the lower-cased text and its ends checked, so only
    the sought names are looked at (a text whose lower case differs in length, or a key
    outside ASCII, is read word by word instead)."""
    keys = {key for key in keys if key and not key.endswith(".")
            and _NAME_WORD.fullmatch(key) is not None}
    found: dict[str, set[str]] = {}
    if not keys:
        return found
    low = text.lower()
    if len(low) != len(text) or not all(key.isascii() for key in keys):
        for word in _NAME_WORD.findall(text):
            name = word.rstrip(".")
            if name.lower() in keys:
                found.setdefault(name.lower(), set()).add(name)
        return found
    size = len(text)
    for key in keys:
        at = low.find(key)
        while at >= 0:
            end = at + len(key)
            if at == 0 or not _name_char(text[at - 1]):
                after = end
                while after < size and text[after] == ".":
                    after += 1
                if after == size or not _name_char(text[after]):
                    found.setdefault(key, set()).add(text[at:end])
            at = low.find(key, end)
    return found


def _folders_in(text: str, base: str, spans: set[str], sought: set[str]) -> set[str]:
    """The folders a text names as ``folder/`` or `` `folder` `` (`spans`, its code spans),
    as written and, when their last part is one of `sought` (folder names), relative to
    `base`, the folder of the text. Only the words around a ``/`` that no name character
    follows are read."""
    folders: set[str] = set()
    done = 0
    for hit in _SLASH_END.finditer(text):
        at = hit.start()
        if at < done:
            continue
        start = at
        while start > 0 and (text[start - 1] == "/" or _name_char(text[start - 1])):
            start -= 1
        word = _FOLDER_WORD.match(text, at)
        done = word.end() if word is not None else at + 1
        folders.update(m.removeprefix("./") for m in _FOLDER_REF.findall(text[start:done]))
    folders |= {span.removeprefix("./").rstrip("/") for span in spans}
    if base:
        wanted = sought | {"", ".", ".."}
        folders |= {posixpath.normpath(posixpath.join(base, f)) for f in list(folders)
                    if f and f.rsplit("/", 1)[-1] in wanted}
    return folders


def _imported_paths(text: str, base: str) -> set[str]:
    """The files Python ``import`` and ``from ... import`` lines of `text` may load, from the
    folder of the text (`base`: a script's folder is on ``sys.path`` when it runs) and from
    the skill folder: ``from validators import X`` gives ``validators.py``,
    ``validators/__init__.py`` and ``validators/X.py``; ``from .base import Y`` in
    ``v/__init__.py`` gives ``v/base.py``."""
    found: set[str] = set()
    for match in _IMPORT.finditer(text):
        dots, module, names = match.group(1) or "", match.group(2) or "", match.group(3)
        if match.group(4) is not None:  # `import a.b, c as d`
            modules = [m.split()[0] for m in match.group(4).split(",") if m.strip()]
            imported: list[str] = []
        else:
            modules = [module]
            imported = [n.split()[0] for n in names.strip("()").split(",") if n.split()]
        if dots:
            anchor = base
            for _ in range(len(dots) - 1):
                anchor = posixpath.dirname(anchor)
            anchors = [anchor]
        else:
            anchors = [base, ""] if base else [""]
        for anchor in anchors:
            for name in modules:
                parts = [p for p in name.split(".") if p]
                for depth in range(1, len(parts) + 1):  # `a.b.c` loads a, a.b and a.b.c
                    stem = posixpath.join(anchor, *parts[:depth])
                    found.update((stem + ".py", stem + "/__init__.py"))
                stem = posixpath.join(anchor, *parts) if parts else anchor
                found.update(posixpath.join(stem, n) + ".py" for n in imported if n != "*")
    return {posixpath.normpath(p) for p in found}


def _parents(path: str) -> list[str]:
    """The folders of `path` that hold nothing but what a reference to the folder covers:
    ``scripts/`` named in the text covers every file under it."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]
