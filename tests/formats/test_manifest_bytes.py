"""`Manifest.to_bytes` is `canonical_json(Manifest.to_dict())`, byte for byte: its files'
list is written as text a file (not a dict a file), on the corpus and on odd paths; and
`canonical_text` (the C encoder without importing `json`) is ``json.dumps`` in canonical form,
text and errors, on generated values."""

from __future__ import annotations

import json

import pytest
from helpers.paths import CORPUS_SKILLS
from hypothesis import given, settings
from hypothesis import strategies as st

from skillpack.errors import SkillpackError
from skillpack.formats.digest import FileRecord
from skillpack.formats.manifest import Manifest, canonical_json, canonical_text
from skillpack.packing.prepare import prepare_skill

HEX = "0123456789abcdef" * 4

ODD_PATHS = ['a "quoted" name.md', "back\\slash.md", "tab\there.md", "nl\nhere.md",
             "del\x7f.md", "c1\x85.md", "\u00e9t\u00e9.md", "emoji-\U0001f600.md",
             "line\u2028sep.md", "bom\ufeff.md", "</script>.md", "z" * 300]


def _manifest(paths: list[str], *, sha: bool, sizes: list[object] | None = None) -> Manifest:
    sizes = sizes or [i * 1000003 for i in range(len(paths))]
    files = tuple(FileRecord(p, "100755" if i % 3 == 0 else "100644", s, HEX)  # type: ignore[arg-type]
                  for i, (p, s) in enumerate(zip(paths, sizes, strict=True)))
    return Manifest(name="odd", description='a "description" with \u00e9 and \\n',
                    digest="blake3:" + HEX, files=files,
                    programs=({"path": "x.sh", "interpreter": "sh"},),
                    tools=({"name": "t", "schema": {"b": 1, "a": [True, None, 1.5]}},),
                    allowances=("x.md",), sha256=(HEX[::-1],) * len(paths) if sha else ())


@pytest.mark.parametrize("sha", [True, False])
def test_odd_paths_give_the_canonical_bytes(sha: bool) -> None:
    manifest = _manifest(sorted(ODD_PATHS, key=lambda p: p.encode()), sha=sha)
    assert manifest.to_bytes() == canonical_json(manifest.to_dict())


@pytest.mark.parametrize("sizes", [[True, 1], [1.0, 2], [2**70, 0]])
def test_unusual_fields_give_the_canonical_bytes(sizes: list[object]) -> None:
    """A size that is a bool or a float (made in code, never read) is written as the JSON
    encoder writes it; a huge int as it is."""
    manifest = _manifest(["a.md", "b.md"], sha=True, sizes=sizes)
    assert manifest.to_bytes() == canonical_json(manifest.to_dict())


def test_upper_case_hex_and_no_files_give_the_canonical_bytes() -> None:
    upper = Manifest(name="u", description="", digest="blake3:" + HEX,
                     files=(FileRecord("a.md", "100644", 1, HEX.upper()),))
    empty = Manifest(name="e", description="", digest="blake3:" + HEX, files=())
    for manifest in (upper, empty):
        assert manifest.to_bytes() == canonical_json(manifest.to_dict())


@pytest.mark.corpus
def test_every_corpus_manifest_gives_the_canonical_bytes() -> None:
    checked = 0
    for folder in CORPUS_SKILLS:
        try:
            manifest = prepare_skill(folder).manifest
        except SkillpackError:
            continue  # the corpus's one refused skill
        assert manifest.to_bytes() == canonical_json(manifest.to_dict()), folder
        checked += 1
    assert checked >= len(CORPUS_SKILLS) - 1


def test_fields_made_in_code_of_other_types_give_the_canonical_bytes() -> None:
    """An allowance or description that is not a string (a Manifest made in code; a read one
    is refused) may hold the text the files' list is put before: written as
    `canonical_json` writes it all the same."""
    odd = Manifest(name="o", description={"a": 1, "format": 2},  # type: ignore[arg-type]
                   digest="blake3:" + HEX, files=(FileRecord("a.md", "100644", 1, HEX),),
                   allowances=({"b": 1, "format": "x"},), sha256=(HEX,))  # type: ignore[arg-type]
    assert odd.to_bytes() == canonical_json(odd.to_dict())


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=4),
    max_leaves=20)


def _dumped(data: object) -> tuple[str, str] | str:
    """What ``json.dumps`` in canonical form gives, or the error it raises (type, words)."""
    try:
        return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False)
    except (TypeError, ValueError) as err:
        return type(err).__name__, str(err)


def _canonical(data: object) -> tuple[str, str] | str:
    try:
        return canonical_text(data)
    except (TypeError, ValueError) as err:
        return type(err).__name__, str(err)


@settings(max_examples=400, deadline=None)
@given(_JSON)
def test_canonical_text_is_json_dumps_canonical(data: object) -> None:
    """`canonical_text` (the C encoder, without importing `json`) gives what ``json.dumps``
    gives: the same text, or the same error (NaN and infinities refused)."""
    assert _canonical(data) == _dumped(data)


def test_canonical_text_refuses_what_json_dumps_refuses() -> None:
    circular: list[object] = []
    circular.append(circular)
    for data in ({1: object()}, {"a": {1, 2}}, float("nan"), [float("-inf")], circular,
                 {("t",): 1}, b"bytes"):
        assert _canonical(data) == _dumped(data), data
    assert canonical_text({"a": 1}) == '{"a":1}'  # and it still works after the errors


#: Text that looks like the key `to_bytes` splices the files' list before, or like its
#: neighbours, to be put in every string of a manifest.
SPLICE = [',"format":', '","format":"', '"files":[', ',"format":"1.1"}', "\\", '"', "format",
          "\u2028", "\x00", "\U0001f600", "}", "]", "\ud800"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(SPLICE) | st.text(max_size=4), max_size=6).map("".join),
       st.lists(st.lists(st.sampled_from(SPLICE) | st.text(max_size=3), max_size=4).map("".join),
                max_size=3),
       st.lists(st.sampled_from(SPLICE) | st.text(max_size=3), min_size=1, max_size=4).map(
           "".join),
       st.booleans())
def test_strings_like_the_splice_point_give_the_canonical_bytes(
        text: str, allowances: list[str], path: str, sha: bool) -> None:
    """Review of the splice: a description, name, allowances and file path holding
    ``,"format":`` (and the rest of what surrounds the point the files' list goes in), quotes,
    backslashes, NUL, U+2028, astral characters: `to_bytes` is ``canonical_json(to_dict())``
    and ``json.dumps`` of it; a lone surrogate fails both ways alike."""
    files = (FileRecord(path, "100644", 3, HEX), FileRecord(path + "x", "100755", 0, HEX))
    manifest = Manifest(name=text, description=text, digest="blake3:" + HEX, files=files,
                        allowances=tuple(allowances), sha256=(HEX,) * 2 if sha else ())
    try:
        expected = json.dumps(manifest.to_dict(), sort_keys=True, separators=(",", ":"),
                              ensure_ascii=False, allow_nan=False).encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        with pytest.raises(UnicodeEncodeError):
            manifest.to_bytes()
        with pytest.raises(UnicodeEncodeError):
            canonical_json(manifest.to_dict())
        return
    assert manifest.to_bytes() == expected == canonical_json(manifest.to_dict())
    assert json.loads(expected) == manifest.to_dict()


@pytest.mark.parametrize("field", ["path", "blake3"])
def test_a_field_of_another_type_is_written_as_canonical_json_writes_it(field: str) -> None:
    """A record built in code with a path or BLAKE3 that is no string (the types forbid it;
    no skill on disk gives one) gets `canonical_json`'s bytes, or its error, not another."""
    base = _manifest(["a.md", "b.md"], sha=False)
    odd = FileRecord(**{**base.files[0].to_dict(), field: 7})  # type: ignore[arg-type]
    manifest = Manifest(name=base.name, description=base.description, digest=base.digest,
                        files=(odd, base.files[1]), programs=base.programs, tools=base.tools,
                        allowances=base.allowances, sha256=())
    assert manifest.to_bytes() == canonical_json(manifest.to_dict())
