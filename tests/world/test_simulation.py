"""The simulation: act validation (every rejection reason), movement, combat, death and respawn,
classes' abilities, captures, symbolic objects, percepts, snapshots, and a full game."""

from __future__ import annotations

import json
import math
from collections import deque
from collections.abc import Mapping

import pytest

from warband.exceptions import ConfigurationError, UnknownIdError
from warband.values import Fact
from warband.world import (
    CAPTURE_TICKS,
    ActVerdict,
    CaptureAndHold,
    Map,
    Member,
    TickReport,
    World,
    build_strategic_graph,
    load_map,
    map_from_data,
)

TEST_MAP = load_map("test")


def _world(roster: Mapping[str, Member], *, seed: int = 1, mode: str | None = None) -> World:
    return World.create(TEST_MAP, seed=seed, mode=mode, roster=roster)


def _accept(world: World, agent: str, verb: str, **args: str) -> None:
    result = world.submit(agent, verb, args)
    assert result.accepted, result.reason


def _reason(world: World, agent: str, verb: str, **args: object) -> str:
    result = world.submit(agent, verb, args)  # type: ignore[arg-type]
    assert not result.accepted
    return result.reason


def _walk(world: World, agent: str, *waypoints: str) -> None:
    """Move ``agent`` along ``waypoints`` one link at a time (stepping the world)."""
    for waypoint in waypoints:
        _accept(world, agent, "move", waypoint=waypoint)
        for _ in range(20):
            if ("arrived", waypoint) in world.step().events_for(agent):
                break
        else:
            raise AssertionError(f"{agent} never arrived at {waypoint}")


def _fire_until_down(world: World, shooter: str, victim: str) -> TickReport:
    for _ in range(60):
        if world.submit(shooter, "fire", {"target": victim}).accepted is False:
            _accept(world, shooter, "reload")
        report = world.step()
        if any(e[0] == "killed" and e[1] == victim for e in report.events):
            return report
    raise AssertionError(f"{shooter} never downed {victim}")


def _facts(world: World, agent: str, name: str) -> list[Fact]:
    return [f for f in world.percepts_for(agent) if f[0] == name]


DUEL = {"red-1": Member("red", "assault"), "blue-1": Member("blue", "medic")}


# --- creation ---


def test_agents_start_at_their_teams_spawn_points_in_roster_order() -> None:
    world = _world(
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
        _world({"a": Member("red", "pilot")})
    with pytest.raises(ConfigurationError, match="team 'green', which map 'test' does not have"):
        _world({"a": Member("green")})
    with pytest.raises(ConfigurationError, match="starts at unknown waypoint 'w99'"):
        _world({"a": Member("red", start="w99")})
    with pytest.raises(ConfigurationError, match="known modes"):
        World.create(TEST_MAP, seed=0, mode="tag", roster={})


# --- act validation: every rejection reason ---


def test_acting_for_an_agent_not_in_the_world_is_rejected() -> None:
    world = _world(DUEL)

    assert "unknown agent 'ghost': it has no body in this world" == _reason(world, "ghost", "wait")


def test_a_verdict_is_an_act_verdict_not_the_catalogs_act_result() -> None:
    verdict = _world(DUEL).submit("red-1", "wait")

    assert ActVerdict(True, "") == verdict


def test_percepts_for_an_agent_not_in_the_world_name_it_and_the_known_agents() -> None:
    world = _world(DUEL)

    with pytest.raises(UnknownIdError, match=r"unknown agent 'zz'.*map 'test'.*agents: blue-1"):
        world.percepts_for("zz")


def test_influence_of_an_untracked_team_says_which_teams_are_tracked() -> None:
    world = _world(DUEL)
    with pytest.raises(UnknownIdError, match=r"tracked: none \(call track_influence\(\) first\)"):
        world.influence("red")
    world.track_influence()

    with pytest.raises(UnknownIdError, match=r"no influence map for team 'green'.*red, blue"):
        world.influence("green")


def test_unknown_verb_is_rejected_listing_the_known_verbs() -> None:
    reason = _reason(_world(DUEL), "red-1", "teleport")

    assert reason.startswith("unknown verb 'teleport'; known verbs: move, wait, fire")


def test_missing_unexpected_and_mistyped_arguments_are_rejected() -> None:
    world = _world(DUEL)

    assert "move takes {\"waypoint\": ...}; missing ['waypoint']" == _reason(world, "red-1", "move")
    assert "reload takes {}; unexpected ['fast']" == _reason(world, "red-1", "reload", fast=True)
    assert "fire: 'target' must be an id string, got 3" == _reason(world, "red-1", "fire", target=3)
    assert _reason(world, "red-1", "move", waypoint=None).startswith("move: argument 'waypoint'")
    assert _reason(world, "red-1", "use").startswith('use needs one of {"object": id}')


def test_moving_to_a_waypoint_that_is_not_linked_is_rejected() -> None:
    world = _world(DUEL)

    assert "unknown waypoint 'zz'" == _reason(world, "red-1", "move", waypoint="zz")
    assert "c is not linked to r1 (move one link at a time)" == _reason(
        world, "red-1", "move", waypoint="c"
    )
    assert "red-1 is already at r1" == _reason(world, "red-1", "move", waypoint="r1")


def test_moving_through_a_wall_is_rejected() -> None:
    world = _world({"red-1": Member("red", start="c")})

    assert "cannot move from c to d: a wall is in the way (no link)" == _reason(
        world, "red-1", "move", waypoint="d"
    )


def test_moving_through_a_closed_door_is_rejected() -> None:
    world = _world({"red-1": Member("red", start="d")})

    assert "the door 'store-door' between d and s is closed" == _reason(
        world, "red-1", "move", waypoint="s"
    )


def test_a_second_action_in_one_tick_is_rejected_but_moving_and_firing_combine() -> None:
    world = _world(DUEL)
    _accept(world, "red-1", "move", waypoint="m1")
    _accept(world, "red-1", "fire", target="blue-1")

    assert "red-1 already queued 'fire' this tick; one action per tick" == _reason(
        world, "red-1", "reload"
    )


def test_firing_out_of_range_without_sight_or_at_a_team_mate_is_rejected() -> None:
    world = _world(
        {
            "knifer": Member("red", "saboteur", start="r1"),
            "mate": Member("red", "medic", start="c"),
            "seen": Member("blue", "medic", start="b1"),
            "hidden": Member("blue", "medic", start="s"),
        }
    )
    _accept(world, "knifer", "select_weapon", weapon="knife")
    world.step()

    assert "target 'seen' is out of range (24.0 > 2 for knife)" == _reason(
        world, "knifer", "fire", target="seen"
    )
    assert "no line of sight to 'hidden' (a wall is in the way)" == _reason(
        world, "mate", "fire", target="hidden"
    )
    assert "target 'mate' is on your team (red)" == _reason(world, "knifer", "fire", target="mate")
    assert "unknown target 'nobody': no agent or turret has that id" == _reason(
        world, "knifer", "fire", target="nobody"
    )
    assert "cannot fire at yourself" == _reason(world, "knifer", "fire", target="knifer")


def test_firing_without_ammo_is_rejected_until_a_reload_completes() -> None:
    world = _world(DUEL)
    _accept(world, "red-1", "select_weapon", weapon="rocket_launcher")
    world.step()
    _accept(world, "red-1", "fire", target="blue-1")
    world.step()

    assert "no ammo in rocket_launcher clip (reload first)" == _reason(
        world, "red-1", "fire", target="blue-1"
    )
    _accept(world, "red-1", "reload")
    world.step()
    assert _reason(world, "red-1", "fire", target="blue-1").startswith(
        "rocket_launcher is reloading"
    )
    assert ("reloading", "rocket_launcher", 3) in world.percepts_for("red-1")


def test_weapon_and_stance_changes_that_change_nothing_are_rejected() -> None:
    world = _world(DUEL)

    assert "medic does not carry 'sniper_rifle'; it carries: rifle, pistol" == _reason(
        world, "blue-1", "select_weapon", weapon="sniper_rifle"
    )
    assert "rifle is already selected" == _reason(world, "blue-1", "select_weapon", weapon="rifle")
    assert "blue-1 is already standing" == _reason(world, "blue-1", "stand")
    assert "machine_gun clip is already full" == _reason(world, "red-1", "reload")


def test_downed_and_dead_agents_cannot_act() -> None:
    world = _world(DUEL)
    _fire_until_down(world, "red-1", "blue-1")

    assert _reason(world, "blue-1", "wait").startswith("blue-1 is downed")
    for _ in range(5):
        world.step()
    assert "blue-1 is dead (respawns in 5 ticks); the dead cannot act" == _reason(
        world, "blue-1", "wait"
    )


def test_abilities_of_other_classes_are_rejected() -> None:
    world = _world(
        {
            "gunner": Member("red", "assault", start="m3"),
            "medic": Member("red", "medic", start="m3"),
        }
    )

    assert "only tacticians capture TSPs; gunner is an assault" == _reason(
        world, "gunner", "capture", point="tsp-south"
    )
    assert "assault cannot turret" == _reason(world, "gunner", "use", ability="turret")
    assert "medic cannot cloak" == _reason(world, "medic", "use", ability="cloak")
    assert "unknown ability 'fly'; abilities: turret, cloak, disguise, boost" == _reason(
        world, "medic", "use", ability="fly"
    )
    assert "only medics heal; gunner is an assault" == _reason(
        world, "gunner", "use", target="medic"
    )


def test_capturing_from_too_far_or_an_unknown_point_is_rejected() -> None:
    world = _world({"t": Member("red", "tactician")})

    assert "t is 13.0 from cp-centre at c; get within 3" == _reason(
        world, "t", "capture", point="cp-centre"
    )
    assert _reason(world, "t", "capture", point="cp-x").startswith("unknown capture point 'cp-x'")


def test_using_objects_from_the_wrong_place_or_by_hand_is_rejected() -> None:
    world = _world({"a": Member("red", start="d"), "b": Member("blue", start="r1")})

    assert "door 'store-door' is worked by plate 'store-plate', not by hand" == _reason(
        world, "a", "use", object="store-door"
    )
    assert "b must stand at d or s to use 'store-door'" == _reason(
        world, "b", "use", object="store-door"
    )
    assert "item 'medkit' lies at s; b is at r1" == _reason(world, "b", "use", object="medkit")
    assert "unknown object 'vault' on map 'test'" == _reason(world, "b", "use", object="vault")


def test_acts_after_the_game_is_over_are_rejected() -> None:
    world = World.create(TEST_MAP, seed=1, mode="body_count", roster=DUEL, time_limit=2)
    world.step()
    world.step()

    assert world.outcome() is not None
    assert "the game is over" == _reason(world, "red-1", "wait")


# --- movement ---


def test_wait_cancels_a_move_before_the_agent_sets_off() -> None:
    world = _world({"m": Member("red", "medic")})
    _accept(world, "m", "move", waypoint="m1")
    _accept(world, "m", "wait")
    world.step()

    assert ("at", "m", "r1") in world.percepts_for("m")
    assert ("position", 3.0, 5.0) in world.percepts_for("m")


def test_moving_takes_ticks_at_the_class_speed_and_reports_arrival() -> None:
    world = _world({"m": Member("red", "medic")})
    _accept(world, "m", "move", waypoint="m1")

    first = world.step()
    assert [] == first.events_for("m")
    assert ("moving", "m", "r1", "m1") in world.percepts_for("m")
    assert ("position", 8.0, 5.0) in world.percepts_for("m")
    assert [("arrived", "m1")] == world.step().events_for("m")
    assert ("at", "m", "m1") in world.percepts_for("m")


def test_boost_makes_an_assault_faster_and_crouching_slower() -> None:
    boosted = _world({"a": Member("red", "assault")})
    _accept(boosted, "a", "use", ability="boost")
    _accept(boosted, "a", "move", waypoint="m1")
    boosted.step()
    crouched = _world({"a": Member("red", "assault")})
    _accept(crouched, "a", "crouch")
    _accept(crouched, "a", "move", waypoint="m1")
    crouched.step()

    assert 9.0 == boosted.snapshot()["agents"]["a"]["x"]
    assert 5.0 == crouched.snapshot()["agents"]["a"]["x"]


def test_agent_on_a_link_can_turn_back_but_not_leave_it_elsewhere() -> None:
    world = _world({"m": Member("red", "medic")})
    _accept(world, "m", "move", waypoint="m1")
    world.step()

    assert "m is between r1 and m1; it can only go on to m1 or back to r1" == _reason(
        world, "m", "move", waypoint="r2"
    )
    _accept(world, "m", "move", waypoint="r1")
    assert [("arrived", "r1")] == world.step().events_for("m")


# --- combat, death, revive, respawn ---


def _duel_log(seed: int) -> list[object]:
    world = _world(DUEL, seed=seed)
    log: list[object] = []
    for _ in range(12):
        for shooter, target in (("red-1", "blue-1"), ("blue-1", "red-1")):
            world.submit(shooter, "fire", {"target": target})
        log.append(world.step())
    log.append(world.snapshot())
    return log


def test_the_same_seed_gives_the_same_fight() -> None:
    assert _duel_log(3) == _duel_log(3)


def test_different_seeds_give_different_fights() -> None:
    assert len({json.dumps(_duel_log(seed)[-1], sort_keys=True) for seed in range(4)}) > 1


def test_a_downed_agent_bleeds_out_and_respawns_at_its_base() -> None:
    world = _world(DUEL)
    report = _fire_until_down(world, "red-1", "blue-1")
    killed = next(e for e in report.events if e[0] == "killed")
    assert ("killed", "blue-1", "blue", "red-1", "red", "machine_gun") == killed

    later: list[Fact] = []
    for _ in range(10):
        later.extend(world.step().events)

    assert [("died", "blue-1")] == [e for e in later if e[0] == "died"]
    respawn = [e for e in later if e[0] == "respawned"]
    assert 1 == len(respawn) and respawn[0][2] in ("b1", "b2")
    assert ("health", 100) in world.percepts_for("blue-1")
    assert 1 == world.snapshot()["agents"]["blue-1"]["deaths"]


def test_a_medic_revives_a_downed_team_mate() -> None:
    world = _world(
        {
            "shooter": Member("red", "assault", start="m3"),
            "victim": Member("blue", "assault", start="b1"),
            "doc": Member("blue", "medic", start="b1"),
        }
    )
    _fire_until_down(world, "shooter", "victim")
    assert ("sees_downed", "victim", "b1", 0.0, "blue") not in world.percepts_for("shooter")

    _accept(world, "doc", "use", target="victim")
    report = world.step()

    assert ("revived", "victim", "doc") in report.events
    assert ("state", "alive") in world.percepts_for("victim")
    assert ("health", 75) in world.percepts_for("victim")


def test_a_non_medic_cannot_revive() -> None:
    world = _world(
        {
            "shooter": Member("red", "assault", start="m3"),
            "victim": Member("blue", "assault", start="b1"),
            "pal": Member("blue", "scout", start="b1"),
        }
    )
    _fire_until_down(world, "shooter", "victim")

    assert "only medics revive; pal is a scout" == _reason(world, "pal", "use", target="victim")


def test_a_team_respawns_at_a_tsp_its_tactician_captured() -> None:
    world = _world(
        {
            "shooter": Member("red", "assault", start="m1"),
            "tac": Member("blue", "tactician", start="m3"),
        }
    )
    for _ in range(CAPTURE_TICKS):
        _accept(world, "tac", "capture", point="tsp-south")
        report = world.step()
    assert ("captured", "tsp-south", "blue") in report.events
    assert ["m3"] == world.spawn_options("blue")

    _fire_until_down(world, "shooter", "tac")
    respawns = [e for _ in range(12) for e in world.step().events if e[0] == "respawned"]

    assert [("respawned", "tac", "m3")] == respawns


def test_rocket_splash_hurts_bodies_next_to_the_target() -> None:
    world = _world(
        {
            "rocketeer": Member("red", "assault", start="m1"),
            "target": Member("blue", "assault", start="m3"),
            "neighbour": Member("blue", "assault", start="m3"),
        }
    )
    _accept(world, "rocketeer", "select_weapon", weapon="rocket_launcher")
    world.step()
    _accept(world, "rocketeer", "fire", target="target")
    report = world.step()

    assert ("damaged", "rocketeer", 50) in report.events_for("neighbour")


def test_an_engineers_turret_fires_at_enemies_it_sees() -> None:
    world = _world(
        {"eng": Member("red", "engineer", start="m1"), "foe": Member("blue", "assault", start="m3")}
    )
    _accept(world, "eng", "use", ability="turret")
    placed = world.step()
    assert ("turret_placed", "turret-eng", "red", "m1") in placed.events
    assert "eng already has a turret (one at a time)" == _reason(
        world, "eng", "use", ability="turret"
    )

    damage = [e for _ in range(10) for e in world.step().events_for("foe") if e[0] == "damaged"]

    assert damage and all(("damaged", "turret-eng", 10) == e for e in damage)
    assert ("turret", "turret-eng", "red", "m1", 120) in world.percepts_for("eng")
    _accept(world, "foe", "look", waypoint="m1")
    assert ("sees_turret", "turret-eng", "m1", 10.0, "red") in world.percepts_for("foe")


# --- captures ---


def test_a_capture_point_falls_after_uncontested_capture_ticks() -> None:
    world = _world({"r": Member("red", start="c")}, mode="capture_and_hold")
    for _ in range(CAPTURE_TICKS):
        assert world.owner_of("cp-centre") is None
        _accept(world, "r", "capture", point="cp-centre")
        report = world.step()

    assert ("captured", "cp-centre", "red") in report.events
    assert ("captured", "cp-centre", "red") in world.percepts_for("r")
    assert "cp-centre already belongs to red" == _reason(world, "r", "capture", point="cp-centre")
    world.step()
    assert {"red": 2, "blue": 0} == world.score()


def test_an_enemy_on_the_point_contests_the_capture() -> None:
    world = _world({"r": Member("red", start="c"), "b": Member("blue", "medic", start="c")})
    for _ in range(CAPTURE_TICKS + 1):
        _accept(world, "r", "capture", point="cp-centre")
        report = world.step()

    assert ("contested", "cp-centre") in report.events
    assert world.owner_of("cp-centre") is None


# --- symbolic objects ---


def test_the_store_door_is_open_only_while_someone_stands_on_the_plate() -> None:
    world = _world(
        {"holder": Member("red", "medic", start="r2"), "runner": Member("red", start="d")}
    )
    _walk(world, "holder", "m2")
    assert world.is_open("store-door")
    assert ("pressed", "store-plate", True) in world.percepts_for("runner")

    _walk(world, "runner", "s")
    _accept(world, "runner", "use", object="medkit")
    assert ("picked_up", "medkit", "runner", "red") in world.step().events
    assert ("carrying", "medkit", "medkit") in world.percepts_for("runner")

    _accept(world, "holder", "move", waypoint="r2")
    report = world.step()
    assert ("closed", "store-door") in report.events
    assert "the door 'store-door' between s and d is closed" == _reason(
        world, "runner", "move", waypoint="d"
    )


def test_prison_escape_needs_a_second_prisoner_on_the_plate() -> None:
    prison = load_map("prison")
    world = World.create(
        prison,
        seed=0,
        roster={"alice": Member("prisoners", "civilian"), "bob": Member("prisoners", "civilian")},
    )
    assert "the bars 'bars-a' between cell-a and hall-a are closed" == _reason(
        world, "alice", "move", waypoint="hall-a"
    )
    assert "alice must stand at hall-a to use 'bars-a'" == _reason(
        world, "alice", "use", object="bars-a"
    )

    _walk(world, "bob", "hall-b", "hall-c", "switch")
    assert ("open", "bars-a", True) in world.percepts_for("alice")
    _walk(world, "alice", "hall-a", "hall-b", "guard-room")
    _accept(world, "alice", "use", object="exit-key")
    world.step()
    _walk(world, "alice", "hall-b", "hall-c", "hall-end")
    _accept(world, "alice", "use", object="exit-door")
    assert ("opened", "exit-door") in world.step().events
    _walk(world, "alice", "yard")

    assert "yard" == world.snapshot()["agents"]["alice"]["waypoint"]


def test_bars_are_lifted_or_lowered_by_hand_from_outside_only() -> None:
    prison = load_map("prison")
    world = World.create(
        prison,
        seed=0,
        roster={
            "bob": Member("prisoners", "civilian", start="cell-b"),
            "guard": Member("guards", "civilian", start="hall-b"),
        },
    )
    _accept(world, "guard", "use", object="bars-b")
    assert ("closed", "bars-b") in world.step().events

    assert "the bars 'bars-b' between cell-b and hall-b are closed" == _reason(
        world, "bob", "move", waypoint="hall-b"
    )
    assert "bob must stand at hall-b to use 'bars-b'" == _reason(
        world, "bob", "use", object="bars-b"
    )


def test_a_locked_door_needs_its_key_item() -> None:
    world = World.create(
        load_map("prison"), seed=0, roster={"g": Member("guards", "civilian", start="hall-end")}
    )

    assert "door 'exit-door' is locked; it needs a 'exit-key' item" == _reason(
        world, "g", "use", object="exit-door"
    )


def test_a_lever_toggles_the_gate_it_controls() -> None:
    lever_map = map_from_data(
        {
            "name": "lever",
            "links": [["a", "b", "c"]],
            "waypoints": [
                {"id": "a", "pos": [0, 0]},
                {"id": "b", "pos": [4, 0]},
                {"id": "c", "pos": [8, 0]},
            ],
            "objects": [
                {"id": "gate", "kind": "door", "link": ["b", "c"]},
                {"id": "switch", "kind": "lever", "waypoint": "a", "controls": ["gate"]},
            ],
        }
    )
    world = World.create(lever_map, seed=0, roster={"x": Member("red", start="a")})
    _accept(world, "x", "use", object="switch")
    assert ("opened", "gate") in world.step().events
    _accept(world, "x", "use", object="switch")
    assert ("closed", "gate") in world.step().events


# --- senses ---


def test_percepts_report_what_the_agent_sees_and_hears() -> None:
    world = _world(
        {
            "r": Member("red", "medic", start="m1"),
            "b": Member("blue", "medic", start="m3"),
            "far": Member("blue", "scout", start="s"),
        }
    )
    _accept(world, "r", "look", waypoint="m3")
    _accept(world, "r", "fire", target="b")
    world.step()

    assert ("sees", "b", "m3", 10.0, "blue") in world.percepts_for("r")
    assert [] == [f for f in world.percepts_for("r") if f[0] == "sees" and f[1] == "far"]
    assert ("heard", "gunfire", "m1") in world.percepts_for("far")
    assert ("heard", "gunfire", "m1") in world.percepts_for("b")


def test_a_cloaked_scout_is_unseen_from_afar_and_a_disguised_saboteur_looks_friendly() -> None:
    world = _world(
        {
            "watcher": Member("red", "medic", start="m1"),
            "scout": Member("blue", "scout", start="m3"),
            "spy": Member("blue", "saboteur", start="c"),
        }
    )
    _accept(world, "watcher", "look", waypoint="m3")
    _accept(world, "scout", "use", ability="cloak")
    _accept(world, "spy", "use", ability="disguise")
    world.step()
    seen = {f[1]: f for f in _facts(world, "watcher", "sees")}

    assert "scout" not in seen
    assert "red" == seen["spy"][4]
    assert ("cloaked",) in world.percepts_for("scout")


def test_facts_are_flat_tuples_of_wire_scalars() -> None:
    world = _world(DUEL, mode="capture_and_hold")
    world.submit("red-1", "fire", {"target": "blue-1"})
    world.step()

    for agent in world.agent_ids:
        for fact in [*world.percepts_for(agent), *world.events_for(agent)]:
            assert isinstance(fact, tuple) and isinstance(fact[0], str)
            assert all(isinstance(v, str | int | float | bool) for v in fact), fact


# --- snapshot ---


def test_snapshot_is_json_ready_and_carries_corridors_and_influence() -> None:
    world = _world(DUEL, mode="capture_and_hold")
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


# --- a whole game ---


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
    world = _world(DUEL)
    world.track_influence()
    graph = build_strategic_graph(TEST_MAP)
    blue_home = graph.area_of("b1")
    world.step()
    before = world.influence("red").enemy(blue_home)

    _fire_until_down(world, "red-1", "blue-1")

    assert before > 0
    assert world.influence("blue").enemy(blue_home) > world.influence("blue").friendly(blue_home)


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
            _accept(world, "red-0", "move", waypoint=_next_step(world, here, goal))
        world.step()

    outcome = world.outcome()
    assert outcome is not None
    assert ("red", "reached 25 points") == (outcome["winner"], outcome["reason"])


def test_a_medic_heals_a_wounded_team_mate_but_not_a_healthy_one() -> None:
    world = _world(
        {
            "shooter": Member("red", "assault", start="m1"),
            "hurt": Member("blue", "assault", start="m3"),
            "doc": Member("blue", "medic", start="m3"),
        }
    )
    assert "hurt is not wounded" == _reason(world, "doc", "use", target="hurt")
    for _ in range(10):
        world.submit("shooter", "fire", {"target": "hurt"})
        if world.step().events_for("hurt"):
            break
    health = next(f[1] for f in world.percepts_for("hurt") if f[0] == "health")
    assert isinstance(health, int) and health < 150

    _accept(world, "doc", "use", target="hurt")
    report = world.step()

    assert ("healed", "doc", 30) in report.events_for("hurt")
    assert ("health", min(health + 30, 150)) in world.percepts_for("hurt")


def test_an_engineer_repairs_its_turret_after_a_rocket_and_rockets_destroy_it() -> None:
    world = _world(
        {
            "eng": Member("red", "engineer", start="m3"),
            "rocketeer": Member("blue", "assault", start="m3"),
        }
    )
    _accept(world, "rocketeer", "select_weapon", weapon="rocket_launcher")
    _walk(world, "eng", "m1")
    _accept(world, "eng", "use", ability="turret")
    world.step()
    assert "turret 'turret-eng' is not damaged" == _reason(world, "eng", "use", object="turret-eng")
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
