"""Warzone with one bot that cannot start, for the restart-intensity test.

The scenario is ``scenarios/warzone.py`` with one more parameter, ``crash_start``: the bot it
names crashes in ``on_start`` in every incarnation (its process exits at once, code 3, without
a goodbye), so it is gone each time
and the supervisor restarts it until it gives up on it (then the bot's commander is told,
``gave_up``, and reassigns its squad without it).
"""

from __future__ import annotations

import os
from pathlib import Path

from warband import Actor, Params
from warband.scenario import load_scenario

scenario = load_scenario(Path(__file__).resolve().parents[2] / "scenarios" / "warzone.py")
scenario.defaults["crash_start"] = ""
_build_warzone = scenario._factory
assert _build_warzone is not None


async def _crash(actor_id: str) -> None:
    # A hard crash, as a segfault would be: no goodbye to the broker, exit code 3.
    os._exit(3)


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    actors = _build_warzone(params, seed)
    for actor in actors:
        if actor.id == params["crash_start"]:
            actor.on_start = lambda actor_id=actor.id: _crash(actor_id)  # type: ignore[method-assign]
    return actors
