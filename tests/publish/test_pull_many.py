"""`skillpack pull REF... -o DIR`: many references in one process, one session a registry,
all or nothing, each checked against --lock.

Against Debian's `docker-registry` on 127.0.0.1 (tests/helpers/registry.py; skipped without
it unless SKILLPACK_REQUIRE_REGISTRY=1). Each test pushes skills of its own (the registry
shares blobs between repositories, and one test alters a blob in its storage).
"""

from __future__ import annotations

import json
import socket
import textwrap
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from helpers.cli import cli
from helpers.registry import Registry
from helpers.skills import write_skill

from skillpack.publish import oci

registry = pytest.mark.registry


def _skill(tmp_path: Path, name: str) -> Path:
    return write_skill(tmp_path / "src" / name, textwrap.dedent(f"""\
        ---
        name: {name}
        description: The {name} skill, made by test_pull_many. Use when testing pulls.
        ---
        # {name}

        Say hello from {name}.
        """))


def _push(reg: Registry, folder: Path, ref: str, *extra: str) -> dict[str, object]:
    result = cli("push", folder, f"{reg.host}/{ref}", "--plain-http", "--json", *extra)
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.output)["pushed"]
    return dict(row)


def _written(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


@registry
def test_three_references_in_one_command_write_three_archives(reg: Registry,
                                                              tmp_path: Path) -> None:
    names = ["many-one", "many-two", "many-three"]
    rows = [_push(reg, _skill(tmp_path, n), f"many/{n}:v1") for n in names]
    refs = [f"{reg.host}/many/{n}:v1" for n in names]
    out = tmp_path / "out"
    result = cli("pull", *refs, "-o", out, "--plain-http", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["ok"] is True and "ref" not in doc  # several: the list only
    assert [p["ref"] for p in doc["pulled"]] == refs
    assert [p["manifest_digest"] for p in doc["pulled"]] == [r["manifest_digest"] for r in rows]
    assert [p["skills"][0]["name"] for p in doc["pulled"]] == names
    assert _written(out) == sorted(Path(p["path"]).name for p in doc["pulled"])
    assert len(_written(out)) == 3
    text = cli("pull", *refs, "-o", tmp_path / "text", "--plain-http")
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    assert lines[0] == f"pulled {refs[0]}  {rows[0]['manifest_digest']}"
    assert lines[-1] == f"pulled 3 artifact(s) to {tmp_path / 'text'}"


@registry
def test_one_reference_prints_what_pull_always_printed(reg: Registry, tmp_path: Path) -> None:
    row = _push(reg, _skill(tmp_path, "many-single"), "many/single:v1")
    result = cli("pull", f"{reg.host}/many/single:v1", "-o", tmp_path / "out", "--plain-http",
                 "--json")
    doc = json.loads(result.output)
    assert doc["ref"] == f"{reg.host}/many/single:v1"  # the single-reference fields stay
    assert doc["manifest_digest"] == row["manifest_digest"]
    assert doc["pulled"] == [{k: v for k, v in doc.items() if k not in ("ok", "pulled")}]


@registry
def test_a_missing_tag_or_an_altered_blob_writes_nothing(reg: Registry,
                                                         tmp_path: Path) -> None:
    _push(reg, _skill(tmp_path, "many-good"), "many/good:v1")
    _push(reg, _skill(tmp_path, "many-altered"), "many/altered:v1")
    layer = json.loads(_raw_manifest(reg, "many/altered", "v1"))["layers"][0]["digest"]
    blob = reg.blob_file(layer)
    stored = bytearray(blob.read_bytes())
    stored[100] ^= 0x20  # same size, other bytes: the registry serves them as they are
    blob.write_bytes(bytes(stored))
    good = f"{reg.host}/many/good:v1"
    out = tmp_path / "out"
    missing = cli("pull", good, f"{reg.host}/many/good:nope", "-o", out, "--plain-http",
                  "--json")
    assert missing.exit_code == 1
    doc = json.loads(missing.output)
    assert doc["ok"] is False and "404" in doc["error"] and "many/good:nope" in doc["error"]
    assert not out.exists()
    both = cli("pull", good, f"{reg.host}/many/altered:v1", f"{reg.host}/many/good:nope",
               "-o", out, "--plain-http", "--json")
    assert both.exit_code == 1
    doc = json.loads(both.output)
    assert doc["error"].startswith("2 of 3 references failed, so nothing was written")
    assert [p["file"] for p in doc["problems"]] == [f"{reg.host}/many/altered:v1",
                                                    f"{reg.host}/many/good:nope"]
    assert doc["problems"][0]["code"] == "integrity"
    assert "not the one the manifest names" in doc["problems"][0]["message"]
    assert not out.exists()


def _raw_manifest(reg: Registry, repo: str, tag: str) -> bytes:
    req = urllib.request.Request(reg.url(f"{repo}/manifests/{tag}"),
                                 headers={"Accept": oci.MANIFEST_MEDIA_TYPE})
    with urllib.request.urlopen(req) as resp:
        return bytes(resp.read())


@registry
def test_a_lock_that_refuses_one_reference_refuses_all(reg: Registry, tmp_path: Path) -> None:
    approved = [_skill(tmp_path, n) for n in ("many-locked-a", "many-locked-b")]
    stranger = _skill(tmp_path, "many-stranger")
    for folder in (*approved, stranger):
        _push(reg, folder, f"many/{folder.name}:v1")
    lock = tmp_path / "skills.lock"
    assert cli("lock", *approved, "-o", lock).exit_code == 0
    refs = [f"{reg.host}/many/{f.name}:v1" for f in approved]
    out = tmp_path / "out"
    refused = cli("pull", *refs, f"{reg.host}/many/many-stranger:v1", "-o", out,
                  "--plain-http", "--lock", lock, "--json")
    assert refused.exit_code == 1
    doc = json.loads(refused.output)
    assert "many-stranger" in refused.output and doc["ok"] is False
    assert not out.exists()
    # each reference is checked against the approvals of what it holds, not the whole lock
    one = cli("pull", refs[1], "-o", out, "--plain-http", "--lock", lock, "--json")
    assert one.exit_code == 0, one.output
    both = cli("pull", *refs, "-o", out, "--plain-http", "--lock", lock)
    assert both.exit_code == 0, both.output
    assert len(_written(out)) == 2


@registry
def test_toolhive_and_skillpack_references_pull_together(reg: Registry,
                                                         tmp_path: Path) -> None:
    ours = _skill(tmp_path, "many-ours")
    theirs = _skill(tmp_path, "many-theirs")
    _push(reg, ours, "many/ours:v1")
    _push(reg, theirs, "many/theirs:v1", "--format", "toolhive")
    out = tmp_path / "out"
    result = cli("pull", f"{reg.host}/many/theirs:v1", f"{reg.host}/many/ours:v1", "-o", out,
                 "--plain-http", "--json")
    assert result.exit_code == 0, result.output
    pulled = json.loads(result.output)["pulled"]
    assert [p["kind"] for p in pulled] == ["toolhive", "skill"]
    assert [p["skills"][0]["name"] for p in pulled] == ["many-theirs", "many-ours"]
    assert _written(out) == sorted(Path(p["path"]).name for p in pulled)
    for row in pulled:  # each written file is the verified archive its record names
        assert cli("verify", row["path"], "--digest", row["digest"]).exit_code == 0


@contextmanager
def _counting_proxy(target: str) -> Iterator[tuple[str, list[int]]]:
    """A TCP relay on 127.0.0.1 to `target` (host:port) counting the connections made to
    it: (its host:port, the count in a one-item list)."""
    host, port = target.rsplit(":", 1)
    listener = socket.create_server(("127.0.0.1", 0))
    count = [0]

    def relay(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            count[0] += 1
            upstream = socket.create_connection((host, int(port)))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=relay, args=(a, b), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}", count
    finally:
        listener.close()


@registry
def test_every_reference_to_a_registry_goes_through_one_session(reg: Registry,
                                                                 tmp_path: Path) -> None:
    names = [f"many-session-{i}" for i in range(5)]
    for n in names:
        _push(reg, _skill(tmp_path, n), f"many/{n}:v1")
    with _counting_proxy(reg.host) as (proxy, count):
        result = cli("pull", *[f"{proxy}/many/{n}:v1" for n in names], "-o", tmp_path / "out",
                     "--plain-http")
    assert result.exit_code == 0, result.output
    assert len(_written(tmp_path / "out")) == 5
    # the /v2/ ping that chooses the login, then one kept-alive connection for the ten
    # requests (five manifests, five layers); one process a reference opened two each
    assert count[0] == 2


@registry
def test_a_push_of_many_skills_goes_through_one_session(reg: Registry, tmp_path: Path) -> None:
    folders = [_skill(tmp_path, f"many-push-{i}") for i in range(4)]
    with _counting_proxy(reg.host) as (proxy, count):
        result = cli("push", *folders, f"{proxy}/many/pushed", "--plain-http", "--json")
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.output)["pushed"]) == 4
    assert len(reg.tags("many/pushed")) == 4
    assert count[0] == 2  # the /v2/ ping, then one connection for every blob and manifest
