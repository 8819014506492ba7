"""Sources that are not on this machine, fetched into a temporary folder first: a
``.well-known`` skills site over HTTP(S) and an OCI reference.

A site (``https://example.com``, or the URL of its ``/.well-known/agent-skills/index.json``)
is read as the Agent Skills Discovery RFC 0.2.0 describes it and as
``skillpack export well-known`` writes it: the index, then each artifact it names (an
``archive`` with SKILL.md at its root, or a lone ``skill-md``), each refused unless its bytes
hash to the index's ``sha256:`` digest. An ``oci://REGISTRY/REPO:TAG`` source is pulled and
verified by `skillpack.publish.oci.pull`. What comes back are local paths that
`skillpack.source.classify` reads like any other.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from skillpack._atomic import remove_tree
from skillpack.errors import IntegrityError, SkillpackError
from skillpack.publish.exports import WELL_KNOWN_DIR
from skillpack.publish.oci import pull

__all__ = ["MAX_ARTIFACT", "MAX_INDEX", "OCI_PREFIX", "Fetched", "fetched", "is_remote"]

OCI_PREFIX = "oci://"
#: The largest index and artifact read from a site (bytes): a hostile site cannot fill memory.
MAX_INDEX = 4 << 20
MAX_ARTIFACT = 64 << 20
_TIMEOUT = 30
_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?\Z")
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}\Z")


def is_remote(source: str) -> bool:
    """Whether `source` names a site (http:// or https://) or an OCI reference (oci://)."""
    return source.startswith(("http://", "https://", OCI_PREFIX))


@dataclass(frozen=True, slots=True)
class Fetched:
    """The local paths the sources stand for, in order, and, for each fetched file, the URL
    or reference it came from (what the user knows it by)."""

    paths: tuple[str, ...]
    origins: dict[str, str]


@contextmanager
def fetched(sources: Iterable[str], *, plain_http: bool = False) -> Iterator[Fetched]:
    """``with fetched(sources) as found:`` every source as a local path: a path as it is,
    a site's artifacts and an OCI artifact written into a temporary folder (removed on
    leaving the block) after their digests were checked."""
    temp: str | None = None
    paths: list[str] = []
    origins: dict[str, str] = {}
    try:
        for source in sources:
            if not is_remote(source):
                paths.append(source)
                continue
            if temp is None:
                temp = tempfile.mkdtemp(prefix="skillpack-fetched-")
            into = tempfile.mkdtemp(dir=temp)
            if source.startswith(OCI_PREFIX):
                got = pull(source[len(OCI_PREFIX):], into, plain_http=plain_http)
                origins[got.path] = source
            else:
                for path, url in _fetch_site(source, into):
                    origins[path] = url
            paths.append(into)
        yield Fetched(tuple(paths), origins)
    finally:
        if temp is not None:
            remove_tree(temp)


def _index_url(source: str) -> str:
    if source.endswith("/index.json"):
        return source
    return source.rstrip("/") + f"/{WELL_KNOWN_DIR}/index.json"


def _get(url: str, limit: int, what: str) -> bytes:
    """The body of a GET of `url`, at most `limit` bytes."""
    try:
        with urllib.request.urlopen(url, timeout=_TIMEOUT) as response:
            data: bytes = response.read(limit + 1)
    except urllib.error.HTTPError as err:
        raise SkillpackError(f"cannot fetch {what}: HTTP {err.code} {err.reason}",
                             path=url, hint="check the URL; the site must serve "
                             f"/{WELL_KNOWN_DIR}/index.json") from None
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", err)
        raise SkillpackError(f"cannot fetch {what}: {reason}", path=url,
                             hint="check the URL and that the site is up") from None
    if len(data) > limit:
        raise SkillpackError(f"{what} is larger than {limit:,} bytes", path=url,
                             hint="this is not a skills site, or not one skillpack reads")
    return data


def _entries(data: bytes, url: str) -> list[dict[str, Any]]:
    """The index's skill entries, each checked: a name that can be a folder, a type we read,
    a URL and a sha256 digest."""
    try:
        index = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise SkillpackError(f"the index is not JSON: {exc}", path=url) from None
    skills = index.get("skills") if isinstance(index, dict) else None
    if not isinstance(skills, list):
        raise SkillpackError("the index has no 'skills' list", path=url,
                             hint="a discovery index 0.2.0 lists its skills under 'skills'")
    problems = []
    for entry in skills:
        ok = (isinstance(entry, dict) and isinstance(entry.get("name"), str)
              and _NAME.match(entry["name"]) is not None
              and entry.get("type") in ("archive", "skill-md")
              and isinstance(entry.get("url"), str)
              and isinstance(entry.get("digest"), str) and _SHA256.match(entry["digest"]))
        if not ok:
            problems.append(repr(entry)[:200])
    if problems:
        more = f"; and {len(problems) - 5:,} more" if len(problems) > 5 else ""
        raise SkillpackError(f"{len(problems):,} index entries skillpack cannot read (each "
                             "needs a name, a type 'archive' or 'skill-md', a url and a "
                             "sha256: digest): " + "; ".join(problems[:5]) + more, path=url,
                             hint="index 0.2.0 entries, as `skillpack export well-known` "
                             "writes them")
    return list(skills)


def _fetch_site(source: str, into: str) -> list[tuple[str, str]]:
    """Write each artifact of the site's index into `into` (an archive as NAME.zip, a
    SKILL.md as NAME/SKILL.md), each checked against its digest; return (path, url) pairs."""
    index_url = _index_url(source)
    entries = _entries(_get(index_url, MAX_INDEX, "the index"), index_url)
    if not entries:
        raise SkillpackError("the index lists no skill", path=index_url)
    written: list[tuple[str, str]] = []
    for entry in entries:
        url = urllib.parse.urljoin(index_url, entry["url"])
        if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise SkillpackError(f"the index names a URL that is not http(s): {url}",
                                 path=index_url)
        data = _get(url, MAX_ARTIFACT, f"skill '{entry['name']}'")
        got = "sha256:" + hashlib.sha256(data).hexdigest()
        if got != entry["digest"]:
            raise IntegrityError(f"skill '{entry['name']}': the bytes received hash to {got}, "
                                 f"the index says {entry['digest']}", path=url,
                                 hint="the site or the network altered it; do not install it")
        if entry["type"] == "archive":
            path = os.path.join(into, entry["name"] + ".zip")
        else:
            os.makedirs(os.path.join(into, entry["name"]))
            path = os.path.join(into, entry["name"], "SKILL.md")
        with open(path, "xb") as handle:
            handle.write(data)
        written.append((path, url))
    return written
