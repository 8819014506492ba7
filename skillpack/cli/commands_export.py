"""`skillpack export oci`, `export well-known` and `export mcp`: skills in other formats.

Each subcommand only parses, calls the library (`skillpack.publish.oci`,
`skillpack.publish.exports`, with its inputs from `skillpack.publish.export_inputs`) and
prints. Bad input writes nothing; `--json` prints one JSON document whether the command
succeeds or fails.
"""

from __future__ import annotations

import json
import os
import sys

import click

from skillpack._atomic import atomic_write
from skillpack.cli._common import echo_json, usage
from skillpack.cli._json_errors import json_errors
from skillpack.publish.export_inputs import export_skills
from skillpack.publish.exports import WELL_KNOWN_DIR, export_well_known, mcp_skills_list
from skillpack.publish.exports import sha256_digest as exports_sha256
from skillpack.publish.oci import artifacts_from_paths, write_layout

__all__ = ["export"]

_EXISTING = click.Path(exists=True, file_okay=True, dir_okay=True)
_PATHS = click.argument("paths", nargs=-1, required=True, type=_EXISTING)
_JSON = click.option("--json", "as_json", is_flag=True,
                     help="Print one JSON document (on failure too).")


@click.group()
def export() -> None:
    """Export skills: an OCI image layout, a well-known discovery site, an MCP skills list.

    A PATH is a skill folder, a folder of skills, a .skill archive or a bundle.
    """


@export.command("oci")
@_PATHS
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="The layout folder to write (must not exist, or be empty).")
@click.option("--tag", default=None, metavar="NAME",
              help="The reference name of the one artifact (default: <name>-<16 hex>).")
@_JSON
def export_oci(paths: tuple[str, ...], out_dir: str, tag: str | None, as_json: bool) -> None:
    """Write an OCI image layout (oci-layout, index.json, blobs/sha256/) to OUT.

    One artifact per skill and per .skill or bundle given; standard tools read it
    (skopeo inspect --raw oci:OUT:NAME).
    """
    with json_errors(as_json):
        artifacts = artifacts_from_paths(paths)
        if tag is not None and len(artifacts) != 1:
            usage(f"--tag names one artifact, and there are {len(artifacts)}; leave it out "
                  "(each gets <name>-<16 hex>), or bundle the skills and export the bundle")
        refs = write_layout(artifacts, out_dir, ref_names=None if tag is None else [tag])
    by_digest = {digest: ref for ref, digest in refs.items()}
    rows = [{"ref": by_digest[a.manifest_digest], "kind": a.kind, "name": a.name,
             "digest": a.digest, "manifest_digest": a.manifest_digest,
             "layer": a.file_name, "layer_size": len(a.layer)} for a in artifacts]
    if as_json:
        echo_json({"ok": True, "layout": out_dir, "artifacts": rows})
        return
    for row in rows:
        click.echo(f"{out_dir}:{row['ref']}  {row['manifest_digest']}  "
                   f"({row['kind']} {row['name']} {row['digest']})")


@export.command("well-known")
@_PATHS
@click.option("-o", "--out", "site", required=True, type=click.Path(file_okay=False),
              help="The site folder: SITE/.well-known/agent-skills/ is written (replaced).")
@click.option("--base-url", default=None, metavar="URL",
              help="The published URL of agent-skills/ (default: path-absolute URLs).")
@_JSON
def export_well_known_command(paths: tuple[str, ...], site: str, base_url: str | None,
                              as_json: bool) -> None:
    """Write SITE/.well-known/agent-skills/: index.json (discovery 0.2.0) and each skill.

    A skill whose only file is SKILL.md is published as NAME/SKILL.md, any other as
    NAME.zip (SKILL.md at the archive root); each digest is the SHA-256 of those bytes.
    """
    with json_errors(as_json):
        entries = export_well_known(export_skills(paths), site, base_url=base_url)
    folder = os.path.join(site, WELL_KNOWN_DIR)
    rows = []
    for entry in entries:
        relative = f"{entry.name}/SKILL.md" if entry.type == "skill-md" else f"{entry.name}.zip"
        rows.append({**entry.to_dict(), "path": os.path.join(folder, relative)})
    if as_json:
        echo_json({"ok": True, "index": os.path.join(folder, "index.json"), "skills": rows})
        return
    for row in rows:
        click.echo(f"{row['path']}  {row['digest']}  ({row['type']})")
    click.echo(f"{os.path.join(folder, 'index.json')}  {len(rows)} skill(s)")


@export.command("mcp")
@_PATHS
@click.option("-o", "--out", "out_file", default="-", metavar="FILE",
              help="Write the result to FILE (default: stdout; '-' is stdout).")
@_JSON
def export_mcp(paths: tuple[str, ...], out_file: str, as_json: bool) -> None:
    """Print (or write to FILE) what an MCP server's skills/list returns (SEP-2640).

    Per skill its frontmatter and a {uri, digest, size} entry for every file, each digest
    the SHA-256 of the file's bytes. With --json the result is under "result".
    """
    with json_errors(as_json):
        data = mcp_skills_list(export_skills(paths))
        if out_file != "-":
            with atomic_write(out_file) as handle:
                handle.write(data)
    result = json.loads(data)
    skills = [{"name": s["frontmatter"]["name"], "uri": s["uri"],
               "resources": len(s["resources"])} for s in result["skills"]]
    if out_file == "-":
        if as_json:
            echo_json({"ok": True, "output": "-", "skills": skills, "result": result})
        else:
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        return
    if as_json:
        echo_json({"ok": True, "output": out_file, "sha256": exports_sha256(data),
                   "skills": skills})
        return
    click.echo(f"{out_file}  {exports_sha256(data)}  {len(skills)} skill(s)")
