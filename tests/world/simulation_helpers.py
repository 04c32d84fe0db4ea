"""Shared helpers of the simulation tests: a world on the test map, acts that must pass or fail."""

from __future__ import annotations

from collections.abc import Mapping

from warband.values import Fact
from warband.world import (
    Member,
    TickReport,
    World,
    load_map,
)

TEST_MAP = load_map("test")


def world_on_test_map(
    roster: Mapping[str, Member], *, seed: int = 1, mode: str | None = None
) -> World:
    return World.create(TEST_MAP, seed=seed, mode=mode, roster=roster)


def accept(world: World, agent: str, verb: str, **args: str) -> None:
    result = world.submit(agent, verb, args)
    assert result.accepted, result.reason


def rejection(world: World, agent: str, verb: str, **args: object) -> str:
    result = world.submit(agent, verb, args)  # type: ignore[arg-type]
    assert not result.accepted
    return result.reason


def walk(world: World, agent: str, *waypoints: str) -> None:
    """Move ``agent`` along ``waypoints`` one link at a time (stepping the world)."""
    for waypoint in waypoints:
        accept(world, agent, "move", waypoint=waypoint)
        for _ in range(20):
            if ("arrived", waypoint) in world.step().events_for(agent):
                break
        else:
            raise AssertionError(f"{agent} never arrived at {waypoint}")


def fire_until_down(world: World, shooter: str, victim: str) -> TickReport:
    for _ in range(60):
        if world.submit(shooter, "fire", {"target": victim}).accepted is False:
            accept(world, shooter, "reload")
        report = world.step()
        if any(e[0] == "killed" and e[1] == victim for e in report.events):
            return report
    raise AssertionError(f"{shooter} never downed {victim}")


def facts_named(world: World, agent: str, name: str) -> list[Fact]:
    return [f for f in world.percepts_for(agent) if f[0] == name]


DUEL = {"red-1": Member("red", "assault"), "blue-1": Member("blue", "medic")}
