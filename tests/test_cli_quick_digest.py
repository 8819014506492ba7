"""`skillpack digest` with plain arguments runs without click (skillpack.cli.quick_argv), and
says exactly what the click command says: same stdout, same stderr, same exit code, on skill
folders, folders of skills, invalid skills, archives (ours, a bundle, a tampered one, a
foreign zip), a folder of archives, a PATH with no SKILL.md, and on argument lists click must
read itself.

Each case runs twice as a real process: ``skillpack digest ...`` through `skillpack.cli.outcome`
(the quick path where the arguments allow it) and through the click group on the same
arguments (`skillpack.cli.group.invoke`, what every argument list went through before).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO, write_skill
from test_cli_quick_check import CLICK, QUICK, run_child

from skillpack.cli.quick_argv import QuickCommand, parse_quick

_ANY = "import sys; from skillpack.cli import outcome; sys.exit(outcome(sys.argv[1:]))"


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Made once: archives packed by `skillpack pack`, a bundle, a tampered archive, a
    foreign zip, a refused skill (a secret), a folder with no SKILL.md."""
    root = tmp_path_factory.mktemp("digest")
    pack = run_child(_ANY, ["pack", str(FIXTURES / "waitlist"), str(FIXTURES / "release-notes"),
                       "-o", str(root / "out")], root)
    assert pack[0] == 0, pack
    bundle = run_child(_ANY, ["bundle", str(FIXTURES / "waitlist"), str(FIXTURES / "release-notes"),
                         "-o", str(root / "two.bundle")], root)
    assert bundle[0] == 0, bundle
    archive = sorted((root / "out").glob("waitlist-*.skill"))[0]
    (root / "one.skill").write_bytes(archive.read_bytes())
    data = bytearray(archive.read_bytes())
    at = data.index(b"waitlist", 200)  # a byte of a member's content, past the first header
    data[at] ^= 0x20
    (root / "tampered.skill").write_bytes(bytes(data))
    with zipfile.ZipFile(root / "foreign.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("theirs/SKILL.md", "---\nname: theirs\ndescription: Use when a test "
                    "needs a foreign archive.\n---\n\nBody.\n")
    write_skill(root / "leaky", "---\nname: leaky\ndescription: Use when a test needs a "
                "refused skill.\n---\n\nBody.\n",
                {"notes.txt": "key = " + "AKIA" + "Q3EGRJ5DFDPQ7Z2N\n"})
    (root / "empty").mkdir()
    (root / "empty" / "README.md").write_text("no skill here\n")
    return root


_CASES = [
    ["digest", "{F}/waitlist"],
    ["digest", "{F}/waitlist/SKILL.md"],
    ["digest", "--json", "{F}/waitlist"],
    ["digest", "{F}"],
    ["digest", "{F}", "--json"],
    ["digest", "{F}/broken"],
    ["digest", "--json", "{F}/broken"],
    ["digest", "{F}/broken/frontmatter-unterminated"],
    ["digest", "--json", "{F}/broken/frontmatter-unterminated"],
    ["digest", "{T}/one.skill"],
    ["digest", "--json", "{T}/one.skill"],
    ["digest", "{T}/out"],
    ["digest", "--json", "{T}/out"],
    ["digest", "{T}/two.bundle"],
    ["digest", "--json", "{T}/two.bundle"],
    ["digest", "{T}/tampered.skill"],
    ["digest", "--json", "{T}/tampered.skill"],
    ["digest", "{T}/foreign.zip"],
    ["digest", "--json", "{T}/foreign.zip"],
    ["digest", "{T}/leaky"],
    ["digest", "--json", "{T}/leaky"],
    ["digest", "{T}/empty"],
    ["digest", "--json", "{T}/empty", "{F}/waitlist"],
    ["digest", "{F}/waitlist", "{F}/waitlist/SKILL.md", "{F}/waitlist"],
    ["digest", "--json", "{F}/waitlist", "{F}/waitlist/SKILL.md"],
    ["digest", "{T}/one.skill", "{T}/out", "{T}/one.skill"],
    ["digest", "--json", "--json", "{F}/waitlist"],
    # read by click: --help, an unknown option, a missing path, `--`, no PATH
    ["digest", "--help"],
    ["digest", "--strict", "{F}/waitlist"],
    ["digest", "{T}/missing"],
    ["digest", "--json", "{T}/missing"],
    ["digest", "--", "{F}/waitlist"],
    ["digest"],
    ["digest", "--json"],
]


@pytest.mark.parametrize("case", _CASES, ids=[" ".join(c) for c in _CASES])
def test_the_quick_path_prints_what_click_prints(trees: Path, tmp_path: Path,
                                                 case: list[str]) -> None:
    args = [a.replace("{F}", str(FIXTURES)).replace("{T}", str(trees)) for a in case]
    quick_source = QUICK if parse_quick(args, os.environ) is not None else _ANY
    quick = run_child(quick_source, args, tmp_path)
    click = run_child(CLICK, args, tmp_path)
    assert quick == click
    assert quick[0] in (0, 1, 2)
    assert "Traceback" not in quick[2]


def test_what_digest_prints_for_each_kind_of_path(trees: Path, tmp_path: Path) -> None:
    """The quick path's answers themselves: a digest line a skill, archives verified, a
    tampered archive refused, a PATH with no skill said on stderr."""
    code, out, err = run_child(QUICK, ["digest", str(FIXTURES / "waitlist"), str(trees / "out")],
                          tmp_path)
    folder = run_child(QUICK, ["digest", str(FIXTURES / "release-notes")], tmp_path)[1]
    lines = out.splitlines()
    assert (code, err, len(lines)) == (0, "", 3)
    assert lines[0].startswith("blake3:") and lines[0].endswith("  waitlist")
    # each archive of the folder of archives digests as the folder it was made from
    assert sorted(lines[1:]) == sorted([folder.rstrip("\n"), lines[0]])
    code, out, err = run_child(QUICK, ["digest", str(trees / "tampered.skill")], tmp_path)
    assert (code, out) == (1, "")
    assert err.startswith("skillpack: error: ")
    code, out, err = run_child(QUICK, ["digest", str(trees / "empty")], tmp_path)
    assert (code, out, err) == (1, "", f"skillpack: no SKILL.md found in {trees / 'empty'}\n")


def test_a_name_with_control_characters_is_printed_escaped(tmp_path: Path) -> None:
    """`digest` does not validate: a name is printed as the skill has it, but escaped (as
    every skill text is), so it cannot redraw the terminal; JSON escapes it on its own."""
    skill = write_skill(tmp_path / "esc", '---\nname: "red\\e[31mx"\ndescription: d\n---\n')
    code, out, _ = run_child(QUICK, ["digest", str(skill)], tmp_path)
    assert code == 0
    assert out.endswith("  red\\x1b[31mx\n")
    assert "\x1b" not in out


def test_plain_digest_lists_are_read_and_others_are_left_to_click(tmp_path: Path) -> None:
    ok = write_skill(tmp_path / "ok", "---\nname: ok\ndescription: d\n---\n")
    archive = tmp_path / "a.skill"
    archive.write_bytes(b"PK")
    env: dict[str, str] = {}
    assert parse_quick(["digest", str(ok)], env) == QuickCommand(
        command="digest", paths=(str(ok),), flags={"as_json": False})
    assert parse_quick(["digest", "--json", str(ok), str(archive)], env) == QuickCommand(
        command="digest", paths=(str(ok), str(archive)), flags={"as_json": True})
    for args in (["digest"], ["digest", "--json"], ["digest", "--strict", str(ok)],
                 ["digest", "-h", str(ok)], ["digest", "--help"], ["digest", "--", str(ok)],
                 ["digest", "--json=1", str(ok)], ["digest", str(tmp_path / "no")],
                 ["digest", ""], ["digest", "-"], ["digest", "a\x00b"], [str(ok), "digest"],
                 ["Digest", str(ok)], ["files", str(ok)]):
        assert parse_quick(args, env) is None, args
    assert parse_quick(["digest", str(ok)], {"_SKILLPACK_COMPLETE": "bash_complete"}) is None


def test_digest_of_a_skill_folder_imports_only_what_it_uses(tmp_path: Path) -> None:
    """Start-up: `digest` of a skill folder loads neither click nor the archive readers
    (the verifier, foreign archives, their temp folders and threads) nor what `check` of a
    usual skill does not load either."""
    deferred = ("click", "typing", "threading", "queue", "tarfile", "zipfile", "hashlib",
                "base64", "yaml", "pathspec", "json", "tempfile", "shutil", "logging",
                "skillpack.packing.verify", "skillpack.source.inputs", "skillpack.source.foreign",
                "skillpack.cli.commands_walk")
    source = ("import sys; from skillpack.cli import outcome; code = outcome(sys.argv[1:]); "
              f"print(sorted(set({deferred!r}) & set(sys.modules)), file=sys.stderr); "
              "sys.exit(code)")
    code, out, err = run_child(source, ["digest", str(FIXTURES / "waitlist")], tmp_path)
    assert code == 0
    assert out.startswith("blake3:") and out.endswith("  waitlist\n")
    assert err == "[]\n"


@pytest.mark.parametrize("command", ["digest", "check"])
def test_skill_folders_are_read_without_pathlib(tmp_path: Path, command: str) -> None:
    """Start-up: pathlib, and the urllib.parse and ipaddress it imports (about 5 ms), are left
    out of `digest` and `check` of skill folders, however the PATHs are spelt (``.``, a
    trailing ``/``, ``./x//y``): `skillpack.source.pathtext` spells the folders as pathlib
    would. Run without `site` (the dev install's finder imports pathlib at every start),
    skillpack and its dependencies on ``sys.path`` by hand."""
    root = tmp_path / "skills"
    for name in ("one", "two-b", "two"):
        write_skill(root / name, f"---\nname: {name}\ndescription: Use when a test needs "
                    "a skill.\n---\n\nBody.\n", {"scripts/run.sh": "#!/bin/sh\necho\n"})
    (root / "two" / "b").mkdir()  # two/b/... sorts before two-b as Paths do
    write_skill(root / "two" / "b" / "deep", "---\nname: deep\ndescription: Use when a "
                "test needs a skill.\n---\n\nBody.\n")
    paths = [p for p in sys.path if p.endswith("site-packages")]
    source = (f"import sys; sys.path[:0] = {[str(REPO), *paths]!r}\n"
              "from skillpack.cli import outcome; code = outcome(sys.argv[1:])\n"
              "sys.stdout.flush()\n"
              "print(sorted({'pathlib', 'urllib.parse', 'ipaddress'} & set(sys.modules)), "
              "file=sys.stderr); sys.exit(code)")
    for args in (["."], ["./"], [".//two"], ["one", "two-b/", "./two/b/deep/SKILL.md"]):
        done = subprocess.run([sys.executable, "-S", "-c", source, command, "--json", *args],
                              cwd=root, capture_output=True, text=True, check=False)
        assert (done.returncode, done.stderr) == (0, "[]\n"), (args, done)
        found = [(d["name"], d["path"]) for d in json.loads(done.stdout)]
        expected = [(Path(p).name if Path(p).name != "SKILL.md" else Path(p).parent.name,
                     str(p)) for p in _pathlib_folders(root, args)]
        assert found == expected, args


def _pathlib_folders(root: Path, args: list[str]) -> list[Path]:
    """The folders `digest --json` lists for `args`, as pathlib spells and sorts them (what
    `skillpack.source.discover.find_skills` returns)."""
    from skillpack.source.discover import find_skills

    cwd = os.getcwd()
    os.chdir(root)
    try:
        return [f for arg in args for f in sorted(find_skills(arg))]  # as Paths sort
    finally:
        os.chdir(cwd)
