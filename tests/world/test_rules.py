"""Captures: uncontested ticks take a point, an enemy on it contests."""

from __future__ import annotations

from warband.world import (
    CAPTURE_TICKS,
    Member,
)

from .simulation_helpers import (
    accept,
    rejection,
    world_on_test_map,
)


def test_a_capture_point_falls_after_uncontested_capture_ticks() -> None:
    world = world_on_test_map({"r": Member("red", start="c")}, mode="capture_and_hold")
    for _ in range(CAPTURE_TICKS):
        assert world.owner_of("cp-centre") is None
        accept(world, "r", "capture", point="cp-centre")
        report = world.step()

    assert ("captured", "cp-centre", "red") in report.events
    assert ("captured", "cp-centre", "red") in world.percepts_for("r")
    assert "cp-centre already belongs to red" == rejection(world, "r", "capture", point="cp-centre")
    world.step()
    assert {"red": 2, "blue": 0} == world.score()


def test_an_enemy_on_the_point_contests_the_capture() -> None:
    world = world_on_test_map(
        {"r": Member("red", start="c"), "b": Member("blue", "medic", start="c")}
    )
    for _ in range(CAPTURE_TICKS + 1):
        accept(world, "r", "capture", point="cp-centre")
        report = world.step()

    assert ("contested", "cp-centre") in report.events
    assert world.owner_of("cp-centre") is None
