"""A toss decided by the seed, for the tests of ``warband sweep``.

The winner is ``heads`` when ``seed % 3 == 1``, ``tails`` when it is 2, and nobody (a draw)
when it is 0; the outcome details hold ``winner`` and ``scores`` as a scenario with sides does.
Parameters pick a seed that goes wrong (0: none):

- ``crash_seed``: that run's process exits at tick 2 with code 3, before any summary;
- ``refuse_seed``: that run refuses to start (a parameter error: exit 2, one line);
- ``stall_seed``: that run does not complete (its one actor leaves at tick 2 and the run
  cannot go on without it);
- ``pid_dir``: every run writes its pid to ``DIR/seed-N.pid`` at tick 1, so a test knows it is
  under way and can check it is gone afterwards.
"""

from __future__ import annotations

import os
from pathlib import Path

from warband import Actor, ConfigurationError, Outcome, Params, RunResult, Scenario

scenario = Scenario(
    "coin",
    ticks=5,
    params={"crash_seed": 0, "refuse_seed": 0, "stall_seed": 0, "pid_dir": ""},
    description="A toss decided by the seed.",
)

SIDES = {1: "heads", 2: "tails", 0: None}


class Tosser(Actor):
    def __init__(self, actor_id: str, *, seed: int, params: Params) -> None:
        super().__init__(actor_id, seed=seed)
        self.toss_seed = seed
        self.crash = seed == int(params["crash_seed"])
        self.stall = seed == int(params["stall_seed"])
        pid_dir = str(params["pid_dir"])
        self.pid_file = Path(pid_dir) / f"seed-{seed}.pid" if pid_dir else None

    def on_tick(self, tick: int) -> None:
        if tick == 1 and self.pid_file is not None:
            # Written whole, then renamed: a reader that sees the file sees the pid (it read an
            # empty file once, between the file's creation and the write).
            part = self.pid_file.with_suffix(".part")
            part.write_text(str(os.getpid()))
            os.replace(part, self.pid_file)
        if tick == 2 and self.crash:
            os._exit(3)
        if tick == 2 and self.stall:
            self.stop("leaving on purpose")

    def final_state(self) -> dict[str, object]:
        return {"winner": SIDES[self.toss_seed % 3]}


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    if seed == int(params["refuse_seed"]):
        raise ConfigurationError(f"seed {seed} is refused on purpose (refuse_seed)")
    return [Tosser("tosser", seed=seed, params=params)]


@scenario.departure
def departed(agent: str, reason: str, params: Params) -> str | None:
    return f"{agent} left ({reason}) and the toss cannot go on without it"


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    if "tosser" in result.departed:
        return Outcome(False, "the tosser left", {"winner": None})
    winner = result.final_states["tosser"]["winner"]
    scores = {side: int(side == winner) for side in ("heads", "tails")}
    details = {"winner": winner, "scores": scores}
    return Outcome(True, f"{winner or 'nobody'} wins", details)
