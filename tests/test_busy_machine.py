"""Issue 22's liveness target: a 48v48 Warzone match in one process, on a machine kept busy by
another CPU-bound process, finishes with nobody departed; and a clock process busy for
seconds is not taken for a hung one.

What would fail is liveness, not the game: the broker counts a peer gone after 3 ping intervals
(1 s each) without a frame from it, and in one process every agent pings from the one event
loop that a tick holds. A few ticks suffice, one of them long: a bot's tick holds the loop
4.5 s at tick 2 (a slow library call), as a long tick of a match on a busier machine does.
(Without the process's keeper the same run departs all 146 agents.)
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import last_json_line
from warband.launcher import RunOptions, build_clock, run_actors_in_process
from warband.messaging.actor import Actor
from warband.scenario import load_scenario

WARZONE = Path(__file__).resolve().parent.parent / "scenarios" / "warzone.py"
TICKS = 4
HOLD_S = 4.5
"""How long one bot's tick 2 holds the loop: more than the 3 s that make a peer silent."""


@pytest.fixture
def busy_machine() -> Iterator[subprocess.Popen[bytes]]:
    """Another process that spins on a core until the test ends, however it ends."""
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield hog
    finally:
        hog.kill()
        hog.wait()


def _hold_the_loop_at_tick_2(actor: Actor) -> None:
    on_tick = actor.on_tick

    def holding(tick: int) -> Awaitable[None] | None:
        if tick == 2:
            time.sleep(HOLD_S)
        return on_tick(tick)

    actor.on_tick = holding  # type: ignore[method-assign]


async def test_48v48_in_one_process_on_a_busy_machine_departs_nobody(
    busy_machine: subprocess.Popen[bytes],
) -> None:
    scenario = load_scenario(WARZONE)
    params = scenario.resolve_params({"bots": "48"})
    actors = scenario.build(params, 0)
    clock = build_clock(scenario, actors, RunOptions(ticks=TICKS), params)
    _hold_the_loop_at_tick_2(actors[0])

    result = await run_actors_in_process(actors, clock)

    assert busy_machine.poll() is None, "the busy process ended before the match did"
    assert 146 == len(actors)
    assert {} == result.departed
    # Tick time-outs are not asserted: how long a tick takes here is the machine's business.
    assert (TICKS, True, True) == (result.ticks, result.completed, result.clean)


SLOW_WORLD = Path(__file__).resolve().parent / "scenarios" / "slow_world.py"


@pytest.mark.processes
def test_a_clock_busy_for_longer_than_the_launchers_patience_is_not_taken_for_hung(
    warband_cli: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    # The world's step at tick 3 holds the clock's loop 8 s, past the 5 s the launcher waits
    # for a sign of life: the run ended "the clock 'world' stopped answering". A stopped or
    # stuck clock is still found (tests/test_processes.py, SIGSTOP).
    result = warband_cli(
        "run", str(SLOW_WORLD), "--processes", "--param", "hold=8", "--json", "-q", timeout=120
    )

    assert 0 == result.returncode, result.stderr
    summary = last_json_line(result.stdout)
    assert (True, 8, {}) == (summary["completed"], summary["ticks"], summary["departed"])
