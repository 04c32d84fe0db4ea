"""A run that goes on until it is stopped: idle actors and a clock with ten million ticks.

The tests of how runs end (tests/test_processes.py) start it with ``--processes`` and signal
the launcher. Parameters: ``bots`` (how many idle actors), ``marker`` (a file bot-1 creates at
tick 3, so a test knows the run is under way), ``kill_broker_at`` (a tick at which bot-1, in a
supervised process only, kills the broker with SIGKILL: a run that fails).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from warband import Actor, Outcome, Params, RunResult, Scenario

scenario = Scenario(
    "endless",
    ticks=10_000_000,
    params={"bots": 2, "marker": "", "kill_broker_at": 0},
    description="Idle actors ticking until the run is stopped.",
)


class Idler(Actor):
    """Does nothing each tick; bot-1 may leave a marker or kill the broker (see the module)."""

    def __init__(self, actor_id: str, *, marker: str, kill_broker_at: int) -> None:
        super().__init__(actor_id)
        self.marker = marker
        self.kill_broker_at = kill_broker_at

    def on_tick(self, tick: int) -> None:
        if tick == 3 and self.marker:
            # Written whole, then renamed: a reader that sees the file sees the pid (it read an
            # empty file once, between the file's creation and the write).
            part = Path(self.marker).with_suffix(".part")
            part.write_text(str(os.getpid()))
            os.replace(part, Path(self.marker))
        if tick == self.kill_broker_at and "WARBAND_INCARNATION" in os.environ:
            # The supervisor starts the broker first, so it leads the run's process group.
            os.kill(os.getpgrp(), signal.SIGKILL)


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    count = int(params["bots"])
    return [
        Idler(
            f"bot-{i}",
            marker=str(params["marker"]) if i == 1 else "",
            kill_broker_at=int(params["kill_broker_at"]) if i == 1 else 0,
        )
        for i in range(1, count + 1)
    ]


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    return Outcome(success=True, summary=f"{result.ticks} ticks")
