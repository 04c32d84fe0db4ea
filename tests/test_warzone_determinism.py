"""The agent loop keeps lockstep exact: a 6v6 Warzone match with planners at every layer sends
the same messages in one process, in two worker processes of many agents each, and with every
actor in its own process."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_placements import sends_in_each_placement


@pytest.mark.processes
def test_a_6v6_hierarchy_match_sends_the_same_messages_in_every_placement(tmp_path: Path) -> None:
    sends = sends_in_each_placement(
        tmp_path, "scenarios/warzone.py", "--param", "bots=6", "--ticks", "40", "--seed", "3"
    )
    assert len(sends["one"]) > 1000
    assert sends["one"] == sends["workers"]
    assert sends["one"] == sends["processes"]
