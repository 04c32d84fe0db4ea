"""Run with: python -m pytest test_patrol.py"""

import asyncio

from patrol import Scout, Sergeant

from warband.testing import run_actors


def test_the_scout_reaches_every_waypoint_of_the_route() -> None:
    result = asyncio.run(run_actors([Sergeant(waypoints=4), Scout("scout")], ticks=30))
    assert ["wp-1", "wp-2", "wp-3", "wp-4"] == result.final_states["sergeant"]["reached"]
    assert "route walked" == result.finish_reason
