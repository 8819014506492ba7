"""The runtime's first-turn fast paths (issue 11) give exactly what the slow ones give.

* `_locate`'s shortcut for the common ``---`` lines finds what its general path finds;
* `catalog_line` folds a description's whitespace as ``" ".join(text.split())`` does;
* `json_string` quotes as ``json.dumps(text, ensure_ascii=False)`` does;
* a SKILL.md whose frontmatter closes in its first 4 KiB is read from that head, the rest
  checked to be UTF-8 and decoded when the body is asked for: what is shown, and every
  refusal with the byte it names, is what reading the whole text gives.
"""

from __future__ import annotations

import hashlib
import json
import sys

import pytest
from blake3 import blake3
from helpers.bundles import manifest_of, reindex, set_manifest
from helpers.paths import CORPUS_SKILLS
from helpers.zips import Members, zip_of
from hypothesis import given, settings
from hypothesis import strategies as st

import skillpack.runtime as rt
from skillpack.errors import SkillError
from skillpack.formats.catalog_text import catalog_line
from skillpack.formats.digest import FileRecord, digest_records
from skillpack.formats.manifest import Manifest, json_string
from skillpack.skillmd import frontmatter_reader as reader
from skillpack.skillmd.frontmatter import normalise_text, split_frontmatter


@pytest.mark.parametrize("source", [
    "---\na: b\n---\n", "---\na: b\n---", "---\na: b\n--- \nx", "--- \na: b\n---\n",
    "---\n---\n", "---\na: b\n----\n---\n", "---\r\na: b\n---\n", "---\na: b\n", "---",
    "\ufeff---\na: b\n---\n", "---\na\n---x\n---\t\n",
])
def test_the_frontmatter_is_found_as_split_frontmatter_finds_it(source: str) -> None:
    got = reader.read_frontmatter(source)
    try:
        want = split_frontmatter(normalise_text(source))
    except SkillError:
        assert got is None
        return
    assert got is not None
    assert (got.data, got.body, got.body_line) == (want.data, want.body, want.body_line)


# -- the catalog's folding and the quoting of load_skill -----------------------------------------


def test_every_character_split_splits_on_but_the_space_is_unprintable() -> None:
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    assert len(spaces) > 20
    assert [c for c in spaces if c.isprintable()] == [" "]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["a", "é", " ", "  ", "\t", "\n", "\x85", "\xa0", "\u2028",
                                 "\u3000", "\x1f", "\u200b", "b c"]), max_size=12).map("".join)
       | st.text(max_size=30))
def test_the_catalog_folds_whitespace_as_split_and_join_do(description: str) -> None:
    assert catalog_line("n", description) == "- n: " + " ".join(description.split())


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=30) | st.sampled_from(["", "\ud800", "a\udfffb", "\x7f\x00\x1f",
                                               "\"\\/\b\f\n\r\t", "\u2028\u2029"]))
def test_json_string_quotes_as_json_dumps_does(text: str) -> None:
    assert json_string(text) == json.dumps(text, ensure_ascii=False)


@pytest.mark.corpus
def test_json_string_quotes_every_corpus_path_as_json_dumps_does() -> None:
    for folder in CORPUS_SKILLS:
        for path in folder.rglob("*"):
            text = path.relative_to(folder).as_posix()
            assert json_string(text) == json.dumps(text, ensure_ascii=False)


# -- SKILL.md read from its head -----------------------------------------------------------------


def with_skill_md(members: Members, name: str, data: bytes) -> bytes:
    """The bundle of `members` with skill `name`'s SKILL.md replaced by `data`, its manifest,
    digest and index recomputed (as a bundle built from such a file would be, were it
    packable): only the runtime's own checks stand between `data` and a caller."""
    manifest = manifest_of(members, name)
    files, sha256 = list(manifest.files), list(manifest.sha256)
    at = [record.path for record in files].index("SKILL.md")
    files[at] = FileRecord(path="SKILL.md", mode=files[at].mode, size=len(data),
                           blake3=blake3(data).hexdigest())
    sha256[at] = hashlib.sha256(data).hexdigest()
    set_manifest(members, Manifest(
        manifest.name, manifest.description, digest_records(files), tuple(files),
        manifest.programs, manifest.tools, manifest.allowances, manifest.format,
        tuple(sha256)))
    members[f"{name}/SKILL.md"] = (data, False)
    reindex(members)
    return zip_of(members)


FRONT = b"---\nname: waitlist\ndescription: Keeps the waitlist.\n---\n"


def whole_text_error(data: bytes) -> str:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"SKILL.md is not valid UTF-8 (byte {exc.start})"
    raise AssertionError("valid UTF-8")


@pytest.mark.parametrize("data", [
    FRONT + b"x" * 5000 + b"\xff\n",  # past the head
    FRONT + b"x" * 4000 + b"\xe2\x82\n" + b"y" * 200,  # before the head's last line feed
    FRONT + b"x" * 4093 + b"\xe2\x82\xac" + b"y" * 200,  # a character across the head's end
    FRONT + b"x" * 4093 + b"\xe2\x82" + b"y" * 200,
    FRONT.replace(b"Keeps", b"Keeps \xc3") + b"x" * 5000,  # in the frontmatter
    FRONT + b"x" * 100 + b"\xff",  # a SKILL.md shorter than the head
])
def test_a_skill_md_not_utf8_anywhere_is_refused_naming_the_byte(
        small: Members, data: bytes) -> None:
    if b"\xe2\x82\xac" in data:
        data += b"\xff"
    bundle = rt.load(with_skill_md(small, "waitlist", data))
    with pytest.raises(SkillError) as caught:
        bundle.catalog_text()
    assert caught.value.message == whole_text_error(data)
    with pytest.raises(SkillError):  # and again: nothing of it is ever shown
        bundle.load_skill("waitlist")


@pytest.mark.parametrize("data", [
    FRONT + b"x" * 5000 + "\u20ac\n".encode() * 300,
    FRONT + (b"line\n" * 2000),
    FRONT.replace(b"Keeps the", b"Keeps the " + b"long " * 2000) + b"body\n" * 100,  # past it
    FRONT.replace(b"\n", b"\r\n") + b"body\r\n" * 2000,  # CR line ends
    FRONT + b"body\r\n" * 2000,  # CR in the body only
    b"\xef\xbb\xbf" + FRONT + b"body\n" * 2000,  # a BOM
    FRONT.replace(b"Keeps", b"Keeps" + b"e" * (4096 - len(FRONT))) + b"x" * 4096,  # at its end
    FRONT.replace(b"Keeps", b"Keeps" + b"e" * (4097 - len(FRONT))) + b"x" * 4096,  # just past
    b"---\nname: waitlist\n" + b"".join(b"k%d: v\n" % i for i in range(1000)) + b"---\nbody\n",
])
def test_a_long_skill_md_reads_as_its_whole_text_does(small: Members, data: bytes) -> None:
    skill = rt.load(with_skill_md(small, "waitlist", data))["waitlist"]
    whole = reader.read_frontmatter(data.decode("utf-8"))
    assert whole is not None
    assert skill.body == whole.body
    assert skill.description == whole.data.get("description", "")
    assert skill.skill.body_line == whole.body_line


@pytest.mark.corpus
def test_every_corpus_skill_md_reads_as_its_whole_text_does(corpus_bundle: bytes) -> None:
    bundle = rt.load(corpus_bundle)
    for name in bundle.names:
        skill = bundle[name]
        whole = reader.read_frontmatter(skill.file("SKILL.md").text())
        assert whole is not None
        assert (skill.description, skill.body) == (whole.data["description"], whole.body)
        assert skill.skill.body_line == whole.body_line


# -- tools without the parser: a SKILL.md with no tool fence and no includes ---------------------


@pytest.mark.corpus
def test_every_corpus_skill_s_tools_are_what_parsing_it_gives(corpus_bundle: bytes) -> None:
    fast, parsed = rt.load(corpus_bundle), rt.load(corpus_bundle)
    for name in fast.names:
        assert fast[name].tools == parsed[name].skill.tools, name


@pytest.mark.parametrize("data", [
    FRONT + b"body\n",
    FRONT + b"```\n```tool\nid: x\n```\n```\n",  # a tool fence inside another: prose
    FRONT + b"~~~~ tool \nid: x\n~~~~\n",  # a fence of tildes
    FRONT + b"    ```tool\nid: x\n```\n",  # indented four: code, not a fence
    FRONT + b"```tool\nid: x\n```\n",  # a tool without run: refused
    FRONT.replace(b"---\nname", b"---\nincludes: ../up\nname") + b"body\n",  # refused
    FRONT.replace(b"---\nname", b"---\nincludes: [a.md]\nname") + b"body\n",  # no workdir
])
def test_tools_are_what_parsing_the_skill_md_gives_or_its_refusal(
        small: Members, data: bytes) -> None:
    fast, parsed = (rt.load(with_skill_md(small, "waitlist", data))["waitlist"]
                    for _ in range(2))
    try:
        want = parsed.skill.tools
    except SkillError as exc:
        with pytest.raises(SkillError) as caught:
            fast.tools  # noqa: B018
        assert caught.value.message == exc.message
    else:
        assert fast.tools == want
