"""Skill folders and trees written at test time (what a fresh clone tests with, in place of
the corpus)."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path


def make_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create ``files`` (relative path -> text or bytes) under ``root``; return ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def write_skill(folder: Path, text: str | bytes, files: dict[str, str] | None = None) -> Path:
    """Create ``folder`` holding a SKILL.md with ``text`` (and ``files``); return the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "SKILL.md"
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text, encoding="utf-8", newline="")
    for rel, content in (files or {}).items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return folder


MINIMAL = "---\nname: {name}\ndescription: A small skill built at test time.\n---\n\nBody.\n"


def make_skill(folder: Path, files: dict[str, bytes | str] | None = None,
               executables: tuple[str, ...] = ()) -> Path:
    """A valid skill named after ``folder``, holding ``files``; ``executables`` get mode 0755."""
    write_skill(folder, MINIMAL.format(name=folder.name))
    for rel, content in (files or {}).items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        path.chmod(0o755 if rel in executables else 0o644)
    return folder


def copy_skill(src: Path, dest: Path) -> Path:
    """A writable copy of ``src`` at ``dest`` (the corpus is read-only), modes' x bits kept."""
    shutil.copytree(src, dest)
    for path in [dest, *dest.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return dest


def rich_skill(folder: Path, flavour: str = "") -> Path:
    """A valid skill named after ``folder``, deep and wide: three executable scripts (one two
    folders down), references, a ``.gitignore``, a binary asset and a file whose name needs
    UTF-8; ``flavour`` varies the bytes, so two rich skills of one name differ."""
    name = folder.name
    write_skill(folder, f"---\nname: {name}\ndescription: A rich {flavour}skill written at test "
                f"time, deep and wide.\n---\n\nRun `scripts/run.py`; see references/.\n", {
                    "scripts/run.py": f"#!/usr/bin/env python3\nprint('{flavour}run')\n",
                    "scripts/tools/deep/fix.sh": f"#!/bin/sh\necho '{flavour}fix'\n",
                    "scripts/build.py": f"#!/usr/bin/env python3\nprint('{flavour}build')\n",
                    "scripts/helper.py": "def helper() -> int:\n    return 1\n",
                    "references/guide.md": f"# Guide {flavour}\n\n" + "Some prose. " * 200,
                    "references/nested/a/b/c.md": "deep\n",
                    "references/caf\u00e9.md": "accent\n",
                    ".gitignore": "*.tmp\n",
                })
    (folder / "assets").mkdir()
    (folder / "assets" / "logo.bin").write_bytes(bytes(range(256)) * 8)
    for rel in ("scripts/run.py", "scripts/tools/deep/fix.sh", "scripts/build.py"):
        (folder / rel).chmod(0o755)
    return folder


#: How many files of a `rich_skill` carry the execute bit.
RICH_EXECUTABLES = 3


def tree(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``folder``: relative path -> (bytes, permission bits)."""
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
            for p in sorted(folder.rglob("*")) if p.is_file()}


def repository(root: Path, skills: int, size: int) -> Path:
    """A folder of `skills` valid skills, each a SKILL.md of about `size` bytes (prose, with
    one shell block) and a reference file of `size` bytes: two repositories made with the same
    `skills` and different `size` differ in their bytes only, not in their files."""
    line = "Read the report, check each row and write the summary for the team.\n"
    prose = line * max(1, size // len(line))
    for i in range(skills):
        name = f"skill-{i:04d}"
        write_skill(root / name, f"---\nname: {name}\ndescription: Checks report number {i}. "
                    "Use when a report needs checking.\n---\n\n# Report\n\n```bash\npython3 "
                    f"scripts/check.py --row {i}\n```\n\n{prose}",
                    {"references/notes.md": prose, "scripts/check.py": "print('ok')\n"})
    return root
