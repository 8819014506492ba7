"""Programs a SKILL.md body mentions in shell code blocks, and what runs at load."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from helpers.paths import CORPUS_SKILLS
from hypothesis import given
from hypothesis import strategies as st

from skillpack.skillmd.mentions import Mention, mentioned_programs, split_commands
from skillpack.skillmd.skill import parse_skill

BODY = """# Demo

Run `rm -rf /` is prose in a code span: never a command.

```bash
# a comment
$ sudo apt-get install -y jq && jq . data.json | less
X=$(git rev-parse HEAD) make build
uv run --with requests python scripts/fetch.py \\
    --out result.json
cat > notes.txt <<'END'
rm -rf /tmp/everything
END
for f in *.py; do black "$f"; done
cd src && export A=1
```

```python
import subprocess
subprocess.run(["curl", "x"])
```

```console
$ ls -la
total 8
# not a prompt
```

Status: !`git status --short`
"""


def _mentions(body: str = BODY, first: int = 10) -> list[tuple[str, int, str]]:
    return [(m.program, m.line, m.kind) for m in mentioned_programs(body, first)]


def test_shell_blocks_and_load_time_commands_are_found_with_their_lines() -> None:
    assert _mentions() == [
        ("apt-get", 16, "mentioned"), ("jq", 16, "mentioned"), ("less", 16, "mentioned"),
        ("git", 17, "mentioned"), ("make", 17, "mentioned"),
        ("uv", 18, "mentioned"), ("cat", 20, "mentioned"),
        ("black", 23, "mentioned"),
        ("ls", 33, "mentioned"),
        ("git", 38, "runs-at-load"),
    ]


def test_a_mention_keeps_its_context_script_and_text() -> None:
    found = {m.program: m for m in mentioned_programs(BODY, 10)}
    assert found["apt-get"].context == "via sudo"
    assert found["uv"].script == "scripts/fetch.py"
    assert found["uv"].text.startswith("uv run --with requests python scripts/fetch.py")
    assert found["ls"].where == "mentioned in SKILL.md:33"
    git = mentioned_programs(BODY, 10)[-1]
    assert git.where == "runs at load in claude-code (SKILL.md:38)"
    assert Mention.from_dict(git.to_dict()) == git


def test_a_bang_fence_runs_at_load() -> None:
    body = "```!\nnode --version\ngh pr list\n```\n"
    assert _mentions(body, 1) == [("node", 2, "runs-at-load"), ("gh", 3, "runs-at-load")]


def test_prose_and_other_languages_mention_nothing() -> None:
    body = ("Use python to run scripts/x.py, then curl the result.\n\n"
            "```text\ncurl https://x\n```\n\n```\nwget y\n```\n\n~~~js\nexec('rm')\n~~~\n")
    assert mentioned_programs(body, 1) == []


def test_python_written_in_a_bash_block_is_not_read_as_commands() -> None:
    body = "```bash\nimport gget\ngget.info(['x'])\nfrom a import b\ngget search x\n```\n"
    assert _mentions(body, 1) == [("gget", 5, "mentioned")]


def test_a_command_only_asking_where_a_program_is_mentions_nothing() -> None:
    assert _mentions("```sh\ncommand -v paperclip >/dev/null || exit 1\n```\n", 1) == []


def test_split_commands_separates_operators_and_drops_redirections() -> None:
    assert split_commands("a 1 | b 2>/dev/null && c; d & e || f $(g h) `i`") == [
        ["a", "1"], ["b", "2"], ["c"], ["d"], ["e"], ["f"], ["g", "h"], ["i"]]


def test_an_unclosed_quote_does_not_stop_the_scan() -> None:
    assert _mentions("```bash\necho 'unclosed && grep x\nsort f\n```\n", 1)[-1] == (
        "sort", 3, "mentioned")


ANTHROPIC = os.environ.get("SKILLPACK_ANTHROPIC_SKILLS")  # a checkout of anthropics/skills


@pytest.mark.skipif(ANTHROPIC is None, reason="set SKILLPACK_ANTHROPIC_SKILLS to a checkout "
                    "of github.com/anthropics/skills (docx and pdf are not in the corpus)")
def test_the_anthropic_docx_and_pdf_skills_show_what_they_run() -> None:
    assert ANTHROPIC is not None
    found = {}
    for name in ("docx", "pdf"):
        text = (Path(ANTHROPIC) / "skills" / name / "SKILL.md").read_text(encoding="utf-8")
        skill = parse_skill(text)
        found[name] = mentioned_programs(skill.body, skill.body_line)
    docx = {m.program for m in found["docx"]}
    scripts = {m.script for m in found["docx"] if m.script}
    assert docx == {"python", "pandoc", "pdftoppm"}
    assert {"scripts/office/soffice.py", "scripts/office/unpack.py", "scripts/office/pack.py",
            "scripts/office/validate.py", "scripts/accept_changes.py",
            "scripts/comment.py"} == scripts
    assert {m.program for m in found["pdf"]} == {"pdftotext", "qpdf", "pdftk", "pdfimages"}
    assert all(m.kind == "mentioned" for m in found["docx"] + found["pdf"])


# SKILLPACK_CORPUS overrides where the corpus is (a worktree has no ../shared beside it).
_NAME = re.compile(r"[A-Za-z0-9_.+][A-Za-z0-9_.+/-]*")


@pytest.mark.corpus
def test_the_corpus_mentions_only_program_names() -> None:
    programs: set[str] = set()
    with_mentions = 0
    for folder in CORPUS_SKILLS:
        text = (folder / "SKILL.md").read_text(encoding="utf-8")
        skill = parse_skill(text)
        found = mentioned_programs(skill.body, skill.body_line)
        with_mentions += bool(found)
        programs.update(m.program for m in found)
        lines = text.split("\n")
        for mention in found:  # each command starts on the SKILL.md line it reports
            assert mention.text.split()[0] in lines[mention.line - 1]
    assert all(_NAME.fullmatch(p) and not p.endswith("/") for p in programs)
    prose = {"the", "a", "to", "and", "import", "from", "if", "then", "run", "use", "note"}
    assert not programs & prose
    assert {"python", "python3", "uv", "curl", "git"} <= programs
    assert with_mentions >= 140  # 151 of 182 skills when written


def test_angle_bracket_placeholders_are_words_not_redirections() -> None:
    (found,) = mentioned_programs("```bash\nnohup python <skill-path>/view.py <dir> &\n```\n", 1)
    assert (found.program, found.context, found.script) == (
        "python", "via nohup", "{skill-path}/view.py")



@given(st.text(alphabet="ab1-_./=~*?$!{}[] \t\r\x0b\x0c\u00a0é;&|()<>`", max_size=40))
def test_a_line_without_quotes_escapes_or_comments_is_split_as_shlex_splits_it(
    text: str,
) -> None:
    # a comment at its end sends the line through shlex; without one it is split at once
    assert split_commands(text) == split_commands(text + " # a comment")
