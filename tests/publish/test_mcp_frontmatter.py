"""`export mcp` gives each skill's frontmatter as a YAML 1.2 host computes it.

The MCP skills extension's host check (`frontmatterMatchesEntry`) parses SKILL.md's
frontmatter itself with a YAML 1.2 parser (npm `yaml`, core schema), takes it through JSON,
and deep-compares it with the entry's `frontmatter`; a skill that differs is not loaded. Here
that check is done twice: with a core-schema loader written for this test on PyYAML's
`SafeLoader` (its YAML 1.1 resolvers replaced by the core schema's, its 1.1 constructors by
the core's), and, where node and the npm `yaml` package can be installed, with the real npm
parser (skipped with the reason unless SKILLPACK_REQUIRE_PEERS=1). Both on the corpus and on
hostile frontmatters. And `check` warns where YAML 1.1 reads a scalar otherwise.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from click.testing import CliRunner
from helpers.paths import CORPUS_SKILLS
from helpers.skills import write_skill

from skillpack.cli import main
from skillpack.errors import SkillpackError
from skillpack.publish.export_inputs import export_skills
from skillpack.publish.exports import mcp_skills_list

REQUIRE_PEERS = os.environ.get("SKILLPACK_REQUIRE_PEERS", "") not in ("", "0")


class CoreLoader(yaml.SafeLoader):
    """PyYAML with the YAML 1.2 core schema's implicit resolvers and constructors; a map's
    keys are the property names JavaScript makes of them (``1`` and ``true`` are two)."""

    yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {}

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[str, Any]:
        return {_js_key(self.construct_object(k, deep=True)): self.construct_object(v, deep=True)
                for k, v in node.value}


_CORE = [
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", [*"~nN", ""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$",
     list("-+0123456789")),
    ("tag:yaml.org,2002:float", r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
     r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", list("-+.0123456789")),
]
for _tag, _pattern, _first in _CORE:
    CoreLoader.add_implicit_resolver(_tag, re.compile(_pattern), _first)


def _int(loader: CoreLoader, node: yaml.ScalarNode) -> int | float:
    text = node.value
    if text[:2] in ("0o", "0x"):
        return int(text[2:], 8 if text[1] == "o" else 16)
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-").lstrip("0") or "0"
    return sign * (math.inf if len(body) > 1000 else int(body))  # parseInt: past floats, inf


def _float(loader: CoreLoader, node: yaml.ScalarNode) -> float:
    text = node.value.lower()
    return math.nan if text == ".nan" else float(text.replace(".inf", "inf"))


CoreLoader.add_constructor("tag:yaml.org,2002:int", _int)
CoreLoader.add_constructor("tag:yaml.org,2002:float", _float)
CoreLoader.add_constructor("tag:yaml.org,2002:bool",
                           lambda loader, node: node.value.lower() == "true")


def _js(value: Any) -> Any:
    """`JSON.parse(JSON.stringify(value))` as JavaScript computes it."""
    if isinstance(value, dict):
        return {_js_key(k): _js(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js(v) for v in value]
    if isinstance(value, float):
        return None if not math.isfinite(value) else (int(value) if value.is_integer()
                                                      and abs(value) < 2**53 else value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
        try:
            return _js(float(value))  # a JS number
        except OverflowError:
            return None  # Infinity, which JSON writes as null
    return value


def _js_key(key: Any) -> str:
    if key is None:
        return ""
    if isinstance(key, bool):
        return str(key).lower()
    value = _js(key)
    return str(value) if not isinstance(value, float) else repr(value)


def frontmatter_matches_entry(skill_md: str, entry: dict[str, Any]) -> bool:
    """The host check: a core-schema parse of SKILL.md's frontmatter, through JSON, deeply
    equal to the entry's frontmatter through JSON."""
    text = skill_md.split("---\n", 2)[1]
    host = _js(yaml.load(text, Loader=CoreLoader))
    return bool(host == _js(json.loads(json.dumps(entry["frontmatter"]))))


HOSTILE = [
    "user-invocable: false\ndisable-model-invocation: true\n",
    "metadata:\n  openclaw:\n    envVars:\n      - name: TOKEN\n        required: true\n"
    "      - name: OTHER\n        required: false\n        default: ~\n",
    "metadata:\n  a: yes\n  b: no\n  c: on\n  d: off\n  e: Y\n  f: n\n",
    "metadata:\n  mode: 0777\n  time: 1:20\n  big: 1_000\n  bin: 0b101\n  oct: 0o17\n",
    "metadata:\n  hex: 0x1F\n  HEX: 0X1F\n  exp: 1e3\n  dot: 1.\n  half: .5\n  neg: -0.0\n",
    "metadata:\n  inf: .inf\n  ninf: -.Inf\n  nan: .NaN\n  huge: 1e400\n",
    "metadata:\n  big: 12345678901234567890\n  zero: -0\n  lead: 007\n  plus: +12\n",
    "metadata:\n  date: 2024-01-15\n  stamp: 2001-12-14t21:59:43.10-05:00\n",
    "metadata:\n  nothing:\n  tilde: ~\n  Null: NULL\n  empty: ''\n",
    "metadata:\n  quoted: 'yes'\n  double: \"1\"\n  block: |\n    true\n  folded: >\n    12\n",
    "metadata:\n  list: [yes, 1, '3', null, 1.5, 0777]\n",
    "metadata:\n  1: one\n  true: yes\n  1.5: x\n  0x10: hex\n  null: k\n",
    "metadata:\n  word: é 1\n  ru: on\n  deep:\n    inner:\n      - x: 0777\n",
    "metadata:\n  merge: <<\n  eq: =\n  v: 1.0.0\n  ver: 1.10\n",
    # past 2**53 a float, past the float range infinite (5,000 digits: a ValueError traceback
    # of `export mcp`, Python refusing to convert over 4,300)
    f"metadata:\n  past: 9007199254740993\n  huge: {'9' * 5000}\n  neg: -{'1' * 400}\n"
    f"  hex: 0x{'F' * 300}\n  zeros: {'0' * 5000}12\n",
]


def _skill(folder: Path, extra: str) -> Path:
    return write_skill(folder, f"---\nname: {folder.name}\ndescription: The {folder.name} "
                               f"skill. Use when testing.\n{extra}---\nHi.\n")


def _entries(paths: list[Path]) -> list[dict[str, Any]]:
    skills: list[dict[str, Any]] = json.loads(mcp_skills_list(export_skills(paths)))["skills"]
    return skills


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("hostile")
    return [_skill(root / f"case-{i}", text) for i, text in enumerate(HOSTILE)]


def test_export_mcp_frontmatter_is_typed(tmp_path: Path) -> None:
    folder = _skill(tmp_path / "typed", HOSTILE[0] + HOSTILE[1])
    out = tmp_path / "list.json"
    result = CliRunner().invoke(main, ["export", "mcp", str(folder), "-o", str(out)])
    assert result.exit_code == 0, result.output
    [entry] = json.loads(out.read_bytes())["skills"]
    front = entry["frontmatter"]
    assert front["user-invocable"] is False and front["disable-model-invocation"] is True
    assert front["metadata"]["openclaw"]["envVars"] == [
        {"name": "TOKEN", "required": True},
        {"name": "OTHER", "required": False, "default": None}]


def test_the_host_check_passes_on_hostile_frontmatters(hostile: list[Path]) -> None:
    entries = _entries(hostile)
    by_name = {e["frontmatter"]["name"]: e for e in entries}
    for folder in hostile:
        text = (folder / "SKILL.md").read_text()
        assert frontmatter_matches_entry(text, by_name[folder.name]), folder.name
    # what YAML 1.1 would have given is not what a host computes
    meta = by_name["case-3"]["frontmatter"]["metadata"]
    assert meta == {"mode": 777, "time": "1:20", "big": "1_000", "bin": "0b101", "oct": 15}
    assert by_name["case-11"]["frontmatter"]["metadata"] == {
        "1": "one", "true": "yes", "1.5": "x", "16": "hex", "": "k"}


@pytest.mark.corpus
def test_the_host_check_passes_on_the_corpus() -> None:
    failed: list[str] = []
    checked = 0
    for folder in CORPUS_SKILLS:
        try:
            [entry] = _entries([folder])
        except SkillpackError:
            continue  # a skill pack refuses is not exported
        checked += 1
        if not frontmatter_matches_entry(
                (folder / "SKILL.md").read_text(encoding="utf-8-sig").replace("\r\n", "\n"),
                entry):
            failed.append(folder.name)
    assert checked >= len(CORPUS_SKILLS) - 5 and failed == []


_NODE_CHECK = """
const YAML = require(process.argv[2]);
const fs = require('fs');
const out = {};
for (const file of process.argv.slice(3)) {
  const text = fs.readFileSync(file, 'utf8').replace(/^\\uFEFF/, '').replace(/\\r\\n?/g, '\\n');
  const front = text.split('---\\n')[1];
  out[file] = JSON.parse(JSON.stringify(YAML.parse(front, {schema: 'core'})));
}
console.log(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def npm_yaml(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The npm `yaml` package, installed into a temporary folder."""
    node, npm = shutil.which("node"), shutil.which("npm")
    why = None
    if node is None or npm is None:
        why = "node and npm are not installed"
    else:
        folder = tmp_path_factory.mktemp("npm-yaml")
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--silent",
                               "--prefix", str(folder), "yaml@2"], capture_output=True,
                              text=True, timeout=300, check=False)
        module = folder / "node_modules" / "yaml"
        if done.returncode == 0 and module.is_dir():
            return str(module)
        why = f"npm install yaml failed: {done.stderr.strip()[-300:]}"
    if REQUIRE_PEERS:
        pytest.fail(f"SKILLPACK_REQUIRE_PEERS=1 but {why}")
    pytest.skip(why)


def _npm_parse(module: str, files: list[Path], tmp_path: Path) -> dict[str, Any]:
    script = tmp_path / "check.js"
    script.write_text(_NODE_CHECK)
    done = subprocess.run(["node", str(script), module, *map(str, files)], capture_output=True,
                          text=True, timeout=300, check=True)
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def test_npm_yaml_computes_the_same_frontmatter(hostile: list[Path], npm_yaml: str,
                                                tmp_path: Path) -> None:
    parsed = _npm_parse(npm_yaml, [f / "SKILL.md" for f in hostile], tmp_path)
    by_name = {e["frontmatter"]["name"]: e for e in _entries(hostile)}
    for folder in hostile:
        npm = parsed[str(folder / "SKILL.md")]
        assert _js(by_name[folder.name]["frontmatter"]) == _js(npm), folder.name


@pytest.mark.corpus
def test_npm_yaml_agrees_on_the_corpus(npm_yaml: str, tmp_path: Path) -> None:
    entries: dict[Path, dict[str, Any]] = {}
    for folder in CORPUS_SKILLS:
        try:
            [entries[folder / "SKILL.md"]] = _entries([folder])
        except SkillpackError:
            continue
    parsed = _npm_parse(npm_yaml, list(entries), tmp_path)
    differ = [str(p) for p, e in entries.items()
              if _js(e["frontmatter"]) != _js(parsed[str(p)])]
    assert differ == []


def test_check_warns_where_yaml_1_1_reads_otherwise(tmp_path: Path) -> None:
    folder = _skill(tmp_path / "versions", "metadata:\n  flag: yes\n  mode: 0777\n"
                    "  time: 1:20\n  quoted: 'on'\n  plain: text\n")
    result = CliRunner().invoke(main, ["check", str(folder)])
    assert result.exit_code == 0, result.output
    warned = [line for line in result.output.splitlines() if "[yaml-version]" in line]
    assert [w.split(": warning")[0].rsplit(":", 1)[1] for w in warned] == ["5", "6", "7"]
    assert ("'yes' reads as true under YAML 1.1 (PyYAML) but as the string 'yes' under "
            "YAML 1.2") in warned[0]
    assert "'0777' reads as int 511 under YAML 1.1" in warned[1] and "int 777" in warned[1]
    assert all("quote it" in w for w in warned)
