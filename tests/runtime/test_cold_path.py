"""The runtime's cold path does without `dataclasses`, `typing`, `json` and `re`, and checks in
bulk: each replacement must behave exactly as what it replaces.

* `skillpack._record.Record` against a frozen dataclass;
* `load_json` against `json.loads` (values and errors), also without the C scanner;
* `file_columns` against `FileRecord.from_dict`, `digest_columns` against `digest_records`,
  `is_digest` against `DIGEST_RE`, and the name screen of `read_zip` against its regex;
* the runtime's bulk check of a skill (`check_skill_in_bulk`) against its checks one by
  one, on the corpus and on damaged skills: it accepts only what they accept, and serves
  the same files.
"""

from __future__ import annotations

import copy
import json
import math
import pickle
import random
import re
import sys
from dataclasses import FrozenInstanceError, dataclass
from dataclasses import field as dc_field
from typing import Any

import pytest
from helpers.bundles import (
    BUNDLE_SKILLS,
    build_bundle,
    bundle_members,
    manifest_of,
    reindex,
    set_manifest,
)
from helpers.paths import NOTES, WAITLIST
from helpers.zips import Members
from helpers.zips import zip_of as zip_bytes
from hypothesis import given, settings
from hypothesis import strategies as st

import skillpack.runtime as rt
from skillpack import _record
from skillpack._record import Record, field
from skillpack.errors import Problem
from skillpack.formats import manifest
from skillpack.formats.digest import (
    FileRecord,
    digest_columns,
    digest_records,
    file_columns,
    is_digest,
)
from skillpack.formats.manifest import Manifest, load_json
from skillpack.runtime import checks as _runtime_check
from skillpack.storedzip.reader import ZipEntry

# -- Record behaves as a frozen dataclass ------------------------------------------------------


class Point(Record):
    """A record."""

    x: int
    y: str
    z: tuple[int, ...] = ()
    w: str | None = None


@dataclass(frozen=True)
class DPoint:
    x: int
    y: str
    z: tuple[int, ...] = ()
    w: str | None = None


def same_outcome(call: Any, dcall: Any) -> tuple[Any, Any]:
    """What two calls return or raise, with the class names made equal."""
    outcomes = []
    for f in (call, dcall):
        try:
            outcomes.append(repr(f()).replace("DPoint", "Point"))
        except Exception as exc:  # the very exception is compared
            outcomes.append((type(exc), str(exc).replace("DPoint", "Point")))
    return outcomes[0], outcomes[1]


@pytest.mark.parametrize(("args", "kwargs"), [
    ((1, "a"), {}), ((1, "a", (2,), "w"), {}), ((1,), {"y": "b", "w": None}), ((), {}),
    ((1, "a", (), None, 5), {}), ((1,), {"x": 2, "y": "c"}), ((1, "a"), {"q": 1}),
])
def test_record_construction_and_repr_are_a_frozen_dataclass_s(
    args: tuple[Any, ...], kwargs: dict[str, Any],
) -> None:
    got, expected = same_outcome(lambda: Point(*args, **kwargs), lambda: DPoint(*args, **kwargs))
    assert got == expected


def test_record_equality_hash_and_immutability_are_a_frozen_dataclass_s() -> None:
    p, q, d = Point(1, "a", (2,)), Point(1, "a", (2,)), DPoint(1, "a", (2,))
    assert p == q and hash(p) == hash(q) == hash(d) and p != Point(1, "b", (2,))
    assert p != d and p != (1, "a", (2,), None) and len({p, q}) == 1
    for name, verb in (("x", setattr), ("y", delattr), ("new", setattr)):
        args = (name, 2) if verb is setattr else (name,)
        got, expected = same_outcome(lambda: verb(p, *args), lambda: verb(d, *args))  # noqa: B023
        assert got == expected and got[0] is FrozenInstanceError
    assert Point.__match_args__ == DPoint.__match_args__ == ("x", "y", "z", "w")
    match p:
        case Point(1, y, z):
            assert (y, z) == ("a", (2,))
        case _:
            pytest.fail("the record did not match")
    assert not hasattr(p, "__dict__")  # slotted


def test_record_pickles_and_copies_by_its_fields() -> None:
    p = Point(1, "a", (2, 3), "w")
    for clone in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p)):
        assert clone == p and clone is not p


def test_record_refuses_a_field_without_default_after_one_with() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        class Bad(Record):
            a: int = 0
            b: int


class Folder(Record):
    """A record with field options."""

    name: str
    hidden: int = field(default=0, compare=False, repr=False)
    files: dict[str, int] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list, compare=False)

    def __post_init__(self) -> None:
        if self.hidden < 0:
            raise ValueError(f"hidden must be >= 0, not {self.hidden}")


@dataclass(frozen=True)
class DFolder:
    name: str
    hidden: int = dc_field(default=0, compare=False, repr=False)
    files: dict[str, int] = dc_field(default_factory=dict)
    seen: list[str] = dc_field(default_factory=list, compare=False)

    def __post_init__(self) -> None:
        if self.hidden < 0:
            raise ValueError(f"hidden must be >= 0, not {self.hidden}")


@pytest.mark.parametrize(("args", "kwargs"), [
    (("a",), {}), (("a", 2), {}), (("a", 2, {"x": 1}, ["s"]), {}), (("a", -1), {}),
    ((), {"name": "b", "seen": ["t"]}), ((), {}),
])
def test_record_fields_factories_and_post_init_are_a_dataclass_s(
    args: tuple[Any, ...], kwargs: dict[str, Any],
) -> None:
    got, expected = same_outcome(lambda: Folder(*args, **kwargs),
                                 lambda: DFolder(*args, **kwargs))
    assert str(got) == str(expected).replace("DFolder", "Folder")


def test_record_fields_left_out_of_comparison_and_factories_per_instance() -> None:
    a, b = Folder("a", 1, seen=["x"]), Folder("a", 2)
    assert a == b and a != DFolder("a", 1, seen=["x"])
    assert a != Folder("a", files={"f": 1}) and Folder("a").files is not Folder("a").files
    assert repr(a) == repr(DFolder("a", 1, seen=["x"])).replace("DFolder", "Folder")
    assert pickle.loads(pickle.dumps(a)).hidden == 1
    with pytest.raises(TypeError, match="non-default argument 'c' follows default argument"):
        class Bad(Record):
            a: list[int] = field(default_factory=list)
            c: int


class Labelled(Point):
    """A record whose fields are partly inherited (its slots are in two classes)."""

    label: str = "l"


class Unslotted(Record):
    """A record whose class declares its own (empty) slots and keeps a __dict__: its fields
    are no slots, and are set through object.__setattr__."""

    __slots__ = ("__dict__",)
    a: int
    b: list[int] = field(default_factory=list)


def test_the_generated_init_sets_every_field_through_its_slot_or_setattr() -> None:
    """Past the instances built by binding (`_GENERATE_AFTER`), the generated ``__init__``
    (slot setters where the fields are slots) builds what the first instances were, and
    what a frozen dataclass holds; inherited slots and fields that are no slots too."""
    built = [(Point(i, "y", (i,)), Labelled(i, "y", w="w"), Folder(f"f{i}", i),
              Unslotted(i)) for i in range(3 * _record._GENERATE_AFTER)]
    for cls in (Point, Labelled, Folder, Unslotted):
        assert cls.__init__ is not _record._first_init, cls  # generated
    assert _record._slot(Labelled, "x") is Point.__dict__["x"]
    assert _record._slot(Labelled, "label") is Labelled.__dict__["label"]
    assert _record._slot(Unslotted, "a") is None
    for i, (point, labelled, folder, unslotted) in enumerate(built):
        assert repr(point) == repr(DPoint(i, "y", (i,))).replace("DPoint", "Point")
        assert (labelled.x, labelled.y, labelled.z, labelled.w, labelled.label) == (
            i, "y", (), "w", "l")
        assert str(folder) == str(DFolder(f"f{i}", i)).replace("DFolder", "Folder")
        assert (unslotted.a, unslotted.b) == (i, []) and unslotted.__dict__ == {"a": i, "b": []}
    assert built[0][3].b is not built[1][3].b
    with pytest.raises(FrozenInstanceError):
        built[-1][1].label = "m"  # type: ignore[misc]


def test_the_runtime_s_records_keep_their_fields() -> None:
    assert Problem.__match_args__ == ("severity", "code", "message", "file", "line")
    assert FileRecord.__match_args__ == ("path", "mode", "size", "blake3")
    assert ZipEntry.__match_args__ == ("name", "header_offset", "data_offset", "size", "crc32",
                                       "executable")
    assert Manifest.__match_args__ == ("name", "description", "digest", "files", "programs",
                                       "tools", "allowances", "format", "sha256")
    problem = Problem("error", "code", "message")
    assert repr(problem) == ("Problem(severity='error', code='code', message='message', "
                             "file=None, line=None)")
    assert Problem.from_dict(problem.to_dict()) == problem
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'code'"):
        problem.code = "other"  # type: ignore[misc]


# -- load_json is json.loads -------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=4),
    max_leaves=20)


def outcome(parse: Any, text: str) -> Any:
    try:
        return ("value", json.dumps(parse(text), sort_keys=True))
    except Exception as exc:  # the very exception is compared
        return ("error", type(exc), str(exc))


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES, st.sampled_from(["", " ", "\n", " \t\r\n"]), st.integers(0, 2))
def test_load_json_decodes_as_json_loads(value: Any, blank: str, indent: int) -> None:
    text = blank + json.dumps(value, indent=indent or None, ensure_ascii=indent == 1) + blank
    assert outcome(load_json, text) == outcome(json.loads, text)


@settings(max_examples=500, deadline=None)
@given(JSON_VALUES, st.data())
def test_load_json_refuses_as_json_loads(value: Any, data: st.DataObject) -> None:
    text = json.dumps(value)
    cut = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.text(alphabet='{}[]",:0-9eE.+- \ufeffnulltruefalseNaN\\x', max_size=4))
    broken = text[:cut] + junk + text[cut + data.draw(st.integers(0, 2)):]
    assert outcome(load_json, broken) == outcome(json.loads, broken)


@pytest.mark.parametrize("text", [
    "", " ", "\ufeff{}", "{} x", "{}{}", "[1,]", "NaN", "-Infinity", " Infinity ", "1e999",
    '"\\ud800"', '"a\x01b"', "[" * 100_000, '{"a": 1, "a": 2}', "0001", "tru", "[1] \x0c",
])
def test_load_json_edge_cases(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = outcome(json.loads, text)
    assert outcome(load_json, text) == expected
    # Without the C scanner (another Python), load_json uses the json module's decoder.
    monkeypatch.setattr(manifest, "_scan", None)
    monkeypatch.setitem(sys.modules, "_json", None)
    assert outcome(load_json, text) == expected


def test_load_json_gives_json_s_non_finite_floats() -> None:
    value = load_json('[NaN, Infinity, -Infinity, 1.5, 10]')
    assert math.isnan(value[0]) and value[1:] == [math.inf, -math.inf, 1.5, 10]
    assert type(value[4]) is int


# -- the file checks in bulk -------------------------------------------------------------------

HEX = "0123456789abcdef" * 4


class Sub(str):
    pass


class SubInt(int):
    pass


GOOD = [{"path": "a.md", "mode": "100644", "size": 3, "blake3": HEX},
        {"path": "b/\u00e9.py", "mode": "100755", "size": 0, "blake3": "f" * 64}]
DAMAGE: list[tuple[str, Any]] = [
    ("path", ""), ("path", "a\nb"), ("path", 5), ("path", None), ("path", Sub("sub")),
    ("mode", "100600"), ("mode", 100644), ("mode", ["100644"]), ("size", -1), ("size", True),
    ("size", 1.0), ("size", "3"), ("size", SubInt(3)), ("blake3", HEX.upper()),
    ("blake3", HEX[:63]), ("blake3", HEX + "0"), ("blake3", "g" * 64), ("blake3", 7),
    ("blake3", "\u0663" * 64), ("blake3", list(HEX)),
]


def by_from_dict(items: list[Any]) -> Any:
    try:
        records = [FileRecord.from_dict(item) for item in items]
    except Exception as exc:  # the very exception is compared
        return type(exc), str(exc)
    return ([r.path for r in records], [r.mode for r in records], [r.size for r in records],
            [r.blake3 for r in records])


def by_columns(items: list[Any]) -> Any:
    try:
        return file_columns(items)
    except Exception as exc:  # the very exception is compared
        return type(exc), str(exc)


@pytest.mark.parametrize(("field", "value"), DAMAGE)
@pytest.mark.parametrize("at", [0, 1])
def test_file_columns_checks_as_from_dict(field: str, value: Any, at: int) -> None:
    items = [dict(item) for item in GOOD]
    items[at][field] = value
    assert by_columns(items) == by_from_dict(items)
    del items[at][field]
    assert by_columns(items) == by_from_dict(items)
    assert by_columns([*items, 5]) == by_from_dict([*items, 5])


def test_file_columns_of_good_items_and_of_none() -> None:
    assert by_columns(GOOD) == by_from_dict(GOOD)
    assert file_columns([]) == ([], [], [], [])
    extra = [{**GOOD[0], "comment": "kept out, as from_dict does"}]
    assert by_columns(extra) == by_from_dict(extra)


@given(st.lists(st.tuples(st.text(min_size=1).filter(lambda p: "\n" not in p),
                          st.sampled_from(["100644", "100755"]), st.integers(0, 2**40),
                          st.text("0123456789abcdef", min_size=64, max_size=64)), max_size=8))
def test_digest_columns_is_digest_records(rows: list[tuple[str, str, int, str]]) -> None:
    records = [FileRecord(*row) for row in rows]
    random.Random(len(rows)).shuffle(records)
    try:
        expected = digest_records(records)
    except UnicodeEncodeError:  # a lone surrogate: neither can encode it
        with pytest.raises(UnicodeEncodeError):
            digest_columns(*by_from_dict([r.to_dict() for r in records]))
        return
    assert digest_columns([r.path for r in records], [r.mode for r in records],
                          [r.size for r in records], [r.blake3 for r in records]) == expected


@pytest.mark.parametrize("value", [
    "blake3:" + HEX, "blake3:" + HEX.upper(), "blake3:" + HEX[:-1], "blake3:" + HEX + "0",
    "blake3:" + HEX + "\n", "BLAKE3:" + HEX, "sha256:" + HEX, "", "blake3:",
    "blake3:" + "\u0663" * 64, "blake3:" + " " * 64, 5, None, b"blake3:" + HEX.encode(),
])
def test_is_digest_is_digest_re(value: Any) -> None:
    from skillpack.formats.digest import DIGEST_RE  # compiled on first use

    assert isinstance(DIGEST_RE, re.Pattern)
    expected = isinstance(value, str) and DIGEST_RE.fullmatch(value) is not None
    assert is_digest(value) == expected


@given(st.text(alphabet="/.a\\:", max_size=12))
def test_segment_screen_is_the_regex_it_replaces(text: str) -> None:
    assert (("//" in text or "/./" in text or "/../" in text)
            == bool(re.search(r"/\.{0,2}/", text)))


# -- the bulk check of a skill agrees with the checks one by one -------------------------------

def one_by_one(bundle: rt.Bundle, name: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """check_skill without its bulk path: the LoadedSkill, or the problems found."""
    with monkeypatch.context() as patch:
        patch.setattr(_runtime_check, "check_skill_in_bulk", lambda *args: None)
        problems = _runtime_check.Problems(bundle.source)
        skill = _runtime_check.check_packed_skill(bundle._index, bundle._view, name,
                                           bundle._spans[name], problems, bundle.source)
    return skill if skill is not None else [p.code for _, p, _ in problems.found]


def in_bulk(bundle: rt.Bundle, name: str) -> rt.LoadedSkill | None:
    return _runtime_check.check_skill_in_bulk(bundle._index, bundle._view, name,
                                              bundle._spans[name], bundle.source)


def agree(bundle: rt.Bundle, name: str, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Whether the bulk check accepted the skill (as the full checks must then have)."""
    slow, fast = one_by_one(bundle, name, monkeypatch), in_bulk(bundle, name)
    if fast is None:
        return False
    assert isinstance(slow, rt.LoadedSkill), slow
    assert (fast.name, fast.digest, fast._files) == (slow.name, slow.digest, slow._files)
    assert fast.manifest == slow.manifest  # made on first use, from the checked fields
    return True


@pytest.mark.corpus
def test_bulk_check_accepts_every_corpus_skill_as_the_full_checks_do(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
) -> None:
    bundle = rt.load(request.getfixturevalue("corpus_bundle"), lazy=True)
    assert len(bundle) == len(BUNDLE_SKILLS)
    assert all(agree(bundle, name, monkeypatch) for name in bundle.names)


def damaged(change: str) -> Members:
    """The fixtures' bundle with the waitlist skill changed one way (index resealed)."""
    members = bundle_members([WAITLIST, NOTES])
    m = manifest_of(members, "waitlist")
    data = m.to_dict()
    csv = "waitlist/data/waitlist.csv"
    if change == "record-size":
        data["files"][0]["size"] += 1
    elif change == "record-mode":
        data["files"][0]["mode"] = "100755"
    elif change == "record-order":
        data["files"].reverse()
    elif change == "digest":
        data["digest"] = "blake3:" + "0" * 64
    elif change == "name":
        data["name"] = "other"
    elif change == "reserved":
        record = next(f for f in data["files"] if f"waitlist/{f['path']}" == csv)
        data["files"].append({**record, "path": ".skillpack/x"})  # the very bytes of the CSV
        data["files"].sort(key=lambda f: f["path"].encode())
        members["waitlist/.skillpack/x"] = members[csv]
    elif change == "unlisted":
        members["waitlist/extra.txt"] = (b"x", False)
    elif change == "missing":
        del members[csv]
    elif change == "no-skill-md":
        data["files"] = [f for f in data["files"] if f["path"] != "SKILL.md"]
        del members["waitlist/SKILL.md"]
    elif change == "member-exec":
        members[csv] = (members[csv][0], True)
    elif change == "stale-index":  # a new CSV, manifest resealed, the index left as it was
        from blake3 import blake3

        members[csv] = (b"name,email\n", False)
        record = next(f for f in data["files"] if f"waitlist/{f['path']}" == csv)
        record.update(size=11, blake3=blake3(members[csv][0]).hexdigest())
    elif change == "format":
        data["format"] = "2.0"
    elif change == "newer-minor":  # from the future: refused (contract 3)
        data["format"], data["signed_by"] = "1.9", "someone"
    elif change == "field":
        data["extra"] = 1
    if change not in ("digest", "record-order"):
        data["digest"] = digest_records(FileRecord.from_dict(f) for f in data["files"])
    if change == "name":  # the manifest of 'other', in the folder of 'waitlist'
        members["waitlist/.skillpack/manifest.json"] = (json.dumps(data).encode(), False)
    else:
        set_manifest(members, data)
    if change not in ("record-order", "format", "field", "stale-index", "newer-minor"):
        reindex(members)
    return members


@pytest.mark.parametrize("change", [
    "none", "record-size", "record-mode", "record-order", "digest", "name", "reserved",
    "unlisted", "missing", "no-skill-md", "member-exec", "format", "field", "stale-index",
    "newer-minor",
])
def test_bulk_check_accepts_only_what_the_full_checks_accept(
    change: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    bundle = rt.load(zip_bytes(damaged(change)), lazy=True)
    slow = one_by_one(bundle, "waitlist", monkeypatch)
    accepted = agree(bundle, "waitlist", monkeypatch)
    assert accepted == isinstance(slow, rt.LoadedSkill)
    assert accepted == (change == "none"), slow
    assert agree(bundle, "release-notes", monkeypatch)


def test_a_small_bundle_loads_the_same_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    data = build_bundle([WAITLIST, NOTES])
    fast = rt.load(data)
    monkeypatch.setattr(_runtime_check, "check_skill_in_bulk", lambda *args: None)
    slow = rt.load(data)
    for name in fast.names:
        assert fast[name]._files == slow[name]._files
        assert fast[name].manifest == slow[name].manifest


def test_a_record_s_first_instances_are_what_its_generated_init_builds() -> None:
    """A class's first instances are bound by `_bind`, later ones by the generated
    ``__init__``: the same fields, defaults, factories, ``__post_init__`` and errors."""

    def fresh() -> tuple[type[Any], type[Any]]:
        class P(Record):
            x: int
            y: str
            z: tuple[int, ...] = ()
            w: str | None = None

        class F(Record):
            name: str
            hidden: int = field(default=0, compare=False, repr=False)
            files: dict[str, int] = field(default_factory=dict)

            def __post_init__(self) -> None:
                if self.hidden < 0:
                    raise ValueError(f"hidden must be >= 0, not {self.hidden}")

        return P, F

    calls: list[tuple[int, tuple[Any, ...], dict[str, Any]]] = [
        (0, (1, "a"), {}), (0, (1, "a", (2,), "w"), {}), (0, (1,), {"y": "b", "w": None}),
        (0, (), {}), (0, (1, "a", (), None, 5), {}), (0, (1,), {"x": 2, "y": "c"}),
        (0, (1, "a"), {"q": 1}), (0, (), {"y": "b", "x": 3}),
        (1, ("a",), {}), (1, ("a", 2, {"k": 1}), {}), (1, ("a", -1), {}),
        (1, (), {"name": "b", "files": {}}), (1, (), {}), (1, ("a",), {"hidden": 3}),
    ]
    generated = fresh()
    for cls in generated:  # arguments that do not bind: the class gets its generated init
        with pytest.raises(TypeError):
            cls()
        assert vars(cls)["__init__"].__qualname__ == f"{cls.__qualname__}.__init__"
    for which, args, kwargs in calls:
        bound = fresh()[which]  # its first instance: bound
        got = same_outcome(lambda: bound(*args, **kwargs),  # noqa: B023
                           lambda: generated[which](*args, **kwargs))  # noqa: B023
        assert got[0] == got[1], (which, args, kwargs)
    counted = fresh()[1]
    made = [counted("a") for _ in range(12)]  # 8 bound, then the generated init
    assert vars(counted)["_built"] == 8
    assert vars(counted)["__init__"].__qualname__ == f"{counted.__qualname__}.__init__"
    assert all(m.files == {} for m in made) and len({id(m.files) for m in made}) == 12
