"""Programs as they run: a tool started through wrappers lists the program it starts, with the
wrappers as `via`; `programs` and `inspect` list the programs SKILL.md mentions apart; human
output is escaped (an ANSI sequence in a description cannot redraw the terminal)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import cli
from helpers.skills import make_tree

from skillpack.packing.pack import pack
from skillpack.packing.verify import verify_bytes
from skillpack.runtime import load
from skillpack.skillmd.programs import Program, derive_programs
from skillpack.skillmd.skill import parse_skill


def tool(tool_id: str, run: str, params: tuple[str, ...] = (), description: str = "Run.") -> str:
    listed = "".join(f"  {p}:\n    type: string\n" for p in params)
    head = f"params:\n{listed}" if params else ""
    return f"```tool\nid: {tool_id}\ndescription: {description}\n{head}run: {run}\n```\n"


def skill_md(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: Fetch pages. Use when asked.\n---\n# Fetch\n\n{body}"




def test_wrappers_report_the_program_they_start() -> None:
    skill = parse_skill(skill_md("x", tool("a", "env A=1 timeout 5 curl $url", ("url",))
                                 + tool("b", "sudo $prog", ("prog",))
                                 + tool("c", "nice -n 5 curl -s $url", ("url",))
                                 + tool("d", "git status")))
    found = {p.name: p for p in derive_programs(skill, {})}
    assert sorted(found) == ["$prog", "curl", "git"]
    assert found["curl"].via == ("env", "timeout", "nice")
    assert found["curl"].tools == ("a", "c")
    assert found["$prog"].dynamic and found["$prog"].via == ("sudo",)
    assert found["git"].to_dict() == {"name": "git", "dynamic": False, "tools": ["d"],
                                      "sources": ["tool:d"]}  # no "via": the manifest as before
    assert Program.from_dict(found["curl"].to_dict()) == found["curl"]


def test_a_packed_wrapper_verifies_and_records_via(tmp_path: Path) -> None:
    folder = make_tree(tmp_path / "fetch", {
        "SKILL.md": skill_md("fetch", tool("get", "timeout 5 curl -s $url", ("url",)))})
    [archive] = pack(folder, tmp_path / "out")
    data = archive.read_bytes()
    assert load(data)["fetch"].manifest.programs == (
        {"name": "curl", "dynamic": False, "tools": ["get"], "sources": ["tool:get"],
         "via": ["timeout"]},)
    verify_bytes(data)
    shown = cli("inspect", archive)
    assert "  curl via timeout  from tool:get" in shown.stdout


def test_programs_lists_mentions_apart(tmp_path: Path) -> None:
    folder = make_tree(tmp_path / "docs", {"SKILL.md": skill_md(
        "docs", tool("get", "env curl $url", ("url",))
        + "\n```bash\npython scripts/convert.py in.docx\npandoc -o out.md in.docx\n```\n"
        "\nAt load: !`git log -1`\n"), "scripts/convert.py": "print(1)\n"})
    result = cli("programs", folder)
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "docs:",
        "  curl  via env  [tool:get]",
        "  mentioned in SKILL.md (no tool runs them; the model may):",
        "    python  scripts: scripts/convert.py  mentioned in SKILL.md:17",
        "    pandoc  mentioned in SKILL.md:18",
        "    git  runs at load in claude-code (SKILL.md:21)",
    ]
    [entry] = json.loads(cli("programs", "--json", folder).stdout)
    assert [(m["program"], m["kind"]) for m in entry["mentioned"]] == [
        ("python", "mentioned"), ("pandoc", "mentioned"), ("git", "runs-at-load")]


def test_an_ansi_description_cannot_redraw_inspect(tmp_path: Path) -> None:
    folder = make_tree(tmp_path / "sly", {"SKILL.md": skill_md(
        "sly", tool("get", "curl $url", ("url",),
                    description="Fetch.\x1b[2K\x1b[1Gpython3"))})
    [archive] = pack(folder, tmp_path / "out")
    shown = cli("inspect", archive).stdout
    assert "\x1b" not in shown and "\\x1b[2K" in shown
    assert json.loads(cli("inspect", "--json", archive).stdout)["skills"][0]["tools"][0][
        "description"].count("\x1b") == 2  # JSON keeps the text, escaped by JSON itself
