"""Issue 22's liveness target: a 48v48 Warzone match in one process, on a machine kept busy by
another CPU-bound process, finishes with nobody departed.

What would fail is liveness, not the game: the broker counts a peer gone after 3 ping intervals
without a frame from it, and in one process every agent pings from the one event loop that a
tick holds. So the run pings every 0.05 s (silent after 0.15 s) and plays a few ticks: at
48v48 under the busy process a tick holds the loop far longer than that, as a long tick of a
real match at 1 s pings would on a busier machine. (Without the process's keeper, the same run
departed all 146 agents when it was measured; with it, nobody.)
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from warband.launcher import RunOptions, build_clock, run_actors_in_process
from warband.scenario import load_scenario

WARZONE = Path(__file__).resolve().parent.parent / "scenarios" / "warzone.py"
PING_S = 0.05
TICKS = 4


@pytest.fixture
def busy_machine() -> Iterator[subprocess.Popen[bytes]]:
    """Another process that spins on a core until the test ends, however it ends."""
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield hog
    finally:
        hog.kill()
        hog.wait()


async def test_48v48_in_one_process_on_a_busy_machine_departs_nobody(
    busy_machine: subprocess.Popen[bytes],
) -> None:
    scenario = load_scenario(WARZONE)
    params = scenario.resolve_params({"bots": "48"})
    actors = scenario.build(params, 0)
    clock = build_clock(scenario, actors, RunOptions(ticks=TICKS), params)

    result = await run_actors_in_process(actors, clock, ping_interval=PING_S)

    assert busy_machine.poll() is None, "the busy process ended before the match did"
    assert 146 == len(actors)
    assert {} == result.departed
    assert (TICKS, 0, True, True) == (
        result.ticks,
        result.tick_timeouts,
        result.completed,
        result.clean,
    )
