"""Plane geometry: distances, angles, compass sectors, segment tests and the wall index."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.exceptions import ConfigurationError
from warband.world.geometry import (
    DIRECTIONS,
    WallIndex,
    angle_difference,
    bounding_box,
    centroid,
    direction_of,
    direction_vector,
    distance,
    heading,
    in_view_cone,
    line_of_sight,
    move_toward,
    point_segment_distance,
    ray_hit_distance,
    segments_intersect,
)


def test_distance_is_euclidean() -> None:
    assert 5.0 == distance((0.0, 0.0), (3.0, 4.0))


def test_heading_points_north_for_a_target_above() -> None:
    assert math.pi / 2 == pytest.approx(heading((1.0, 1.0), (1.0, 5.0)))


def test_angle_difference_wraps_around() -> None:
    assert 0.2 == pytest.approx(angle_difference(math.pi - 0.1, -math.pi + 0.1))


def test_view_cone_contains_targets_within_half_angle_only() -> None:
    east = 0.0
    assert in_view_cone((0.0, 0.0), east, (10.0, 3.0), math.radians(30))
    assert not in_view_cone((0.0, 0.0), east, (0.0, 10.0), math.radians(30))


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ((0.0, 10.0), "n"),
        ((10.0, 10.0), "ne"),
        ((10.0, 0.0), "e"),
        ((10.0, -10.0), "se"),
        ((0.0, -10.0), "s"),
        ((-10.0, -10.0), "sw"),
        ((-10.0, 0.0), "w"),
        ((-10.0, 10.0), "nw"),
        ((2.0, 10.0), "n"),
    ],
)
def test_direction_of_names_the_compass_sector(target: tuple[float, float], expected: str) -> None:
    assert expected == direction_of((0.0, 0.0), target)


def test_direction_vector_round_trips_through_direction_of() -> None:
    for name in DIRECTIONS:
        assert name == direction_of((0.0, 0.0), direction_vector(name))


def test_unknown_direction_lists_the_known_ones() -> None:
    with pytest.raises(ConfigurationError, match="known directions: n, ne"):
        direction_vector("up")


def test_move_toward_stops_at_the_target() -> None:
    assert (3.0, 0.0) == move_toward((0.0, 0.0), (10.0, 0.0), 3.0)
    assert (10.0, 0.0) == move_toward((0.0, 0.0), (10.0, 0.0), 30.0)


def test_centroid_and_bounding_box_of_a_square() -> None:
    square = [(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (0.0, 2.0)]
    assert (1.0, 1.0) == centroid(square)
    assert (0.0, 0.0, 2.0, 2.0) == bounding_box(square)


def test_crossing_segments_intersect_and_parallel_ones_do_not() -> None:
    assert segments_intersect((0.0, 0.0), (2.0, 2.0), (0.0, 2.0), (2.0, 0.0))
    assert not segments_intersect((0.0, 0.0), (2.0, 0.0), (0.0, 1.0), (2.0, 1.0))


def test_touching_a_wall_corner_counts_as_intersecting() -> None:
    assert segments_intersect((0.0, 0.0), (2.0, 2.0), (1.0, 1.0), (5.0, 1.0))


def test_point_segment_distance_uses_the_nearest_end_beyond_the_segment() -> None:
    assert 1.0 == point_segment_distance((0.0, 1.0), ((0.0, 0.0), (4.0, 0.0)))
    assert 5.0 == point_segment_distance((7.0, 4.0), ((0.0, 0.0), (4.0, 0.0)))


def test_ray_hits_the_nearest_wall_within_reach() -> None:
    walls = [((3.0, -1.0), (3.0, 1.0)), ((1.0, -1.0), (1.0, 1.0))]
    assert 1.0 == pytest.approx(ray_hit_distance((0.0, 0.0), (1.0, 0.0), 5.0, walls))
    assert None is ray_hit_distance((0.0, 0.0), (1.0, 0.0), 0.5, walls)


def test_a_wall_blocks_line_of_sight() -> None:
    wall = ((5.0, -5.0), (5.0, 5.0))
    assert not line_of_sight((0.0, 0.0), (10.0, 0.0), [wall])
    assert line_of_sight((0.0, 0.0), (0.0, 10.0), [wall])


def _random_walls(rng: random.Random, count: int) -> list[tuple[tuple[float, float], ...]]:
    walls = []
    for _ in range(count):
        x, y = rng.uniform(0, 100), rng.uniform(0, 100)
        walls.append(((x, y), (x + rng.uniform(-10, 10), y + rng.uniform(-10, 10))))
    return walls


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    a=st.tuples(st.floats(0, 100), st.floats(0, 100)),
    b=st.tuples(st.floats(0, 100), st.floats(0, 100)),
)
def test_wall_index_gives_the_same_answer_as_checking_every_wall(
    seed: int, a: tuple[float, float], b: tuple[float, float]
) -> None:
    walls = [(w[0], w[1]) for w in _random_walls(random.Random(seed), 40)]
    index = WallIndex(walls, cell_size=7.0)
    assert line_of_sight(a, b, walls) == index.line_of_sight(a, b)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    limit=st.integers(1, 12),
    lines=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=60),
)
def test_wall_index_answers_from_memory_as_it_would_work_out_again(
    seed: int, limit: int, lines: list[tuple[int, int]]
) -> None:
    # Few points, many questions: most answers come from memory, and a small memory_limit
    # empties it now and then; every answer must be the one worked out from every wall.
    rng = random.Random(seed)
    walls = [(w[0], w[1]) for w in _random_walls(rng, 40)]
    points = [(rng.uniform(0, 100), rng.uniform(0, 100)) for _ in range(5)] + [(-0.0, 0.0)]
    index = WallIndex(walls, cell_size=7.0, memory_limit=limit)
    for i, j in lines:
        a, b = points[i], points[j]
        assert index.line_of_sight(a, b) == line_of_sight(a, b, walls)
        assert 1 <= index.remembered() <= limit


def test_wall_index_refuses_an_empty_memory() -> None:
    with pytest.raises(ConfigurationError, match="memory_limit"):
        WallIndex([], memory_limit=0)


def test_wall_index_sees_a_wall_touching_the_line_across_a_cell_border() -> None:
    # The wall's end sits at y=0 (cell row 0); the line runs a hair below, in cell row -1. The
    # intersection test counts the touch, so the index must offer the wall as a candidate.
    wall = ((0.0, 0.0), (0.0, 4.0))
    a, b = (-3.0, -5e-24), (3.0, -5e-24)
    assert line_of_sight(a, b, [wall]) == WallIndex([wall]).line_of_sight(a, b)
