"""A local OCI registry: Debian's `docker-registry` (the CNCF distribution server) serving on
127.0.0.1 and a free port, its config, log and storage in a folder given. The one starter
of the benchmark suite's `pull` workload (workloads.py) and of the tests' registry
(tests/helpers/registry.py, which loads this file with `helpers.paths.load_benchmark`);
standard library only, so that either side may use it.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RegistryError", "Served", "free_port", "serve"]


class RegistryError(Exception):
    """The registry did not start: it exited (the message holds its log) or did not answer."""


@dataclass(frozen=True)
class Served:
    host: str  # 127.0.0.1:PORT
    storage: Path  # the registry's filesystem storage


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serve(binary: str, root: Path, htpasswd: Path | None = None,
          attempts: int = 3) -> Iterator[Served]:
    """Run ``BINARY serve`` on 127.0.0.1 and a free port, storage under ``root`` (and its
    config.yml and registry.log), until the block ends; with ``htpasswd``, it asks for a login.

    The port is free when chosen, not reserved: another process (pytest-xdist runs one a
    core) may take it first, so a registry that exits before it answers is started again on
    another port, ``attempts`` times at most. Raises `RegistryError` when it never answers."""
    storage = root / "storage"
    config, log_path = root / "config.yml", root / "registry.log"
    for attempt in range(attempts):
        port = free_port()
        config.write_text(_config(storage, port, htpasswd), encoding="utf-8")
        log = log_path.open("wb")
        proc = subprocess.Popen([binary, "serve", str(config)], stdout=log, stderr=log)
        try:
            if _answers(proc, port):
                yield Served(f"127.0.0.1:{port}", storage)
                return
            if proc.poll() is None:
                raise RegistryError(f"docker-registry did not answer /v2/ on 127.0.0.1:{port}")
            if attempt == attempts - 1:
                raise RegistryError(f"docker-registry exited: {log_path.read_text()}")
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
