"""A real OCI registry for the tests: Debian's `docker-registry` (the CNCF distribution
server) on 127.0.0.1 and a free port, its storage in a temporary folder, and `skopeo`, an
independent client to read back what skillpack pushed.

Without the binaries (or the `oras` library) a test that needs them skips with the reason,
unless SKILLPACK_REQUIRE_REGISTRY=1 (CI), which makes a missing piece a failure. The
fixtures `reg` (one registry a test process) and `skopeo` are in tests/conftest.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import subprocess
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["REQUIRED", "Registry", "free_port", "has_oras", "need", "run_skopeo", "serve",
           "which"]

MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"

REQUIRED = os.environ.get("SKILLPACK_REQUIRE_REGISTRY") == "1"


def need(what: str, present: bool) -> None:
    if present:
        return
    if REQUIRED:
        pytest.fail(f"{what} is missing and SKILLPACK_REQUIRE_REGISTRY=1")
    pytest.skip(f"{what} is not installed (apt-get install docker-registry skopeo; "
                "pip install 'skillpack[oci]')")


def which(name: str) -> str | None:
    return shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}")
                                  else None)


def has_oras() -> bool:
    try:
        import oras.provider  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class Registry:
    host: str  # 127.0.0.1:PORT
    storage: Path

    def url(self, path: str) -> str:
        return f"http://{self.host}/v2/{path}"

    def blob_file(self, digest: str) -> Path:
        hexa = digest.removeprefix("sha256:")
        return (self.storage / "docker" / "registry" / "v2" / "blobs" / "sha256" / hexa[:2]
                / hexa / "data")

    def tags(self, repo: str) -> list[str]:
        try:
            with urllib.request.urlopen(self.url(f"{repo}/tags/list")) as resp:
                return sorted(json.load(resp).get("tags") or [])
        except urllib.error.HTTPError as err:
            if err.code == 404:  # the repository does not exist
                return []
            raise

    def put_blob(self, repo: str, data: bytes) -> str:
        """Upload a blob with plain HTTP (monolithic POST then PUT); return its digest."""
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        req = urllib.request.Request(self.url(f"{repo}/blobs/uploads/"), method="POST",
                                     data=b"")
        with urllib.request.urlopen(req) as resp:
            location = resp.headers["Location"]
        if not location.startswith("http"):
            location = f"http://{self.host}{location}"
        sep = "&" if "?" in location else "?"
        req = urllib.request.Request(f"{location}{sep}digest={digest}", method="PUT", data=data,
                                     headers={"Content-Type": "application/octet-stream"})
        with urllib.request.urlopen(req) as resp:
            assert resp.status == 201
        return digest

    def put_manifest(self, repo: str, tag: str, manifest: bytes) -> None:
        req = urllib.request.Request(self.url(f"{repo}/manifests/{tag}"), method="PUT",
                                     data=manifest,
                                     headers={"Content-Type": MANIFEST_MEDIA_TYPE})
        with urllib.request.urlopen(req) as resp:
            assert resp.status == 201


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serve(root: Path, htpasswd: Path | None = None) -> Iterator[Registry]:
    """Run `docker-registry serve` on 127.0.0.1 and a free port, storage under ``root``.

    The port is free when chosen, not reserved: another test process (pytest-xdist runs one a
    core) may take it first, so a registry that exits before it answers is started again on
    another port, three times at most."""
    binary = which("docker-registry")
    need("docker-registry (Debian package docker-registry)", binary is not None)
    need("the oras library", has_oras())
    assert binary is not None
    storage = root / "storage"
    for attempt in range(3):
        port = free_port()
        config = root / "config.yml"
        config.write_text(_config(storage, port, htpasswd), encoding="utf-8")
        log = (root / "registry.log").open("wb")
        proc = subprocess.Popen([binary, "serve", str(config)], stdout=log, stderr=log)
        try:
            if _answers(proc, port):
                yield Registry(f"127.0.0.1:{port}", storage)
                return
            if proc.poll() is None:
                pytest.fail("docker-registry did not answer /v2/")
            if attempt == 2:
                pytest.fail(f"docker-registry exited: {(root / 'registry.log').read_text()}")
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()


def _config(storage: Path, port: int, htpasswd: Path | None) -> str:
    auth = "" if htpasswd is None else textwrap.dedent(f"""\
        auth:
          htpasswd:
            realm: skillpack-test
            path: {htpasswd}
        """)
    return textwrap.dedent(f"""\
        version: 0.1
        log:
          level: error
          accesslog:
            disabled: true
        storage:
          filesystem:
            rootdirectory: {storage}
          delete:
            enabled: true
        http:
          addr: 127.0.0.1:{port}
        """) + auth


def _answers(proc: subprocess.Popen[bytes], port: int) -> bool:
    """Whether the registry answers /v2/ within about 10 s (False: it exited or is silent)."""
    for _ in range(200):
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=1):
                return True
        except urllib.error.HTTPError:  # 401: it is up, and asks for a login
            return True
        except OSError:
            time.sleep(0.05)
    return False


def run_skopeo(binary: str, *args: str) -> bytes:
    done = subprocess.run([binary, *args], capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout
