"""The programs a skill's text mentions, as `inspect` and `programs` print them."""

from __future__ import annotations

from skillpack.skillmd.mentions import Mention

__all__ = ["mention_lines"]


def mention_lines(mentions: list[Mention]) -> list[str]:
    """One line a mentioned program and kind, in order of first mention: ``pandoc  mentioned
    in SKILL.md:12, 40`` or ``python  scripts: a.py, b.py  mentioned in SKILL.md:3``."""
    grouped: dict[tuple[str, str], tuple[list[int], list[str]]] = {}
    for m in mentions:
        lines, scripts = grouped.setdefault((m.program, m.kind), ([], []))
        lines.append(m.line)
        if m.script and m.script not in scripts:
            scripts.append(m.script)
    out = []
    for (program, kind), (lines, scripts) in grouped.items():
        at = ", ".join(str(n) for n in dict.fromkeys(lines))
        where = (f"runs at load in claude-code (SKILL.md:{at})" if kind == "runs-at-load"
                 else f"mentioned in SKILL.md:{at}")
        runs = f"  scripts: {', '.join(scripts)}" if scripts else ""
        out.append(f"{program}{runs}  {where}")
    return out
