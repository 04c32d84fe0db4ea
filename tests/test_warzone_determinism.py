"""The agent loop keeps lockstep exact: a 6v6 Warzone match with planners at every layer sends
the same messages in one process, in two worker processes of many agents each, and with every
actor in its own process."""

from __future__ import annotations

import pytest

from tests.runs import PLACEMENTS, ScenarioRuns
from tests.test_cli import _agent_sends


@pytest.mark.processes
def test_a_6v6_hierarchy_match_sends_the_same_messages_in_every_placement(
    scenario_runs: ScenarioRuns,
) -> None:
    args = ("--param", "bots=6", "--ticks", "40", "--seed", "3")
    runs = scenario_runs.placed("scenarios/warzone.py", *args, placements=PLACEMENTS)
    for ran in runs.values():
        ran.summary()  # each run succeeded
    sends = {name: _agent_sends(ran.log) for name, ran in runs.items()}
    assert len(sends["one"]) > 1000
    assert sends["one"] == sends["workers"]
    assert sends["one"] == sends["processes"]
