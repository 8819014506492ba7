"""The inputs a user has, as the commands that take skills read them.

Two kinds of input beyond a skill folder, its SKILL.md and a folder of skills:

* a folder of archives: a folder in which discovery finds no SKILL.md but that holds
  ``*.skill``, ``*.bundle``, ``*.zip``, ``*.tar.gz`` or ``*.tgz`` files directly (the output
  folder of ``skillpack pack -o out``) stands for those archives, in sorted order
  (`skillpack.source.discover.archives_in`, which reads no archive);
* an archive made elsewhere (Anthropic's DEFLATE ``.skill``/``.zip`` with one top folder, a
  zip with SKILL.md at its root, a ``.tar.gz``; `skillpack.source.foreign`) stands for the
  folder it unpacks to, in a temporary folder, so that it gets every rule of the walk and
  the digest of the folder it was made from. An archive of ours (it carries a
  ``.skillpack/manifest.json`` or a bundle index) is left as it is, for the strict verifier:
  a tampered one is refused, never re-read as a foreign archive.

`as_folders` is the one place that does both, for `digest`, `verify`, `bundle`, `inspect`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from skillpack.content.inflate import read_archive, sniff
from skillpack.errors import ArchiveError, SkillpackError
from skillpack.formats.bundle_index import BUNDLE_INDEX
from skillpack.formats.manifest import MANIFEST_PATH
from skillpack.source.discover import archives_in
from skillpack.source.foreign import unpacked
from skillpack.source.load import open_regular, read_regular
from skillpack.storedzip.reader import read_zip_file
from skillpack.storedzip.source import FileBytes

__all__ = ["as_folders", "is_ours", "label"]

def is_ours(data: bytes, *, source: str = "<archive>") -> bool:
    """Whether `data` is a skillpack archive or bundle (to be verified strictly): it carries
    a manifest or a bundle index, or it is no archive `skillpack.source.foreign` can read
    (then the strict reader says what is wrong with it)."""
    try:
        _, members = read_archive(data, source=source)
    except ArchiveError:
        return True
    suffix = "/" + MANIFEST_PATH
    return any(m.path == BUNDLE_INDEX or m.path == MANIFEST_PATH or m.path.endswith(suffix)
               for m in members)


def _strictly_ours(path: str) -> bool:
    """Whether the file at `path` is an archive of ours as `is_ours` says, told without
    reading it whole (a 1 GiB archive is verified in bounded memory, never loaded): no
    archive `skillpack.source.foreign` reads (by its first bytes), or a zip the strict reader
    accepts that carries a manifest or a bundle index. False when that does not settle it
    (then `is_ours` reads it)."""
    try:
        fd = open_regular(path)  # a fifo named as an archive must not hang
    except OSError as err:
        raise SkillpackError(f"cannot read it: {err.strerror}", path=path) from None
    with FileBytes(fd, path) as file:
        if sniff(file.read(0, min(512, len(file)))) is None:
            return True  # no archive foreign reads: the strict reader says what is wrong
        try:
            names = read_zip_file(file).names
        except ArchiveError:
            return False
    suffix = "/" + MANIFEST_PATH
    return any(n in (BUNDLE_INDEX, MANIFEST_PATH) or n.endswith(suffix) for n in names)


@contextmanager
def as_folders(paths: Iterable[str | os.PathLike[str]], *,
               expand: bool = True) -> Iterator[tuple[list[str], dict[str, str]]]:
    """``with as_folders(paths) as (inputs, labels):`` each path as the commands read it: a
    folder of archives replaced by its archives (`expand`), a foreign archive by the
    temporary folder it unpacks to (removed on leaving the block), anything else as it is.
    `labels` maps each temporary folder to the archive it came from, to name it by."""
    inputs: list[str] = []
    labels: dict[str, str] = {}
    with ExitStack() as stack:
        for given in (os.fspath(p) for p in paths):
            for path in (archives_in(given) or [given]) if expand else [given]:
                # a folder, a SKILL.md or a missing path as it is; anything else is read as an
                # archive (a fifo or a device is refused there, never read)
                if (os.path.isdir(path) or not os.path.lexists(path)
                        or os.path.basename(path).lower() == "skill.md"):
                    inputs.append(path)
                    continue
                if _strictly_ours(path):  # decided from its head and central directory
                    inputs.append(path)
                    continue
                try:
                    data = read_regular(path)  # a fifo named as an archive must not hang
                except OSError as err:
                    raise SkillpackError(f"cannot read it: {err.strerror}", path=path) from None
                if is_ours(data, source=path):
                    inputs.append(path)
                    continue
                folder, _ = stack.enter_context(unpacked(data, source=path))
                inputs.append(str(folder))
                labels[str(folder)] = path
        yield inputs, labels


def label(path: str | Path, labels: dict[str, str]) -> str:
    """The name a user gave for `path` (an archive for its temporary folder)."""
    return labels.get(str(path), str(path))
