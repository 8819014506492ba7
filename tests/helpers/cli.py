"""``skillpack ARGS`` run in process, as a user runs it, and what a command wrote."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from skillpack.cli import main


def cli(*args: object, input: str | bytes | None = None) -> Result:
    """Run ``skillpack ARGS`` in process (``input`` on stdin); an exception other than an exit
    is a defect, and so is a traceback in the output."""
    result = CliRunner().invoke(main, [str(a) for a in args], input=input)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"skillpack {args} raised instead of exiting") from result.exception
    assert "Traceback" not in result.output
    return result


def only_archive(folder: Path) -> Path:
    """The one ``.skill`` archive in ``folder``."""
    [archive] = sorted(folder.glob("*.skill"))
    return archive
