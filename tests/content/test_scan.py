"""The secret rules wired into the walk, the file records and verify (skillpack.content.scan):
every refusal of a skill listed at once, allowances by path and by rule, compressed assets
inflated with the bomb caps, large files streamed.

Fake secrets are built by concatenation from a seeded generator (tests/helpers/secrets.py), so
the repository holds none.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from helpers.secrets import BEGIN, aws_key_id, checksummed, deflated_zip, pem, pem_label, tar_gz
from helpers.skills import make_tree
from helpers.zips import build, change, members_of, reseal

from skillpack.content.scan import Allowances, ContentStream, expand, scan_content
from skillpack.errors import ArchiveError, IntegrityError, RefusedError
from skillpack.packing.pack import pack
from skillpack.packing.verify import verify_bytes
from skillpack.runtime import load
from skillpack.source.readfile import LARGE_FILE
from skillpack.source.records import digest_skill, hash_files, included_files
from skillpack.source.walk import walk


def github_token() -> str:
    return checksummed("gh" + "p_")


def pem_key() -> bytes:
    return pem("RSA ", lines=4).encode()


def skill(folder: Path, files: dict[str, bytes | str], allow: str = "") -> Path:
    folder.mkdir(parents=True)
    meta = f'metadata:\n  skillpack-allow-secrets: "{allow}"\n' if allow else ""
    (folder / "SKILL.md").write_text(
        f"---\nname: {folder.name}\ndescription: Deploys things. Use when asked to deploy.\n"
        f"{meta}---\n# Deploy\n\nRun the scripts.\n")
    return make_tree(folder, files)


def refused(call: object, *args: object) -> list[tuple[str, str | None, str]]:
    with pytest.raises(RefusedError) as info:
        call(*args)  # type: ignore[operator]
    return [(p.code, p.file, p.message) for p in info.value.problems]


# -- the walk lists every refusal at once --------------------------------------------------------

def test_names_and_contents_are_refused_together_by_pack(tmp_path: Path) -> None:
    folder = skill(tmp_path / "demo", {
        "scripts/deploy.sh": f"#!/bin/sh\nexport AWS_ACCESS_KEY_ID={aws_key_id()}\n",
        "config/settings.yaml": f"github:\n  token: {github_token()}\n",
        "." + "env": "X=1\n",
        "notes.md": "Nothing to hide; our task-brief and desk-notes are here.\n",
    })
    problems = refused(pack, folder, tmp_path / "out")
    assert [(code, file) for code, file, _ in problems] == [
        ("secret", "." + "env"), ("secret", "config/settings.yaml"),
        ("secret", "scripts/deploy.sh")]
    deploy = problems[2][2]
    assert "[aws-access-key-id] at line 2, column 26" in deploy
    assert "AKIA…[16 characters withheld]" in deploy
    assert 'skillpack-allow-secrets: "scripts/deploy.sh#aws-access-key-id"' in deploy
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_a_non_reading_walk_leaves_contents_to_the_records(tmp_path: Path) -> None:
    folder = skill(tmp_path / "demo", {"notes.txt": f"token {github_token()}\n"})
    assert "notes.txt" in walk(folder).paths  # names only
    [(code, file, message)] = refused(included_files, folder)
    assert (code, file) == ("secret", "notes.txt") and "[github-token]" in message


def test_two_secrets_in_one_file_are_both_listed(tmp_path: Path) -> None:
    folder = skill(tmp_path / "demo", {"a.txt": f"{aws_key_id()}\n{github_token()}\n"})
    problems = refused(lambda: walk(folder, read=True))
    assert [(c, f) for c, f, _ in problems] == [("secret", "a.txt"), ("secret", "a.txt")]
    assert {m.split("[")[1].split("]")[0] for _, _, m in problems} == {
        "aws-access-key-id", "github-token"}


def test_a_large_file_is_scanned_streamed_by_the_walk(tmp_path: Path) -> None:
    big = b"x" * (LARGE_FILE + 5000) + f"\nkey {aws_key_id()}\n".encode()
    folder = skill(tmp_path / "demo", {"data/big.txt": big})
    [(code, file, message)] = refused(lambda: walk(folder, read=True))
    assert (code, file) == ("secret", "data/big.txt")
    assert "at line 2, column 5" in message


# -- allowances -----------------------------------------------------------------------------------

def test_a_rule_allowance_lets_one_rule_through_and_is_recorded(tmp_path: Path) -> None:
    key_id = aws_key_id()
    folder = skill(tmp_path / "demo", {"docs/aws.md": f"Use {key_id} (rotated).\n"},
                   allow="docs/aws.md#aws-access-key-id")
    [archive] = pack(folder, tmp_path / "out")
    loaded = load(archive.read_bytes())["demo"]
    assert loaded.manifest.allowances == ("docs/aws.md#aws-access-key-id",)
    assert verify_bytes(archive.read_bytes()).skills[0].name == "demo"
    hashed = hash_files(walk(folder, allow=("docs/aws.md#aws-access-key-id",)))
    assert [f.rule for f in hashed.allowed["docs/aws.md"]] == ["aws-access-key-id"]
    assert digest_skill(folder)[1] == loaded.digest


def test_a_rule_allowance_does_not_cover_another_rule(tmp_path: Path) -> None:
    folder = skill(tmp_path / "demo", {"docs/aws.md": f"{aws_key_id()} {github_token()}\n"},
                   allow="docs/aws.md#aws-access-key-id")
    [(code, file, message)] = refused(pack, folder, tmp_path / "out")
    assert (code, file) == ("secret", "docs/aws.md") and "[github-token]" in message


def test_an_unused_rule_allowance_is_refused(tmp_path: Path) -> None:
    folder = skill(tmp_path / "demo", {"docs/aws.md": "no key here\n"},
                   allow="docs/aws.md#aws-access-key-id gone.md#github-token")
    for call in (lambda: walk(folder, allow=("docs/aws.md#aws-access-key-id",
                                              "gone.md#github-token"), read=True),
                 lambda: included_files(folder)):
        problems = refused(call)
        assert [(c, f) for c, f, _ in problems] == [("allow-unused", "docs/aws.md"),
                                                     ("allow-unused", "gone.md")]
        assert "rule 'aws-access-key-id' finds nothing" in problems[0][2]


def test_a_bare_path_allows_names_and_every_rule(tmp_path: Path) -> None:
    folder = skill(tmp_path / "demo", {"certs/test.pem": pem_key()}, allow="certs/test.pem")
    [archive] = pack(folder, tmp_path / "out")
    assert load(archive.read_bytes())["demo"].manifest.allowances == ("certs/test.pem",)
    verify_bytes(archive.read_bytes())


def test_allowances_parse_normalise_and_record() -> None:
    allow = Allowances.parse(["./a.txt", " b.md#github-token ", "b.md#aws-access-key-id",
                              "c#d", "a.txt#github-token"])
    assert allow.allow("a.txt") is None and allow.whole("c#d")
    assert allow.allow("b.md") == frozenset({"github-token", "aws-access-key-id"})
    assert allow.allow("other") == frozenset()
    assert allow.entries({"a.txt", "b.md"}) == (
        "a.txt", "b.md#aws-access-key-id", "b.md#github-token")
    assert allow.missing({"a.txt", "b.md"}) == ["c#d"]


# -- compressed assets -----------------------------------------------------------------------------

@pytest.mark.parametrize("name, data, member", [
    ("assets/key.gz", gzip.compress(pem_key(), mtime=0), "key"),
    ("assets/bundle.tar.gz", tar_gz({"keys/deploy.pem": pem_key()}), "keys/deploy.pem"),
    ("assets/lambda.zip", deflated_zip({"handler.py": f"K = '{aws_key_id()}'\n".encode()}),
     "handler.py"),
    ("assets/outer.zip", deflated_zip({"inner.zip": deflated_zip({"id.txt": pem_key()})}),
     "inner.zip!id.txt"),
])
def test_a_secret_inside_a_compressed_asset_is_refused(tmp_path: Path, name: str, data: bytes,
                                                       member: str) -> None:
    folder = skill(tmp_path / "demo", {name: data})
    [(code, file, message)] = refused(pack, folder, tmp_path / "out")
    assert (code, file) == ("secret", name)
    assert f"member {member!r}, line" in message


def test_a_bomb_asset_is_refused_with_the_caps_of_unpack(tmp_path: Path) -> None:
    bomb = gzip.compress(b"\0" * (64 << 20), mtime=0)  # ratio far past 200
    folder = skill(tmp_path / "demo", {"assets/zeros.gz": bomb})
    [(code, file, message)] = refused(pack, folder, tmp_path / "out")
    assert (code, file) == ("archive-ratio", "assets/zeros.gz")
    assert "cannot be scanned for secrets" in message
    assert 'skillpack-allow-secrets: "assets/zeros.gz"' in message
    folder2 = skill(tmp_path / "allowed", {"assets/zeros.gz": bomb}, allow="assets/zeros.gz")
    assert pack(folder2, tmp_path / "out2")


def test_a_file_named_like_an_archive_but_not_one_is_scanned_as_bytes() -> None:
    assert list(expand("assets/model.tar.gz", b"version https://git-lfs.github.com/spec\n")) == []
    assert scan_content("x.zip", b"PK\x03\x04garbage", frozenset()).refused
    with pytest.raises(ArchiveError):
        list(expand("x.zip", b"PK\x03\x04garbage"))


# -- verify ---------------------------------------------------------------------------------------

def test_verify_refuses_a_token_written_into_a_resealed_archive(tmp_path: Path) -> None:
    folder = skill(tmp_path / "demo", {"docs/aws.md": "fine\n"})
    [archive] = pack(folder, tmp_path / "out")
    members = members_of(archive.read_bytes())
    forged = build(reseal(change(members, "demo/docs/aws.md",
                                 data=f"key {aws_key_id()}\n".encode())))
    with pytest.raises(IntegrityError) as info:
        verify_bytes(forged)
    [problem] = info.value.problems
    assert (problem.code, problem.file) == ("secret", "demo/docs/aws.md")
    assert "[aws-access-key-id]" in problem.message


# -- a PEM header that documentation follows with a placeholder (issue 15, measured) -----------

PEM_HEADER = f"{BEGIN}{pem_label('RSA')}-----"
#: As in secondsky/claude-skills' better-auth references/plugins/sso.md.
PLACEHOLDERS = [
    f'privateKey: "{PEM_HEADER}\\n...",\n',
    f"{PEM_HEADER}\n...\n",
    f"{PEM_HEADER}\n\u2026\n",
    f"key = '{PEM_HEADER}\\r\\n<your key here>'\n",
    f"{PEM_HEADER}\n${{PRIVATE_KEY}}\n",
    f'"{PEM_HEADER}\\nMIIE.."',  # an example cut short (issue 28)
]
#: Header followed by material too short for the `private-key` rule: still refused.
NOT_PLACEHOLDERS = [
    f"{PEM_HEADER}\nTUlJRXZnSUJBREFOQmdr\n",
    f"{PEM_HEADER}",
    f"{PEM_HEADER}\n\n",
]


@pytest.mark.parametrize("text", PLACEHOLDERS)
def test_a_pem_header_followed_by_a_placeholder_is_documentation(tmp_path: Path,
                                                                  text: str) -> None:
    folder = skill(tmp_path / "demo", {"references/sso.md": "```ts\n" + text + "```\n"})
    walk(folder, read=True)  # raises RefusedError on a secret
    assert sorted(included_files(folder)) == ["SKILL.md", "references/sso.md"]
    assert not scan_content("sso.md", text.encode(), frozenset()).refused


@pytest.mark.parametrize("text", NOT_PLACEHOLDERS)
def test_a_pem_header_with_anything_else_after_it_is_still_refused(tmp_path: Path,
                                                                   text: str) -> None:
    folder = skill(tmp_path / "demo", {"notes.md": "x\n" + text})
    [(code, file, message)] = refused(lambda: walk(folder, read=True))
    assert (code, file) == ("secret", "notes.md")
    assert "PEM private key block" in message


@pytest.mark.parametrize("text", [PLACEHOLDERS[0], NOT_PLACEHOLDERS[0], NOT_PLACEHOLDERS[1]])
def test_a_streamed_pem_header_is_judged_as_a_whole_file_is_at_every_seam(text: str) -> None:
    """A large file read in chunks gives the verdict of the whole bytes wherever the chunk
    boundary falls: in the header, in what follows it, or just after."""
    data = b"y" * 9000 + text.encode() + (b"z" * 100 if text != NOT_PLACEHOLDERS[1] else b"")
    whole = scan_content("notes.md", data, frozenset()).refused
    assert whole is (text != PLACEHOLDERS[0])
    start = 9000
    for cut in range(start - 3, start + len(text) + 50):
        stream = ContentStream("notes.md", frozenset())
        stream.feed(data[:cut])
        stream.feed(data[cut:])
        assert stream.finish().refused is whole, cut
    for size in (7, 64, 1000):
        stream = ContentStream("notes.md", frozenset())
        for offset in range(0, len(data), size):
            stream.feed(data[offset:offset + size])
        assert stream.finish().refused is whole, size
