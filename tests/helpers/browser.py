"""Headless Chromium, as the review page's tests open it (a real browser, offline)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")


def need_browser() -> Path:
    """Debian's Chromium; its absence skips the test, or fails it when
    ``SKILLPACK_REQUIRE_BROWSER=1`` (CI)."""
    if not CHROMIUM.exists():
        if os.environ.get("SKILLPACK_REQUIRE_BROWSER") == "1":
            pytest.fail(f"SKILLPACK_REQUIRE_BROWSER=1 but {CHROMIUM} is absent "
                        "(apt-get install -y chromium)")
        pytest.skip(f"{CHROMIUM} is absent (apt-get install -y chromium to run this test)")
    return CHROMIUM


def run_chromium(browser: Path, page: Path, profile: Path, *extra: str) -> str:
    """Open ``page`` headless, offline, in a fresh profile; return what it printed."""
    command = [str(browser), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
               *extra, page.as_uri()]
    # the timeout only stops a hung browser; nothing is asserted about time
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
