"""`skillpack compile` and `skillpack resolve`: the model-facing layer from the command line."""

from __future__ import annotations

from typing import BinaryIO

import click

from skillpack.cli.options import EXISTING, command
from skillpack.cli.output import echo, echo_json, echo_text
from skillpack.errors import SkillError
from skillpack.model.calls import compile, resolve
from skillpack.packing.verify import one_skill

__all__ = ["MAX_ANSWER", "compile_command", "resolve_command"]

_SKILL = click.argument("path", type=EXISTING)
#: The longest answer `resolve` reads: far more than any model writes in one turn.
MAX_ANSWER = 16 << 20


@command("compile")
@_SKILL
def compile_command(path: str) -> int:
    """Print the system text for a skill: its prose, then how to call its tools.

    PATH is a skill folder, its SKILL.md, or an archive of one skill. Exit 1 when the
    SKILL.md cannot be parsed.
    """
    click.echo(compile(one_skill(path)), nl=False)
    return 0


def _failed(message: str) -> int:
    echo_text(f"skillpack: {message}", err=True)
    return 1


@command("resolve")
@_SKILL
@click.option("--answer", "answer", type=click.File("rb"), default="-", show_default=True,
              help="File holding the model's answer ('-' reads stdin).")
def resolve_command(path: str, answer: BinaryIO) -> int:
    """Read a model's answer and print the tool call it makes, as JSON with its argv.

    The answer is model text (a JSON call, bare or in a ```json block) or a structured call
    (Anthropic tool_use, OpenAI function call). Nothing is run. Exit 0 with the call on
    stdout; exit 1 with the message for the model on stdout when the call is refused; exit 1
    when the answer holds no call or the SKILL.md cannot be parsed.
    """
    skill = one_skill(path)
    data = answer.read(MAX_ANSWER + 1)  # never read without bound (stdin may not end)
    if len(data) > MAX_ANSWER:
        return _failed(f"the answer is over {MAX_ANSWER >> 20} MiB; a model's answer is far "
                       "shorter")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _failed(f"the answer is not valid UTF-8 (byte {exc.start})")
    try:
        call = resolve(skill, text)
    except SkillError as err:
        echo(err.message)
        return 1
    if call is None:
        return _failed("the answer holds no tool call")
    echo_json(call.to_dict())
    return 0
