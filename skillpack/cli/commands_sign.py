"""`skillpack sign` (a detached DSSE signature of a lock) and `skillpack review` (what changed
since the approval, as a page an approver reads)."""

from __future__ import annotations

import click

from skillpack._atomic import atomic_write
from skillpack.approve.approval import (
    archive_sha256s,
    key_password,
    review_views,
    signature_path,
)
from skillpack.approve.lock import read_lock
from skillpack.approve.review import SkillView, compare, render_html, render_markdown
from skillpack.approve.signing import sign_statement, statement_for_lock
from skillpack.cli._common import errors_exit

__all__ = ["review", "sign"]

_EXISTING = click.Path(exists=True, file_okay=True, dir_okay=True)


@click.command()
@click.argument("lock_file", metavar="LOCK", type=click.Path(exists=True, dir_okay=False))
@click.option("--key", "key", required=True, type=click.Path(exists=True, dir_okay=False),
              help="The approver's Ed25519 private key (PEM PKCS8 or OpenSSH).")
@click.option("--key-password-env", "password_env", metavar="NAME",
              help="The environment variable holding the key's password, if encrypted.")
@click.option("-o", "--out", "dest", type=click.Path(dir_okay=False),
              help="The signature to write (default: LOCK.intoto.json).")
@click.option("--archive", "archives", multiple=True,
              type=click.Path(exists=True, dir_okay=False),
              help="A .skill archive of a locked skill: its SHA-256 joins the skill's subject "
                   "(repeatable).")
def sign(lock_file: str, key: str, password_env: str | None, dest: str | None,
         archives: tuple[str, ...]) -> None:
    """Sign LOCK: write a DSSE envelope holding an in-toto statement of what it approves.

    The lock must be format 1.1 (it records each skill's tools). Nothing is written when the
    lock, the key or an archive is refused (exit 1).
    """
    out = dest or signature_path(lock_file)
    with errors_exit():
        lock = read_lock(lock_file)
        digests = archive_sha256s(archives, lock)
        envelope = sign_statement(statement_for_lock(lock, digests), key,
                                  password=key_password(password_env))
        with atomic_write(out) as handle:
            handle.write(envelope)
    click.echo(f"signed {len(lock.skills)} skill(s) of {lock_file} in {out}")


@click.command()
@click.argument("paths", nargs=-1, required=True, type=_EXISTING)
@click.option("--lock", "lock_file", required=True,
              type=click.Path(exists=True, dir_okay=False),
              help="The approved lock to compare with.")
@click.option("-o", "--out", "dest", required=True, type=click.Path(dir_okay=False,
                                                                    allow_dash=True),
              help="The page to write (atomically), or - for standard output.")
@click.option("--format", "kind", type=click.Choice(["html", "md"]), default="html",
              show_default=True, help="A static HTML page, or Markdown for a pull request.")
def review(paths: tuple[str, ...], lock_file: str, dest: str, kind: str) -> None:
    """Show, per skill at PATH, what changed since the approval in --lock: unchanged,
    changed, new or gone; files, programs, tools and run templates, allowed-tools, the
    description, and the secret and lint findings.

    A skill that `verify` would refuse is shown with its problems as findings. Exit 0 when
    the page was written, 1 when the lock or a path cannot be read (nothing written).
    """
    with errors_exit():
        lock = read_lock(lock_file)
        approved = {n: SkillView.from_lock_entry(n, e) for n, e in lock.skills.items()}
        changes = compare(approved, review_views(paths))
        render = render_html if kind == "html" else render_markdown
        page = render(changes, lock=lock_file).encode("utf-8")
        if dest == "-":
            click.echo(page.decode("utf-8"), nl=False)
        else:
            with atomic_write(dest) as handle:
                handle.write(page)
    if dest != "-":
        counts = {s: sum(1 for c in changes if c.status == s)
                  for s in ("changed", "new", "gone", "unchanged")}
        click.echo(f"reviewed {len(changes)} skill(s) in {dest}: "
                   + ", ".join(f"{n} {s}" for s, n in counts.items()))

