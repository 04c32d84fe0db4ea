"""A scenario for tests of runs that end: bots that leave, fail to start, raise or go slowly.

Parameters (all off by default):

- ``bots``: how many bots (``bot-1`` ... ``bot-N``);
- ``leave``: ``bot-1@3`` makes bot-1 stop for good at tick 3 (``Actor.stop``);
- ``fail_start``: ``bot-2`` makes bot-2 raise in ``on_start`` in every incarnation;
- ``raise_at``: ``bot-1@2`` makes bot-1's ``on_tick`` raise at tick 2 (a handler failure);
- ``die_at``: ``bot-1@3`` makes bot-1's process exit at once from tick 3 on, in every
  incarnation, so its supervisor gives up on it;
- ``essential``: comma-separated agents without which the run cannot go on;
- ``pace``: seconds each bot's ``on_tick`` takes (wall clock), to give a test time to act;
- ``tick_file``: bot-1 writes the tick it is in to this file, so a test can wait for a tick.

Every bot counts its ticks; the run succeeds when every bot that stayed saw every tick.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from warband import Actor, Outcome, Params, RunResult, Scenario

scenario = Scenario(
    "liveness",
    ticks=20,
    params={
        "bots": 2,
        "leave": "",
        "fail_start": "",
        "raise_at": "",
        "die_at": "",
        "essential": "",
        "pace": 0.0,
        "tick_file": "",
    },
)


def _agent_at(spec: str) -> tuple[str, int]:
    agent, _, tick = spec.partition("@")
    return agent, int(tick) if tick else 0


class Bot(Actor):
    def __init__(self, actor_id: str, params: Params, seed: int) -> None:
        super().__init__(actor_id, seed=seed)
        self.leave_at = _tick_for(actor_id, str(params["leave"]))
        self.raise_at = _tick_for(actor_id, str(params["raise_at"]))
        self.die_at = _tick_for(actor_id, str(params["die_at"]))
        self.fail_start = actor_id == params["fail_start"]
        self.pace = float(params["pace"])
        self.tick_file = str(params["tick_file"]) if actor_id == "bot-1" else ""
        self.ticks_seen = 0

    async def on_start(self) -> None:
        if self.fail_start:
            raise RuntimeError(f"{self.id} cannot start (on purpose)")

    async def on_tick(self, tick: int) -> None:
        self.ticks_seen += 1
        if self.die_at is not None and tick >= self.die_at:
            os._exit(3)
        if self.tick_file:
            Path(self.tick_file).write_text(str(tick))
        if tick == self.leave_at:
            self.stop(f"leaving at tick {tick} on purpose")
        if tick == self.raise_at:
            raise ValueError(f"{self.id} raises at tick {tick} on purpose")
        if self.pace:
            await asyncio.sleep(self.pace)

    def final_state(self) -> dict[str, object]:
        return {"ticks_seen": self.ticks_seen}


def _tick_for(actor_id: str, spec: str) -> int | None:
    agent, tick = _agent_at(spec)
    return tick if agent == actor_id and tick else None


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    return [Bot(f"bot-{i}", params, seed) for i in range(1, int(params["bots"]) + 1)]


@scenario.departure
def departed(agent: str, reason: str, params: Params) -> str | None:
    essential = [name for name in str(params["essential"]).split(",") if name]
    if agent in essential:
        return f"{agent} left ({reason}) and the run cannot go on without it"
    return None


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    stayed = {
        name: state["ticks_seen"]
        for name, state in result.final_states.items()
        if name.startswith("bot-") and name not in result.departed
    }
    success = all(seen == result.ticks for seen in stayed.values())
    left = ", ".join(f"{a} ({r})" for a, r in result.departed.items()) or "nobody"
    return Outcome(success, f"{len(stayed)} bots saw every tick; left: {left}", details=stayed)
