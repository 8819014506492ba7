"""Archive assets nested in one another (issue 28): the secret scan of a carried file gives
every archive inside it, at any depth, the same budget, so nesting cannot multiply the caps.

The bound is shown by sizes: as the nested content grows 64-fold, the bytes inflated before
the refusal stay under the ratio cap times the carried file's size (before, each nested
archive had a fresh budget: the same 19 KB asset was inflated and scanned to 154 MB).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from helpers.hostile import TALLY, demo_skill, run_cli
from helpers.secrets import aws_key_id, tar_gz

from skillpack.content.inflate import DEFAULT_CAPS
from skillpack.content.scan import scan_content
from skillpack.errors import RefusedError
from skillpack.packing.pack import pack


def inner_archive() -> bytes:
    """A 14 KB tar.gz inflating to 2.4 MB: under the ratio cap (200) on its own, and small
    enough (under deflate's 32 KiB window) for copies of it to cost the outer gzip little."""
    rnd = random.Random(28)
    filler = b"".join(bytes([rnd.randrange(256)]) + bytes(600) for _ in range(4000))
    data = tar_gz({"notes.txt": filler})
    assert len(filler) < DEFAULT_CAPS.ratio * len(data) < 32 * 1024 * DEFAULT_CAPS.ratio
    return data


def test_nested_archives_share_one_budget() -> None:
    inner = inner_archive()
    seen = []
    for copies in (4, 64, 256):
        outer = tar_gz({f"copy{i:03d}.tar.gz": inner for i in range(copies)})
        found = scan_content("assets/a.tar.gz", outer, frozenset())
        with TALLY.refused("secret", f"nested archives x{copies}", "scan_content", RefusedError,
                           "decompression bomb"):
            if found.refused:
                raise RefusedError(found.unscannable[0].message, path="assets/a.tar.gz")
        produced = int(re.findall(r"stopped after (\d+) bytes",
                                  found.unscannable[0].message)[0])
        seen.append((copies, len(outer), produced, copies * 2_404_000))
        assert produced <= DEFAULT_CAPS.ratio * len(outer) + 1, seen
    # what the nested archives hold grows 64-fold; what is inflated stays under 200 x size
    assert seen[-1][3] > 50 * seen[-1][2], seen


def test_a_secret_in_a_nested_archive_within_the_budget_is_still_found(tmp_path: Path
                                                                        ) -> None:
    token = aws_key_id()
    inner = tar_gz({"config/env.txt": f"aws_access_key_id = {token}\n".encode()})
    outer = tar_gz({"inner.tar.gz": inner, "readme.txt": b"hello\n"})
    found = scan_content("assets/a.tar.gz", outer, frozenset())
    assert [(f.rule, f.member) for f in found.findings] == [
        ("aws-access-key-id", "inner.tar.gz!config/env.txt")]
    skill = demo_skill(tmp_path / "demo", {"assets/a.tar.gz": outer})
    with TALLY.refused("secret", "a token two archives deep", "pack", RefusedError,
                       "inner.tar.gz!config/env.txt"):
        pack(skill, tmp_path / "out")


def test_the_command_refuses_a_nested_bomb(tmp_path: Path) -> None:
    outer = tar_gz({f"copy{i:03d}.tar.gz": inner_archive() for i in range(64)})
    skill = demo_skill(tmp_path / "demo", {"assets/a.tar.gz": outer})
    for command in ("check", "digest"):
        result = run_cli(command, str(skill))
        assert result.exit_code == 1, result.output
        assert "assets/a.tar.gz" in result.output and "decompression bomb" in result.output
