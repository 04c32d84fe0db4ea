"""Issue 12, test 3: a bot process stopped with SIGSTOP for 3 s, and a bot whose event loop is
blocked for 3 s, while a requester asks it every 0.1 s (real processes, a real broker)."""

from __future__ import annotations

import pytest

from tests.chaoslib.result import Result
from tests.chaoslib.stuck import stuck
from tests.chaoslib.timing import BLACKHOLE_S
from tests.conftest import CommandResult, last_json_line

pytestmark = pytest.mark.processes


def _from_the_benchmark(run: CommandResult) -> Result:
    """The blocked bot's Result, read back from its `warband bench chaos` JSON entry."""
    assert 0 == run.returncode, run.stderr[-2000:]
    [entry] = last_json_line(run.stdout)["tests"]
    base = ("name", "passed", "lost", "duplicated", "target", "target_met", "note")
    figures = {key: value for key, value in entry.items() if key not in base}
    return Result(
        entry["name"],
        entry["passed"],
        entry["lost"],
        entry["duplicated"],
        figures,
        entry["note"],
        entry["target"],
        entry["target_met"],
    )


@pytest.mark.parametrize("kind", ["sigstop", "blocked"])
def test_a_stuck_bot_is_flagged_while_stuck_and_its_conversations_close_on_both_sides(
    kind: str, request: pytest.FixtureRequest
) -> None:
    if kind == "blocked":
        # The same harness, run once for this test and test_bench_chaos.py (conftest.py).
        result = _from_the_benchmark(request.getfixturevalue("bench_chaos_stuck_blocked"))
    else:
        result = stuck(kind)
    figures = result.figures

    assert result.note.startswith("flagged"), result.note  # the harness itself did not break
    # Flagged while it was stuck (within 4 heartbeats is `warband bench chaos`'s target_met).
    assert figures["detect_s"] is not None, figures
    # Stuck for BLACKHOLE_S, longer only until flagged: a busy machine can starve the broker,
    # which then does not count its own stall as the bot's silence (tests/chaoslib/timing.py).
    assert BLACKHOLE_S <= figures["stuck_s"], figures
    assert figures["detect_s"] <= figures["stuck_s"], figures
    # Every request waiting when it went silent failed at once; the bot was told (EndTalk)...
    assert figures["closed_requester_side"] >= 1, figures
    assert figures["closed_requester_side"] == figures["closed_bot_side"], figures
    # ...and the replies it sent when it woke were dropped and logged, not handled.
    assert figures["late_replies_dropped"] >= 1, figures
    # No request was left waiting for its time-out, and it answers again once awake.
    assert (0, 0) == (figures["timed_out"], figures["unanswered"]), figures
    assert figures["recover_s"] is not None, figures
    if kind == "blocked":
        # The raw baseline's ZMTP heartbeats run in libzmq's I/O thread: they never notice.
        assert None is figures["baseline_detect_s"], figures
