"""A skill carrying what is not its own: a virtualenv, node_modules/, a skill of its own.

Discovery never searches the first two ("never searched for skills") and finds the third as
a skill, yet a skill carried each without a word (check and pack: 0 warnings). The file set
stays what SPEC section 1 says; check and lint warn, naming the folder and the
.skillignore line that leaves it out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import cli
from helpers.skills import make_tree

TEXT = "---\nname: tool\ndescription: A node tool skill. Use when testing.\n---\nRun `node {}`.\n"
SUB = "---\nname: sub\ndescription: Sub. Use when testing.\n---\n"


@pytest.fixture()
def tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """QA's tree: a skill with node packages, a virtualenv made on Windows (no links), its
    own .gitignore naming both, and a skill of its own below it; and a skill whose files
    only look like them."""
    monkeypatch.chdir(tmp_path)
    make_tree(Path("skills/plain"), {  # names like theirs, and no such folder: no warning
        "SKILL.md": TEXT.format("scripts/venv.py").replace("tool", "plain"),
        "scripts/venv.py": "print(1)\n", "references/node_modules.md": "# notes\n",
        "references/pyvenv.cfg.md": "# notes\n", "venv/notes.md": "# notes\n"})
    return make_tree(Path("skills/tool"), {
        "SKILL.md": TEXT.format("scripts/index.js"),
        "scripts/index.js": "console.log(1)\n",
        "scripts/node_modules/lodash/index.js": "module.exports = 1\n",
        "scripts/node_modules/lodash/node_modules/dep/index.js": "module.exports = 2\n",
        ".venv/pyvenv.cfg": "home = C:\\Python311\n",
        ".venv/Lib/site-packages/six.py": "x = 1\n",
        ".venv/Scripts/activate.bat": "@echo off\n",
        ".gitignore": "node_modules/\n.venv/\n",
        "skills/sub/SKILL.md": SUB,
        "skills/sub/node_modules/x/index.js": "1\n",
    })


WARNINGS = [
    "skills/tool/.venv/: warning: [carries-virtualenv] the skill carries a Python virtualenv, "
    "'.venv/' (3 files), a folder the search for skills never enters: installed packages, "
    "not the skill's own files; leave it out with the line '/.venv/' in .skillignore",
    "skills/tool/scripts/node_modules/: warning: [carries-node-modules] the skill carries "
    "'scripts/node_modules/' (2 files), installed node packages, a folder the search for "
    "skills never enters: not the skill's own files; leave it out with the line "
    "'node_modules/' in .skillignore",
    "skills/tool/skills/sub/: warning: [carries-nested-skill] the skill carries "
    "'skills/sub/', a skill of its own (2 files, its own SKILL.md): an agent reads them as "
    "files of this skill, while a search of the folder above it finds it as a skill; move it "
    "out of this skill, or leave it out with the line '/skills/sub/' in .skillignore",
]


def test_check_and_lint_warn_of_each_folder_and_carry_it_still(tool: Path) -> None:
    checked = cli("check", "skills")
    assert checked.exit_code == 0
    assert [line for line in checked.stdout.splitlines() if ": warning: " in line] == WARNINGS
    assert "checked 2 skills: 2 valid, 0 invalid (0 errors, 3 warnings)" in checked.stdout
    assert cli("check", "skills", "--strict").exit_code == 1  # CI sees it
    linted = cli("lint", "skills")
    assert all(line in linted.stdout for line in WARNINGS)
    as_json = json.loads(cli("check", "--json", "skills").stdout)
    assert [(p["code"], p["file"]) for p in as_json[1]["problems"]] == [
        ("carries-virtualenv", "skills/tool/.venv/"),
        ("carries-node-modules", "skills/tool/scripts/node_modules/"),
        ("carries-nested-skill", "skills/tool/skills/sub/")]
    files = cli("files", tool).stdout  # the file set is SPEC's: carried all the same
    for path in (".venv/pyvenv.cfg", "scripts/node_modules/lodash/index.js",
                 "skills/sub/SKILL.md"):
        assert path in files


def test_the_lines_said_leave_them_out(tool: Path) -> None:
    before = cli("digest", tool).stdout
    assert "(0 errors, 3 warnings)" in cli("check", "skills").stdout
    (tool / ".skillignore").write_text("/.venv/\nnode_modules/\n/skills/sub/\n")
    checked = cli("check", "skills")
    assert checked.exit_code == 0
    assert "(0 errors, 0 warnings)" in checked.stdout
    assert cli("digest", tool).stdout != before
    quiet = cli("check", "skills", "--ignore", "carries-nested-skill")
    assert "carries-nested-skill" not in quiet.stdout
