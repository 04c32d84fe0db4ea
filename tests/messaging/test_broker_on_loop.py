"""Broker.start_on_loop: the broker of an in-process run routing on the actors' event loop (what
warband.env does) routes the same frames as its routing thread, and stops cleanly."""

from __future__ import annotations

import threading
from typing import Any

from warband.agents.factions import Control, faction_actors
from warband.launcher import make_clock, run_actors_in_process
from warband.messaging import Actor
from warband.scenario import load_scenario
from warband.world import World, load_map
from warband.world.actor import WorldActor

from .test_keeper import BUSY, HOLD_S, PING_S


async def _warzone(*, on_loop: bool) -> tuple[dict[str, Any], Any]:
    game_map = load_map("warzone")
    roster = {f"{t}-{i}": {"team": t, "class": "assault"} for t in ("red", "blue") for i in (1, 2)}
    world = World.create(game_map, seed=3, mode="capture_and_hold", roster=roster, time_limit=30)
    actors: list[Actor] = []
    controls: dict[str, Control] = {"red": "hierarchy", "blue": "freelance"}
    for team, control in controls.items():
        bots = [f"{team}-1", f"{team}-2"]
        actors += faction_actors(game_map, team, bots, control=control, seed=3)
    clock = WorldActor(world, participants=[a.id for a in actors], ticks=30, seed=3)
    result = await run_actors_in_process(actors, clock, broker_on_loop=on_loop)
    return world.snapshot(), result


async def test_a_broker_on_the_loop_plays_a_run_as_its_thread_does() -> None:
    threads_before = {t.name for t in threading.enumerate()}

    on_thread, thread_result = await _warzone(on_loop=False)
    on_loop, loop_result = await _warzone(on_loop=True)

    assert on_thread == on_loop
    assert thread_result.ticks == loop_result.ticks == 30
    assert thread_result.messages_sent == loop_result.messages_sent
    assert thread_result.messages_received == loop_result.messages_received
    assert "warband-broker" not in {t.name for t in threading.enumerate()} - threads_before


async def test_a_loop_held_for_seconds_departs_nobody_when_the_broker_routes_on_it() -> None:
    """The broker is held with the loop (as between an environment's steps); once the loop runs
    again it routes what waited, the keeper's vouches among it, and finds nobody silent."""
    scenario = load_scenario(BUSY)
    actors = scenario.build(scenario.resolve_params({"hold": str(HOLD_S), "how": "sleep"}), 0)
    clock = make_clock([a.id for a in actors], ticks=6, tick_timeout=30.0)

    result = await run_actors_in_process(actors, clock, ping_interval=PING_S, broker_on_loop=True)

    assert {} == result.departed
    assert 6 == result.ticks
