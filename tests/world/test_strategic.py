"""Strategic graph: clustering limits and the path invariant on bundled maps and random graphs."""

from __future__ import annotations

import math
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.exceptions import ConfigurationError
from warband.world import Map, bundled_maps, grid_map, load_map
from warband.world.geometry import Point
from warband.world.strategic import (
    StrategicGraph,
    area_path_exists,
    build_strategic_graph,
    cluster_waypoints,
)


def _components(nodes: Iterable[str], links: Iterable[tuple[str, str]]) -> dict[str, int]:
    adjacency: dict[str, set[str]] = {n: set() for n in nodes}
    for a, b in links:
        adjacency[a].add(b)
        adjacency[b].add(a)
    label: dict[str, int] = {}
    for start in adjacency:
        if start in label:
            continue
        label[start] = len(label)
        stack = [start]
        while stack:
            for nxt in adjacency[stack.pop()]:
                if nxt not in label:
                    label[nxt] = label[start]
                    stack.append(nxt)
    return label


def assert_strategic_invariants(
    graph: StrategicGraph,
    positions: dict[str, Point],
    links: list[tuple[str, str]],
    max_waypoints: int,
    max_extent: float,
) -> None:
    members = [wp for area in graph.areas for wp in area.waypoints]
    assert sorted(positions) == sorted(members)
    for area in graph.areas:
        assert len(area.waypoints) <= max_waypoints
        xs = [positions[wp][0] for wp in area.waypoints]
        ys = [positions[wp][1] for wp in area.waypoints]
        assert max(max(xs) - min(xs), max(ys) - min(ys)) <= max_extent + 1e-9
        inside = set(area.waypoints)
        inner_links = [(a, b) for a, b in links if a in inside and b in inside]
        assert 1 == len(set(_components(area.waypoints, inner_links).values()))
    waypoint_component = _components(positions, links)
    for u in positions:
        for v in positions:
            same = waypoint_component[u] == waypoint_component[v]
            assert same == area_path_exists(graph, graph.area_of(u), graph.area_of(v))


@pytest.mark.parametrize("name", bundled_maps())
def test_areas_of_every_bundled_map_keep_paths_exactly(name: str) -> None:
    game_map = load_map(name)
    graph = build_strategic_graph(game_map)
    positions = {w.id: w.pos for w in game_map.waypoints}
    assert_strategic_invariants(graph, positions, list(game_map.links), 6, 10.0)


@settings(max_examples=80, deadline=None)
@given(
    data=st.data(),
    count=st.integers(1, 24),
    max_waypoints=st.integers(1, 8),
    max_extent=st.floats(0.0, 40.0),
)
def test_areas_of_random_graphs_keep_paths_exactly(
    data: st.DataObject, count: int, max_waypoints: int, max_extent: float
) -> None:
    names = [f"w{i}" for i in range(count)]
    coords = st.tuples(st.integers(0, 50).map(float), st.integers(0, 50).map(float))
    positions = {n: data.draw(coords) for n in names}
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    links = data.draw(st.lists(st.sampled_from(pairs), max_size=40)) if pairs else []
    separators = data.draw(st.lists(st.sampled_from(links), max_size=5)) if links else []
    graph = cluster_waypoints(
        positions,
        links,
        max_waypoints=max_waypoints,
        max_extent=max_extent,
        separators=separators,
    )
    assert_strategic_invariants(graph, positions, links, max_waypoints, max_extent)


def test_waypoints_are_merged_into_fewer_areas() -> None:
    game_map = load_map("test")
    graph = build_strategic_graph(game_map)
    assert 2 * len(graph.areas) <= len(game_map.waypoints)  # 11 waypoints, 5 areas
    assert graph.area_of("r1") == graph.area_of("m1")
    assert graph.area_of("r1") != graph.area_of("b1")


def test_a_door_link_is_never_merged_over() -> None:
    graph = build_strategic_graph(load_map("test"), max_waypoints=50, max_extent=100.0)
    assert graph.area_of("d") != graph.area_of("s")
    assert graph.area_of("s") in graph.neighbours(graph.area_of("d"))


def test_disconnected_waypoints_never_share_an_area() -> None:
    positions = {"a": (0.0, 0.0), "b": (1.0, 0.0), "c": (0.5, 0.5)}
    graph = cluster_waypoints(positions, [("a", "b")], max_waypoints=10, max_extent=10.0)
    assert graph.area_of("a") == graph.area_of("b")
    assert graph.area_of("c") != graph.area_of("a")
    assert not area_path_exists(graph, graph.area_of("a"), graph.area_of("c"))


def test_clustering_is_deterministic() -> None:
    game_map = grid_map(14, 9, wall_fraction=0.25, seed=3)
    first = build_strategic_graph(game_map)
    second = build_strategic_graph(game_map)
    assert [a.waypoints for a in first.areas] == [a.waypoints for a in second.areas]
    assert first.connections == second.connections


def test_area_at_finds_the_area_of_the_nearest_waypoint() -> None:
    graph = build_strategic_graph(load_map("test"))
    assert graph.area_of("b2") == graph.area_at((26.0, 14.0))


def test_limits_below_one_waypoint_are_rejected() -> None:
    with pytest.raises(ConfigurationError, match="max_waypoints must be >= 1"):
        cluster_waypoints({"a": (0.0, 0.0)}, [], max_waypoints=0)


def _mirror(game_map: Map, waypoint: str) -> str:
    """The waypoint at the mirror image of ``waypoint`` across the map's vertical middle."""
    xs = [w.pos[0] for w in game_map.waypoints]
    x, y = game_map.position(waypoint)
    image = (min(xs) + max(xs) - x, y)
    return next(w.id for w in game_map.waypoints if math.dist(w.pos, image) < 1e-6)


WARZONES = ("warzone", "warzone-x2", "warzone-x4")
"""Warzone and its stacked copies for bigger battles (warband/world/_warzone_maps.py)."""


@pytest.mark.parametrize("name", WARZONES)
def test_the_areas_of_a_mirror_symmetric_map_are_mirror_images_of_each_other(name: str) -> None:
    # Warzone is drawn mirror-symmetric, red's half the image of blue's: its areas must be too,
    # or one side's squads plan over other areas than the other's and the map decides matches.
    warzone = load_map(name)
    areas = {frozenset(a.waypoints) for a in build_strategic_graph(warzone).areas}
    images = {frozenset(_mirror(warzone, w) for w in area) for area in areas}
    assert areas == images
    centre = next(a for a in areas if "e3" in a)
    assert "d4" not in centre  # red's rally point is not in the centre point's area


@pytest.mark.parametrize("name", WARZONES)
def test_warzone_is_mirror_symmetric_in_links_walls_and_markers(name: str) -> None:
    warzone = load_map(name)
    xs = [w.pos[0] for w in warzone.waypoints]
    width = min(xs) + max(xs)
    for a, b in warzone.links:
        assert warzone.has_link(_mirror(warzone, a), _mirror(warzone, b)), (a, b)

    def image(segment: tuple[tuple[float, float], tuple[float, float]]) -> frozenset[object]:
        return frozenset((round(width - x, 6), round(y, 6)) for x, y in segment)

    walls = {frozenset((round(x, 6), round(y, 6)) for x, y in wall) for wall in warzone.walls}
    assert walls == {image(wall) for wall in warzone.walls}
    other = {"red": "blue", "blue": "red", None: None}
    markers = {(m.kind, m.waypoint, m.team, m.radius) for m in warzone.markers}
    images = {
        (m.kind, _mirror(warzone, m.waypoint), other[m.team], m.radius) for m in warzone.markers
    }
    assert markers == images, markers ^ images
    # Cover from the west here is cover from the east at the mirror image (sectors n, ne, e...).
    mirrored_sector = [0, 7, 6, 5, 4, 3, 2, 1]
    for waypoint in warzone.waypoints:
        image_cover = warzone.waypoint(_mirror(warzone, waypoint.id)).cover
        assert tuple(waypoint.cover[i] for i in mirrored_sector) == image_cover, waypoint.id
