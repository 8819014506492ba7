"""`skillpack verify` (skills, archives and bundles against a lock or a digest; agents'
skills folders against a lock) and `skillpack inspect` (what an archive's manifests say)."""

from __future__ import annotations

import click

from skillpack.approve.compare import TargetFailure, verify_against
from skillpack.approve.lock import Lock, read_lock
from skillpack.approve.signing import SignedLock, trusted_keys, verify_signed_lock
from skillpack.cli.many import report_skipped, selection
from skillpack.cli.mentions import mention_lines
from skillpack.cli.options import AGENT, EXCLUDE, EXISTING, GLOBAL, JSON, command, signed_lock
from skillpack.cli.output import (
    echo,
    echo_json,
    echo_text,
    item_failure,
    json_safe,
    report_error,
)
from skillpack.formats.digest import is_digest
from skillpack.install.folders import (
    as_installed,
    is_agent_folder,
    lock_answer,
    verify_agents,
)
from skillpack.packing.verify import verify_target
from skillpack.skillmd.mentions import mentioned_programs

__all__ = ["given_lock", "inspect", "verify"]


@command()
@click.argument("archive", type=EXISTING)
@JSON
def inspect(archive: str, as_json: bool) -> int:
    """Show the manifest of a .skill archive or of each skill of a bundle (after verifying).
    ARCHIVE may also be an archive made elsewhere (shown as packed from the folder it
    unpacks to), a folder of archives, a skill folder or its SKILL.md."""
    report = verify_target(archive)
    manifests = [s.manifest.to_dict() for s in report.skills]
    loaded = report.loaded
    mentioned = {s.name: mentioned_programs(loaded[s.name].skill.body,
                                            loaded[s.name].skill.body_line)
                 for s in report.skills} if loaded is not None else {}
    if as_json:
        echo_json({"target": archive, "kind": report.kind, "digest": report.digest,
                   "skills": manifests,
                   "mentioned": {k: [m.to_dict() for m in v] for k, v in mentioned.items()},
                   "properties": {s.name: json_safe(s.frontmatter) for s in report.skills}})
        return 0
    if report.kind == "bundle":
        echo_text(f"{archive}: bundle of {len(manifests)} skill(s), digest {report.digest}")
    elif report.kind == "archive":
        echo_text(f"{archive}: archive of one skill")
    else:
        echo_text(f"{archive}: {len(manifests)} skill(s), as they would be packed")
    for m in manifests:
        echo_text(f"\nname:        {m['name']}\ndigest:      {m['digest']}")
        echo_text(f"description: {m['description']}")
        echo_text(f"files ({len(m['files'])}):")
        for f in m["files"]:
            echo_text(f"  {f['mode']} {f['size']:>9} {f['blake3'][:16]}  {f['path']}")
        echo_text(f"programs ({len(m['programs'])}):")
        for p in m["programs"]:
            flag = " (dynamic)" if p["dynamic"] else ""
            via = f" via {', '.join(p['via'])}" if p.get("via") else ""
            echo_text(f"  {p['name']}{flag}{via}  from {', '.join(p['sources'])}")
        mentions = mention_lines(mentioned.get(m["name"], []))
        if mentions:  # shown only when there are some (most skills have none)
            echo_text(f"mentioned in SKILL.md, run by no tool ({len(mentions)}):")
            for line in mentions:
                echo_text(f"  {line}")
        echo_text(f"tools ({len(m['tools'])}):")
        for t in m["tools"]:
            params = ", ".join(t["schema"]["properties"])
            echo_text(f"  {t['id']}({params}): {t['description']}")
        echo_text(f"allowances: {', '.join(m['allowances']) or 'none'}")
    return 0


def given_lock(lock_file: str | None, signature: str | None, signers: tuple[str, ...],
               signers_file: str | None) -> Lock | SignedLock | None:
    """The lock of `signed_lock`'s options: read, or verified against its signature by a
    trusted signer (a `SignedLock`); None without --lock. A combination that cannot be
    done is a usage error (exit 2)."""
    if signature is not None and lock_file is None:
        raise click.UsageError("--signature signs a lock: give --lock too")
    if signers and signers_file:
        raise click.UsageError("give --signer or --signers, not both")
    if signature is not None and not (signers or signers_file):
        raise click.UsageError("--signature needs the trusted signers: --signer PUBKEY or "
                               "--signers FILE")
    if signature is None and (signers or signers_file):
        raise click.UsageError("--signer and --signers name who signed --signature: give "
                               "--signature too")
    if lock_file is None:
        return None
    if signature is not None:
        return verify_signed_lock(lock_file, signature, trusted_keys(signers, signers_file))
    return read_lock(lock_file)


@command()
@click.argument("targets", nargs=-1, type=EXISTING)
@signed_lock
@click.option("--digest", "expected",
              help="Compare with this digest (blake3:...): a skill's, or a bundle's own.")
@click.option("--agent-folders", "folders", is_flag=True,
              help="Each TARGET is an agent's skills folder: every skill directly in it "
                   "(a symbolic link followed inside the working folder) is compared with "
                   "--lock, and every skill the lock approves is expected in each. Implied "
                   "when every TARGET is one by its place (.claude/skills, .agents/skills, "
                   "...) or holds install's state file.")
@AGENT
@GLOBAL
@click.option("--partial", is_flag=True,
              help="With agent folders: a skill the lock approves that a folder lacks is "
                   "no drift (a subset was installed).")
@EXCLUDE
@JSON
def verify(targets: tuple[str, ...], lock_file: str | None, signature: str | None,
           signers: tuple[str, ...], signers_file: str | None, expected: str | None,
           folders: bool, agents: tuple[str, ...], user: bool, partial: bool,
           as_json: bool) -> int:
    """Verify skill folders, .skill archives or bundles, optionally against a lock or digest;
    or agents' skills folders against a lock (--agent-folders, --agent).

    --digest is compared with each skill's digest, or with a bundle's own digest for a
    bundle. With --signature the lock must first be signed by a trusted signer (--signer or
    --signers) and be exactly the lock that was signed. Exit 0 when everything verifies and
    matches, 1 on any difference (listing the files added, removed or changed) or refused
    signature, 2 for misuse.
    """
    by_folder = folders or bool(agents) or (
        lock_file is not None and bool(targets) and all(map(is_agent_folder, targets)))
    if not targets and not agents:
        raise click.UsageError("give a TARGET, or --agent NAME")
    if lock_file and expected:
        raise click.UsageError("give --lock or --digest, not both")
    if expected is not None and not is_digest(expected):
        raise click.UsageError(f"--digest {expected!r} is not 'blake3:' and 64 hex digits")
    if by_folder and lock_file is None:
        raise click.UsageError("agents' folders are verified against a lock: give --lock")
    if (partial or user) and not by_folder:
        raise click.UsageError(f"--{'partial' if partial else 'global'} is for agents' "
                               "folders: give --agent or --agent-folders")
    given = given_lock(lock_file, signature, signers, signers_file)
    lock = given.lock if isinstance(given, SignedLock) else given
    if isinstance(given, SignedLock) and not as_json:
        echo(f"signed    {lock_file}: by {given.signer.source} (keyid "
             f"{given.signer.keyid[:16]})")
    if lock is not None and not folders and not agents and not user:
        # every TARGET an agent's folder by its place, or skills: as `review --lock` reads
        chosen = selection()
        answer = lock_answer(targets, lock, selection=chosen, partial=partial)
        report_skipped(chosen)
    elif by_folder:
        assert lock is not None
        answer = verify_agents(agents, lock, targets, user=user, partial=partial)
    else:
        chosen = selection()
        answer = as_installed(verify_against(targets, lock=lock, expected=expected,
                                             selection=chosen), lock)
        report_skipped(chosen)
    if as_json:
        echo_json([{"target": a.target} | item_failure(a.target, a.error)
                   if isinstance(a, TargetFailure) else a.to_dict() for a in answer])
    else:
        for a in answer:
            if isinstance(a, TargetFailure):
                report_error(a.error)
                continue
            for line in a.lines():
                echo_text(line)
    return int(not all(a.ok for a in answer))
