"""The fixture of the install tests: a folder served over HTTP on 127.0.0.1."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.install import Trickle, cli, make_skill


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def serve() -> Iterator[Callable[[Path], str]]:
    """``serve(folder)``: the URL of `folder` served over HTTP on 127.0.0.1 (stopped after
    the test)."""
    servers: list[http.server.ThreadingHTTPServer] = []

    def start(folder: Path) -> str:
        handler = functools.partial(_Quiet, directory=str(folder))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def trickle() -> Iterator[Callable[..., Trickle]]:
    """``trickle(files, slow, size)``: a `Trickle` site (stopped after the test)."""
    started: list[Trickle] = []

    def start(files: dict[str, bytes], slow: str, size: int) -> Trickle:
        started.append(Trickle(files, slow, size))
        return started[-1]

    yield start
    for site in started:
        site.stop()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project (the working folder, HOME a folder of its own) with two skills, their lock,
    and both installed for claude-code and codex."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    proj = tmp_path / "proj"
    proj.mkdir()
    monkeypatch.chdir(proj)
    make_skill(proj / "skills", "alpha", scripts={"scripts/run.sh": "#!/bin/sh\necho\n"})
    make_skill(proj / "skills", "beta", files={"notes.md": "notes\n"})
    assert cli("lock", "skills", "-o", "skills.lock").exit_code == 0
    return proj
