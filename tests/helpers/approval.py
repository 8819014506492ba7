"""Approvals for the lock, signing and review tests: a lock of skill folders, Ed25519 keys in
every format skillpack reads, and the waitlist approved then changed (a script, an image
with an onerror, markup in its text) with the page parser that looks for what got through."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

from helpers.cli import cli, only_archive
from helpers.paths import NOTES, WAITLIST
from helpers.skills import write_skill
from skillpack.approve.approval import lock_entries
from skillpack.approve.lock import Lock, LockEntry, make_lock
from skillpack.approve.review import SkillChange, SkillView, compare
from skillpack.packing.verify import verify_folder
from skillpack.source.load import parse_skill_file

Keys = dict[str, Path]


def lock_of(*folders: Path) -> Lock:
    """The format 1.1 lock of skill folders, as `skillpack lock` writes it."""
    return make_lock(lock_entries(folders).entries)


def write_keys(folder: Path, name: str = "alice") -> Keys:
    """An Ed25519 key pair in every format skillpack reads."""
    key = Ed25519PrivateKey.generate()
    public = key.public_key()
    paths = {
        "pem": folder / f"{name}.pem",
        "openssh": folder / f"{name}_ed25519",
        "pub_pem": folder / f"{name}.pub.pem",
        "pub_ssh": folder / f"{name}_ed25519.pub",
    }
    paths["pem"].write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8,
                                               NoEncryption()))
    paths["openssh"].write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.OpenSSH,
                                                   NoEncryption()))
    paths["pub_pem"].write_bytes(public.public_bytes(Encoding.PEM,
                                                     PublicFormat.SubjectPublicKeyInfo))
    paths["pub_ssh"].write_bytes(public.public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH)
                                 + f" {name}@example\n".encode())
    return paths


SCRIPT = "<script>document.title='pwned'</script>"
IMG = "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">"
MARKUP = "`tick` *star* _under_ [link](https://evil.example/x) @someone #12 | pipe ~~s~~"
HOSTILE = SCRIPT + IMG + MARKUP
#: A file name with what HTML escapes and a walk still carries (a name with `<`, `>` or `"`
#: is refused: Windows forbids them).
ADDED = "&quot;' onmouseover='x'.md"
NEW_COUNT = ["awk", "-F,", "-v", "want=$status", SCRIPT, "data/waitlist.csv"]


def view_of(folder: Path, findings: tuple[str, ...] = ()) -> SkillView:
    """A skill folder as `skillpack review` is to see it."""
    [s] = verify_folder(folder).skills
    entry = LockEntry.for_skill(parse_skill_file(folder / "SKILL.md"), s.digest, s.files,
                                s.programs)
    return SkillView.from_lock_entry(s.name, entry, findings)


def changed_waitlist(tmp_path: Path) -> tuple[Lock, Path]:
    """The waitlist approved, then changed on disk: another description, a run template
    with a script in it, a new tool running curl, a file added and one removed."""
    folder = tmp_path / "waitlist"
    shutil.copytree(WAITLIST, folder)
    lock = lock_of(folder, NOTES)
    skill_md = folder / "SKILL.md"
    lines = skill_md.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("description: "))
    lines[at] = (f"description: {json.dumps(HOSTILE + ' Manage a waitlist.')}\n"
                 "allowed-tools: Bash(curl:*)\n")
    text = "".join(lines).replace("  - $$3 == want { n++ } END { print n+0 }\n",
                                  f"  - {SCRIPT}\n")  # tool-fence items are verbatim
    text += ("\n```tool\nid: fetch\ndescription: Fetch it.\nrun:\n  - curl\n"
             f"  - {IMG}\n```\n")
    skill_md.write_text(text.replace("includes: scripts/waitlist.py, data/waitlist.csv\n", ""))
    (folder / ADDED).write_text("hi\n")
    (folder / "scripts" / "waitlist.py").write_text("print('changed')\n")
    return lock, folder


def review_of(tmp_path: Path) -> tuple[SkillChange, ...]:
    lock, folder = changed_waitlist(tmp_path)
    approved = {n: SkillView.from_lock_entry(n, e) for n, e in lock.skills.items()}
    gone = SkillView("gone-skill", "blake3:" + "0" * 64, "It was here.", {"SKILL.md": "1" * 64})
    approved["gone-skill"] = gone
    current = [view_of(folder, (f"SKILL.md:3: warning: [claude-angle-brackets] {HOSTILE}",)),
               view_of(NOTES),
               SkillView(HOSTILE, "blake3:" + "2" * 64, HOSTILE, {HOSTILE: "3" * 64},
                         ("sh",), {"run": ("sh", "-c", HOSTILE)}, (HOSTILE,))]
    return compare(approved, current)


class Tags(HTMLParser):
    """Every element and attribute of a page, and its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(page: str) -> Tags:
    tags = Tags()
    tags.feed(page)
    tags.close()
    return tags


# -- a lock entry edited by hand --------------------------------------------------------------

DEMO = """---
name: demo
description: Demo skill. Use when testing.
allowed-tools: Read Bash(git log:*)
---
# Demo

Run `git status` first:

```sh
git status
```

```tool
id: greet
description: Greets.
params:
  who:
    type: string
run: echo hello $who
```
"""

Edit = Callable[[dict[str, Any]], None]
EDITS: dict[str, tuple[str, Edit]] = {
    "tools": ("tools", lambda e: e.update(tools=[{"id": "greet", "run": ["true"]}])),
    "no tools": ("tools", lambda e: e.update(tools=[])),
    "description": ("description", lambda e: e.update(description="Harmless.")),
    "allowed-tools": ("allowed-tools", lambda e: e.update({"allowed-tools": ["Read"]})),
    "no allowed-tools": ("allowed-tools", lambda e: e.pop("allowed-tools")),
    "mentions": ("mentions", lambda e: e.update(mentions=[])),
    "archive": ("archive", lambda e: e.update(archive="sha256:" + "0" * 64)),
}


def demo_approved(tmp_path: Path) -> dict[str, Path]:
    """The DEMO skill (in ``skills``), its lock, its archive and a bundle of it."""
    skills = tmp_path / "skills"
    write_skill(skills / "demo", DEMO, {"scripts/run.sh": "#!/bin/sh\necho hi\n"})
    (skills / "demo" / "scripts" / "run.sh").chmod(0o755)
    lock = tmp_path / "s.lock"
    assert cli("lock", skills, "-o", lock).exit_code == 0
    assert cli("pack", skills, "-o", tmp_path / "dist").exit_code == 0
    assert cli("bundle", skills, "-o", tmp_path / "s.bundle").exit_code == 0
    return {"skills": skills, "lock": lock, "archive": only_archive(tmp_path / "dist"),
            "bundle": tmp_path / "s.bundle"}


def edited(lock: Path, edit: Edit, dest: Path) -> Path:
    """`lock` with demo's entry edited, written as `lock` writes it."""
    data = json.loads(lock.read_text(encoding="utf-8"))
    edit(data["skills"]["demo"])
    dest.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    return dest
