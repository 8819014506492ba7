"""Split a SKILL.md into frontmatter and body, and parse the frontmatter failsafe.

The frontmatter is YAML between ``---`` lines at the very start of the file (a UTF-8 BOM and
CRLF line ends are accepted). It is parsed with PyYAML's failsafe ``BaseLoader``: every scalar
stays a string (``version: 1.10`` is ``"1.10"``, ``on: yes`` is ``"yes"``). Duplicate keys,
anchors and aliases, explicit tags and a frontmatter that is not a mapping are errors, each
reported with its line in the file.

A frontmatter in the subset of YAML that real SKILL.md files use is read without YAML, by
the runtime's exact reader (`skillpack.skillmd.frontmatter_reader`, which gives exactly what
the YAML load below gives, key lines included, or refuses); PyYAML parses the rest (with
libyaml's composer where PyYAML has it, as the standard wheels do) and reports every
problem. PyYAML is imported when first needed, not when this module is imported: the
serverless runtime imports this module and must not pay for YAML until it reads a
frontmatter, and `skillpack check` of a usual skill never imports it (about 20 ms of
start-up).
"""

from __future__ import annotations

from skillpack._record import Record, field
from skillpack.errors import Problem, SkillError
from skillpack.skillmd.frontmatter_reader import closing_line, read_yaml

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    import yaml

__all__ = ["MAX_FRONTMATTER_BYTES", "Frontmatter", "normalise_text", "split_frontmatter"]

#: Frontmatter larger than this is refused before YAML sees it (a skill's frontmatter is a
#: few hundred bytes; this bounds the work an adversarial file can cause).
MAX_FRONTMATTER_BYTES = 64 * 1024

_DELIMITER = "---"


class Frontmatter(Record):
    """The parsed frontmatter and where things are in the file.

    ``data`` holds strings, lists and dicts only. ``lines`` maps each top-level key (and each
    ``metadata.<key>``) to its 1-based line in the file. ``body`` is the markdown after the
    closing delimiter and ``body_line`` the file line where it starts. ``text`` is the YAML
    between the delimiters (its first line is line 2 of the file).
    """

    data: dict[str, Any]
    lines: dict[str, int] = field(default_factory=dict)
    body: str = ""
    body_line: int = 1
    text: str = ""


def normalise_text(source: str) -> str:
    """Drop a leading BOM and turn CRLF (and lone CR) line ends into LF."""
    if source.startswith("\ufeff"):
        source = source[1:]
    if "\r" in source:
        source = source.replace("\r\n", "\n").replace("\r", "\n")
    return source


def split_frontmatter(source: str, *, file: str | None = None) -> Frontmatter:
    """Parse the frontmatter of an (already normalised) SKILL.md text.

    Raises `SkillError` naming the file and line for a missing or unterminated frontmatter,
    invalid YAML, duplicate keys, anchors/aliases, tags, or a non-mapping frontmatter.
    """
    first, _sep, rest = source.partition("\n")
    if first.rstrip() != _DELIMITER:
        raise _error(
            "frontmatter-missing",
            "SKILL.md must start with YAML frontmatter: a '---' line, the fields "
            "(name, description, ...), then a closing '---' line",
            file,
            1,
        )
    closing = closing_line(rest, 0)
    # a line starting past the limit before the closing one (or, with none, the last line
    # starting past it): too large, as a look at each line in turn would have stopped there
    if (closing if closing >= 0 else rest.rfind("\n") + 1) > MAX_FRONTMATTER_BYTES:
        raise _too_large(file)
    if closing < 0:
        raise _error(
            "frontmatter-unterminated",
            "the frontmatter is never closed: add a '---' line after the last field",
            file,
            1,
        )
    line_no = rest.count("\n", 0, closing) + 2  # the closing line's, in the file
    yaml_text = rest[:closing]
    if len(yaml_text.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES:
        raise _too_large(file)
    after = rest.find("\n", closing)
    body = "" if after < 0 else rest[after + 1 :]
    data, lines = _load(yaml_text, file)
    return Frontmatter(data=data, lines=lines, body=body, body_line=line_no + 1,
                       text=yaml_text)


def _load(text: str, file: str | None) -> tuple[dict[str, Any], dict[str, int]]:
    """The frontmatter's data and key lines: from the exact reader when it reads `text`
    (the line of the text's first line is 2 in the file), else from YAML."""
    keys: dict[str, int] = {}
    data = read_yaml(text, keys)
    if data is None:
        return _load_failsafe(text, file)
    return data, {key: at + 2 for key, at in keys.items()}


def _too_large(file: str | None) -> SkillError:
    return _error(
        "frontmatter-too-large",
        f"the frontmatter is over {MAX_FRONTMATTER_BYTES // 1024} KiB; keep long text in "
        "the body or in references/",
        file,
        2,
    )


def _error(code: str, message: str, file: str | None, line: int | None) -> SkillError:
    problem = Problem("error", code, message, file, line)
    return SkillError(message, path=file, line=line, problems=[problem])


def _loader_class() -> type[yaml.BaseLoader]:
    import yaml

    class FailsafeLoader(yaml.BaseLoader):
        """BaseLoader that refuses anchors, aliases and explicit tags."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            event: Any = self.peek_event()  # type: ignore[no-untyped-call]
            if isinstance(event, yaml.AliasEvent):
                raise _YamlRefusal("yaml-alias", "aliases (*name) are not allowed", event)
            anchor = getattr(event, "anchor", None)
            if anchor is not None:
                raise _YamlRefusal("yaml-anchor", "anchors (&name) are not allowed", event)
            tag = getattr(event, "tag", None)
            if tag is not None and tag != "!":
                raise _YamlRefusal("yaml-tag", f"explicit tags ({tag}) are not allowed", event)
            return super().compose_node(parent, index)

    return FailsafeLoader


class _YamlRefusal(Exception):
    def __init__(self, code: str, message: str, event: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        mark = getattr(event, "start_mark", None)
        self.line: int | None = None if mark is None else mark.line


#: Deeper nesting than this is left to the pure-Python composer (libyaml's recurses in C).
_MAX_LIBYAML_DEPTH = 64


def _compose_libyaml(text: str) -> Any:
    """The frontmatter's node as libyaml composes it, when PyYAML was built with it: what
    the standard PyYAML wheels give, and what `check` has always accepted (libyaml reads a
    tab inside a value, which the pure-Python scanner refuses). None, so that the
    pure-Python loader runs and reports exactly as it always does, when libyaml is missing
    or the text holds anything to refuse or report: a syntax error, an anchor, an alias, a
    tag, or nesting deeper than `_MAX_LIBYAML_DEPTH` (checked on libyaml's iterative event
    stream first, so nothing deep reaches its recursive composer)."""
    import yaml

    if not getattr(yaml, "__with_libyaml__", False):
        return None
    try:
        depth = 0
        for event in yaml.parse(text, Loader=yaml.CBaseLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                return None
            tag = getattr(event, "tag", None)
            if tag is not None and tag != "!":
                return None
            if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
                depth += 1
                if depth > _MAX_LIBYAML_DEPTH:
                    return None
            elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
                depth -= 1
        return yaml.compose(text, Loader=yaml.CBaseLoader)
    except (yaml.YAMLError, ValueError, UnicodeError):
        return None


def _load_failsafe(text: str, file: str | None) -> tuple[dict[str, Any], dict[str, int]]:
    import yaml

    base = 2  # the frontmatter's first line is line 2 of the file
    composed = _compose_libyaml(text)
    try:
        # the reader checks every character when it is built: a NUL or a lone surrogate
        # raises here, so building it belongs inside the try; a composed node needs the
        # constructor alone (BaseLoader's, as is)
        loader: Any = (yaml.constructor.BaseConstructor() if composed is not None
                       else _loader_class()(text))
    except yaml.YAMLError as exc:
        raise _error("yaml-syntax", f"frontmatter is not valid YAML: {_reader_problem(exc)}",
                     file, _reader_line(exc, text, base)) from None
    try:
        try:
            node = composed if composed is not None else loader.get_single_node()
        except _YamlRefusal as refusal:
            line = None if refusal.line is None else refusal.line + base
            raise _error(refusal.code, f"frontmatter: {refusal.message}", file, line) from None
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            if mark is not None and exc.context_mark is not None and mark.index >= len(
                text.rstrip()
            ):  # "unexpected end": the construct left open is where to look
                mark = exc.context_mark
            line = None if mark is None else mark.line + base
            raise _error("yaml-syntax", f"frontmatter is not valid YAML: {_marked_problem(exc)}",
                         file, line) from None
        except yaml.YAMLError as exc:  # reader errors met while scanning
            raise _error("yaml-syntax", f"frontmatter is not valid YAML: {_reader_problem(exc)}",
                         file, _reader_line(exc, text, base)) from None
        except RecursionError:
            raise _error("yaml-syntax", "frontmatter is not valid YAML: it is nested too deeply",
                         file, base) from None
        if node is None:
            raise _error(
                "frontmatter-not-mapping",
                "the frontmatter is empty; it must hold 'name: ...' and 'description: ...'",
                file,
                1,
            )
        if not isinstance(node, yaml.MappingNode):
            raise _error(
                "frontmatter-not-mapping",
                "the frontmatter must be a mapping of fields ('name: ...'), not a "
                + ("list" if isinstance(node, yaml.SequenceNode) else "single value"),
                file,
                node.start_mark.line + base,
            )
        lines: dict[str, int] = {}
        problems: list[Problem] = []
        _check_duplicates(node, "", lines, problems, file, base)
        if problems:
            raise SkillError(problems[0].message, path=file, line=problems[0].line,
                             problems=problems)
        try:
            data = loader.construct_document(node)
        except RecursionError:  # pragma: no cover - the composer recurses deeper first
            raise _error("yaml-syntax", "frontmatter is not valid YAML: it is nested too deeply",
                         file, base) from None
    finally:
        if composed is None:
            loader.dispose()
    if not isinstance(data, dict):  # pragma: no cover - guarded by the node check
        raise _error("frontmatter-not-mapping", "the frontmatter must be a mapping", file, 1)
    return data, lines


def _marked_problem(exc: Any) -> str:
    """A PyYAML parse error as one phrase: the problem, then its context."""
    what = str(exc.problem or "invalid YAML")
    if what == "mapping values are not allowed here":
        what += " (put a value holding ': ' in quotes)"
    elif exc.context:
        what += f" ({exc.context})"
    return what


def _reader_problem(exc: Any) -> str:
    """A PyYAML reader error (a character YAML refuses) as one phrase."""
    character = getattr(exc, "character", None)
    if isinstance(character, str) and len(character) == 1:
        character = ord(character)
    if isinstance(character, int):
        return f"it holds the character U+{character:04X}, which YAML does not allow"
    return str(exc)


def _reader_line(exc: Any, text: str, base: int) -> int:
    position = getattr(exc, "position", None)
    if not isinstance(position, int):
        return base
    return text.count("\n", 0, position) + base


def _check_duplicates(
    node: Any,
    prefix: str | None,
    lines: dict[str, int],
    problems: list[Problem],
    file: str | None,
    base: int,
    field: str = "",
) -> None:
    """Find duplicate and non-string keys in every mapping, and keys and values that are not
    text (`_check_text`; `field` names the key a value is under, dotted).

    Records the line of each key of this mapping under ``prefix + key`` when ``prefix`` is
    not None: the top level (prefix ``""``) and the keys of ``metadata`` (``"metadata."``).
    """
    import yaml

    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _check_duplicates(item, None, lines, problems, file, base, field)
        return
    if not isinstance(node, yaml.MappingNode):
        if isinstance(node, yaml.ScalarNode):
            _check_text(str(node.value), field, node.start_mark.line + base, problems, file)
        return
    seen: dict[str, int] = {}
    for key_node, value_node in node.value:
        line = key_node.start_mark.line + base
        if not isinstance(key_node, yaml.ScalarNode):
            problems.append(Problem("error", "yaml-key", "frontmatter keys must be plain names",
                                    file, line))
            continue
        key = str(key_node.value)
        if not _check_text(key, f"{field}.{key}" if field else key, line, problems, file):
            continue
        if key == "<<" and not key_node.style:  # plain: None, or "" from libyaml
            # a merge key: readers that merge (PyYAML's safe_load, js-yaml, npm yaml in 1.1
            # mode) take its keys as this mapping's own, where this failsafe reader sees one
            # key named '<<': an `allowed-tools` hidden there is granted by them, not here
            problems.append(Problem(
                "error", "yaml-merge-key", "frontmatter: a YAML merge key ('<<') is not "
                "allowed: readers that merge would take its keys as this mapping's own; write "
                "them out (or quote '<<' if it is meant as a key)", file, line))
            continue
        if key in seen:
            shown = f"{prefix or ''}{key}"
            problems.append(Problem(
                "error", "duplicate-key",
                f"frontmatter key '{shown}' appears twice (lines {seen[key]} and {line}); "
                "keep one", file, line))
            continue
        seen[key] = line
        if prefix is not None:
            lines.setdefault(f"{prefix}{key}", line)
        child = "metadata." if prefix == "" and key == "metadata" else None
        _check_duplicates(value_node, child, lines, problems, file, base,
                          f"{field}.{key}" if field else key)


def _check_text(text: str, where: str, line: int, problems: list[Problem],
                file: str | None) -> bool:
    """Whether a parsed key or value is text (encodable as UTF-8). A YAML escape such as
    ``"\\ud800"`` makes a lone surrogate out of valid UTF-8 source: refused here, with its
    key and line, so that nothing downstream meets a string it cannot encode."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        where = where.encode("utf-8", "backslashreplace").decode("utf-8")  # printable
        problems.append(Problem(
            "error", "yaml-surrogate", f"frontmatter '{where}' holds U+{code:04X}, a lone "
            "surrogate (from a YAML escape), which is not text; write the character itself "
            "or remove the escape", file, line))
        return False
    return True
