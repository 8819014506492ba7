"""Skills and bundles as OCI artifacts, against a real registry and an independent client.

The `registry` tests start Debian's `docker-registry` (the CNCF distribution server) on
127.0.0.1 and a free port, storage in a temporary folder, and read what skillpack pushed
back with `skopeo`. Without the binaries (or the `oras` library) they skip with a reason,
unless SKILLPACK_REQUIRE_REGISTRY=1, which makes a missing piece a failure (CI sets it).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.paths import FIXTURES, REPO, WAITLIST
from helpers.registry import Registry, free_port, run_skopeo, serve
from helpers.skills import write_skill

import skillpack
from skillpack.errors import ArchiveError, IntegrityError, SkillpackError, WriteError
from skillpack.publish import oci
from skillpack.publish.export_inputs import artifacts_from_paths

registry = pytest.mark.registry


def _packed(folder: Path, out: Path) -> bytes:
    [path] = skillpack.pack([folder], out)
    return path.read_bytes()




def _own_skill(tmp_path: Path, name: str) -> Path:
    """A skill made at test time, so that its blobs are this test's own (the registry
    shares blobs between repositories, and some tests alter a blob in its storage)."""
    return write_skill(tmp_path / name, textwrap.dedent(f"""\
        ---
        name: {name}
        description: A skill made by test_oci for {name}; it says hello.
        ---
        # {name}

        Say hello.
        """))


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() \
        else []


# --- building artifacts (no registry) ----------------------------------------------------

def test_same_skill_same_manifest_bytes_and_digest(tmp_path: Path) -> None:
    one = oci.artifact_from_bytes(_packed(WAITLIST, tmp_path / "a"))
    two = oci.artifact_from_bytes(_packed(WAITLIST, tmp_path / "b"))
    [from_folder] = artifacts_from_paths([WAITLIST])
    assert one.manifest == two.manifest == from_folder.manifest
    assert one.manifest_digest == oci.sha256_digest(one.manifest) == from_folder.manifest_digest
    assert one.layer == from_folder.layer  # packed in memory exactly as `pack` writes it
    doc = json.loads(one.manifest)
    assert oci.canonical_manifest_json(doc) == one.manifest  # canonical: sorted, no spaces
    assert b" " not in one.manifest.split(b'"org.opencontainers.image.description"')[0]
    assert doc["artifactType"] == oci.SKILL_ARTIFACT_TYPE
    assert doc["config"]["mediaType"] == oci.EMPTY_MEDIA_TYPE
    assert doc["config"]["digest"] == oci.sha256_digest(b"{}") == oci.EMPTY_DIGEST
    assert doc["layers"][0]["mediaType"] == oci.SKILL_LAYER_MEDIA_TYPE
    assert doc["layers"][0]["annotations"] == {oci.ANNOTATION_TITLE: one.file_name}
    assert doc["annotations"][oci.ANNOTATION_SKILL_DIGEST] == skillpack.archive_digest(
        next((tmp_path / "a").iterdir()))
    assert doc["annotations"][oci.ANNOTATION_SKILL_NAME] == "waitlist"
    assert "org.opencontainers.image.created" not in doc["annotations"]


def test_bundle_artifact_lists_its_skills(tmp_path: Path) -> None:
    result = skillpack.write_bundle([WAITLIST, FIXTURES / "release-notes"], tmp_path / "b.zip")
    art = oci.artifact_from_bytes(result.path.read_bytes())
    doc = json.loads(art.manifest)
    assert art.kind == "bundle" and doc["artifactType"] == oci.BUNDLE_ARTIFACT_TYPE
    assert doc["layers"][0]["mediaType"] == oci.BUNDLE_LAYER_MEDIA_TYPE
    assert doc["annotations"][oci.ANNOTATION_BUNDLE_DIGEST] == result.digest
    listed = json.loads(doc["annotations"][oci.ANNOTATION_BUNDLE_SKILLS])
    assert [(s["name"], s["digest"]) for s in listed] == [(n, d) for n, d, _ in result.skills]


def test_an_invalid_archive_makes_no_artifact(tmp_path: Path) -> None:
    data = bytearray(_packed(WAITLIST, tmp_path))
    data[-30] ^= 1  # inside the end records
    with pytest.raises(SkillpackError):
        oci.artifact_from_bytes(bytes(data))


def test_layout_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    art = oci.artifact_from_bytes(_packed(WAITLIST, tmp_path / "a"))
    out = tmp_path / "layout"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(WriteError, match="not empty"):
        oci.write_layout([art], out)
    assert _listing(out) == ["keep.txt"]
    assert [p.name for p in tmp_path.iterdir() if "skillpack-tmp" in p.name] == []


def test_layout_is_byte_reproducible(tmp_path: Path) -> None:
    arts = artifacts_from_paths([WAITLIST, FIXTURES / "release-notes"])
    oci.write_layout(arts, tmp_path / "one")
    oci.write_layout(list(reversed(arts)), tmp_path / "two")
    for rel in _listing(tmp_path / "one"):
        if (tmp_path / "one" / rel).is_file():
            assert (tmp_path / "one" / rel).read_bytes() == (tmp_path / "two" / rel).read_bytes()
    assert _listing(tmp_path / "one") == _listing(tmp_path / "two")
    for rel in _listing(tmp_path / "one"):  # every blob is named by its sha256
        if rel.startswith("blobs/sha256/"):
            data = (tmp_path / "one" / rel).read_bytes()
            assert hashlib.sha256(data).hexdigest() == rel.rsplit("/", 1)[1]


def test_docker_config_comes_from_DOCKER_CONFIG(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    assert oci.docker_config_path({"DOCKER_CONFIG": str(tmp_path)}) == str(
        tmp_path / "config.json")
    assert oci.docker_config_path({"DOCKER_CONFIG": str(tmp_path / "none")}) is None


@pytest.mark.parametrize("ref", ["waitlist:v1", "acme/skills:v1", "127.0.0.1:5000/Skills:v1",
                                 "127.0.0.1:5000/skills@sha256:abc",
                                 "127.0.0.1:5000/skills:bad tag"])
def test_bad_references_are_refused_before_any_request(ref: str, tmp_path: Path) -> None:
    with pytest.raises(SkillpackError, match=r"reference|registry|tag|digest"):
        oci.pull(ref, tmp_path / "out", plain_http=True)
    assert not (tmp_path / "out").exists()


def test_without_oras_push_says_what_to_install(tmp_path: Path) -> None:
    code = textwrap.dedent(f"""\
        import sys
        sys.modules["oras"] = None
        sys.modules["oras.provider"] = None
        from skillpack.publish import oci
        try:
            oci.pull("127.0.0.1:1/skills:v1", {str(tmp_path / "out")!r})
        except oci.SkillpackError as err:
            print(err)
        """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, check=True)
    assert "pip install 'skillpack[oci]'" in done.stdout
    assert not (tmp_path / "out").exists()


# --- the image layout, read by skopeo ----------------------------------------------------

def test_layout_is_read_byrun_skopeo(tmp_path: Path, skopeo: str) -> None:
    data = _packed(WAITLIST, tmp_path / "a")
    art = oci.artifact_from_bytes(data)
    (tmp_path / "layout").mkdir()  # an empty folder is taken
    refs = oci.write_layout([art], tmp_path / "layout")
    assert refs == {art.ref_name: art.manifest_digest}
    raw = run_skopeo(skopeo, "inspect", "--raw", f"oci:{tmp_path / 'layout'}:{art.ref_name}")
    assert raw == art.manifest
    run_skopeo(skopeo, "copy", f"oci:{tmp_path / 'layout'}:{art.ref_name}",
            f"dir:{tmp_path / 'copy'}")
    layer_hex = json.loads(art.manifest)["layers"][0]["digest"].removeprefix("sha256:")
    assert (tmp_path / "copy" / layer_hex).read_bytes() == data
    assert (tmp_path / "copy" / "manifest.json").read_bytes() == art.manifest


# --- a real registry ----------------------------------------------------------------------

@registry
def test_push_then_pull_by_tag_and_by_digest(reg: Registry, tmp_path: Path,
                                             skopeo: str) -> None:
    data = _packed(WAITLIST, tmp_path / "a")
    art = oci.artifact_from_bytes(data)
    pushed = oci.push(art, f"{reg.host}/skills/waitlist:v1", plain_http=True)
    assert pushed.manifest_digest == art.manifest_digest
    assert "v1" in reg.tags("skills/waitlist")
    raw = run_skopeo(skopeo, "inspect", "--raw", "--tls-verify=false",
                  f"docker://{reg.host}/skills/waitlist:v1")
    assert raw == art.manifest  # the registry holds our exact bytes
    by_tag = oci.pull(f"{reg.host}/skills/waitlist:v1", tmp_path / "tag", plain_http=True)
    by_digest = oci.pull(f"{reg.host}/skills/waitlist@{art.manifest_digest}",
                         tmp_path / "digest", plain_http=True)
    for got in (by_tag, by_digest):
        assert got.kind == "skill" and got.manifest_digest == art.manifest_digest
        assert Path(got.path).name == art.file_name
        assert Path(got.path).read_bytes() == data
        assert got.skills == art.skills
        assert got.annotations[oci.ANNOTATION_SKILL_NAME] == "waitlist"
    again = oci.push(art, f"{reg.host}/skills/waitlist:v1", plain_http=True)
    assert again.blobs_uploaded == 0  # the registry already had them


@registry
def test_push_without_tag_uses_the_ref_name(reg: Registry, tmp_path: Path) -> None:
    art = oci.artifact_from_bytes(_packed(WAITLIST, tmp_path / "a"))
    pushed = oci.push(art, f"{reg.host}/skills/untagged", plain_http=True)
    assert pushed.ref == f"{reg.host}/skills/untagged:{art.ref_name}"
    assert reg.tags("skills/untagged") == [art.ref_name]


@registry
def test_bundle_pulled_by_digest_serves_with_a_lock(reg: Registry, tmp_path: Path) -> None:
    result = skillpack.write_bundle([WAITLIST, FIXTURES / "release-notes"], tmp_path / "b.zip")
    art = oci.artifact_from_bytes(result.path.read_bytes())
    oci.push(art, f"{reg.host}/skills/bundle:prod", plain_http=True)
    skillpack.write_lock([(r.name, r.entry, r.source) for r in _lock_entries(result.path)],
                         tmp_path / "skills.lock")
    lock = json.loads((tmp_path / "skills.lock").read_text(encoding="utf-8"))
    got = oci.pull(f"{reg.host}/skills/bundle@{art.manifest_digest}", tmp_path / "deploy",
                   plain_http=True, expect=lock)
    assert got.kind == "bundle" and got.digest == result.digest
    served = skillpack.load(Path(got.path).read_bytes(), expect=lock)
    assert sorted(served) == ["release-notes", "waitlist"]


@dataclass(frozen=True)
class _Entry:
    name: str
    entry: skillpack.LockEntry
    source: str


def _lock_entries(path: Path) -> list[_Entry]:
    report = skillpack.verify_target(path)
    return [_Entry(s.name, skillpack.LockEntry(s.digest, s.files, s.programs), str(path))
            for s in report.skills]


@registry
def test_a_digest_the_lock_does_not_approve_writes_nothing(reg: Registry,
                                                           tmp_path: Path) -> None:
    art = oci.artifact_from_bytes(_packed(WAITLIST, tmp_path / "a"))
    oci.push(art, f"{reg.host}/skills/locked:v1", plain_http=True)
    with pytest.raises(IntegrityError, match="waitlist"):
        oci.pull(f"{reg.host}/skills/locked:v1", tmp_path / "out", plain_http=True,
                 expect={"waitlist": "blake3:" + "0" * 64})
    assert not (tmp_path / "out").exists()


@registry
def test_a_layer_altered_in_the_registry_is_refused(reg: Registry, tmp_path: Path) -> None:
    art = oci.artifact_from_bytes(_packed(_own_skill(tmp_path, "altered"), tmp_path / "a"))
    oci.push(art, f"{reg.host}/skills/altered:v1", plain_http=True)
    blob = reg.blob_file(json.loads(art.manifest)["layers"][0]["digest"])
    stored = bytearray(blob.read_bytes())
    stored[100] ^= 0x20  # same size, other bytes: the registry serves it as it is
    blob.write_bytes(bytes(stored))
    with pytest.raises(IntegrityError, match="not the one the manifest names"):
        oci.pull(f"{reg.host}/skills/altered:v1", tmp_path / "out", plain_http=True)
    assert not (tmp_path / "out").exists()


def _crafted(layer: bytes, artifact_type: str, layer_type: str,
             annotations: dict[str, str]) -> bytes:
    return oci.canonical_manifest_json({
        "schemaVersion": 2, "mediaType": oci.MANIFEST_MEDIA_TYPE,
        "artifactType": artifact_type,
        "config": {"mediaType": oci.EMPTY_MEDIA_TYPE, "digest": oci.EMPTY_DIGEST, "size": 2},
        "layers": [{"mediaType": layer_type, "digest": oci.sha256_digest(layer),
                    "size": len(layer)}],
        "annotations": annotations})


@registry
def test_an_unknown_artifact_type_is_refused(reg: Registry, tmp_path: Path) -> None:
    data = _packed(_own_skill(tmp_path, "other-type"), tmp_path / "a")
    reg.put_blob("skills/other", b"{}")
    reg.put_blob("skills/other", data)
    reg.put_manifest("skills/other", "v1", _crafted(
        data, "application/vnd.example.thing.v1", oci.SKILL_LAYER_MEDIA_TYPE, {}))
    with pytest.raises(ArchiveError, match="unknown artifactType"):
        oci.pull(f"{reg.host}/skills/other:v1", tmp_path / "out", plain_http=True)
    assert not (tmp_path / "out").exists()


@registry
def test_a_layer_that_is_not_an_archive_is_refused(reg: Registry, tmp_path: Path) -> None:
    junk = b"PK\x03\x04 this is not a skillpack archive " * 8
    reg.put_blob("skills/junk", b"{}")
    reg.put_blob("skills/junk", junk)
    reg.put_manifest("skills/junk", "v1", _crafted(
        junk, oci.SKILL_ARTIFACT_TYPE, oci.SKILL_LAYER_MEDIA_TYPE, {}))
    with pytest.raises(SkillpackError):
        oci.pull(f"{reg.host}/skills/junk:v1", tmp_path / "out", plain_http=True)
    assert not (tmp_path / "out").exists()


@registry
def test_a_skill_digest_other_than_the_annotation_is_refused(reg: Registry,
                                                             tmp_path: Path) -> None:
    data = _packed(_own_skill(tmp_path, "liar"), tmp_path / "a")
    reg.put_blob("skills/liar", b"{}")
    reg.put_blob("skills/liar", data)
    reg.put_manifest("skills/liar", "v1", _crafted(
        data, oci.SKILL_ARTIFACT_TYPE, oci.SKILL_LAYER_MEDIA_TYPE,
        {oci.ANNOTATION_SKILL_NAME: "liar",
         oci.ANNOTATION_SKILL_DIGEST: "blake3:" + "1" * 64}))
    with pytest.raises(IntegrityError, match=oci.ANNOTATION_SKILL_DIGEST):
        oci.pull(f"{reg.host}/skills/liar:v1", tmp_path / "out", plain_http=True)
    assert not (tmp_path / "out").exists()


@registry
def test_a_layer_over_max_size_is_refused(reg: Registry, tmp_path: Path) -> None:
    data = _packed(WAITLIST, tmp_path / "a")
    art = oci.artifact_from_bytes(data)
    oci.push(art, f"{reg.host}/skills/big:v1", plain_http=True)
    with pytest.raises(IntegrityError, match="over the limit"):
        oci.pull(f"{reg.host}/skills/big:v1", tmp_path / "out", plain_http=True,
                 max_size=len(data) - 1)
    assert not (tmp_path / "out").exists()
    got = oci.pull(f"{reg.host}/skills/big:v1", tmp_path / "out", plain_http=True,
                   max_size=len(data))
    assert Path(got.path).read_bytes() == data


@registry
def test_a_failed_push_leaves_no_tag(reg: Registry, tmp_path: Path) -> None:
    good = oci.artifact_from_bytes(_packed(_own_skill(tmp_path, "never-there"),
                                           tmp_path / "a"))
    other = oci.artifact_from_bytes(_packed(WAITLIST, tmp_path / "b"))
    # The manifest names a layer this artifact does not carry: the blobs go up, then the
    # registry refuses the manifest, and with it the tag.
    broken = oci.OciArtifact("skill", "never-there", good.digest, good.manifest, other.layer,
                             good.file_name, good.skills)
    with pytest.raises(SkillpackError, match="putting the manifest"):
        oci.push(broken, f"{reg.host}/skills/failed:v1", plain_http=True)
    assert reg.tags("skills/failed") == []


@registry
def test_a_registry_that_is_down_fails_fast(tmp_path: Path, reg: Registry) -> None:
    art = oci.artifact_from_bytes(_packed(WAITLIST, tmp_path / "a"))
    with pytest.raises(SkillpackError, match="cannot reach the registry"):
        oci.push(art, f"127.0.0.1:{free_port()}/skills/x:v1", plain_http=True)


# bcrypt of the test password, as htpasswd files hold it (built in pieces: no secret here)
_USER, _PASSWORD = "alice", "s3" + "cret-for-tests"


@registry
def test_credentials_come_from_the_docker_config_and_are_never_shown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    crypt = pytest.importorskip("crypt", reason="the crypt module makes the htpasswd hash")
    hashed = crypt.crypt(_PASSWORD, crypt.mksalt(crypt.METHOD_BLOWFISH))
    if not hashed or not hashed.startswith("$2"):
        pytest.skip("this libc's crypt() has no bcrypt")
    (tmp_path / "htpasswd").write_text(f"{_USER}:{hashed}\n", encoding="utf-8")
    art = oci.artifact_from_bytes(_packed(WAITLIST, tmp_path / "a"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.docker/config.json
    with serve(tmp_path, tmp_path / "htpasswd") as locked:
        ref = f"{locked.host}/skills/private:v1"
        monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "nobody"))
        with pytest.raises(SkillpackError, match="asks for a login"):
            oci.push(art, ref, plain_http=True)
        wrong = base64.b64encode(f"{_USER}:not-{_PASSWORD}".encode()).decode()
        _docker_config(tmp_path / "wrong", locked.host, wrong)
        monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "wrong"))
        with pytest.raises(SkillpackError, match="401") as refused:
            oci.push(art, ref, plain_http=True)
        assert _PASSWORD not in str(refused.value) and wrong not in str(refused.value)
        right = base64.b64encode(f"{_USER}:{_PASSWORD}".encode()).decode()
        _docker_config(tmp_path / "right", locked.host, right)
        monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "right"))
        oci.push(art, ref, plain_http=True)
        got = oci.pull(ref, tmp_path / "out", plain_http=True)
        assert Path(got.path).read_bytes() == art.layer


def _docker_config(folder: Path, host: str, auth: str) -> None:
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"auths": {host: {"auth": auth}}}),
                                        encoding="utf-8")


@registry
def test_push_all_tags_each_artifact_by_its_ref_name(reg: Registry, tmp_path: Path) -> None:
    arts = artifacts_from_paths([WAITLIST, FIXTURES / "release-notes"])
    with pytest.raises(SkillpackError, match="one tag for 2 artifacts"):
        oci.push_all(arts, f"{reg.host}/skills/many:v1", plain_http=True)
    assert reg.tags("skills/many") == []
    results = oci.push_all(arts, f"{reg.host}/skills/many", plain_http=True)
    assert reg.tags("skills/many") == sorted(a.ref_name for a in arts)
    assert [r.manifest_digest for r in results] == [a.manifest_digest for a in arts]
    for art in arts:
        got = oci.pull(f"{reg.host}/skills/many:{art.ref_name}", tmp_path / art.name,
                       plain_http=True)
        assert Path(got.path).read_bytes() == art.layer
