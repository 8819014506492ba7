"""The walk of a skill folder (SPEC section 1): list its folders, classify every entry,
apply the leave-out rules and the name checks, and collect every problem, raised once as a
`RefusedError`.

Iterative (a tree 1,000 folders deep is fine), it never follows a symlink: each folder is
opened without following a link and listed through that descriptor, each entry classified
from the directory entry and ``lstat`` facts, so a fifo cannot block it and a symlink loop
cannot trap it. A reading walk hashes and checks each file as it finds it (see `walk`).
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
from collections.abc import Mapping, Sequence

from skillpack.content.scan import (
    Allowances,
    ContentScan,
    unused_rule_message,
)
from skillpack.content.secrets import secret_name_reason
from skillpack.errors import ArchiveError, MissingPathError, Problem, RefusedError, SkillpackError
from skillpack.formats.paths import (
    SKILL_MD,
    collision_key,
    sort_key,
    windows_problem,
)
from skillpack.formats.shebang import shebang_line
from skillpack.source.fileset import FileSet, HashedFile, LeftOut, WalkedFile, display_path
from skillpack.source.ignore import (
    MANIFEST_DIR,
    SKILLIGNORE,
    SkillIgnore,
    left_out_rule,
    read_skillignore,
)
from skillpack.source.readfile import (
    DIR_FLAGS,
    HEAD,
    OPEN_FLAGS,
    ROOT_FLAGS,
    Changed,
    read_carried,
)
from skillpack.storedzip.writer import oversize

__all__ = ["KEEP_FILE", "Walker", "walk"]

#: The largest file whose bytes a reading walk keeps (within its `keep` budget) for `pack` to
#: write without reading it again: files written in one go by the zip writer.
KEEP_FILE = 1 << 20

_LEAVE_OUT_HINT = "or leave it out with a line in .skillignore"


class Walker:
    """One walk of the skill folder `root`: what it carries, leaves out, and every problem."""

    def __init__(self, root: str, read: bool = False, keep: int = 0,
                 outputs: Mapping[str, str] | None = None,
                 allow: Allowances | None = None, sha256: bool = False,
                 member_limit: int | None = None, size_limit: int | None = None) -> None:
        self.root = root
        # with a member limit, a reading walk lists the whole tree before it opens any file;
        # with a size limit, a file that alone is that large is never read
        self.member_limit = member_limit
        self.size_limit = size_limit
        # listed folders whose files are read once the listing is done: (folder, its
        # (st_dev, st_ino), [(path, name, lstat)]); and their count
        self.pending: list[tuple[str, tuple[int, int], list[tuple[str, str, os.stat_result]]]] = []
        self.pending_files = 0
        self.sha256 = sha256  # whether each file read is also hashed with SHA-256
        self.outputs = outputs or {}  # relative path -> rule: what this command writes
        self.allow = allow if allow is not None else Allowances({})
        self.reading = read  # whether each file is hashed and checked when found
        self.hashed: dict[str, HashedFile] = {}
        self.keep = keep  # bytes of read files still to keep (files up to KEEP_FILE each)
        self.files: dict[str, WalkedFile] = {}
        self.left_out: dict[str, LeftOut] = {}
        self.problems: dict[tuple[str | int | None, ...], Problem] = {}
        self.ignore: SkillIgnore | None = None
        self._shadowed: list[str] = []  # disk names of files replaced by a same-NFC twin

    # -- bookkeeping -------------------------------------------------------------------------

    def problem(self, code: str, path: str, message: str, line: int | None = None) -> None:
        shown = display_path(path)
        self.problems.setdefault((code, shown, line),
                                 Problem("error", code, message, file=shown, line=line))

    def refuse_content(self, path: str, content: ContentScan) -> None:
        """Every refusal of a carried file's content check (several may name one file)."""
        for problem in content.problems(display_path(path)):
            self.problems.setdefault((problem.code, problem.file or "", problem.message),
                                     problem)

    def leave_out(self, path: str, rule: str) -> None:
        self.left_out.setdefault(path, LeftOut(display_path(path), rule))

    def _full(self, rel: str) -> str:
        return os.path.join(self.root, rel) if rel else self.root

    # -- rules -------------------------------------------------------------------------------

    def load_skillignore(self) -> None:
        self.ignore, problems = read_skillignore(self.root)
        for problem in problems:
            self.problem(*problem)

    def rule(self, rel: str, name: str, is_dir: bool) -> str | None:
        """Why `rel` is left out, or None when it is walked."""
        return self.outputs.get(rel) or left_out_rule(rel, name, is_dir, self.ignore)

    # -- entries -----------------------------------------------------------------------------

    def _check_name(self, rel: str, name: str) -> None:
        reason = windows_problem(name)
        if reason is not None:
            self.problem("unportable-name", rel, f"{reason}; rename it")
        if name.isascii() and name.isprintable() and "\\" not in name:
            return
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            self.problem(
                "unportable-name", rel, "the name is not valid UTF-8; rename it with UTF-8 text"
            )
            return
        if not name.isprintable() and any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in name):
            self.problem(
                "unportable-name", rel, "the name holds a control character; rename it"
            )
        if "\\" in name:
            self.problem(
                "unportable-name", rel, "the name holds a backslash, a folder separator on "
                "Windows; rename it"
            )

    def add_file(self, rel: str, st: os.stat_result) -> WalkedFile:
        path = rel if rel.isascii() else unicodedata.normalize("NFC", rel)
        mode = "100755" if st.st_mode & stat.S_IXUSR else "100644"
        if path in self.files and self.files[path].disk_path != rel:
            self._shadowed.append(self.files[path].disk_path)  # an NFC twin: see check_names
        walked = self.files[path] = WalkedFile(
            path, st.st_size, mode, st.st_dev, st.st_ino, None if path == rel else rel
        )
        return walked

    def read_file(self, rel: str, name: str, dir_fd: int | None,
                  seen: os.stat_result | None = None) -> None:
        """Add the regular file `name` of the folder open as `dir_fd` (or at the path `name`)
        from what ``fstat`` tells of it once opened, and hash it (when small) through that
        same descriptor. With `seen` (its ``lstat``), it must be that very file."""
        try:
            fd = os.open(name, OPEN_FLAGS, dir_fd=dir_fd)
        except OSError as err:
            if err.errno == errno.ELOOP:  # a link now, since the listing
                self.other(rel, stat.S_IFLNK)
            else:
                self.problem("unreadable", rel, f"cannot open it ({err.strerror})")
            return
        try:
            st = os.fstat(fd)
            mode, size = st.st_mode, st.st_size
            if not stat.S_ISREG(mode):
                self.other(rel, mode)
                return
            if seen is not None and (st.st_dev, st.st_ino) != (seen.st_dev, seen.st_ino):
                self.problem("changed", rel, "changed while being read (it is not the file "
                             "the walk saw); try again")
                return
            walked = self.add_file(rel, st)
            if not self.reading or (self.size_limit is not None and size >= self.size_limit):
                return  # a file too large for any archive: refused by check_limits unread
            path = walked.path
            try:  # on failure, read again by hash_files, which says why
                got = read_carried(fd, st, path, self.allow.allow(path), self.sha256, self.sha256)
            except (Changed, OSError):
                return
            data: bytes | None = None
            if size <= min(KEEP_FILE, self.keep):
                data = got.head
                self.keep -= size
            shebang = shebang_line(got.head[:HEAD]) if walked.mode == "100755" else None
            if got.content.refused:
                self.refuse_content(path, got.content)
            self.hashed[path] = HashedFile(walked, got.blake3, got.content, data, shebang,
                                           got.sha256, got.crc32)
        finally:
            os.close(fd)

    def other(self, rel: str, st_mode: int) -> None:
        """A walked entry that is neither a regular file nor a folder."""
        if stat.S_ISLNK(st_mode):
            self.problem(
                "symlink", rel, "is a symbolic link; skillpack never carries or follows links. "
                f"Replace it with a copy of its target, {_LEAVE_OUT_HINT}"
            )
            return
        kind = (
            "a fifo (named pipe)" if stat.S_ISFIFO(st_mode)
            else "a socket" if stat.S_ISSOCK(st_mode)
            else "a character device" if stat.S_ISCHR(st_mode)
            else "a block device" if stat.S_ISBLK(st_mode)
            else "not a regular file or folder"
        )
        self.problem(
            "special-file", rel, f"is {kind}; a skill carries regular files only. "
            f"Remove it, {_LEAVE_OUT_HINT}"
        )

    def walk_tree(self, start: str, seen: os.stat_result | None = None) -> None:
        """Every file under folder `start` ('' for the root; `seen`, its ``lstat``), without
        recursion."""
        stack: list[tuple[str, tuple[int, int] | None]] = [
            (start, None if seen is None else (seen.st_dev, seen.st_ino))]
        while stack:
            rel, expected = stack.pop()
            try:
                # listed and stat'ed through one descriptor: each entry's lstat is then
                # relative to it, and a folder swapped for a link is not followed
                dir_fd = os.open(self._full(rel), DIR_FLAGS if rel else ROOT_FLAGS)
            except OSError as err:
                self._unlistable(rel, err)
                continue
            try:
                # opened by its path: the very folder its parent's listing saw (a folder on
                # the way swapped for a link since would lead elsewhere)
                st = os.fstat(dir_fd)
                if expected is not None and (st.st_dev, st.st_ino) != expected:
                    self.problem("changed", rel, "was replaced while the walk read it (it is "
                                 "not the folder the walk saw); try again")
                    continue
                later = self._walk_listing(rel, dir_fd, stack)
                if later:
                    self.pending.append((rel, (st.st_dev, st.st_ino), later))
                    self.pending_files += len(later)
            except OSError as err:
                self._unlistable(rel, err)
            finally:
                os.close(dir_fd)

    def _unlistable(self, rel: str, err: OSError) -> None:
        self.problem(
            "unreadable", rel or ".", f"cannot list this folder ({err.strerror}); "
            f"make it readable, {_LEAVE_OUT_HINT}"
        )

    def _walk_listing(self, rel: str, dir_fd: int,
                      stack: list[tuple[str, tuple[int, int] | None]],
                      ) -> list[tuple[str, str, os.stat_result]]:
        """The entries of the folder `rel`, open as `dir_fd`: files added (or read), folders
        stacked. With a member limit, the regular files a reading walk would open are
        returned instead, (path, name, lstat) each, to be read once the whole tree is listed
        (and the archive's limits checked)."""
        with os.scandir(dir_fd) as listing:
            entries = list(listing)
        later: list[tuple[str, str, os.stat_result]] = []
        defer = self.reading and self.member_limit is not None
        prefix = f"{rel}/" if rel else ""
        for entry in entries:
            name = entry.name
            child = prefix + name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)  # False for a symlink
                why = self.rule(child, name, is_dir)
                if why is not None:
                    self.leave_out(child + "/" if is_dir else child, why)
                elif is_dir:
                    st = entry.stat(follow_symlinks=False)  # of this folder (a few a tree)
                    stack.append((child, (st.st_dev, st.st_ino)))
                elif self.reading and entry.is_file(follow_symlinks=False):
                    if defer:
                        later.append((child, name, entry.stat(follow_symlinks=False)))
                    else:
                        self.read_file(child, name, dir_fd)
                else:
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode):
                        self.add_file(child, st)
                    else:
                        self.other(child, st.st_mode)
            except OSError as err:
                self.problem("unreadable", child, f"cannot stat it ({err.strerror})")
        return later

    # -- deferred reads (a walk with a member limit) -------------------------------------------

    def check_limits(self) -> None:
        """Refuse, before any listed file is opened, a skill whose files and manifest are more
        archive members than `member_limit`, or whose files alone make an archive of
        `size_limit` bytes or more (no file that large alone was read)."""
        members, size = self.member_limit, self.size_limit
        if size is None and (members is None or
                             len(self.files) + self.pending_files + 1 <= members):
            return
        # exact: a file listed twice (two includes) counts once
        carried = {path: walked.size for path, walked in self.files.items()}
        for _, _, later in self.pending:
            carried.update((p if p.isascii() else unicodedata.normalize("NFC", p), st.st_size)
                           for p, _, st in later)
        if members is not None and len(carried) + 1 > members:
            message = (f"the skill carries {len(carried):,} files: with its manifest, "
                       f"{len(carried) + 1:,} zip members; an archive holds at most "
                       f"{members:,} members (more would need Zip64, which skillpack does "
                       "not write)")
            hint = "split the files into several skills, or leave some out with .skillignore"
        elif size is not None and (found := oversize("the skill's files", carried.items())):
            message = found
            hint = "move large data out of the skill, or leave it out with .skillignore"
        else:
            return
        raise ArchiveError(message, path=self.root, hint=hint,
                           problems=[Problem("error", "archive-limit", message, self.root)])

    def read_pending(self) -> None:
        """Read the files listed for later, folder by folder, each folder opened again and
        checked to be the folder listed."""
        pending, self.pending = self.pending, []
        for rel, ident, later in pending:
            try:
                dir_fd = os.open(self._full(rel), DIR_FLAGS if rel else ROOT_FLAGS)
            except OSError as err:
                self._unlistable(rel, err)
                continue
            try:
                st = os.fstat(dir_fd)
                if (st.st_dev, st.st_ino) != ident:
                    self.problem("changed", rel or ".", "was replaced while the walk read "
                                 "it (it is not the folder the walk saw); try again")
                    continue
                for child, name, seen in later:
                    self.read_file(child, name, dir_fd, seen)
            finally:
                os.close(dir_fd)

    def walk_include(self, entry: str) -> None:
        """One declared include: a file, or every file under a folder."""
        if not entry:
            self.problem("include-missing", entry, "an include entry is empty; remove it")
            return
        if entry.startswith("~"):
            self.problem(
                "include-home", entry, "an include may not start with '~'; name a path "
                "inside the skill folder"
            )
            return
        if entry.startswith(("/", "\\")) or (len(entry) > 1 and entry[1] == ":"):
            self.problem(
                "include-absolute", entry, "an include must be a path relative to the skill "
                "folder, not an absolute path"
            )
            return
        if "\\" in entry:
            self.problem("unportable-name", entry, "write include paths with '/', not '\\'")
            return
        segments = entry.split("/")
        if ".." in segments:
            self.problem(
                "include-dotdot", entry, "an include may not contain a '..' segment; a skill "
                "carries only what is inside its folder"
            )
            return
        parts = [s for s in segments if s not in ("", ".")]
        rel = ""
        for index, name in enumerate(parts):
            rel = f"{rel}/{name}" if rel else name
            last = index == len(parts) - 1
            try:
                st = os.lstat(self._full(rel))
            except (FileNotFoundError, NotADirectoryError):
                self.problem(
                    "include-missing", entry, f"the declared include {entry!r} does not exist "
                    "in the skill folder; fix the path or remove it from includes"
                )
                return
            except OSError as err:
                self.problem("unreadable", rel, f"cannot stat it ({err.strerror})")
                return
            is_dir = stat.S_ISDIR(st.st_mode)
            why = self.rule(rel, name, is_dir)
            if why is not None:
                self.leave_out(rel + "/" if is_dir else rel, why)
                return
            if is_dir:
                if last:
                    self.walk_tree(rel, st)
                continue
            if last and stat.S_ISREG(st.st_mode):
                if self.reading:  # by its path: the very file lstat saw
                    self.read_file(rel, self._full(rel), None, st)
                else:
                    self.add_file(rel, st)
            elif stat.S_ISLNK(st.st_mode) or last:
                self.other(rel, st.st_mode)
            else:
                self.problem(
                    "include-missing", entry, f"{rel!r} is not a folder, so the declared "
                    f"include {entry!r} does not exist; fix the path"
                )
            return
        if not parts:
            self.walk_tree("")

    # -- whole-set checks --------------------------------------------------------------------

    def keep_skill_md(self) -> None:
        """SPEC section 1: SKILL.md is always in the file set; a rule that would leave it out
        is an error, not a way to leave it out (the digest would no longer cover it)."""
        left = self.left_out.pop(SKILL_MD, None)
        if left is not None:
            self.problem(
                "skill-md-ignored", SKILL_MD, f"{left.rule} would leave out SKILL.md, which a "
                "skill always carries; narrow that rule, or add the line '!SKILL.md' after it"
            )

    def check_names(self) -> None:
        """Check the name of every carried file and of every folder above one: portable, and
        no two siblings naming the same path after case folding or NFC normalisation."""
        rels = [f.disk_path for f in self.files.values()] + self._shadowed  # names on disk
        folders: set[str] = set()
        for rel in rels:  # every folder holding a carried file, at any depth
            parent = rel.rpartition("/")[0]
            while parent and parent not in folders:
                folders.add(parent)
                parent = parent.rpartition("/")[0]
        children: dict[str, dict[str, set[str]]] = {}  # parent -> folded name -> names
        for rel in rels + sorted(folders):
            parent, _, name = rel.rpartition("/")
            self._check_name(rel, name)
            children.setdefault(parent, {}).setdefault(collision_key(name), set()).add(name)
        for parent, folded in sorted(children.items()):
            for names in folded.values():
                if len(names) < 2:
                    continue
                a, b = sorted(names, key=sort_key)[:2]
                same_nfc = unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b)
                how = "after Unicode NFC normalisation" if same_nfc else "after case folding"
                path_a = f"{parent}/{a}" if parent else a
                path_b = f"{parent}/{b}" if parent else b
                self.problem(
                    "name-collision", path_b, f"names the same path as {display_path(path_a)!r} "
                    f"{how}; they would overwrite each other on macOS or Windows. Rename one"
                )

    def check_secrets(self) -> None:
        """The name check of every carried file, and the allowances' own check: each names a
        carried file and each ``PATH#RULE-ID`` let a finding of its rule through (checked for
        the files this walk read; `hash_files` checks the others)."""
        allow = self.allow
        for path in allow.missing(self.files):
            self.problem(
                "allow-unused", path, "skillpack-allow-secrets names a path the skill does "
                "not carry; fix the path or remove it from the allowance"
            )
        # what `unused` looks at: the files a PATH#RULE-ID entry names (most skills: none)
        used = {p: self.hashed[p].content.allowed_rules for p, rules in allow.by_path.items()
                if rules is not None and p in self.hashed}
        for entry in allow.unused(used):
            self.problem("allow-unused", entry.rpartition("#")[0], unused_rule_message(entry))
        for path in self.files:
            if allow.whole(path):
                continue
            reason = secret_name_reason(path)
            if reason is not None:
                self.problem(
                    "secret", path, f"{reason}; skillpack refuses to carry secrets. Remove it, "
                    f"{_LEAVE_OUT_HINT}; if it holds no secret, allow it in the frontmatter "
                    f"with metadata: {{skillpack-allow-secrets: \"{path}\"}}"
                )


def walk(
    root: str | os.PathLike[str],
    includes: Sequence[str] | None = None,
    *,
    allow: Sequence[str] = (),
    read: bool = False,
    keep: int = 0,
    outputs: Mapping[str, str] | None = None,
    sha256: bool = False,
    member_limit: int | None = None,
    size_limit: int | None = None,
) -> FileSet:
    """The file set of the skill folder `root` (SPEC section 1).

    `includes` is the frontmatter's declared entries (None: carry every file). `allow` lists
    the frontmatter's secret allowances (a path, or ``PATH#RULE-ID`` for one content rule).
    Raises `RefusedError` listing every problem at once.
    With `read`, each regular file found by listing a folder is opened as it is found,
    described by ``fstat`` instead of ``lstat``, hashed and checked for secrets on the spot
    (`FileSet.hashed`; files of `LARGE_FILE` or more streamed): what `digest` and `pack` do,
    saving a second look at every file; every refusal, by name or content, is then listed in
    one `RefusedError`. Up to `keep` bytes of those files (each of at most 1 MiB) are kept in
    `FileSet.hashed` for `pack` to write.
    `outputs` maps paths relative to `root` that the running command writes (pack's output
    folder, bundle's output file) to the rule reported for leaving them out: a command's
    own output is never carried into the next run's skill.
    `member_limit` (pack: the archive's member limit): a reading walk lists the whole tree
    before it opens any file, and raises `ArchiveError` right after listing when the files
    and the manifest would be more zip members than that, having read nothing. With
    `size_limit` (pack: the archive's size limit), it raises there too when the files alone
    would make an archive of that many bytes or more; a file that large by itself is never
    read, whatever the walk.
    """
    root_str = os.fspath(root)
    if not os.path.isdir(root_str):
        if not os.path.lexists(root_str):
            raise MissingPathError("no such folder", path=root_str,
                                   hint="give the path of a skill folder")
        raise SkillpackError(
            "not a folder", path=root_str, hint="give the path of a skill folder"
        )
    walker = Walker(root_str, read, keep, outputs, Allowances.parse(allow), sha256,
                    member_limit, size_limit)
    _list_and_read(walker, includes)
    return _file_set(walker)


def _list_and_read(walker: Walker, includes: Sequence[str] | None) -> None:
    """List the skill folder (the include entries, if declared), check the member limit,
    then read the files listed for later."""
    walker.load_skillignore()
    if includes is None:
        walker.walk_tree("")
    else:
        for name in (SKILLIGNORE, MANIFEST_DIR):
            full = os.path.join(walker.root, name)
            if os.path.lexists(full):
                is_dir = os.path.isdir(full) and not os.path.islink(full)
                why = walker.rule(name, name, is_dir)
                assert why is not None
                walker.leave_out(name + "/" if is_dir else name, why)
        seen: set[str] = set()
        for entry in (SKILL_MD, *includes):
            entry = entry.strip()
            if entry not in seen:
                seen.add(entry)
                walker.walk_include(entry)
    walker.check_limits()
    walker.read_pending()


def _file_set(walker: Walker) -> FileSet:
    """The walk's file set, or `RefusedError` listing every problem."""
    walker.keep_skill_md()
    walker.check_names()
    walker.check_secrets()
    allowed = walker.allow.entries(walker.files)
    if walker.problems:
        problems = sorted(walker.problems.values(),
                          key=lambda p: (sort_key(p.file or ""), p.code, p.line or 0))
        count = len(problems)
        raise RefusedError(
            f"the file set was refused: {count} problem{'s' if count > 1 else ''}",
            path=walker.root,
            hint="fix every listed path, then try again",
            problems=problems,
        )
    files = tuple(walker.files[p] for p in sorted(walker.files, key=sort_key))
    left_out = tuple(sorted(walker.left_out.values(), key=lambda x: sort_key(x.path)))
    return FileSet(root=walker.root, files=files, left_out=left_out, allowed=allowed,
                   hashed=walker.hashed)

