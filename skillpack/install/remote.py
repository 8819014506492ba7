"""Sources that are not on this machine, fetched into a temporary folder first: a
``.well-known`` skills site over HTTP(S) and an OCI reference.

A site (``https://example.com``, or the URL of its ``/.well-known/agent-skills/index.json``)
is read as the Agent Skills Discovery RFC 0.2.0 describes it and as
``skillpack export well-known`` writes it: the index (its ``$schema`` one skillpack reads,
every entry of a known type well formed, no name twice; an entry of a type skillpack does not
know skipped, and noted, as the RFC says), then each artifact it names (an ``archive`` with
SKILL.md at its root, or a lone ``skill-md``), each refused unless its bytes hash to the
index's ``sha256:`` digest. Each site is fetched within one deadline (``Timeouts.deadline``,
as `pull` has), checked between two reads from the socket, so a site sending a byte at a time
stops there. An ``oci://REGISTRY/REPO:TAG`` source is pulled and verified by
`skillpack.publish.oci.pull`. What comes back are local paths that
`skillpack.source.classify` reads like any other, with the URL each came from and the name
the index gives it.
"""

from __future__ import annotations

import copy
import hashlib
import http.client
import json
import os
import re
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from skillpack._atomic import remove_tree
from skillpack.content.inflate import read_archive
from skillpack.errors import ArchiveError, IntegrityError, Problem, RefusedError, SkillpackError
from skillpack.publish.exports import DISCOVERY_SCHEMA, WELL_KNOWN_DIR
from skillpack.publish.oci import DEFAULT_TIMEOUTS, Timeouts, pull
from skillpack.source.notes import note

__all__ = ["MAX_ARTIFACT", "MAX_INDEX", "OCI_PREFIX", "TYPES", "Fetched", "fetched",
           "is_remote"]

OCI_PREFIX = "oci://"
#: The largest index and artifact read from a site (bytes): a hostile site cannot fill memory.
MAX_INDEX = 4 << 20
MAX_ARTIFACT = 64 << 20
#: The entry types of index 0.2.0 skillpack reads; an entry of another type is skipped.
TYPES = ("archive", "skill-md")
_CHUNK = 1 << 16
_SHOWN = 5  # the entries a refusal or a note names, then how many more
_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?\Z")
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}\Z")


def is_remote(source: str) -> bool:
    """Whether `source` names a site (http:// or https://) or an OCI reference (oci://)."""
    return source.startswith(("http://", "https://", OCI_PREFIX))


@dataclass(frozen=True, slots=True)
class Fetched:
    """The local paths the sources stand for, in order, and, for each fetched file, the URL
    or reference it came from (what the user knows it by; a ``skill-md``'s folder too),
    the name the site's index gives it (``names``) and the notes of the index entries that
    were skipped (``skipped``: their type is not one skillpack reads)."""

    paths: tuple[str, ...]
    origins: dict[str, str]
    names: dict[str, str] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()
    where: dict[str, str] = field(default_factory=dict)  # each site's folder: its index URL

    def named(self, label: str) -> str | None:
        """The name the index gives the artifact a skill labelled `label` was read from
        (the artifact itself, or ``ARTIFACT/NAME`` for a skill of an archive of several);
        None for a skill that came from no site."""
        if label in self.names:
            return self.names[label]
        return self.names.get(label.rpartition("/")[0])

    def relabel(self, err: SkillpackError) -> SkillpackError:
        """`err` with every fetched path in its path, message and problems (a temporary
        folder, gone when the user reads it) replaced by the URL it was fetched from."""
        known = {**self.where, **self.origins}
        if not known:
            return err
        pattern = re.compile("|".join(map(re.escape, sorted(known, key=len, reverse=True))))

        def shown(text: str) -> str:
            return pattern.sub(lambda m: known[m.group(0)], text)

        out = copy.copy(err)
        out.path = None if err.path is None else shown(err.path)
        out.message = shown(err.message)
        out.problems = tuple(Problem(p.severity, p.code, shown(p.message),
                                     None if p.file is None else shown(p.file), p.line)
                             for p in err.located())
        if isinstance(out, RefusedError):
            out.joined = True
        return out


@contextmanager
def fetched(sources: Iterable[str], *, plain_http: bool = False,
            timeouts: Timeouts = DEFAULT_TIMEOUTS) -> Iterator[Fetched]:
    """``with fetched(sources) as found:`` every source as a local path: a path as it is,
    a site's artifacts and an OCI artifact written into a temporary folder (removed on
    leaving the block) after their digests were checked. `timeouts` bounds each request
    and, with its ``deadline``, the whole fetch of each site or OCI reference."""
    temp: str | None = None
    paths: list[str] = []
    origins: dict[str, str] = {}
    names: dict[str, str] = {}
    where: dict[str, str] = {}
    skipped: list[str] = []
    try:
        for source in sources:
            if not is_remote(source):
                paths.append(source)
                continue
            if temp is None:
                temp = tempfile.mkdtemp(prefix="skillpack-fetched-")
            into = tempfile.mkdtemp(dir=temp)
            if source.startswith(OCI_PREFIX):
                got = pull(source[len(OCI_PREFIX):], into, plain_http=plain_http,
                           timeouts=timeouts)
                origins[got.path] = source
            else:
                site = _Site(source, into, _Deadline(timeouts))
                site.fetch()
                origins.update(site.origins)
                names.update(site.names)
                where[into] = site.index_url
                skipped += site.skipped
            paths.append(into)
        yield Fetched(tuple(paths), origins, names, tuple(skipped), where)
    finally:
        if temp is not None:
            remove_tree(temp)


def index_url(source: str) -> str:
    """The URL of a site's index: `source` itself when it names ``index.json``; the index
    in it when it names the ``/.well-known/agent-skills/`` folder; else the index below it."""
    parts = urllib.parse.urlsplit(source)
    path = parts.path
    if path.endswith("/index.json"):
        return source
    if not path.rstrip("/").endswith(f"/{WELL_KNOWN_DIR}"):
        path = path.rstrip("/") + f"/{WELL_KNOWN_DIR}"
    return urllib.parse.urlunsplit(parts._replace(path=path.rstrip("/") + "/index.json"))


@dataclass(slots=True)
class _Deadline:
    """The `Timeouts` of one site, with the moment its deadline falls."""

    limits: Timeouts
    ends: float = 0.0

    def __post_init__(self) -> None:
        self.ends = time.monotonic() + self.limits.deadline

    def timeout(self, url: str) -> float:
        """The timeout of the next request (to connect, and for each read): the limit, or
        what is left of the deadline; raises once it has passed."""
        return min(max(self.limits.connect, self.limits.read), self.check(url))

    def check(self, url: str) -> float:
        left = self.ends - time.monotonic()
        if left <= 0:
            raise self.timed_out(url)
        return left

    def timed_out(self, url: str) -> SkillpackError:
        limits = self.limits
        what = (f"the deadline of {limits.deadline:g} s" if self.ends <= time.monotonic()
                else f"the timeouts ({limits.connect:g} s to connect, {limits.read:g} s to "
                "answer)")
        host = urllib.parse.urlsplit(url).netloc
        return SkillpackError(f"the site {host} did not answer within {what}", path=url,
                              hint="check the site and the network, or allow more time: "
                              "--timeout SECONDS (each request), --deadline SECONDS (each "
                              "site)")


class _Site:
    """One site fetched into `into`: its index read, each artifact written there (an
    archive as NAME.zip, a SKILL.md as NAME/SKILL.md), checked against its digest."""

    def __init__(self, source: str, into: str, clock: _Deadline) -> None:
        self.index_url = index_url(source)
        self.into = into
        self.clock = clock
        self.origins: dict[str, str] = {}
        self.names: dict[str, str] = {}
        self.skipped: list[str] = []

    def fetch(self) -> None:
        entries = self._entries(self._get(self.index_url, MAX_INDEX, "the index"))
        for entry in entries:
            url = urllib.parse.urljoin(self.index_url, entry["url"])
            if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
                raise SkillpackError(f"the index names a URL that is not http(s): {url}",
                                     path=self.index_url)
            name = entry["name"]
            data = self._get(url, MAX_ARTIFACT, f"skill '{name}'")
            got = "sha256:" + hashlib.sha256(data).hexdigest()
            if got != entry["digest"]:
                raise IntegrityError(f"skill '{name}': the bytes received hash to {got}, "
                                     f"the index says {entry['digest']}", path=url,
                                     hint="the site or the network altered it; do not "
                                     "install it")
            if entry["type"] == "archive":
                _check_root(data, url, name)
                path = os.path.join(self.into, name + ".zip")
            else:
                folder = os.path.join(self.into, name)
                os.mkdir(folder)
                self.origins[folder] = url  # the skill is read as its folder
                self.names[folder] = name
                path = os.path.join(folder, "SKILL.md")
            with open(path, "xb") as handle:
                handle.write(data)
            self.origins[path] = url
            self.names[path] = name

    def _get(self, url: str, limit: int, what: str) -> bytes:
        """The body of a GET of `url`, at most `limit` bytes, read a socket read at a time
        with the deadline checked between two reads."""
        buffer = bytearray()
        try:
            with urllib.request.urlopen(url, timeout=self.clock.timeout(url)) as response:
                read = getattr(response, "read1", response.read)
                while chunk := read(_CHUNK):
                    buffer += chunk
                    self.clock.check(url)
                    if len(buffer) > limit:
                        break
                short = len(buffer) <= limit and bool(getattr(response, "length", None))
        except urllib.error.HTTPError as err:
            raise SkillpackError(f"cannot fetch {what}: HTTP {err.code} {err.reason}",
                                 path=url, hint="check the URL; the site must serve "
                                 f"/{WELL_KNOWN_DIR}/index.json" if url == self.index_url
                                 else f"the site's index ({self.index_url}) lists it at "
                                 "this URL, which the site does not serve: ask the site to "
                                 "fix its index or publish the file") from None
        except TimeoutError:
            raise self.clock.timed_out(url) from None
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as err:
            reason = getattr(err, "reason", err)
            if isinstance(reason, TimeoutError):
                raise self.clock.timed_out(url) from None
            raise SkillpackError(f"cannot fetch {what}: {reason}", path=url,
                                 hint="check the URL and that the site is up") from None
        if len(buffer) > limit:
            raise SkillpackError(f"{what} is larger than {limit:,} bytes", path=url,
                                 hint="this is not a skills site, or not one skillpack reads")
        if short:
            raise SkillpackError(f"cannot fetch {what}: the site closed the connection "
                                 f"after {len(buffer):,} bytes, before the end", path=url,
                                 hint="try again; check that the site is up")
        return bytes(buffer)

    def _entries(self, data: bytes) -> list[dict[str, Any]]:
        """The index's entries skillpack reads, each checked (a name that can be a folder,
        a URL, a sha256 digest; no name twice); those of another type skipped, noted."""
        url = self.index_url
        try:
            # a number of thousands of digits (Python converts at most 4,300) in a field a
            # client ignores is no reason to refuse the index: read as a float
            index = json.loads(data.decode("utf-8"),
                               parse_int=lambda text: int(text) if len(text) < 1000
                               else float(text))
        except RecursionError:
            raise SkillpackError("the index is not JSON skillpack reads: it is nested too "
                                 "deeply", path=url,
                                 hint="this is not a skills site, or not one skillpack "
                                 "reads") from None
        except (UnicodeDecodeError, ValueError) as exc:
            raise SkillpackError(f"the index is not JSON: {exc}", path=url) from None
        if not isinstance(index, dict):
            raise SkillpackError("the index is not a JSON object", path=url,
                                 hint="a discovery index 0.2.0 is an object with '$schema' "
                                 "and 'skills'")
        skills = index.get("skills")
        _check_schema(index, url)
        if not isinstance(skills, list):
            raise SkillpackError("the index has no 'skills' list", path=url,
                                 hint="a discovery index 0.2.0 lists its skills under 'skills'")
        problems: list[str] = []
        others: list[dict[str, Any]] = []
        read: list[dict[str, Any]] = []
        for entry in skills:
            if (isinstance(entry, dict) and isinstance(entry.get("type"), str)
                    and entry["type"] not in TYPES):
                others.append(entry)
            elif not (isinstance(entry, dict) and isinstance(entry.get("name"), str)
                      and _NAME.match(entry["name"]) is not None
                      and entry.get("type") in TYPES and isinstance(entry.get("url"), str)
                      and isinstance(entry.get("digest"), str)
                      and _SHA256.match(entry["digest"])):
                problems.append(_brief(entry))
            else:
                read.append(entry)
        if problems:
            raise SkillpackError(f"{len(problems):,} index entries skillpack cannot read "
                                 "(each needs a name, a type 'archive' or 'skill-md', a url "
                                 "and a sha256: digest): " + _some(problems), path=url,
                                 hint="index 0.2.0 entries, as `skillpack export well-known` "
                                 "writes them")
        twice = [f"'{n}' ({k:,} times)" for n, k in Counter(
            e["name"] for e in read).items() if k > 1]
        if twice:
            raise SkillpackError(f"the index lists {len(twice):,} name(s) more than once: "
                                 + _some(twice), path=url,
                                 hint="each skill is listed once; ask the site to fix its "
                                 "index")
        if others:
            skipped = (f"{url}: skipped {len(others):,} index entr"
                       f"{'y' if len(others) == 1 else 'ies'} of a type skillpack does not "
                       f"read (it reads {' and '.join(TYPES)}): " + _some(
                           [f"{_brief(e.get('name'), 64)} ({e['type'][:64]!r})"
                            for e in others]))
            self.skipped.append(skipped)
            note(skipped)
        if not read:
            raise SkillpackError("the index lists no skill" + (
                " skillpack reads" if others else ""), path=url)
        return read


def _check_root(data: bytes, url: str, name: str) -> None:
    """Refuse the archive `data` of skill `name` unless SKILL.md is at its root: the RFC's
    "Archive Structure" (files at the root, not in a wrapper folder; SKILL.md at the root),
    which other clients hold a site to (vercel's skills drops such a skill). An archive the
    reader cannot read is left to it: it says what is wrong when it reads it."""
    try:
        _, members = read_archive(data, source=url)
    except ArchiveError:
        return
    paths = [m.path for m in members if m.kind == "file"]
    if "SKILL.md" in paths:
        return
    deeper = sorted((p for p in paths if p.rpartition("/")[2] == "SKILL.md"),
                    key=lambda p: (p.count("/"), p.encode("utf-8")))
    found = (f"its SKILL.md is {deeper[0]!r}, in a wrapper folder" if deeper
             else "it holds no SKILL.md")
    raise SkillpackError(f"skill '{name}': the archive has no SKILL.md at its root ({found}); "
                         "the Agent Skills Discovery RFC requires a site's archive to hold "
                         "the skill's files at its root, SKILL.md among them", path=url,
                         hint="ask the site to publish it with SKILL.md at the archive's root, "
                         "as `skillpack export well-known` writes it; other clients skip "
                         "such an archive too")


def _some(items: list[str]) -> str:
    """The first few of `items`, then how many more: as long for a million as for ten."""
    more = f"; and {len(items) - _SHOWN:,} more" if len(items) > _SHOWN else ""
    return "; ".join(items[:_SHOWN]) + more


def _brief(value: Any, most: int = 200) -> str:
    """`value` as Python writes it, cut at `most` characters (one nested too deeply for
    `repr` said so: the index was read within the limit, `repr` may not be)."""
    try:
        return repr(value)[:most]
    except RecursionError:
        return "(nested too deeply to show)"


def _check_schema(index: Mapping[str, Any], url: str) -> None:
    """Refuse an index of a schema skillpack does not read: a ``$schema`` other than
    discovery 0.2.0's; without one, a ``version`` other than 0.2.x (the RFC's earlier
    drafts) or the entries of a 0.1.0 index (``files``, no digest)."""
    schema = index.get("$schema")
    version = index.get("version")
    if schema is not None:
        if schema != DISCOVERY_SCHEMA:
            raise SkillpackError(f"the index is of the schema {str(schema)[:200]!r}, which "
                                 f"skillpack does not read; it reads {DISCOVERY_SCHEMA}",
                                 path=url, hint=_NEWER)
        return
    if version is not None:
        if not (isinstance(version, str) and re.fullmatch(r"0\.2\.\d+", version)):
            raise SkillpackError(f"the index is of version {str(version)[:40]!r}, which "
                                 "skillpack does not read; it reads discovery 0.2.0",
                                 path=url, hint=_NEWER)
        return
    skills = index.get("skills")
    if isinstance(skills, list) and any(isinstance(e, dict) and "files" in e
                                        and "type" not in e for e in skills):
        raise SkillpackError("this is a discovery index 0.1.0 (no $schema; its entries list "
                             "'files' and carry no digest), which skillpack does not read: "
                             "it reads 0.2.0, whose digests it checks", path=url,
                             hint="ask the site to publish an index 0.2.0 (`skillpack "
                             "export well-known` writes one)")


_NEWER = ("a newer skillpack may read it; or ask the site for an index 0.2.0 ($schema "
          f"{DISCOVERY_SCHEMA})")
