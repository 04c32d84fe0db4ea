"""An endless run in which one bot may keep sending to an id nobody has: how a run ends while
frames are still pending (issue 12, test 7; ``warband bench chaos`` and tests/chaos).

Parameters: ``bots`` (idle actors), ``marker`` (a file bot-1 creates at tick 3, so the caller
knows the run is under way), ``ghost`` (an id no actor has: bot-1 sends it a burst of
StatusReports every tick, each answered by the broker as undeliverable; empty: none).
"""

from __future__ import annotations

import os
from pathlib import Path

from warband import Actor, Outcome, Params, RunResult, Scenario
from warband.messaging.catalog import StatusReport

scenario = Scenario(
    "pending_sends",
    ticks=10_000_000,
    params={"bots": 2, "marker": "", "ghost": ""},
    description="Idle actors ticking until stopped; one may keep sending to a ghost.",
)

BURST = 200
"""StatusReports bot-1 sends to the ghost each tick."""


class Sender(Actor):
    """Sends a burst to the ghost each tick (when there is one); bot-1 leaves the marker."""

    def __init__(self, actor_id: str, *, marker: str, ghost: str) -> None:
        super().__init__(actor_id)
        self.marker = marker
        self.ghost = ghost

    def on_tick(self, tick: int) -> None:
        if tick == 3 and self.marker:
            # Written whole, then renamed: a reader that sees the file sees the pid (it read an
            # empty file once, between the file's creation and the write).
            part = Path(self.marker).with_suffix(".part")
            part.write_text(str(os.getpid()))
            os.replace(part, Path(self.marker))
        if self.ghost:
            for number in range(BURST):
                self.send(StatusReport(recipient=self.ghost, status="ping", details={"n": number}))


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    count = int(params["bots"])
    return [
        Sender(
            f"bot-{i}",
            marker=str(params["marker"]) if i == 1 else "",
            ghost=str(params["ghost"]) if i == 1 else "",
        )
        for i in range(1, count + 1)
    ]


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    return Outcome(success=True, summary=f"{result.ticks} ticks")
