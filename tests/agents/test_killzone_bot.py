"""The Killzone bot's domain in small scripted worlds: the squad's corridor, the "nearby" area
group and the class abilities, each with the shipped ``bot.htn`` against a real world."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

from warband.agents import Agent, Role
from warband.agents.bot import AreaGroups, BotReports, bot_functions, bot_role
from warband.agents.squad import SquadReports
from warband.messaging import Act, ActResult, Order, Percept, configure_logging
from warband.planning import FactDB, parse_domain
from warband.testing import Drive, run_actors
from warband.values import Value
from warband.world import (
    Map,
    World,
    build_strategic_graph,
    load_map,
    map_from_data,
    waypoint_path,
)

TEST_MAP = load_map("test")
WARZONE = load_map("warzone")

SCRIPTED_SQUAD = """
(:domain scripted_squad)
(:fact member ?bot)
(:fact corridor ?waypoints)
(:fact goal ?waypoint)
(:fact sent ?bot)
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
    corridor = ("c", "m3", "b1", "b2")
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
    assert sorted(corridor) == state["allowed"]


# --- self-preservation, class abilities, default combat, the "nearby" area group -------------

SHOOTER = """
(:domain shooter)
(:constant @team)
(:primitive !fire ?target)
(:primitive !idle ?ticks)
(:method (behave)
  (:branch "fire at an enemy in sight"
    (and (sees ?enemy ?where ?distance ?team) (call ne ?team @team))
    ((!fire ?enemy)))
  (:branch "wait"
    ()
    ((!idle 1))))
"""

IDLE = """
(:domain idle)
(:primitive !idle ?ticks)
(:method (behave)
  (:branch "wait"
    ()
    ((!idle 1))))
"""

ORDERING_SQUAD = """
(:domain ordering_squad)
(:fact member ?bot)
(:fact task ?task ?arg)
(:fact sent ?bot)
(:primitive !order ?member ?task ?arg)
(:primitive !remember ?fact ?member)
(:primitive !idle ?ticks)
(:method (behave)
  (:branch "give the member its order"
    (and (member ?m) (task ?task ?arg) (not (sent ?m)))
    ((!order ?m ?task ?arg) (!remember sent ?m)))
  (:branch "wait"
    ()
    ((!idle 1))))
"""


class Watched(Agent):
    """An agent whose final state holds every waypoint it stood at and the status facts its
    team mates broadcast to it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.visited: list[str] = []
        self.heard: set[tuple[str, str]] = set()

    def on_tick(self, tick: int) -> None:
        super().on_tick(tick)
        facts = self.memory.facts
        for fact in facts.facts("at"):
            if fact[1] == self.id and (not self.visited or self.visited[-1] != fact[2]):
                self.visited.append(str(fact[2]))
        self.heard |= {(str(f[1]), str(f[2])) for f in facts.facts("status")}

    def final_state(self) -> dict[str, Any]:
        return {**super().final_state(), "visited": self.visited, "heard": sorted(self.heard)}


def _wound(world: World, shooter: str, victim: str, *, below: int) -> int:
    """Fire ``shooter`` at ``victim`` (public acts, stepping the world) until its health is
    below ``below``; return that health."""
    for _ in range(100):
        health = _health(world, victim)
        if health < below:
            return health
        verdict = world.submit(shooter, "fire", {"target": victim})
        if not verdict.accepted:
            assert world.submit(shooter, "reload", {}).accepted, verdict.reason
        world.step()
    raise AssertionError(f"{shooter} never wounded {victim} below {below}")


def _health(world: World, agent: str) -> int:
    return next(int(f[1]) for f in world.percepts_for(agent) if f[0] == "health")  # type: ignore[arg-type]


def _disguise(world: World, agent: str) -> None:
    # A disguised saboteur looks like a team mate to the other team: after wounding a bot it
    # is no threat the bot would fight or flee.
    assert world.submit(agent, "use", {"ability": "disguise"}).accepted
    world.step()


def _at(world: World, agent: str) -> str:
    return next(str(f[2]) for f in world.percepts_for(agent) if f[0] == "at" and f[1] == agent)


async def test_a_medic_heals_a_hurt_team_mate_that_asked_the_bots_nearby() -> None:
    world = _world(
        {
            "red-1": {"team": "red", "class": "assault", "start": "r1"},
            "red-2": {"team": "red", "class": "medic", "start": "r2"},
            "blue-spy": {"team": "blue", "class": "saboteur", "start": "m1"},
        }
    )
    wounded = _wound(world, "blue-spy", "red-1", below=80)
    _disguise(world, "blue-spy")
    bots = [Watched(a, bot_role(TEST_MAP), team="red") for a in ("red-1", "red-2")]
    result = await run_actors(bots, ticks=40, world=world)
    assert ["red-1", "hurt"] in result.final_states["red-2"]["heard"]
    assert _health(world, "red-1") > wounded


async def test_a_hurt_bots_call_reaches_the_team_mates_in_its_area_only() -> None:
    # r1 and r2 are one area of the test map's strategic graph; c is in another.
    world = _world(
        {
            "red-1": {"team": "red", "class": "assault", "start": "r1"},
            "red-2": {"team": "red", "class": "assault", "start": "r2"},
            "red-3": {"team": "red", "class": "assault", "start": "c"},
            "blue-spy": {"team": "blue", "class": "saboteur", "start": "m1"},
        }
    )
    _wound(world, "blue-spy", "red-1", below=80)
    _disguise(world, "blue-spy")
    graph = build_strategic_graph(TEST_MAP)
    assert graph.area_of("r1") == graph.area_of("r2") != graph.area_of("c")
    listener = Role("listener", parse_domain(IDLE), reporter=lambda: AreaGroups(graph))
    actors = [
        Watched("red-1", bot_role(TEST_MAP), team="red"),
        Watched("red-2", listener, team="red"),
        Watched("red-3", listener, team="red"),
    ]
    result = await run_actors(actors, ticks=4, world=world)
    assert ["red-1", "hurt"] in result.final_states["red-2"]["heard"]
    assert ["red-1", "hurt"] not in result.final_states["red-3"]["heard"]


async def test_a_hurt_bot_under_fire_moves_to_a_waypoint_with_cover_from_the_threat() -> None:
    world = _world(
        {
            "red-1": {"team": "red", "class": "assault", "start": "c"},
            "blue-1": {"team": "blue", "class": "medic", "start": "m3"},
        }
    )
    _wound(world, "blue-1", "red-1", below=85)
    shooter = Agent("blue-1", Role("shooter", parse_domain(SHOOTER)), team="blue")
    bot = Watched("red-1", bot_role(TEST_MAP), team="red")
    result = await run_actors([shooter, bot], ticks=6, world=world)
    visited = result.final_states["red-1"]["visited"]
    # m1 is the waypoint next to c with cover from m3; c, where the bot stood, has none.
    assert "m1" in visited, visited
    assert 0.5 == TEST_MAP.waypoint("m1").cover_from(TEST_MAP.position("m3"))
    assert 0.0 == TEST_MAP.waypoint("c").cover_from(TEST_MAP.position("m3"))


async def test_a_badly_hurt_outnumbered_bot_falls_back_to_its_spawn() -> None:
    roster: dict[str, dict[str, Any]] = {
        "red-1": {"team": "red", "class": "assault", "start": "c"},
        "blue-spy": {"team": "blue", "class": "saboteur", "start": "m1"},
    }
    roster |= {f"blue-{n}": {"team": "blue", "class": "civilian", "start": "m4"} for n in range(3)}
    world = _world(roster)
    _wound(world, "blue-spy", "red-1", below=40)
    _disguise(world, "blue-spy")
    bot = Watched("red-1", bot_role(TEST_MAP), team="red")
    result = await run_actors([bot], ticks=12, world=world)
    visited = result.final_states["red-1"]["visited"]
    assert {"r1", "r2"} & set(visited), visited


async def test_an_engineer_places_a_turret_at_the_spot_it_defends() -> None:
    world = _world({"red-1": {"team": "red", "class": "engineer", "start": "r1"}})
    squad = Agent(
        "squad-1",
        Role("squad", parse_domain(ORDERING_SQUAD)),
        subordinates=["red-1"],
        facts=[("member", "red-1"), ("task", "defend", "m1")],
        team="red",
    )
    bot = Agent("red-1", bot_role(TEST_MAP), superior="squad-1", team="red")
    await run_actors([squad, bot], ticks=12, world=world)
    turrets = world.snapshot()["turrets"]
    assert "m1" == turrets["turret-red-1"]["waypoint"]


async def test_a_tactician_in_a_squad_with_no_order_captures_the_nearest_tsp() -> None:
    # It starts on the capture point; a bot on its own would take that instead.
    world = _world({"red-1": {"team": "red", "class": "tactician", "start": "c"}})
    squad = Agent(
        "squad-1",
        Role("squad", parse_domain(ORDERING_SQUAD)),
        subordinates=["red-1"],
        facts=[("member", "red-1"), ("task", "join", "squad-1")],
        team="red",
    )
    bot = Agent("red-1", bot_role(TEST_MAP), team="red")
    await run_actors([squad, bot], ticks=12, world=world)
    assert "red" == world.owner_of("tsp-south")


def _crate_map(name: str, enemy: str, enemy_x: float) -> Map:
    return map_from_data(
        {
            "name": name,
            "teams": ["red", "blue"],
            "waypoints": [
                {"id": "open", "pos": [0.0, 0.0]},
                {"id": "crate", "pos": [0.0, 6.0], "cover": {"e": 1.0}},
                {"id": enemy, "pos": [enemy_x, 0.0]},
            ],
            "links": [["open", "crate"], ["open", enemy]],
            "markers": [
                {"id": "spawn-red", "kind": "spawn", "waypoint": "open", "team": "red"},
                {"id": "spawn-blue", "kind": "spawn", "waypoint": enemy, "team": "blue"},
            ],
        },
        source=f"<{name} test map>",
    )


CRATE_MAP = _crate_map("crate", "far", 32.0)
"""A bot in the open, a low crate (cover from the east, no wall: it does not block sight) a
link away, and an enemy 32 units east: beyond close range, within reach."""


async def test_default_combat_fires_on_the_way_to_a_position_picked_for_the_attack() -> None:
    world = World.create(
        CRATE_MAP,
        seed=1,
        roster={
            "red-1": {"team": "red", "class": "assault", "start": "open"},
            "blue-1": {"team": "blue", "class": "civilian", "start": "far"},
        },
    )
    bot = Watched("red-1", bot_role(CRATE_MAP), team="red")
    result = await run_actors([bot], ticks=4, world=world)
    assert ["open", "crate"] == result.final_states["red-1"]["visited"]
    assert 100 > _health(world, "blue-1")  # it fired on the way


# --- the squad's corridor: below close combat, and the move it restricts starts at once ------


class MoveTimed(Agent):
    """A bot whose final state holds the tick it took its corridor and the tick of its first
    move act."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.restricted_at: int | None = None
        self.first_move_at: int | None = None

    def on_tick(self, tick: int) -> None:
        super().on_tick(tick)
        if self.restricted_at is None and self.memory.facts.facts("allowed_waypoint"):
            self.restricted_at = tick

    def send(self, message: Any) -> Any:
        if isinstance(message, Act) and message.verb == "move" and self.first_move_at is None:
            self.first_move_at = self.tick
        return super().send(message)

    def final_state(self) -> dict[str, Any]:
        return {
            **super().final_state(),
            "restricted_at": self.restricted_at,
            "first_move_at": self.first_move_at,
        }


async def test_a_bot_starts_the_move_its_corridor_restricts_in_the_tick_it_takes_the_corridor() -> (
    None
):
    squad = Agent(
        "squad-1",
        Role("squad", parse_domain(SCRIPTED_SQUAD)),
        subordinates=["bot-1"],
        facts=[("member", "bot-1"), ("corridor", ("c", "m3", "b1", "b2")), ("goal", "b2")],
        team="red",
    )
    bot = MoveTimed("bot-1", bot_role(TEST_MAP), superior="squad-1", team="red")
    roster = {"bot-1": {"team": "red", "class": "assault", "start": "c"}}
    result = await run_actors([squad, bot], ticks=12, world=_world(roster))
    state = result.final_states["bot-1"]
    assert state["restricted_at"] is not None, state
    assert state["restricted_at"] == state["first_move_at"], state


def _close_combat_facts(
    order: tuple[Value, ...] = ("order", "o-1", "squad-1", "restrict", "c,m3,b1,b2"),
) -> FactDB:
    facts = FactDB()
    for fact in (
        ("tick", 5),
        ("self", "bot-1", "red", "assault"),
        ("state", "alive"),
        ("at", "bot-1", "c"),
        ("health_share", 100),
        ("weapon", "machine_gun"),
        ("ammo", "machine_gun", 30),
        ("spare_ammo", "machine_gun", 90),
        ("close_threat", "blue-1", 10.0),
        ("nearest_threat", "blue-1", "m3", 10.0),
        order,
    ):
        facts.assert_fact(str(fact[0]), *fact[1:])
    return facts


def test_a_bot_in_close_combat_takes_a_corridor_order_at_once_and_fights_on_its_way() -> None:
    # A corridor order takes no time: while it waited below close combat, the order behind it
    # (here a goto) waited too, and the bot fought in place.
    decider = bot_role(TEST_MAP).decider({"self": "bot-1", "team": "red"})
    decision = decider.decide(_close_combat_facts(), None, budget=20_000)
    assert decision is not None and decision.plan is not None
    assert ["!restrict", "!clear_order"] == [task.name for task in decision.plan.steps]
    goto = ("order", "o-2", "squad-1", "goto", "b2")
    decision = decider.decide(_close_combat_facts(goto), None, budget=20_000)
    assert decision is not None and decision.plan is not None
    assert "close combat on the way to the order's place" == decision.plan.branches[0]
    steps = [task.name for task in decision.plan.steps]
    assert "!fire" in steps and "!go" in steps, steps


def test_a_decision_writes_out_its_tree_only_when_messages_are_traced(tmp_path: Path) -> None:
    trees = []
    for log_dir in (None, tmp_path):
        configure_logging(log_dir, "tests")
        decider = bot_role(TEST_MAP).decider({"self": "bot-1", "team": "red"})
        fighting = _close_combat_facts(("order", "o-2", "squad-1", "hold", "c"))
        decision = decider.decide(fighting, None, budget=20_000)
        assert decision is not None
        trees.append(decision.tree)
    configure_logging(None, "tests")
    untraced, traced = trees
    assert "" == untraced
    assert traced.startswith("behave\n") and "(!fire blue-1)" in traced, traced


# --- respawning: the spawn nearest the squad ---------------------------------------------------


class Respawning(Agent):
    """A bot whose final state holds the waypoints the world respawned it at."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.respawned: list[str] = []

    def on_tick(self, tick: int) -> None:
        super().on_tick(tick)
        self.respawned += [str(e[2]) for e in self.events if e[:2] == ("respawned", self.id)]

    def final_state(self) -> dict[str, Any]:
        return {**super().final_state(), "respawned": list(self.respawned)}


async def test_a_dead_bot_of_a_squad_respawns_at_the_spawn_nearest_its_squad() -> None:
    # red-2 holds m2: r2 is one link away, r1 two (the world alone picks r1 on this seed).
    world = _world(
        {
            "red-1": {"team": "red", "class": "assault", "start": "r1"},
            "red-2": {"team": "red", "class": "assault", "start": "m2"},
            "blue-spy": {"team": "blue", "class": "saboteur", "start": "m1"},
        }
    )
    _wound(world, "blue-spy", "red-1", below=1)
    assert ("state", "downed") in world.percepts_for("red-1")
    graph = build_strategic_graph(TEST_MAP)
    squad = Agent(
        "squad-1",
        Role("squad", parse_domain(IDLE), reporter=SquadReports),
        subordinates=["red-1", "red-2"],
        team="red",
    )
    holder = Agent(
        "red-2",
        Role("holder", parse_domain(IDLE), reporter=lambda: BotReports(graph)),
        superior="squad-1",
        team="red",
    )
    victim = Respawning(
        "red-1", bot_role(TEST_MAP), superior="squad-1", team="red", facts=[("squad", "squad-1")]
    )
    result = await run_actors([squad, holder, victim], ticks=24, world=world)
    assert ["r2"] == result.final_states["red-1"]["respawned"]


# --- on its own: each mode's objective (a freelance bot, or one between orders) ---------------


def _alone(
    *facts: tuple[Any, ...], game_map: Map = TEST_MAP, at: str = "r1"
) -> list[tuple[str, dict[str, Any]]]:
    """The acts of a freelance bot at ``at`` (r1 of the test map), given the mode's facts."""
    body = [("self", "red-1", "red", "assault"), ("state", "alive"), ("at", "red-1", at)]
    percept = Percept(recipient="red-1", facts=[list(f) for f in (*body, *facts)])
    with Drive(Agent("red-1", bot_role(game_map), team="red")) as drive:
        sent = drive.tick(percept)
    return [(a.verb, a.args) for a in sent if isinstance(a, Act)]


def test_a_bot_on_its_own_goes_for_each_modes_objective() -> None:
    # Search and Retrieve: the object lies at m3 (r1 -> m1 -> m3).
    retrieve = _alone(("game_mode", "search_and_retrieve"), ("object_at", "box", "m3"))
    assert [("move", {"waypoint": "m1"})] == retrieve
    # Assassination, the red VIP itself: it hides at the hiding spot, s (r1 -> r2 -> m2 -> d -> s,
    # the store's door open).
    hide = _alone(
        ("game_mode", "assassination"), ("role", "red", "defend"), ("vip", "red-1", "red"),
        ("open", "store-door", True),
    )  # fmt: skip
    assert [("move", {"waypoint": "r2"})] == hide
    # Assassination, attackers: they hunt the enemy VIP where they know it is.
    hunt = _alone(
        ("game_mode", "assassination"), ("role", "red", "attack"), ("vip", "blue-9", "blue"),
        ("vip_at", "blue-9", "b1"),
    )  # fmt: skip
    assert [("move", {"waypoint": "m1"})] == hunt
    # Capture and Hold, as before: the nearest point the team does not hold.
    assert [("move", {"waypoint": "m1"})] == _alone(("game_mode", "capture_and_hold"))


def _hunting(*facts: tuple[Any, ...], at: str = "a2") -> list[tuple[str, dict[str, Any]]]:
    """The acts of red-1 on Warzone at ``at`` in Body Count, with nothing in sight."""
    return _alone(("game_mode", "body_count"), *facts, game_map=WARZONE, at=at)


def test_a_bot_on_its_own_in_body_count_hunts_where_the_enemies_are() -> None:
    # Nothing in sight, nothing heard: towards the enemy's nearest spawn (a2 -> ... -> i2).
    hunt = bot_functions(WARZONE)["hunt_spot"]
    alone = FactDB()
    alone.assert_fact("self", "red-1", "red", "assault")
    assert "i2" == hunt(alone, "a2")
    assert None is hunt(alone, "i2")  # there already: it waits for the enemies to come
    assert [("move", {"waypoint": "b2"})] == _hunting()
    # Gunfire heard at e3: towards it (c3 -> c2 -> d2 -> e2 -> e3), not to the capture point
    # there: Body Count's capture points count for nothing.
    alone.assert_fact("heard", "gunfire", "e3")
    assert "e3" == hunt(alone, "c3")
    assert [("move", {"waypoint": "c2"})] == _hunting(("heard", "gunfire", "e3"), at="c3")
    # An enemy seen lately, gone out of sight: where it was last seen, before any gunfire.
    assert [("move", {"waypoint": "b3"})] == _hunting(
        ("tick", 12), ("seen_at", "blue-4", "b3", 10), ("heard", "gunfire", "e3"), at="a3"
    )
    # A squad's bot waits for its squad's next order instead (idling sends no act).
    assert [] == _hunting(("squad", "squad-1"))


def test_a_bot_with_an_order_fights_a_close_enemy_on_the_way_to_the_orders_place() -> None:
    facts = [
        ("self", "red-1", "red", "assault"), ("state", "alive"), ("at", "red-1", "r1"),
        ("position", 3.0, 5.0), ("health", 150), ("max_health", 150),
        ("weapon", "machine_gun"), ("ammo", "machine_gun", 60),
        ("sees", "blue-1", "m1", 7.0, "blue"),
    ]  # fmt: skip
    bot = Agent("red-1", bot_role(TEST_MAP), superior="squad-1", team="red")
    order = Order(recipient="red-1", sender="squad-1", task="goto", args=["r2"])
    with Drive(bot) as drive:
        sent = drive.tick(order, Percept(recipient="red-1", facts=[list(f) for f in facts]))
    acts = [(a.verb, a.args) for a in sent if isinstance(a, Act)]
    # Walks towards r2, its order's place, and shoots as it goes (not: stands and fights).
    assert [("move", {"waypoint": "r2"}), ("fire", {"target": "blue-1"})] == acts


def _in_a_crowd(me: str) -> list[tuple[str, str]]:
    """What bot ``me`` of four red bots on m1, fighting blue-1 close by at m3, sends in one
    tick with no order."""
    crowd = [f"red-{n}" for n in range(1, 5)]
    facts = [
        ("self", me, "red", "assault"), ("state", "alive"), ("at", me, "m1"),
        ("position", 10.0, 5.0), ("health", 150), ("max_health", 150),
        ("weapon", "machine_gun"), ("ammo", "machine_gun", 60),
        ("sees", "blue-1", "m3", 10.0, "blue"),
        *(("sees", mate, "m1", 0.0, "red") for mate in crowd if mate != me),
    ]  # fmt: skip
    bot = Agent(me, bot_role(TEST_MAP), team="red")
    with Drive(bot) as drive:
        sent = drive.tick(Percept(recipient=me, facts=[list(f) for f in facts]))
    return [(a.verb, str(next(iter(a.args.values()), ""))) for a in sent if isinstance(a, Act)]


def test_a_crowd_in_close_combat_deals_out_the_attack_positions_and_fires_as_it_spreads() -> None:
    acts = {me: _in_a_crowd(me) for me in ("red-1", "red-2", "red-3", "red-4")}
    assert [("fire", "blue-1")] == acts["red-1"]  # the first by id holds the spot
    moves = {me: [arg for verb, arg in sent if verb == "move"] for me, sent in acts.items()}
    steps = [moves[me] for me in ("red-2", "red-3", "red-4")]
    assert all(len(step) == 1 for step in steps), acts  # each of the others steps off m1...
    assert len({step[0] for step in steps}) >= 2, acts  # ...and not all the same way
    assert all(("fire", "blue-1") in acts[me] for me in acts)  # and every one fires


def _percept(me: str, *facts: tuple[Any, ...], events: Any = ()) -> Percept:
    body = [
        ("self", me, "red", "assault"), ("state", "alive"), ("at", me, "r1"),
        ("position", 3.0, 5.0), ("max_health", 150),
        ("weapon", "machine_gun"), ("ammo", "machine_gun", 60),
    ]  # fmt: skip
    return Percept(
        recipient=me,
        facts=[list(f) for f in (*body, *facts)],
        events=[list(e) for e in events],
    )


def test_a_bot_shot_by_an_enemy_it_cannot_see_turns_to_the_gunfire() -> None:
    bot = Agent("red-1", bot_role(TEST_MAP), team="red")
    heard = ("heard", "gunfire", "m3")
    with Drive(bot) as drive:
        sent = drive.tick(
            _percept("red-1", ("health", 140), heard, events=[("damaged", "blue-1", 10)])
        )
    acts = [(a.verb, a.args) for a in sent if isinstance(a, Act)]
    assert [("look", {"waypoint": "m3"})] == acts


def _accepted(sent: list[Any]) -> list[ActResult]:
    """The world's acceptance of every Act in ``sent`` (a world that takes every act)."""
    return [
        ActResult(recipient=a.sender, reply_to=a.id, accepted=True)
        for a in sent
        if isinstance(a, Act)
    ]


def test_a_hurt_bot_in_cover_stays_there_while_the_enemy_it_lost_sight_of_is_near() -> None:
    bot = Agent("red-1", bot_role(TEST_MAP), superior="squad-1", team="red")
    order = Order(recipient="red-1", sender="squad-1", task="goto", args=["m2"])
    hurt = [("health", 50), ("crouched",)]
    with Drive(bot) as drive:
        sent = drive.tick(order, _percept("red-1", *hurt, ("sees", "blue-1", "m1", 7.0, "blue")))
        # blue-1 stepped behind a corner: the bot does not get up and go back out to its order
        stays = []
        for _ in range(6):
            sent = drive.tick(*_accepted(sent), _percept("red-1", *hurt))
            stays.append(sent)
        # ...until it has not seen it for a while
        leaves = drive.tick(*_accepted(sent), _percept("red-1", *hurt))
    getting_up = ("stand", "move")
    assert not [a for sent in stays for a in sent if isinstance(a, Act) and a.verb in getting_up]
    assert [a.verb for a in leaves if isinstance(a, Act)] == ["stand"]


def _crowd_facts(me: str, team: str, crowd: list[str], waypoint: str) -> FactDB:
    """What bot ``me`` of ``crowd`` (all of ``team``, on ``waypoint``) knows: itself, and
    every other member of the crowd in sight on that waypoint."""
    facts = FactDB()
    facts.assert_fact("self", me, team, "assault")
    for mate in crowd:
        if mate != me:
            facts.assert_fact("sees", mate, waypoint, 0.0, team)
    return facts


def test_escorts_in_a_crowd_stand_around_the_vip_on_places_of_their_own() -> None:
    spread_around = bot_functions(TEST_MAP)["spread_around"]
    crowd = [f"red-{n}" for n in range(1, 5)]

    # All four on m1, the VIP on c.
    places = [spread_around(_crowd_facts(me, "red", crowd, "m1"), "m1", "c") for me in crowd]
    assert places[0] is None  # the first by id stays
    assert 3 == len(set(places[1:])), places  # the others each take a place of their own...
    assert all(p == "c" or TEST_MAP.has_link("c", str(p)) for p in places[1:])  # ...by the VIP
    assert "m1" not in places


def test_a_crowd_walking_one_way_fans_out_over_parallel_ways_of_the_same_length() -> None:
    next_hop = bot_functions(WARZONE)["next_hop"]
    crowd = [f"red-{n}" for n in range(1, 5)]

    # All four on their spawn, bound for the centre.
    steps = [next_hop(_crowd_facts(me, "red", crowd, "a3"), "a3", "e3") for me in crowd]
    assert len(set(steps)) >= 2, steps  # not one blob along one path
    shortest = waypoint_path(WARZONE, "a3", "e3") or ()
    assert steps[0] == shortest[1]  # the first by id takes the shortest way
    for step in steps:  # the others a first step that keeps them on a way nearly as short
        onward = waypoint_path(WARZONE, str(step), "e3") or ()
        assert "a3" not in onward and len(onward) <= len(shortest)
    alone = FactDB()
    alone.assert_fact("self", "red-2", "red", "assault")
    assert shortest[1] == next_hop(alone, "a3", "e3")  # a bot on its own: the shortest way


def test_a_dead_bot_comes_back_as_a_class_its_team_is_short_of() -> None:
    spawn_class = bot_functions(WARZONE)["spawn_class"]

    def chosen(mine: str, **playing: int) -> object:
        facts = FactDB()
        facts.assert_fact("self", "red-5", "red", mine)
        for cls in ("assault", "engineer", "medic", "scout", "tactician"):
            facts.assert_fact("team_class", cls, playing.get(cls, 0))
        return spawn_class(facts, "red-5")

    # Eleven others: two tacticians and two engineers wanted (one for every six members).
    assert "tactician" == chosen("assault", assault=7, medic=3, engineer=1)
    assert "engineer" == chosen("assault", assault=6, medic=2, tactician=2, engineer=1)
    assert "engineer" == chosen("engineer", assault=7, tactician=3, engineer=1)  # keeps it
    assert "medic" == chosen("medic", assault=5, medic=2, tactician=2, engineer=2)  # enough
    assert None is spawn_class(FactDB(), "red-5")  # alive: the world tells no team_class


def test_a_scout_ordered_to_hold_a_spot_holds_the_sniping_spot_overlooking_it() -> None:
    sniping_spot = bot_functions(WARZONE)["sniping_spot"]
    for team, snipe in (("red", "b5"), ("blue", "h5")):  # mirror images: each its own side's
        facts = FactDB()
        facts.assert_fact("self", f"{team}-1", team, "scout")
        assert snipe == sniping_spot(facts, "e5")
    facts = [
        ("self", "red-4", "red", "scout"), ("state", "alive"), ("at", "red-4", "b4"),
        ("position", 14.0, 35.0), ("health", 80), ("max_health", 80),
        ("weapon", "sniper_rifle"), ("ammo", "sniper_rifle", 5),
    ]  # fmt: skip
    scout = Agent("red-4", bot_role(WARZONE), superior="squad-1", team="red")
    order = Order(recipient="red-4", sender="squad-1", task="defend", args=["e5"])
    with Drive(scout) as drive:
        sent = drive.tick(order, Percept(recipient="red-4", facts=[list(f) for f in facts]))
    assert [("move", {"waypoint": "b5"})] == [(a.verb, a.args) for a in sent if isinstance(a, Act)]


def test_a_bot_holding_a_spot_turns_to_where_an_enemy_just_went_out_of_sight() -> None:
    bot = Agent("red-1", bot_role(TEST_MAP), superior="squad-1", team="red")
    order = Order(recipient="red-1", sender="squad-1", task="defend", args=["r1"])
    healthy = ("health", 150)
    with Drive(bot) as drive:
        sent = drive.tick(order, _percept("red-1", healthy, ("sees", "blue-1", "m1", 7.0, "blue")))
        ticks = []
        for _ in range(5):  # blue-1 went out of sight: the bot finishes its shot, then looks
            sent = drive.tick(*_accepted(sent), _percept("red-1", healthy))
            ticks.append([(a.verb, a.args) for a in sent if isinstance(a, Act)])
    looks = [acts for acts in ticks if ("look", {"waypoint": "m1"}) in acts]
    assert 1 == len(looks), ticks  # once, to where blue-1 was last seen
    assert ticks.index(looks[0]) <= 1, ticks  # in the two ticks after it went


def test_escorts_of_a_vip_in_a_dead_end_spread_over_the_next_ring_of_waypoints_too() -> None:
    spread_around = bot_functions(WARZONE)["spread_around"]
    crowd = [f"blue-{n}" for n in range(1, 6)]

    places = [  # all five in the house with the VIP
        spread_around(_crowd_facts(me, "blue", crowd, "house-east"), "house-east", "house-east")
        for me in crowd[1:]
    ]
    # The house has one neighbour, its yard: the others stand a link further, not on top.
    assert {"house-east-yard", "g3", "h3"} <= set(places), places


def test_escorts_stay_within_two_links_of_their_vip_and_off_crowded_spots() -> None:
    functions = bot_functions(WARZONE)
    spread_around, escort_near = functions["spread_around"], functions["escort_near"]
    crowd = [f"blue-{n}" for n in range(1, 6)]

    def facts_of(me: str) -> FactDB:
        facts = _crowd_facts(me, "blue", crowd, "house-east")
        for defender in ("blue-8", "blue-9"):  # the squad defending the VIP holds its yard
            facts.assert_fact("sees", defender, "house-east-yard", 0.0, "blue")
        return facts

    places = [spread_around(facts_of(me), "house-east", "house-east") for me in crowd[1:]]
    assert "house-east-yard" not in places, places  # two team mates hold it already
    assert len(set(places)) == len(places), places  # a place of its own each
    assert all(escort_near(FactDB(), p, "house-east") for p in places), places
    # An escort three links out stays (it is near); four links out it catches up.
    rings = list(itertools.islice(WARZONE.rings("house-east"), 4))
    assert all(escort_near(FactDB(), w, "house-east") for w in rings[2])
    assert rings[3] and not any(escort_near(FactDB(), w, "house-east") for w in rings[3])
    # Around an entity on the move (the object's carrier at e3), one link.
    around_e3 = list(itertools.islice(WARZONE.rings("e3"), 2))
    assert all(escort_near(FactDB(), w, "e3") for w in around_e3[0])
    assert not any(escort_near(FactDB(), w, "e3") for w in around_e3[1])


def _mirrored(waypoint: str) -> str:
    """The Warzone waypoint's mirror image east-west (a1 <-> i1, house-west <-> house-east)."""
    if waypoint.startswith("house-"):
        return waypoint.replace("west", "@").replace("east", "west").replace("@", "east")
    return chr(ord("a") + ord("i") - ord(waypoint[0])) + waypoint[1:]


def test_the_teams_pick_positions_as_mirror_images_on_the_mirrored_map() -> None:
    # Spots that scored alike went to the smaller waypoint id, which is no mirror image of
    # itself: the west team fell back on a tie, the east team stepped forward (284 of the
    # pairs below picked asymmetrically). Now both step forward.
    functions = bot_functions(WARZONE)

    def facts(me: str, team: str, enemy: str, enemy_team: str, enemy_at: str) -> FactDB:
        known = FactDB()
        known.assert_fact("self", me, team, "assault")
        known.assert_fact("ammo", "rifle", 30)
        known.assert_fact("sees", enemy, enemy_at, 10.0, enemy_team)
        return known

    grid = sorted(w.id for w in WARZONE.waypoints if len(w.id) == 2)
    for here, there in itertools.permutations(grid, 2):
        red = facts("red-1", "red", "blue-1", "blue", there)
        blue = facts("blue-1", "blue", "red-1", "red", _mirrored(there))
        red_attack = functions["attack_spot"](red, here, there)
        blue_attack = functions["attack_spot"](blue, _mirrored(here), _mirrored(there))
        assert blue_attack == (red_attack and _mirrored(str(red_attack))), (here, there)
        red_cover = functions["cover_spot"](red, here, 15.0)
        blue_cover = functions["cover_spot"](blue, _mirrored(here), 15.0)
        assert blue_cover == (red_cover and _mirrored(str(red_cover))), (here, there)


def _crowding(team: str, here: str) -> FactDB:
    """Bot 3 of ``team`` on ``here`` with three team mates in sight there: a crowd to leave."""
    known = FactDB()
    known.assert_fact("self", f"{team}-3", team, "assault")
    for mate in (1, 2, 4):
        known.assert_fact("sees", f"{team}-{mate}", here, 1.0, team)
    return known


def test_the_teams_walk_mirror_images_on_the_mirrored_map() -> None:
    # Equal ways were taken by waypoint id: round a house, the west team went by its outer side
    # and the east team by its inner side (16 of the paths below), and a crowd fanning out took
    # its k-th step by id (912 of the pairs below differed). Now both by nearness to the centre.
    functions = bot_functions(WARZONE)
    ids = [w.id for w in WARZONE.waypoints]
    for here, there in itertools.permutations(ids, 2):
        path = waypoint_path(WARZONE, here, there)
        mirrored = waypoint_path(WARZONE, _mirrored(here), _mirrored(there))
        assert mirrored == (path and tuple(map(_mirrored, path))), (here, there)
        red = functions["next_hop"](_crowding("red", here), here, there)
        blue = functions["next_hop"](
            _crowding("blue", _mirrored(here)), _mirrored(here), _mirrored(there)
        )
        assert blue == (red and _mirrored(str(red))), (here, there)


def _acts_seeing(*seen: tuple[str, str, float, str]) -> list[tuple[str, dict[str, Any]]]:
    """What an assault bot on r1 (machine gun selected, a rocket loaded) does on its first tick
    seeing ``seen`` (id, waypoint, distance, team)."""
    bot = Agent("red-1", bot_role(TEST_MAP), team="red")
    sights = [("sees", *s) for s in seen]
    with Drive(bot) as drive:
        sent = drive.tick(_percept("red-1", ("ammo", "rocket_launcher", 1), *sights))
    return [(a.verb, a.args) for a in sent if isinstance(a, Act)]


def test_a_bot_fires_a_missile_at_a_group_and_bullets_at_one_enemy_or_beside_a_mate() -> None:
    # Listing 29.1 and the issue: missiles at turrets and groups.
    group = [("blue-1", "b1", 24.0, "blue"), ("blue-2", "b1", 24.5, "blue")]
    assert [("select_weapon", {"weapon": "rocket_launcher"})] == _acts_seeing(*group)
    assert [("fire", {"target": "blue-1"})] == _acts_seeing(group[0])
    mate = ("red-2", "b1", 24.2, "red")
    assert [("fire", {"target": "blue-1"})] == _acts_seeing(*group, mate)
    near = [("blue-1", "m1", 7.0, "blue"), ("blue-2", "m1", 7.5, "blue")]
    assert all(verb != "select_weapon" for verb, _ in _acts_seeing(*near))  # the blast


def _between_orders(*extra: tuple[Any, ...]) -> list[tuple[str, str]]:
    """What red-1 in the open sends in one tick with no order, an enemy 20 units east (close
    range) and the crate a link away."""
    facts = [
        ("self", "red-1", "red", "assault"), ("state", "alive"), ("at", "red-1", "open"),
        ("position", 0.0, 0.0), ("health", 150), ("max_health", 150),
        ("weapon", "machine_gun"), ("ammo", "machine_gun", 60),
        ("sees", "blue-1", "near", 20.0, "blue"), *extra,
    ]  # fmt: skip
    bot = Agent("red-1", bot_role(CLOSE_CRATE_MAP), team="red")
    with Drive(bot) as drive:
        sent = drive.tick(Percept(recipient="red-1", facts=[list(f) for f in facts]))
    return [(a.verb, str(next(iter(a.args.values()), ""))) for a in sent if isinstance(a, Act)]


CLOSE_CRATE_MAP = _crate_map("close-crate", "near", 20.0)
"""The crate map with the enemy at 20 units: close range."""


def test_a_squads_bot_between_orders_fights_close_enemies_from_a_position_it_picks() -> None:
    # In a squad: it fires on its way to the crate, the attack position, as in default combat.
    assert [("move", "crate"), ("fire", "blue-1")] == _between_orders(("squad", "squad-1"))
    # A bot of no squad (freelance) fights close combat where it stands, as before.
    assert [("fire", "blue-1")] == _between_orders()


def _holding(mode: str, enemy_at: str, map_: Map) -> list[tuple[str, str]]:
    """What red-1, standing in the open with the order to defend it, sends in one tick of
    ``mode`` with blue-1 in sight at ``enemy_at``."""
    far = math.dist(map_.position("open"), map_.position(enemy_at))
    facts = [
        ("self", "red-1", "red", "assault"), ("state", "alive"), ("at", "red-1", "open"),
        ("position", 0.0, 0.0), ("health", 150), ("max_health", 150), ("game_mode", mode),
        ("weapon", "machine_gun"), ("ammo", "machine_gun", 60),
        ("sees", "blue-1", enemy_at, far, "blue"),
    ]  # fmt: skip
    bot = Agent("red-1", bot_role(map_), superior="squad-1", team="red")
    order = Order(recipient="red-1", sender="squad-1", task="defend", args=["open"])
    with Drive(bot) as drive:
        sent = drive.tick(order, Percept(recipient="red-1", facts=[list(f) for f in facts]))
    return [(a.verb, str(next(iter(a.args.values()), ""))) for a in sent if isinstance(a, Act)]


def test_a_bot_holding_a_place_in_body_count_fights_from_a_position_it_picks() -> None:
    # Body Count is won on kills: it fires on its way to the crate, the attack position, with
    # the enemy beyond close range and within it.
    for enemy_at, map_ in (("far", CRATE_MAP), ("near", CLOSE_CRATE_MAP)):
        assert [("move", "crate"), ("fire", "blue-1")] == _holding("body_count", enemy_at, map_)
    # A capture point is held by standing on it: it fires from the spot.
    assert [("fire", "blue-1")] == _holding("capture_and_hold", "far", CRATE_MAP)


def test_the_teams_turn_to_gunfire_as_mirror_images_on_the_mirrored_map() -> None:
    # Of two noises as near, the smaller waypoint id was taken: c2 rather than d3 for a red bot,
    # f3 rather than g2 for its mirror image (a divergence seen in a mirror match at tick 14).
    shot_from = bot_functions(WARZONE)["shot_from"]

    def heard(team: str, noises: tuple[str, ...]) -> FactDB:
        known = FactDB()
        known.assert_fact("self", f"{team}-1", team, "assault")
        for noise in noises:
            known.assert_fact("heard", "gunfire", noise)
        return known

    grid = sorted(w.id for w in WARZONE.waypoints if len(w.id) == 2)
    differed = 0
    for here in grid:
        for pair in itertools.combinations([w for w in grid if w != here], 2):
            red = shot_from(heard("red", pair), here)
            blue = shot_from(heard("blue", tuple(map(_mirrored, pair))), _mirrored(here))
            differed += blue != _mirrored(str(red))
    assert 0 == differed
