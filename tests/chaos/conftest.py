"""The chaos tests' shared run: ``warband bench chaos --quick --only stuck-blocked --json``.

The benchmark's JSON contract (test_bench_chaos.py) and the blocked bot's figures
(test_stuck_actor.py) are two readings of the same fault harness (tests/chaoslib/stuck.py):
it runs once per session and both read its entry.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO, CommandResult

STUCK_BLOCKED = ("bench", "chaos", "--quick", "--only", "stuck-blocked", "--json")


@pytest.fixture(scope="session")
def bench_chaos_stuck_blocked() -> CommandResult:
    """The finished ``warband bench chaos --quick --only stuck-blocked --json`` command."""
    return subprocess.run(
        [sys.executable, "-m", "warband", *STUCK_BLOCKED],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
