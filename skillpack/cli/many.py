"""What a command over many skills makes of --exclude, --ignore, --keep-going and --quiet:
the `Selection` it hands the library, and what it prints of it afterwards.

A skill skipped (``--keep-going``) is listed on stderr with every problem refusing it, or in
``--json`` under ``"skipped"`` (`skipped_json`); anything skipped makes the exit code 1
(`exit_code`). The skills ``--exclude`` left out are counted in one note, unless --quiet.
"""

from __future__ import annotations

from typing import Any

from skillpack.cli.options import chosen, quiet
from skillpack.cli.output import EXIT_FAILED, echo, echo_text, failure_document
from skillpack.packing.selection import Selection

__all__ = ["exit_code", "report_skipped", "selection", "skipped_json", "summary_line", "tail",
           "with_skipped"]


def selection() -> Selection:
    """The running command's `Selection` (its --exclude, --ignore and --keep-going)."""
    return Selection(**chosen())


def skipped_json(chosen: Selection) -> list[dict[str, Any]]:
    """Each skipped skill as ``{"path", "ok": false, "error", "hint", "problems"}``."""
    return [{"path": s.path} | failure_document(s.error) for s in chosen.skipped]


def with_skipped(document: dict[str, Any], chosen: Selection) -> dict[str, Any]:
    """A command's ``--json`` document, with ``"skipped"`` (`skipped_json`) under
    --keep-going; its ``"ok"``, where it has one, false when a skill was skipped (the exit
    code is 1: `exit_code`)."""
    if not chosen.keep_going:
        return document
    failed = {"ok": False} if chosen.skipped and "ok" in document else {}
    return document | failed | {"skipped": skipped_json(chosen)}


def summary_line(chosen: Selection) -> bool:
    """Whether a command that lists what it wrote ends with a line of counts: under
    --quiet, or when a skill was skipped or excluded."""
    return quiet() or bool(chosen.skipped or chosen.excluded)


def report_skipped(chosen: Selection) -> None:
    """On stderr: each skipped skill and its problems (each once), then how many were
    excluded (not under --quiet)."""
    for s in chosen.skipped:
        echo_text(f"skillpack: skipped {s.path}: {s.error.message}", err=True)
        for problem in dict.fromkeys(s.problems):
            echo_text(f"  {problem}", err=True)
    if chosen.excluded and not quiet():
        count = len(chosen.excluded)
        echo(f"skillpack: excluded {count} skill{'s' * (count != 1)} or archive"
             f"{'s' * (count != 1)} (--exclude)", err=True)


def exit_code(chosen: Selection) -> int:
    """1 when anything was skipped, else 0."""
    return EXIT_FAILED if chosen.skipped else 0


def tail(chosen: Selection) -> str:
    """What the final line adds when skills were skipped: ``, 2 skipped``."""
    return f", {len(chosen.skipped)} skipped" if chosen.skipped else ""
