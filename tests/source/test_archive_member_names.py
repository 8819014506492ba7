"""An error about a file inside an archive names it ``ARCHIVE!MEMBER``, the member's name as
the archive holds it, never the temporary folder the archive was unpacked to."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from skillpack.cli import main

SKILL_MD = "---\nname: envdemo\ndescription: The envdemo skill. Use when testing.\n---\nHi.\n"
ENV = "AWS_SECRET_ACCESS_KEY=" + "wJalrXUtnFEMI/K7MDENG" + "/bPxRfiCYEXAMPLEKEY\n"


def _zip(path: Path, members: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return path


def _tgz(path: Path, members: dict[str, str]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def _run(*args: object) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert "Traceback" not in result.output
    return result


@pytest.mark.parametrize("command", [
    ["check"], ["lint"], ["digest"], ["inspect"], ["verify"], ["pack", "-o", "{out}"],
    ["bundle", "-o", "{out}/b.skillbundle"], ["export", "mcp", "-o", "{out}/mcp"]])
@pytest.mark.parametrize(("archive", "member"), [
    ("envdemo.skill", "envdemo/.env"),  # Anthropic's layout: one top folder
    ("root.zip", ".env"),  # SKILL.md at the archive's root
    ("envdemo.tar.gz", "envdemo/.env")])
def test_a_refused_member_is_named_archive_bang_member(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], archive: str,
        member: str) -> None:
    monkeypatch.chdir(tmp_path)
    top = member.rsplit("/", 1)[0] + "/" if "/" in member else ""
    members = {f"{top}SKILL.md": SKILL_MD, member: ENV}
    (_tgz if archive.endswith(".tar.gz") else _zip)(tmp_path / archive, members)
    args = [a.format(out=tmp_path / "out") for a in command]
    result = _run(*args, archive)
    assert result.exit_code == 1, result.output
    assert f"{archive}!{member}: error: [secret]" in result.output
    assert "skillpack-unpacked-" not in result.output
    assert str(tmp_path.parent) not in result.output.replace(str(tmp_path / "out"), "")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.skill"))


def test_a_file_of_a_verified_archive_is_named_by_its_member(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A skill of ours read as a folder (`lint`): a finding in a file names its member."""
    monkeypatch.chdir(tmp_path)
    skill = tmp_path / "notes"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: notes\ndescription: The notes skill. Use "
                                    "when testing.\nhomepage: x\n---\nHi.\n")
    assert _run("pack", "notes", "-o", "out").exit_code == 0
    [packed] = Path("out").glob("*.skill")
    result = _run("lint", packed)
    assert result.exit_code == 0, result.output
    assert f"out/{packed.name}!notes/SKILL.md:4: warning: [unknown-key]" in result.output
    assert "skillpack-verified-" not in result.output
