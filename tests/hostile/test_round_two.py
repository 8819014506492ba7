"""Hostile inputs, round two (issue 13): what an attacker who read SECURITY.md tries next.

* approval bypasses: a `.skillignore` that leaves out SKILL.md; archives resealed by hand to
  carry what `pack` can never write (ignored names, paths outside `includes:`, a file beside a
  folder of the same name, non-NFC paths); names that collide on Windows or macOS;
* crashes: format versions in other digits, deep unknown fields, lone surrogates;
* slow rejects: inputs that made a regex backtrack or a parser go quadratic, each refused
  at a size that would have taken minutes (bounded by input size, `no_hang` only guards).
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from helpers.hostile import DEMO_MD, TALLY, demo_skill, files_under, no_hang, run_cli
from helpers.paths import REPO
from helpers.skills import make_tree
from helpers.zips import Member, build, insert, manifest_dict, members_of, reseal, set_manifest
from hypothesis import given
from hypothesis import strategies as st

from skillpack._atomic import clean_stale_temps
from skillpack.approve.lock import read_lock
from skillpack.approve.signing import TrustedKey, verify_envelope
from skillpack.errors import (
    ArchiveError,
    FormatVersionError,
    IntegrityError,
    RefusedError,
    SkillError,
    SkillpackError,
)
from skillpack.formats.paths import may_be_unportable, name_problem, windows_problem
from skillpack.model.calls import resolve
from skillpack.packing.bundle import write_bundle
from skillpack.packing.check import check_skill
from skillpack.packing.pack import pack, pack_skills
from skillpack.packing.verify import verify_bytes, verify_folder
from skillpack.publish.exports import ExportSkill, export_well_known
from skillpack.runtime import load
from skillpack.skillmd.skill import parse_skill, split_entries
from skillpack.storedzip.writer import ZipWriter

SKILL = "demo/SKILL.md"


# -- .skillignore can never leave out SKILL.md ---------------------------------------------------

@pytest.mark.parametrize("rule", ["SKILL.md", "*", "/SKILL.md", "*.md", "SKILL.*", "[S]KILL.md"])
@pytest.mark.parametrize("declared", [False, True], ids=["walked", "included"])
def test_a_skillignore_rule_matching_skill_md_is_an_error(tmp_path: Path, rule: str,
                                                          declared: bool) -> None:
    text = DEMO_MD
    if declared:
        text = DEMO_MD.replace("description:", "includes: [scripts]\ndescription:", 1)
    skill = demo_skill(tmp_path / "demo", {"SKILL.md": text, ".skillignore": rule + "\n"})
    out = tmp_path / "out"
    case = f"skillignore leaves out SKILL.md ({rule!r}, {'includes' if declared else 'walk'})"
    with TALLY.refused("tree", case, "pack", RefusedError, "SKILL.md", ".skillignore:1"):
        no_hang(lambda: pack(skill, out))
    assert files_under(out) == []
    with TALLY.refused("tree", case, "verify folder", RefusedError, "SKILL.md"):
        no_hang(lambda: verify_folder(skill))


def test_a_negated_rule_keeps_skill_md(tmp_path: Path) -> None:
    skill = demo_skill(tmp_path / "demo", {".skillignore": "*.md\n!SKILL.md\n"})
    [archive] = pack(skill, tmp_path / "out")
    assert "demo/SKILL.md" in [m.name for m in members_of(archive.read_bytes())]


# -- an archive carries exactly what pack could have produced -------------------------------------

INCLUDES_MD = DEMO_MD.replace("description:", "includes: [scripts]\ndescription:", 1)

SMUGGLED = {
    "pycache beside the reviewed script": ("demo/scripts/__pycache__/run.cpython-312.pyc",
                                           "__pycache__"),
    "a .pyc file": ("demo/scripts/run.pyc", "*.pyc"),
    "git config": ("demo/.git/config", ".git"),
    "hg folder": ("demo/.hg/hgrc", ".hg"),
    "editor swap file": ("demo/scripts/.run.py.swp", "*.swp"),
    "editor backup file": ("demo/notes.txt~", "*~"),
    "editor lock file": ("demo/.#notes.txt", ".#*"),
    "editor autosave file": ("demo/#notes.txt#", "#*#"),
    ".DS_Store": ("demo/.DS_Store", ".DS_Store"),
    ".skillignore": ("demo/.skillignore", ".skillignore"),
    "x beside x/y": ("demo/notes.txt/inner.txt", "notes.txt"),
    "non-NFC path": ("demo/cafe\u0301.txt", "NFC"),
}


def _smuggled(good: bytes, member: str, skill_md: str | None = None) -> bytes:
    members = members_of(good)
    if skill_md is not None:
        members = [Member(m.name, skill_md.encode()) if m.name == SKILL else m
                   for m in members]
    return build(reseal(insert(members, Member(member, b"print('not reviewed')\n"))))


@pytest.mark.parametrize("case", sorted(SMUGGLED))
def test_an_archive_carrying_what_pack_leaves_out_is_refused(good_archive: bytes,
                                                              tmp_path: Path, case: str) -> None:
    member, fragment = SMUGGLED[case]
    data = _smuggled(good_archive, member)
    with TALLY.refused("archive", f"resealed: {case}", "verify_bytes", IntegrityError,
                       member, fragment):
        no_hang(lambda: verify_bytes(data, source="hostile.skill"))
    archive = tmp_path / "hostile.skill"
    archive.write_bytes(data)
    with TALLY.refused("archive", f"resealed: {case}", "bundle", IntegrityError, member):
        no_hang(lambda: write_bundle([archive], tmp_path / "out.bundle"))
    assert not (tmp_path / "out.bundle").exists()
    for command in (["verify", str(archive)], ["lock", str(archive), "-o",
                                               str(tmp_path / "skills.lock")]):
        result = run_cli(*command)
        ok = result.exit_code == 1 and member in result.output
        TALLY.add("archive", f"resealed: {case}", f"cli {command[0]}",
                  "refused" if ok else "accepted", result.output[-300:])
        assert ok, result.output
    assert not (tmp_path / "skills.lock").exists()


def test_an_archive_carrying_a_file_outside_its_includes_is_refused(good_archive: bytes
                                                                    ) -> None:
    # the good archive carries notes.txt; a SKILL.md declaring only `scripts` never would
    data = _smuggled(good_archive, "demo/scripts/extra.py", INCLUDES_MD)
    with TALLY.refused("archive", "resealed: a path outside includes", "verify_bytes",
                       IntegrityError, "demo/notes.txt", "includes"):
        no_hang(lambda: verify_bytes(data, source="hostile.skill"))


def test_an_archive_inside_its_includes_verifies(tmp_path: Path) -> None:
    skill = demo_skill(tmp_path / "demo", {"SKILL.md": INCLUDES_MD})
    [archive] = pack(skill, tmp_path / "out")
    report = verify_bytes(archive.read_bytes())
    assert [r.path for r in report.skills[0].files] == ["SKILL.md", "scripts/run.py"]


def test_the_good_archive_still_verifies(good_archive: bytes) -> None:
    assert verify_bytes(good_archive).skills[0].name == "demo"
    assert isinstance(SkillpackError("x"), SkillpackError)


# -- names that collide on Windows or macOS ------------------------------------------------------

WINDOWS_NAMES = {
    "SKILL.md.": "trailing dot",
    "SKILL.md ": "trailing space",
    "notes.txt..": "trailing dot",
    "scripts./run2.py": "trailing dot",
    "CON": "reserved",
    "con": "reserved",
    "aux.txt": "reserved",
    "Nul.tar.gz": "reserved",
    "COM1": "reserved",
    "lpt9.log": "reserved",
    "COM\u00b9.txt": "reserved",
    "PRN/inner.txt": "reserved",
    "a:b": "':'",
    "what?.txt": "'?'",
    "star*.txt": "'*'",
    "less<than": "'<'",
    "more>than": "'>'",
    'quote".txt': "'\"'",
    "pipe|name": "'|'",
}


@pytest.mark.parametrize("name", sorted(WINDOWS_NAMES))
def test_a_name_windows_refuses_is_refused_by_pack(tmp_path: Path, name: str) -> None:
    skill = demo_skill(tmp_path / "demo", {name: "replaces the reviewed file on Windows\n"})
    out = tmp_path / "out"
    shown = name.split("/")[0]
    with TALLY.refused("tree", f"windows name {name!r}", "pack", RefusedError, shown,
                       WINDOWS_NAMES[name]):
        no_hang(lambda: pack(skill, out))
    assert files_under(out) == []


@pytest.mark.parametrize("name", sorted(WINDOWS_NAMES))
def test_a_name_windows_refuses_is_refused_in_an_archive(good_archive: bytes, name: str
                                                         ) -> None:
    member = f"demo/{name}"
    data = build(reseal(insert(members_of(good_archive), Member(member, b"other bytes\n"))))
    for entry, call in (("load", lambda: load(data, source="hostile.skill")),
                        ("verify_bytes", lambda: verify_bytes(data, source="hostile.skill"))):
        with TALLY.refused("archive", f"windows name {name!r}", entry, ArchiveError, member,
                           WINDOWS_NAMES[name]):
            no_hang(call)
    with (TALLY.refused("archive", f"windows name {name!r}", "ZipWriter", ArchiveError,
                        member, WINDOWS_NAMES[name]), ZipWriter(io.BytesIO()) as writer):
        writer.add_bytes(member, b"x")


@pytest.mark.parametrize("name", ["CONSOLE.txt", "auxiliary", "com10", "lpt0.log", "nul_x",
                                  "a.b.c", ".hidden", "x-y_z+1", "COM", "lpt"])
def test_names_windows_allows_still_pack(tmp_path: Path, name: str) -> None:
    skill = demo_skill(tmp_path / "demo", {name: "fine\n"})
    [archive] = pack(skill, tmp_path / "out")
    assert verify_bytes(archive.read_bytes()).skills[0].name == "demo"


@given(st.lists(st.text(alphabet="aCcOoNnMmLlPpTtUuXx1\u00b9. :?/", min_size=1, max_size=8),
                min_size=1, max_size=4))
def test_the_fast_screen_never_misses_a_windows_name(names: list[str]) -> None:
    """The reader and the walk ask about each name only when the screen says one may be bad:
    the screen must say so whenever `windows_problem` refuses a segment, and `name_problem`
    (the writer's and the reader's rule) must refuse exactly those."""
    for name in names:
        segments = name.split("/")
        if any(seg in ("", ".", "..") for seg in segments):
            continue
        windows = any(windows_problem(seg) is not None for seg in segments)
        if windows:
            assert may_be_unportable("/" + "/\\/".join(names) + "/")
        assert (name_problem(name) is not None) == windows, name


# -- crashes: only skillpack's own errors --------------------------------------------------------

ODD_FORMATS = ["\u00b9.0", "\u0661.\u0660", "1.00", "01.0", "1.0\u0660", "\uff11.0", "+1.0",
               "1.0 ", " 1.0", "1.-0", "1_0.0", "1.0.0", ""]


@pytest.mark.parametrize("value", ODD_FORMATS)
def test_a_format_version_in_other_digits_or_forms_is_refused(good_archive: bytes, tmp_path: Path,
                                                              value: str) -> None:
    members = members_of(good_archive)
    manifest = manifest_dict(members, "demo")
    manifest["format"] = value
    manifest["smuggled"] = "an unknown field the format check must not switch off"
    data = build(set_manifest(members, "demo", manifest))
    case = f"manifest format {value!r}"
    with TALLY.refused("archive", case, "load", FormatVersionError, repr(value)):
        no_hang(lambda: load(data, source="hostile.skill"))
    with TALLY.refused("archive", case, "verify_bytes", FormatVersionError, repr(value)):
        no_hang(lambda: verify_bytes(data, source="hostile.skill"))
    lock = tmp_path / "skills.lock"
    lock.write_text(json.dumps({"format": value, "skills": {}}))
    with TALLY.refused("archive", f"lock format {value!r}", "read_lock", FormatVersionError,
                       repr(value)):
        no_hang(lambda: read_lock(lock))


def _deep(levels: int) -> str:
    """JSON text of a value nested `levels` lists deep (built as text: json.dumps recurses)."""
    return "[" * levels + '"x"' + "]" * levels


@pytest.mark.parametrize("levels", [1_000, 5_000, 50_000])
@pytest.mark.parametrize("where", ["tools", "programs", "top"])
def test_an_unknown_field_nested_deep_is_refused_not_a_recursion_error(
        good_archive: bytes, tmp_path: Path, levels: int, where: str) -> None:
    members = members_of(good_archive)
    manifest = manifest_dict(members, "demo")
    if where == "top":
        manifest["unknown"] = "DEEP"
    else:
        manifest[where] = [{**(manifest[where] or [{}])[0], "unknown": "DEEP"}]
    text = json.dumps(manifest, sort_keys=True, separators=(",", ":")) + "\n"
    raw = text.replace('"DEEP"', _deep(levels)).encode()
    data = build(set_manifest(members, "demo", raw))
    case = f"unknown field in {where} nested {levels} deep"
    with TALLY.refused("archive", case, "verify_bytes", SkillpackError, "manifest"):
        no_hang(lambda: verify_bytes(data, source="hostile.skill"))
    lock = tmp_path / "skills.lock"
    lock.write_text('{"format":"1.1","skills":{},"unknown":' + _deep(levels) + "}")
    with TALLY.refused("archive", f"lock: {case}", "read_lock", SkillpackError, "lock"):
        no_hang(lambda: read_lock(lock))


SURROGATE_FIELDS = {
    "name": 'name: "demo\\ud800"\ndescription: A demo skill that greets someone.\n',
    "description": 'name: demo\ndescription: "A demo \\ud800 skill."\n',
    "includes": 'name: demo\ndescription: A demo skill.\nincludes: ["scripts/\\udfff"]\n',
    "allowed-tools": 'name: demo\ndescription: A demo skill.\nallowed-tools: "Bash(\\ud800)"\n',
    "allowance": ('name: demo\ndescription: A demo skill.\nmetadata:\n'
                  '  skillpack-allow-secrets: "x\\ud83d.env"\n'),
    "metadata": 'name: demo\ndescription: A demo skill.\nmetadata:\n  "k\\ud800": v\n',
    "license": 'name: demo\ndescription: A demo skill.\nlicense: "\\U0000dc00"\n',
}


@pytest.mark.parametrize("field", sorted(SURROGATE_FIELDS))
def test_a_lone_surrogate_from_a_yaml_escape_is_a_skill_error(tmp_path: Path, field: str
                                                               ) -> None:
    text = "---\n" + SURROGATE_FIELDS[field] + "---\n\n# Demo\n"
    case = f"lone surrogate in {field}"
    with TALLY.refused("parser", case, "parse_skill", SkillError, "surrogate",
                       "SKILL.md:") as refusal:
        parse_skill(text, file="SKILL.md")
    assert refusal.value is not None and refusal.value.line is not None
    str(refusal.value).encode("utf-8")  # the message itself is printable text
    skill = demo_skill(tmp_path / "demo", {"SKILL.md": text})
    out = tmp_path / "out"
    with TALLY.refused("parser", case, "pack", SkillpackError, "surrogate"):
        no_hang(lambda: pack(skill, out))
    assert files_under(out) == []
    result = check_skill(skill)
    assert any("surrogate" in p.message for p in result.problems), result.problems
    TALLY.add("parser", case, "check", "refused")


# -- slow rejects: bounded by input size (no_hang only guards against a hang) --------------------

NUMBER_MD = """\
---
name: demo
description: A demo skill with a number, used to build hostile inputs.
---

```tool
id: count
description: Count to a number.
params:
  n:
    type: {type}
    default: {default}
run: python3 scripts/run.py $n
```
"""


@pytest.mark.parametrize("kind", ["number", "integer"])
@pytest.mark.parametrize("size", [100_000, 1_000_000])  # the old regex: minutes, hours
def test_a_long_digit_run_before_a_bad_character_is_refused_at_once(kind: str, size: int
                                                                    ) -> None:
    digits = "1" * size
    good = parse_skill(NUMBER_MD.format(type=kind, default="7"))
    case = f"{size:,}-digit {kind} then a bad character"
    with TALLY.refused("parser", f"{case} (default)", "parse_skill", SkillError, "default"):
        no_hang(lambda: parse_skill(NUMBER_MD.format(type=kind, default=digits + "x")))
    for value in (digits + "x", digits + ".5.", "-" + digits + "e"):
        answer = json.dumps({"tool": "count", "args": {"n": value}})
        with TALLY.refused("parser", f"{case} (answer)", "resolve", SkillError, "'n'"):
            no_hang(lambda answer=answer: resolve(good, answer))
    call = no_hang(lambda: resolve(good, '{"tool": "count", "args": {"n": "125"}}'))
    assert call is not None and call.argv[-1] == "125"


@pytest.mark.parametrize("size", [30_000, 60_000])
def test_allowed_tools_full_of_parentheses_parse_at_once(size: int) -> None:
    text = DEMO_MD.replace("description:", 'allowed-tools: "' + "(" * size + '"\ndescription:', 1)
    skill = no_hang(lambda: parse_skill(text))
    TALLY.handled("parser", f"allowed-tools of {size:,} '('", "parse_skill")
    assert skill.allowed_tools == ()


_OLD_ENTRY_TOKEN = re.compile(r"[^\s,()]+(?:\([^)]*\))?|\([^)]*\)")


@given(st.text(alphabet="ab (),\t\u00a0\u2003x", max_size=30))
def test_the_entry_tokenizer_reads_what_the_regex_read(text: str) -> None:
    assert split_entries(text) == _OLD_ENTRY_TOKEN.findall(text)


PATHOLOGICAL = ["a*a*a*a*a*a*a*a*a*b", "*a*a*a*b", "**/a/**/a/**/b", "a/**/b/**/c*d*e",
                "x" * 5000]


@pytest.mark.parametrize("pattern", PATHOLOGICAL, ids=lambda p: p[:24])
def test_a_pathological_skillignore_pattern_is_refused_at_once(tmp_path: Path, pattern: str
                                                               ) -> None:
    skill = demo_skill(tmp_path / "demo", {".skillignore": "*.log\n" + pattern + "\n",
                                           "a" * 60: "a file the pattern backtracks on\n",
                                           "/".join(["a"] * 40) + "/f": "deep\n"})
    out = tmp_path / "out"
    with TALLY.refused("tree", f"skillignore pattern {pattern[:40]!r}", "pack", RefusedError,
                       ".skillignore:2"):
        no_hang(lambda: pack(skill, out), timeout=60)
    assert files_under(out) == []


def test_every_refused_skillignore_line_is_listed(tmp_path: Path) -> None:
    skill = demo_skill(tmp_path / "demo", {".skillignore": "\n".join(PATHOLOGICAL) + "\n"})
    with TALLY.refused("tree", "five pathological skillignore lines", "pack", RefusedError,
                       *(f".skillignore:{n}" for n in range(1, len(PATHOLOGICAL) + 1))):
        no_hang(lambda: pack(skill, tmp_path / "out"), timeout=60)


@pytest.mark.parametrize("pattern", ["**/build/**/*.o", "*.tar.*", "docs/**/*.png", "a*b*c",
                                     "/secret-*/", "!keep*.txt", "**/x/**"])
def test_ordinary_skillignore_patterns_still_work(tmp_path: Path, pattern: str) -> None:
    skill = demo_skill(tmp_path / "demo", {".skillignore": pattern + "\n"})
    [archive] = pack(skill, tmp_path / "out")
    assert archive.exists()


def test_a_skillignore_over_a_mebibyte_is_refused_not_truncated(tmp_path: Path) -> None:
    line = "# a comment line to push the rules past 1 MiB\n"
    filler = line * ((1 << 20) // len(line) + 1)
    skill = demo_skill(tmp_path / "demo", {".skillignore": filler + "notes.txt\n"})
    out = tmp_path / "out"
    with TALLY.refused("tree", "skillignore over 1 MiB", "pack", RefusedError, ".skillignore",
                       "1 MiB"):
        no_hang(lambda: pack(skill, out))
    assert files_under(out) == []


@pytest.mark.parametrize("levels", [250, 400])
def test_unclosed_nested_json_is_refused_in_linear_time(levels: int) -> None:
    good = parse_skill(NUMBER_MD.format(type="number", default="7"))
    answer = ('{"a":[' + "1," * 2_000) * levels  # about 1 MB, every object left open
    with TALLY.refused("parser", f"unclosed nested JSON, {len(answer):,} bytes", "resolve",
                       SkillError, "never"):
        no_hang(lambda: resolve(good, answer), timeout=60)
    call = '{"tool": "count", "args": {"n": 3}}'
    assert no_hang(lambda: resolve(good, "[" * 10 + " " + call)).tool.id == "count"


def test_the_cli_reads_a_bounded_answer(tmp_path: Path) -> None:
    skill = demo_skill(tmp_path / "demo")
    answer = tmp_path / "answer.txt"
    answer.write_bytes(b" " * (16 << 20) + b'{"tool": "hello", "args": {}}')
    result = no_hang(lambda: run_cli("resolve", str(skill), "--answer", str(answer)))
    ok = result.exit_code == 1 and "MiB" in result.output
    TALLY.add("parser", "answer over 16 MiB", "cli resolve", "refused" if ok else "accepted",
              result.output[-300:])
    assert ok, result.output


# -- a name is used as written -------------------------------------------------------------------

LOOKALIKES = {"full-width": "\uff57\uff41\uff49\uff54\uff4c\uff49\uff53\uff54",
              "math bold": "\U0001d430\U0001d41a\U0001d422\U0001d42d\U0001d425\U0001d422"
                           "\U0001d42c\U0001d42d",
              "ligature": "wait\ufb01st"}


@pytest.mark.parametrize("kind", sorted(LOOKALIKES))
def test_a_name_valid_only_after_nfkc_is_refused(tmp_path: Path, kind: str) -> None:
    name = LOOKALIKES[kind]
    text = DEMO_MD.replace("name: demo", f"name: {name}", 1)
    real = demo_skill(tmp_path / "waitlist", {"SKILL.md": DEMO_MD.replace("name: demo",
                                                                          "name: waitlist", 1)})
    twin = demo_skill(tmp_path / name, {"SKILL.md": text})
    result = check_skill(twin)
    ok = [p.code for p in result.problems if p.severity == "error"] == ["name-not-nfkc"]
    TALLY.add("parser", f"NFKC look-alike name ({kind})", "check",
              "refused" if ok else "accepted", str(result.problems)[:300])
    assert ok, result.problems
    with TALLY.refused("parser", f"NFKC look-alike name ({kind})", "pack", SkillpackError,
                       "NFKC"):
        no_hang(lambda: pack(twin, tmp_path / "out"))
    with TALLY.refused("bundle", f"NFKC look-alike beside the real one ({kind})", "bundle",
                       SkillpackError, "NFKC"):
        no_hang(lambda: write_bundle([real, twin], tmp_path / "skills.bundle"))
    assert files_under(tmp_path / "out") == [] and not (tmp_path / "skills.bundle").exists()


def test_an_archive_named_by_a_lookalike_is_refused_by_verify(good_archive: bytes) -> None:
    name = LOOKALIKES["full-width"]
    members = [Member(name + m.name[len("demo"):],
                      m.data.replace(b"name: demo", f"name: {name}".encode(), 1)
                      if m.name == SKILL else m.data, m.executable)
               for m in members_of(good_archive)]
    manifest = manifest_dict(members, name)
    manifest["name"] = name
    data = build(reseal(set_manifest(members, name, manifest)))
    with TALLY.refused("archive", "resealed under an NFKC look-alike name", "verify_bytes",
                       IntegrityError, "NFKC"):
        no_hang(lambda: verify_bytes(data, source="hostile.skill"))


# -- resolve: ambiguous calls, NUL, values that would be options ----------------------------------

TWO_TOOLS_MD = DEMO_MD + """
```tool
id: bye
description: Say goodbye.
params:
  target:
    type: string
run: git log $target -- $who
```
""".replace("-- $who", "--")

AMBIGUOUS = {
    "function and tool": {"function": {"name": "hello", "arguments": "{}"}, "tool": "bye"},
    "function and name": {"function": {"name": "hello", "arguments": "{}"}, "name": "bye",
                          "args": {}},
    "function and args": {"function": {"name": "hello", "arguments": "{}"},
                          "args": {"who": "x"}},
    "tool and function": {"tool": "hello", "function": {"name": "bye"}},
}


@pytest.mark.parametrize("case", sorted(AMBIGUOUS))
def test_an_ambiguous_call_is_refused(case: str) -> None:
    skill = parse_skill(TWO_TOOLS_MD)
    for entry, answer in (("resolve dict", AMBIGUOUS[case]),
                          ("resolve text", json.dumps(AMBIGUOUS[case]))):
        with TALLY.refused("parser", f"ambiguous call: {case}", entry, SkillError,
                           "ambiguous"):
            no_hang(lambda answer=answer: resolve(skill, answer))


@pytest.mark.parametrize("value", ["--output=/tmp/pwned", "-o/tmp/x", "-", "--", "-x y"])
def test_a_value_that_would_be_an_option_is_refused(value: str) -> None:
    skill = parse_skill(TWO_TOOLS_MD)
    for tool, args in (("bye", {"target": value}), ("hello", {"who": value})):
        answer = {"tool": tool, "args": args}
        with TALLY.refused("parser", f"option-like value {value!r} for {tool}", "resolve",
                           SkillError, "must not start with '-'"):
            no_hang(lambda answer=answer: resolve(skill, answer))


def test_a_dash_value_is_fine_after_a_double_dash_or_inside_a_word() -> None:
    text = DEMO_MD.replace("run: python3 scripts/run.py --who $who",
                           "run: python3 scripts/run.py --who=$who -- $who")
    skill = parse_skill(text)
    call = resolve(skill, {"tool": "hello", "args": {"who": "-x"}})
    assert call is not None and call.argv == ["python3", "scripts/run.py", "--who=-x", "--",
                                              "-x"]
    assert skill.tools[0].leading_params == frozenset()


@pytest.mark.parametrize("value", ["a\x00b", "\x00", "x\x00--output=f"])
def test_a_nul_in_a_value_is_refused(value: str) -> None:
    skill = parse_skill(TWO_TOOLS_MD)
    for answer in ({"tool": "hello", "args": {"who": value}},
                   json.dumps({"tool": "hello", "args": {"who": value}})):
        with TALLY.refused("parser", f"NUL in a value {value!r}", "resolve", SkillError,
                           "NUL"):
            no_hang(lambda answer=answer: resolve(skill, answer))


# -- a folder verified against a lock: compiled Python left out, yet run in place -----------------

@pytest.mark.parametrize("planted", ["scripts/__pycache__/run.cpython-311.pyc", "scripts/run.pyc",
                                     "__pycache__/x.pyc"])
def test_compiled_python_beside_an_approved_folder_fails_verify_lock(tmp_path: Path,
                                                                      planted: str) -> None:
    skill = demo_skill(tmp_path / "demo")
    lock = tmp_path / "skills.lock"
    assert run_cli("lock", str(skill), "-o", str(lock)).exit_code == 0
    assert run_cli("verify", str(skill), "--lock", str(lock)).exit_code == 0
    (skill / planted).parent.mkdir(parents=True, exist_ok=True)
    (skill / planted).write_bytes(b"\x00\x00\x00\x00 not the reviewed code")
    result = run_cli("verify", str(skill), "--lock", str(lock))
    shown = planted.split("__pycache__")[0] + "__pycache__/" if "__pycache__" in planted \
        else planted
    ok = result.exit_code == 1 and shown in result.output and "run in place" in result.output
    TALLY.add("tree", f"compiled Python planted at {planted}", "cli verify --lock",
              "refused" if ok else "accepted", result.output[-300:])
    assert ok, result.output


# -- a missed resource on a skill of many long names -----------------------------------------------

def test_a_missed_resource_costs_the_same_on_a_skill_of_many_long_names(tmp_path: Path) -> None:
    files = {f"f{i % 40:02d}/n{i:05d}" + "x" * 200 + ".txt": "x" for i in range(12_000)}
    skill = make_tree(tmp_path / "many", {"SKILL.md": "---\nname: many\ndescription: Many "
                                          "files.\n---\nbody\n", **files})
    [archive] = pack(skill, tmp_path / "out")
    loaded = load(archive.read_bytes())["many"]
    misses = ["f01/n00001" + "y" * 200 + ".txt", "f01/" + "x" * 230, "nowhere/" + "x" * 220,
              "f02/n00002" + "x" * 200 + ".tx"] * 10  # 40 misses: before, about a second each
    def miss_all() -> list[str]:
        hints = []
        for path in misses:
            try:
                loaded.file(path)
            except SkillpackError as err:
                hints.append(err.hint or "")
        return hints
    hints = no_hang(miss_all, timeout=30)
    assert len(hints) == len(misses)
    assert "n00002" in hints[3]  # a close name in its folder is still suggested
    TALLY.handled("archive", "40 misses on 12,000 long names", "LoadedSkill.file")


# -- writes: the --python-module name is not code ------------------------------------------------

@pytest.mark.parametrize("name", ['x"""\nimport os; os.system("id")\n""".py', "a-b.py",
                                  "class.py", "mod.txt", "1st.py", "x y.py"])
def test_a_python_module_name_that_is_not_an_identifier_is_refused(tmp_path: Path,
                                                                   name: str) -> None:
    skill = demo_skill(tmp_path / "demo")
    out = tmp_path / "out"
    out.mkdir()
    with TALLY.refused("write", f"python module named {name!r}", "write_bundle",
                       SkillpackError, "Python module"):
        no_hang(lambda: write_bundle([skill], out / "skills.bundle", python_module=out / name))
    assert files_under(out) == []
    result = run_cli("bundle", str(skill), "-o", str(out / "b.bundle"), "--python-module",
                     str(out / name))
    ok = result.exit_code == 1 and "Python module" in result.output
    TALLY.add("write", f"python module named {name!r}", "cli bundle",
              "refused" if ok else "accepted", result.output[-300:])
    assert ok and files_under(out) == [], result.output


# -- writes: a planted archive with the right bytes is not "unchanged" -----------------------------

@pytest.mark.parametrize("plant", ["group-writable", "world-writable", "executable", "owner",
                                   "hard link"])
def test_a_planted_archive_with_the_right_bytes_is_replaced(tmp_path: Path, plant: str) -> None:
    skill = demo_skill(tmp_path / "demo")
    out = tmp_path / "out"
    [first] = pack_skills([skill], out)
    assert first.written
    [again] = pack_skills([skill], out)
    assert not again.written  # the very file pack wrote is current
    path = first.path
    if plant == "owner":
        if os.geteuid() != 0:
            pytest.skip("changing a file's owner needs root")
        os.chown(path, 65534, 65534)
    elif plant == "hard link":
        os.link(path, tmp_path / "attacker-keeps-this-name")
    else:
        path.chmod({"group-writable": 0o664, "world-writable": 0o666,
                    "executable": 0o755}[plant])
    [third] = pack_skills([skill], out)
    st = path.stat()
    ok = third.written and st.st_uid == os.geteuid() and (st.st_mode & 0o777) == 0o644 \
        and st.st_nlink == 1
    TALLY.add("write", f"planted archive, right bytes, {plant}", "pack",
              "refused" if ok else "accepted", f"written={third.written} mode={st.st_mode:o}")
    assert ok


# -- writes: a writer in another PID namespace keeps its temp file ---------------------------------

OTHER_NAMESPACE_WRITER = """
import os, sys
os.getpid = lambda: int(sys.argv[2])  # a pid from another namespace: gone, seen from ours
from skillpack._atomic import AtomicBatch
with AtomicBatch(sync_threads=1) as batch:
    with batch.write(sys.argv[1]) as handle:
        handle.write(b"in flight " * 1000)
        handle.flush()
        print("writing", flush=True)
        sys.stdin.readline()  # until the other pack has run its stale-temp cleanup
print("renamed", flush=True)
"""


def test_a_temp_file_of_a_writer_in_another_pid_namespace_is_not_removed(tmp_path: Path
                                                                          ) -> None:
    out = tmp_path / "out"
    out.mkdir()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead_pid = gone.stdout.strip()  # reaped: no process of ours has it now
    writer = subprocess.Popen([sys.executable, "-c", OTHER_NAMESPACE_WRITER,
                               str(out / "theirs.skill"), dead_pid], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd=REPO,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert writer.stdout is not None and writer.stdin is not None
        assert writer.stdout.readline().strip() == "writing"
        [temp] = [p for p in out.iterdir() if ".skillpack-tmp-" + dead_pid in p.name]
        skill = demo_skill(tmp_path / "demo")
        [ours] = no_hang(lambda: pack(skill, out))  # cleans stale temps in `out` first
        kept = temp.exists()
        writer.stdin.write("go\n")
        writer.stdin.flush()
        finished = writer.stdout.readline().strip() == "renamed" and writer.wait(30) == 0
    finally:
        writer.kill()
        writer.wait()
    ok = kept and finished and (out / "theirs.skill").read_bytes() == b"in flight " * 1000
    TALLY.add("write", "temp file of a writer in another PID namespace", "pack",
              "refused" if ok else "accepted", f"kept={kept} finished={finished}")
    assert ok and ours.exists()
    # once that writer is gone, what a killed one leaves is still cleaned up
    stale = out / f".x.skill.skillpack-tmp-{dead_pid}-0badc0de"
    stale.write_bytes(b"left by a killed pack")
    assert clean_stale_temps(out) == [str(stale)]


# -- memory: verify copies no member ---------------------------------------------------------------

def test_verify_of_an_archive_copies_no_member(tmp_path: Path) -> None:
    size = 48 << 20
    skill = demo_skill(tmp_path / "demo", {"big.bin": b"\x00" * size})
    [archive] = pack(skill, tmp_path / "out")
    data = archive.read_bytes()  # the archive itself: what verify is given
    tracemalloc.start()
    try:
        report = verify_bytes(data, source="big.skill")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.skills[0].name == "demo"
    ok = peak < size // 4  # no copy of the 48 MiB member (before: one for the secret scan)
    TALLY.add("archive", "verify of a 48 MiB member, memory", "verify_bytes",
              "handled" if ok else "accepted", f"peak {peak:,} bytes")
    assert ok, f"verify_bytes allocated {peak:,} bytes for a {size:,}-byte member"


OTHER_NAMESPACE_EXPORTER = """
import sys
from skillpack._atomic import FolderLease
with FolderLease(sys.argv[1]) as lease:  # what an export in another PID namespace holds
    lease.share()
    print("writing", flush=True)
    sys.stdin.readline()
"""


def test_an_export_in_another_pid_namespace_keeps_its_temp_folder(tmp_path: Path) -> None:
    parent = tmp_path / "site" / ".well-known"
    theirs = parent / ".agent-skills.skillpack-tmp-99999999-00ff"  # a pid we cannot see
    make_tree(theirs, {"index.json": "{}"})
    skill = ExportSkill.from_files("demo", "A demo skill.", {}, [
        ("SKILL.md", DEMO_MD.encode(), False)])
    writer = subprocess.Popen([sys.executable, "-c", OTHER_NAMESPACE_EXPORTER, str(parent)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert writer.stdout is not None and writer.stdin is not None
        assert writer.stdout.readline().strip() == "writing"
        no_hang(lambda: export_well_known([skill], tmp_path / "site"))
        kept = theirs.exists()
        writer.stdin.write("go\n")
        writer.stdin.flush()
        writer.wait(30)
    finally:
        writer.kill()
        writer.wait()
    TALLY.add("write", "temp folder of an export in another PID namespace", "export",
              "refused" if kept else "accepted")
    assert kept and (parent / "agent-skills" / "index.json").exists()
    export_well_known([skill], tmp_path / "site")  # alone now: what is left is cleaned
    assert not theirs.exists()



@pytest.mark.parametrize("levels", [1_000, 50_000])
def test_a_signature_envelope_nested_deep_is_refused_not_a_recursion_error(levels: int
                                                                           ) -> None:
    envelope = ('{"payloadType":"x","payload":"","signatures":' + _deep(levels) + "}").encode()
    with TALLY.refused("parser", f"signature envelope nested {levels} deep", "verify_envelope",
                       SkillpackError, "envelope"):
        no_hang(lambda: verify_envelope(envelope, [TrustedKey(b"\x01" * 32)]))
