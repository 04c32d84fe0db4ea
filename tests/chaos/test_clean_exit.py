"""Issue 12, test 7: SIGINT or SIGTERM at a random moment of ``--processes`` runs, half of them
with a bot that keeps sending to an id nobody has (the issue's 20 runs scaled to 6)."""

from __future__ import annotations

import os

import pytest

from tests.chaoslib.lifecycle import clean_exit

pytestmark = pytest.mark.processes


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_signal_at_a_random_moment_ends_every_process_prints_a_summary_and_leaks_no_fd() -> None:
    first = clean_exit(1)  # opens what stays open in this process (imports, caches)
    before = _fds()

    rest = clean_exit(5, seed=7)

    for result in (first, rest):
        # Every run exited with 128 + the signal and printed its summary (the note lists what
        # did not), and no process outlived it; within 5 s is `warband bench chaos`'s target.
        assert "" == result.note
        assert 0 == result.figures["orphans"]
        assert True is result.passed, result.figures
    assert before == _fds()
