"""Notes for a person, not errors: what the library chose to leave alone and why.

Discovery notes each folder it did not search (``node_modules/``, a virtualenv, version
control); `pack` and `bundle` note their own output left out of a skill. A note never
changes a result (the same facts are in the return values: `Discovery.skipped`,
`FileSet.left_out`). By default nobody listens and nothing is said; the command line
listens and prints each note on stderr as ``skillpack: <note>``.

(Not the `logging` module: a listener is all this needs, with no level, handler or format
to configure, and a library user who configures logging gets no surprise output.)
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Listener", "listen", "note", "unlisten"]

Listener = Callable[[str], None]
_LISTENERS: dict[Listener, None] = {}  # ordered, and adding one twice keeps one


def listen(listener: Listener) -> None:
    """Call `listener` with every note from now on (adding the same one again is a no-op)."""
    _LISTENERS[listener] = None


def unlisten(listener: Listener) -> None:
    """Stop calling `listener` (one that was not listening is ignored)."""
    _LISTENERS.pop(listener, None)


def note(message: str) -> None:
    """Pass `message` to every listener."""
    for listener in list(_LISTENERS):
        listener(message)
