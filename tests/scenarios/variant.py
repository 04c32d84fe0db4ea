"""A scenario whose setup depends on the seed, judged by a judge that reads the seed back.

The seed picks the variant (``left`` for an even seed, ``right`` for an odd one); the outcome
judge names the variant from ``RunResult.seed`` alone, as a scenario with seeded setups does.
"""

from __future__ import annotations

from warband import Actor, Outcome, Params, RunResult, Scenario

scenario = Scenario("variant", ticks=2, description="A seeded variant, named by the judge.")


def variant(seed: int) -> str:
    return ("left", "right")[seed % 2]


class Player(Actor):
    def __init__(self, actor_id: str, *, seed: int) -> None:
        super().__init__(actor_id, seed=seed)
        self.played = variant(seed)

    def final_state(self) -> dict[str, object]:
        return {"played": self.played}


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    return [Player("player", seed=seed)]


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    played = result.final_states["player"]["played"]
    said = variant(result.seed)
    return Outcome(said == played, f"played {played}", {"seed": result.seed, "variant": said})
