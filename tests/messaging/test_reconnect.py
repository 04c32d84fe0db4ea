"""Reconnect storm (issue 12, test 9): the broker is down 10 s under 24 actors; each tries at
most 2 times a second, at its own jittered times, and all re-register after the broker's
return. The broker is a real process (``kill -9``, then started again on its port); the actors
share the test's process and event loop. The harness is chaoslib/faults.py's, which
``warband bench chaos --only reconnect-storm`` times (all back within 1.5 s is its target)."""

from __future__ import annotations

from tests.chaoslib.faults import reconnect_storm

BOTS = 24
DOWN_S = 10.0


async def test_a_broker_down_10_s_under_24_actors_sees_no_storm_and_all_come_back() -> None:
    figures = await reconnect_storm(BOTS, DOWN_S)

    print(figures)
    assert [f"bot-{n}" for n in range(1, BOTS + 1)] == figures["back"]
    assert figures["tries_min"] > 0, "every actor kept trying while the broker was down"
    assert figures["tries_per_s"] <= 2
    assert figures["registers_per_s"] <= 2
    # Jitter: the actors do not try at the same instants (each drew its own first wait).
    assert figures["distinct_first_waits"] > BOTS // 2
