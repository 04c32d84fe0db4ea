"""Symbolic objects: plates, bars, locked doors, levers, items."""

from __future__ import annotations

from warband.world import (
    Member,
    World,
    load_map,
    map_from_data,
)

from .simulation_helpers import (
    accept,
    rejection,
    walk,
    world_on_test_map,
)


def test_the_store_door_is_open_only_while_someone_stands_on_the_plate() -> None:
    world = world_on_test_map(
        {"holder": Member("red", "medic", start="r2"), "runner": Member("red", start="d")}
    )
    walk(world, "holder", "m2")
    assert world.is_open("store-door")
    assert ("pressed", "store-plate", True) in world.percepts_for("runner")

    walk(world, "runner", "s")
    accept(world, "runner", "use", object="medkit")
    assert ("picked_up", "medkit", "runner", "red") in world.step().events
    assert ("carrying", "medkit", "medkit") in world.percepts_for("runner")

    accept(world, "holder", "move", waypoint="r2")
    report = world.step()
    assert ("closed", "store-door") in report.events
    assert "the door 'store-door' between s and d is closed" == rejection(
        world, "runner", "move", waypoint="d"
    )


def test_prison_escape_needs_a_second_prisoner_on_the_plate() -> None:
    prison = load_map("prison")
    world = World.create(
        prison,
        seed=0,
        roster={"alice": Member("prisoners", "civilian"), "bob": Member("prisoners", "civilian")},
    )
    assert "the bars 'bars-a' between cell-a and hall-a are closed" == rejection(
        world, "alice", "move", waypoint="hall-a"
    )
    assert "alice must stand at hall-a to use 'bars-a'" == rejection(
        world, "alice", "use", object="bars-a"
    )

    walk(world, "bob", "hall-b", "hall-c", "switch")
    assert ("open", "bars-a", True) in world.percepts_for("alice")
    walk(world, "alice", "hall-a", "hall-b", "guard-room")
    accept(world, "alice", "use", object="exit-key")
    world.step()
    walk(world, "alice", "hall-b", "hall-c", "hall-end")
    accept(world, "alice", "use", object="exit-door")
    assert ("opened", "exit-door") in world.step().events
    walk(world, "alice", "yard")

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
    accept(world, "guard", "use", object="bars-b")
    assert ("closed", "bars-b") in world.step().events

    assert "the bars 'bars-b' between cell-b and hall-b are closed" == rejection(
        world, "bob", "move", waypoint="hall-b"
    )
    assert "bob must stand at hall-b to use 'bars-b'" == rejection(
        world, "bob", "use", object="bars-b"
    )


def test_a_locked_door_needs_its_key_item() -> None:
    world = World.create(
        load_map("prison"), seed=0, roster={"g": Member("guards", "civilian", start="hall-end")}
    )

    assert "door 'exit-door' is locked; it needs a 'exit-key' item" == rejection(
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
    accept(world, "x", "use", object="switch")
    assert ("opened", "gate") in world.step().events
    accept(world, "x", "use", object="switch")
    assert ("closed", "gate") in world.step().events
