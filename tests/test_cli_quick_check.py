"""`skillpack check` with plain arguments runs without click (skillpack.cli.quick_argv), and
says exactly what the click command says: same stdout, same stderr, same exit code, on the
fixtures, on hostile trees made here, and on argument lists click must read itself.

Each case runs twice as a real process: ``python -m skillpack check ...`` (the quick path
where the arguments allow it) and the click group on the same arguments
(`skillpack.cli.group.invoke`, what every argument list went through before).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO, write_skill

from skillpack.cli.quick_argv import QuickCommand, parse_quick

_ENV = dict(os.environ, PYTHONPATH=str(REPO))
CLICK = ("import sys; from skillpack.cli.group import invoke; code = invoke(sys.argv[1:]); "
          "sys.stdout.flush(); sys.exit(code)")
QUICK = ("import sys; from skillpack.cli import outcome; code = outcome(sys.argv[1:]); "
          "sys.stdout.flush(); assert 'click' not in sys.modules, 'click was imported'; "
          "sys.exit(code)")


def run_child(source: str, args: list[str], cwd: Path) -> tuple[int, str, str]:
    """`source` run as a fresh process with `args` (skillpack from this repository): its exit
    code, stdout and stderr (tests/test_cli_quick_digest.py runs its cases so too)."""
    done = subprocess.run([sys.executable, "-c", source, *args], cwd=cwd, env=_ENV,
                          capture_output=True, text=True, check=False)
    return done.returncode, done.stdout, done.stderr


def _hostile(root: Path) -> dict[str, Path]:
    """Trees `pack` refuses and `check` must report: a secret, a linked SKILL.md, a
    lowercase skill.md, a folder of skills mixing them with a good one."""
    ok = write_skill(root / "mixed" / "fine", "---\nname: fine\ndescription: Use when a test "
                     "needs a valid skill.\n---\n\nBody.\n")
    secret = write_skill(root / "mixed" / "leaky", "---\nname: leaky\ndescription: Use when "
                         "a test needs a refused skill.\n---\n\nBody.\n",
                         {"notes.txt": "key = " + "AKIA" + "Q3EGRJ5DFDPQ7Z2N\n"})
    (secret / ".env").write_text("TOKEN=" + "x" * 20 + "\n")
    linked = root / "linked"
    linked.mkdir()
    (linked / "SKILL.md").symlink_to(ok / "SKILL.md")
    lower = root / "lower"
    lower.mkdir()
    (lower / "skill.md").write_text("---\nname: lower\ndescription: x\n---\n")
    empty = root / "empty"
    empty.mkdir()
    return {"ok": ok, "secret": secret, "linked": linked, "lower": lower, "empty": empty,
            "mixed": root / "mixed"}


_CASES = [
    ["check", "{F}/waitlist"],
    ["check", "{F}/waitlist/SKILL.md"],
    ["check", "{F}/broken"],
    ["check", "--json", "{F}/broken"],
    ["check", "--strict", "{F}/lint"],
    ["check", "{F}/lint", "--strict", "--json"],
    ["check", "{F}/approver", "{F}/waitlist", "{F}/waitlist"],
    ["check", "{F}"],
    ["check", "--json", "{F}"],
    ["check", "{H}/secret"],
    ["check", "--json", "{H}/secret"],
    ["check", "{H}/linked"],
    ["check", "{H}/lower"],
    ["check", "--json", "{H}/lower"],
    ["check", "{H}/empty"],
    ["check", "--json", "{H}/empty", "{H}/ok"],
    ["check", "{H}/mixed"],
    ["check", "--strict", "--strict", "{H}/ok"],
    # read by click: an option with a value, --lint, --help, a missing path, `--`
    ["check", "--target", "claude-code", "{F}/waitlist"],
    ["check", "--lint", "{F}/waitlist"],
    ["check", "--help"],
    ["check", "{H}/missing"],
    ["check", "--json", "{H}/missing"],
    ["check", "--", "{F}/waitlist"],
    ["check"],
]


@pytest.mark.parametrize("case", _CASES, ids=[" ".join(c) for c in _CASES])
def test_the_quick_path_prints_what_click_prints(tmp_path: Path, case: list[str]) -> None:
    trees = tmp_path / "trees"
    _hostile(trees)
    args = [a.replace("{F}", str(FIXTURES)).replace("{H}", str(trees)) for a in case]
    quick_source = QUICK if parse_quick(args, os.environ) is not None else (
        "import sys; from skillpack.cli import outcome; sys.exit(outcome(sys.argv[1:]))")
    quick = run_child(quick_source, args, tmp_path)
    click = run_child(CLICK, args, tmp_path)
    assert quick == click
    assert quick[0] in (0, 1, 2)
    assert "Traceback" not in quick[2]


def test_plain_argument_lists_are_read_and_others_are_left_to_click(tmp_path: Path) -> None:
    ok = write_skill(tmp_path / "ok", "---\nname: ok\ndescription: d\n---\n")
    env: dict[str, str] = {}
    assert parse_quick(["check", str(ok)], env) == QuickCommand(
        command="check", paths=(str(ok),), flags={"strict": False, "as_json": False})
    assert parse_quick(["check", "--json", str(ok), "--strict", str(ok)], env) == QuickCommand(
        command="check", paths=(str(ok), str(ok)), flags={"strict": True, "as_json": True})
    for args in (["check"], ["check", "--json"], ["pack", str(ok)], [str(ok), "check"],
                 ["check", "--lint", str(ok)], ["check", "-h", str(ok)],
                 ["check", "--target", "claude-code", str(ok)], ["check", "--", str(ok)],
                 ["check", "--strict=1", str(ok)], ["check", str(tmp_path / "no")],
                 ["check", ""], ["check", "-"], ["check", "a\x00b"], ["--version"], []):
        assert parse_quick(args, env) is None, args
    assert parse_quick(["check", str(ok)], {"_SKILLPACK_COMPLETE": "bash_complete"}) is None


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file: no unreadable path")
def test_an_unreadable_path_is_left_to_click(tmp_path: Path) -> None:
    ok = write_skill(tmp_path / "ok", "---\nname: ok\ndescription: d\n---\n")
    ok.chmod(0o000)
    try:
        assert parse_quick(["check", str(ok)], {}) is None
    finally:
        ok.chmod(0o755)


def test_the_pre_commit_entry_takes_the_quick_path(tmp_path: Path) -> None:
    """The hook's entry (skillpack-pre-commit-check) maps files to skills and checks them
    without importing click; a broken skill still fails it."""
    ok = write_skill(tmp_path / "ok", "---\nname: ok\ndescription: d\n---\n")
    source = ("import sys; from skillpack.__main__ import precommit_check; "
              "code = precommit_check(sys.argv[1:]); "
              "assert 'click' not in sys.modules, 'click was imported'; sys.exit(code)")
    assert run_child(source, [str(ok / "SKILL.md")], tmp_path)[0] == 0
    broken = FIXTURES / "broken" / "description-too-long"
    code, out, _ = run_child(source, [str(broken / "SKILL.md")], tmp_path)
    assert code == 1
    assert "description-too-long" in out


def test_check_of_a_usual_skill_imports_only_what_it_uses(tmp_path: Path) -> None:
    """Start-up (issue 12): `check` of a skill with a script and a data file, as a pre-commit
    hook runs it, loads neither click nor the modules imported only where they are used
    (docs/ARCHITECTURE.md, "Start-up costs are paid by what uses them")."""
    deferred = ("click", "typing", "threading", "queue", "tarfile", "zipfile", "hashlib",
                "base64", "yaml", "pathspec", "json")
    source = ("import sys; from skillpack.cli import outcome; code = outcome(sys.argv[1:]); "
              f"print(sorted(set({deferred!r}) & set(sys.modules)), file=sys.stderr); "
              "sys.exit(code)")
    code, out, err = run_child(source, ["check", str(FIXTURES / "waitlist")], tmp_path)
    assert (code, out) == (0, "checked 1 skill: 1 valid, 0 invalid (0 errors, 0 warnings)\n")
    assert err == "[]\n"
