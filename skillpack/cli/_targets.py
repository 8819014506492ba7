"""The options `check`, `pack` and `bundle` share for hosts: ``--target`` and
``--catalog-budget`` (the profiles themselves: `skillpack.packing.targets`)."""

from __future__ import annotations

import click

from skillpack.packing.targets import DEFAULT_TARGET, TARGETS

__all__ = ["CATALOG_BUDGET", "LAYOUT", "TARGET"]

TARGET = click.option(
    "--target", "targets", multiple=True, type=click.Choice(list(TARGETS)),
    help=f"Check against this host's limits too (repeatable; default {DEFAULT_TARGET}: the "
         "spec only). Each problem names its host. See docs/TARGETS.md.")
CATALOG_BUDGET = click.option(
    "--catalog-budget", type=click.IntRange(min=1), metavar="CHARS",
    help="Warn when a skill's description (+ when_to_use) is over CHARS characters: the "
         "per-skill listing budget (claude-code's default: 1,536).")
LAYOUT = click.option(
    "--layout", type=click.Choice(["wrapped", "root"]),
    help="wrapped: one top folder named after the skill; root: SKILL.md at the archive root "
         "(default: what the targets want, wrapped without one).")
