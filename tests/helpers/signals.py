"""A child process stopped by a real signal at a moment the test chooses."""

from __future__ import annotations

import subprocess
from collections.abc import Callable


def stopped(child: subprocess.Popen[str], signum: int,
            when: Callable[[], None]) -> subprocess.CompletedProcess[str]:
    """`child` sent `signum` once `when()` returns (it waits for the moment: a line the
    child writes, a file it makes), then waited for; killed if anything goes wrong, so that
    no test leaves a process behind."""
    try:
        when()
        child.send_signal(signum)
        stdout, stderr = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)
