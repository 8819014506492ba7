"""OCI conventions besides skillpack's: ToolHive's skill artifact (written and read), other
known ones named, and registry requests bounded in time.

Against Debian's `docker-registry` on 127.0.0.1 with `skopeo` as the independent reader
(tests/helpers/registry.py; skipped without them unless SKILLPACK_REQUIRE_REGISTRY=1).
"""

from __future__ import annotations

import gzip
import http.server
import io
import json
import re
import socket
import tarfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers.paths import FIXTURES
from helpers.registry import Registry, run_skopeo
from helpers.skills import write_skill

from skillpack.cli import main
from skillpack.errors import ArchiveError, SkillpackError
from skillpack.packing.verify import digest
from skillpack.publish import oci
from skillpack.publish.export_inputs import artifacts_from_paths

registry = pytest.mark.registry
WAITLIST = FIXTURES / "waitlist"


def _skill_with_hidden(tmp_path: Path) -> Path:
    folder = write_skill(tmp_path / "hidden-demo", "---\nname: hidden-demo\ndescription: The "
                         "hidden-demo skill. Use when testing.\n---\nRun `scripts/go.sh`.\n",
                         {"scripts/go.sh": "#!/bin/sh\necho go\n", "notes/.keep": "x\n",
                          "data/a.txt": "a\n"})
    (folder / "scripts" / "go.sh").chmod(0o755)
    return folder


def test_the_toolhive_artifact_is_deterministic_and_holds_what_thv_reads(
        tmp_path: Path) -> None:
    folder = _skill_with_hidden(tmp_path)
    [art] = artifacts_from_paths([folder], fmt="toolhive")
    [again] = artifacts_from_paths([folder], fmt="toolhive")
    assert art.manifest == again.manifest and art.layer == again.layer
    index = json.loads(art.manifest)
    assert index["mediaType"] == oci.INDEX_MEDIA_TYPE
    assert index["artifactType"] == "dev.toolhive.skills.v1"
    assert [m["platform"] for m in index["manifests"]] == [
        {"architecture": "amd64", "os": "linux"}, {"architecture": "arm64", "os": "linux"}]
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(art.layer))) as tar:
        members = tar.getmembers()
    # files only, at the root, 0644, hidden files left out (what ToolHive writes)
    assert [(m.name, m.mode, m.type) for m in members] == [
        ("SKILL.md", 0o644, tarfile.REGTYPE), ("data/a.txt", 0o644, tarfile.REGTYPE),
        ("scripts/go.sh", 0o644, tarfile.REGTYPE)]
    config = json.loads(dict(art.extra_blobs)[json.loads(art.children[0])["config"]["digest"]])
    labels = config["config"]["Labels"]
    assert sorted(labels) == sorted(f"dev.toolhive.skills.{k}" for k in (
        "name", "description", "version", "allowedTools", "license", "files"))
    assert json.loads(labels["dev.toolhive.skills.files"]) == [
        "SKILL.md", "data/a.txt", "scripts/go.sh"]
    # each platform's manifest names its artifact type too, as thv's packager writes it
    assert [json.loads(c)["artifactType"] for c in art.children] == [
        "dev.toolhive.skills.v1"] * 2


REQUIRES = ("ghcr.io/acme/skills/base:v1", "ghcr.io/acme/skills/extra@sha256:" + "ab" * 32)


def _skill_requiring(tmp_path: Path, requires: str, allowed: str = "") -> Path:
    return write_skill(tmp_path / "needy", "---\nname: needy\ndescription: The needy skill. "
                       "Use when testing.\n" + allowed + "metadata:\n  version: '1.0'\n"
                       "  toolhive.requires: " + requires + "---\nRun it.\n",
                       {"data/a&b.txt": "x\n"})


def _layout_blob(layout: Path, digest: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (layout / "blobs" / "sha256" / digest.removeprefix("sha256:")).read_bytes())
    return data


def test_export_oci_toolhive_writes_the_requires_annotation_as_thv_does(
        tmp_path: Path) -> None:
    """`metadata: toolhive.requires` (one OCI reference a line) was dropped: thv installed
    the skill without the skills it needs. ToolHive's packager (createManifest) annotates
    the index and each platform's manifest with `dev.toolhive.skills.requires`, the lines
    trimmed, empty ones left out, as Go's compact JSON array; the config carries no such
    label. Its JSON arrays are Go's too: `["a","b"]`, `&` as `\\u0026`, none as `null`."""
    lines = f"|\n    {REQUIRES[0]}\n\n    {REQUIRES[1]}  \n"
    folder = _skill_requiring(tmp_path, lines, "allowed-tools: Read Bash(git log:*)\n")
    out = tmp_path / "layout"
    result = CliRunner().invoke(main, ["export", "oci", str(folder), "-o", str(out),
                                       "--format", "toolhive"])
    assert result.exit_code == 0, result.output
    [top] = json.loads((out / "index.json").read_bytes())["manifests"]
    index = _layout_blob(out, top["digest"])
    expected = '["' + '","'.join(REQUIRES) + '"]'  # Go's json.Marshal: no spaces
    assert index["annotations"] == {
        "dev.toolhive.skills.name": "needy", "dev.toolhive.skills.version": "1.0",
        "dev.toolhive.skills.description": "The needy skill. Use when testing.",
        "dev.toolhive.skills.requires": expected}
    for listed in index["manifests"]:
        manifest = _layout_blob(out, listed["digest"])
        assert manifest["annotations"] == index["annotations"]
        labels = _layout_blob(out, manifest["config"]["digest"])["config"]["Labels"]
        assert "dev.toolhive.skills.requires" not in labels
        assert labels["dev.toolhive.skills.allowedTools"] == '["Read","Bash(git log:*)"]'
        assert labels["dev.toolhive.skills.files"] == '["SKILL.md","data/a\\u0026b.txt"]'
    (folder / "SKILL.md").write_text((folder / "SKILL.md").read_text().replace(
        "allowed-tools: Read Bash(git log:*)\n", "").replace(
        "  toolhive.requires: " + lines, "  toolhive.requires: ''\n"))
    [art] = artifacts_from_paths([folder], fmt="toolhive")
    annotations = json.loads(art.manifest)["annotations"]
    assert "dev.toolhive.skills.requires" not in annotations  # an empty value: none, as thv
    config = json.loads(dict(art.extra_blobs)[json.loads(art.children[0])["config"]["digest"]])
    assert config["config"]["Labels"]["dev.toolhive.skills.allowedTools"] == "null"


def test_a_toolhive_requires_that_is_no_string_is_refused(tmp_path: Path) -> None:
    """thv reads metadata as strings and refuses to build a skill whose
    `toolhive.requires` is a list: writing the artifact without it would drop the skills
    it needs without a word."""
    folder = _skill_requiring(tmp_path, f"[{REQUIRES[0]}]\n")
    out = tmp_path / "layout"
    result = CliRunner().invoke(main, ["export", "oci", str(folder), "-o", str(out),
                                       "--format", "toolhive"])
    assert result.exit_code == 1, result.output
    says = ("skill 'needy': metadata 'toolhive.requires' is a list; ToolHive reads it as a "
            "string, one OCI reference a line, and refuses to build the skill")
    assert result.stderr.splitlines() == [
        f"skillpack: error: {folder}: {says} (write it as a block, 'toolhive.requires: |' "
        "then one OCI reference a line, indented below it)",
        f"  {folder / 'SKILL.md'}:6: error: [metadata-not-string] {says}"]
    assert not out.exists()


@registry
def test_push_toolhive_carries_the_requires_annotation(reg: Registry, tmp_path: Path,
                                                       skopeo: str) -> None:
    folder = _skill_requiring(tmp_path, REQUIRES[0] + "\n")
    ref = f"{reg.host}/skills/needy:v1"
    result = CliRunner().invoke(main, ["push", str(folder), ref, "--plain-http",
                                       "--format", "toolhive"])
    assert result.exit_code == 0, result.output
    raw = json.loads(run_skopeo(skopeo, "inspect", "--raw", "--tls-verify=false",
                                f"docker://{ref}"))
    assert raw["annotations"]["dev.toolhive.skills.requires"] == f'["{REQUIRES[0]}"]'
    seen = json.loads(run_skopeo(skopeo, "inspect", "--tls-verify=false",
                                 "--override-os", "linux", "--override-arch", "arm64",
                                 f"docker://{ref}"))
    assert seen["Labels"]["dev.toolhive.skills.files"] == '["SKILL.md","data/a\\u0026b.txt"]'


@pytest.mark.parametrize(("front", "version"), [
    ("version: '2.1'\n", "2.1"), ("metadata:\n  version: '1.0'\n", "1.0"),
    ("version: '2.1'\nmetadata:\n  version: '1.0'\n", "2.1"), ("", "")])
def test_the_toolhive_version_label_is_what_thv_reads(tmp_path: Path, front: str,
                                                       version: str) -> None:
    """thv reads a top-level `version:`; the Agent Skills spec keeps it under `metadata`:
    the top-level one first, else metadata's."""
    folder = write_skill(tmp_path / "v", "---\nname: v\ndescription: The v skill. Use when "
                         "testing.\n" + front + "---\nBody.\n")
    [art] = artifacts_from_paths([folder], fmt="toolhive")
    config = json.loads(dict(art.extra_blobs)[json.loads(art.children[0])["config"]["digest"]])
    assert config["config"]["Labels"]["dev.toolhive.skills.version"] == version


def test_export_oci_toolhive_is_read_by_skopeo(tmp_path: Path, skopeo: str) -> None:
    out = tmp_path / "layout"
    result = CliRunner().invoke(main, ["export", "oci", str(WAITLIST), "-o", str(out),
                                       "--format", "toolhive", "--json"])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.output)["artifacts"]
    assert row["kind"] == "toolhive"
    for arch in ("amd64", "arm64"):
        seen = json.loads(run_skopeo(skopeo, "inspect", "--override-os", "linux",
                                     "--override-arch", arch, f"oci:{out}:{row['ref']}"))
        assert seen["Architecture"] == arch
        assert seen["Labels"]["dev.toolhive.skills.name"] == "waitlist"


@registry
def test_push_toolhive_then_pull_it_back(reg: Registry, tmp_path: Path, skopeo: str) -> None:
    folder = _skill_with_hidden(tmp_path)
    result = CliRunner().invoke(main, ["push", str(folder), f"{reg.host}/skills/hidden-demo:v1",
                                       "--plain-http", "--format", "toolhive", "--json"])
    assert result.exit_code == 0, result.output
    raw = run_skopeo(skopeo, "inspect", "--raw", "--tls-verify=false",
                     f"docker://{reg.host}/skills/hidden-demo:v1")
    assert json.loads(raw)["artifactType"] == "dev.toolhive.skills.v1"
    copied = tmp_path / "copied"  # skopeo copies the whole index, both platforms
    run_skopeo(skopeo, "copy", "--all", "--src-tls-verify=false",
               f"docker://{reg.host}/skills/hidden-demo:v1", f"oci:{copied}:x")
    got = oci.pull(f"{reg.host}/skills/hidden-demo:v1", tmp_path / "out", plain_http=True)
    assert got.kind == "toolhive" and got.skills[0][0] == "hidden-demo"
    # the round trip's honest difference: 0644 and no hidden file, so another digest
    assert got.digest != digest(folder)
    (folder / "notes" / ".keep").unlink()
    (folder / "scripts" / "go.sh").chmod(0o644)
    assert got.digest == digest(folder)
    assert Path(got.path).name.startswith("hidden-demo-")


@registry
def test_a_toolhive_skill_skillpack_refuses_is_named_by_its_reference(reg: Registry,
                                                                       tmp_path: Path) -> None:
    """A ToolHive artifact whose SKILL.md includes a file its layer lacks: refused, each
    problem at REF!PATH (it named the temporary folder the layer was unpacked in)."""
    text = ("---\nname: partial\ndescription: The partial skill. Use when testing.\n"
            "includes: [scripts/run.py]\n---\nBody.\n")
    art = oci.artifact_toolhive("partial", "The partial skill.", [("SKILL.md", text.encode())])
    ref = f"{reg.host}/skills/partial:v1"
    oci.push(art, ref, plain_http=True)
    with pytest.raises(ArchiveError) as caught:
        oci.pull(ref, tmp_path / "out", plain_http=True)
    files = [p.file for p in caught.value.located()]
    assert files == [f"{ref}!SKILL.md"], files
    assert not (tmp_path / "out").exists()


@registry
def test_pull_names_other_conventions(reg: Registry, tmp_path: Path) -> None:
    layer = b"not a skill of ours"
    for media_type, name in [("application/vnd.agent.skill.v1+json", "Alibaba"),
                             ("application/vnd.agentskills.skill.v1", "agentskills-oci")]:
        repo = f"skills/other-{name.lower()}"
        reg.put_blob(repo, b"{}")
        reg.put_blob(repo, layer)
        reg.put_manifest(repo, "v1", oci.canonical_manifest_json({
            "schemaVersion": 2, "mediaType": oci.MANIFEST_MEDIA_TYPE,
            "artifactType": media_type,
            "config": {"mediaType": oci.EMPTY_MEDIA_TYPE, "digest": oci.EMPTY_DIGEST,
                       "size": 2},
            "layers": [{"mediaType": "application/octet-stream",
                        "digest": oci.sha256_digest(layer), "size": len(layer)}]}))
        with pytest.raises(ArchiveError, match=f"this is .*{name}.*{re.escape(media_type)}"
                                               ".*which skillpack does not read"):
            oci.pull(f"{reg.host}/{repo}:v1", tmp_path / "out", plain_http=True)
    assert not (tmp_path / "out").exists()


@pytest.fixture
def silent() -> Iterator[str]:
    """A server on 127.0.0.1 that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


def test_a_registry_that_never_answers_is_a_timeout(silent: str, tmp_path: Path) -> None:
    pytest.importorskip("oras.provider", reason="pip install 'skillpack[oci]'")
    result = CliRunner().invoke(main, ["pull", f"{silent}/skills/x:v1", "-o",
                                       str(tmp_path / "out"), "--plain-http", "--timeout", "0.3"])
    assert result.exit_code == 1
    assert (f"the registry {silent} did not answer within the timeouts (0.3 s to connect, "
            "0.3 s to answer)") in result.output
    assert "--timeout SECONDS" in result.output and "--deadline SECONDS" in result.output
    with pytest.raises(SkillpackError, match=r"did not answer within the deadline of 0\.2 s"):
        oci.pull(f"{silent}/skills/x:v1", tmp_path / "out", plain_http=True,
                 timeouts=oci.Timeouts(connect=5, read=5, deadline=0.2))
    assert not (tmp_path / "out").exists()


@pytest.fixture
def trickle() -> Iterator[tuple[str, list[int]]]:
    """A registry on 127.0.0.1 that answers /v2/ and then sends a manifest of 2,000 bytes
    (announced whole) a byte every 10 ms; the list counts the bytes it got out."""
    sent = [0]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            body = b"{}" if self.path == "/v2/" else b" " * 2_000
            self.send_response(200)
            self.send_header("Content-Type", oci.MANIFEST_MEDIA_TYPE)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.path == "/v2/":
                self.wfile.write(body)
                return
            try:
                for byte in body:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    sent[0] += 1
                    time.sleep(0.01)
            except OSError:
                return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", sent
    finally:
        server.shutdown()
        server.server_close()


def test_a_registry_answering_a_byte_at_a_time_is_stopped_by_the_deadline(
        trickle: tuple[str, list[int]], tmp_path: Path) -> None:
    """Each byte comes within the read timeout, so only the deadline can stop it: it is
    checked as the bytes arrive (it was checked a MiB at a time, after the whole answer)."""
    pytest.importorskip("oras.provider", reason="pip install 'skillpack[oci]'")
    host, sent = trickle
    with pytest.raises(SkillpackError, match=r"did not answer within the deadline of 0\.5 s"):
        oci.pull(f"{host}/skills/x:v1", tmp_path / "out", plain_http=True,
                 timeouts=oci.Timeouts(connect=5, read=5, deadline=0.5))
    assert sent[0] < 1_000  # stopped well before the end of the answer
    assert not (tmp_path / "out").exists()
