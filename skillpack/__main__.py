"""``python -m skillpack``: the same process as the `skillpack` console script (`--version`
answered without the command line); and ``skillpack-pre-commit-check``, the entry of the
pre-commit hook ``skillpack-check`` (see .pre-commit-hooks.yaml and
`skillpack.cli.app.precommit_check`).
"""

from __future__ import annotations

from collections.abc import Sequence

from skillpack._launch import run

__all__ = ["precommit_check"]


def precommit_check(argv: Sequence[str] | None = None) -> int:
    """``skillpack check`` of the skills holding the files in `argv` (the pre-commit hook)."""
    # start-up: `python -m skillpack --version` answers without the command line (_launch)
    from skillpack.cli.app import precommit_check as check

    return check(argv)


if __name__ == "__main__":
    run()
