"""The stacked Warzone maps (warzone-x2, -x4): generated, committed, playable in every mode."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from warband.agents.factions import check_map
from warband.exceptions import ConfigurationError
from warband.world import MODES, Map, load_map, waypoint_path
from warband.world._map_file import BUNDLED_MAP_DIR
from warband.world._warzone_maps import (
    STACKED,
    stacked_warzone_toml,
    write_stacked_maps,
)

WARZONE_HEIGHT = 50.0


@pytest.mark.parametrize("name", sorted(STACKED))
def test_the_committed_file_is_what_the_generator_writes(name: str) -> None:
    committed = (BUNDLED_MAP_DIR / f"{name}.toml").read_text(encoding="utf-8")
    assert committed == stacked_warzone_toml(STACKED[name]), (
        f"{name}.toml is stale: run python -m warband.world._warzone_maps"
    )


def test_write_stacked_maps_writes_each_map_by_name(tmp_path: Path) -> None:
    written = write_stacked_maps(tmp_path)
    assert sorted(p.name for p in written) == sorted(f"{n}.toml" for n in STACKED)
    assert load_map(tmp_path / "warzone-x4.toml").name == "warzone-x4"


def test_one_copy_is_refused_naming_the_count() -> None:
    with pytest.raises(ConfigurationError, match="needs 2 copies or more, got 1"):
        stacked_warzone_toml(1)


def _copy(game_map: Map, waypoint: str) -> int:
    """Which copy of warzone (1, 2, ...) ``waypoint`` lies in, by its height."""
    return int(game_map.position(waypoint)[1] // WARZONE_HEIGHT) + 1


def _layout(game_map: Map, copy: int) -> Counter[tuple[str, str | None, tuple[float, float]]]:
    """Markers of ``copy`` as (kind, team, position within the copy)."""
    shift = WARZONE_HEIGHT * (copy - 1)
    found: Counter[tuple[str, str | None, tuple[float, float]]] = Counter()
    for marker in game_map.markers:
        if _copy(game_map, marker.waypoint) == copy:
            x, y = game_map.position(marker.waypoint)
            found[(marker.kind, marker.team, (x, y - shift))] += 1
    return found


@pytest.mark.parametrize("name", sorted(STACKED))
def test_every_copy_is_warzone_with_the_same_waypoints_walls_and_markers(name: str) -> None:
    warzone, stacked = load_map("warzone"), load_map(name)
    copies = STACKED[name]
    assert len(stacked.waypoints) == copies * len(warzone.waypoints)
    # warzone's links in each copy, and 9 links (one a column) between neighbouring copies
    assert len(stacked.links) == copies * len(warzone.links) + 9 * (copies - 1)
    assert stacked.bounds == (0.0, 0.0, 80.0, WARZONE_HEIGHT * copies)
    single = {"retrieval", "return"}
    base = Counter({k: n for k, n in _layout(warzone, 1).items() if k[0] not in single})
    middle = (copies + 1) // 2
    for copy in range(1, copies + 1):
        layout = _layout(stacked, copy)
        assert layout == (_layout(warzone, 1) if copy == middle else base), copy


@pytest.mark.parametrize("name", sorted(STACKED))
def test_a_stacked_map_hosts_every_mode_with_warzone_annotations_per_copy(name: str) -> None:
    game_map = load_map(name)
    copies = STACKED[name]
    for mode in MODES:
        check_map(game_map, mode, game_map.teams)
    assert len(game_map.markers_of("capture")) == 3 * copies
    assert len(game_map.markers_of("retrieval")) == 1
    ids = [m.id for m in game_map.markers]
    assert len(ids) == len(set(ids))
    for team in game_map.teams:
        assert len(game_map.spawns(team)) == 5 * copies
        targets = game_map.markers_of("target", team)
        assert len(targets) == 2 * copies
        for target in targets:  # each target has its copy's two defend markers around it
            guards = [m for m in game_map.markers_of("defend") if m.group == target.id]
            assert 2 == len(guards)
            assert {_copy(game_map, g.waypoint) for g in guards} == {
                _copy(game_map, target.waypoint)
            }


@pytest.mark.parametrize("name", sorted(STACKED))
def test_the_far_corners_of_a_stacked_map_are_connected(name: str) -> None:
    game_map = load_map(name)
    top = 5 * STACKED[name]
    path = waypoint_path(game_map, "a1", f"i{top}")
    assert path is not None
    assert {_copy(game_map, w) for w in path} == set(range(1, STACKED[name] + 1))
