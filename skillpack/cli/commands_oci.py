"""`skillpack push` and `skillpack pull`: skills and bundles in an OCI registry.

Both go through `skillpack.publish.oci` (the `oras` client library, the optional extra
``skillpack[oci]``); without it they fail (exit 1) saying what to install. Credentials come
from the Docker config and are never printed. `pull` writes nothing unless every check
passed. `--json` prints one JSON document whether the command succeeds or fails.
"""

from __future__ import annotations

import click

from skillpack.approve.lock import read_lock
from skillpack.cli._common import echo_json
from skillpack.cli._json_errors import json_errors
from skillpack.publish.oci import DEFAULT_MAX_SIZE, artifacts_from_paths, pull, push_all

__all__ = ["pull_command", "push_command"]

_EXISTING = click.Path(exists=True, file_okay=True, dir_okay=True)
_JSON = click.option("--json", "as_json", is_flag=True,
                     help="Print one JSON document (on failure too).")
_PLAIN_HTTP = click.option("--plain-http", is_flag=True,
                           help="HTTP instead of HTTPS (a registry on loopback, tests).")


@click.command("push")
@click.argument("paths", nargs=-1, required=True, type=_EXISTING)
@click.argument("ref")
@_PLAIN_HTTP
@_JSON
def push_command(paths: tuple[str, ...], ref: str, plain_http: bool, as_json: bool) -> None:
    """Push each skill and bundle under PATH to REF (REGISTRY/REPO[:TAG]).

    Without a tag each artifact is tagged <name>-<16 hex> (a bundle bundle-<16 hex>); a tag
    names exactly one artifact. The blobs go first and the manifest last, so a failed push
    leaves no tag. Needs: pip install 'skillpack[oci]'.
    """
    with json_errors(as_json):
        artifacts = artifacts_from_paths(paths)
        results = push_all(artifacts, ref, plain_http=plain_http)
    rows = [{"ref": r.ref, "manifest_digest": r.manifest_digest, "kind": a.kind,
             "name": a.name, "digest": a.digest, "blobs_uploaded": r.blobs_uploaded}
            for a, r in zip(artifacts, results, strict=True)]
    if as_json:
        echo_json({"ok": True, "pushed": rows})
        return
    for row in rows:
        click.echo(f"pushed {row['ref']}  {row['manifest_digest']}  "
                   f"({row['kind']} {row['name']} {row['digest']}, "
                   f"{row['blobs_uploaded']} blob(s) uploaded)")


@click.command("pull")
@click.argument("ref")
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder to write the archive or bundle to (created if missing).")
@click.option("--lock", "lock_file", type=click.Path(exists=True, dir_okay=False),
              help="Refuse any skill this lock file does not approve (and any it lacks).")
@_PLAIN_HTTP
@click.option("--max-size", type=click.IntRange(min=0), default=DEFAULT_MAX_SIZE,
              show_default=True, metavar="BYTES", help="Refuse a larger layer unread.")
@_JSON
def pull_command(ref: str, out_dir: str, lock_file: str | None, plain_http: bool,
                 max_size: int, as_json: bool) -> None:
    """Pull REF (REGISTRY/REPO:TAG or REGISTRY/REPO@sha256:HEX), check it, write it to OUT.

    The manifest and the layer must hash to their digests, the layer must be a valid
    skillpack archive or bundle whose digest is the annotation's (and, with --lock, the
    approved one): otherwise nothing is written. Needs: pip install 'skillpack[oci]'.
    """
    with json_errors(as_json):
        expect = read_lock(lock_file).digests() if lock_file is not None else None
        got = pull(ref, out_dir, plain_http=plain_http, max_size=max_size, expect=expect)
    skills = [{"name": name, "digest": digest} for name, digest in got.skills]
    if as_json:
        echo_json({"ok": True, "ref": ref, "manifest_digest": got.manifest_digest,
                   "kind": got.kind, "path": got.path, "digest": got.digest,
                   "skills": skills})
        return
    click.echo(f"pulled {ref}  {got.manifest_digest}")
    click.echo(f"{got.path}  {got.digest}  ({got.kind}"
               + (f" of {len(skills)} skill(s)" if got.kind == "bundle" else "") + ")")
