"""Properties: whatever the text, parsing raises nothing but `SkillError`.

Inputs: arbitrary text; text shaped like a SKILL.md (frontmatter delimiters, tool fences,
YAML punctuation); and real SKILL.md files (corpus and fixtures) with random insertions,
deletions and replacements. Plus invariants of what parses: BOM/CRLF make no difference,
and a substituted value never splits an argv word.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from helpers.paths import CORPUS_SKILLS, FIXTURES
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from skillpack.errors import SkillError
from skillpack.skillmd.skill import Skill, parse_skill
from skillpack.skillmd.validate import validate_skill
from skillpack.source.load import parse_skill_file

SETTINGS = settings(max_examples=300, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])



def _texts(files: list[Path]) -> list[str]:
    """The files that are UTF-8, as text (fixtures/broken/encoding is not)."""
    texts = []
    for path in files:
        with contextlib.suppress(UnicodeDecodeError):
            texts.append(path.read_text(encoding="utf-8"))
    return texts


# a spread of real files: every fixture (the broken ones too) and every 6th corpus skill
SOURCES = _texts([*sorted(FIXTURES.glob("*/SKILL.md")),
                  *sorted(FIXTURES.glob("broken/*/SKILL.md")),
                  *(folder / "SKILL.md" for folder in CORPUS_SKILLS[::6])])
PIECES = ["---", "\n", "\r\n", ": ", ":", " ", "  ", "    ", "\t", "- ", "```", "````", "~~~",
          "```tool\n", "tool", "id: ", "description: ", "params:\n", "run:", "run: ",
          "type: ", "enum: ", "default: ", "integer", "boolean", "number", "$", "$$", "$x",
          "&a", "*a", "!!str", "!", "[", "]", "{", "}", "'", '"', "#", "|", ">", "?", ",",
          "\ufeff", "\x00", "\x85", "é", "ﬁ", "name", "skill", "includes", "metadata", "..",
          "/", "~", "1.10", "yes", "9" * 50]


def parse_or_skill_error(text: str) -> Skill | None:
    """Parse; a SkillError is an accepted outcome, any other exception fails the test."""
    try:
        skill = parse_skill(text)
    except SkillError as err:
        assert err.problems, "a SkillError from parse_skill always lists its problems"
        for problem in err.problems:
            assert problem.severity == "error"
            assert problem.code and problem.message
        return None
    validate_skill(skill)  # validation of anything that parses never raises
    return skill


@SETTINGS
@given(st.text())
def test_arbitrary_text(text: str) -> None:
    parse_or_skill_error(text)


skill_shaped = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=8)),
                        max_size=60).map("".join)


@SETTINGS
@given(skill_shaped, skill_shaped)
def test_skill_shaped_text(front: str, body: str) -> None:
    parse_or_skill_error(f"---\n{front}\n---\n{body}")
    parse_or_skill_error(f"---\nname: x\ndescription: d\n---\n```tool\n{front}\n```\n{body}")


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SOURCES))
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        insert = draw(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)))
        span = draw(st.integers(1, 12))
        if action == "insert":
            text = text[:at] + insert + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + span:]
        else:
            text = text[:at] + insert + text[at + span:]
    return text


@SETTINGS
@given(mutated())
def test_mutated_real_skill_md(text: str) -> None:
    parse_or_skill_error(text)


@settings(max_examples=100, deadline=None, database=None)
@given(st.binary(max_size=200), st.sampled_from(SOURCES[:4]))
def test_arbitrary_bytes_from_a_file(junk: bytes, source: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "skill"
        folder.mkdir()
        raw = source.encode("utf-8")
        (folder / "SKILL.md").write_bytes(raw[: len(raw) // 2] + junk + raw[len(raw) // 2:])
        with contextlib.suppress(SkillError):
            parse_skill_file(folder)


@SETTINGS
@given(mutated())
def test_bom_and_crlf_change_nothing(text: str) -> None:
    # a lone CR is a line end of its own, and only one leading BOM is dropped
    text = text.replace("\r", "").lstrip("\ufeff")
    lf = _outcome(text)
    crlf = _outcome("\ufeff" + text.replace("\n", "\r\n"))
    assert lf == crlf


def _outcome(text: str) -> object:
    try:
        return parse_skill(text)
    except SkillError as err:
        return [(p.code, p.line) for p in err.problems]


words = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=20)


@SETTINGS
@given(st.lists(words, min_size=1, max_size=3), words)
def test_a_value_never_splits_a_word(values: list[str], prefix: str) -> None:
    # refused, not split: a NUL anywhere, a '-' starting a word (tests/hostile/test_round_two)
    assume(all("\x00" not in v for v in values) and not any(v.startswith("-")
                                                             for v in values[1:]))
    names = [f"p{i}" for i in range(len(values))]
    word = "".join(c for c in prefix if not c.isspace()).replace("$", "$$") or "w"
    run = " ".join(["prog", f"{word}${names[0]}", *(f"${n}-x" for n in names[1:])])
    text = ("---\nname: t\ndescription: d\n---\n```tool\nid: t\ndescription: d\nparams:\n"
            + "".join(f"  {n}:\n" for n in names) + f"run: {run}\n```\n")
    (tool,) = parse_skill(text).tools
    argv = tool.argv(dict(zip(names, values, strict=True)))
    assert len(argv) == len(tool.words)
    assert argv[1].endswith(values[0])
    assert argv[2:] == [v + "-x" for v in values[1:]]


def test_sources_are_real() -> None:
    assert len(SOURCES) >= (70 if CORPUS_SKILLS else 40)
