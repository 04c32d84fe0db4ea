"""Issue 12, test 3: a bot process stopped with SIGSTOP for 3 s, and a bot whose event loop is
blocked for 3 s, while a requester asks it every 0.1 s (real processes, a real broker)."""

from __future__ import annotations

import pytest

from tests.chaoslib.stuck import stuck
from tests.chaoslib.timing import BLACKHOLE_S

pytestmark = pytest.mark.processes


@pytest.mark.parametrize("kind", ["sigstop", "blocked"])
def test_a_stuck_bot_is_flagged_while_stuck_and_its_conversations_close_on_both_sides(
    kind: str,
) -> None:
    result = stuck(kind)
    figures = result.figures

    assert result.note.startswith("flagged"), result.note  # the harness itself did not break
    # Flagged while it was stuck (within 4 heartbeats is `warband bench chaos`'s target_met).
    assert figures["detect_s"] is not None, figures
    assert figures["detect_s"] <= BLACKHOLE_S, figures
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
