"""One verdict: `skillpack check` exits 0 if and only if `skillpack pack` succeeds.

Over every fixture and over hostile trees generated from them (links, a SKILL.md that is a
link, `.env`, PEM keys, fifos, unportable and colliding names, broken frontmatter), both
commands run through the command line; `check` lists every problem `pack` refuses with.
With --target (one host or several, --layout or none) and changes that break one host's
limits and not another's, both give one verdict with the same problems, in text and JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

from click.testing import Result
from helpers.cli import cli
from helpers.paths import FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skillpack.runtime as rt
from skillpack.packing.targets import TARGETS

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


def test_files_check_and_pack_list_the_same_problems(tmp_path: Path) -> None:
    """A SKILL.md without a description and a `.env` beside it: every command that refuses
    the skill lists both problems, not the first stage's alone."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "SKILL.md").write_text("---\nname: notes\n---\nWrite notes.\n")
    HOSTILE["_env"](root)
    listed = {}
    for command in (["files"], ["check"], ["pack", "-o", str(tmp_path / "out")]):
        result = cli(*command, "--json", root)
        assert result.exit_code == 1
        doc = json.loads(result.stdout)
        items = doc if isinstance(doc, list) else [doc]
        listed[command[0]] = sorted(p["code"] for item in items for p in item["problems"])
    assert listed == {command: ["description-missing", "secret"]
                      for command in ("files", "check", "pack")}


# -- with --target: one verdict for the hosts together ------------------------------------------
#
# Each host-shaped change breaks some hosts' limits and not others' (skillpack/packing/targets.py):
# 201 files (claude-ai's 200; openai-api's 500, mcp's 512), a nested SKILL.md (claude-ai and
# openai-api want exactly one), a 300-character description (claude-ai warns over 200), a long
# when_to_use (claude-code's 1,536-character listing budget; an unknown key for the spec and
# claude-ai). Every file is carried (no `includes:`) so that each change is measured.


def _many_files(root: Path) -> None:
    for i in range(201):
        (root / f"n{i:03}.txt").write_text(f"{i}\n")


def _nested_skill_md(root: Path) -> None:
    (root / "inner").mkdir(exist_ok=True)
    (root / "inner" / "SKILL.md").write_text("---\nname: inner\ndescription: Inner.\n---\nx\n")


def _frontmatter_line(root: Path, line: str) -> None:
    skill_md = root / "SKILL.md"
    if not skill_md.is_file() or skill_md.is_symlink():
        return
    text = skill_md.read_text(encoding="utf-8", errors="replace")
    if text.startswith("---\n"):
        skill_md.write_text("---\n" + line + "\n" + text[4:], encoding="utf-8")


def _long_description(root: Path) -> None:
    skill_md = root / "SKILL.md"
    if not skill_md.is_file() or skill_md.is_symlink():
        return
    lines = skill_md.read_text(encoding="utf-8", errors="replace").split("\n")
    skill_md.write_text("\n".join(
        "description: Use when " + "the notes need keeping " * 13 if x.startswith("description:")
        else x for x in lines), encoding="utf-8")


def _long_when_to_use(root: Path) -> None:
    _frontmatter_line(root, "when_to_use: " + "when notes pile up " * 85)


HOSTS = {f.__name__: f for f in (_many_files, _nested_skill_md, _long_description,
                                 _long_when_to_use)}


def _json(result: Result) -> Any:
    start = min(i for i in (result.output.find("["), result.output.find("{")) if i >= 0)
    return json.loads(result.output[start:])


def _problems(doc: Any, severity: str) -> Counter[tuple[str, str, str | None, int | None]]:
    """The problems of a `check --json` list, a `pack --json` failure or its results'
    warnings, as (code, message, file, line), counted."""
    found: list[dict[str, Any]] = []
    if isinstance(doc, dict):
        found = doc["problems"]
    else:
        for item in doc:
            found.extend(item.get("problems", []) + item.get("warnings", []))
    return Counter((p["code"], p["message"], p["file"], p["line"]) for p in found
                   if p["severity"] == severity)


def _host_verdicts(base: str, hostile: list[str], changes: list[str],
                   args: list[str]) -> list[Result]:
    with tempfile.TemporaryDirectory() as work:
        root = Path(work) / "src" / Path(base).name
        shutil.copytree(FIXTURES / base, root, symlinks=True)
        _no_includes(root)
        for name in changes:
            HOSTS[name](root)
        for name in hostile:
            HOSTILE[name](root)
        return [cli("check", root, *args, *json_flag) for json_flag in ([], ["--json"])] + [
            cli("pack", root, "-o", Path(work) / f"out{i}", *args, *json_flag)
            for i, json_flag in enumerate(([], ["--json"]))]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(_BASES),
       hostile=st.lists(st.sampled_from(["_env", "_bad_frontmatter", "_symlink", "_twins"]),
                        unique=True, max_size=1),
       changes=st.lists(st.sampled_from(sorted(HOSTS)), unique=True, max_size=3),
       hosts=st.lists(st.sampled_from(sorted(TARGETS)), unique=True, min_size=1, max_size=3),
       layout=st.sampled_from([None, "wrapped", "root"]))
def test_check_and_pack_give_one_verdict_for_the_targets(
        base: str, hostile: list[str], changes: list[str], hosts: list[str],
        layout: str | None) -> None:
    args = [x for h in hosts for x in ("--target", h)] + (["--layout", layout] if layout else [])
    checked, checked_json, packed, packed_json = _host_verdicts(base, hostile, changes, args)
    why = (base, hostile, changes, args, checked.output, packed.output)
    assert {checked.exit_code, packed.exit_code} <= {0, 1}, why
    assert checked.exit_code == packed.exit_code == checked_json.exit_code \
        == packed_json.exit_code, why
    check_doc, pack_doc = _json(checked_json), _json(packed_json)
    if packed.exit_code:  # what pack refuses with is exactly check's errors, each once
        errors = _problems(check_doc, "error")
        assert errors == _problems(pack_doc, "error"), why
        for (code, message, file, line), count in errors.items():
            shown = f"{file or '<skill>'}{'' if line is None else f':{line}'}: error: [{code}] "
            assert count == 1 and (shown + message in packed.output
                                   or message in packed.output.splitlines()[0]), why
        lines = packed.output.splitlines()
        assert len(lines) == len(set(lines)), why
    else:  # the hosts' warnings: the same in both
        warned = _problems(check_doc, "warning")
        assert Counter({k: n for k, n in warned.items() if k[0].startswith("target-")}) \
            == _problems(pack_doc, "warning"), why


def test_a_limit_one_host_has_fails_both_commands_only_for_that_host(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "SKILL.md").write_text("---\nname: notes\ndescription: Keep notes in a file.\n"
                                   "---\nWrite notes.\n")
    _many_files(root)
    for hosts, code in ((["claude-ai"], 1), (["openai-api", "mcp"], 0),
                        (["mcp", "claude-ai"], 1), (["codex"], 0)):
        args = [x for h in hosts for x in ("--target", h)]
        for command in ("check", "pack"):
            result = cli(command, root, *args, *(["-o", tmp_path / "out"] * (command == "pack")))
            assert result.exit_code == code, (command, hosts, result.output)
            # 201 files and SKILL.md: what is uploaded, no manifest (SPEC section 3b)
            assert result.output.count("[target-too-many-files] claude-ai: 202 files") == code


def test_the_archive_size_is_what_check_measures_too(tmp_path: Path) -> None:
    # a data file 10 bytes under claude-api's 30,000,000: with SKILL.md, the archive pack
    # would send holds more; check measures every member too
    root = tmp_path / "big"
    root.mkdir()
    (root / "SKILL.md").write_text("---\nname: big\ndescription: Carry one big file.\n"
                                   "---\nRead data.bin.\n")
    (root / "data.bin").write_bytes(b"\0" * (30_000_000 - 10))
    checked = cli("check", root, "--target", "claude-api", "--json")
    packed = cli("pack", root, "--target", "claude-api", "--json", "-o", tmp_path / "out")
    assert checked.exit_code == packed.exit_code == 1, (checked.output, packed.output)
    assert [c for c, *_ in _problems(_json(checked), "error")] == ["target-too-large"]
    assert _problems(_json(checked), "error") == _problems(_json(packed), "error")
    assert "bytes in all (every member of the archive)" in checked.output


def test_check_measures_the_archive_pack_writes_to_the_byte(tmp_path: Path) -> None:
    """`check` measures the very archive `pack --target` writes (the skill's files, no
    manifest: SPEC section 3b): members of exactly claude-api's 30,000,000 bytes pass both,
    one byte more fails both, with the same size in the message."""
    root = tmp_path / "edge"
    root.mkdir()
    (root / "SKILL.md").write_text("---\nname: edge\ndescription: Carry one big file.\n"
                                   "---\nRead data.bin.\n")
    data = root / "data.bin"
    data.write_bytes(b"\1" * 29_000_000)
    assert cli("pack", root, "--target", "claude-api", "-o", tmp_path / "probe").exit_code == 0
    with zipfile.ZipFile(next((tmp_path / "probe").glob("*.zip"))) as probe:
        overhead = sum(i.file_size for i in probe.infolist()) - 29_000_000
    for extra, code in ((0, 0), (1, 1)):
        data.write_bytes(b"\1" * (30_000_000 - overhead + extra))
        checked = cli("check", root, "--target", "claude-api", "--json")
        out = tmp_path / f"out{extra}"
        packed = cli("pack", root, "--target", "claude-api", "--json", "-o", out)
        assert checked.exit_code == packed.exit_code == code, (checked.output, packed.output)
        assert _problems(_json(checked), "error") == _problems(_json(packed), "error")
        if code == 0:
            with zipfile.ZipFile(next(out.glob("*.zip"))) as archive:
                assert sum(i.file_size for i in archive.infolist()) == 30_000_000
                assert not any(".skillpack/" in n for n in archive.namelist())
        else:
            assert "30,000,001 bytes in all (every member of the archive)" in cli(
                "check", root, "--target", "claude-api").output


def test_targets_that_want_different_layouts_are_refused_by_both(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "SKILL.md").write_text("---\nname: notes\ndescription: Keep notes in a file.\n"
                                   "---\nWrite notes.\n")
    args = ["--target", "claude-ai", "--target", "well-known"]
    checked = cli("check", root, *args)
    packed = cli("pack", root, *args, "-o", tmp_path / "out")
    assert checked.exit_code == packed.exit_code == 1
    assert "the targets want different archive layouts" in checked.output
    assert checked.output == packed.output
    checked = cli("check", root, *args, "--json")
    packed = cli("pack", root, *args, "--json", "-o", tmp_path / "out")
    assert _json(checked) == _json(packed)
    # with --layout, the host that wants the other one is a problem of the skill, in both
    for command in ("check", "pack"):
        result = cli(command, root, *args, "--layout", "root",
                     *(["-o", tmp_path / "out"] * (command == "pack")))
        assert result.exit_code == 1
        assert result.output.count("[target-layout] claude-ai: wants the wrapped layout") == 1


#: Frontmatter `check` and `pack` read (PyYAML) that the runtime's exact reader does not.
BEYOND_THE_EXACT_READER = {
    "flow-map": "metadata: {author: me, n: 1}\n",
    "space-key": "metadata:\n  my key: v\n",
    "typed-keys": "metadata:\n  1: a\n  null: b\n",
}


def test_what_pack_writes_every_reader_of_archives_takes(tmp_path: Path) -> None:
    """YAML beyond the runtime's exact reader passed `check` and `pack`, then `verify`,
    `install X.skill`, `export` and `load` refused the archive `pack` wrote. Now the
    runtime reads it as `check` did, and every one of them takes it."""
    repo = tmp_path / "repo"
    for name, extra in BEYOND_THE_EXACT_READER.items():
        (repo / name).mkdir(parents=True)
        (repo / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Does {name} things.\n{extra}---\n# Body\n")
    assert cli("check", repo).exit_code == 0
    assert cli("pack", repo, "-o", tmp_path / "out").exit_code == 0
    archives = sorted((tmp_path / "out").glob("*.skill"))
    assert len(archives) == 3
    checked = cli("verify", *archives)
    assert checked.exit_code == 0, checked.output
    assert cli("bundle", *archives, "-o", tmp_path / "all.bundle").exit_code == 0
    assert cli("verify", tmp_path / "all.bundle").exit_code == 0
    for command in (["install", *archives, "--into", tmp_path / "agent"],
                    ["export", "mcp", *archives, "-o", tmp_path / "mcp.json"],
                    ["export", "well-known", *archives, "-o", tmp_path / "site"]):
        done = cli(*command)
        assert done.exit_code == 0, (command, done.output)
    bundle = rt.load((tmp_path / "all.bundle").read_bytes())
    assert bundle["flow-map"].skill.metadata == {"author": "me", "n": "1"}
    assert bundle["space-key"].skill.metadata == {"my key": "v"}
    assert "typed-keys" in bundle.catalog_text()
