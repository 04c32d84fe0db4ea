"""The viewer's agent labels stay on the map: an agent at its right edge (blue's spawn on
Warzone) has its label drawn leftwards, not clipped (issue 24, item 19). In a real browser, as
``test_browser`` drives it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.view.conftest import ViewProcess, overlay_snapshot, write_log
from tests.view.test_browser import _open, browser, chromium  # noqa: F401 - fixtures
from warband.world import load_map

pytestmark = pytest.mark.processes

LABELS_OUTSIDE_THE_MAP = """() => {
  const svg = document.getElementById("map");
  const width = svg.viewBox.baseVal.width;
  return [...svg.querySelectorAll("text.agent-label")]
    .map(label => [label.textContent, label.getBBox()])
    .filter(([, box]) => box.x < 0 || box.x + box.width > width)
    .map(([text]) => text);
}"""


def test_labels_of_agents_at_the_maps_edges_stay_inside_it(
    browser: Any,  # noqa: F811 - the fixture imported above
    start_view: Callable[..., ViewProcess],
    tmp_path: Path,
) -> None:
    waypoints = load_map("warzone").waypoints
    east = max(waypoints, key=lambda w: w.pos[0])
    west = min(waypoints, key=lambda w: w.pos[0])
    snapshot = overlay_snapshot(0)
    bodies = snapshot["snapshot"]["agents"]
    for name, team, spot in (("blue-1", "blue", east), ("red-1", "red", west)):
        bodies[name] = {**bodies["red-1"], "team": team, "x": spot.pos[0], "y": spot.pos[1]}
    with _open(browser, start_view(write_log(tmp_path / "logs", [snapshot])).url) as page:
        page.wait_for_selector("text.agent-label")
        assert [] == page.evaluate(LABELS_OUTSIDE_THE_MAP)
