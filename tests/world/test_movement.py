"""Movement: walking links at the class speed, boost and crouch, turning back, waiting."""

from __future__ import annotations

from warband.world import (
    Member,
)

from .simulation_helpers import (
    accept,
    rejection,
    world_on_test_map,
)


def test_wait_cancels_a_move_before_the_agent_sets_off() -> None:
    world = world_on_test_map({"m": Member("red", "medic")})
    accept(world, "m", "move", waypoint="m1")
    accept(world, "m", "wait")
    world.step()

    assert ("at", "m", "r1") in world.percepts_for("m")
    assert ("position", 3.0, 5.0) in world.percepts_for("m")


def test_moving_takes_ticks_at_the_class_speed_and_reports_arrival() -> None:
    world = world_on_test_map({"m": Member("red", "medic")})
    accept(world, "m", "move", waypoint="m1")

    first = world.step()
    assert [] == first.events_for("m")
    assert ("moving", "m", "r1", "m1") in world.percepts_for("m")
    assert ("position", 8.0, 5.0) in world.percepts_for("m")
    assert [("arrived", "m1")] == world.step().events_for("m")
    assert ("at", "m", "m1") in world.percepts_for("m")


def test_boost_makes_an_assault_faster_and_crouching_slower() -> None:
    boosted = world_on_test_map({"a": Member("red", "assault")})
    accept(boosted, "a", "use", ability="boost")
    accept(boosted, "a", "move", waypoint="m1")
    boosted.step()
    crouched = world_on_test_map({"a": Member("red", "assault")})
    accept(crouched, "a", "crouch")
    accept(crouched, "a", "move", waypoint="m1")
    crouched.step()

    assert 9.0 == boosted.snapshot()["agents"]["a"]["x"]
    assert 5.0 == crouched.snapshot()["agents"]["a"]["x"]


def test_agent_on_a_link_can_turn_back_but_not_leave_it_elsewhere() -> None:
    world = world_on_test_map({"m": Member("red", "medic")})
    accept(world, "m", "move", waypoint="m1")
    world.step()

    assert "m is between r1 and m1; it can only go on to m1 or back to r1" == rejection(
        world, "m", "move", waypoint="r2"
    )
    accept(world, "m", "move", waypoint="r1")
    assert [("arrived", "r1")] == world.step().events_for("m")
