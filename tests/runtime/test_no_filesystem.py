"""No filesystem: once loaded, the runtime serves a bundle without touching a file (a bundle of
skills written at test time, and the corpus bundle).

A fresh interpreter reads the bundle's bytes with one open(), runs everything once (so that
lazy imports happen), then installs an audit hook and wrappers around the stat functions and
runs everything again on a new load. No `open`, `os.*` (listdir, scandir...) audit event and
no stat, lstat or fstat call may happen. A control at the end opens a file and lists a folder
under the same hook, to prove that the harness sees what it is looking for.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.bundles import BUNDLE_SKILLS, build_bundle
from helpers.paths import FIXTURES, REPO
from helpers.skills import rich_skill
from helpers.syscalls import AUDIT_SOURCE

SCRIPT = AUDIT_SOURCE + textwrap.dedent('''
    import json

    with open(sys.argv[1], "rb") as f:
        data = f.read()

    import skillpack.runtime as rt
    from skillpack.errors import ResourceError

    def exercise():
        bundle = rt.load(data, source="corpus.bundle")
        lazy = rt.load(data, source="corpus.bundle", lazy=True)
        served = 0
        for name in bundle.names[::int(sys.argv[2])]:
            skill = bundle[name]
            for path in skill.files():
                resource = skill.file(path)
                assert resource.bytes() == lazy[name].file(path).view().tobytes()
                served += 1
            skill.shebangs()
            skill.tools, skill.rendered, skill.programs
            text = bundle.load_skill(name)
            assert text.startswith("<skill_instructions>")
            for path in skill.files()[:3]:
                try:
                    bundle.read_skill_resource(name, path)
                except ResourceError:
                    pass  # a binary file
            try:
                skill.file("../" + skill.files()[0])
            except ResourceError:
                pass
        assert len(bundle.catalog()) == len(bundle)
        bundle.catalog_text()
        lazy.catalog_text()
        try:
            bundle["no-such-skill"]
        except ResourceError:
            pass
        assert bundle.verify_all() >= served > 10
        rt.compile(bundle[bundle.names[0]])

    exercise()  # lazy imports happen here

    events = audit()
    exercise()
    print(json.dumps(events))

    control(sys.argv[1])
    print(json.dumps(events))
''')


def serve_without_files(bundle: Path, step: int) -> None:
    """Run SCRIPT on `bundle`, exercising every `step`-th skill; assert it touched no file."""
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(bundle), str(step)],
                            capture_output=True, text=True, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
    during, control = (json.loads(line) for line in result.stdout.splitlines()[-2:])
    assert during == []
    seen = {event.split(" ", 1)[0] for event in control}
    assert {"open", "os.listdir", "stat"} <= seen


def test_serving_a_bundle_touches_no_file(tmp_path: Path) -> None:
    bundle = tmp_path / "skills.bundle"
    bundle.write_bytes(build_bundle([FIXTURES / "release-notes", rich_skill(tmp_path / "rich"),
                                     FIXTURES / "waitlist"]))
    serve_without_files(bundle, 1)


@pytest.mark.corpus
def test_serving_the_corpus_bundle_touches_no_file(tmp_path: Path) -> None:
    bundle = tmp_path / "corpus.bundle"
    bundle.write_bytes(build_bundle(BUNDLE_SKILLS))
    serve_without_files(bundle, 12)
