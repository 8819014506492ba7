"""`skillpack export oci|well-known|mcp`, `push`, `pull` and `catalog`: skills in other
formats, in an OCI registry, and offered to an agent.

Each only parses, calls the library (`skillpack.publish`) and prints. Bad input writes
nothing. `--json` prints one JSON document whether the command succeeds or fails. push and
pull need the optional extra ``skillpack[oci]`` (the `oras` client library); without it they
fail (exit 1) saying what to install. Credentials come from the Docker config and are never
printed.
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any

import click

from skillpack._atomic import atomic_write
from skillpack.approve.lock import read_lock
from skillpack.cli.many import (
    exit_code,
    report_skipped,
    selection,
    summary_line,
    tail,
    with_skipped,
)
from skillpack.cli.options import (
    JSON,
    Group,
    command,
    json_failures,
    many,
    out_folder,
    paths,
    quiet,
)
from skillpack.cli.output import DASH, echo, echo_json
from skillpack.errors import SkillpackError
from skillpack.publish.catalog import FORMATS, catalog_entries, render_catalog
from skillpack.publish.export_inputs import artifacts_from_paths, exportable_skills
from skillpack.publish.exports import (
    WELL_KNOWN_DIR,
    base_url_problem,
    export_well_known,
    mcp_skills_list,
)
from skillpack.publish.exports import sha256_digest as exports_sha256
from skillpack.publish.oci import (
    DEFAULT_MAX_SIZE,
    DEFAULT_TIMEOUTS,
    Timeouts,
    parse_ref,
    pull_all,
    push_all,
    write_layout,
)

__all__ = ["DEADLINE", "TIMEOUT", "catalog", "export", "pull_command", "push", "timeouts"]

_PLAIN_HTTP = click.option("--plain-http", is_flag=True,
                           help="HTTP instead of HTTPS (a registry on loopback, tests).")
_FORMAT = click.option(
    "--format", "fmt", type=click.Choice(["skillpack", "toolhive"]), default="skillpack",
    show_default=True, help="skillpack: one artifact per archive or bundle (a zip layer); "
    "toolhive: what `thv skill install` reads, one per skill (an image index, linux/amd64 "
    "and linux/arm64 manifests, a labelled config, a tar+gzip layer).")
class Seconds(click.FloatRange):
    """A number of seconds over 0 and finite: NaN passes every range (each comparison with
    it is false) and turned the deadline off; an infinite timeout no socket can be given."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return seconds


#: ``--timeout`` and ``--deadline``, of every command that talks to a registry or a site
#: (push, pull, install: `timeouts` makes the `Timeouts` of their values).
TIMEOUT = click.option(
    "--timeout", type=Seconds(min=0, min_open=True), default=None, metavar="SECONDS",
    help=f"Wait at most this long to connect to the registry (or site) and for each answer "
         f"[default: {DEFAULT_TIMEOUTS.connect:g} to connect, {DEFAULT_TIMEOUTS.read:g} to "
         "answer].")
DEADLINE = click.option(
    "--deadline", type=Seconds(min=0, min_open=True),
    default=DEFAULT_TIMEOUTS.deadline, show_default=True, metavar="SECONDS",
    help="Give up after this long in all: on the registry (push, pull); on each remote "
         "SOURCE, a site or a registry (install).")


def _refs(value: Any) -> Any:
    """A registry reference (or each of several) that `parse_ref` reads, else misuse (2)."""
    for ref in value if isinstance(value, tuple) else (value,):
        try:
            parse_ref(ref)
        except SkillpackError as err:
            raise click.BadParameter(err.message) from None
    return value


def timeouts(timeout: float | None, deadline: float) -> Timeouts:
    if timeout is None:
        return Timeouts(DEFAULT_TIMEOUTS.connect, DEFAULT_TIMEOUTS.read, deadline)
    return Timeouts(timeout, timeout, deadline)


@click.group(cls=Group)
def export() -> None:
    """Export skills: an OCI image layout, a well-known discovery site, an MCP skills list.

    A PATH is a skill folder, a folder of skills or of archives, a .skill archive or a
    bundle, or an archive made elsewhere.
    """


@export.command("oci")
@paths()
@out_folder("out_dir", "The layout folder to write (must not exist, or be empty).",
            required=True)
@click.option("--tag", default=None, metavar="NAME",
              help="The reference name of the one artifact (default: <name>-<16 hex>).")
@_FORMAT
@JSON
@many
def export_oci(paths: tuple[str, ...], out_dir: str, tag: str | None, fmt: str,
               as_json: bool) -> int:
    """Write an OCI image layout (oci-layout, index.json, blobs/sha256/) to OUT.

    One artifact per skill and per .skill or bundle given; standard tools read it
    (skopeo inspect --raw oci:OUT:NAME).
    """
    chosen = selection()
    artifacts = artifacts_from_paths(paths, selection=chosen, fmt=fmt)
    if tag is not None and len(artifacts) != 1:
        raise click.UsageError(
            f"--tag names one artifact, and there are {len(artifacts)}; leave it out (each "
            "gets <name>-<16 hex>), or bundle the skills and export the bundle")
    refs = write_layout(artifacts, out_dir, ref_names=None if tag is None else [tag])
    by_digest = {digest: ref for ref, digest in refs.items()}
    rows = [{"ref": by_digest[a.manifest_digest], "kind": a.kind, "name": a.name,
             "digest": a.digest, "manifest_digest": a.manifest_digest,
             "layer": a.file_name, "layer_size": len(a.layer)} for a in artifacts]
    if as_json:
        echo_json(with_skipped({"ok": True, "layout": out_dir, "artifacts": rows}, chosen))
        return exit_code(chosen)
    for row in rows if not quiet() else ():
        echo(f"{out_dir}:{row['ref']}  {row['manifest_digest']}  "
             f"({row['kind']} {row['name']} {row['digest']})")
    report_skipped(chosen)
    if summary_line(chosen):
        echo(f"wrote {len(rows)} artifact(s) to {out_dir}" + tail(chosen))
    return exit_code(chosen)


@export.command("well-known")
@paths()
@out_folder("site", "The site folder: SITE/.well-known/agent-skills/ is written (replaced).",
            required=True)
@click.option("--base-url", default=None, metavar="URL",
              help="The published URL of agent-skills/ (default: URLs relative to the index).")
@JSON
@many
def export_well_known_command(paths: tuple[str, ...], site: str, base_url: str | None,
                              as_json: bool) -> int:
    """Write SITE/.well-known/agent-skills/: index.json (discovery 0.2.0) and each skill.

    A skill whose only file is SKILL.md is published as NAME/SKILL.md, any other as
    NAME.zip (SKILL.md at the archive root); each digest is the SHA-256 of those bytes.
    """
    why = None if base_url is None else base_url_problem(base_url)
    if why is not None:
        raise click.UsageError(f"--base-url {base_url!r} {why}")
    chosen = selection()
    skills = exportable_skills(paths, "well-known", chosen)
    entries = export_well_known(skills, site, base_url=base_url)
    folder = os.path.join(site, WELL_KNOWN_DIR)
    rows = []
    for entry in entries:
        relative = f"{entry.name}/SKILL.md" if entry.type == "skill-md" else f"{entry.name}.zip"
        rows.append({**entry.to_dict(), "path": os.path.join(folder, relative)})
    if as_json:
        echo_json(with_skipped({"ok": True, "index": os.path.join(folder, "index.json"),
                                "skills": rows}, chosen))
        return exit_code(chosen)
    for row in rows if not quiet() else ():
        echo(f"{row['path']}  {row['digest']}  ({row['type']})")
    report_skipped(chosen)
    echo(f"{os.path.join(folder, 'index.json')}  {len(rows)} skill(s)" + tail(chosen))
    return exit_code(chosen)


@export.command("mcp")
@paths()
@click.option("-o", "--out", "out_file", default=DASH, metavar="FILE",
              help="Write the result to FILE (default: stdout; '-' is stdout).")
@JSON
@many
def export_mcp(paths: tuple[str, ...], out_file: str, as_json: bool) -> int:
    """Print (or write to FILE) what an MCP server's skills/list returns (SEP-2640).

    Per skill its frontmatter and a {uri, digest, size} entry for every file, each digest
    the SHA-256 of the file's bytes. With --json the result is under "result".
    """
    chosen = selection()
    data = mcp_skills_list(exportable_skills(paths, "mcp", chosen))
    if out_file != DASH:
        with atomic_write(out_file) as handle:
            handle.write(data)
    result = json.loads(data)
    skills = [{"name": s["frontmatter"]["name"], "uri": s["uri"],
               "resources": len(s["resources"])} for s in result["skills"]]
    if out_file == DASH and as_json:
        echo_json(with_skipped({"ok": True, "output": DASH, "skills": skills,
                                "result": result}, chosen))
    elif out_file == DASH:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        report_skipped(chosen)
    elif as_json:
        echo_json(with_skipped({"ok": True, "output": out_file,
                                "sha256": exports_sha256(data), "skills": skills}, chosen))
    else:
        report_skipped(chosen)
        echo(f"{out_file}  {exports_sha256(data)}  {len(skills)} skill(s)" + tail(chosen))
    return exit_code(chosen)


@command("push")
@paths()
@click.argument("ref", callback=lambda ctx, param, value: _refs(value))
@_PLAIN_HTTP
@_FORMAT
@TIMEOUT
@DEADLINE
@JSON
@many
def push(paths: tuple[str, ...], ref: str, plain_http: bool, fmt: str, timeout: float | None,
         deadline: float, as_json: bool) -> int:
    """Push each skill and bundle under PATH to REF (REGISTRY/REPO[:TAG]).

    Without a tag each artifact is tagged <name>-<16 hex> (a bundle bundle-<16 hex>); a tag
    names exactly one artifact. The blobs go first and the manifest last, so a failed push
    leaves no tag. Needs: pip install 'skillpack[oci]'.
    """
    chosen = selection()
    artifacts = artifacts_from_paths(paths, selection=chosen, fmt=fmt)
    if parse_ref(ref).tag is not None and len(artifacts) > 1:  # as export oci --tag
        raise click.UsageError(
            f"a tag names one artifact, and there are {len(artifacts)}; leave it out (each "
            "gets <name>-<16 hex>), or bundle the skills and push the bundle")
    results = push_all(artifacts, ref, plain_http=plain_http,
                       timeouts=timeouts(timeout, deadline))
    rows = [{"ref": r.ref, "manifest_digest": r.manifest_digest, "kind": a.kind,
             "name": a.name, "digest": a.digest, "blobs_uploaded": r.blobs_uploaded}
            for a, r in zip(artifacts, results, strict=True)]
    if as_json:
        echo_json(with_skipped({"ok": True, "pushed": rows}, chosen))
        return exit_code(chosen)
    for row in rows if not quiet() else ():
        echo(f"pushed {row['ref']}  {row['manifest_digest']}  "
             f"({row['kind']} {row['name']} {row['digest']}, "
             f"{row['blobs_uploaded']} blob(s) uploaded)")
    report_skipped(chosen)
    if summary_line(chosen):
        echo(f"pushed {len(rows)} artifact(s) to {ref}" + tail(chosen))
    return exit_code(chosen)


@command("pull")
@click.argument("refs", nargs=-1, required=True,
                callback=lambda ctx, param, value: _refs(value))
@out_folder("out_dir", "Folder to write the archives and bundles to (created if missing).",
            required=True)
@click.option("--lock", "lock_file", type=click.Path(exists=True, dir_okay=False),
              help="Refuse any skill pulled that this lock file does not approve, or "
              "approves with another digest.")
@_PLAIN_HTTP
@click.option("--max-size", type=click.IntRange(min=0), default=DEFAULT_MAX_SIZE,
              show_default=True, metavar="BYTES", help="Refuse a larger layer unread.")
@TIMEOUT
@DEADLINE
@JSON
def pull_command(refs: tuple[str, ...], out_dir: str, lock_file: str | None,
                 plain_http: bool, max_size: int, timeout: float | None, deadline: float,
                 as_json: bool) -> int:
    """Pull each REF (REGISTRY/REPO:TAG or REGISTRY/REPO@sha256:HEX), check it, write it to
    OUT, all or nothing.

    Each manifest and layer must hash to its digest, each layer must be a valid skillpack
    archive or bundle whose digest is the annotation's (and, with --lock, each skill it
    holds approved with its digest; the lock's other skills are not looked for): otherwise
    nothing is written. One session a registry serves every REF. Needs: pip install
    'skillpack[oci]'.
    """
    expect = read_lock(lock_file).digests() if lock_file is not None else None
    got = pull_all(refs, out_dir, plain_http=plain_http, max_size=max_size, expect=expect,
                   timeouts=timeouts(timeout, deadline))
    rows = [{"ref": ref, "manifest_digest": one.manifest_digest, "kind": one.kind,
             "path": one.path, "digest": one.digest,
             "skills": [{"name": name, "digest": digest} for name, digest in one.skills]}
            for ref, one in zip(refs, got, strict=True)]
    if as_json:
        # one REF: its record's fields at the top level too, as pull has always printed
        echo_json({"ok": True, **(rows[0] if len(rows) == 1 else {}), "pulled": rows})
        return 0
    for row in rows:
        echo(f"pulled {row['ref']}  {row['manifest_digest']}")
        echo(f"{row['path']}  {row['digest']}  ({row['kind']}"
             + (f" of {len(row['skills'])} skill(s)" if row["kind"] == "bundle" else "")
             + ")")
    if len(rows) > 1:
        echo(f"pulled {len(rows)} artifact(s) to {out_dir}")
    return 0


@command("catalog")
@paths()
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text: the runtime's catalog block; xml: skills-ref's <available_skills>; "
                   "json.")
@many
def catalog(paths: tuple[str, ...], fmt: str) -> int:
    """Print the available-skills catalog of skill folders, folders of skills or of
    archives, .skill archives and bundles: what an agent's system prompt lists to choose a
    skill from. A skill that cannot be listed (invalid, or a second skill of one name)
    refuses the catalog, every problem listed once; with --keep-going it is left out and
    listed on stderr (exit 1)."""
    json_failures(click.get_current_context(), fmt == "json")
    chosen = selection()
    entries = catalog_entries(paths, selection=chosen)
    text = render_catalog(entries, fmt)  # type: ignore[arg-type]
    if fmt == "json" and chosen.keep_going:
        text = json.dumps(with_skipped(json.loads(text), chosen), indent=2,
                          ensure_ascii=False) + "\n"
    click.echo(text, nl=False)
    report_skipped(chosen)
    return exit_code(chosen)
