"""Rendering: SVG is well-formed and shows agents, influence and corridors; PNG via Pillow."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from warband.exceptions import ConfigurationError
from warband.world import Member, World, bundled_maps, load_map, parse_map
from warband.world.render import PNG_HINT, render, render_command

SVG = "{http://www.w3.org/2000/svg}"


def _snapshot() -> dict[str, Any]:
    return {
        "map": "test",
        "tick": 7,
        "teams": ["red", "blue"],
        "agents": {
            "bot-1": {"team": "red", "x": 3.0, "y": 5.0, "state": "alive", "health": 100},
            "bot-2": {"team": "blue", "x": 27.0, "y": 15.0, "state": "alive", "health": 60},
            "bot-3": {"team": "blue", "x": 20.0, "y": 5.0, "state": "dead", "health": 0},
        },
        "turrets": {"turret-1": {"team": "red", "x": 10.0, "y": 5.0}},
        "objects": {"store-door": {"kind": "door", "open": True, "waypoint": "d"}},
        "influence": {"red": {"0": 2.0, "1": -0.5, "2": -3.0, "3": 0.0}},
        "corridors": {"squad-1": ["0", "1", "2"]},
    }


def _svg(path: Path) -> ET.Element:
    return ET.parse(path).getroot()


@pytest.mark.parametrize("name", bundled_maps())
def test_every_bundled_map_renders_to_well_formed_svg(name: str, tmp_path: Path) -> None:
    out = render(load_map(name), out=tmp_path / f"{name}.svg")
    root = _svg(out)
    assert f"{SVG}svg" == root.tag
    assert len(root.findall(f"{SVG}line")) >= len(load_map(name).walls)


def test_a_snapshot_draws_its_agents_influence_and_corridor(tmp_path: Path) -> None:
    root = _svg(render(_snapshot(), out=tmp_path / "snap.svg"))
    agents = [c for c in root.iter(f"{SVG}circle") if c.get("class") == "agent"]
    assert 3 == len(agents)
    titles = [c.findtext(f"{SVG}title") or "" for c in agents]
    assert any(t.startswith("bot-2 blue") for t in titles)
    assert [] != [c for c in root.iter(f"{SVG}circle") if c.get("class") == "influence"]
    assert [] != [line for line in root.iter(f"{SVG}line") if line.get("stroke-dasharray")]
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "test - tick 7" in texts
    assert "corridor squad-1" in texts


def test_png_output_is_a_png_image(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    out = render(_snapshot(), out=tmp_path / "snap.png")
    assert b"\x89PNG" == out.read_bytes()[:4]


def test_png_without_pillow_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ConfigurationError, match=r"pip install 'warband\[render\]'"):
        render(load_map("test"), out=tmp_path / "map.png")
    assert "PNG output needs Pillow" in PNG_HINT


def test_a_map_kilometres_wide_is_drawn_at_a_smaller_scale(tmp_path: Path) -> None:
    # At 12 pixels a unit, a PNG of this map needed 170 GB of memory (the SVG says the size).
    wide = parse_map(
        'name = "wide"\nlinks = [["a", "b"]]\n[[waypoints]]\nid = "a"\npos = [-10000, 10000]\n'
        '[[waypoints]]\nid = "b"\npos = [10000, -10000]\n'
    )
    root = _svg(render(wide, out=tmp_path / "wide.svg"))
    assert 4060 == int(root.get("width", "0")) == int(root.get("height", "0"))


def test_unknown_output_suffix_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"use a \.svg or \.png"):
        render(load_map("test"), out=tmp_path / "map.gif")


def test_render_command_takes_a_map_name(tmp_path: Path) -> None:
    out = render_command("warzone", out=tmp_path / "warzone.svg")
    assert "warzone" in [t.text for t in _svg(out).iter(f"{SVG}text")]


def test_a_snapshot_of_a_warzone_mode_draws_the_object_and_the_targets_states(
    tmp_path: Path,
) -> None:
    roster = {"red-0": Member("red", start="g5"), "blue-0": Member("blue")}
    world = World.create(load_map("warzone"), seed=1, mode="search_and_destroy", roster=roster)
    for _ in range(3):
        world.submit("red-0", "plant", {"target": "target-blue-north"})
        world.step()
    root = _svg(render(world.snapshot(), out=tmp_path / "destroy.svg"))
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "target-blue-north: armed 15" in texts
    assert "target-blue-south: intact" in texts

    retrieve = World.create(load_map("warzone"), seed=1, mode="search_and_retrieve", roster=roster)
    root = _svg(render(retrieve.snapshot(), out=tmp_path / "retrieve.svg"))
    titles = [c.findtext(f"{SVG}title") for c in root.iter(f"{SVG}circle")]
    assert "retrieval-object" in titles
