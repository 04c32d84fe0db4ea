"""The World facade: creation from a roster, the snapshot, and whole scripted games."""

from __future__ import annotations

import json
import math
from collections import deque

import pytest

from warband.exceptions import ConfigurationError
from warband.world import (
    CaptureAndHold,
    Map,
    Member,
    World,
    build_strategic_graph,
    load_map,
)

from .simulation_helpers import (
    DUEL,
    TEST_MAP,
    accept,
    facts_named,
    fire_until_down,
    rejection,
    walk,
    world_on_test_map,
)


def test_agents_start_at_their_teams_spawn_points_in_roster_order() -> None:
    world = world_on_test_map(
        {
            "r-a": Member("red", "medic"),
            "r-b": Member("red", "engineer"),
            "b-a": Member("blue", "scout"),
            "b-x": Member("blue", "tactician", start="c"),
        }
    )
    agents = world.snapshot()["agents"]

    assert {"r-a": "r1", "r-b": "r2", "b-a": "b1", "b-x": "c"} == {
        agent: agents[agent]["waypoint"] for agent in agents
    }


def test_roster_accepts_tuples_and_dicts() -> None:
    world = World.create(
        TEST_MAP, seed=0, roster={"a": ("red", "medic"), "b": {"team": "blue", "class": "scout"}}
    )

    assert ("a", "b") == world.agent_ids


def test_bad_roster_entries_are_refused_with_the_reason() -> None:
    with pytest.raises(ConfigurationError, match="unknown class 'pilot'"):
        world_on_test_map({"a": Member("red", "pilot")})
    with pytest.raises(ConfigurationError, match="team 'green', which map 'test' does not have"):
        world_on_test_map({"a": Member("green")})
    with pytest.raises(ConfigurationError, match="starts at unknown waypoint 'w99'"):
        world_on_test_map({"a": Member("red", start="w99")})
    with pytest.raises(ConfigurationError, match="known modes"):
        World.create(TEST_MAP, seed=0, mode="tag", roster={})


def test_snapshot_is_json_ready_and_carries_corridors_and_influence() -> None:
    world = world_on_test_map(DUEL, mode="capture_and_hold")
    world.set_corridor("squad-1", [3, 4, 7])
    world.track_influence()
    world.step()

    snapshot = json.loads(json.dumps(world.snapshot()))

    assert {"squad-1": ["3", "4", "7"]} == snapshot["corridors"]
    red_area = str(build_strategic_graph(TEST_MAP).area_of("r1"))
    assert snapshot["influence"]["red"][red_area] > 0 > snapshot["influence"]["blue"][red_area]
    assert {"red", "blue"} == {a["team"] for a in snapshot["agents"].values()}
    assert {"store-door": {"kind": "door", "open": False, "waypoint": "d"}}.items() <= snapshot[
        "objects"
    ].items()
    assert 1 == snapshot["tick"] and "capture_and_hold" == snapshot["mode"]


def _scripted_warzone(seed: int) -> tuple[dict[str, object] | None, int]:
    warzone: Map = load_map("warzone")
    roster = {f"red-{i}": Member("red", cls) for i, cls in enumerate(("tactician", "assault"))}
    roster |= {f"blue-{i}": Member("blue", cls) for i, cls in enumerate(("tactician", "assault"))}
    world = World.create(warzone, seed=seed, mode="body_count", roster=roster, time_limit=400)
    world.mode.target_kills = 3  # type: ignore[union-attr]
    ticks = 0
    while world.outcome() is None and ticks < 400:
        for agent in world.agent_ids:
            _scripted_bot(world, agent)
        world.step()
        ticks += 1
    return world.outcome(), ticks


def _scripted_bot(world: World, agent: str) -> None:
    """Fire at the nearest enemy in sight, reload when dry, else walk towards the middle."""
    facts = world.percepts_for(agent)
    if ("state", "alive") not in facts:
        return
    team = next(f[2] for f in facts if f[0] == "self")
    enemies = [f for f in facts if f[0] == "sees" and f[4] != team]
    if enemies and world.submit(agent, "fire", {"target": str(enemies[0][1])}).accepted:
        return
    world.submit(agent, "reload", {})
    here = next(str(f[2]) for f in facts if f[0] == "at")
    if any(f[0] == "moving" for f in facts):
        return
    centre = world.map.position("e3")
    options = sorted(
        world.map.neighbours(here), key=lambda w: math.dist(world.map.position(w), centre)
    )
    for waypoint in options:
        if world.submit(agent, "move", {"waypoint": waypoint}).accepted:
            return


def test_a_short_scripted_game_on_warzone_reaches_an_outcome() -> None:
    outcome, ticks = _scripted_warzone(seed=5)

    assert outcome is not None, "no outcome within 400 ticks"
    assert "reached 3 kills" == outcome["reason"]
    assert outcome["winner"] in ("red", "blue")
    assert (outcome, ticks) == _scripted_warzone(seed=5)


def test_influence_maps_count_agents_and_remember_deaths() -> None:
    world = world_on_test_map(DUEL)
    world.track_influence()
    graph = build_strategic_graph(TEST_MAP)
    blue_home = graph.area_of("b1")
    world.step()
    before = world.influence("red").enemy(blue_home)

    fire_until_down(world, "red-1", "blue-1")

    assert before > 0
    assert world.influence("blue").enemy(blue_home) > world.influence("blue").friendly(blue_home)


def _hidden_enemy(enemies: str) -> World:
    """red-1 on r1 and blue-1 in the store (s, behind its closed door): red cannot see it."""
    world = world_on_test_map(
        {
            "red-1": Member("red", "assault", start="r1"),
            "blue-1": Member("blue", "assault", start="s"),
        }
    )
    world.track_influence(enemies=enemies)
    world.step()
    assert [] == facts_named(world, "red-1", "sees")
    return world


def test_a_faction_map_of_what_it_sees_leaves_out_the_enemy_it_does_not_see() -> None:
    store = build_strategic_graph(TEST_MAP).area_of("s")
    assert _hidden_enemy("all").influence("red").enemy(store) > 0  # the world's truth
    assert 0 == _hidden_enemy("seen").influence("red").enemy(store)  # what red knows
    assert _hidden_enemy("seen").influence("blue").friendly(store) > 0


def test_a_team_is_told_its_influence_map_and_a_dead_member_too() -> None:
    world = world_on_test_map(DUEL)
    world.track_influence(enemies="seen")
    world.step()
    assert [("sees", "blue-1", "b1")] == [f[:3] for f in facts_named(world, "red-1", "sees")]
    told = {f[1]: f[2:] for f in world.team_facts("red") if f[0] == "influence"}
    graph = build_strategic_graph(TEST_MAP)
    # the most enemy influence where red sees blue-1, and less spread around it
    assert max(told, key=lambda area: told[area][1]) == graph.area_of("b1")
    assert [] == facts_named(world, "red-1", "influence")  # the living are not told
    fire_until_down(world, "red-1", "blue-1")
    for _ in range(10):
        if ("state", "dead") in world.percepts_for("blue-1"):
            break
        world.step()
    assert facts_named(world, "blue-1", "influence")  # the dead choose a spawn by it


def test_track_influence_refuses_an_unknown_kind_of_enemy_knowledge() -> None:
    with pytest.raises(ConfigurationError, match=r"'all'.*'seen'"):
        world_on_test_map(DUEL).track_influence(enemies="heard")


@pytest.mark.parametrize("every", [0, -1, 2.5, True, "5"])
def test_track_influence_refuses_a_telling_period_that_is_not_a_whole_number_of_ticks(
    every: object,
) -> None:
    with pytest.raises(ConfigurationError, match=r"tell_every=.*1 or more"):
        world_on_test_map(DUEL).track_influence(tell_every=every)  # type: ignore[arg-type]


def _influence_told(world: World, team: str) -> list[tuple[object, ...]]:
    return [f for f in world.team_facts(team) if f[0] == "influence"]


def _influence_now(world: World, team: str) -> list[tuple[object, ...]]:
    """The facts of the map as it is this tick (what telling every tick would say)."""
    graph, influence = build_strategic_graph(TEST_MAP), world.influence(team)
    facts = []
    for area in graph.areas:
        enemy = round(influence.enemy(area.id), 1)
        if enemy > 0:
            facts.append(("influence", area.id, round(influence.friendly(area.id), 1), enemy))
    return facts


def test_a_team_told_its_map_every_3_ticks_keeps_the_last_telling_in_between() -> None:
    # The map grows every tick while red watches blue-1, so its facts change from tick to tick;
    # the team hears of it when first asked (tick 1), then on ticks 3, 6, 9 only, and what it
    # heard holds until the next telling.
    world = world_on_test_map(DUEL)
    world.track_influence(enemies="seen", tell_every=3)
    told_at: dict[int, list[tuple[object, ...]]] = {}
    stale = 0
    for _ in range(9):
        world.step()
        tick, now = world.tick, _influence_now(world, "red")
        if tick == 1 or tick % 3 == 0:
            told_at[tick] = now
        told = told_at[max(told_at)]
        assert told == _influence_told(world, "red"), f"tick {tick}"
        stale += told != now
    assert [1, 3, 6, 9] == sorted(told_at)
    assert stale > 0, "the map never changed between tellings: the test shows nothing"


def test_a_team_told_its_map_every_tick_hears_the_map_of_the_tick() -> None:
    world = world_on_test_map(DUEL)
    world.track_influence(enemies="seen")
    for _ in range(5):
        world.step()
        assert _influence_now(world, "red") == _influence_told(world, "red")


def _next_step(world: World, start: str, goal: str) -> str:
    """The first waypoint of a path with the fewest links from ``start`` to ``goal``."""
    came_from = {start: start}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        for neighbour in world.map.neighbours(here):
            if neighbour not in came_from:
                came_from[neighbour] = here
                queue.append(neighbour)
    while came_from[goal] != start:
        goal = came_from[goal]
    return goal


def test_a_scripted_capture_and_hold_game_on_warzone_is_won_by_the_holders() -> None:
    warzone = load_map("warzone")
    mode = CaptureAndHold(warzone.teams, ["cp-north", "cp-centre", "cp-south"], target_score=25)
    roster = {"red-0": Member("red", "tactician"), "blue-0": Member("blue", "medic")}
    world = World.create(warzone, seed=2, mode=mode, roster=roster)
    goal = warzone.marker("cp-centre").waypoint
    for _ in range(200):
        if world.outcome() is not None:
            break
        here = next(str(f[2]) for f in world.percepts_for("red-0") if f[0] == "at")
        if here == goal:
            world.submit("red-0", "capture", {"point": "cp-centre"})
        elif not any(f[0] == "moving" for f in world.percepts_for("red-0")):
            accept(world, "red-0", "move", waypoint=_next_step(world, here, goal))
        world.step()

    outcome = world.outcome()
    assert outcome is not None
    assert ("red", "reached 25 points") == (outcome["winner"], outcome["reason"])


def test_a_medic_heals_a_wounded_team_mate_but_not_a_healthy_one() -> None:
    world = world_on_test_map(
        {
            "shooter": Member("red", "assault", start="m1"),
            "hurt": Member("blue", "assault", start="m3"),
            "doc": Member("blue", "medic", start="m3"),
        }
    )
    assert "hurt is not wounded" == rejection(world, "doc", "use", target="hurt")
    for _ in range(10):
        world.submit("shooter", "fire", {"target": "hurt"})
        if world.step().events_for("hurt"):
            break
    health = next(f[1] for f in world.percepts_for("hurt") if f[0] == "health")
    assert isinstance(health, int) and health < 150

    accept(world, "doc", "use", target="hurt")
    report = world.step()

    assert ("healed", "doc", 30) in report.events_for("hurt")
    assert ("health", min(health + 30, 150)) in world.percepts_for("hurt")


def test_an_engineer_repairs_its_turret_after_a_rocket_and_rockets_destroy_it() -> None:
    world = world_on_test_map(
        {
            "eng": Member("red", "engineer", start="m3"),
            "rocketeer": Member("blue", "assault", start="m3"),
        }
    )
    accept(world, "rocketeer", "select_weapon", weapon="rocket_launcher")
    walk(world, "eng", "m1")
    accept(world, "eng", "use", ability="turret")
    world.step()
    assert "turret 'turret-eng' is not damaged" == rejection(
        world, "eng", "use", object="turret-eng"
    )
    destroyed = repaired = False
    for _ in range(40):
        if not world.submit("rocketeer", "fire", {"target": "turret-eng"}).accepted:
            world.submit("rocketeer", "reload", {})
        world.submit("eng", "use", {"object": "turret-eng"})
        report = world.step()
        if ("destroyed", "turret-eng", "red", "rocketeer") in report.events:
            destroyed = True
            break
        if any(e[:2] == ("repaired", "turret-eng") for e in report.events):
            repaired = True

    assert repaired and destroyed
    assert [] == [f for f in world.percepts_for("eng") if f[0] == "turret"]
