"""Rendering: SVG is well-formed and shows agents, influence and corridors; PNG via Pillow."""

from __future__ import annotations

import itertools
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
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
    assert 4060 == int(root.get("height", "0"))  # 4000 and the margins (the legend is right)


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


def _texts(root: ET.Element, css_class: str) -> list[ET.Element]:
    return [t for t in root.iter(f"{SVG}text") if t.get("class") == css_class]


def test_a_legend_says_what_each_colour_letter_and_line_means(tmp_path: Path) -> None:
    root = _svg(render(_snapshot(), out=tmp_path / "snap.svg"))
    legend = [t.text for t in _texts(root, "legend")]
    kinds = {m.kind for m in load_map("test").markers}
    assert {"red", "blue", "dead", "wall", "link"} <= set(legend)
    assert {f"{kind} marker" for kind in kinds} <= set(legend)
    assert {"door/bars, open", "door/bars, closed", "plate, lever or item"} <= set(legend)


@pytest.mark.parametrize("name", bundled_maps())
def test_every_waypoint_is_drawn_with_its_id(name: str, tmp_path: Path) -> None:
    game_map = load_map(name)
    root = _svg(render(game_map, out=tmp_path / f"{name}.svg"))
    assert sorted(w.id for w in game_map.waypoints) == sorted(
        str(t.text) for t in _texts(root, "waypoint-id")
    )


def test_agents_on_one_waypoint_are_spread_and_their_labels_do_not_overlap(
    tmp_path: Path,
) -> None:
    snapshot = _snapshot()
    for name in ("bot-4", "bot-5"):  # three of red on one spawn, as at tick 0 of a match
        snapshot["agents"][name] = dict(snapshot["agents"]["bot-1"])
    root = _svg(render(snapshot, out=tmp_path / "spawn.svg"))
    centres = {(c.get("cx"), c.get("cy")) for c in root.iter(f"{SVG}circle")
               if c.get("class") == "agent"}  # fmt: skip
    assert 5 == len(centres)
    labels = {str(t.text): (float(t.get("x", 0)), float(t.get("y", 0)))
              for t in _texts(root, "agent-label")}  # fmt: skip
    stacked = sorted(labels[name][1] for name in ("bot-1", "bot-4", "bot-5"))
    assert all(b - a >= 9 for a, b in itertools.pairwise(stacked))  # a 9-pixel font


def test_a_room_clearing_world_is_drawn_on_its_map_and_a_symbolic_world_says_why_not(
    tmp_path: Path,
) -> None:
    from warband.scenario import load_scenario

    rooms = load_scenario(REPO / "scenarios" / "room_clearing.py")
    world = rooms.build_world(rooms.resolve_params(), 1)
    root = _svg(render(world.snapshot(), out=tmp_path / "rooms.svg"))
    assert 4 == len([c for c in root.iter(f"{SVG}circle") if c.get("class") == "agent"])
    fear = load_scenario(REPO / "scenarios" / "fear.py")
    snapshot = fear.build_world(fear.resolve_params(), 1).snapshot()
    with pytest.raises(ConfigurationError, match=r"this run's world has no map to draw: .*"
                       r"\(their keys: arenas, tick\); a symbolic world"):  # fmt: skip
        render(snapshot, out=tmp_path / "fear.svg")
