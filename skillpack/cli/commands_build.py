"""`skillpack bundle`, `inspect`, `lock` and `verify` (`pack` is `skillpack.cli.commands_pack`:
its start-up is not theirs, which signing and verifying make about 100 ms)."""

from __future__ import annotations

from typing import Any

import click

from skillpack._atomic import AtomicBatch
from skillpack.approve.approval import (
    key_password,
    lock_entries,
    signature_path,
    trusted_keys,
    verify_signed_lock,
)
from skillpack.approve.compare import compare_with_lock
from skillpack.approve.lock import Lock, make_lock, read_lock, write_lock
from skillpack.approve.signing import sign_statement, statement_for_lock
from skillpack.cli._common import (
    echo_json,
    echo_text,
    errors_exit,
    finish,
    mention_lines,
    report_error,
    usage,
)
from skillpack.cli._json_errors import item_failure, json_errors
from skillpack.cli._stdout import DASH, write_to_stdout
from skillpack.cli._targets import CATALOG_BUDGET, TARGET
from skillpack.errors import SkillpackError
from skillpack.formats.digest import is_digest
from skillpack.packing.bundle import write_bundle
from skillpack.packing.verify import VerifyReport, verify_target
from skillpack.skillmd.mentions import mentioned_programs

_EXISTING = click.Path(exists=True, file_okay=True, dir_okay=True)
_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.command()
@click.argument("archive", type=click.Path(exists=True))
@_JSON
def inspect(archive: str, as_json: bool) -> None:
    """Show the manifest of a .skill archive or of each skill of a bundle (after verifying).
    ARCHIVE may also be an archive made elsewhere (shown as packed from the folder it
    unpacks to), a folder of archives, or a skill folder."""
    with json_errors(as_json):
        report = verify_target(archive)
        manifests = [s.manifest.to_dict() for s in report.skills]
        loaded = report.loaded
        mentioned = {s.name: mentioned_programs(loaded[s.name].skill.body,
                                                loaded[s.name].skill.body_line)
                     for s in report.skills} if loaded is not None else {}
    if as_json:
        echo_json({"target": archive, "kind": report.kind, "digest": report.digest,
                   "skills": manifests,
                   "mentioned": {k: [m.to_dict() for m in v] for k, v in mentioned.items()}})
        return
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


@click.command()
@click.argument("paths", nargs=-1, required=True, type=_EXISTING)
@click.option("-o", "--out", "dest", required=True, type=click.Path(dir_okay=False),
              help="The lock file to write (atomically), e.g. skills.lock; - for stdout.")
@click.option("--sign", "key", type=click.Path(exists=True, dir_okay=False),
              help="Also sign it with this Ed25519 private key: OUT.intoto.json, written "
                   "with the lock, both or neither.")
@click.option("--key-password-env", "password_env", metavar="NAME",
              help="The environment variable holding the --sign key's password, if encrypted.")
def lock(paths: tuple[str, ...], dest: str, key: str | None, password_env: str | None) -> None:
    """Pin each skill's digest, files, programs and tools (format 1.1) in a lock file an
    approver can diff; with --sign, sign it in the same step (a skill locked from its .skill
    archive gets the archive's SHA-256 in its subject)."""
    if dest == DASH and key is not None:
        usage("--sign writes the signature beside the lock: give -o a file, not -")
    with errors_exit():
        found = lock_entries(paths)
        if dest == DASH:
            pinned = write_to_stdout(lambda path: write_lock(found.entries, path),
                                     "skills.lock")
        elif key is None:
            pinned = write_lock(found.entries, dest)
        else:
            pinned = make_lock(found.entries)
            envelope = sign_statement(statement_for_lock(pinned, found.archives), key,
                                      password=key_password(password_env))
            with AtomicBatch(sync_threads=1) as batch:
                with batch.write(dest) as handle:
                    handle.write(pinned.to_bytes())
                with batch.write(signature_path(dest)) as handle:
                    handle.write(envelope)
    click.echo(f"locked {len(pinned.skills)} skill(s) in {'stdout' if dest == DASH else dest}",
               err=dest == DASH)
    if key is not None:
        click.echo(f"signed it in {signature_path(dest)}")


@click.command()
@click.argument("targets", nargs=-1, required=True, type=_EXISTING)
@click.option("--lock", "lock_file", type=click.Path(exists=True, dir_okay=False),
              help="Compare with the digests pinned in this lock file.")
@click.option("--digest", "expected",
              help="Compare with this digest (blake3:...): a skill's, or a bundle's own.")
@click.option("--signature", type=click.Path(exists=True, dir_okay=False),
              help="Require the lock to be signed: its DSSE envelope (LOCK.intoto.json).")
@click.option("--signer", "signers", multiple=True,
              type=click.Path(exists=True, dir_okay=False),
              help="A trusted signer's Ed25519 public key (PEM or OpenSSH; repeatable).")
@click.option("--signers", "signers_file", type=click.Path(exists=True, dir_okay=False),
              help="A trusted-signers file: one 'ssh-ed25519 AAAA... name' line per signer.")
@_JSON
def verify(targets: tuple[str, ...], lock_file: str | None, expected: str | None,
           signature: str | None, signers: tuple[str, ...], signers_file: str | None,
           as_json: bool) -> None:
    """Verify skill folders, .skill archives or bundles, optionally against a lock or digest.

    --digest is compared with each skill's digest, or with a bundle's own digest for a
    bundle. With --signature the lock must first be signed by a trusted signer (--signer or
    --signers) and be exactly the lock that was signed. Exit 0 when everything verifies and
    matches, 1 on any difference (listing the files added, removed or changed) or refused
    signature, 2 for misuse.
    """
    with json_errors(as_json):
        _verify_usage(lock_file, expected, signature, signers, signers_file)
    failed = False
    results: list[dict[str, Any]] = []
    pins: Lock | None = None
    with json_errors(as_json):
        if signature is not None and lock_file is not None:
            signed = verify_signed_lock(lock_file, signature,
                                        trusted_keys(signers, signers_file))
            pins = signed.lock
            if not as_json:
                click.echo(f"signed    {lock_file}: by {signed.signer.source} (keyid "
                           f"{signed.signer.keyid[:16]})")
        elif lock_file is not None:
            pins = read_lock(lock_file)
    reports: list[VerifyReport] = []
    reported: set[tuple[str, str, str | None, int | None]] = set()
    for target in targets:
        try:
            report = verify_target(target)
        except SkillpackError as err:  # reported; the other targets are still verified
            failed = True
            # a target inside an earlier one (`verify skills skills/a`) fails with problems
            # already reported: each problem is reported once
            keys = {(p.code, p.message, p.file, p.line) for p in err.located()}
            if keys and keys <= reported:
                continue
            reported |= keys
            if as_json:
                results.append({"target": target} | item_failure(target, err))
            else:
                report_error(err)
            continue
        reports.append(report)
        if expected is not None and report.kind == "bundle" and report.digest is not None:
            # a bundle is named by its own digest (SPEC section 2), not by its skills'
            ok = report.digest == expected
            results.append({"target": target, "name": None, "digest": report.digest, "ok": ok}
                           | ({} if ok else {"reason": f"bundle digest differs from {expected}"}))
            failed = failed or not ok
            if not as_json:
                state = "ok      " if ok else "MISMATCH"
                why = "" if ok else f": bundle digest differs from {expected}"
                click.echo(f"{state}  {report.digest}  bundle of {len(report.skills)} "
                           f"skill(s)  ({target}){why}")
            continue
        verdicts = ({v.name: v for v in compare_with_lock(report, pins)
                     if v.code != "expect-missing"} if pins is not None else {})
        for s in report.skills:
            result: dict[str, Any] = {"target": target, "name": s.name, "digest": s.digest,
                                      "ok": True}
            lines: list[str] = []
            verdict = verdicts.get(s.name)
            if verdict is not None and not verdict.ok:
                result.update(ok=False, code=verdict.code, reason=verdict.reason)
                if verdict.diff is not None:
                    d = verdict.diff
                    result.update(added=list(d.added), removed=list(d.removed),
                                  changed=list(d.changed))
                    lines = d.lines()
            elif expected is not None and s.digest != expected:
                result.update(ok=False, reason=f"digest differs from {expected}")
            failed = failed or not result["ok"]
            results.append(result)
            if not as_json:
                if result["ok"]:
                    echo_text(f"ok        {s.digest}  {s.name}  ({target})")
                else:
                    echo_text(f"MISMATCH  {s.digest}  {s.name}  ({target}): {result['reason']}")
                    for line in lines:
                        echo_text(line)
    for missing in (compare_with_lock(reports, pins) if pins is not None else ()):
        if missing.code != "expect-missing":
            continue
        failed = True  # approved, but in none of the targets: load(expect=) refuses it too
        results.append({"target": None, "name": missing.name, "digest": missing.digest,
                        "ok": False, "code": missing.code, "reason": missing.reason})
        if not as_json:
            echo_text(f"MISMATCH  {missing.digest}  {missing.name}  (in none of the targets): "
                      f"{missing.reason}")
    if as_json:
        echo_json(results)
    finish(failed)


def _verify_usage(lock_file: str | None, expected: str | None, signature: str | None,
                  signers: tuple[str, ...], signers_file: str | None) -> None:
    """Refuse the option combinations `verify` cannot do (exit 2)."""
    if lock_file and expected:
        usage("give --lock or --digest, not both")
    if expected is not None and not is_digest(expected):
        usage(f"--digest {expected!r} is not 'blake3:' and 64 hex digits")
    if signature is not None and lock_file is None:
        usage("--signature signs a lock: give --lock too")
    if signers and signers_file:
        usage("give --signer or --signers, not both")
    if signature is not None and not (signers or signers_file):
        usage("--signature needs the trusted signers: --signer PUBKEY or --signers FILE")
    if signature is None and (signers or signers_file):
        usage("--signer and --signers name who signed --signature: give --signature too")


@click.command()
@click.argument("paths", nargs=-1, required=True, type=_EXISTING)
@click.option("-o", "--out", "dest", required=True, type=click.Path(dir_okay=False),
              help="The bundle file to write (atomically); - for stdout.")
@click.option("--python-module", "module", type=click.Path(dir_okay=False),
              help="Also write a Python module whose DATA is the bundle's bytes.")
@_JSON
@TARGET
@CATALOG_BUDGET
def bundle(paths: tuple[str, ...], dest: str, module: str | None, as_json: bool,
           targets: tuple[str, ...], catalog_budget: int | None) -> None:
    """Bundle skill folders, folders of skills and .skill archives into one file.
    With --target, every skill is checked against those hosts' limits first (an error
    refuses the bundle). Prints each skill, the catalog's size, and the bundle's digest and
    SHA-256.
    """
    if dest == DASH and as_json:  # stdout is the bundle's: no JSON document there
        usage("-o - writes the bundle to stdout: --json cannot go there too")
    with json_errors(as_json):
        if dest == DASH:
            result = write_to_stdout(
                lambda path: write_bundle(paths, path, python_module=module, targets=targets,
                                          catalog_budget=catalog_budget), "skills.bundle")
            click.echo(f"bundled {len(result.skills)} skill(s) to stdout ({result.size:,} "
                       f"bytes), digest {result.digest}", err=True)
            return
        result = write_bundle(paths, dest, python_module=module, targets=targets,
                              catalog_budget=catalog_budget)
    if as_json:
        echo_json(result.to_dict())
        return
    for problem in result.warnings:
        click.echo(str(problem))
    for name, digest, source in result.skills:
        click.echo(f"{digest}  {name}  ({source})")
    if result.catalog is not None:
        for line in result.catalog.lines():
            click.echo(line)
    click.echo(f"bundled {len(result.skills)} skill(s) into {result.path} "
               f"({result.size:,} bytes), digest {result.digest}, {result.sha256}")
    if module:
        click.echo(f"python module: {module}")
