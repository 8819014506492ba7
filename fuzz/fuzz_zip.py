"""atheris harness: the strict zip reader, the runtime's `load` and `verify_bytes` on any
bytes.

What loads is read completely (every file served, SKILL.md parsed); nothing but a
`SkillpackError` may escape, a served file must lie inside the input, and anything that
`verify_bytes` accepts must load and serve every file it lists. Start from the seeds of
fuzz/_seeds.py so that the fuzzer mutates real archives and bundles.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from skillpack.errors import SkillpackError
    from skillpack.packing.verify import verify_bytes
    from skillpack.runtime import load
    from skillpack.storedzip.reader import read_zip


def test_one_input(data: bytes) -> None:
    try:
        index = read_zip(data)
        for entry in index:
            assert 0 <= entry.data_offset <= entry.data_offset + entry.size <= len(data)
    except SkillpackError:
        pass
    try:
        bundle = load(data)
        for name in bundle.names:
            skill = bundle[name]
            for path in skill.files():
                skill.file(path).bytes()
            _ = skill.description, skill.tools, skill.programs
        bundle.verify_all()
    except SkillpackError:
        pass
    try:
        report = verify_bytes(data)
    except SkillpackError:
        return
    verified = load(data)
    assert sorted(verified.names) == sorted(s.name for s in report.skills)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
