"""A scenario for tests of a busy clock process: a world whose step holds the clock's event
loop for seconds at one tick, as a big world's step on a busy machine does.

Parameters: ``hold`` (seconds the step at tick ``at`` holds the loop; 0: never), ``at``.
Two bots that do nothing but tick; the run succeeds when it played every tick.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from warband import Actor, Outcome, Params, RunResult, Scenario
from warband.values import Value

scenario = Scenario("slow_world", ticks=8, params={"hold": 0.0, "at": 3})


class SlowWorld:
    """A world with no map and no rules: it only counts its steps, and holds one of them."""

    def __init__(self, hold: float, at: int) -> None:
        self.hold = hold
        self.at = at
        self.steps = 0

    def has_agent(self, agent_id: str) -> bool:
        return False

    def submit(self, agent_id: str, verb: str, args: Mapping[str, Value]) -> Any:
        raise NotImplementedError("nobody acts in this world")

    def step(self) -> None:
        self.steps += 1
        if self.steps == self.at and self.hold:
            time.sleep(self.hold)  # a blocking step: the loop is held, the process is alive

    def percepts_for(self, agent_id: str) -> Sequence[Sequence[Value]]:
        return []

    def events_for(self, agent_id: str, report: Any) -> Sequence[Sequence[Value]]:
        return []

    def outcome(self) -> Mapping[str, Any] | None:
        return None

    def score(self) -> Mapping[str, int]:
        return {}

    def team_facts(self, team: str) -> Sequence[Sequence[Value]]:
        return []

    def snapshot(self) -> dict[str, Any]:
        return {"steps": self.steps}


@scenario.world
def world(params: Params, seed: int) -> SlowWorld:
    return SlowWorld(float(params["hold"]), int(params["at"]))


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    return [Actor("bot-1", seed=seed), Actor("bot-2", seed=seed)]


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    played = result.ticks == 8 and not result.departed
    return Outcome(played, f"{result.ticks} ticks, departed: {sorted(result.departed) or 'none'}")
