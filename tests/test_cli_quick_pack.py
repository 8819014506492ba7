"""`skillpack pack PATH... -o DIR [--json]` off a terminal runs without click
(skillpack.cli.quick_argv, skillpack.cli.pack_report), and does exactly what the click command
does: the same stdout, stderr and exit code, and the same archives in DIR, on valid skills,
a folder of skills, a refused skill (nothing written), a folder that exists and holds an
archive already (left as it is), packed twice (unchanged), and on argument lists click must
read itself (``-o -``, ``-o`` naming a file, an option glued to its value, ``--target``...).

Each case runs twice as a real process, each into a folder of its own: ``skillpack pack ...``
through `skillpack.cli.outcome` (the quick path where the arguments allow it), and through the
click group on the same arguments (`skillpack.cli.group.invoke`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import FIXTURES, write_skill
from test_cli_quick_check import CLICK, QUICK, run_child

from skillpack.cli.quick_argv import QuickCommand, parse_quick

_ANY = "import sys; from skillpack.cli import outcome; sys.exit(outcome(sys.argv[1:]))"

_CASES = [
    ["pack", "{F}/waitlist", "-o", "{O}"],
    ["pack", "{F}/waitlist", "{F}/release-notes", "--out", "{O}", "--json"],
    ["pack", "--json", "-o", "{O}", "{F}/waitlist"],
    ["pack", "{T}/skills", "-o", "{O}"],
    ["pack", "{T}/skills", "-o", "{O}", "--json"],
    ["pack", "{T}/skills", "{T}/leaky", "-o", "{O}"],
    ["pack", "{T}/skills", "{T}/leaky", "-o", "{O}", "--json"],
    ["pack", "{F}/waitlist", "-o", "{O}/deeper/still"],
    ["pack", "{T}/skills", "-o", "{O}", "--json", "--json"],
    # read by click: a file as the folder, -o -, glued values, two -o, no -o, other options
    ["pack", "{F}/waitlist", "-o", "{T}/a-file"],
    ["pack", "{F}/waitlist", "-o", "-"],
    ["pack", "{F}/waitlist", "-o{O}"],
    ["pack", "{F}/waitlist", "--out={O}"],
    ["pack", "{F}/waitlist", "-o", "{O}", "-o", "{O}"],
    ["pack", "{F}/waitlist"],
    ["pack", "{F}/waitlist", "-o"],
    ["pack", "{F}/waitlist", "-o", "{O}", "--target", "claude-code"],
    ["pack", "{T}/missing", "-o", "{O}"],
    ["pack", "--help"],
]


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Made once: a folder of ten valid skills, a refused skill (a secret), a plain file."""
    root = tmp_path_factory.mktemp("pack")
    for at in range(10):
        write_skill(root / "skills" / f"s{at}", f"---\nname: s{at}\ndescription: Use when a "
                    f"test needs skill {at}.\n---\n\nBody {at}.\n",
                    {f"references/r{n}.md": f"text {at} {n}\n" for n in range(at % 3)})
    write_skill(root / "leaky", "---\nname: leaky\ndescription: Use when a test needs a "
                "refused skill.\n---\n\nBody.\n",
                {"notes.txt": "key = " + "AKIA" + "Q3EGRJ5DFDPQ7Z2N\n"})
    (root / "a-file").write_text("not a folder\n")
    return root


def _made(folder: Path) -> dict[str, bytes]:
    return ({str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
             if p.is_file()} if folder.exists() else {})


def _run(source: str, case: list[str], trees: Path, out: Path,
         cwd: Path) -> tuple[int, str, str, dict[str, bytes]]:
    args = [a.replace("{F}", str(FIXTURES)).replace("{T}", str(trees)).replace("{O}", str(out))
            for a in case]
    code, stdout, stderr = run_child(source, args, cwd)
    return (code, stdout.replace(str(out), "OUT"), stderr.replace(str(out), "OUT"),
            _made(out))


@pytest.mark.parametrize("case", _CASES, ids=[" ".join(c) for c in _CASES])
def test_the_quick_path_packs_what_click_packs(trees: Path, tmp_path: Path,
                                               case: list[str]) -> None:
    args = [a.replace("{F}", str(FIXTURES)).replace("{T}", str(trees)).replace(
        "{O}", str(tmp_path / "quick")) for a in case]
    quick_source = QUICK if parse_quick(args, os.environ) is not None else _ANY
    quick = _run(quick_source, case, trees, tmp_path / "quick", tmp_path)
    click = _run(CLICK, case, trees, tmp_path / "click", tmp_path)
    assert quick == click
    assert quick[0] in (0, 1, 2)
    assert "Traceback" not in quick[2]


def test_a_second_pack_leaves_the_archives_as_they_are(trees: Path, tmp_path: Path) -> None:
    """Packed twice into a folder that already holds an archive of someone else: the second
    run rewrites nothing, and the other file is kept."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "theirs.skill").write_bytes(b"someone else's archive")
    first = run_child(QUICK, ["pack", str(trees / "skills"), "-o", str(out)], tmp_path)
    before = _made(out)
    second = run_child(QUICK, ["pack", str(trees / "skills"), "-o", str(out)], tmp_path)
    assert first[0] == second[0] == 0
    assert first[1].count("(packed)") == 10
    assert second[1].count("(unchanged, not rewritten)") == 10
    assert _made(out) == before and before["theirs.skill"] == b"someone else's archive"
    refused = run_child(QUICK, ["pack", str(trees / "skills"), str(trees / "leaky"), "-o",
                                str(out)], tmp_path)
    assert refused[0] == 1 and "leaky" in refused[2]
    assert _made(out) == before


def test_plain_pack_lists_are_read_and_others_are_left_to_click(trees: Path,
                                                                tmp_path: Path) -> None:
    skill, out = str(trees / "skills" / "s1"), str(tmp_path / "out")
    env: dict[str, str] = {}
    if os.isatty(2):
        pytest.skip("stderr is a terminal here: pack's quick path is off (its progress bar)")
    assert parse_quick(["pack", skill, "-o", out], env) == QuickCommand(
        command="pack", paths=(skill,), flags={"as_json": False, "out_dir": out})
    assert parse_quick(["pack", "--json", "--out", out, skill, skill], env) == QuickCommand(
        command="pack", paths=(skill, skill), flags={"as_json": True, "out_dir": out})
    for args in (["pack", skill], ["pack", "-o", out], ["pack", skill, "-o"],
                 ["pack", skill, "-o", "-"], ["pack", skill, "-o", ""],
                 ["pack", skill, "-o", str(trees / "a-file")], ["pack", skill, f"-o{out}"],
                 ["pack", skill, f"--out={out}"], ["pack", skill, "-o", out, "-o", out],
                 ["pack", skill, "-o", out, "--layout", "root"], ["pack", skill, "-o", "--json"]):
        assert parse_quick(args, env) is None, args
