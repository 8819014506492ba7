"""A real OCI registry for the tests: Debian's `docker-registry` (the CNCF distribution
server) on 127.0.0.1 and a free port, its storage in a temporary folder, and `skopeo`, an
independent client to read back what skillpack pushed. The registry is started by
benchmarks/local_registry.py, the one starter the benchmark suite's `pull` workload uses too.

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
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.paths import load_benchmark

__all__ = ["REQUIRED", "Registry", "free_port", "has_oras", "need", "run_skopeo", "serve",
           "which"]

local_registry = load_benchmark("local_registry")  # the starter the benchmark suite uses too
free_port = local_registry.free_port

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


@contextlib.contextmanager
def serve(root: Path, htpasswd: Path | None = None) -> Iterator[Registry]:
    """A registry on 127.0.0.1 and a free port, storage under ``root``, for the block:
    benchmarks/local_registry.py's `serve` (the one starter, shared with the benchmark
    suite); skips (fails under SKILLPACK_REQUIRE_REGISTRY=1) without the binary or oras."""
    binary = which("docker-registry")
    need("docker-registry (Debian package docker-registry)", binary is not None)
    need("the oras library", has_oras())
    assert binary is not None
    try:
        with local_registry.serve(binary, root, htpasswd) as served:
            yield Registry(served.host, served.storage)
    except local_registry.RegistryError as err:
        pytest.fail(str(err))


def run_skopeo(binary: str, *args: str) -> bytes:
    done = subprocess.run([binary, *args], capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout
