"""The catalog text a bundle gives a model (``Bundle.catalog_text``): both sides build it.

The runtime prints it for a loaded bundle; the build side measures it before any bundle is
written (`skillpack check --target`/``--catalog-budget``, `skillpack bundle`). Standard
library only, nothing imported: the runtime uses it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the runtime's cold start imports this
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["catalog_line", "catalog_of"]


def catalog_line(name: str, description: str) -> str:
    """One skill's line of the catalog: ``- <name>: <description, whitespace folded>``."""
    # Every character str.split() splits on but the space is unprintable: a printable
    # description with no double, leading or trailing space is already folded.
    if not (description.isprintable() and "  " not in description
            and description[:1] != " " and description[-1:] != " "):
        description = " ".join(description.split())
    return f"- {name}: {description}"


def catalog_of(skills: Iterable[tuple[str, str]], *, empty: str = "") -> str:
    """What `Bundle.catalog_text` gives for these (name, description) pairs, in this order
    (``empty`` is the line shown when there are none): the build side measures a catalog
    with it before any bundle is written (`skillpack check`, `skillpack bundle`)."""
    lines = ["## Available skills", ""]
    lines.extend(catalog_line(name, description) for name, description in skills)
    if len(lines) == 2 and empty:
        lines.append(empty)
    return "\n".join(lines) + "\n"
