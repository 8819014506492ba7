"""One verdict: `skillpack check` exits 0 if and only if `skillpack pack` succeeds.

Over every fixture and over hostile trees generated from them (links, a SKILL.md that is a
link, `.env`, PEM keys, fifos, unportable and colliding names, broken frontmatter), both
commands run through the command line; `check` lists every problem `pack` refuses with.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from click.testing import CliRunner, Result
from conftest import FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillpack.cli import main

_BASES = sorted(
    str(p.parent.relative_to(FIXTURES)) for p in FIXTURES.glob("**/SKILL.md")
    if p.is_file() and not p.is_symlink()
)

_PEM = "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEabc\n-----END " + "RSA PRIVATE KEY-----\n"


def _symlink(root: Path) -> None:
    os.symlink("SKILL.md", root / "link.md")


def _skill_md_link(root: Path) -> None:
    real = root.parent / "elsewhere.md"
    (root / "SKILL.md").replace(real)
    os.symlink(real, root / "SKILL.md")


def _env(root: Path) -> None:
    (root / ("." + "env")).write_text("TOKEN=1\n")


def _pem(root: Path) -> None:
    (root / "notes.txt").write_text("keep this\n" + _PEM)


def _fifo(root: Path) -> None:
    os.mkfifo(root / "pipe")


def _bad_name(root: Path) -> None:
    (root / "back\\slash.txt").write_text("x\n")


def _twins(root: Path) -> None:
    (root / "Readme.txt").write_text("a\n")
    (root / "README.TXT").write_text("b\n")


def _bad_frontmatter(root: Path) -> None:
    (root / "SKILL.md").write_text("---\nname: [unclosed\n---\nbody\n")


def _no_includes(root: Path) -> None:  # every file walked, not just the listed ones
    skill_md = root / "SKILL.md"
    if skill_md.is_file() and not skill_md.is_symlink():
        lines = skill_md.read_bytes().split(b"\n")
        skill_md.write_bytes(b"\n".join(x for x in lines if not x.startswith(b"includes:")))


def _pem_and_env(root: Path) -> None:  # the refusals that used to come in rounds
    _env(root)
    _pem(root)


HOSTILE = {f.__name__: f for f in (_symlink, _skill_md_link, _env, _pem, _fifo, _bad_name,
                                   _twins, _bad_frontmatter, _pem_and_env, _no_includes)}


def cli(*args: object) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"skillpack {args} raised") from result.exception
    assert "Traceback" not in result.output
    return result


def _verdicts(base: str, hostile: list[str]) -> tuple[Result, Result, Path]:
    work = Path(tempfile.mkdtemp())
    try:
        root = work / "src" / Path(base).name
        shutil.copytree(FIXTURES / base, root, symlinks=True)
        for name in hostile:
            HOSTILE[name](root)
        checked = cli("check", root)
        packed = cli("pack", root, "-o", work / "out")
        return checked, packed, work
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(_BASES),
       hostile=st.lists(st.sampled_from(sorted(HOSTILE)), unique=True, max_size=4))
def test_check_exits_0_iff_pack_succeeds(base: str, hostile: list[str]) -> None:
    checked, packed, work = _verdicts(base, hostile)
    try:
        assert checked.exit_code in (0, 1) and packed.exit_code in (0, 1)
        assert (checked.exit_code == 0) == (packed.exit_code == 0), (
            base, hostile, checked.output, packed.output)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_every_fixture_gets_one_verdict() -> None:
    assert len(_BASES) > 20
    for base in _BASES:
        checked, packed, work = _verdicts(base, [])
        shutil.rmtree(work, ignore_errors=True)
        assert (checked.exit_code == 0) == (packed.exit_code == 0), (base, checked.output,
                                                                     packed.output)


def test_check_lists_every_refusal_at_once(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "SKILL.md").write_text("---\nname: notes\ndescription: Keep notes in a file.\n"
                                   "---\nWrite notes.\n")
    for name in ("_symlink", "_env", "_pem", "_fifo"):
        HOSTILE[name](root)
    result = cli("check", root)
    assert result.exit_code == 1
    for shown in (f"{root / '.env'}: error: [secret]", f"{root / 'notes.txt'}: error: [secret]",
                  f"{root / 'link.md'}: error: [symlink]",
                  f"{root / 'pipe'}: error: [special-file]"):
        assert shown in result.output
    assert "0 valid, 1 invalid (4 errors" in result.output
