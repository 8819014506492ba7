"""The one exception tree of skillpack, and the `Problem` record every check reports.

Every error skillpack raises derives from :class:`SkillpackError` and also from the builtin a
caller would naturally catch (``ValueError`` for bad input, ``LookupError`` for a missing
resource, ``OSError`` for a failed write). An error carries the path it is about, the line
where there is one, and a hint saying what to do. Checks collect every problem of a skill
first and raise once, with all of them in ``.problems``.

This module imports the standard library only: the runtime imports it, so it imports
neither `typing` nor `dataclasses` at run time (`Problem` is a :class:`skillpack._record.Record`,
which behaves as a frozen dataclass; see that module for the measured cost).
"""

from __future__ import annotations

import os

from skillpack._record import Record

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    from typing import Any, Literal, TypeAlias

    Severity: TypeAlias = Literal["error", "warning", "info"]

__all__ = [
    "ArchiveError",
    "ArgumentError",
    "FormatVersionError",
    "IntegrityError",
    "MissingPathError",
    "NoSkillError",
    "Problem",
    "RefusedError",
    "ResourceError",
    "SkillError",
    "SkillpackError",
    "WriteError",
]


class Problem(Record):
    """One finding about a skill: where it is, how bad it is, and what is wrong.

    ``code`` is stable (``name-mismatch``, ``symlink``, ``secret``...) so that tools can match on
    it; ``message`` is worded so that it can be shown to a person or fed back to a model.
    ``file`` is the file the problem is in (or the offending path of a walk refusal), ``line``
    its 1-based line where one applies.
    """

    severity: Severity
    code: str
    message: str
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = self.file or "<skill>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.severity}: [{self.code}] {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "file": self.file,
            "line": self.line,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Problem:
        severity = data["severity"]
        if severity not in ("error", "warning"):
            raise ValueError(f"unknown severity {severity!r}")
        return cls(
            severity=severity,
            code=str(data["code"]),
            message=str(data["message"]),
            file=data.get("file"),
            line=data.get("line"),
        )


class SkillpackError(Exception):
    """Root of every error skillpack raises.

    ``path`` is the file or folder concerned, ``line`` the 1-based line where one applies,
    ``hint`` what the user can do about it, ``problems`` every finding when several were
    collected before raising. ``code`` is the stable code of an error that carries no
    problem of its own (`as_problems`), by its kind.
    """

    code = "error"

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        hint: str | None = None,
        problems: tuple[Problem, ...] | list[Problem] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.hint = hint
        self.problems: tuple[Problem, ...] = tuple(problems)

    def __str__(self) -> str:
        text = self.message
        if self.path is not None:
            where = self.path if self.line is None else f"{self.path}:{self.line}"
            text = f"{where}: {text}"
        if self.hint:
            text = f"{text} ({self.hint})"
        return text

    def located(self) -> tuple[Problem, ...]:
        """The problems, each with its file as a person finds it (what the command line
        prints and `skillpack check` reports): one that names no file is about the error's
        own path (an archive refused whole), and is shown there."""
        if self.path is None or all(p.file is not None for p in self.problems):
            return self.problems
        return tuple(p if p.file is not None else
                     Problem(p.severity, p.code, p.message, self.path, p.line)
                     for p in self.problems)

    def as_problems(self, path: str | None = None) -> tuple[Problem, ...]:
        """`located`, or, for an error that carries no problem, itself as one (its
        ``code``, at its path, else at `path`): what every command lists for it."""
        return self.located() or (
            Problem("error", self.code, self.message, self.path or path, self.line),)


class SkillError(SkillpackError, ValueError):
    """A SKILL.md, a tool fence, or a model's tool call is invalid.

    The message is worded so that it can be fed back to a model as it is.
    """

    code = "invalid-skill"


class RefusedError(SkillpackError, ValueError):
    """A skill's file set was refused (symlink, fifo, secret, escaping include...).

    ``problems`` lists every refused path of the skill, each with its reason; a problem's
    ``file`` is relative to the skill folder, ``path`` (`located` joins them), unless
    ``joined`` says the files are already as a person finds them (``ARCHIVE!MEMBER``).
    """

    code = "refused"

    joined: bool = False

    def located(self) -> tuple[Problem, ...]:
        """The problems with each relative ``file`` joined to the skill folder (``path``):
        ``notes/.env``, not ``.env``, so that a refusal of several skills says whose."""
        root = self.path
        if root is None or self.joined:
            return super().located()
        return tuple(
            Problem(p.severity, p.code, p.message, os.path.join(root, p.file), p.line)
            if p.file is not None and not os.path.isabs(p.file)
            else p if p.file is not None else Problem(p.severity, p.code, p.message, root, p.line)
            for p in self.problems)


class ArchiveError(SkillpackError, ValueError):
    """A `.skill` archive or a bundle is malformed or breaks a promise of SPEC section 3.
    A problem of one of its members is shown as ``ARCHIVE!MEMBER`` (`located`)."""

    code = "archive"

    def located(self) -> tuple[Problem, ...]:
        root = self.path
        if root is None or root.startswith("<"):  # bytes with no file: members as they are
            return super().located()
        return tuple(
            Problem(p.severity, p.code, p.message,
                    root if p.file is None else p.file if "!" in p.file or p.file == root
                    or p.file.startswith("<") else f"{root}!{p.file}", p.line)
            for p in self.problems)


class FormatVersionError(ArchiveError):
    """An archive, bundle or lock file is of a format version this skillpack cannot read."""

    code = "format-version"


class IntegrityError(SkillpackError, ValueError):
    """Bytes do not hash to what was recorded or pinned: a digest or file hash mismatch."""

    code = "integrity"


class ResourceError(SkillpackError, LookupError):
    """A path was asked of a skill that does not carry it (or that no skill could carry)."""

    code = "resource"


class WriteError(SkillpackError, OSError):
    """An output (archive, bundle, lock file) could not be written; nothing was left behind."""

    code = "write"


class ArgumentError(SkillpackError, TypeError):
    """A call was given an argument of the wrong type: a tool name that is not a string, a
    command that is not a list of strings, one name where a list of names is expected."""


class MissingPathError(SkillpackError, FileNotFoundError):
    """A path given to skillpack does not exist (``errno`` is ENOENT, ``filename`` the path)."""

    def __init__(self, message: str, *, path: str, hint: str | None = None) -> None:
        super().__init__(message, path=path, hint=hint)
        self.errno = 2  # ENOENT (errno not imported: the runtime imports this module)
        self.strerror = message
        self.filename = path


class NoSkillError(SkillpackError, LookupError):
    """A PATH holds no skill: no SKILL.md, no archive, where the error's hint says what was
    looked for (`skillpack.source.classify`)."""
