"""Builders of the install tests: skills, the command line, trees, keys, a slow site."""

from __future__ import annotations

import http.server
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from skillpack.cli.app import main


def make_skill(root: Path, name: str, body: str = "Do the thing.\n",
               files: dict[str, str] | None = None,
               scripts: dict[str, str] | None = None) -> Path:
    """``root/name``: a valid skill, its `files` 0644 and its `scripts` 0755."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {name} does one thing when asked.\n---\n\n# {name}\n\n"
        + body, encoding="utf-8")
    for rel, text in {**(files or {}), **(scripts or {})}.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755 if rel in (scripts or {}) else 0o644)
    return folder


def cli(*args: object) -> Result:
    """`skillpack ARGS` (stdout and stderr apart)."""
    return CliRunner().invoke(main, [str(a) for a in args])


def verify(*args: object) -> tuple[int, list[dict[str, Any]]]:
    """``skillpack verify --lock skills.lock --json ARGS``: its exit code and its answer."""
    result = cli("verify", "--lock", "skills.lock", "--json", *args)
    return result.exit_code, json.loads(result.stdout)


def failures(answer: list[dict[str, Any]]) -> dict[str, str]:
    """Each failed item of a `verify` answer that is no skill: its path -> its code."""
    return {a["path"]: a["problems"][0]["code"] for a in answer if a.get("name") is None
            and not a["ok"] and a.get("problems")}


def tree(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under `folder`: relative path -> (permission bits, bytes)."""
    out = {}
    for here, _, names in os.walk(folder):
        for name in names:
            path = Path(here, name)
            out[path.relative_to(folder).as_posix()] = (path.stat().st_mode & 0o777,
                                                        path.read_bytes())
    return out


def leftovers(folder: Path) -> list[str]:
    """Names in `folder` that are install's temp or old folders."""
    return sorted(n for n in os.listdir(folder) if ".skillpack-" in n and n.startswith(".")
                  and n != ".skillpack-installed.json")


def write_keys(folder: Path) -> tuple[Path, Path]:
    """An Ed25519 key pair in OpenSSH form: (private, public)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
        PublicFormat,
    )

    folder.mkdir(parents=True, exist_ok=True)
    key = Ed25519PrivateKey.generate()
    private, public = folder / "id_ed25519", folder / "id_ed25519.pub"
    private.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.OpenSSH, NoEncryption()))
    public.write_bytes(key.public_key().public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH)
                       + b" tester\n")
    return private, public


class Trickle:
    """A site on 127.0.0.1 whose `slow` path (its index, or an artifact) announces `size`
    bytes and sends them one every `every` seconds, giving up after `most`: what a site that
    wants to hold install forever does. ``sent`` counts the slow bytes that went out."""

    def __init__(self, files: dict[str, bytes], slow: str, size: int, every: float = 0.05,
                 most: int = 100) -> None:
        self.files, self.slow, self.size, self.every, self.most = files, slow, size, every, most
        self.sent = 0
        trickle = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                if self.path != trickle.slow:
                    body = trickle.files.get(self.path)
                    self.send_response(200 if body is not None else 404)
                    self.send_header("Content-Length", str(len(body or b"")))
                    self.end_headers()
                    self.wfile.write(body or b"")
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(trickle.size))
                self.end_headers()
                try:
                    for _ in range(min(trickle.size, trickle.most)):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        trickle.sent += 1
                        time.sleep(trickle.every)
                except OSError:  # the client gave up: what the test wants
                    return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

