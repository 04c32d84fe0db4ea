"""The Killzone bot's domain in small scripted worlds: the squad's corridor, the "nearby" area
group and the class abilities, each with the shipped ``bot.htn`` against a real world."""

from __future__ import annotations

from typing import Any

from warband.agents import Agent, Role
from warband.agents.bot import bot_role
from warband.planning import parse_domain
from warband.testing import run_actors
from warband.world import World, load_map

TEST_MAP = load_map("test")

SCRIPTED_SQUAD = """
(:domain scripted_squad)
(:primitive !order ?member ?task ?arg)
(:primitive !start_command_sequence ?member)
(:primitive !end_command_sequence ?member)
(:primitive !remember ?fact ?member)
(:primitive !idle ?ticks)

(:method (behave)
  (:branch "send the member along the corridor"
    (and (member ?m) (corridor ?waypoints) (goal ?goal) (not (sent ?m)))
    ((!start_command_sequence ?m)
     (!order ?m restrict ?waypoints)
     (!order ?m goto ?goal)
     (!end_command_sequence ?m)
     (!remember sent ?m)))
  (:branch "wait"
    ()
    ((!idle 1))))
"""


class Tracked(Agent):
    """A bot whose final state holds the waypoints it stood at while restricted to a corridor,
    up to its goal (``goal`` fact), and its remembered facts."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.visited: list[str] = []

    def on_tick(self, tick: int) -> None:
        super().on_tick(tick)
        facts = self.memory.facts
        if not facts.facts("allowed_waypoint") or "b2" in self.visited:
            return
        for fact in facts.facts("at"):
            if fact[1] == self.id and (not self.visited or self.visited[-1] != fact[2]):
                self.visited.append(str(fact[2]))

    def final_state(self) -> dict[str, Any]:
        facts = self.memory.facts
        return {
            **super().final_state(),
            "visited": list(self.visited),
            "allowed": sorted(str(f[1]) for f in facts.facts("allowed_waypoint")),
        }


def _world(roster: dict[str, dict[str, Any]]) -> World:
    return World.create(TEST_MAP, seed=1, roster=roster)


async def test_a_bot_ordered_into_a_corridor_walks_only_the_corridors_waypoints() -> None:
    # The shortest way from c to b2 goes by m4; the corridor sends the bot round by m3 and b1.
    corridor = "c,m3,b1,b2"
    squad = Agent(
        "squad-1",
        Role("squad", parse_domain(SCRIPTED_SQUAD)),
        subordinates=["bot-1"],
        facts=[("member", "bot-1"), ("corridor", corridor), ("goal", "b2")],
        team="red",
    )
    bot = Tracked("bot-1", bot_role(TEST_MAP), superior="squad-1", team="red")
    roster = {"bot-1": {"team": "red", "class": "assault", "start": "c"}}
    result = await run_actors([squad, bot], ticks=60, world=_world(roster))
    state = result.final_states["bot-1"]
    assert "b2" == state["visited"][-1], state["visited"]
    assert ["c", "m3", "b1", "b2"] == state["visited"]
    assert sorted(corridor.split(",")) == state["allowed"]
