"""Issue 12, test 1 (short): ``kill -9`` a random bot every 2 s in a Warzone match with
processes; ``warband bench chaos --full`` runs the issue's 60 s with 24 bots."""

from __future__ import annotations

import pytest

from tests.chaoslib.lifecycle import churn

pytestmark = pytest.mark.processes


def test_bots_killed_with_minus_9_are_restarted_and_the_match_completes() -> None:
    result = churn(6.0, bots=4)
    figures = result.figures

    assert figures.get("kills", 0) >= 2, (figures, result.note)
    assert figures["kills"] == figures["restarted"], figures
    assert True is figures["completed"], figures
    assert 0 == figures["orphans"], figures
    assert (0, 0) == (result.lost, result.duplicated), figures["orders"]
