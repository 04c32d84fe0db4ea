"""A scenario for tests of busy processes: one bot holds its process's event loop for seconds.

Parameters:

- ``bots``: how many bots (``bot-1`` ... ``bot-N``);
- ``hold``: seconds bot-1 holds the loop at tick ``at`` (0: never);
- ``how``: ``sleep`` (a blocking call, as a slow library does) or ``spin`` (a CPU-bound
  Python loop, which holds the interpreter lock but for its switches);
- ``at``: the tick bot-1 holds the loop at.

Every bot counts its ticks; the run succeeds when nobody left it and every bot saw every tick.
"""

from __future__ import annotations

import time

from warband import Actor, Outcome, Params, RunResult, Scenario

scenario = Scenario("busy", ticks=6, params={"bots": 4, "hold": 0.0, "how": "sleep", "at": 3})


class Bot(Actor):
    def __init__(self, actor_id: str, hold: float, how: str, at: int, seed: int) -> None:
        super().__init__(actor_id, seed=seed)
        self.hold = hold
        self.how = how
        self.at = at
        self.ticks_seen = 0

    def on_tick(self, tick: int) -> None:
        self.ticks_seen += 1
        if tick == self.at and self.hold:
            hold_the_loop(self.hold, self.how)

    def final_state(self) -> dict[str, object]:
        return {"ticks_seen": self.ticks_seen}


def hold_the_loop(seconds: float, how: str) -> None:
    """Keep the calling thread (the event loop's) busy for ``seconds``."""
    if how == "sleep":
        time.sleep(seconds)
        return
    until = time.monotonic() + seconds
    spins = 0
    while time.monotonic() < until:
        spins += 1


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    bots = [f"bot-{i}" for i in range(1, int(params["bots"]) + 1)]
    hold, how, at = float(params["hold"]), str(params["how"]), int(params["at"])
    return [Bot(bot, hold if bot == "bot-1" else 0.0, how, at, seed) for bot in bots]


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    seen = {
        agent: state.get("ticks_seen")
        for agent, state in result.final_states.items()
        if agent.startswith("bot-")
    }
    everyone = len(seen) == int(params["bots"]) and all(c == result.ticks for c in seen.values())
    if result.departed or not everyone:
        return Outcome(False, f"departed {result.departed}, ticks seen {seen}")
    return Outcome(True, f"{len(seen)} bots saw all {result.ticks} ticks; nobody departed")
