"""`install` from a `.well-known/agent-skills/` site a hostile or careless party serves: every
refusal names the URL, says what is wrong and writes nothing; a slow site meets a deadline."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.install import Trickle, cli, make_skill
from helpers.zips import anthropic_zip

from skillpack.errors import SkillpackError
from skillpack.install.agents import AgentFolder
from skillpack.install.pipeline import install
from skillpack.publish.oci import Timeouts

WELL_KNOWN = ".well-known/agent-skills"
SCHEMA = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"


def site_of(tmp_path: Path, *names: str) -> Path:
    """A site `export well-known` wrote for skills `names` (``solo``: a SKILL.md alone, a
    ``skill-md`` entry; any other name has a script beside: an ``archive``)."""
    skills = tmp_path / "skills-src"
    for name in names:
        make_skill(skills, name, scripts=None if name == "solo" else {
            "scripts/run.sh": "#!/bin/sh\necho hi\n"})
    site = tmp_path / "site"
    result = cli("export", "well-known", *(skills / n for n in names), "-o", site)
    assert result.exit_code == 0, result.output
    return site


def index_of(site: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((site / WELL_KNOWN / "index.json").read_text())
    return data


def write_index(site: Path, index: Any) -> None:
    (site / WELL_KNOWN / "index.json").write_text(json.dumps(index))


def entry(site: Path, name: str) -> dict[str, Any]:
    [found] = [e for e in index_of(site)["skills"] if e["name"] == name]
    return dict(found)


def refused(args: list[object]) -> dict[str, Any]:
    """`install ARGS --json`, which must refuse (exit 1) as a JSON document, no traceback."""
    result = cli("install", *args, "--json")
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    data: dict[str, Any] = json.loads(result.stdout)
    assert data["ok"] is False
    assert "skillpack-fetched" not in result.stdout  # never the temporary folder
    return data


def test_an_index_nested_too_deeply_is_refused_naming_it(tmp_path: Path,
                                                         serve: Callable[[Path], str]) -> None:
    """It was a RecursionError traceback (json.loads), a 200 KB index under the limit."""
    index = tmp_path / "site" / WELL_KNOWN / "index.json"
    index.parent.mkdir(parents=True)
    index.write_text('{"skills": ' + "[" * 100_000 + "]" * 100_000 + "}")
    url = serve(tmp_path / "site")
    data = refused([url, "--into", tmp_path / "out"])
    assert data["error"].startswith(f"{url}/{WELL_KNOWN}/index.json: the index is not JSON "
                                    "skillpack reads: it is nested too deeply")
    assert not (tmp_path / "out").exists()


def test_every_name_an_index_lists_twice_is_refused_at_once(
        tmp_path: Path, serve: Callable[[Path], str]) -> None:
    """Two entries of one name were a FileExistsError traceback (skill-md and archive
    alike); one given as each wrote both. Now every such name, once, and nothing."""
    site = site_of(tmp_path, "alpha", "solo")
    alpha, solo = entry(site, "alpha"), entry(site, "solo")
    write_index(site, {"$schema": SCHEMA, "skills": [alpha, solo, alpha, solo, solo]})
    url = serve(site)
    data = refused([url, "--into", tmp_path / "out"])
    assert data["error"] == (f"{url}/{WELL_KNOWN}/index.json: the index lists 2 name(s) more "
                             "than once: 'alpha' (2 times); 'solo' (3 times) (each skill is "
                             "listed once; ask the site to fix its index)")
    as_archive = {**solo, "type": "archive", "url": alpha["url"], "digest": alpha["digest"]}
    write_index(site, {"$schema": SCHEMA, "skills": [solo, as_archive]})
    assert "'solo' (2 times)" in refused([url, "--into", tmp_path / "out"])["error"]
    assert not (tmp_path / "out").exists()


def test_a_skill_not_named_as_the_index_names_it_is_refused_naming_its_url(
        tmp_path: Path, serve: Callable[[Path], str]) -> None:
    """The index says `good`, its archive holds `evil`: evil was installed (a skill-md
    entry of the same kind was refused, named by a temporary folder already removed)."""
    site = site_of(tmp_path, "evil", "solo")
    evil, solo = entry(site, "evil"), entry(site, "solo")
    url = serve(site)
    write_index(site, {"$schema": SCHEMA, "skills": [{**evil, "name": "good"}]})
    data = refused([url, "--into", tmp_path / "out"])
    assert data["error"] == (f"{url}/{WELL_KNOWN}/evil.zip: the index names this skill "
                             "'good', but what it delivers is the skill 'evil' (the site's "
                             "index and its artifact disagree: do not install it; ask the "
                             "site to fix its index)")
    write_index(site, {"$schema": SCHEMA, "skills": [{**solo, "name": "other"}]})
    data = refused([url, "--into", tmp_path / "out"])
    assert data["error"].startswith(f"{url}/{WELL_KNOWN}/solo/SKILL.md: skill 'solo' is "
                                    "invalid")
    [problem] = data["problems"]
    assert (problem["code"], problem["file"]) == ("name-mismatch",
                                                  f"{url}/{WELL_KNOWN}/solo/SKILL.md")
    assert not (tmp_path / "out").exists()


def test_a_skill_md_of_a_site_is_named_by_its_url(tmp_path: Path,
                                                   serve: Callable[[Path], str]) -> None:
    """Its `source` and a lock's refusal named the temporary folder (an archive's, the URL)."""
    site = site_of(tmp_path, "solo")
    url = serve(site)
    lock = tmp_path / "empty.lock"
    make_skill(tmp_path / "other", "other")
    assert cli("lock", tmp_path / "other" / "other", "-o", lock).exit_code == 0
    data = refused([url, "--into", tmp_path / "out", "--lock", lock])
    assert data["problems"][0]["file"] == f"{url}/{WELL_KNOWN}/solo/SKILL.md"
    result = cli("install", url, "--into", tmp_path / "out", "--json")
    assert result.exit_code == 0, result.output
    [step] = json.loads(result.stdout)["skills"]
    assert step["source"] == f"{url}/{WELL_KNOWN}/solo/SKILL.md"


def test_an_entry_of_a_type_skillpack_does_not_read_is_skipped_and_said(
        tmp_path: Path, serve: Callable[[Path], str]) -> None:
    """The RFC: a client SHOULD skip an entry of an unrecognized type. The whole index was
    refused, --skill or not. A malformed entry of a known type still refuses it."""
    site = site_of(tmp_path, "alpha")
    alpha = entry(site, "alpha")
    future = {**alpha, "name": "future", "type": "mcp-server"}
    write_index(site, {"$schema": SCHEMA, "skills": [future, alpha]})
    url = serve(site)
    result = cli("install", url, "--into", tmp_path / "out", "--json")
    assert result.exit_code == 0, result.output
    note = (f"{url}/{WELL_KNOWN}/index.json: skipped 1 index entry of a type skillpack does "
            "not read (it reads archive and skill-md): 'future' ('mcp-server')")
    data = json.loads(result.stdout)
    assert data["skipped"] == [note]
    assert [s["name"] for s in data["skills"]] == ["alpha"]
    assert f"skillpack: {note}\n" in result.stderr
    write_index(site, {"$schema": SCHEMA, "skills": [future]})
    assert refused([url, "--into", tmp_path / "none"])["error"] == (
        f"{url}/{WELL_KNOWN}/index.json: the index lists no skill skillpack reads")
    write_index(site, {"$schema": SCHEMA, "skills": [future, alpha, {**alpha, "url": 5}]})
    assert "1 index entries skillpack cannot read" in refused(
        [url, "--into", tmp_path / "none"])["error"]
    assert not (tmp_path / "none").exists()


@pytest.mark.parametrize("path", ["", "/", f"/{WELL_KNOWN}", f"/{WELL_KNOWN}/",
                                  f"/{WELL_KNOWN}/index.json"])
def test_a_site_is_its_root_its_skills_folder_or_its_index(
        tmp_path: Path, path: str, serve: Callable[[Path], str]) -> None:
    """The folder's URL (what `export well-known --base-url` calls the published URL) was
    read as a site root: .well-known/agent-skills/.well-known/agent-skills/index.json."""
    url = serve(site_of(tmp_path, "alpha"))
    report = install([url + path], [AgentFolder(str(tmp_path / "out"))])
    assert [(s.name, s.action) for s in report.steps] == [("alpha", "installed")]


@pytest.mark.parametrize(("top", "says"), [
    ({"$schema": "https://schemas.agentskills.io/discovery/9.0.0/schema.json"},
     "the index is of the schema 'https://schemas.agentskills.io/discovery/9.0.0/schema.json',"
     f" which skillpack does not read; it reads {SCHEMA}"),
    ({"version": "1.0.0"},
     "the index is of version '1.0.0', which skillpack does not read; it reads discovery 0.2.0"),
    ({"files": True},
     "this is a discovery index 0.1.0 (no $schema; its entries list 'files' and carry no "
     "digest), which skillpack does not read"),
])
def test_an_index_of_another_schema_is_refused_saying_which(
        tmp_path: Path, top: dict[str, Any], says: str, serve: Callable[[Path], str]) -> None:
    """An unknown major version was read as 0.2.0; a 0.1.0 index was refused as entries
    skillpack cannot read. The RFC: match `$schema` first; absent, the index is 0.1.0."""
    site = site_of(tmp_path, "alpha")
    alpha = entry(site, "alpha")
    if "files" in top:  # 0.1.0: a name, a description and the files, no type, no digest
        skills = [{"name": "alpha", "description": alpha["description"],
                   "files": ["SKILL.md", "scripts/run.sh"]}]
        write_index(site, {"skills": skills})
    else:
        write_index(site, {**top, "skills": [alpha]})
    url = serve(site)
    assert refused([url, "--into", tmp_path / "out"])["error"].startswith(
        f"{url}/{WELL_KNOWN}/index.json: {says}")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("slow", "size"), [("index", 10_000), ("index", 10_000_000),
                                            ("skill", 10_000_000)])
def test_a_site_sending_a_byte_at_a_time_meets_the_deadline(
        tmp_path: Path, slow: str, size: int, trickle: Callable[..., Trickle]) -> None:
    """A byte every 50 ms, each within the read timeout: install read until the site chose
    to stop (QA: a byte every 2 s, 40 s for 20 bytes; years for 4 MiB). Now the deadline
    stops it, the same for 10 KB as for 10 MB: the site sent well under its 100 bytes."""
    skill = b"---\nname: solo\ndescription: solo does one thing when asked.\n---\n\nHello.\n"
    digest = "sha256:" + hashlib.sha256(skill).hexdigest()
    index = json.dumps({"$schema": SCHEMA, "skills": [{
        "name": "solo", "type": "skill-md", "description": "solo does one thing.",
        "url": "solo/SKILL.md", "digest": digest}]}).encode()
    files = {f"/{WELL_KNOWN}/index.json": index, f"/{WELL_KNOWN}/solo/SKILL.md": skill}
    path = f"/{WELL_KNOWN}/index.json" if slow == "index" else f"/{WELL_KNOWN}/solo/SKILL.md"
    site = trickle(files, path, size)
    with pytest.raises(SkillpackError) as caught:
        install([site.url], [AgentFolder(str(tmp_path / "out"))],
                timeouts=Timeouts(connect=5, read=5, deadline=1))
    assert caught.value.message == ("the site 127.0.0.1:" + site.url.rsplit(":", 1)[1]
                                    + " did not answer within the deadline of 1 s")
    assert caught.value.path == site.url + path
    assert "--deadline SECONDS" in (caught.value.hint or "")
    assert site.sent < 100  # stopped before the site chose to
    assert not (tmp_path / "out").exists()


def test_install_deadline_on_the_command_line(tmp_path: Path,
                                              trickle: Callable[..., Trickle]) -> None:
    site = trickle({}, f"/{WELL_KNOWN}/index.json", 1_000_000)
    result = cli("install", site.url, "--into", tmp_path / "out", "--deadline", "0.5")
    assert result.exit_code == 1, result.output
    assert "did not answer within the deadline of 0.5 s" in result.stderr
    assert "Traceback" not in result.stderr
    assert site.sent < 100


@pytest.mark.parametrize(("option", "value"), [
    ("--deadline", "nan"), ("--deadline", "inf"), ("--timeout", "nan"), ("--timeout", "inf")])
def test_a_deadline_or_timeout_of_no_finite_seconds_is_misuse(tmp_path: Path, option: str,
                                                             value: str) -> None:
    """NaN passes every range (a comparison with it is false): `--deadline nan` turned the
    deadline off, and `--timeout inf` was an OverflowError traceback from the socket."""
    for command in (["install", "http://127.0.0.1:9/", "--into", tmp_path / "out"],
                    ["pull", "127.0.0.1:9/x/y:1", "-o", tmp_path / "pulled"]):
        result = cli(*command, option, value)
        assert result.exit_code == 2, result.output
        assert f"'{value}' is not a finite number of seconds" in result.stderr


def test_a_number_of_thousands_of_digits_in_a_field_ignored_does_not_refuse_the_index(
        tmp_path: Path, serve: Callable[[Path], str]) -> None:
    """Python converts at most 4,300 digits: an unknown field of 100,000 digits (which a
    client must ignore) refused the index, with Python's advice to the user."""
    site = site_of(tmp_path, "alpha")
    write_index(site, {"$schema": SCHEMA, "x-size": int("9" * 1000),
                       "skills": [entry(site, "alpha")]})
    text = (site / WELL_KNOWN / "index.json").read_text()
    (site / WELL_KNOWN / "index.json").write_text(text.replace("9" * 1000, "9" * 100_000))
    result = cli("install", serve(site), "--into", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "set_int_max_str_digits" not in result.output


def _tar_gz(folder: Path, prefix: str) -> bytes:
    """A tar.gz of `folder`'s files, each named `prefix` + its path in the folder."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            tar.add(path, prefix + path.relative_to(folder).as_posix())
    return out.getvalue()


@pytest.mark.parametrize("made", ["anthropic zip", "skillpack .skill", "tar.gz"])
def test_an_archive_of_a_site_with_its_skill_in_a_wrapper_folder_is_refused(
        tmp_path: Path, made: str, serve: Callable[[Path], str]) -> None:
    """The RFC: a site's archive holds the skill's files at its root, SKILL.md among them;
    vercel's skills drops a skill whose archive has them in a wrapper folder. Install took
    it, so a site "tested with skillpack" was broken for other clients. The same archive
    given as a file is still read (a zip made elsewhere: one top folder), and a site's
    tar.gz as `tar -C alpha -czf alpha.tar.gz .` writes it (`./SKILL.md`) is at its root."""
    site = site_of(tmp_path, "alpha")
    source = tmp_path / "skills-src" / "alpha"
    if made == "anthropic zip":
        wrapped = anthropic_zip(source)
    elif made == "tar.gz":
        wrapped = _tar_gz(source, "alpha/")
    else:
        assert cli("pack", source, "-o", tmp_path / "packed").exit_code == 0
        [packed] = (tmp_path / "packed").glob("*.skill")
        wrapped = packed.read_bytes()
    (site / WELL_KNOWN / "alpha.zip").write_bytes(wrapped)
    write_index(site, {"$schema": SCHEMA, "skills": [
        {**entry(site, "alpha"), "digest": "sha256:" + hashlib.sha256(wrapped).hexdigest()}]})
    url = serve(site)
    data = refused([url, "--into", tmp_path / "out"])
    assert data["error"] == (
        f"{url}/{WELL_KNOWN}/alpha.zip: skill 'alpha': the archive has no SKILL.md at its "
        "root (its SKILL.md is 'alpha/SKILL.md', in a wrapper folder); the Agent Skills "
        "Discovery RFC requires a site's archive to hold the skill's files at its root, "
        "SKILL.md among them (ask the site to publish it with SKILL.md at the archive's "
        "root, as `skillpack export well-known` writes it; other clients skip such an "
        "archive too)")
    assert not (tmp_path / "out").exists()
    local = tmp_path / "alpha.zip"
    local.write_bytes(wrapped)
    result = cli("install", local, "--into", tmp_path / "local")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "local" / "alpha" / "SKILL.md").is_file()
    rooted = _tar_gz(source, "./")
    (site / WELL_KNOWN / "alpha.zip").write_bytes(rooted)
    write_index(site, {"$schema": SCHEMA, "skills": [
        {**entry(site, "alpha"), "digest": "sha256:" + hashlib.sha256(rooted).hexdigest()}]})
    result = cli("install", url, "--into", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "alpha" / "scripts" / "run.sh").is_file()


def _folder_url(url: str) -> str:
    """The URL of the `agent-skills/` folder of a site given as `url`."""
    return url.removesuffix("/index.json").removesuffix("/" + WELL_KNOWN) + "/" + WELL_KNOWN


def test_a_site_served_below_a_path_installs_as_at_the_root(
        tmp_path: Path, serve: Callable[[Path], str]) -> None:
    """`export well-known` wrote path-absolute URLs (`/.well-known/agent-skills/alpha.zip`):
    a site served below its origin's root (a project's GitHub Pages, `/docs/`) answered 404
    for every skill. Its URLs are relative to the index now, the same site at either place."""
    source = tmp_path / "source"
    make_skill(source, "alpha", scripts={"scripts/run.sh": "#!/bin/sh\necho hi\n"})
    make_skill(source, "solo")
    www = tmp_path / "www"
    assert cli("export", "well-known", source, "-o", www / "docs" / "site").exit_code == 0
    site = www / "docs" / "site"
    assert [e["url"] for e in index_of(site)["skills"]] == ["alpha.zip", "solo/SKILL.md"]
    below = serve(www) + "/docs/site"
    for n, url in enumerate([below, f"{below}/{WELL_KNOWN}/index.json", serve(site)]):
        result = cli("install", url, "--into", tmp_path / f"out{n}", "--json")
        assert result.exit_code == 0, result.output
        assert [(s["name"], s["source"]) for s in json.loads(result.stdout)["skills"]] == [
            ("alpha", f"{_folder_url(url)}/alpha.zip"),
            ("solo", f"{_folder_url(url)}/solo/SKILL.md")]
        assert (tmp_path / f"out{n}" / "alpha" / "scripts" / "run.sh").is_file()


def test_an_artifact_the_site_does_not_serve_is_said_so_not_that_the_index_is_missing(
        tmp_path: Path, serve: Callable[[Path], str]) -> None:
    site = site_of(tmp_path, "alpha")
    (site / WELL_KNOWN / "alpha.zip").unlink()
    url = serve(site)
    data = refused([url, "--into", tmp_path / "out"])
    assert "HTTP 404" in data["error"]
    assert "index.json" not in data["hint"].split("(")[0]  # the index was served
    assert "which the site does not serve" in data["hint"]
    assert not (tmp_path / "out").exists()
