"""A crowd's percepts are what the reference senses give: every observer against every body and
every wall (``perceive_all_pairs``), every listener against every noise (``hear``), and the
facts a dead member is told counted over its whole team. The world works them out with strips,
a remembered sight index and per-team caches; this pins that the shortcuts change no fact and
no order, on a seeded crowd of bots that fire, walk, cloak, disguise, fall and respawn."""

from __future__ import annotations

import random
from collections import Counter

from warband.values import Fact
from warband.world import Member, World, grid_map
from warband.world.classes import PLAYABLE
from warband.world.perception import hear, perceive_all_pairs

CLASSES = ("assault", "medic", "engineer", "tactician", "scout", "saboteur")
SENSED = ("sees", "sees_downed", "sees_turret", "heard")


def _crowd(entities: int, seed: int) -> World:
    game_map = grid_map(16, 10, spacing=5.0, wall_fraction=0.15, seed=seed)
    rng = random.Random(seed)
    roster = {
        f"bot-{i:03d}": Member(
            "red" if i % 2 == 0 else "blue",
            CLASSES[i % len(CLASSES)],
            start=rng.choice(game_map.waypoint_ids),
        )
        for i in range(entities)
    }
    return World.create(game_map, seed=seed, roster=roster)


def _act(world: World, agent: str, facts: list[Fact], rng: random.Random) -> None:
    """Fire at the nearest enemy in sight, else reload; cloak or disguise now and then; walk."""
    if ("state", "alive") not in facts:
        return
    team = next(f[2] for f in facts if f[0] == "self")
    enemy = next((str(f[1]) for f in facts if f[0] == "sees" and f[4] != team), None)
    fired = enemy is not None and world.submit(agent, "fire", {"target": enemy}).accepted
    acted = fired or any(
        world.submit(agent, "use", {"ability": ability}).accepted
        for ability in ("cloak", "disguise")
    )
    if not acted:
        world.submit(agent, "reload", {})
    if not any(f[0] == "moving" for f in facts):
        here = next(str(f[2]) for f in facts if f[0] == "at")
        world.submit(agent, "move", {"waypoint": rng.choice(world.map.neighbours(here))})


def _reference_senses(world: World) -> dict[str, list[Fact]]:
    """Sight and hearing facts of every living agent, the slow and obvious way."""
    eyes, bodies = world.perception_inputs()
    snapshot = world.snapshot()
    agents, turrets = snapshot["agents"], snapshot["turrets"]
    # The tick's noises and the waypoint each came from are not public: the world keeps them
    # for the percepts alone. A noise is heard as where its source last made one.
    noises = world._state.noises
    where = {noise.source: waypoint for noise, waypoint in noises}
    seen = perceive_all_pairs(eyes, bodies, world.map.walls)
    found: dict[str, list[Fact]] = {}
    for eye in eyes:
        facts: list[Fact] = []
        for s in seen[eye.id]:
            if s.id in turrets:
                name, waypoint = "sees_turret", turrets[s.id]["waypoint"]
            else:
                body = agents[s.id]
                name = "sees_downed" if body["state"] == "downed" else "sees"
                waypoint = body["waypoint"]
            facts.append((name, s.id, waypoint, round(s.distance, 2), s.apparent_team))
        heard = hear(eye, [noise for noise, _ in noises])
        facts.extend(dict.fromkeys(("heard", h.kind, where[h.source]) for h in heard))
        found[eye.id] = facts
    return found


def test_a_seeded_crowd_sees_and_hears_exactly_what_the_reference_senses_give() -> None:
    world = _crowd(90, seed=4)
    rng = random.Random(4)
    facts = {agent: world.percepts_for(agent) for agent in world.agent_ids}
    compared = Counter[str]()
    for _ in range(8):
        for agent in world.agent_ids:
            _act(world, agent, facts[agent], rng)
        world.step()
        facts = {agent: world.percepts_for(agent) for agent in world.agent_ids}
        expected = _reference_senses(world)
        for agent, percept in facts.items():
            sensed = [fact for fact in percept if fact[0] in SENSED]
            assert expected.get(agent, []) == sensed, agent
            compared.update(str(fact[0]) for fact in sensed)
    # The crowd exercised every kind of sense compared (none of them vacuously equal).
    assert {"sees", "sees_downed", "heard"} <= set(compared), compared


def test_a_dead_member_is_told_its_mates_classes_and_its_team_spawns() -> None:
    world = _crowd(60, seed=5)
    rng = random.Random(5)
    facts = {agent: world.percepts_for(agent) for agent in world.agent_ids}
    dead_told = 0
    for _ in range(12):
        for agent in world.agent_ids:
            _act(world, agent, facts[agent], rng)
        world.step()
        facts = {agent: world.percepts_for(agent) for agent in world.agent_ids}
        classes = world.snapshot()["agents"]
        for agent, percept in facts.items():
            if ("state", "dead") not in percept:
                continue
            dead_told += 1
            team = classes[agent]["team"]
            mates = Counter(
                body["class"]
                for other, body in classes.items()
                if body["team"] == team and other != agent
            )
            assert [("team_class", name, mates[name]) for name in PLAYABLE] == [
                f for f in percept if f[0] == "team_class"
            ]
            assert [("spawn_option", w) for w in sorted(set(world.spawn_options(team)))] == [
                f for f in percept if f[0] == "spawn_option"
            ]
    assert dead_told > 0, "nobody died: the dead's facts were not compared"
