"""The names a skill's files may have, and their order (SPEC section 1).

One set of rules for the three places that meet a path: the walk (names on disk), the zip
writer and the strict reader (member names). A portable name is relative, uses `/` only, has
no control character, no empty, `.` or `..` segment; two names collide when they are equal
after case folding of their NFC form (they would overwrite each other on macOS or Windows).
Paths sort by their UTF-8 bytes.

The runtime imports this module at cold start: `re` and `unicodedata` are imported only
once a name needs them (a refused name, a non-ASCII name).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see skillpack._record
if TYPE_CHECKING:
    import re

__all__ = [
    "MAX_NAME",
    "SKILL_MD",
    "collision_key",
    "collision_reason",
    "may_be_unportable",
    "name_problem",
    "sort_key",
    "windows_problem",
]

#: The file that makes a folder a skill.
SKILL_MD = "SKILL.md"
#: The longest name in UTF-8 bytes (Linux's PATH_MAX): a longer one is written nowhere, and
#: a name of 64 KiB, "a/a/a/...", costs its length squared wherever its folders are listed.
MAX_NAME = 4096

# Anything a portable member name must not have: an absolute path, a drive letter, a
# backslash, a control character (C0, DEL, C1), an empty, `.` or `..` segment, a trailing `/`;
# and what Windows refuses or silently changes (so that an unzip there would replace another
# member): a character of <>:"|?*, a segment ending in a dot or a space (`SKILL.md.` opens
# `SKILL.md`), a reserved device name with any extension, in any case (`CON`, `aux.txt`,
# `COM1`, `LPT9.log`, and the superscript-digit forms `COM¹`). Every alternative is anchored
# or one character wide: the search is linear. Compiled on first use (read_zip screens names
# without it).
_DEVICE = r"(?i:CON|PRN|AUX|NUL|COM[1-9\u00b9\u00b2\u00b3]|LPT[1-9\u00b9\u00b2\u00b3])"
_BAD_NAME = (r"\A/|\A[A-Za-z]:|\\|[\x00-\x1f\x7f-\x9f]|(?:\A|/)\.{0,2}(?:/|\Z)"
             r'|[<>:"|?*]|[. ](?:/|\Z)|(?:\A|/)' + _DEVICE + r"(?:\.[^/]*)?(?:/|\Z)")
_bad_name: re.Pattern[str] | None = None
#: What a name that may break the Windows rules holds (see `may_be_unportable`).
_WINDOWS_CHARS = frozenset('<>:"|?*')
#: The stems Windows opens as a device, whatever the extension or case (`windows_problem`).
_PORT_DIGITS = frozenset("123456789\u00b9\u00b2\u00b3")
_DEVICE_STEMS = frozenset({
    "con", "prn", "aux", "nul", *(f"{port}{n}" for port in ("com", "lpt") for n in _PORT_DIGITS)})


def _compile_bad_name() -> re.Pattern[str]:
    global _bad_name
    import re

    _bad_name = re.compile(_BAD_NAME)
    return _bad_name


def sort_key(path: str) -> bytes:
    """The order of the file set: a path's UTF-8 bytes (undecodable bytes as they were)."""
    return path.encode("utf-8", "surrogateescape")


def name_problem(name: str) -> str | None:
    """Why `name` is not a portable member name, or None when it is."""
    if len(name) > MAX_NAME // 4 and len(name.encode("utf-8", "surrogateescape")) > MAX_NAME:
        size = len(name.encode("utf-8", "surrogateescape"))
        return f"a name of {size:,} bytes (no system takes a path over {MAX_NAME:,})"
    if not (_bad_name or _compile_bad_name()).search(name):
        return None
    import re

    if name == "":
        return "empty name"
    if name.endswith("/"):
        return "directory entry (name ends with '/'); archives carry files only"
    if name.startswith("/"):
        return "absolute name (starts with '/')"
    if re.match(r"[A-Za-z]:", name):
        return "drive-letter name (like 'C:x')"
    if "\\" in name:
        return "backslash in name (only '/' separates folders)"
    if re.search(r"[\x00-\x1f\x7f-\x9f]", name):
        return "control character in name"
    if re.search(r"(?:\A|/)\.{0,2}(?:/|\Z)", name):
        return "'..', '.' or empty segment in name (names must not escape or be ambiguous)"
    for segment in name.split("/"):
        reason = windows_problem(segment)
        if reason is not None:
            return reason
    return "unportable name"  # not reached: every alternative of _BAD_NAME is named above


def windows_problem(segment: str) -> str | None:
    """Why Windows would refuse or change the file name `segment` (one path segment, not
    `.` or `..`), or None: then an unzip there writes the member under its own name."""
    bad = sorted(_WINDOWS_CHARS.intersection(segment))
    if bad:
        return (f"{bad[0]!r} in name (Windows forbids the characters <>:\"|?*; the file "
                "could not be written there)")
    if segment.endswith((".", " ")):
        which = "dot" if segment.endswith(".") else "space"
        return (f"trailing {which} in name {segment!r} (Windows drops it, so the file would "
                f"replace {segment.rstrip('. ')!r})")
    stem = segment.split(".", 1)[0].upper()
    if stem.lower() in _DEVICE_STEMS:
        return (f"reserved device name {segment!r} (Windows opens the device {stem}, with any "
                "extension, in any case; rename it)")
    return None


def may_be_unportable(wrapped: str) -> bool:
    """A fast screen of many names at once: False when no name in `wrapped` (the names, each
    between `/`, joined) can break the Windows rules of `windows_problem`; True when one may
    (then ask about each name)."""
    # (a space is rare in names: looking for it first spares a scan for " /", whose "/" is
    # everywhere in `wrapped`)
    if (any(c in wrapped for c in _WINDOWS_CHARS) or "./" in wrapped
            or (" " in wrapped and " /" in wrapped)):
        return True
    lowered = wrapped.lower()
    for start in ("/con", "/prn", "/aux", "/nul", "/com", "/lpt"):
        at = lowered.find(start)
        while at >= 0:  # a segment starting like a device: is its stem one?
            end = at + 4
            if start in ("/com", "/lpt") and lowered[end : end + 1] in _PORT_DIGITS:
                end += 1
            if lowered[at + 1 : end] in _DEVICE_STEMS and lowered[end : end + 1] in ("/", "."):
                return True
            at = lowered.find(start, at + 1)
    return False


def collision_key(name: str) -> str:
    """The key two names collide on: the NFC form of the case folding of the NFC form
    (ASCII: lower case). Case folding can undo NFC, hence the second normalisation."""
    if name.isascii():  # the common case: NFC leaves ASCII alone, casefold is lower there
        return name.lower()
    import unicodedata

    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def collision_reason(first: str, second: str) -> str:
    """Say how two names with the same `collision_key` collide."""
    if first == second:
        return f"duplicate name (appears twice): {second!r}"
    import unicodedata

    if unicodedata.normalize("NFC", first) == unicodedata.normalize("NFC", second):
        return f"{second!r} and {first!r} are the same name after Unicode NFC normalisation"
    return f"{second!r} and {first!r} differ only by case (they collide on case-insensitive disks)"
