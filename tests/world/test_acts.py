"""Act validation: every rejection reason of every verb, and what accepted acts queue."""

from __future__ import annotations

import pytest

from warband.exceptions import UnknownIdError
from warband.world import (
    ActVerdict,
    Member,
    World,
    needs_no_help,
)

from .simulation_helpers import (
    DUEL,
    TEST_MAP,
    accept,
    fire_until_down,
    rejection,
    world_on_test_map,
)


def test_acting_for_an_agent_not_in_the_world_is_rejected() -> None:
    world = world_on_test_map(DUEL)

    assert "unknown agent 'ghost': it has no body in this world" == rejection(
        world, "ghost", "wait"
    )


def test_a_verdict_is_an_act_verdict_not_the_catalogs_act_result() -> None:
    verdict = world_on_test_map(DUEL).submit("red-1", "wait")

    assert ActVerdict(True, "") == verdict


def test_percepts_for_an_agent_not_in_the_world_name_it_and_the_known_agents() -> None:
    world = world_on_test_map(DUEL)

    with pytest.raises(UnknownIdError, match=r"unknown agent 'zz'.*map 'test'.*agents: blue-1"):
        world.percepts_for("zz")


def test_influence_of_an_untracked_team_says_which_teams_are_tracked() -> None:
    world = world_on_test_map(DUEL)
    with pytest.raises(UnknownIdError, match=r"tracked: none \(call track_influence\(\) first\)"):
        world.influence("red")
    world.track_influence()

    with pytest.raises(UnknownIdError, match=r"no influence map for team 'green'.*red, blue"):
        world.influence("green")


def test_unknown_verb_is_rejected_listing_the_known_verbs() -> None:
    reason = rejection(world_on_test_map(DUEL), "red-1", "teleport")

    assert reason.startswith("unknown verb 'teleport'; known verbs: move, wait, fire")


def test_missing_unexpected_and_mistyped_arguments_are_rejected() -> None:
    world = world_on_test_map(DUEL)

    assert "move takes {\"waypoint\": ...}; missing ['waypoint']" == rejection(
        world, "red-1", "move"
    )
    assert "reload takes {}; unexpected ['fast']" == rejection(world, "red-1", "reload", fast=True)
    assert "fire: 'target' must be an id string, got 3" == rejection(
        world, "red-1", "fire", target=3
    )
    assert rejection(world, "red-1", "move", waypoint=None).startswith("move: argument 'waypoint'")
    assert rejection(world, "red-1", "use").startswith('use needs one of {"object": id}')


def test_moving_to_a_waypoint_that_is_not_linked_is_rejected() -> None:
    world = world_on_test_map(DUEL)

    assert "unknown waypoint 'zz'" == rejection(world, "red-1", "move", waypoint="zz")
    assert "c is not linked to r1 (move one link at a time)" == rejection(
        world, "red-1", "move", waypoint="c"
    )
    assert "red-1 is already at r1" == rejection(world, "red-1", "move", waypoint="r1")


def test_moving_through_a_wall_is_rejected() -> None:
    world = world_on_test_map({"red-1": Member("red", start="c")})

    assert "cannot move from c to d: a wall is in the way (no link)" == rejection(
        world, "red-1", "move", waypoint="d"
    )


def test_moving_through_a_closed_door_is_rejected() -> None:
    world = world_on_test_map({"red-1": Member("red", start="d")})

    assert "the door 'store-door' between d and s is closed" == rejection(
        world, "red-1", "move", waypoint="s"
    )


def test_the_map_closes_the_links_of_closed_doors_by_the_rule_of_the_move_check() -> None:
    # What is not said is as the map file sets it: the store door starts closed.
    assert (("d", "s"),) == TEST_MAP.closed_links({})
    assert (("d", "s"),) == TEST_MAP.closed_links({"store-door": False})
    assert () == TEST_MAP.closed_links({"store-door": True})
    blocker = TEST_MAP.closed_blocker("s", "d", {})
    assert blocker is not None and "store-door" == blocker.id


def test_a_heal_refused_for_good_is_told_from_one_that_may_pass() -> None:
    world = world_on_test_map(
        {
            "doc": Member("blue", "medic", start="m3"),
            "mate": Member("blue", "assault", start="m3"),
            "victim": Member("blue", "assault", start="c"),
            "shooter": Member("red", "assault", start="m1"),
        }
    )
    assert needs_no_help("mate", rejection(world, "doc", "use", target="mate"))
    assert needs_no_help("ghost", rejection(world, "doc", "use", target="ghost"))
    fire_until_down(world, "shooter", "victim")
    too_far = rejection(world, "doc", "use", target="victim")
    assert too_far.startswith("victim is ")
    assert not needs_no_help("victim", too_far)
    for _ in range(100):
        if ("state", "dead") in world.percepts_for("victim"):
            break
        world.step()
    assert needs_no_help("victim", rejection(world, "doc", "use", target="victim"))


def test_a_second_action_in_one_tick_is_rejected_but_moving_and_firing_combine() -> None:
    world = world_on_test_map(DUEL)
    accept(world, "red-1", "move", waypoint="m1")
    accept(world, "red-1", "fire", target="blue-1")

    assert "red-1 already queued 'fire' this tick; one action per tick" == rejection(
        world, "red-1", "reload"
    )


def test_firing_out_of_range_without_sight_or_at_a_team_mate_is_rejected() -> None:
    world = world_on_test_map(
        {
            "knifer": Member("red", "saboteur", start="r1"),
            "mate": Member("red", "medic", start="c"),
            "seen": Member("blue", "medic", start="b1"),
            "hidden": Member("blue", "medic", start="s"),
        }
    )
    accept(world, "knifer", "select_weapon", weapon="knife")
    world.step()

    assert "target 'seen' is out of range (24.0 > 2 for knife)" == rejection(
        world, "knifer", "fire", target="seen"
    )
    assert "no line of sight to 'hidden' (a wall is in the way)" == rejection(
        world, "mate", "fire", target="hidden"
    )
    assert "target 'mate' is on your team (red)" == rejection(
        world, "knifer", "fire", target="mate"
    )
    assert "unknown target 'nobody': no agent or turret has that id" == rejection(
        world, "knifer", "fire", target="nobody"
    )
    assert "cannot fire at yourself" == rejection(world, "knifer", "fire", target="knifer")


def test_firing_without_ammo_is_rejected_until_a_reload_completes() -> None:
    world = world_on_test_map(DUEL)
    accept(world, "red-1", "select_weapon", weapon="rocket_launcher")
    world.step()
    accept(world, "red-1", "fire", target="blue-1")
    world.step()

    assert "no ammo in rocket_launcher clip (reload first)" == rejection(
        world, "red-1", "fire", target="blue-1"
    )
    accept(world, "red-1", "reload")
    world.step()
    assert rejection(world, "red-1", "fire", target="blue-1").startswith(
        "rocket_launcher is reloading"
    )
    assert ("reloading", "rocket_launcher", 3) in world.percepts_for("red-1")


def test_weapon_and_stance_changes_that_change_nothing_are_rejected() -> None:
    world = world_on_test_map(DUEL)

    assert "medic does not carry 'sniper_rifle'; it carries: rifle, pistol" == rejection(
        world, "blue-1", "select_weapon", weapon="sniper_rifle"
    )
    assert "rifle is already selected" == rejection(
        world, "blue-1", "select_weapon", weapon="rifle"
    )
    assert "blue-1 is already standing" == rejection(world, "blue-1", "stand")
    assert "machine_gun clip is already full" == rejection(world, "red-1", "reload")


def test_downed_and_dead_agents_cannot_act() -> None:
    world = world_on_test_map(DUEL)
    fire_until_down(world, "red-1", "blue-1")

    assert rejection(world, "blue-1", "wait").startswith("blue-1 is downed")
    for _ in range(5):
        world.step()
    assert (
        "blue-1 is dead (respawns in 5 ticks); the dead cannot act, "
        "except to choose their spawn (respawn)"
    ) == rejection(world, "blue-1", "wait")


def test_abilities_of_other_classes_are_rejected() -> None:
    world = world_on_test_map(
        {
            "gunner": Member("red", "assault", start="m3"),
            "medic": Member("red", "medic", start="m3"),
        }
    )

    assert "only tacticians capture TSPs; gunner is an assault" == rejection(
        world, "gunner", "capture", point="tsp-south"
    )
    assert "assault cannot turret" == rejection(world, "gunner", "use", ability="turret")
    assert "medic cannot cloak" == rejection(world, "medic", "use", ability="cloak")
    assert "unknown ability 'fly'; abilities: turret, cloak, disguise, boost" == rejection(
        world, "medic", "use", ability="fly"
    )
    assert "only medics heal; gunner is an assault" == rejection(
        world, "gunner", "use", target="medic"
    )


def test_capturing_from_too_far_or_an_unknown_point_is_rejected() -> None:
    world = world_on_test_map({"t": Member("red", "tactician")})

    assert "t is 13.0 from cp-centre at c; get within 3" == rejection(
        world, "t", "capture", point="cp-centre"
    )
    assert rejection(world, "t", "capture", point="cp-x").startswith("unknown capture point 'cp-x'")


def test_using_objects_from_the_wrong_place_or_by_hand_is_rejected() -> None:
    world = world_on_test_map({"a": Member("red", start="d"), "b": Member("blue", start="r1")})

    assert "door 'store-door' is worked by plate 'store-plate', not by hand" == rejection(
        world, "a", "use", object="store-door"
    )
    assert "b must stand at d or s to use 'store-door'" == rejection(
        world, "b", "use", object="store-door"
    )
    assert "item 'medkit' lies at s; b is at r1" == rejection(world, "b", "use", object="medkit")
    assert "unknown object 'vault' on map 'test'" == rejection(world, "b", "use", object="vault")


def test_acts_after_the_game_is_over_are_rejected() -> None:
    world = World.create(TEST_MAP, seed=1, mode="body_count", roster=DUEL, time_limit=2)
    world.step()
    world.step()

    assert world.outcome() is not None
    assert "the game is over" == rejection(world, "red-1", "wait")
