"""A lock entry's recorded fields beyond its digest and files (programs, tools, description,
allowed-tools, mentions, archive) are each what `skillpack lock` records for the skill: one
verdict for `verify --lock` (a folder, its archive, a bundle), `install --lock`, `review
--lock` (tests/runtime/test_expect_lock_fields.py: `runtime.load(expect=<lock bytes>)`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.approval import DEMO, EDITS, demo_approved, edited, write_keys
from helpers.cli import cli
from helpers.skills import write_skill

from skillpack.approve.compare import verify_against
from skillpack.approve.lock import read_lock
from skillpack.packing.prepare import prepare_skill
from skillpack.packing.sha256 import prepared_sha256


@pytest.fixture
def demo(tmp_path: Path) -> dict[str, Path]:
    return demo_approved(tmp_path)


@pytest.mark.parametrize("case", sorted(EDITS))
def test_verify_lock_refuses_an_entry_edited_in_any_field(
        demo: dict[str, Path], tmp_path: Path, case: str) -> None:
    field, edit = EDITS[case]
    lock = edited(demo["lock"], edit, tmp_path / "edited.lock")
    result = cli("verify", "--json", "--lock", lock, demo["skills"], demo["archive"],
                 demo["bundle"])
    assert result.exit_code == 1, result.output
    items = json.loads(result.stdout)
    assert len(items) == 3
    for item in items:
        assert item["ok"] is False and item["code"] == "lock-entry", item
        assert f"differs in {field} " in item["reason"]
        assert item["reason"].endswith("the lock was edited; lock it again")
    text = cli("verify", "--lock", lock, demo["skills"]).stdout
    assert "MISMATCH" in text and f"differs in {field} " in text


def test_the_lock_as_written_verifies_for_folder_archive_and_bundle(
        demo: dict[str, Path]) -> None:
    result = cli("verify", "--lock", demo["lock"], demo["skills"], demo["archive"],
                 demo["bundle"])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("ok ") == 3


def test_programs_keep_their_code_and_several_fields_are_named(
        demo: dict[str, Path], tmp_path: Path) -> None:
    lock = edited(demo["lock"], lambda e: e.update(programs=[]), tmp_path / "p.lock")
    [item] = json.loads(cli("verify", "--json", "--lock", lock, demo["skills"]).stdout)
    assert item["code"] == "lock-programs" and "programs it runs differ" in item["reason"]
    both = edited(demo["lock"], lambda e: e.update(programs=[], description="x"),
                  tmp_path / "both.lock")
    [item] = json.loads(cli("verify", "--json", "--lock", both, demo["skills"]).stdout)
    assert item["code"] == "lock-programs"
    assert "differs in programs, description " in item["reason"]


def test_an_archive_of_the_root_layout_is_no_false_alarm(demo: dict[str, Path],
                                                        tmp_path: Path) -> None:
    """A lock made from a root-layout archive (with its manifest) records that archive's
    SHA-256: the skill's folder, archive and bundle still verify against it."""
    root = prepared_sha256(prepare_skill(demo["skills"] / "demo"), root=True)
    lock = edited(demo["lock"], lambda e: e.update(archive=root), tmp_path / "root.lock")
    result = cli("verify", "--lock", lock, demo["skills"], demo["archive"], demo["bundle"])
    assert result.exit_code == 0, result.output
    answer = verify_against([demo["skills"]], lock=read_lock(lock))
    assert [v.ok for v in answer] == [True]


def test_install_lock_refuses_an_edited_entry(demo: dict[str, Path], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    lock = edited(demo["lock"], EDITS["tools"][1], tmp_path / "t.lock")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    result = cli("install", demo["skills"], "--agent", "claude-code", "--lock", lock)
    assert result.exit_code == 1
    assert "lock-entry" in result.output or "differs in tools" in result.output
    assert not (project / ".claude").exists()


def test_review_shows_the_verdict_of_verify(demo: dict[str, Path], tmp_path: Path) -> None:
    lock = edited(demo["lock"], EDITS["archive"][1], tmp_path / "a.lock")
    page = cli("review", "--lock", lock, demo["skills"], "-o", "-", "--format", "md").stdout
    assert "1 refused" in page and "0 unchanged" in page
    assert "lock\\-entry" in page and "differs in archive" in page
    assert "archive before: sha256\\:" + "0" * 64 in page
    assert "Same digest as approved." not in page
    plain = cli("review", "--lock", demo["lock"], demo["skills"], "-o", "-", "--format",
                "md").stdout
    assert "1 unchanged" in plain and "0 refused" in plain


def test_review_shows_both_skills_of_one_name(demo: dict[str, Path], tmp_path: Path) -> None:
    evil = write_skill(tmp_path / "evil" / "demo", DEMO.replace("echo hello $who",
                                                                "sh -c $who"))
    for order in ((demo["skills"], evil.parent), (evil.parent, demo["skills"])):
        page = cli("review", "--lock", demo["lock"], *order, "-o", "-", "--format",
                   "md").stdout
        assert page.count("### demo:") == 2, page
        assert "2 refused" in page and page.count("duplicate\\-name") >= 2


def test_review_shows_compiled_python_beside_the_code(demo: dict[str, Path]) -> None:
    cache = demo["skills"] / "demo" / "__pycache__"
    cache.mkdir()
    (cache / "run.cpython-311.pyc").write_bytes(b"x")
    assert cli("verify", "--lock", demo["lock"], demo["skills"]).exit_code == 1
    page = cli("review", "--lock", demo["lock"], demo["skills"], "-o", "-", "--format",
               "md").stdout
    assert "1 refused" in page and "runs\\-in\\-place" in page


def test_sign_with_the_skills_at_hand_refuses_a_lock_they_do_not_match(
        demo: dict[str, Path], tmp_path: Path) -> None:
    """`sign LOCK` copied the lock's `archive` SHA-256 into the statement's subject, which
    cosign and `gh attestation verify` match an archive by: an edited one made the signed
    statement approve an evil archive. Given the skills (`sign LOCK PATH...`), the lock is
    verified against them first, every field, and refused with nothing written; the lock
    as `lock` wrote it is signed; an approved skill none of the PATHs holds refuses it."""
    key = write_keys(tmp_path)["pem"]
    lock = edited(demo["lock"], EDITS["archive"][1], tmp_path / "pr.lock")
    for given in (demo["skills"], demo["archive"], demo["bundle"]):
        result = cli("sign", lock, given, "--key", key)
        assert result.exit_code == 1, result.output
        assert "the lock does not approve the skills at" in result.stderr
        assert "[lock-entry] skill 'demo': its lock entry differs in archive" in result.stderr
        assert not (tmp_path / "pr.lock.intoto.json").exists()
    signed = cli("sign", demo["lock"], demo["skills"], "--key", key)
    assert signed.exit_code == 0, signed.output
    assert (tmp_path / "s.lock.intoto.json").is_file()
    write_skill(tmp_path / "other" / "other",
                DEMO.replace("name: demo", "name: other"))
    both = tmp_path / "both.lock"
    assert cli("lock", demo["skills"], tmp_path / "other", "-o", both).exit_code == 0
    missing = cli("sign", both, demo["skills"], "--key", key)
    assert missing.exit_code == 1 and "[expect-missing]" in missing.stderr, missing.output
    assert not (tmp_path / "both.lock.intoto.json").exists()
