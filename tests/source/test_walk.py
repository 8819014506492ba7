"""The file-set walk (SPEC section 1) on the corpus and on hostile trees built in tmp_path."""

from __future__ import annotations

import os
import socket
import stat
import tempfile
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli import cli
from helpers.paths import CORPUS, CORPUS_SKILLS, FIXTURES, REPO
from helpers.skills import make_tree as make
from helpers.syscalls import deny_open

from skillpack.errors import RefusedError, SkillpackError
from skillpack.source.fileset import FileSet, LeftOut
from skillpack.source.walk import walk

SKILL_MD = "---\nname: demo\ndescription: A demo skill.\n---\n\nBody.\n"


def refusal(root: Path, includes: list[str] | None = None, **kw: object) -> list[tuple[str, str]]:
    with pytest.raises(RefusedError) as info:
        walk(root, includes, **kw)  # type: ignore[arg-type]
    return [(p.code, p.file or "") for p in info.value.problems]


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    return make(tmp_path / "demo", {"SKILL.md": SKILL_MD, "scripts/run.py": "print(1)\n"})


# -- the corpus --------------------------------------------------------------------------------


@pytest.mark.corpus
def test_corpus_has_182_skills() -> None:
    assert len(CORPUS_SKILLS) == 182


@pytest.mark.corpus
def test_every_corpus_skill_walks_to_every_file() -> None:
    for folder in CORPUS_SKILLS:
        fileset = walk(folder)
        on_disk = {
            os.path.relpath(os.path.join(d, f), folder).replace(os.sep, "/")
            for d, _, names in os.walk(folder)
            for f in names
        }
        assert set(fileset.paths) == on_disk, folder
        assert fileset.left_out == () and fileset.allowed == ()
        assert list(fileset.paths) == sorted(fileset.paths, key=lambda p: p.encode())
        assert all(not p.startswith("./") and "\\" not in p for p in fileset.paths)


@pytest.mark.corpus
def test_corpus_gitignore_is_carried() -> None:
    fileset = walk(CORPUS / "kdense-scientific-skills" / "autoskill")
    assert ".gitignore" in fileset.paths


@pytest.mark.corpus
def test_corpus_modes_follow_owner_execute_bit() -> None:
    folder = CORPUS / "anthropics-skills" / "web-artifacts-builder"
    for walked in walk(folder).files:
        executable = os.stat(folder / walked.path).st_mode & stat.S_IXUSR
        assert walked.mode == ("100755" if executable else "100644")
    modes = {f.mode for f in walk(folder).files}
    assert modes == {"100644", "100755"}


@pytest.mark.corpus
def test_included_files_on_corpus_skills_via_the_parser() -> None:
    from skillpack.source.records import included_files

    folder = CORPUS / "kdense-scientific-skills" / "modal"
    assert "references/secrets.md" in included_files(folder)
    assert included_files(folder / "SKILL.md") == included_files(folder)


# -- ignore rules -----------------------------------------------------------------------------


def test_skillignore_reports_the_matching_line(skill: Path) -> None:
    make(skill, {
        ".skillignore": "# build output\n\n*.log\nbuild/\n!keep.log\n",
        "a.log": "", "keep.log": "", "build/out.bin": "x", "build/deep/x": "",
        "docs/b.log": "",
    })
    fileset = walk(skill)
    assert fileset.paths == ("SKILL.md", "keep.log", "scripts/run.py")
    assert fileset.left_out == (
        LeftOut(".skillignore", ".skillignore (never carried)"),
        LeftOut("a.log", ".skillignore:3: *.log"),
        LeftOut("build/", ".skillignore:4: build/"),
        LeftOut("docs/b.log", ".skillignore:3: *.log"),
    )


def test_skillignore_in_another_case_is_an_ordinary_file(skill: Path) -> None:
    make(skill, {".SKILLIGNORE": "*.py\n"})  # not .skillignore on a case-sensitive disk
    assert walk(skill).paths == (".SKILLIGNORE", "SKILL.md", "scripts/run.py")


def test_skillignore_cannot_reinclude_inside_an_ignored_folder(skill: Path) -> None:
    make(skill, {".skillignore": "cache/\n!cache/keep.txt\n", "cache/keep.txt": ""})
    assert "cache/keep.txt" not in walk(skill).paths


@pytest.mark.parametrize(
    ("rel", "left", "rule"),
    [
        (".git/HEAD", ".git/", "built-in: .git/"),
        ("sub/.hg/store", "sub/.hg/", "built-in: .hg/"),
        (".svn/entries", ".svn/", "built-in: .svn/"),
        (".bzr/branch", ".bzr/", "built-in: .bzr/"),
        ("scripts/__pycache__/run.pyc", "scripts/__pycache__/", "built-in: __pycache__/"),
        ("scripts/old.pyc", "scripts/old.pyc", "built-in: *.pyc"),
        ("docs/.DS_Store", "docs/.DS_Store", "built-in: .DS_Store"),
        (".SKILL.md.swp", ".SKILL.md.swp", "built-in: *.swp (editor swap file)"),
        ("a.swo", "a.swo", "built-in: *.swo (editor swap file)"),
        ("SKILL.md~", "SKILL.md~", "built-in: *~ (editor backup file)"),
        (".#SKILL.md", ".#SKILL.md", "built-in: .#* (editor lock file)"),
        ("#SKILL.md#", "#SKILL.md#", "built-in: #*# (editor autosave file)"),
        (".skillpack/manifest.json", ".skillpack/",
         "built-in: .skillpack/ (manifest of a packed skill)"),
    ],
)
def test_builtin_ignores_are_reported(skill: Path, rel: str, left: str, rule: str) -> None:
    make(skill, {rel: "x"})
    fileset = walk(skill)
    assert fileset.paths == ("SKILL.md", "scripts/run.py")
    assert fileset.left_out == (LeftOut(left, rule),)


def test_skillpack_folder_below_the_root_is_carried(skill: Path) -> None:
    make(skill, {"docs/.skillpack/notes.md": "x"})
    assert "docs/.skillpack/notes.md" in walk(skill).paths


def test_ignored_secret_is_not_refused(skill: Path) -> None:
    make(skill, {".skillignore": "." + "env\n", "." + "env": "TOKEN=1\n"})
    assert walk(skill).paths == ("SKILL.md", "scripts/run.py")


# -- includes ---------------------------------------------------------------------------------


def test_includes_carry_skill_md_and_declared_entries_only(skill: Path) -> None:
    make(skill, {"data/a.csv": "", "data/sub/b.csv": "", "notes.md": "", "other/x": "",
                 "data/sub/__pycache__/c.pyc": "", ".skillignore": "*.tmp\n", "data/t.tmp": ""})
    fileset = walk(skill, ["scripts/run.py", "data"])
    assert fileset.paths == ("SKILL.md", "data/a.csv", "data/sub/b.csv", "scripts/run.py")
    assert {x.path for x in fileset.left_out} == {
        ".skillignore", "data/sub/__pycache__/", "data/t.tmp",
    }


def test_overlapping_and_dotted_includes(skill: Path) -> None:
    fileset = walk(skill, ["./scripts", "scripts/run.py", "scripts/", "SKILL.md"])
    assert fileset.paths == ("SKILL.md", "scripts/run.py")


def test_include_dot_means_the_whole_folder(skill: Path) -> None:
    assert walk(skill, ["."]).paths == walk(skill).paths


def test_fixture_with_includes_via_the_parser() -> None:
    from skillpack.source.load import load_skill
    from skillpack.source.records import included_files

    skill = load_skill(REPO / "fixtures" / "waitlist")
    assert skill.include_list is not None
    assert included_files(skill) == ["SKILL.md", "data/waitlist.csv", "scripts/waitlist.py"]


@pytest.mark.parametrize(
    ("entry", "code"),
    [
        ("/etc/passwd", "include-absolute"),
        ("C:/Windows", "include-absolute"),
        ("~/notes", "include-home"),
        ("~", "include-home"),
        ("../outside.txt", "include-dotdot"),
        ("scripts/../../outside.txt", "include-dotdot"),
        ("nope.txt", "include-missing"),
        ("scripts/run.py/more", "include-missing"),
        ("scripts\\run.py", "unportable-name"),
    ],
)
def test_bad_includes_are_refused(skill: Path, entry: str, code: str) -> None:
    (skill.parent / "outside.txt").write_text("secret-ish")
    assert refusal(skill, [entry]) == [(code, entry)]


def test_missing_skill_md_with_includes(tmp_path: Path) -> None:
    make(tmp_path, {"a.txt": ""})
    assert refusal(tmp_path, ["a.txt"]) == [("include-missing", "SKILL.md")]


# -- refusals ---------------------------------------------------------------------------------


def test_symlinked_file_is_refused(skill: Path) -> None:
    (skill / "link.md").symlink_to(skill / "SKILL.md")
    [(code, path)] = refusal(skill)
    assert (code, path) == ("symlink", "link.md")


def test_symlink_inside_a_walked_folder_is_refused(skill: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (skill / "scripts" / "data").symlink_to(tmp_path / "elsewhere")
    (skill / "scripts" / "dangling").symlink_to(tmp_path / "nothing-here")
    assert refusal(skill) == [("symlink", "scripts/dangling"), ("symlink", "scripts/data")]


def test_symlinked_parent_folder_of_an_include_is_refused(skill: Path, tmp_path: Path) -> None:
    make(tmp_path, {"real/data.csv": "a,b\n"})
    (skill / "linked").symlink_to(tmp_path / "real")
    assert refusal(skill, ["linked/data.csv"]) == [("symlink", "linked")]
    assert refusal(skill, ["linked"]) == [("symlink", "linked")]


def test_symlink_loop_does_not_hang(skill: Path) -> None:
    (skill / "a").symlink_to(skill / "b")
    (skill / "b").symlink_to(skill / "a")
    (skill / "scripts" / "up").symlink_to(skill)
    assert refusal(skill) == [("symlink", "a"), ("symlink", "b"), ("symlink", "scripts/up")]
    assert refusal(skill, ["scripts/up/scripts"]) == [("symlink", "scripts/up")]


def test_fifo_is_refused_without_blocking(skill: Path) -> None:
    os.mkfifo(skill / "scripts" / "pipe")
    [(code, path)] = refusal(skill)
    assert (code, path) == ("special-file", "scripts/pipe")
    assert refusal(skill, ["scripts/pipe"]) == [("special-file", "scripts/pipe")]


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A folder with a short path: a unix socket path is limited to about 100 bytes."""
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="sp") as name:
        yield Path(name)


def test_socket_is_refused(short_dir: Path) -> None:
    make(short_dir, {"SKILL.md": SKILL_MD})
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(short_dir / "s"))
        problems = refusal(short_dir)
    finally:
        server.close()
    assert problems == [("special-file", "s")]


def test_device_is_refused(skill: Path) -> None:
    try:
        os.mknod(skill / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs root")
    assert refusal(skill) == [("special-file", "null")]


def test_every_problem_is_listed_at_once(skill: Path) -> None:
    os.mkfifo(skill / "pipe")
    (skill / "link").symlink_to(skill / "SKILL.md")
    make(skill, {"id_" + "rsa": "k", "bad\nname.txt": ""})
    with pytest.raises(RefusedError) as info:
        walk(skill, allow=["not/carried.pem"])
    codes = sorted(p.code for p in info.value.problems)
    assert codes == ["allow-unused", "secret", "special-file", "symlink", "unportable-name"]
    assert all(p.severity == "error" and p.message for p in info.value.problems)
    assert "5 problems" in str(info.value)


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("line\nbreak.md", "line\\nbreak.md"),
        ("tab\there.md", "tab\\there.md"),
        ("del\x7f.md", "del\\x7f.md"),
        ("bell\x07.md", "bell\\x07.md"),
        ("back\\slash.md", "back\\slash.md"),
    ],
)
def test_unportable_names_are_refused(skill: Path, name: str, shown: str) -> None:
    (skill / name).write_text("x")
    assert refusal(skill) == [("unportable-name", shown)]


def test_invalid_utf8_name_is_refused(skill: Path) -> None:
    os.close(os.open(os.fsencode(skill) + b"/caf\xe9.md", os.O_CREAT | os.O_WRONLY, 0o644))
    assert refusal(skill) == [("unportable-name", "caf\\xe9.md")]


def test_unportable_folder_name_is_reported_once(skill: Path) -> None:
    make(skill, {"bad\x01dir/a": "", "bad\x01dir/b": ""})
    assert refusal(skill) == [("unportable-name", "bad\\x01dir")]


def test_case_collision_is_refused(skill: Path) -> None:
    make(skill, {"README.md": "a", "readme.md": "b"})
    [(code, path)] = refusal(skill)
    assert code == "name-collision" and path in ("README.md", "readme.md")


def test_case_collision_between_folder_and_file(skill: Path) -> None:
    make(skill, {"Docs/a.md": "", "docs": ""})
    assert [code for code, _ in refusal(skill)] == ["name-collision"]


def test_nfc_collision_is_refused(skill: Path) -> None:
    nfc, nfd = unicodedata.normalize("NFC", "café.md"), unicodedata.normalize("NFD", "café.md")
    assert nfc != nfd
    make(skill, {nfc: "a", nfd: "b"})
    with pytest.raises(RefusedError) as info:
        walk(skill)
    [problem] = info.value.problems
    assert problem.code == "name-collision" and "NFC" in problem.message


def test_collision_outside_the_includes_does_not_count(skill: Path) -> None:
    make(skill, {"Notes.md": "", "notes.md": ""})
    assert walk(skill, ["notes.md"]).paths == ("SKILL.md", "notes.md")


def test_nfd_name_is_written_nfc_and_read_from_disk(skill: Path) -> None:
    from skillpack.source.records import record_files

    nfd = unicodedata.normalize("NFD", "résumé.md")
    make(skill, {nfd: "cv"})
    fileset = walk(skill)
    nfc = unicodedata.normalize("NFC", nfd)
    assert nfc in fileset.paths and nfd not in fileset.paths
    [record] = [r for r in record_files(fileset) if r.path == nfc]
    assert record.size == 2


def test_unreadable_folder_is_named_not_a_traceback(skill: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any folder; the next test simulates this case")
    locked = skill / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        assert refusal(skill) == [("unreadable", "locked")]
    finally:
        locked.chmod(0o755)


def test_unreadable_folder_simulated(skill: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make(skill, {"locked/a.txt": ""})
    deny_open(monkeypatch, lambda path, _: path.endswith("locked"))  # a folder of mode 000
    with pytest.raises(RefusedError) as info:
        walk(skill)
    [problem] = info.value.problems
    assert (problem.code, problem.file) == ("unreadable", "locked")
    assert "Permission denied" in problem.message


def test_root_must_be_a_folder(tmp_path: Path) -> None:
    with pytest.raises(SkillpackError):
        walk(tmp_path / "missing")


# -- allowances -------------------------------------------------------------------------------


def test_allowance_lets_a_named_file_through(skill: Path) -> None:
    cert = "certs/ca" + ".pem"
    make(skill, {cert: "public cert\n"})
    assert refusal(skill) == [("secret", cert)]
    fileset = walk(skill, allow=[cert])
    assert cert in fileset.paths and fileset.allowed == (cert,)


def test_allowance_for_a_path_not_carried_is_an_error(skill: Path) -> None:
    make(skill, {"ignored.pem": "", ".skillignore": "ignored.pem\n"})
    assert refusal(skill, allow=["ignored.pem"]) == [("allow-unused", "ignored.pem")]
    assert refusal(skill, allow=["typo.pem"]) == [("allow-unused", "typo.pem")]


def test_allowance_from_frontmatter(tmp_path: Path) -> None:
    from skillpack.source.load import skill_fileset
    from skillpack.source.records import included_files

    key = "fixtures/test" + ".key"
    skill = make(tmp_path / "s", {
        "SKILL.md": "---\nname: s\ndescription: d\nmetadata:\n"
                    f"  skillpack-allow-secrets: \"{key}\"\n---\nbody\n",
        key: b"-----BEGIN " + b"PRIVATE KEY-----\n",
    })
    assert skill_fileset(skill).allowed == (key,)
    assert key in included_files(skill)


# -- scale ------------------------------------------------------------------------------------


def test_a_thousand_folders_deep(tmp_path: Path) -> None:
    deep = tmp_path / "s"
    deep.mkdir()
    path = str(deep)
    for _ in range(1000):  # one mkdir at a time: os.makedirs and Path.mkdir recurse
        path += "/d"
        os.mkdir(path)
    Path(path, "leaf.txt").write_text("bottom")
    (deep / "SKILL.md").write_text(SKILL_MD)
    try:
        fileset = walk(deep)
        assert fileset.paths == ("SKILL.md", "d/" * 1000 + "leaf.txt")
        assert walk(deep, ["d"]).paths == fileset.paths
    finally:  # shutil.rmtree recurses, so pytest could not clean this tree up later
        os.unlink(os.path.join(path, "leaf.txt"))
        while path != str(deep):
            os.rmdir(path)
            path = os.path.dirname(path)


def test_a_hundred_thousand_files(tmp_path: Path) -> None:
    # in memory where there is a tmpfs: 100,000 files on a busy disk take a minute to create
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(dir=shm or tmp_path) as name:
        root = Path(name)
        for folder in range(200):
            sub = root / f"f{folder:03d}"
            sub.mkdir()
            for index in range(500):
                os.close(os.open(sub / f"{index}.txt", os.O_CREAT | os.O_WRONLY, 0o644))
        fileset = walk(root)
        assert len(fileset.files) == 100_000
        assert fileset.paths[0] == "f000/0.txt" and fileset.paths[-1] == "f199/99.txt"


# -- discovery and the files command ----------------------------------------------------------


def test_find_skills(tmp_path: Path) -> None:
    from skillpack.source.discover import find_skills

    make(tmp_path, {
        "b/SKILL.md": SKILL_MD, "b/nested/SKILL.md": SKILL_MD, "a/x/SKILL.md": SKILL_MD,
        ".git/c/SKILL.md": SKILL_MD, "__pycache__/d/SKILL.md": SKILL_MD, "e/notes.md": "",
    })
    (tmp_path / "linked").symlink_to(tmp_path / "b")
    assert find_skills(tmp_path) == [tmp_path / "a" / "x", tmp_path / "b"]
    assert find_skills(tmp_path / "b") == [tmp_path / "b"]
    assert find_skills(tmp_path / "b" / "SKILL.md") == [tmp_path / "b"]
    assert find_skills(tmp_path / "e") == []
    with pytest.raises(SkillpackError):
        find_skills(tmp_path / "missing")


def test_files_command_lists_then_left_out(skill: Path) -> None:

    make(skill, {".skillignore": "*.log\n", "x.log": ""})
    result = cli("files", skill)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "SKILL.md", "scripts/run.py", "", "left out (2):",
        "  .skillignore  (.skillignore (never carried))", "  x.log  (.skillignore:1: *.log)",
    ]


def test_files_command_json(skill: Path) -> None:
    import json


    result = cli("files", "--json", skill)
    assert result.exit_code == 0
    [data] = json.loads(result.output)
    assert data["name"] == "demo"
    assert [f["path"] for f in data["files"]] == ["SKILL.md", "scripts/run.py"]
    assert all(len(f["blake3"]) == 64 for f in data["files"])


def test_files_command_refusal_prints_every_problem(skill: Path) -> None:

    (skill / "link").symlink_to(skill / "SKILL.md")
    os.mkfifo(skill / "pipe")
    result = cli("files", skill)
    assert result.exit_code == 1
    assert "link: error: [symlink]" in result.output
    assert "pipe: error: [special-file]" in result.output


def test_files_command_usage_errors(tmp_path: Path) -> None:

    assert cli("files", tmp_path / "missing").exit_code == 2
    empty = cli("files", tmp_path)
    assert empty.exit_code == 1 and "no SKILL.md" in empty.output


def test_fileset_to_dict(skill: Path) -> None:
    data = walk(skill).to_dict()
    assert [f["path"] for f in data["files"]] == ["SKILL.md", "scripts/run.py"]
    assert isinstance(walk(skill), FileSet)
    assert LeftOut.from_dict(LeftOut("a", "b").to_dict()) == LeftOut("a", "b")


def test_included_files_refuses_what_pack_refuses() -> None:
    """The fixture's description is over the 1,024-character limit: pack refuses it."""
    from skillpack.errors import SkillError
    from skillpack.source.records import included_files

    folder = FIXTURES / "broken" / "description-too-long"
    assert "SKILL.md" in walk(folder).paths  # the file set itself is fine
    with pytest.raises(SkillError):
        included_files(folder)
    result = cli("files", folder)
    assert result.exit_code == 1 and "cannot be packed" in result.output


def test_a_skillignore_that_is_no_regular_file_is_met_as_before(
        skill: Path, tmp_path: Path) -> None:
    """The root's .skillignore looked up from its listing (review of the lookup): a symlink
    of that name is refused as a symlink (its target's rules never read), one in another
    case too; a folder of that name is left out, never read as rules; a .skillignore with
    rules beside a link named .SKILLIGNORE still applies. A walk of declared includes,
    which looks it up first, says the same of the link."""
    (tmp_path / "rules.txt").write_text("scripts/\n")
    link = skill / ".skillignore"
    link.symlink_to(tmp_path / "rules.txt")
    assert refusal(skill) == [("symlink", ".skillignore")]
    assert refusal(skill, ["SKILL.md"]) == [("symlink", ".skillignore")]
    link.unlink()
    (skill / ".SkillIgnore").symlink_to(tmp_path / "rules.txt")  # not .skillignore here
    assert refusal(skill) == [("symlink", ".SkillIgnore")]
    (skill / ".SkillIgnore").unlink()
    make(skill, {".skillignore/x.txt": "scripts/\n"})  # a folder by that name
    fileset = walk(skill)
    assert fileset.paths == ("SKILL.md", "scripts/run.py")
    assert [x.path for x in fileset.left_out] == [".skillignore/"]
    (skill / ".skillignore" / "x.txt").unlink()
    (skill / ".skillignore").rmdir()
    make(skill, {".skillignore": "scripts/\n"})
    (skill / ".SKILLIGNORE").symlink_to(tmp_path / "rules.txt")
    assert refusal(skill) == [("symlink", ".SKILLIGNORE")]
    (skill / ".SKILLIGNORE").unlink()
    assert walk(skill).paths == ("SKILL.md",)
