"""The build commands as a user runs them: `pack`, `inspect`, `digest` on archives, exit codes."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import cli, only_archive
from helpers.paths import NOTES, TOO_LONG, WAITLIST
from helpers.skills import make_skill
from helpers.zips import zip_members

from skillpack.packing.pack import pack
from skillpack.packing.verify import digest


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    [made] = pack(WAITLIST, tmp_path_factory.mktemp("cli"))
    return made


# -- inspect ------------------------------------------------------------------------------------

def test_inspect_shows_name_digest_files_programs_tools_allowances(archive: Path) -> None:
    result = cli("inspect", archive)
    assert result.exit_code == 0 and result.stderr == ""
    manifest = json.loads(zip_members(archive.read_bytes())["waitlist/.skillpack/manifest.json"][0])
    files = [f"  {f['mode']} {f['size']:>9} {f['blake3'][:16]}  {f['path']}"
             for f in manifest["files"]]
    assert result.stdout.splitlines() == [
        f"{archive}: archive of one skill",
        "",
        "name:        waitlist",
        f"digest:      {digest(WAITLIST)}",
        f"description: {manifest['description']}",
        "files (3):",
        *files,
        "programs (2):",
        "  awk  from tool:count",
        "  python3  from shebang:scripts/waitlist.py, tool:access, tool:join, tool:list",
        "tools (4):",
        "  join(email, note): Add a person to the waitlist.",
        "  list(limit, status): List waitlist entries.",
        "  access(email, operation): Accept or reject a waitlist entry.",
        "  count(status): Count entries with a given status.",
        "allowances: none",
    ]
    assert files[2].startswith("  100755      1609 ") and files[2].endswith("scripts/waitlist.py")


def test_inspect_json_is_the_manifest(archive: Path) -> None:
    result = cli("inspect", "--json", archive)
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    manifest = json.loads(zip_members(archive.read_bytes())["waitlist/.skillpack/manifest.json"][0])
    assert data["target"] == str(archive) and data["kind"] == "archive"
    assert data["skills"] == [manifest]
    [skill] = data["skills"]
    assert skill["name"] == "waitlist" and skill["digest"] == digest(WAITLIST)
    assert [f["path"] for f in skill["files"]] == ["SKILL.md", "data/waitlist.csv",
                                                  "scripts/waitlist.py"]
    assert [p["name"] for p in skill["programs"]] == ["awk", "python3"]
    assert [t["id"] for t in skill["tools"]] == ["join", "list", "access", "count"]
    assert skill["allowances"] == []


def test_inspect_shows_allowances_and_dynamic_programs(tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "certs", {"ca/public.pem": "-----BEGIN CERTIFICATE-----\n"})
    (folder / "SKILL.md").write_text(textwrap_skill())
    [made] = pack(folder, tmp_path / "out")
    result = cli("inspect", made)
    assert result.exit_code == 0, result.output
    assert "allowances: ca/public.pem" in result.stdout.splitlines()
    assert "  $cmd (dynamic)  from tool:run-any" in result.stdout.splitlines()
    data = json.loads(cli("inspect", "--json", made).stdout)
    assert data["skills"][0]["allowances"] == ["ca/public.pem"]


def textwrap_skill() -> str:
    return (
        "---\nname: certs\ndescription: Carries a public certificate, runs a chosen command.\n"
        "metadata:\n  skillpack-allow-secrets: ca/public.pem\n---\n\n"
        "```tool\nid: run-any\ndescription: Run a command.\nparams:\n  cmd:\n    type: string\n"
        "    description: The command.\nrun: $cmd\n```\n"
    )


def test_inspect_refuses_what_is_not_an_archive(tmp_path: Path) -> None:
    junk = tmp_path / "junk.skill"
    junk.write_bytes(b"PK\x03\x04 not really a zip")
    result = cli("inspect", junk)
    assert result.exit_code == 1 and result.stderr.startswith(f"skillpack: error: {junk}")
    assert cli("inspect", WAITLIST).exit_code == 0  # a folder: shown as it would be packed
    assert cli("inspect", tmp_path / "missing.skill").exit_code == 2


# -- pack ---------------------------------------------------------------------------------------

def test_pack_on_a_terminal_shows_a_bar_and_writes_the_same_archives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a terminal `pack` checks every skill first (the bar needs the total), off one it
    writes each skill as it is checked: the archives are the same bytes."""
    import io
    from types import SimpleNamespace

    from skillpack.cli.commands import pack as commands_pack

    plain = cli("pack", WAITLIST, NOTES, "-o", tmp_path / "plain")
    assert plain.exit_code == 0 and plain.stderr == ""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(commands_pack, "sys", SimpleNamespace(stderr=terminal))
    monkeypatch.setattr(commands_pack, "_PROGRESS_FROM", 0)  # even a short pack shows it
    barred = cli("pack", WAITLIST, NOTES, "-o", tmp_path / "bar")
    assert barred.exit_code == 0 and "packing" in terminal.getvalue()
    made = {p.name: p.read_bytes() for p in (tmp_path / "plain").iterdir()}
    assert made == {p.name: p.read_bytes() for p in (tmp_path / "bar").iterdir()}
    assert len(made) == 2

def test_pack_prints_each_archive(tmp_path: Path) -> None:
    result = cli("pack", WAITLIST, NOTES, "-o", tmp_path / "out")
    assert result.exit_code == 0 and result.stderr == ""  # no progress bar off a terminal
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    for line, source in zip(lines, (WAITLIST, NOTES), strict=True):
        path, value, sha, state = line.split("  ")
        assert value == digest(source) and state == "(packed)"
        assert sha == "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()
        assert Path(path).name.startswith(f"{source.name}-{value[7:23]}")
        assert Path(path).is_file()


def test_pack_exit_codes(tmp_path: Path) -> None:
    assert cli("pack", tmp_path / "missing", "-o", tmp_path / "out").exit_code == 2
    assert cli("pack", WAITLIST).exit_code == 2  # no -o
    assert cli("pack", "-o", tmp_path / "out").exit_code == 2  # no path
    (tmp_path / "empty").mkdir()
    nothing = cli("pack", tmp_path / "empty", "-o", tmp_path / "out")
    assert nothing.exit_code == 1 and "no SKILL.md found" in nothing.stderr
    invalid = cli("pack", TOO_LONG, "-o", tmp_path / "out")
    assert invalid.exit_code == 1
    assert invalid.stderr.count("error: [description-too-long]") == 1
    assert not (tmp_path / "out").exists()


_ENTRY = "from skillpack.cli import main; main(prog_name='skillpack')"


def test_commands_in_a_real_process_never_print_a_traceback(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    junk = tmp_path / "junk.skill"
    junk.write_text("not an archive")
    cases = [
        ["pack", str(TOO_LONG), "-o", str(tmp_path / "out")],
        ["pack", str(WAITLIST), "-o", str(blocker / "sub")],
        ["bundle", str(WAITLIST), "-o", str(blocker / "sub" / "x.bundle")],
        ["lock", str(WAITLIST), "-o", str(blocker / "x.lock")],
        ["inspect", str(junk)],
        ["verify", str(junk)],
        ["digest", str(junk)],
    ]
    for args in cases:
        done = subprocess.run([sys.executable, "-c", _ENTRY, *args], capture_output=True,
                              text=True)
        assert done.returncode == 1, (args, done.stderr)
        assert "Traceback" not in done.stderr, args
        assert done.stderr.startswith("skillpack: error: "), (args, done.stderr)


# -- digest of an archive -----------------------------------------------------------------------

@pytest.mark.parametrize("which", ["waitlist", "release-notes", "one/skill-creator",
                                   "two/skill-creator"])
def test_digest_of_an_archive_equals_digest_of_its_folder(tmp_path: Path, which: str,
                                                          twins: tuple[Path, Path]) -> None:
    source = {"waitlist": WAITLIST, "release-notes": NOTES, "one/skill-creator": twins[0],
              "two/skill-creator": twins[1]}[which]
    [made] = pack(source, tmp_path)
    of_folder = cli("digest", source)
    of_archive = cli("digest", made)
    assert of_folder.exit_code == of_archive.exit_code == 0
    assert of_archive.stdout == of_folder.stdout == f"{digest(source)}  {source.name}\n"
    as_json = json.loads(cli("digest", "--json", made).stdout)
    assert as_json == [{"name": source.name, "path": str(made), "digest": digest(source)}]


def test_digest_of_a_tampered_archive_fails(tmp_path: Path) -> None:
    [made] = pack(WAITLIST, tmp_path)
    data = bytearray(made.read_bytes())
    data[data.index(b"email,note,status")] ^= 0x20
    made.write_bytes(bytes(data))
    result = cli("digest", made)
    assert result.exit_code == 1 and "data/waitlist.csv" in result.stderr
    assert only_archive(tmp_path) == made
