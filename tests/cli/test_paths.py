"""One PATH means the same skills to every command that takes skills.

Every such command runs on the same PATH shapes, made here: a skill folder, its SKILL.md, a
folder of skills, a folder of archives (what `pack -o out` writes), a `.skill` archive, an
archive made elsewhere, a bundle, and a folder mixing skills and archives; and each must see
the same skills, by name and digest (where it prints a digest). Then the PATH shapes the
commands used to read differently, and what a PATH that holds nothing says.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from helpers.cli import cli
from helpers.paths import FIXTURES, REPO
from helpers.skills import write_skill

from skillpack.approve.lock import read_lock
from skillpack.packing.verify import digest
from skillpack.runtime import load

Skills = set[tuple[str, str]]




def ok(*args: object) -> Result:
    result = cli(*args)
    assert result.exit_code == 0, (args, result.output)
    return result


def _skill(folder: Path) -> Path:
    return write_skill(folder, f"---\nname: {folder.name}\ndescription: The {folder.name} "
                       "skill. Use when a test needs it.\n---\n\nRun `scripts/go.sh`.\n",
                       {"scripts/go.sh": f"echo {folder.name}\n"})


def _foreign(folder: Path, dest: Path) -> Path:
    """An archive as Anthropic's packager makes it: DEFLATE, one top folder, no manifest."""
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"{folder.name}/{path.relative_to(folder).as_posix()}")
    return dest


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Skills]]:
    """Each PATH shape and the skills (name, digest) it holds."""
    root = tmp_path_factory.mktemp("shapes")
    alpha, beta = _skill(root / "skills" / "alpha"), _skill(root / "skills" / "beta")
    gamma, delta = _skill(root / "src" / "gamma"), _skill(root / "mix" / "delta")
    of = {p.name: (p.name, digest(p)) for p in (alpha, beta, gamma, delta)}
    ok("pack", alpha, beta, "-o", root / "out")
    [alpha_skill] = (root / "out").glob("alpha-*.skill")
    [beta_skill] = (root / "out").glob("beta-*.skill")
    shutil.copy(beta_skill, root / "mix" / beta_skill.name)  # beside a skill folder
    ok("bundle", alpha, beta, "-o", root / "all.bundle")
    return {
        "folder": (alpha, {of["alpha"]}),
        "SKILL.md": (alpha / "SKILL.md", {of["alpha"]}),
        "folder of skills": (root / "skills", {of["alpha"], of["beta"]}),
        "folder of archives": (root / "out", {of["alpha"], of["beta"]}),
        ".skill": (alpha_skill, {of["alpha"]}),
        "foreign zip": (_foreign(gamma, root / "gamma.zip"), {of["gamma"]}),
        "bundle": (root / "all.bundle", {of["alpha"], of["beta"]}),
        "mix": (root / "mix", {of["delta"], of["beta"]}),
    }


def _json(*args: object) -> Any:
    return json.loads(ok(*args).stdout)


def _layout_skills(layout: Path, rows: list[dict[str, Any]]) -> Skills:
    """The skills of an OCI layout's artifacts: a skill's row, a bundle's layer loaded."""
    found: Skills = set()
    for row in rows:
        if row["kind"] == "skill":
            found.add((row["name"], row["digest"]))
            continue
        hexa = row["manifest_digest"].removeprefix("sha256:")
        manifest = json.loads((layout / "blobs" / "sha256" / hexa).read_bytes())
        layer = manifest["layers"][0]["digest"].removeprefix("sha256:")
        bundle = load((layout / "blobs" / "sha256" / layer).read_bytes())
        found |= {(name, bundle[name].digest) for name in bundle.names}
    return found


def _seen_by(command: str, path: Path, tmp: Path) -> Skills | set[str]:
    """What `command` says `path` holds: (name, digest) pairs, or names where it prints no
    digest."""
    tmp.mkdir(parents=True)
    if command in ("check", "lint", "files", "programs"):
        return {item["name"] for item in _json(command, "--json", path)}
    if command == "digest":
        return {(i["name"], i["digest"]) for i in _json("digest", "--json", path)}
    if command == "pack":
        return {(i["name"], i["digest"]) for i in _json("pack", path, "-o", tmp / "p", "--json")}
    if command == "bundle":
        made = _json("bundle", path, "-o", tmp / "b.bundle", "--json")
        return {(s["name"], s["digest"]) for s in made["skills"]}
    if command == "inspect":
        return {(s["name"], s["digest"]) for s in _json("inspect", "--json", path)["skills"]}
    if command == "verify":
        return {(i["name"], i["digest"]) for i in _json("verify", "--json", path)}
    if command == "lock":
        ok("lock", path, "-o", tmp / "x.lock")
        return {(n, e.digest) for n, e in read_lock(tmp / "x.lock").skills.items()}
    if command == "review":  # against the lock of the same PATH: every skill unchanged
        ok("lock", path, "-o", tmp / "r.lock")
        locked = {(n, e.digest) for n, e in read_lock(tmp / "r.lock").skills.items()}
        said = ok("review", path, "--lock", tmp / "r.lock", "-o", tmp / "r.md", "--format",
                  "md").stdout
        assert said.endswith(f": 0 changed, 0 new, 0 gone, {len(locked)} unchanged\n"), said
        return locked
    if command == "catalog":
        return {s["name"] for s in _json("catalog", path, "--format", "json")["skills"]}
    if command == "export oci":
        rows = _json("export", "oci", path, "-o", tmp / "layout", "--json")["artifacts"]
        return _layout_skills(tmp / "layout", rows)
    if command == "export well-known":
        made = _json("export", "well-known", path, "-o", tmp / "site", "--json")
        return {s["name"] for s in made["skills"]}
    assert command == "export mcp"
    return {s["name"] for s in _json("export", "mcp", path, "--json")["skills"]}


COMMANDS = ["check", "lint", "files", "programs", "digest", "pack", "bundle", "inspect", "lock",
            "verify", "review", "catalog", "export oci", "export well-known", "export mcp"]
SHAPES = ["folder", "SKILL.md", "folder of skills", "folder of archives", ".skill",
          "foreign zip", "bundle", "mix"]


@pytest.mark.parametrize("shape", SHAPES)
def test_every_command_sees_the_same_skills(shape: str, tmp_path: Path,
                                            shapes: dict[str, tuple[Path, Skills]]) -> None:
    path, skills = shapes[shape]
    names = {name for name, _ in skills}
    for at, command in enumerate(COMMANDS):
        seen = _seen_by(command, path, tmp_path / str(at))
        want: Skills | set[str] = skills if all(isinstance(s, tuple) for s in seen) else names
        assert seen == want, (command, shape)


def test_sign_takes_the_archives_of_a_folder_of_archives(
        tmp_path: Path, shapes: dict[str, tuple[Path, Skills]]) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = tmp_path / "key.pem"
    key.write_bytes(Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    out, _ = shapes["folder of archives"]
    ok("lock", out, "-o", tmp_path / "x.lock")
    ok("sign", tmp_path / "x.lock", "--key", key, "--archive", out)
    envelope = json.loads((tmp_path / "x.lock.intoto.json").read_text())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    assert sorted(s["name"] for s in statement["subject"] if "sha256" in s["digest"]) == [
        "alpha", "beta"]


@pytest.mark.registry
def test_push_takes_a_folder_of_archives_and_a_skill_md(
        reg: Any, shapes: dict[str, tuple[Path, Skills]]) -> None:
    for shape in ("folder of archives", "SKILL.md"):
        path, skills = shapes[shape]
        pushed = _json("push", path, f"{reg.host}/shapes", "--plain-http", "--json")["pushed"]
        assert {(r["name"], r["digest"]) for r in pushed} == skills


# -- what the commands used to read differently (issue 27) ----------------------------------------

def test_a_skill_md_is_its_folder_to_lock_verify_inspect_and_review(tmp_path: Path) -> None:
    skill_md = FIXTURES / "waitlist" / "SKILL.md"
    ok("lock", FIXTURES / "waitlist", "-o", tmp_path / "folder.lock")
    ok("lock", skill_md, "-o", tmp_path / "file.lock")
    assert (tmp_path / "folder.lock").read_bytes() == (tmp_path / "file.lock").read_bytes()
    assert ok("verify", skill_md, "--lock", tmp_path / "folder.lock").stdout.startswith(
        f"ok        {digest(FIXTURES / 'waitlist')}  waitlist  ")
    assert _json("inspect", "--json", skill_md)["skills"][0]["name"] == "waitlist"
    said = ok("review", skill_md, "--lock", tmp_path / "folder.lock", "-o", "-", "--format",
              "md").stdout
    assert "SKILL.md" not in {line.strip("# ") for line in said.splitlines()}
    assert "gone" not in said.split("waitlist", 1)[1].split("\n", 1)[0]


def test_archives_beside_skills_are_read_and_deeper_ones_are_said(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _skill(repo / "mine")
    _foreign(_skill(tmp_path / "src" / "theirs"), repo / "theirs.zip")
    (repo / "dist").mkdir()
    _foreign(_skill(tmp_path / "src" / "deep"), repo / "dist" / "deep.skill")
    shown = ok("digest", repo)
    assert sorted(line.split("  ")[1] for line in shown.stdout.splitlines()) == [
        "mine", "theirs"]
    assert f"skipped {repo / 'dist' / 'deep.skill'} (an archive below the folder given" in (
        shown.stderr)
    # `pack -o dist` run again over its repository: one line for the folder, not one an
    # archive (a thousand archives gave a thousand lines, -q or not)
    for n in range(500):
        (repo / "dist" / f"old-{n}.skill").write_bytes((repo / "dist" / "deep.skill")
                                                       .read_bytes())
    shown = ok("digest", repo)
    said = [line for line in shown.stderr.splitlines() if "archive" in line]
    assert said == [f"skillpack: skipped 501 archives in {repo / 'dist'}/ (archives below the "
                    "folder given: give them, or their folder, to read them)"]


def test_a_path_holding_nothing_says_what_was_looked_for(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    for command in ("check", "digest", "files", "programs", "lint"):
        said = cli(command, tmp_path / "notes.txt")
        assert (said.exit_code, said.stderr) == (
            1, f"skillpack: no SKILL.md found in {tmp_path / 'notes.txt'}\n"), command
        [item] = _json_failure(command, tmp_path / "notes.txt")
        assert "an archive (.skill, .bundle, .zip, .tar.gz, .tgz)" in item["hint"]
    for args in (["pack", "-o", tmp_path / "out"], ["verify"], ["lock", "-o", tmp_path / "l"],
                 ["inspect"], ["bundle", "-o", tmp_path / "b"], ["catalog"]):
        said = cli(*args[:1], tmp_path / "notes.txt", *args[1:])
        assert said.exit_code == 1 and "no SKILL.md found" in said.stderr, args


def _json_failure(command: str, path: Path) -> list[dict[str, Any]]:
    result = cli(command, "--json", path)
    assert result.exit_code == 1
    items: list[dict[str, Any]] = json.loads(result.stdout)
    return items


# -- what the removed quick paths' tests said of the commands ------------------------------------

def test_what_digest_prints_for_each_kind_of_path(tmp_path: Path,
                                                  shapes: dict[str, tuple[Path, Skills]]) -> None:
    out, _ = shapes["folder of archives"]
    said = ok("digest", FIXTURES / "waitlist", out)
    lines = said.stdout.splitlines()
    assert said.stderr == "" and len(lines) == 3
    assert lines[0] == f"{digest(FIXTURES / 'waitlist')}  waitlist"
    tampered = tmp_path / "tampered.skill"
    data = bytearray(shapes[".skill"][0].read_bytes())
    data[data.index(b"echo alpha")] ^= 0x20
    tampered.write_bytes(bytes(data))
    refused = cli("digest", tampered)
    assert (refused.exit_code, refused.stdout) == (1, "")
    assert refused.stderr.startswith("skillpack: error: ")
    (tmp_path / "empty").mkdir()
    empty = cli("digest", tmp_path / "empty")
    assert (empty.exit_code, empty.stdout, empty.stderr) == (
        1, "", f"skillpack: no SKILL.md found in {tmp_path / 'empty'}\n")


def test_a_name_with_control_characters_is_printed_escaped(tmp_path: Path) -> None:
    """`digest` does not validate: a name is printed as the skill has it, but escaped (as
    every skill text is), so it cannot redraw the terminal; JSON escapes it on its own."""
    skill = write_skill(tmp_path / "esc", '---\nname: "red\\e[31mx"\ndescription: d\n---\n')
    said = ok("digest", skill)
    assert said.stdout.endswith("  red\\x1b[31mx\n") and "\x1b" not in said.stdout


def test_a_second_pack_rewrites_nothing_and_a_refused_one_writes_nothing(
        tmp_path: Path) -> None:
    for at in range(3):
        _skill(tmp_path / "skills" / f"s{at}")
    out = tmp_path / "out"
    out.mkdir()
    (out / "theirs.skill").write_bytes(b"someone else's archive")
    first = ok("pack", tmp_path / "skills", "-o", out).stdout
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    second = ok("pack", tmp_path / "skills", "-o", out).stdout
    assert first.count("(packed)") == 3 and second.count("(unchanged, not rewritten)") == 3
    leaky = write_skill(tmp_path / "leaky", "---\nname: leaky\ndescription: Leaks.\n---\n",
                        {"notes.txt": "key = " + "AKIA" + "Q3EGRJ5DFDPQ7Z2N\n"})
    refused = cli("pack", tmp_path / "skills", leaky, "-o", out)
    assert refused.exit_code == 1 and "leaky" in refused.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_check_of_trees_pack_refuses(tmp_path: Path) -> None:
    fine = _skill(tmp_path / "mixed" / "fine")
    write_skill(tmp_path / "mixed" / "leaky", "---\nname: leaky\ndescription: Leaks.\n---\n",
                {"notes.txt": "key = " + "AKIA" + "Q3EGRJ5DFDPQ7Z2N\n"})
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "SKILL.md").symlink_to(fine / "SKILL.md")
    (tmp_path / "lower").mkdir()
    (tmp_path / "lower" / "skill.md").write_text("---\nname: lower\ndescription: x\n---\n")
    for tree, said in (("mixed", "checked 2 skills: 1 valid, 1 invalid"),
                       ("linked", "error: [symlink]"), ("lower", "[skill-md-case]")):
        result = cli("check", tmp_path / tree)
        assert result.exit_code == 1 and said in result.stdout, (tree, result.output)
    assert ok("check", "--strict", "--strict", fine).stdout.splitlines()[-1].startswith(
        "checked 1 skill: 1 valid")


# -- many skills, shared among processes ------------------------------------------------------

@pytest.mark.parametrize("command", ["check", "digest"])
def test_many_skills_in_processes_say_what_one_process_says(tmp_path: Path,
                                                            command: str) -> None:
    """`check` and `digest` of many skill folders do them in several processes
    (``SKILLPACK_JOBS``, `skillpack.packing.check.in_processes`): the same output, in text and
    JSON, and the same exit code, as one process; the refused skill is reported in turn."""
    for at in range(20):
        _skill(tmp_path / "skills" / f"s{at:02}")
    write_skill(tmp_path / "skills" / "leaky", "---\nname: leaky\ndescription: Leaks.\n---\n",
                {"notes.txt": "key = " + "AKIA" + "Q3EGRJ5DFDPQ7Z2N\n"})
    said = {}
    for jobs in ("1", "2"):
        env = {**os.environ, "PYTHONPATH": str(REPO), "SKILLPACK_JOBS": jobs}
        said[jobs] = [subprocess.run([sys.executable, "-m", "skillpack", command, *flags,
                                      str(tmp_path / "skills")], env=env, capture_output=True,
                                     text=True, check=False) for flags in ([], ["--json"])]
        assert [done.returncode for done in said[jobs]] == [1, 1]
        if command == "check":
            assert "checked 21 skills: 20 valid, 1 invalid" in said[jobs][0].stdout
        else:
            assert said[jobs][0].stdout.count("blake3:") == 20
            assert "leaky" in said[jobs][0].stderr
    assert [(d.stdout, d.stderr) for d in said["1"]] == [(d.stdout, d.stderr) for d in said["2"]]
