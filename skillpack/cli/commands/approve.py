"""`skillpack lock` (pin what is approved), `skillpack sign` (a detached DSSE signature of a
lock) and `skillpack review` (what changed since the approval, as a page an approver reads)."""

from __future__ import annotations

import click

from skillpack._atomic import AtomicBatch, atomic_write
from skillpack.approve.approval import (
    archive_sha256s,
    key_password,
    lock_entries,
    review_changes,
    signature_path,
)
from skillpack.approve.lock import make_lock, read_lock, write_lock
from skillpack.approve.review import render_html, render_markdown
from skillpack.approve.signing import sign_statement, statement_for_lock
from skillpack.cli.many import exit_code, report_skipped, selection, tail
from skillpack.cli.options import EXISTING, command, many, out_file, paths
from skillpack.cli.output import DASH, echo, write_to_stdout
from skillpack.errors import SkillpackError
from skillpack.install.folders import lock_answer, require_approved
from skillpack.packing.selection import Selection

__all__ = ["lock", "review", "sign"]

_PASSWORD_ENV = click.option("--key-password-env", "password_env", metavar="NAME",
                             help="The environment variable holding the key's password, if "
                                  "encrypted.")


@command()
@paths()
@out_file("The lock file to write (atomically), e.g. skills.lock; - for stdout.",
          required=True)
@click.option("--sign", "key", type=click.Path(exists=True, dir_okay=False),
              help="Also sign it with this Ed25519 private key: OUT.intoto.json, written "
                   "with the lock, both or neither.")
@_PASSWORD_ENV
@many
def lock(paths: tuple[str, ...], dest: str, key: str | None, password_env: str | None) -> int:
    """Pin each skill's digest, files, programs and tools (format 1.1) in a lock file an
    approver can diff, with the SHA-256 of each skill's .skill archive (computed, never
    written); with --sign, sign it in the same step (each subject: that SHA-256). With
    --keep-going a skill that does not verify is left out of the lock and listed (exit 1)."""
    if dest == DASH and key is not None:
        raise click.UsageError("--sign writes the signature beside the lock: give -o a file, "
                               "not -")
    chosen = selection()
    found = lock_entries(paths, selection=chosen)
    if dest == DASH:
        pinned = write_to_stdout(lambda path: write_lock(found.entries, path), "skills.lock")
    elif key is None:
        pinned = write_lock(found.entries, dest)
    else:
        pinned = make_lock(found.entries)
        envelope = sign_statement(statement_for_lock(pinned, found.archives), key,
                                  password=key_password(password_env))
        with AtomicBatch(sync_threads=1) as batch:
            with batch.write(dest) as handle:
                handle.write(pinned.to_bytes())
            with batch.write(signature_path(dest)) as handle:
                handle.write(envelope)
    report_skipped(chosen)
    echo(f"locked {len(pinned.skills)} skill(s) in {'stdout' if dest == DASH else dest}"
         + tail(chosen), err=dest == DASH)
    if key is not None:
        echo(f"signed it in {signature_path(dest)}")
    return exit_code(chosen)


@command()
@click.argument("lock_file", metavar="LOCK", type=click.Path(exists=True, dir_okay=False))
@click.argument("targets", metavar="[PATH]...", nargs=-1, type=EXISTING)
@click.option("--key", "key", required=True, type=click.Path(exists=True, dir_okay=False),
              help="The approver's Ed25519 private key (PEM PKCS8 or OpenSSH).")
@_PASSWORD_ENV
@out_file("The signature to write (default: LOCK.intoto.json).")
@click.option("--archive", "archives", multiple=True, type=EXISTING,
              help="A .skill archive of a locked skill, or a folder of them: its SHA-256 is "
                   "the skill's subject digest, instead of the one the lock records "
                   "(repeatable).")
def sign(lock_file: str, targets: tuple[str, ...], key: str, password_env: str | None,
         dest: str | None, archives: tuple[str, ...]) -> int:
    """Sign LOCK: write a DSSE envelope holding an in-toto statement of what it approves.

    With PATHs (the skills, their archives or bundle), the lock is first verified against
    them as `verify --lock LOCK PATH...` verifies it, every field of each entry (the archive
    SHA-256 the statement's subject carries among them): any difference refuses it. The
    lock must be format 1.1 (it records each skill's tools). Nothing is written when the
    lock, the skills, the key or an archive is refused (exit 1).
    """
    out = dest or signature_path(lock_file)
    pinned = read_lock(lock_file)
    if targets:
        require_approved(targets, pinned, source=lock_file)
    digests = archive_sha256s(archives, pinned)
    envelope = sign_statement(statement_for_lock(pinned, digests), key,
                              password=key_password(password_env))
    with atomic_write(out) as handle:
        handle.write(envelope)
    echo(f"signed {len(pinned.skills)} skill(s) of {lock_file} in {out}")
    return 0


@command()
@paths()
@click.option("--lock", "lock_file", required=True,
              type=click.Path(exists=True, dir_okay=False),
              help="The approved lock to compare with.")
@click.option("--base", "bases", multiple=True, type=EXISTING,
              help="Where the approved skills can be read (a checkout of the approved "
                   "revision, their archives): each changed file's line diff against the "
                   "approved text, used only where it has the lock's BLAKE3 (repeatable).")
@click.option("-o", "--out", "dest", required=True,
              type=click.Path(dir_okay=False, allow_dash=True),
              help="The page to write (atomically), or - for standard output.")
@click.option("--format", "kind", type=click.Choice(["html", "md"]), default="html",
              show_default=True, help="A static HTML page, or Markdown for a pull request.")
@many
def review(paths: tuple[str, ...], lock_file: str, bases: tuple[str, ...], dest: str,
           kind: str) -> int:
    """Show, per skill at PATH, what changed since the approval in --lock: unchanged,
    changed, new or gone, or refused; each changed text file's line diff (with --base), a
    new skill's files in full, programs, what SKILL.md runs at load or mentions, tools and
    run templates, allowed-tools, the description, and the findings.

    A skill that `verify` would refuse is shown as refused, with its problems. Exit 0 when
    the page was written, 1 when the lock or a path cannot be read (nothing written).
    """
    pinned = read_lock(lock_file)
    chosen = selection()
    passed: list[tuple[str, SkillpackError]] = []
    # what `verify --lock` says of the same paths (its --exclude too): one verdict
    verdicts = lock_answer(paths, pinned, selection=Selection(chosen.exclude, base=chosen.base))
    changes = review_changes(paths, pinned, bases, selection=chosen, passed_over=passed,
                             verdicts=verdicts)
    for where, err in passed:
        echo(f"skillpack: note: --base {where} cannot be read ({err.message}); its files are "
             "shown without a line diff", err=True)
    render = render_html if kind == "html" else render_markdown
    page = render(changes, lock=lock_file)
    if dest == DASH:
        click.echo(page, nl=False)
        report_skipped(chosen)
        return exit_code(chosen)
    with atomic_write(dest) as handle:
        handle.write(page.encode("utf-8"))
    counts = {s: sum(1 for c in changes if c.status == s)
              for s in ("changed", "new", "gone", "unchanged")}
    refused = sum(1 for c in changes if c.refused)
    report_skipped(chosen)
    echo(f"reviewed {len(changes)} skill(s) in {dest}: "
         + ", ".join(f"{n} {s}" for s, n in counts.items())
         + (f"; {refused} refused" if refused else "") + tail(chosen))
    return exit_code(chosen)
