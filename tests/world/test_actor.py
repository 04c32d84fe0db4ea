"""The world actor over real sockets: Acts validated with the true sender, Percepts every tick."""

from __future__ import annotations

from typing import Any

from warband.messaging import Act, Actor, ActResult, Percept, handles
from warband.testing import run_actors
from warband.world import World, load_map


class Walker(Actor):
    """Walks a fixed route on the test map, one move per arrival, and records what it learns."""

    def __init__(self, actor_id: str, route: list[str], extra_acts: list[Act] = ()) -> None:
        super().__init__(actor_id)
        self.route = list(route)
        self.extra_acts = list(extra_acts)
        self.positions: list[str] = []
        self.verdicts: list[tuple[str, bool, str]] = []
        self.events: list[str] = []
        self.percepts = 0

    @handles(Percept)
    def on_percept(self, percept: Percept) -> None:
        self.percepts += 1
        self.events += [str(event[0]) for event in percept.events]
        at = [fact for fact in percept.facts if fact[0] == "at" and fact[1] == self.id]
        if at:
            self.positions.append(str(at[0][2]))

    async def on_tick(self, tick: int) -> None:
        if self.extra_acts:
            await self._act(self.extra_acts.pop(0))
        elif self.route and self.positions and self.positions[-1] == self.route[0]:
            self.route.pop(0)
        if self.route and (tick == 1 or "arrived" in self.events[-3:]):
            await self._act(Act(recipient="world", verb="move", args={"waypoint": self.route[0]}))

    async def _act(self, act: Act) -> None:
        answer = await self.request(act)
        assert isinstance(answer, ActResult)
        self.verdicts.append((act.verb, answer.accepted, answer.reason))

    def final_state(self) -> dict[str, Any]:
        return {
            "positions": self.positions,
            "verdicts": [f"{verb}:{ok}:{reason}" for verb, ok, reason in self.verdicts],
            "percepts": self.percepts,
        }


def _world(seed: int = 3) -> World:
    return World.create(
        load_map("test"),
        seed=seed,
        roster={"walker": {"team": "red", "class": "assault", "start": "r1"}},
    )


async def test_agent_moves_by_acts_and_learns_its_position_from_percepts() -> None:
    walker = Walker("walker", route=["m1", "m3"])
    result = await run_actors([walker], ticks=30, world=_world())
    state = result.final_states["walker"]
    assert "r1" == state["positions"][0]  # the percept sent before tick 1
    assert "m3" == state["positions"][-1]
    assert "m1" in state["positions"]
    assert all(v.startswith("move:True") for v in state["verdicts"])
    # One before tick 1 and one after each tick, handled at the start of the next: the last
    # tick's percept has no next tick.
    assert 30 == state["percepts"]
    assert 0 == result.final_states["world"]["acts_rejected"]


async def test_invalid_acts_are_rejected_with_the_worlds_reason() -> None:
    bad = [
        Act(recipient="world", verb="move", args={"waypoint": "b2"}),  # not linked to r1
        Act(recipient="world", verb="dance"),
        Act(recipient="world", verb="fire", args={"target": "nobody"}),
    ]
    walker = Walker("walker", route=[], extra_acts=bad)
    result = await run_actors([walker], ticks=5, world=_world())
    verdicts = result.final_states["walker"]["verdicts"]
    assert 3 == len(verdicts)
    assert all(":False:" in verdict for verdict in verdicts)
    assert all(verdict.split(":False:")[1] for verdict in verdicts), verdicts
    assert 3 == result.final_states["world"]["acts_rejected"]


async def test_an_agent_without_a_body_cannot_act_in_the_world() -> None:
    ghost = Walker("ghost", route=["m1"])
    result = await run_actors([ghost], ticks=3, world=_world())
    (verdict,) = result.final_states["ghost"]["verdicts"]
    assert verdict.startswith("move:False:")
    assert "ghost" in verdict
    assert 0 == result.final_states["ghost"]["percepts"]


async def test_same_seed_gives_the_same_run_through_the_world_actor() -> None:
    runs = []
    for _ in range(2):
        walker = Walker("walker", route=["m1", "c", "m4"])
        runs.append(await run_actors([walker], ticks=25, world=_world(seed=9)))
    assert runs[0].final_states == runs[1].final_states
