"""Builders of the install tests: skills, the command line, trees, keys."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner, Result

from skillpack.cli.app import main


def make_skill(root: Path, name: str, body: str = "Do the thing.\n",
               files: dict[str, str] | None = None,
               scripts: dict[str, str] | None = None) -> Path:
    """``root/name``: a valid skill, its `files` 0644 and its `scripts` 0755."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {name} does one thing when asked.\n---\n\n# {name}\n\n"
        + body, encoding="utf-8")
    for rel, text in {**(files or {}), **(scripts or {})}.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755 if rel in (scripts or {}) else 0o644)
    return folder


def cli(*args: object) -> Result:
    """`skillpack ARGS` (stdout and stderr apart)."""
    return CliRunner().invoke(main, [str(a) for a in args])


def tree(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under `folder`: relative path -> (permission bits, bytes)."""
    out = {}
    for here, _, names in os.walk(folder):
        for name in names:
            path = Path(here, name)
            out[path.relative_to(folder).as_posix()] = (path.stat().st_mode & 0o777,
                                                        path.read_bytes())
    return out


def leftovers(folder: Path) -> list[str]:
    """Names in `folder` that are install's temp or old folders."""
    return sorted(n for n in os.listdir(folder) if ".skillpack-" in n and n.startswith(".")
                  and n != ".skillpack-installed.json")


def write_keys(folder: Path) -> tuple[Path, Path]:
    """An Ed25519 key pair in OpenSSH form: (private, public)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
        PublicFormat,
    )

    folder.mkdir(parents=True, exist_ok=True)
    key = Ed25519PrivateKey.generate()
    private, public = folder / "id_ed25519", folder / "id_ed25519.pub"
    private.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.OpenSSH, NoEncryption()))
    public.write_bytes(key.public_key().public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH)
                       + b" tester\n")
    return private, public
