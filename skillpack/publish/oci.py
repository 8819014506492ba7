"""Skills and bundles as OCI artifacts: manifests, an image layout, push and pull.

A `.skill` archive or a bundle becomes one OCI image manifest (image-spec 1.1) with an
``artifactType`` of ours, the empty config descriptor, and the archive as its only layer.
The manifest is canonical JSON (keys sorted, no whitespace, no timestamps), so the same
skill gives the same manifest bytes, hence the same OCI digest, on every machine.

`write_layout` writes an OCI image layout (the offline path: standard tools such as skopeo
read it). `push` and `pull` talk to a registry through the `oras` client library (the
optional extra ``skillpack[oci]``): oras does the HTTP, the token flow and the Docker
config credentials; this module builds the bytes it sends and checks every byte it gets
back (manifest digest, blob digests and sizes, our media types, the size limit, then the
archive with skillpack's strict verifier, the skill digest against the annotation and,
with ``expect``, against a lock). `pull` writes nothing unless every check passed.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import re
import tarfile
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillpack._atomic import AtomicBatch, fsync_folder, remove_tree
from skillpack.errors import (
    ArchiveError,
    IntegrityError,
    Problem,
    SkillError,
    SkillpackError,
    WriteError,
)
from skillpack.formats.paths import SKILL_MD
from skillpack.packing.members import write_members
from skillpack.packing.pack import archive_name
from skillpack.packing.prepare import prepare_skill
from skillpack.packing.verify import VerifyReport, verify_bytes
from skillpack.runtime import load
from skillpack.runtime.checks import approved_digests
from skillpack.source.foreign import unpacked
from skillpack.storedzip.writer import MAX_SIZE, ZipWriter

try:  # the optional extra `skillpack[oci]`; only push and pull need it
    import oras.provider as _oras_provider
    import requests as _requests
    import urllib3.exceptions as _urllib3_errors
except ImportError:  # pragma: no cover - exercised only where oras is not installed
    _oras_provider = None
    _requests = None  # type: ignore[assignment]
    _urllib3_errors = None  # type: ignore[assignment]

__all__ = [
    "ANNOTATION_BUNDLE_DIGEST",
    "ANNOTATION_BUNDLE_SKILLS",
    "ANNOTATION_DESCRIPTION",
    "ANNOTATION_FORMAT",
    "ANNOTATION_REF_NAME",
    "ANNOTATION_SKILL_DIGEST",
    "ANNOTATION_SKILL_NAME",
    "ANNOTATION_TITLE",
    "BUNDLE_ARTIFACT_TYPE",
    "BUNDLE_LAYER_MEDIA_TYPE",
    "DEFAULT_MAX_SIZE",
    "EMPTY_DIGEST",
    "EMPTY_MEDIA_TYPE",
    "INDEX_MEDIA_TYPE",
    "MANIFEST_MEDIA_TYPE",
    "SKILL_ARTIFACT_TYPE",
    "SKILL_LAYER_MEDIA_TYPE",
    "TOOLHIVE_ARTIFACT_TYPE",
    "TOOLHIVE_REQUIRES",
    "TOOLHIVE_REQUIRES_KEY",
    "OciArtifact",
    "PulledArtifact",
    "PushResult",
    "RegistryRef",
    "Timeouts",
    "artifact_for_bundle",
    "artifact_for_skill",
    "artifact_from_bytes",
    "artifact_toolhive",
    "canonical_manifest_json",
    "docker_config_path",
    "go_json",
    "parse_ref",
    "pull",
    "pull_all",
    "push",
    "push_all",
    "sha256_digest",
    "toolhive_from_bytes",
    "toolhive_layer",
    "toolhive_requires",
    "write_layout",
]

# --- media types -------------------------------------------------------------------------
MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
INDEX_MEDIA_TYPE = "application/vnd.oci.image.index.v1+json"
EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json"
EMPTY_DATA = b"{}"
EMPTY_DIGEST = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"

# What the artifact is (the manifest's artifactType) and what its one layer holds. `v1` is
# the archive format's major version (docs/FORMAT.md, "1.0"); `+zip` (RFC 6839) says the
# layer is a zip file, so generic tools know how to open it.
SKILL_ARTIFACT_TYPE = "application/vnd.skillpack.skill.v1"
BUNDLE_ARTIFACT_TYPE = "application/vnd.skillpack.bundle.v1"
SKILL_LAYER_MEDIA_TYPE = "application/vnd.skillpack.skill.layer.v1+zip"
BUNDLE_LAYER_MEDIA_TYPE = "application/vnd.skillpack.bundle.layer.v1+zip"
_LAYER_FOR = {SKILL_ARTIFACT_TYPE: SKILL_LAYER_MEDIA_TYPE,
              BUNDLE_ARTIFACT_TYPE: BUNDLE_LAYER_MEDIA_TYPE}

# ToolHive's skill artifact (`thv skill build/push/install`): an image index of artifactType
# `dev.toolhive.skills.v1` over one image manifest per platform, each with an image config
# whose labels describe the skill and one tar+gzip layer of the skill's files at its root.
TOOLHIVE_ARTIFACT_TYPE = "dev.toolhive.skills.v1"
IMAGE_CONFIG_MEDIA_TYPE = "application/vnd.oci.image.config.v1+json"
TAR_GZIP_LAYER_MEDIA_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip"
TOOLHIVE_PLATFORMS = (("linux", "amd64"), ("linux", "arm64"))
TOOLHIVE_LABEL = "dev.toolhive.skills."
#: The metadata key whose lines name the OCI references of the skills a skill needs, and
#: the annotation ToolHive writes them to (a JSON array), read back by `thv skill install`.
TOOLHIVE_REQUIRES_KEY = "toolhive.requires"
TOOLHIVE_REQUIRES = TOOLHIVE_LABEL + "requires"
# what Go's strings.TrimSpace trims (unicode.IsSpace): str.strip() trims \x1c-\x1f too
_GO_SPACE = ("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
             "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
# what Go's json.Marshal escapes in a string beyond what json.dumps does (HTML-safe output)
_GO_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                             "\u2028": "\\u2028", "\u2029": "\\u2029"})
#: Other skill conventions on OCI registries, named when met (skillpack does not read them).
OTHER_CONVENTIONS = {
    "application/vnd.agent.skill.v1+json": "Alibaba's agent skill artifact",
    "application/vnd.agentskills.skill.v1": "the agentskills-oci artifact",
}
_ACCEPT = ", ".join([MANIFEST_MEDIA_TYPE, INDEX_MEDIA_TYPE])

# --- annotations -------------------------------------------------------------------------
ANNOTATION_TITLE = "org.opencontainers.image.title"
ANNOTATION_DESCRIPTION = "org.opencontainers.image.description"
ANNOTATION_REF_NAME = "org.opencontainers.image.ref.name"
ANNOTATION_FORMAT = "dev.skillpack.format"
ANNOTATION_SKILL_NAME = "dev.skillpack.skill.name"
ANNOTATION_SKILL_DIGEST = "dev.skillpack.skill.digest"
ANNOTATION_BUNDLE_DIGEST = "dev.skillpack.bundle.digest"
ANNOTATION_BUNDLE_SKILLS = "dev.skillpack.bundle.skills"
FORMAT = "1.0"

DEFAULT_MAX_SIZE = 256 * 1024 * 1024  # a layer larger than this is refused unless asked for
MAX_MANIFEST_SIZE = 4 * 1024 * 1024  # what registries accept for a manifest (distribution)
BUNDLE_SUFFIX = ".bundle"
_SHA256_RE = re.compile(r"sha256:[0-9a-f]{64}")
_TAG_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_HINT_EXTRA = "install the extra: pip install 'skillpack[oci]'"


def sha256_digest(data: bytes | memoryview) -> str:
    """The OCI digest of ``data``: ``sha256:`` + 64 hex digits."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def canonical_manifest_json(value: Any) -> bytes:
    """Canonical JSON for OCI documents: keys sorted, ``,``/``:`` separators, UTF-8, no
    trailing newline. The bytes are what gets hashed, so they must never vary."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


@dataclass(frozen=True, slots=True)
class OciArtifact:
    """One skill or bundle as an OCI artifact: the manifest bytes and the blobs it names.

    ``digest`` is skillpack's digest (the skill's BLAKE3 digest, or the bundle digest; for
    a ToolHive artifact the sha256 of its layer); ``manifest_digest`` the OCI digest of
    ``manifest``. ``ref_name`` is the tag used when no other is given: ``<name>-<16 hex>``
    for a skill (and a ToolHive artifact), ``bundle-<16 hex>`` for a bundle.
    """

    kind: str  # "skill", "bundle", or "toolhive" (a skill in ToolHive's convention)
    name: str
    digest: str
    manifest: bytes
    layer: bytes
    file_name: str
    skills: tuple[tuple[str, str], ...]  # (name, digest) of each skill, sorted by name bytes
    #: what `manifest` is: an image manifest, or (ToolHive) an image index
    media_type: str = MANIFEST_MEDIA_TYPE
    #: (digest, bytes) of the other blobs: a ToolHive artifact's image configs
    extra_blobs: tuple[tuple[str, bytes], ...] = ()
    #: the manifests an index lists (a ToolHive artifact's platform manifests)
    children: tuple[bytes, ...] = ()
    manifest_digest: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "manifest_digest", sha256_digest(self.manifest))

    @property
    def ref_name(self) -> str:
        if self.kind == "toolhive":
            return f"{self.name}-{self.digest.removeprefix('sha256:')[:16]}"
        return self.file_name.rsplit(".", 1)[0]

    @property
    def artifact_type(self) -> str:
        return {"skill": SKILL_ARTIFACT_TYPE, "bundle": BUNDLE_ARTIFACT_TYPE}.get(
            self.kind, TOOLHIVE_ARTIFACT_TYPE)

    def blobs(self) -> dict[str, bytes]:
        """Every blob the manifests reference, by OCI digest (the configs, then the layer)."""
        if self.kind == "toolhive":
            return {**dict(self.extra_blobs), sha256_digest(self.layer): self.layer}
        return {EMPTY_DIGEST: EMPTY_DATA, sha256_digest(self.layer): self.layer}

    def descriptor(self, annotations: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The manifest's descriptor, as an index lists it."""
        out: dict[str, Any] = {"mediaType": self.media_type, "digest": self.manifest_digest,
                               "size": len(self.manifest), "artifactType": self.artifact_type}
        if annotations:
            out["annotations"] = dict(annotations)
        return out


def _manifest(artifact_type: str, layer: bytes, file_name: str,
              annotations: Mapping[str, str]) -> bytes:
    return canonical_manifest_json({
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "artifactType": artifact_type,
        "config": {"mediaType": EMPTY_MEDIA_TYPE, "digest": EMPTY_DIGEST, "size": 2,
                   "data": base64.b64encode(EMPTY_DATA).decode("ascii")},
        "layers": [{"mediaType": _LAYER_FOR[artifact_type], "digest": sha256_digest(layer),
                    "size": len(layer), "annotations": {ANNOTATION_TITLE: file_name}}],
        "annotations": dict(annotations),
    })


def artifact_for_skill(archive_bytes: bytes, name: str, description: str,
                       skill_digest: str) -> OciArtifact:
    """The artifact of one `.skill` archive, from its bytes and what its manifest says.

    The caller vouches that the bytes are that skill's verified archive
    (`artifact_from_bytes` checks it first). No timestamp, no host detail: the manifest bytes
    depend only on the arguments.
    """
    file_name = archive_name(name, skill_digest)
    annotations = {
        ANNOTATION_TITLE: name,
        ANNOTATION_DESCRIPTION: description,
        ANNOTATION_FORMAT: FORMAT,
        ANNOTATION_SKILL_NAME: name,
        ANNOTATION_SKILL_DIGEST: skill_digest,
    }
    manifest = _manifest(SKILL_ARTIFACT_TYPE, archive_bytes, file_name, annotations)
    return OciArtifact("skill", name, skill_digest, manifest, bytes(archive_bytes), file_name,
                       ((name, skill_digest),))


def artifact_for_bundle(bundle_bytes: bytes, bundle_digest: str,
                        skills: Iterable[tuple[str, str]]) -> OciArtifact:
    """The artifact of a bundle, from its bytes, its digest and its (name, digest) pairs."""
    pairs = tuple(sorted(skills, key=lambda p: p[0].encode("utf-8")))
    file_name = f"bundle-{bundle_digest.removeprefix('blake3:')[:16]}{BUNDLE_SUFFIX}"
    names = ", ".join(n for n, _ in pairs)
    annotations = {
        ANNOTATION_TITLE: file_name.removesuffix(BUNDLE_SUFFIX),
        ANNOTATION_DESCRIPTION: f"skillpack bundle of {len(pairs)} skills: {names}",
        ANNOTATION_FORMAT: FORMAT,
        ANNOTATION_BUNDLE_DIGEST: bundle_digest,
        ANNOTATION_BUNDLE_SKILLS: canonical_manifest_json(
            [{"name": n, "digest": d} for n, d in pairs]).decode("utf-8"),
    }
    manifest = _manifest(BUNDLE_ARTIFACT_TYPE, bundle_bytes, file_name, annotations)
    return OciArtifact("bundle", file_name.removesuffix(BUNDLE_SUFFIX), bundle_digest, manifest,
                       bytes(bundle_bytes), file_name, pairs)


def _artifact_of(report: VerifyReport, data: bytes) -> OciArtifact:
    if report.kind == "bundle":
        assert report.digest is not None
        return artifact_for_bundle(data, report.digest,
                                   [(s.name, s.digest) for s in report.skills])
    skill = report.skills[0]
    return artifact_for_skill(data, skill.name, skill.manifest.description, skill.digest)


def artifact_from_bytes(data: bytes, *, source: str = "<bytes>") -> OciArtifact:
    """The artifact of a `.skill` archive or a bundle held in memory, after verifying it
    completely (`skillpack.packing.verify.verify_bytes`); raises what `verify` raises."""
    return _artifact_of(verify_bytes(data, source=source), bytes(data))


# --- ToolHive's convention ----------------------------------------------------------------

def toolhive_layer(files: Iterable[tuple[str, bytes]]) -> tuple[bytes, bytes]:
    """(the tar, the tar+gzip layer) of a skill's files as ToolHive packs them: each file at
    its path from the skill's root (no wrapper folder, no folder entries), mode 0644, hidden
    files (a path part starting with ``.``) left out; deterministic (sorted by path bytes,
    owner 0, time 0, gzip without a name or time)."""
    tar_buffer = io.BytesIO()
    with tarfile.open(fileobj=tar_buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, data in sorted(files, key=lambda f: f[0].encode("utf-8")):
            if any(part.startswith(".") for part in path.split("/")):
                continue
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    raw = tar_buffer.getvalue()
    gz_buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=gz_buffer, mtime=0,
                       compresslevel=9) as gz:
        gz.write(raw)
    return raw, gz_buffer.getvalue()


def go_json(values: Sequence[str]) -> str:
    """`values` as Go's ``json.Marshal`` writes a ``[]string`` (what ToolHive's labels and
    annotations hold): compact, UTF-8, ``<``, ``>``, ``&``, U+2028 and U+2029 escaped as
    ``\\u003c``...; an empty one is Go's nil slice, ``null``."""
    if not values:
        return "null"
    text = json.dumps(list(values), separators=(",", ":"), ensure_ascii=False)
    return text.translate(_GO_ESCAPES)


def toolhive_requires(value: str) -> list[str]:
    """The OCI references a ``toolhive.requires`` metadata value names, as ToolHive's
    packager reads them: one a line, white space trimmed, empty lines left out."""
    return [ref for line in value.split("\n") if (ref := line.strip(_GO_SPACE))]


def artifact_toolhive(name: str, description: str, files: Iterable[tuple[str, bytes]], *,
                      version: str = "", license: str = "",
                      allowed_tools: Sequence[str] = (),
                      requires: Sequence[str] = ()) -> OciArtifact:
    """A skill as ToolHive's artifact (what ``thv skill install`` reads): an image index of
    artifactType `TOOLHIVE_ARTIFACT_TYPE` over one image manifest per platform of
    `TOOLHIVE_PLATFORMS`, each with an image config labelled ``dev.toolhive.skills.name``,
    ``.description``, ``.version``, ``.allowedTools``, ``.license`` and ``.files`` (the
    arrays as Go writes them: `go_json`) and the one tar+gzip layer of `toolhive_layer`.
    The index and each manifest are annotated with the name, description and version and,
    when `requires` names any, ``dev.toolhive.skills.requires`` (`TOOLHIVE_REQUIRES`: the
    OCI references of the skills it needs, `go_json`), as ToolHive's packager annotates
    them. Deterministic: canonical JSON, no timestamps."""
    kept = [(p, d) for p, d in files if not any(x.startswith(".") for x in p.split("/"))]
    raw, layer = toolhive_layer(kept)
    labels = {
        TOOLHIVE_LABEL + "name": name,
        TOOLHIVE_LABEL + "description": description,
        TOOLHIVE_LABEL + "version": version,
        TOOLHIVE_LABEL + "allowedTools": go_json(allowed_tools),
        TOOLHIVE_LABEL + "license": license,
        TOOLHIVE_LABEL + "files": go_json(sorted((p for p, _ in kept),
                                                 key=lambda p: p.encode("utf-8"))),
    }
    annotations = {TOOLHIVE_LABEL + "name": name, TOOLHIVE_LABEL + "description": description,
                   TOOLHIVE_LABEL + "version": version}
    if requires:
        annotations[TOOLHIVE_REQUIRES] = go_json(requires)
    configs: list[tuple[str, bytes]] = []
    children: list[bytes] = []
    entries: list[dict[str, Any]] = []
    for os_name, arch in TOOLHIVE_PLATFORMS:
        config = canonical_manifest_json({
            "architecture": arch, "os": os_name, "config": {"Labels": labels},
            "rootfs": {"type": "layers", "diff_ids": [sha256_digest(raw)]}})
        configs.append((sha256_digest(config), config))
        child = canonical_manifest_json({
            "schemaVersion": 2, "mediaType": MANIFEST_MEDIA_TYPE,
            "artifactType": TOOLHIVE_ARTIFACT_TYPE,  # on each platform's manifest, as thv's
            "config": {"mediaType": IMAGE_CONFIG_MEDIA_TYPE, "digest": sha256_digest(config),
                       "size": len(config)},
            "layers": [{"mediaType": TAR_GZIP_LAYER_MEDIA_TYPE, "digest": sha256_digest(layer),
                        "size": len(layer)}],
            "annotations": annotations})
        children.append(child)
        entries.append({"mediaType": MANIFEST_MEDIA_TYPE, "digest": sha256_digest(child),
                        "size": len(child), "platform": {"architecture": arch, "os": os_name}})
    index = canonical_manifest_json({"schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE,
                                     "artifactType": TOOLHIVE_ARTIFACT_TYPE,
                                     "manifests": entries, "annotations": annotations})
    return OciArtifact("toolhive", name, sha256_digest(layer), index, layer,
                       f"{name}.tar.gz", (), INDEX_MEDIA_TYPE, tuple(configs), tuple(children))


def toolhive_from_bytes(data: bytes, *, source: str = "<bytes>") -> list[OciArtifact]:
    """The ToolHive artifact of each skill of a `.skill` archive or bundle held in memory,
    after verifying it completely."""
    report = verify_bytes(data, source=source)
    assert report.loaded is not None
    out = []
    unread: list[Problem] = []
    for s in report.skills:
        loaded = report.loaded[s.name]
        skill = loaded.skill
        metadata = skill.metadata or {}
        # ToolHive reads a top-level `version:`; the Agent Skills spec puts it in metadata
        version = skill.frontmatter.get("version")
        if not isinstance(version, str):
            version = metadata.get("version")
        requires = metadata.get(TOOLHIVE_REQUIRES_KEY, "")
        if not isinstance(requires, str):
            unread.append(_requires_problem(s.name, requires, loaded.file(SKILL_MD).text(),
                                            source, len(report.skills) > 1))
            continue
        out.append(artifact_toolhive(
            s.name, skill.description, [(p, loaded.file(p).bytes()) for p in loaded.files()],
            version=version if isinstance(version, str) else "",
            license=skill.license or "", allowed_tools=skill.allowed_tools or (),
            requires=toolhive_requires(requires)))
    if unread:
        raise SkillError(unread[0].message if len(unread) == 1 else
                         f"{len(unread)} skills ToolHive cannot build: their metadata "
                         f"'{TOOLHIVE_REQUIRES_KEY}' is no string", path=source,
                         problems=unread, hint=f"write it as a block, '{TOOLHIVE_REQUIRES_KEY}:"
                         " |' then one OCI reference a line, indented below it")
    return out


def _requires_problem(name: str, value: object, text: str, source: str,
                      many: bool) -> Problem:
    """The problem of a ``toolhive.requires`` that is no string (a list, a map): ToolHive
    reads metadata as strings and refuses to build the skill; at its line of SKILL.md."""
    where = (os.path.join(source, SKILL_MD) if os.path.isdir(source)
             else f"{source}/{name}" if many else source)
    line = next((n for n, row in enumerate(text.splitlines(), 1)
                 if re.match(r"\s+" + re.escape(TOOLHIVE_REQUIRES_KEY) + r"\s*:", row)), None)
    kind = "a list" if isinstance(value, list) else "a map"
    return Problem("error", "metadata-not-string",
                   f"skill '{name}': metadata '{TOOLHIVE_REQUIRES_KEY}' is {kind}; ToolHive "
                   "reads it as a string, one OCI reference a line, and refuses to build the "
                   "skill", where, line)


# --- the image layout --------------------------------------------------------------------

def _layout_files(artifacts: Sequence[OciArtifact],
                  ref_names: Sequence[str] | None) -> dict[str, bytes]:
    names = list(ref_names) if ref_names is not None else [a.ref_name for a in artifacts]
    if len(names) != len(artifacts):
        raise SkillpackError(f"{len(names)} reference names for {len(artifacts)} artifacts",
                             hint="give one reference name per artifact")
    refs: dict[str, str] = {}
    manifests: list[dict[str, Any]] = []
    files: dict[str, bytes] = {}
    for art, ref in zip(artifacts, names, strict=True):
        if not _TAG_RE.fullmatch(ref):
            raise SkillpackError(f"{ref!r} is not a valid reference name",
                                 hint="use letters, digits, '.', '_' and '-' (at most 128)")
        if ref in refs:
            if refs[ref] == art.manifest_digest:
                continue
            raise SkillpackError(f"two different artifacts would be named {ref!r}",
                                 hint="give each artifact its own reference name")
        refs[ref] = art.manifest_digest
        manifests.append(art.descriptor({ANNOTATION_REF_NAME: ref}))
        files[_blob_path(art.manifest_digest)] = art.manifest
        for child in art.children:
            files[_blob_path(sha256_digest(child))] = child
        for digest, data in art.blobs().items():
            files[_blob_path(digest)] = data
    manifests.sort(key=lambda d: d["annotations"][ANNOTATION_REF_NAME].encode("utf-8"))
    files["oci-layout"] = canonical_manifest_json({"imageLayoutVersion": "1.0.0"})
    files["index.json"] = canonical_manifest_json(
        {"schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE, "manifests": manifests})
    return files


def _blob_path(digest: str) -> str:
    return "blobs/sha256/" + digest.removeprefix("sha256:")


def write_layout(artifacts: Sequence[OciArtifact], out_dir: str | os.PathLike[str], *,
                 ref_names: Sequence[str] | None = None) -> dict[str, str]:
    """Write an OCI image layout holding ``artifacts``; return ref name -> manifest digest.

    ``oci-layout``, ``index.json`` (one descriptor per artifact, annotated with
    ``org.opencontainers.image.ref.name``: each artifact's `ref_name` unless ``ref_names``
    gives them) and ``blobs/sha256/<hex>``, all deterministic. The layout is written in a
    temporary folder beside ``out_dir`` and renamed to it: ``out_dir`` must not exist or be
    empty (a layout is never merged into), and a failure leaves nothing behind.
    """
    if not artifacts:
        raise SkillpackError("nothing to export", hint="give skill folders, .skill archives "
                             "or bundles")
    files = _layout_files(artifacts, ref_names)
    dest = os.path.abspath(os.fspath(out_dir))
    try:
        if os.listdir(dest):
            raise WriteError("the output folder is not empty", path=dest,
                             hint="give a new or empty folder: a layout is never merged into")
    except FileNotFoundError:
        pass
    except NotADirectoryError:
        raise WriteError("the output exists and is not a folder", path=dest,
                         hint="give a new or empty folder") from None
    parent = os.path.dirname(dest)
    try:
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(dest)[:180]}.skillpack-tmp-",
                               dir=parent)
    except OSError as err:
        raise WriteError(f"cannot write the layout: {err.strerror}", path=dest,
                         hint="check the folder's permissions and free space") from None
    try:
        for rel in sorted(files):
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(files[rel])
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(path, 0o644)
        for folder in (os.path.join(tmp, "blobs", "sha256"), os.path.join(tmp, "blobs"), tmp):
            fsync_folder(folder)
        os.chmod(tmp, 0o755)
        os.replace(tmp, dest)  # atomic; replaces an empty folder, refuses a non-empty one
        fsync_folder(parent)
    except OSError as err:
        remove_tree(tmp)
        raise WriteError(f"cannot write the layout: {err.strerror}", path=dest,
                         hint="check the folder's permissions and free space") from None
    index = json.loads(files["index.json"])
    return {d["annotations"][ANNOTATION_REF_NAME]: d["digest"] for d in index["manifests"]}


# --- registries --------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Timeouts:
    """How long a push or pull waits on a registry: ``connect`` seconds to open each
    connection, ``read`` seconds for each answer (and between two chunks of one), and
    ``deadline`` seconds for the whole command: no request starts, and none waits, past it.
    A registry that does not answer in time is an error naming the limit, never a hang."""

    connect: float = 10.0
    read: float = 60.0
    deadline: float = 900.0

    def clock(self) -> _Clock:
        return _Clock(self, time.monotonic() + self.deadline)


DEFAULT_TIMEOUTS = Timeouts()


@dataclass(frozen=True, slots=True)
class _Clock:
    """A command's `Timeouts`, with the moment its deadline falls."""

    limits: Timeouts
    ends: float

    def request(self, ref: RegistryRef) -> tuple[float, float]:
        """The (connect, read) timeouts of the next request: the limits, or what is left
        of the deadline; raises once it has passed."""
        left = self.check(ref)
        return min(self.limits.connect, left), min(self.limits.read, left)

    def check(self, ref: RegistryRef) -> float:
        left = self.ends - time.monotonic()
        if left <= 0:
            raise _timed_out(ref, f"the deadline of {self.limits.deadline:g} s")
        return left


def _timed_out(ref: RegistryRef, what: str) -> SkillpackError:
    return SkillpackError(f"the registry {ref.registry} did not answer within {what}",
                          path=str(ref), hint="check the registry and the network, or allow "
                          "more time: --timeout SECONDS (each request), --deadline SECONDS "
                          "(the whole command)")

def docker_config_path(environ: Mapping[str, str] | None = None) -> str | None:
    """The Docker config file credentials come from: ``$DOCKER_CONFIG/config.json`` when
    ``DOCKER_CONFIG`` is set, else ``~/.docker/config.json``; None when it does not exist."""
    env = os.environ if environ is None else environ
    folder = env.get("DOCKER_CONFIG") or os.path.join(os.path.expanduser("~"), ".docker")
    path = os.path.join(folder, "config.json")
    return path if os.path.isfile(path) else None


@dataclass(frozen=True, slots=True)
class RegistryRef:
    registry: str
    repository: str
    tag: str | None
    digest: str | None

    @property
    def reference(self) -> str:
        return self.digest or self.tag or "latest"

    def __str__(self) -> str:
        tail = f"@{self.digest}" if self.digest else f":{self.tag}" if self.tag else ""
        return f"{self.registry}/{self.repository}{tail}"


_REF_RE = re.compile(
    r"(?P<registry>[^/@:]+(?::[0-9]+)?)/(?P<repo>[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
    r"(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)(?::(?P<tag>[^@/]+))?(?:@(?P<digest>.+))?")


def parse_ref(ref: str) -> RegistryRef:
    """``REGISTRY/REPO[:TAG][@sha256:HEX]``, the registry always named (host[:port])."""
    match = _REF_RE.fullmatch(ref)
    if match is None:
        raise SkillpackError(f"{ref!r} is not a registry reference", hint="write it as "
                             "REGISTRY/REPOSITORY[:TAG] or REGISTRY/REPOSITORY@sha256:HEX, "
                             "e.g. ghcr.io/acme/skills:v1 or 127.0.0.1:5000/skills:v1")
    tag, digest = match["tag"], match["digest"]
    host = match["registry"]
    if "." not in host and ":" not in host and host != "localhost":
        raise SkillpackError(f"{ref!r} does not name a registry", hint="begin with the "
                             "registry's host (with a '.' or a port, or localhost), e.g. "
                             f"ghcr.io/{ref} or 127.0.0.1:5000/{ref}")
    if tag is not None and not _TAG_RE.fullmatch(tag):
        raise SkillpackError(f"{tag!r} is not a valid tag", path=ref,
                             hint="use letters, digits, '.', '_' and '-' (at most 128)")
    if digest is not None and not _SHA256_RE.fullmatch(digest):
        raise SkillpackError(f"{digest!r} is not a sha256 digest", path=ref,
                             hint="write @sha256: followed by 64 lowercase hex digits")
    return RegistryRef(match["registry"], match["repo"], tag, digest)


if _oras_provider is not None:
    class _Registry(_oras_provider.Registry):  # type: ignore[misc]
        """oras's registry client without its retry loop: oras retries a failed request five
        times, sleeping 3 to 83 s between tries (over two minutes for a registry that is
        down); a command must fail fast and say why."""

        do_request = _oras_provider.Registry.do_request.__wrapped__


def _client(ref: RegistryRef, plain_http: bool, docker_config: str | None,
            clock: _Clock) -> Any:
    """An oras client for ``ref``'s registry, with the auth backend its /v2/ challenge asks
    for: oras's token flow (GHCR, Docker Hub, Harbor...), or HTTP Basic (a distribution
    server with htpasswd), which oras's token backend does not answer. Every request it
    makes (the token flow's too) gets the connect and read timeouts `clock` allows."""
    if _oras_provider is None:
        raise SkillpackError("pushing and pulling need the oras library", hint=_HINT_EXTRA)
    scheme = "http" if plain_http else "https"
    try:  # a bare ping: oras's client would already try to answer the challenge
        ping = _requests.get(f"{scheme}://{ref.registry}/v2/", timeout=clock.request(ref))
    except _requests.Timeout:
        raise _timed_out(ref, _limit(clock)) from None
    except _requests.RequestException as err:
        raise _unreachable(ref, err) from None
    challenge = ping.headers.get("Www-Authenticate", "") if ping.status_code == 401 else ""
    basic = challenge.lower().startswith("basic")
    client = _Registry(hostname=ref.registry, insecure=plain_http,
                       auth_backend="basic" if basic else "token")
    session_request = client.session.request

    def request(method: str, url: str, **kwargs: Any) -> Any:
        kwargs["timeout"] = clock.request(ref)
        return session_request(method, url, **kwargs)

    client.session.request = request
    if docker_config is not None and not os.path.isfile(docker_config):
        raise SkillpackError("the Docker config file does not exist", path=docker_config,
                             hint="give the config.json that `docker login` wrote")
    config = docker_config if docker_config is not None else docker_config_path()
    if config is not None:
        # oras also reads ~/.docker/config.json when it exists; ours is read in addition
        client.auth.load_configs(client.get_container(str(ref)), configs=[config])
    if basic and not getattr(client.auth, "_basic_auth", None):  # oras would fail on it
        raise SkillpackError(f"the registry {ref.registry} asks for a login, and the Docker "
                             "config has no credentials for it", path=str(ref),
                             hint="run `docker login` for it, or set DOCKER_CONFIG to the "
                             "folder of a config.json that has them")
    return client


def _url(client: Any, ref: RegistryRef, what: str) -> str:
    return f"{client.prefix}://{ref.registry}/v2/{ref.repository}/{what}"


def _unreachable(ref: RegistryRef, err: Exception) -> SkillpackError:
    return SkillpackError(f"cannot reach the registry {ref.registry}: {type(err).__name__}",
                          path=str(ref), hint="check the address and the network; use "
                          "--plain-http for a registry without TLS (loopback, tests)")


def _limit(clock: _Clock) -> str:
    limits = clock.limits
    return (f"the timeouts ({limits.connect:g} s to connect, {limits.read:g} s to answer)"
            if clock.ends > time.monotonic() else f"the deadline of {limits.deadline:g} s")


def _request(client: Any, ref: RegistryRef, url: str, method: str, clock: _Clock,
             **kwargs: Any) -> Any:
    try:
        return client.do_request(url, method, **kwargs)
    except _requests.Timeout:
        raise _timed_out(ref, _limit(clock)) from None
    except _requests.RequestException as err:
        raise _unreachable(ref, err) from None
    except ValueError as err:  # oras: "Cannot respond to request for authentication."
        raise SkillpackError(f"the registry {ref.registry} refused the credentials: {err}",
                             path=str(ref), hint="log in with `docker login` (or set "
                             "DOCKER_CONFIG) and check your rights on the repository") from None


def _registry_error(response: Any, ref: RegistryRef, doing: str) -> SkillpackError:
    detail = ""
    try:
        errors = response.json().get("errors", [])
        detail = "; ".join(f"{e.get('code')}: {e.get('message')}" for e in errors
                           if isinstance(e, dict))
    except (ValueError, AttributeError):
        pass
    hint = {401: "log in with `docker login` (or set DOCKER_CONFIG)",
            403: "check your rights on the repository",
            404: "check the repository, the tag or the digest"}.get(
                response.status_code, "see the registry's message")
    return SkillpackError(f"the registry answered {response.status_code} while {doing}"
                          + (f" ({detail})" if detail else ""), path=str(ref), hint=hint)


@dataclass(frozen=True, slots=True)
class PushResult:
    """What `push` did: the reference written and the manifest's OCI digest."""

    ref: str
    manifest_digest: str
    blobs_uploaded: int


def push(artifact: OciArtifact, ref: str, *, plain_http: bool = False,
         docker_config: str | None = None,
         timeouts: Timeouts = DEFAULT_TIMEOUTS) -> PushResult:
    """Push ``artifact`` to ``ref`` (``REGISTRY/REPO[:TAG]``; no tag: its `ref_name`).

    The blobs go first (the registry keeps one it already has), the manifest last, put under
    the tag in one request: a push that fails leaves no tag naming a missing or partial
    artifact. The manifest is sent as its exact canonical bytes, and the digest the registry
    answers with must be ours. A ``@sha256:`` reference pushes the manifest untagged and must
    name its digest. Credentials come from the Docker config (`docker_config_path`, or
    ``docker_config``) and are never shown. ``timeouts`` bounds every request and the
    whole push (`Timeouts`).
    """
    return push_all([artifact], ref, plain_http=plain_http, docker_config=docker_config,
                    timeouts=timeouts)[0]


def _targets(artifacts: Sequence[OciArtifact], ref: str) -> list[RegistryRef]:
    where = parse_ref(ref)
    if where.digest is not None:
        if where.tag is not None:
            raise SkillpackError("give a tag or a digest, not both", path=ref)
        if len(artifacts) != 1 or where.digest != artifacts[0].manifest_digest:
            raise IntegrityError(f"{where.digest} is not the digest of what is pushed",
                                 path=ref, hint="push by tag, or name the artifact's own "
                                 "digest")
        return [where]
    if where.tag is not None:
        if len(artifacts) != 1:
            raise SkillpackError(f"one tag for {len(artifacts)} artifacts", path=ref,
                                 hint="push them without a tag (each gets <name>-<16 hex>), "
                                 "or bundle them and push the bundle")
        return [where]
    return [RegistryRef(where.registry, where.repository, a.ref_name, None) for a in artifacts]


def push_all(artifacts: Sequence[OciArtifact], ref: str, *, plain_http: bool = False,
             docker_config: str | None = None,
             timeouts: Timeouts = DEFAULT_TIMEOUTS) -> list[PushResult]:
    """Push several artifacts to one repository: every blob of every artifact first, then
    the manifests, each under its `ref_name` (a tag in ``ref`` needs exactly one artifact).
    A failure before the manifests leaves no new tag at all."""
    if not artifacts:
        raise SkillpackError("nothing to push", hint="give skill folders, .skill archives or "
                             "bundles")
    targets = _targets(artifacts, ref)
    clock = timeouts.clock()
    client = _client(targets[0], plain_http, docker_config, clock)
    where = targets[0]
    container = client.get_container(str(where))
    seen: set[str] = set()
    sent: list[int] = []  # blobs uploaded for each artifact
    with tempfile.TemporaryDirectory(prefix="skillpack-oci-") as tmp:
        for art in artifacts:
            count = 0
            for digest, data in art.blobs().items():
                if digest not in seen:
                    seen.add(digest)
                    count += _upload_blob(client, container, where, digest, data, tmp,
                                          clock)
            sent.append(count)
    results = []
    for art, target, count in zip(artifacts, targets, sent, strict=True):
        _put_manifest(client, target, art, clock)
        results.append(PushResult(str(target), art.manifest_digest, count))
    return results


def _upload_blob(client: Any, container: Any, where: RegistryRef, digest: str, data: bytes,
                 tmp: str, clock: _Clock) -> bool:
    """Upload one blob unless the registry has it; True when it was sent."""
    head = _request(client, where, _url(client, where, f"blobs/{digest}"), "HEAD", clock)
    if head.status_code == 200:
        return False
    if head.status_code != 404:
        raise _registry_error(head, where, f"looking for blob {digest}")
    path = os.path.join(tmp, digest.removeprefix("sha256:"))
    with open(path, "wb") as handle:  # oras uploads from a file
        handle.write(data)
    try:
        response = client.put_upload(path, container, {"digest": digest, "size": len(data)})
    except _requests.Timeout:
        raise _timed_out(where, _limit(clock)) from None
    except _requests.RequestException as err:
        raise _unreachable(where, err) from None
    except ValueError as err:  # oras: no upload location in the answer
        raise SkillpackError(f"the registry did not start an upload: {err}",
                             path=str(where)) from None
    if response.status_code not in (200, 201, 202):
        raise _registry_error(response, where, f"uploading blob {digest}")
    return True


def _put_manifest(client: Any, where: RegistryRef, art: OciArtifact, clock: _Clock) -> None:
    """The manifests an index lists first (by digest, untagged), then the artifact's own
    under its reference."""
    for child in art.children:
        _put_one(client, where, sha256_digest(child), child, MANIFEST_MEDIA_TYPE, clock)
    _put_one(client, where, where.reference, art.manifest, art.media_type, clock)


def _put_one(client: Any, where: RegistryRef, reference: str, manifest: bytes,
             media_type: str, clock: _Clock) -> None:
    # Not oras's upload_manifest: it sends json=dict, re-serialised with spaces, which
    # would give the manifest another digest than the one we computed and documented.
    response = _request(client, where, _url(client, where, f"manifests/{reference}"),
                        "PUT", clock, data=manifest, headers={"Content-Type": media_type})
    if response.status_code not in (200, 201):
        raise _registry_error(response, where, "putting the manifest")
    answered = response.headers.get("Docker-Content-Digest")
    if answered is not None and answered != sha256_digest(manifest):
        raise IntegrityError(f"the registry stored the manifest as {answered}, not "
                             f"{sha256_digest(manifest)}", path=str(where),
                             hint="the registry rewrote the manifest; do not use this tag")


@dataclass(frozen=True, slots=True)
class PulledArtifact:
    """What `pull` fetched, checked and wrote: the verified archive or bundle, where it was
    written, the manifest's OCI digest and annotations (a ToolHive artifact's config
    labels), and its skills as (name, digest)."""

    kind: str  # "skill", "bundle", or "toolhive" (written as the .skill it packs to)
    path: str
    manifest_digest: str
    digest: str
    skills: tuple[tuple[str, str], ...]
    annotations: Mapping[str, str]
    data: bytes = field(repr=False)


def _arriving(response: Any) -> Iterator[bytes]:
    """The body of `response` as it arrives, a read from the socket at a time (urllib3's
    ``read1``), so that the deadline is checked between two reads: a registry sending a
    byte a second, each within the read timeout, is stopped by the deadline, not at the end
    of its answer. Where urllib3 has no ``read1``, a MiB at a time."""
    read1 = getattr(response.raw, "read1", None)
    if read1 is None:
        yield from response.iter_content(chunk_size=1 << 20)
        return
    while chunk := read1(1 << 20, decode_content=True):
        yield chunk


def _read_limited(response: Any, limit: int, what: str, ref: RegistryRef,
                  clock: _Clock) -> bytes:
    buffer = bytearray()
    try:
        for chunk in _arriving(response):
            buffer += chunk
            clock.check(ref)
            if len(buffer) > limit:
                break
    except (_requests.RequestException, _urllib3_errors.HTTPError) as err:
        # a read timed out, or the connection broke
        timed_out = (isinstance(err, _requests.Timeout | _urllib3_errors.TimeoutError)
                     or "timed out" in str(err))
        raise (_timed_out(ref, _limit(clock)) if timed_out else _unreachable(ref, err)
               ) from None
    if len(buffer) > limit:
        response.close()
        raise IntegrityError(f"{what} is larger than {limit:,} bytes", path=str(ref),
                             hint="this is not what the registry announced; do not use it")
    return bytes(buffer)


def _check_manifest(raw: bytes, ref: RegistryRef, max_size: int) -> tuple[dict[str, Any], str]:
    """The manifest's layer descriptor and artifactType, after checking the manifest."""
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        raise ArchiveError("the manifest is not JSON", path=str(ref)) from None
    if not isinstance(doc, dict) or doc.get("schemaVersion") != 2 or doc.get(
            "mediaType", MANIFEST_MEDIA_TYPE) != MANIFEST_MEDIA_TYPE:
        raise ArchiveError("this is not an OCI image manifest", path=str(ref),
                           hint="skillpack pulls only what `skillpack push` pushed")
    kind = doc.get("artifactType")
    if kind not in _LAYER_FOR:
        raise _unknown_type(doc, ref)
    layers = doc.get("layers")
    if not isinstance(layers, list) or len(layers) != 1 or not isinstance(layers[0], dict):
        raise ArchiveError("a skillpack artifact has exactly one layer", path=str(ref))
    layer = layers[0]
    if layer.get("mediaType") != _LAYER_FOR[kind]:
        raise ArchiveError(f"the layer's media type is {layer.get('mediaType')!r}, not "
                           f"{_LAYER_FOR[kind]}", path=str(ref))
    _descriptor(layer, "the layer", ref, max_size)
    annotations = doc.get("annotations", {})
    if not isinstance(annotations, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in annotations.items()):
        raise ArchiveError("the manifest's annotations are not strings", path=str(ref))
    return layer, kind


def _kinds_of(doc: Mapping[str, Any]) -> list[str]:
    """Every type a manifest or index says it is: its artifactType, its config's media type,
    its layers' media types (where another convention puts its own)."""
    found = [doc.get("artifactType")]
    config = doc.get("config")
    found.append(config.get("mediaType") if isinstance(config, dict) else None)
    layers = doc.get("layers")
    found += [layer.get("mediaType") for layer in layers if isinstance(layer, dict)
              ] if isinstance(layers, list) else []
    return [k for k in found if isinstance(k, str)]


def _unknown_type(doc: Mapping[str, Any], ref: RegistryRef) -> ArchiveError:
    """What to say of an artifact skillpack does not read: the convention it follows, when
    it is a known one, else its artifactType."""
    known = (f"{SKILL_ARTIFACT_TYPE} or {BUNDLE_ARTIFACT_TYPE} (skillpack's), or a ToolHive "
             f"skill ({TOOLHIVE_ARTIFACT_TYPE})")
    for kind in _kinds_of(doc):
        if kind in OTHER_CONVENTIONS:
            return ArchiveError(f"this is {OTHER_CONVENTIONS[kind]} ({kind}), which skillpack "
                                "does not read", path=str(ref),
                                hint=f"pull it with its own tool; skillpack pulls {known}")
    return ArchiveError(f"unknown artifactType {doc.get('artifactType')!r}: this is not a "
                        "skill artifact skillpack reads", path=str(ref),
                        hint=f"expected {known}")


def _check_report(report: VerifyReport, kind: str, annotations: Mapping[str, str],
                  ref: RegistryRef) -> tuple[str, tuple[tuple[str, str], ...]]:
    skills = tuple(sorted(((s.name, s.digest) for s in report.skills),
                          key=lambda p: p[0].encode("utf-8")))
    if kind == SKILL_ARTIFACT_TYPE:
        if report.kind != "archive" or len(skills) != 1:
            raise ArchiveError("the artifact says it is a skill, but its layer is a bundle",
                               path=str(ref))
        name, digest = skills[0]
        claims = {ANNOTATION_SKILL_NAME: name, ANNOTATION_SKILL_DIGEST: digest}
    else:
        if report.kind != "bundle" or report.digest is None:
            raise ArchiveError("the artifact says it is a bundle, but its layer is a single "
                               "skill archive", path=str(ref))
        digest = report.digest
        claims = {ANNOTATION_BUNDLE_DIGEST: digest}
    for key, actual in claims.items():
        if annotations.get(key) != actual:
            raise IntegrityError(f"the annotation {key} says {annotations.get(key)!r}, but the "
                                 f"archive holds {actual!r}", path=str(ref),
                                 hint="the manifest does not describe its layer; do not use it")
    return digest, skills


def _get_manifest(client: Any, where: RegistryRef, reference: str, digest: str | None,
                  clock: _Clock) -> bytes:
    """The manifest or index at `reference`, checked against `digest` (or the one the
    registry announces)."""
    response = _request(client, where, _url(client, where, f"manifests/{reference}"),
                        "GET", clock, headers={"Accept": _ACCEPT}, stream=True)
    if response.status_code != 200:
        raise _registry_error(response, where, "getting the manifest")
    raw = _read_limited(response, MAX_MANIFEST_SIZE, "the manifest", where, clock)
    expected = digest or response.headers.get("Docker-Content-Digest")
    if expected is not None and expected != sha256_digest(raw):
        raise IntegrityError(f"the manifest received hashes to {sha256_digest(raw)}, not "
                             f"{expected}", path=str(where),
                             hint="the registry or the network altered it; do not use it")
    return raw


def _get_blob(client: Any, where: RegistryRef, descriptor: Mapping[str, Any], what: str,
              clock: _Clock) -> bytes:
    """The blob a (checked) descriptor names, read up to its size, which it must have, and
    its digest."""
    response = _request(client, where, _url(client, where, f"blobs/{descriptor['digest']}"),
                        "GET", clock, stream=True)
    if response.status_code != 200:
        raise _registry_error(response, where, f"getting {what} {descriptor['digest']}")
    data = _read_limited(response, descriptor["size"], what, where, clock)
    if len(data) != descriptor["size"] or sha256_digest(data) != descriptor["digest"]:
        raise IntegrityError(f"{what} received ({len(data):,} bytes, "
                             f"{sha256_digest(data)}) is not the one the manifest names "
                             f"({descriptor['size']:,} bytes, {descriptor['digest']})",
                             path=str(where),
                             hint="the registry or the network altered it; do not use it")
    return data


def _json_object(raw: bytes, where: RegistryRef) -> dict[str, Any]:
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        raise ArchiveError("the manifest is not JSON", path=str(where)) from None
    if not isinstance(doc, dict) or doc.get("schemaVersion") != 2:
        raise ArchiveError("this is not an OCI image manifest or index", path=str(where),
                           hint="skillpack pulls skillpack and ToolHive skill artifacts")
    return doc


def _toolhive_manifest(doc: Mapping[str, Any]) -> bool:
    """Whether an image manifest has the shape of a ToolHive skill's platform manifest."""
    config, layers = doc.get("config"), doc.get("layers")
    return (isinstance(config, dict) and config.get("mediaType") == IMAGE_CONFIG_MEDIA_TYPE
            and isinstance(layers, list) and len(layers) == 1 and isinstance(layers[0], dict)
            and layers[0].get("mediaType") == TAR_GZIP_LAYER_MEDIA_TYPE)


def _descriptor(value: Any, what: str, where: RegistryRef, limit: int) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ArchiveError(f"{what} has no descriptor", path=str(where))
    size, digest = value.get("size"), value.get("digest")
    if not isinstance(digest, str) or not _SHA256_RE.fullmatch(digest):
        raise ArchiveError(f"{what}'s digest {digest!r} is not a sha256 digest",
                           path=str(where))
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ArchiveError(f"{what}'s size {size!r} is not a size", path=str(where))
    if size > limit:
        raise IntegrityError(f"{what} is {size:,} bytes, over the limit of {limit:,}",
                             path=str(where), hint="raise --max-size if you trust this artifact")
    return value


def _pull_toolhive(client: Any, where: RegistryRef, doc: Mapping[str, Any], top_digest: str,
                   out_dir: str | os.PathLike[str], limit: int,
                   expect: Mapping[str, Any] | None, clock: _Clock) -> PulledArtifact:
    """A ToolHive skill: its config's labels, its tar+gzip layer read as the skill folder it
    holds (SKILL.md at its root), packed as `skillpack pack` packs it, and verified; to be
    written as ``<name>-<16 hex>.skill``. Its digest is that of the files ToolHive carried (0644,
    hidden files left out), not necessarily the folder's it was built from."""
    if not _toolhive_manifest(doc):
        raise ArchiveError("the ToolHive manifest does not have one image config and one "
                           "tar+gzip layer", path=str(where))
    config_ref = _descriptor(doc["config"], "the image config", where, MAX_MANIFEST_SIZE)
    layer_ref = _descriptor(doc["layers"][0], "the layer", where, limit)
    config = _json_object_plain(_get_blob(client, where, config_ref, "the image config",
                                          clock), where)
    inner = config.get("config")
    labels = inner.get("Labels") if isinstance(inner, dict) else None
    if not isinstance(labels, dict) or not isinstance(labels.get(TOOLHIVE_LABEL + "name"), str):
        raise ArchiveError(f"the image config has no {TOOLHIVE_LABEL}name label: this is not a "
                           "ToolHive skill", path=str(where))
    layer = _get_blob(client, where, layer_ref, "the layer", clock)
    buffer = io.BytesIO()
    folder: Path | None = None
    try:
        # the members are read from the folder: written before it is removed
        with unpacked(layer, source=str(where)) as (folder, _), ZipWriter(buffer) as writer:
            write_members(writer, prepare_skill(folder).members())
    except SkillpackError as err:
        def shown(file: str | None) -> str | None:  # a file of the layer: REF!PATH
            if file is None or folder is None or not file.startswith(f"{folder}{os.sep}"):
                return file
            return f"{where}!{os.path.relpath(file, folder)}"

        problems = [Problem(p.severity, p.code, p.message, shown(p.file), p.line)
                    for p in err.located()]
        hint = err.hint if err.hint and "--max-" not in err.hint else (
            "fix the skill, then push it again")  # pull has no --max-total to raise
        raise ArchiveError(f"the ToolHive skill is not one skillpack packs: {err.message}",
                           path=str(where), problems=problems, hint=hint) from None
    data = buffer.getvalue()
    report = verify_bytes(data, source=str(where))
    [skill] = report.skills
    if labels[TOOLHIVE_LABEL + "name"] != skill.name:
        raise IntegrityError(f"the label {TOOLHIVE_LABEL}name says "
                             f"{labels[TOOLHIVE_LABEL + 'name']!r}, but the layer holds the "
                             f"skill {skill.name!r}", path=str(where),
                             hint="the config does not describe its layer; do not use it")
    if expect is not None:
        _check_approved(data, [skill.name], expect, where)
    dest = os.path.join(os.fspath(out_dir), archive_name(skill.name, skill.digest))
    return PulledArtifact("toolhive", dest, top_digest, skill.digest,
                          ((skill.name, skill.digest),),
                          {str(k): str(v) for k, v in labels.items()}, data)


def _json_object_plain(raw: bytes, where: RegistryRef) -> dict[str, Any]:
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        raise ArchiveError("the image config is not JSON", path=str(where)) from None
    if not isinstance(doc, dict):
        raise ArchiveError("the image config is not a JSON object", path=str(where))
    return doc


def _check_approved(data: bytes, pulled: Iterable[str], expect: Mapping[str, Any],
                    where: RegistryRef) -> None:
    """`load`'s approval check of what was pulled, against those skills' approvals only:
    each must be approved, with its digest; the other skills a lock approves are not the
    pull's concern (a lock of 14 skills pulls one of them)."""
    held = set(pulled)
    approved = approved_digests(expect, str(where))
    load(data, expect={n: d for n, d in approved.items() if n in held}, source=str(where))


def pull(ref: str, out_dir: str | os.PathLike[str], *, plain_http: bool = False,
         docker_config: str | None = None, max_size: int = DEFAULT_MAX_SIZE,
         expect: Mapping[str, Any] | None = None,
         timeouts: Timeouts = DEFAULT_TIMEOUTS) -> PulledArtifact:
    """Pull a skillpack artifact by tag or ``@sha256:`` digest, check it, and write it.

    Checks, in order: the manifest hashes to the digest asked for (or that the registry
    announced); it is an OCI image manifest with one of our artifactTypes and one layer of
    the matching media type, at most ``max_size`` bytes; the layer received has the
    descriptor's size and sha256; `verify_bytes` accepts it (the strict archive reader, every
    manifest re-derived); its skill or bundle digest equals the annotation; and, with
    ``expect`` (name -> digest, or a lock's content), every skill it holds is approved with
    its digest (`skillpack.runtime.load`'s rules; skills ``expect`` approves beside them
    are not looked for). Only then is ``out_dir/<name>-<16 hex>.skill`` (or
    ``bundle-<16 hex>.bundle``) written, atomically: any failure writes nothing.
    ``timeouts`` bounds every request and the whole pull (`Timeouts`).
    """
    return pull_all([ref], out_dir, plain_http=plain_http, docker_config=docker_config,
                    max_size=max_size, expect=expect, timeouts=timeouts)[0]


def pull_all(refs: Sequence[str], out_dir: str | os.PathLike[str], *,
             plain_http: bool = False, docker_config: str | None = None,
             max_size: int = DEFAULT_MAX_SIZE, expect: Mapping[str, Any] | None = None,
             timeouts: Timeouts = DEFAULT_TIMEOUTS) -> list[PulledArtifact]:
    """Pull several references into one folder, all or nothing, in the order given.

    Each is checked as `pull` checks one (with ``expect``, each against the approvals of
    the skills it holds). One client, hence one HTTP session and its kept-alive
    connections, serves every reference to a registry; ``timeouts`` bounds every request
    and the whole run. Nothing is written unless every reference pulled and passed every
    check; then the archives are written through one `AtomicBatch` (temp files, then
    renames). The failures of several references are raised at once, each a problem
    naming its reference; a single failure is raised as it is. Two references that give
    one file name must give the same bytes (the same artifact twice is written once).
    """
    if not refs:
        raise SkillpackError("nothing to pull", hint="give one or more registry references")
    wheres = [parse_ref(ref) for ref in refs]  # a malformed one: refused before any request
    limit = min(max_size, MAX_SIZE - 1)
    clock = timeouts.clock()
    clients: dict[str, Any] = {}  # one a registry: its session keeps the connections alive
    unreached: dict[str, SkillpackError] = {}
    pulled: list[PulledArtifact] = []
    failures: list[SkillpackError] = []
    for where in wheres:
        if where.registry in unreached:  # tried once for this run
            err = unreached[where.registry]
            failures.append(SkillpackError(err.message, path=str(where), hint=err.hint))
            continue
        try:
            client = clients.get(where.registry)
            if client is None:
                try:
                    client = _client(where, plain_http, docker_config, clock)
                except SkillpackError as err:
                    unreached[where.registry] = err
                    raise
                clients[where.registry] = client
            pulled.append(_fetch(client, where, out_dir, limit, expect, clock))
        except SkillpackError as err:
            failures.append(err)
            if clock.ends <= time.monotonic():
                break  # past the deadline: every other reference would fail alike
    if failures:
        raise _failed(failures, len(wheres))
    _write_pulled(out_dir, pulled)
    return pulled


def _failed(failures: Sequence[SkillpackError], total: int) -> SkillpackError:
    """One error for the failures of `pull_all`: a single failure as it is; several as one
    error listing each (its reference, its kind as the code, what went wrong)."""
    if len(failures) == 1:
        return failures[0]
    kind: type[SkillpackError] = SkillpackError
    for cls in (IntegrityError, ArchiveError):
        if all(isinstance(err, cls) for err in failures):
            kind = cls
    problems = [Problem("error", _code(err),
                        err.message + (f" ({err.hint})" if err.hint else ""), err.path)
                for err in failures]
    return kind(f"{len(failures)} of {total} references failed, so nothing was written",
                problems=problems,
                hint="fix or leave out each reference listed, then pull again")


def _code(err: SkillpackError) -> str:
    return ("integrity" if isinstance(err, IntegrityError)
            else "archive" if isinstance(err, ArchiveError) else "error")


def _write_pulled(out_dir: str | os.PathLike[str], pulled: Sequence[PulledArtifact]) -> None:
    """Write every pulled archive, all or nothing (a name given twice, once)."""
    files: dict[str, bytes] = {}
    for got in pulled:
        if files.setdefault(got.path, got.data) != got.data:
            raise IntegrityError("two references give this file name with other bytes",
                                 path=got.path, hint="pull them into separate folders")
    try:
        os.makedirs(os.fspath(out_dir), exist_ok=True)
    except OSError as err:
        raise WriteError(f"cannot make the folder: {err.strerror}",
                         path=os.fspath(out_dir)) from None
    with AtomicBatch(sync_threads=min(8, len(files))) as batch:
        for dest, data in files.items():
            batch.write_parts(dest, [data])


def _fetch(client: Any, where: RegistryRef, out_dir: str | os.PathLike[str], limit: int,
           expect: Mapping[str, Any] | None, clock: _Clock) -> PulledArtifact:
    """One reference fetched and checked (as `pull` says), not yet written."""
    raw = _get_manifest(client, where, where.reference, where.digest, clock)
    manifest_digest = sha256_digest(raw)
    doc = _json_object(raw, where)
    if doc.get("mediaType") == INDEX_MEDIA_TYPE or "manifests" in doc:
        if doc.get("artifactType") != TOOLHIVE_ARTIFACT_TYPE:
            raise _unknown_type(doc, where)
        first = doc.get("manifests")
        if not isinstance(first, list) or not first or not isinstance(first[0], dict) or not (
                isinstance(first[0].get("digest"), str)
                and _SHA256_RE.fullmatch(first[0]["digest"])):
            raise ArchiveError("the ToolHive index lists no manifest", path=str(where))
        # what `thv skill install` reads: the index's first manifest
        child = _get_manifest(client, where, first[0]["digest"], first[0]["digest"], clock)
        return _pull_toolhive(client, where, _json_object(child, where), manifest_digest,
                              out_dir, limit, expect, clock)
    if doc.get("artifactType") not in _LAYER_FOR and _toolhive_manifest(doc):
        return _pull_toolhive(client, where, doc, manifest_digest, out_dir, limit, expect,
                              clock)
    layer, kind = _check_manifest(raw, where, limit)
    data = _get_blob(client, where, layer, "the layer", clock)
    annotations: dict[str, str] = json.loads(raw).get("annotations", {})
    report = verify_bytes(data, source=str(where))
    digest, skills = _check_report(report, kind, annotations, where)
    if expect is not None:
        _check_approved(data, [n for n, _ in skills], expect, where)
    name = (archive_name(*skills[0]) if kind == SKILL_ARTIFACT_TYPE
            else f"bundle-{digest.removeprefix('blake3:')[:16]}{BUNDLE_SUFFIX}")
    dest = os.path.join(os.fspath(out_dir), name)
    return PulledArtifact("skill" if kind == SKILL_ARTIFACT_TYPE else "bundle", dest,
                          manifest_digest, digest, skills, annotations, data)

