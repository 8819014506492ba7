"""What `skillpack install` installed in an agent folder: ``FOLDER/.skillpack-installed.json``.

One small JSON file per folder, ``{"format": "1", "skills": {NAME: DIGEST}}``, keys sorted,
written atomically (`skillpack._atomic`) by the one install holding the folder's lock. It is
how install tells its own skills from those someone else put there (which it never touches),
and what ``--prune`` may remove. It is read as any file a user can be handed: a regular file
only (a link, a fifo, a device refused at once, never followed nor waited on), at most 4 MiB,
nested no deeper than JSON's limit; a name in it that could escape the folder is refused.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Mapping
from contextlib import suppress

from skillpack._atomic import atomic_write
from skillpack._regular import read_regular
from skillpack.errors import SkillpackError
from skillpack.formats.digest import DIGEST_RE
from skillpack.formats.paths import name_problem

__all__ = ["STATE_FILE", "check_name", "read_state", "state_bytes", "write_state"]

STATE_FILE = ".skillpack-installed.json"
_FORMAT = "1"
_LIMIT = 1 << 22  # a record of thousands of skills is a few hundred KB
_REPAIR = ("it was edited by hand; restore it or remove it (install then treats every skill "
           "here as someone else's)")


def _plain(name: str) -> bool:
    """Whether `name` is one plain folder name (no path, not hidden, portable)."""
    return not ("/" in name or name in (".", "..") or name.startswith(".") or name_problem(name))


def check_name(name: str, folder: str) -> None:
    """Refuse a skill name that is not one plain folder name inside `folder`."""
    if not _plain(name):
        raise SkillpackError(f"the skill name {name!r} would not be a folder directly inside "
                             "the agent folder", path=os.path.join(folder, name),
                             hint="a skill's name is lowercase letters, digits and hyphens")


def read_state(folder: str) -> dict[str, str]:
    """Name -> digest of what install recorded in `folder` ({} when it recorded nothing)."""
    path = os.path.join(folder, STATE_FILE)
    try:
        raw = read_regular(path, limit=_LIMIT, follow=False)
    except FileNotFoundError:
        return {}
    except OSError as err:
        odd = err.errno in (errno.ELOOP, errno.EINVAL, errno.EFBIG)
        raise SkillpackError(f"cannot read what was installed here: {err.strerror}",
                             path=path, hint=("install writes a small regular file here; "
                                              "remove it (install then treats every skill "
                                              "here as someone else's)") if odd else
                             "check its permissions") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise SkillpackError("not valid JSON: it is nested too deeply", path=path,
                             hint=_REPAIR) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise SkillpackError(f"not valid JSON: {exc}", path=path, hint=_REPAIR) from None
    skills = data.get("skills") if isinstance(data, dict) else None
    if (not isinstance(data, dict) or data.get("format") != _FORMAT
            or not isinstance(skills, dict)
            or not all(isinstance(v, str) and DIGEST_RE.fullmatch(v) for v in skills.values())):
        raise SkillpackError("not a record of installed skills skillpack reads", path=path,
                             hint="it was edited by hand; restore it or remove it")
    for name in skills:
        if not _plain(name):
            raise SkillpackError(f"it records a skill named {name!r}, which would not be a "
                                 "folder directly inside the agent folder", path=path,
                                 hint=_REPAIR)
    return dict(skills)


def state_bytes(skills: Mapping[str, str]) -> bytes:
    """The state file's bytes for `skills`."""
    return (json.dumps({"format": _FORMAT, "skills": dict(sorted(skills.items()))},
                       indent=2, sort_keys=True) + "\n").encode("utf-8")


def write_state(folder: str, skills: Mapping[str, str]) -> None:
    """Record `skills` (name -> digest) as what install put in `folder`, atomically; the
    file is removed when none is left. The caller holds the folder's lock
    (`skillpack._atomic.folder_lock`)."""
    path = os.path.join(folder, STATE_FILE)
    if not skills:
        with suppress(FileNotFoundError):
            os.unlink(path)
        return
    with atomic_write(path, leased=False) as handle:
        handle.write(state_bytes(skills))
