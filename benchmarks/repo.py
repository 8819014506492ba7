"""Write a repository of N skills for the benchmarks: deterministic, so anyone can rerun it.

    python benchmarks/repo.py --skills 200|1000|5000 OUT [--broken N] [--corpus DIR] [--seed S]

OUT/skills/NAME/ for each skill, every NAME unique. Without ``--corpus`` each skill has the
shape of a corpus skill, made of fixed words by a generator seeded per skill: a SKILL.md
(3 to 14 KB, frontmatter with a description that says when to use it, headings, prose, a
command block, links to its references), one to four references/*.md (one in five left
unlinked, as in the corpus), one or two scripts (Python or shell, executable), and up to two
assets (a JSON template, a binary image). About 37 KB a skill: 5,000 skills are 185 MB.
With ``--corpus DIR`` the skills of DIR that `skillpack check` finds valid are copied in turn
instead, each renamed (folder and frontmatter ``name``).

``--broken N`` makes N of the skills, spread evenly, invalid in one of four ways (no
description, a name that is not the folder's, YAML that does not parse, a description over
1,024 characters), for work on repositories where some skills fail.

The same arguments write the same bytes and modes. OUT must not exist or be empty.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from collections.abc import Sequence
from pathlib import Path

DOMAINS = ("data", "report", "invoice", "chart", "pdf", "sheet", "email", "deploy", "schema",
           "image", "audio", "ticket", "release", "budget", "survey", "contract", "lab",
           "genome", "slide", "query", "log", "metric", "policy", "calendar", "lead")
ROLES = ("builder", "reviewer", "formatter", "checker", "writer", "helper", "planner",
         "analyst", "converter", "tracker", "auditor", "explorer", "summarizer", "editor")
_TEXT = (
    "the skill reads each file and writes a short summary for the user when a request names "
    "a folder table column row chart value total average report section heading list step "
    "check result error warning option flag input output format schema field record entry "
    "source target version release change note draft review approve reject merge split sort "
    "filter group count match search replace convert export import upload download parse "
    "render print plot measure compare validate clean normalize label tag index cache queue "
    "batch stream job task worker service request response token limit budget page document "
    "template asset script command argument default path directory archive bundle lock "
    "digest manifest catalog tool model answer prompt context turn session user team owner "
    "project repository branch commit build test lint format deploy monitor alert metric log "
    "trace span event window range date time zone currency amount price invoice customer "
    "order product stock supplier contract clause party term signature experiment sample "
    "assay sequence gene protein cell plate reagent protocol dataset feature column value "
    "always never only first then after before while unless because so that with without "
    "into from over under between across per each every any some most few many"
)
WORDS = tuple(_TEXT.split())
SECTIONS = ("Overview", "When to use", "Workflow", "Inputs", "Outputs", "Examples",
            "Edge cases", "Troubleshooting", "Conventions", "Checklist")
BROKEN_KINDS = ("no-description", "name-not-folder", "bad-yaml", "description-too-long")


def sentence(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(8, 20))
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(3, 6)))


def fill(rng: random.Random, size: int, head: str, block: str = "") -> str:
    """Markdown of about `size` bytes: `head`, then sections of prose and lists."""
    parts = [head]
    total = len(head)
    while total < size:
        part = f"\n## {rng.choice(SECTIONS)}\n\n{paragraph(rng)}\n\n"
        if rng.random() < 0.5:
            part += "".join(f"- {sentence(rng)}\n" for _ in range(rng.randint(2, 5))) + "\n"
        if block and rng.random() < 0.3:
            part += block
        parts.append(part)
        total += len(part)
    return "".join(parts)


def python_script(rng: random.Random, size: int, stem: str) -> str:
    lines = ["#!/usr/bin/env python3", f'"""{sentence(rng)}"""', "", "import argparse",
             "import json", "import sys", ""]
    count = 0
    while sum(len(line) + 1 for line in lines) < size:
        name = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}_{count}"
        count += 1
        lines += ["", f"def {name}(rows, limit=10):", f'    """{sentence(rng)}"""',
                  "    found = []", "    for row in rows:",
                  f"        if row.get({rng.choice(WORDS)!r}) and len(found) < limit:",
                  "            found.append(row)", "    return found", ""]
    lines += ["", "def main():", f"    parser = argparse.ArgumentParser(prog={stem!r})",
              '    parser.add_argument("--input", required=True)',
              '    parser.add_argument("--limit", type=int, default=10)',
              "    args = parser.parse_args()",
              "    with open(args.input, encoding='utf-8') as handle:",
              "        json.dump(json.load(handle)[: args.limit], sys.stdout)", "", "",
              'if __name__ == "__main__":', "    main()"]
    return "\n".join(lines) + "\n"


def shell_script(rng: random.Random, size: int) -> str:
    lines = ["#!/bin/sh", "set -eu", f"# {sentence(rng)}", ""]
    while sum(len(line) + 1 for line in lines) < size:
        lines += [f"# {sentence(rng)}",
                  f'if [ -f "$1" ]; then grep -c {rng.choice(WORDS)!r} "$1" || true; fi']
    return "\n".join(lines) + "\n"


def generated(rng: random.Random, name: str, broken: str | None) -> dict[str, tuple[bytes, int]]:
    """The files of one generated skill: relative path -> (bytes, mode)."""
    files: dict[str, tuple[bytes, int]] = {}
    refs = [f"references/{rng.choice(WORDS)}-{n}.md" for n in range(rng.choice((1, 2, 2, 3, 3,
                                                                                 4)))]
    for ref in refs:
        title = f"# {ref.rsplit('/', 1)[1][:-3].replace('-', ' ').title()}\n\n{paragraph(rng)}\n"
        files[ref] = (fill(rng, rng.randint(2000, 12000), title).encode(), 0o644)
    scripts = []
    for n in range(rng.choice((1, 1, 2))):
        size = rng.randint(1500, 7000)
        if rng.random() < 0.8:
            path = f"scripts/{rng.choice(WORDS)}_{n}.py"
            text = python_script(rng, size, path.rsplit("/", 1)[1])
        else:
            path = f"scripts/{rng.choice(WORDS)}-{n}.sh"
            text = shell_script(rng, size)
        files[path] = (text.encode(), 0o755)
        scripts.append(path)
    if rng.random() < 0.6:
        template = {"title": sentence(rng), "fields": rng.sample(WORDS, 8),
                    "rows": [{w: rng.randint(0, 999) for w in rng.sample(WORDS, 4)}
                             for _ in range(rng.randint(5, 60))]}
        files["assets/template.json"] = (json.dumps(template, indent=2).encode() + b"\n", 0o644)
    if rng.random() < 0.3:
        files["assets/icon.png"] = (b"\x89PNG\r\n\x1a\n" + rng.randbytes(rng.randint(1000, 8000)),
                                    0o644)
    description = (f"{sentence(rng)} Use when the user asks to {rng.choice(WORDS)} a "
                   f"{rng.choice(DOMAINS)} {rng.choice(WORDS)} or mentions {name.split('-')[0]}.")
    front = [f"name: {name}", f"description: {description}"]
    if rng.random() < 0.4:
        front.append("license: Apache-2.0")
    if rng.random() < 0.3:
        front += ["metadata:", f'  version: "1.{rng.randint(0, 9)}"']
    linked = refs if len(refs) < 2 or rng.random() < 0.8 else refs[:-1]
    head = (f"# {name.replace('-', ' ').title()}\n\n{paragraph(rng)}\n\n"
            + "".join(f"- For details see [{ref[11:-3]}]({ref}).\n" for ref in linked)
            + "\n```bash\n" + "".join(f"{'python3' if s.endswith('.py') else 'sh'} {s} "
                                      f"--input data.json\n" for s in scripts) + "```\n")
    block = f"```bash\npython3 {scripts[0]} --limit 5\n```\n\n" if scripts else ""
    body = fill(rng, rng.randint(3000, 14000), head, block)
    files["SKILL.md"] = (frontmatter(front, broken, name) + body).encode(), 0o644
    return files


def frontmatter(lines: list[str], broken: str | None, name: str) -> str:
    if broken == "no-description":
        lines = [line for line in lines if not line.startswith("description:")]
    elif broken == "name-not-folder":
        lines = [f"name: not-{name}" if line.startswith("name:") else line for line in lines]
    elif broken == "bad-yaml":
        lines = [*lines, "allowed-tools: [Read, Write"]
    elif broken == "description-too-long":
        lines = [f"description: {'Too long. ' * 120}Use when never."
                 if line.startswith("description:") else line for line in lines]
    return "---\n" + "\n".join(lines) + "\n---\n\n"


_NAME = re.compile(r"^name:.*$", re.M)


def from_template(folder: Path, name: str, broken: str | None) -> dict[str, tuple[bytes, int]]:
    """The files of a corpus skill, renamed `name` (and made `broken`, if asked)."""
    files: dict[str, tuple[bytes, int]] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
            files[path.relative_to(folder).as_posix()] = (path.read_bytes(), mode)
    text = files["SKILL.md"][0].decode("utf-8")
    _, front, body = text.split("---", 2)
    lines = _NAME.sub(f"name: {name}", front.strip("\n"), count=1).split("\n")
    files["SKILL.md"] = ((frontmatter(lines, broken, name) + body.lstrip("\n")).encode(), 0o644)
    return files


def templates(corpus: Path) -> list[Path]:
    """The corpus skills `skillpack check` finds valid, sorted by path."""
    import skillpack  # only with --corpus: the generated shapes need no skillpack

    found = sorted(p.parent for p in corpus.rglob("SKILL.md"))
    return [folder for folder in found if skillpack.check_skill(folder).valid]


def broken_at(skills: int, broken: int) -> dict[int, str]:
    """Which skills are broken, spread evenly, and how (the kinds in turn)."""
    return {(2 * k + 1) * skills // (2 * broken): BROKEN_KINDS[k % len(BROKEN_KINDS)]
            for k in range(broken)}


def write(out: Path, skills: int, *, broken: int = 0, corpus: Path | None = None,
          seed: int = 0) -> list[Path]:
    """Write the repository; return the skill folders."""
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"repo.py: {out} is not empty (choose a new folder)")
    if not 0 <= broken <= skills:
        raise SystemExit("repo.py: --broken must be between 0 and --skills")
    bad = broken_at(skills, broken) if broken else {}
    sources = templates(corpus) if corpus is not None else []
    if corpus is not None and not sources:
        raise SystemExit(f"repo.py: no valid skill under {corpus}")
    width = max(4, len(str(skills - 1)))
    folders = []
    for i in range(skills):
        rng = random.Random(f"{seed}:{i}")
        if sources:
            template = sources[i % len(sources)]
            name = f"{template.name[:40]}-{i:0{width}d}"
            files = from_template(template, name, bad.get(i))
        else:
            name = f"{rng.choice(DOMAINS)}-{rng.choice(ROLES)}-{i:0{width}d}"
            files = generated(rng, name, bad.get(i))
        folder = out / "skills" / name
        for rel, (data, mode) in sorted(files.items()):
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            os.chmod(path, mode)
        folders.append(folder)
    (out / "README.md").write_text(
        f"# A generated repository of {skills} skills\n\nWritten by `python benchmarks/repo.py "
        f"--skills {skills}{f' --broken {broken}' if broken else ''}"
        f"{' --corpus DIR' if corpus else ''}{f' --seed {seed}' if seed else ''} OUT`.\n",
        encoding="utf-8")
    return folders


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, metavar="OUT")
    parser.add_argument("--skills", type=int, required=True, help="how many skills")
    parser.add_argument("--broken", type=int, default=0, help="how many of them are invalid")
    parser.add_argument("--corpus", type=Path, help="copy the valid skills of this folder in "
                        "turn instead of generating them")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.skills < 1:
        parser.error("--skills must be at least 1")
    folders = write(args.out, args.skills, broken=args.broken, corpus=args.corpus,
                    seed=args.seed)
    size = sum(p.stat().st_size for f in folders for p in f.rglob("*") if p.is_file())
    print(f"{args.out}: {len(folders)} skills ({args.broken} invalid), "
          f"{size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
