"""`skillpack new`, `unpack` and `tools`: writing a skill, bringing one in, and offering its
tools to a model's API.

With ``--json`` (`tools` prints JSON always) a command prints one JSON document whether it
succeeds or fails: on failure ``{"ok": false, "error": ..., "problems": [...]}`` on stdout,
with the same exit code as without ``--json``.
"""

from __future__ import annotations

import re
from typing import Any

import click

from skillpack.cli.options import EXISTING, JSON, command, json_failures, out_folder
from skillpack.cli.output import echo, echo_json
from skillpack.content.inflate import DEFAULT_CAPS, Caps
from skillpack.errors import SkillpackError
from skillpack.model.calls import STYLES, tool_definitions
from skillpack.packing.verify import one_skill, verify_bytes
from skillpack.source.classify import read_input
from skillpack.source.foreign import read_foreign, unpack
from skillpack.source.records import digest_skill
from skillpack.source.scaffold import new_skill

__all__ = ["new", "tools", "unpack_command"]

_SIZE = re.compile(r"\s*(\d+)\s*(|k|kb|kib|m|mb|mib|g|gb|gib)\s*", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


class _Size(click.ParamType[int]):
    """A byte count: 1048576, 512KiB, 64MiB, 2GiB (K, M, G are powers of 1024)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        match = _SIZE.fullmatch(str(value))
        if match is None or int(match.group(1)) < 1:
            self.fail(f"{value!r} is not a positive size such as 1048576, 512KiB or 2GiB",
                      param, ctx)
        return int(match.group(1)) * _UNITS[match.group(2)[:1].lower()]


def _positive(ctx: click.Context, param: click.Parameter, value: int) -> int:
    if value < 1:
        raise click.BadParameter("must be a positive integer")
    return value


@command("unpack")
@click.argument("archive", type=click.Path(exists=True, dir_okay=False))
@out_folder("out_dir", "Folder to write the skill folder NAME/ into (created if missing).",
            default=".", show_default=True)
@click.option("--max-total", type=_Size(), default=DEFAULT_CAPS.total, show_default=True,
              help="Refuse an archive that inflates to more bytes than this.")
@click.option("--max-members", type=int, default=DEFAULT_CAPS.members, show_default=True,
              callback=_positive, help="Refuse an archive listing more entries than this.")
@click.option("--max-ratio", type=int, default=DEFAULT_CAPS.ratio, show_default=True,
              callback=_positive,
              help="Refuse an archive that inflates to more than this many bytes per byte.")
@JSON
def unpack_command(archive: str, out_dir: str, max_total: int, max_members: int,
                   max_ratio: int, as_json: bool) -> int:
    """Unpack a skill archive into OUT/NAME/: a .skill or .zip (Anthropic's packager, a zip
    with SKILL.md at its root, or skillpack's own), a .tar or .tar.gz.

    Everything is checked before anything is written: escaping or absolute names, links,
    devices, duplicate and case/NFC twins, encrypted members, and the caps on inflated
    size, entry count and ratio (checked while inflating). A skillpack archive is verified
    completely first. An existing OUT/NAME/ (other than an empty folder) is refused.
    """
    caps = Caps(total=max_total, members=max_members, ratio=max_ratio)
    data = read_input(archive)
    if read_foreign(data, caps=caps, source=archive).kind == "skillpack":
        verify_bytes(data, source=archive)  # ours: every promise checked, not only names
    target, skill = unpack(data, out_dir, caps=caps, source=archive)
    digest: str | None = None
    note: str | None = None
    try:
        digest = digest_skill(target)[1]
    except SkillpackError as err:  # unpacked as it was made; `check` says what to fix
        note = str(err)
    if as_json:
        echo_json({"ok": True, "name": skill.name, "path": str(target), "digest": digest,
                   "archive": archive} | skill.to_dict() | ({"note": note} if note else {}))
        return 0
    echo(f"unpacked {skill.name} ({len(skill.files)} file(s)) into {target}"
         + (f"  {digest}" if digest else ""))
    for name in skill.left_out:
        echo(f"  left out: {name}")
    if note:
        echo(f"skillpack: note: it does not pack as it is: {note}", err=True)
    return 0


@command("tools")
@click.argument("path", type=EXISTING)
@click.option("--format", "style", type=click.Choice(STYLES), default="anthropic",
              show_default=True, help="The tool-definition format of the model's API.")
def tools(path: str, style: str) -> int:
    """Print a skill's tools as native tool definitions (a JSON list; [] when it declares
    none). PATH is a skill folder, its SKILL.md, or an archive of one skill."""
    json_failures(click.get_current_context())
    echo_json(tool_definitions(one_skill(path), style))
    return 0


@command("new")
@click.argument("name")
@click.option("--hard", is_flag=True, help="A hard skill: one that declares a tool.")
@out_folder("parent", "The folder to write NAME/ into.", default=".", show_default=True)
@JSON
def new(name: str, hard: bool, parent: str, as_json: bool) -> int:
    """Write a new skill, PARENT/NAME/, that passes `skillpack check` (with --hard, one that
    declares a tool and carries the script it runs). An existing NAME/ is never touched."""
    target = new_skill(name, parent, hard=hard)
    if as_json:
        echo_json({"ok": True, "name": name, "path": str(target), "hard": hard})
        return 0
    echo(f"wrote {target}/: edit its SKILL.md, then run `skillpack check {target}`")
    return 0
