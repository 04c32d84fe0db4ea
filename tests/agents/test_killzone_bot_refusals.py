"""The Killzone bot and what the world refuses: position picking keeps to the waypoints the bot
can reach now (no closed door on the way), a spot the world refused a move towards is not picked
again at once, and a medic's heal refused because the mate needs none ends that request. Each
runs the shipped ``bot.htn`` against a real world, in one process."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from warband.agents import Agent, Role
from warband.agents.agent import REFUSAL_MEMORY
from warband.agents.bot import NEARBY_GROUP, RECENT_TICKS, REFUSED_SPOT_TICKS, AreaGroups, bot_role
from warband.messaging import Act
from warband.planning import parse_domain
from warband.testing import run_actors
from warband.values import Value
from warband.world import (
    ActVerdict,
    World,
    build_strategic_graph,
    map_from_data,
    pick_positions,
)

ALL_ROUND = {d: 1.0 for d in ("n", "ne", "e", "se", "s", "sw", "w", "nw")}

DOOR_MAP = map_from_data(
    {
        "name": "bunker",
        "teams": ["red", "blue"],
        "waypoints": [
            {"id": "open", "pos": [0.0, 0.0]},
            {"id": "bunker", "pos": [0.0, 6.0], "cover": ALL_ROUND},
            {"id": "crate", "pos": [0.0, -6.0], "cover": {d: 0.5 for d in ALL_ROUND}},
            {"id": "east", "pos": [8.0, 0.0]},
        ],
        "links": [["open", "bunker"], ["open", "crate"], ["open", "east"]],
        "markers": [
            {"id": "spawn-red", "kind": "spawn", "waypoint": "open", "team": "red"},
            {"id": "spawn-blue", "kind": "spawn", "waypoint": "east", "team": "blue"},
        ],
        "objects": [{"id": "bunker-door", "kind": "door", "link": ["open", "bunker"]}],
    },
    source="<bunker test map>",
)
"""A bot in the open; a bunker (full cover) behind a closed door a link away; a crate (half
cover) a link away the other side; an enemy 8 units east."""

SHOOTER = """
(:domain shooter)
(:constant @team)
(:primitive !fire ?target)
(:primitive !reload)
(:primitive !idle ?ticks)
(:method (behave)
  (:branch "fire at an enemy in sight"
    (and (sees ?enemy ?where ?distance ?team) (call ne ?team @team) (weapon ?w) (ammo ?w ?n)
         (call gt ?n 0))
    ((!fire ?enemy)))
  (:branch "reload"
    (weapon ?w)
    ((!reload)))
  (:branch "wait"
    ()
    ((!idle 1))))
"""

CALLER = """
(:domain caller)
(:fact asked)
(:constant @self)
(:primitive !broadcast ?group ?topic ?a ?b ?c)
(:primitive !remember ?fact)
(:primitive !idle ?ticks)
(:method (behave)
  (:branch "ask the medics nearby for a heal, once"
    (and (nearby_group ?g) (at @self ?here) (tick ?now) (not (asked)))
    ((!broadcast nearby hurt ?here 40 ?now) (!remember asked)))
  (:branch "wait"
    ()
    ((!idle 1))))
"""
"""A team mate at full health that asks the medics nearby for a heal all the same."""


class Logged(Agent):
    """An agent whose final state holds the waypoints it stood at and the Acts it sent."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.visited: list[str] = []
        self.acts: list[tuple[int, str, dict[str, Value]]] = []

    def on_tick(self, tick: int) -> None:
        super().on_tick(tick)
        for fact in self.memory.facts.facts("at"):
            if fact[1] == self.id and (not self.visited or self.visited[-1] != fact[2]):
                self.visited.append(str(fact[2]))

    def send(self, message: Any) -> Any:
        if isinstance(message, Act):
            self.acts.append((self.tick, message.verb, dict(message.args)))
        return super().send(message)

    def final_state(self) -> dict[str, Any]:
        return {**super().final_state(), "visited": self.visited, "acts": self.acts}


def _moves_to(state: Mapping[str, Any], waypoint: str) -> list[int]:
    """The ticks at which the agent sent a move to ``waypoint``."""
    return [
        tick
        for tick, verb, args in state["acts"]
        if verb == "move" and args == {"waypoint": waypoint}
    ]


def _wound(world: World, shooter: str, victim: str, *, below: int) -> None:
    """Fire ``shooter`` at ``victim`` (public acts, stepping the world) until its health is
    below ``below``."""
    for _ in range(100):
        health = next(int(f[1]) for f in world.percepts_for(victim) if f[0] == "health")  # type: ignore[arg-type]
        if health < below:
            return
        verdict = world.submit(shooter, "fire", {"target": victim})
        if not verdict.accepted:
            assert world.submit(shooter, "reload", {}).accepted, verdict.reason
        world.step()
    raise AssertionError(f"{shooter} never wounded {victim} below {below}")


def test_position_picking_leaves_out_a_spot_behind_a_closed_door() -> None:
    enemy = [DOOR_MAP.position("east")]
    shut = DOOR_MAP.closed_links({})
    assert [("bunker", "open")] == list(shut)
    anywhere = pick_positions(DOOR_MAP, origin="open", behaviour="defend", threats=enemy)
    reachable = pick_positions(
        DOOR_MAP, origin="open", behaviour="defend", threats=enemy, blocked_links=shut
    )
    assert "bunker" == anywhere[0].waypoint
    assert "bunker" not in [c.waypoint for c in reachable]
    assert "crate" == reachable[0].waypoint


async def test_a_hurt_bot_under_fire_takes_cover_it_can_reach_not_behind_a_closed_door() -> None:
    world = World.create(
        DOOR_MAP,
        seed=1,
        roster={
            "red-1": {"team": "red", "class": "assault", "start": "open"},
            "blue-1": {"team": "blue", "class": "assault", "start": "east"},
        },
    )
    _wound(world, "blue-1", "red-1", below=85)
    assert not world.is_open("bunker-door")
    shooter = Agent("blue-1", Role("shooter", parse_domain(SHOOTER)), team="blue")
    bot = Logged("red-1", bot_role(DOOR_MAP), team="red")
    result = await run_actors([shooter, bot], ticks=6, world=world)
    state = result.final_states["red-1"]
    assert [] == _moves_to(state, "bunker"), state["acts"]
    assert ["open", "crate"] == state["visited"][:2], state["visited"]


class GuardedWorld(World):
    """A world that refuses every move onto ``crate`` (as it would one across a door that
    closed after the bot picked its spot)."""

    def submit(
        self, agent_id: str, verb: str, args: Mapping[str, Value] | None = None
    ) -> ActVerdict:
        if verb == "move" and args is not None and args.get("waypoint") == "crate":
            return ActVerdict(False, "the crate is out of bounds (test)")
        return super().submit(agent_id, verb, args)


CRATE_MAP = map_from_data(
    {
        "name": "crate",
        "teams": ["red", "blue"],
        "waypoints": [
            {"id": "open", "pos": [0.0, 0.0]},
            {"id": "crate", "pos": [0.0, 6.0], "cover": {"e": 1.0}},
            {"id": "far", "pos": [32.0, 0.0]},
        ],
        "links": [["open", "crate"], ["open", "far"]],
        "markers": [
            {"id": "spawn-red", "kind": "spawn", "waypoint": "open", "team": "red"},
            {"id": "spawn-blue", "kind": "spawn", "waypoint": "far", "team": "blue"},
        ],
    },
    source="<crate test map>",
)
"""A bot in the open, a crate with cover a link away (its attack position), an enemy 32 units
east: beyond close range, within reach."""


async def test_a_bot_refused_a_move_to_its_attack_position_does_not_pick_it_again_at_once() -> None:
    world = GuardedWorld.create(
        CRATE_MAP,
        seed=1,
        roster={
            "red-1": {"team": "red", "class": "assault", "start": "open"},
            "blue-1": {"team": "blue", "class": "civilian", "start": "far"},
        },
    )
    bot = Logged("red-1", bot_role(CRATE_MAP), team="red")
    result = await run_actors([bot], ticks=1 + REFUSED_SPOT_TICKS, world=world)
    state = result.final_states["red-1"]
    assert [1] == _moves_to(state, "crate"), state["acts"]
    assert ["fire"] == sorted({verb for tick, verb, args in state["acts"] if tick > 1})
    assert 100 > next(int(f[1]) for f in world.percepts_for("blue-1") if f[0] == "health")  # type: ignore[arg-type]


async def test_a_medic_refused_a_heal_because_the_mate_is_not_wounded_does_not_try_again() -> None:
    # The mate at full health asks for a heal; the medic stands next to it.
    world = World.create(
        DOOR_MAP,
        seed=1,
        roster={
            "red-1": {"team": "red", "class": "assault", "start": "crate"},
            "red-2": {"team": "red", "class": "medic", "start": "crate"},
        },
    )
    graph = build_strategic_graph(DOOR_MAP)
    caller = Agent(
        "red-1",
        Role(
            "caller",
            parse_domain(CALLER),
            reporter=lambda: AreaGroups(graph),
            facts=[NEARBY_GROUP],
        ),
        team="red",
    )
    medic = Logged("red-2", bot_role(DOOR_MAP), team="red")
    result = await run_actors([caller, medic], ticks=2 + RECENT_TICKS, world=world)
    uses = [t for t, verb, args in result.final_states["red-2"]["acts"] if verb == "use"]
    assert 1 == len(uses), result.final_states["red-2"]["acts"]


def test_a_refused_heal_is_remembered_as_long_as_the_call_for_it_is_news() -> None:
    assert RECENT_TICKS <= REFUSAL_MEMORY
    assert REFUSED_SPOT_TICKS <= REFUSAL_MEMORY
