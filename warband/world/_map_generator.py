"""Generated maps: big grids with walls, spawns and capture points for benchmarks and tests."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from warband.exceptions import ConfigurationError
from warband.world._map_file import map_from_data
from warband.world.geometry import Point
from warband.world.maps import DEFAULT_TEAMS, Map


def grid_map(
    columns: int,
    rows: int,
    *,
    spacing: float = 5.0,
    wall_fraction: float = 0.0,
    seed: int = 0,
    teams: Sequence[str] = DEFAULT_TEAMS,
    name: str | None = None,
) -> Map:
    """A generated grid of ``columns`` x ``rows`` waypoints named ``g{col}_{row}``.

    Neighbouring waypoints are linked. With ``wall_fraction`` > 0, that share of the links is
    removed (seeded by ``seed``) and replaced by a short wall across the gap, keeping the graph
    connected. The first team spawns on column 0, the second on the last column (other teams
    get no spawns); three capture points lie on the middle column, a regroup marker next to
    each team's spawns and TSPs at the quarter columns. Needs ``columns >= 3`` and ``rows >= 1``
    (ConfigurationError otherwise).
    """
    if columns < 3 or rows < 1:
        raise ConfigurationError(f"grid_map needs columns >= 3 and rows >= 1, got {columns}x{rows}")
    if not 0.0 <= wall_fraction < 1.0:
        raise ConfigurationError(f"grid_map: wall_fraction must be in [0, 1), got {wall_fraction}")

    def wid(c: int, r: int) -> str:
        return f"g{c}_{r}"

    pairs = [(wid(c, r), wid(c + 1, r)) for c in range(columns - 1) for r in range(rows)]
    pairs += [(wid(c, r), wid(c, r + 1)) for c in range(columns) for r in range(rows - 1)]
    removed = _removable_links(pairs, wall_fraction, random.Random(seed))
    walls = [_wall_across(a, b, spacing) for a, b in removed]
    kept = [list(p) for p in pairs if p not in removed]
    data: dict[str, Any] = {
        "name": name or f"grid-{columns}x{rows}",
        "description": "generated grid map",
        "teams": list(teams),
        "links": kept,
        "walls": walls,
        "waypoints": [
            {"id": wid(c, r), "pos": [c * spacing, r * spacing]}
            for c in range(columns)
            for r in range(rows)
        ],
        "markers": _grid_markers(columns, rows, list(teams), wid),
    }
    return map_from_data(data, source=f"<grid_map {columns}x{rows} seed={seed}>")


def _removable_links(
    pairs: Sequence[tuple[str, str]], fraction: float, rng: random.Random
) -> set[tuple[str, str]]:
    """Pick about ``fraction`` of the links to remove without disconnecting the graph.

    A random spanning tree (Kruskal over shuffled links) is always kept, so only links that
    close a cycle are candidates; that keeps generation linear instead of re-testing
    connectivity after every removal.
    """
    order = list(pairs)
    rng.shuffle(order)
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    spare: list[tuple[str, str]] = []
    for a, b in order:
        ra, rb = root(a), root(b)
        if ra == rb:
            spare.append((a, b))
        else:
            parent[ra] = rb
    return set(spare[: int(len(pairs) * fraction)])


def _grid_position(ident: str, spacing: float) -> Point:
    col, row = ident[1:].split("_")
    return (int(col) * spacing, int(row) * spacing)


def _wall_across(a: str, b: str, spacing: float) -> list[list[float]]:
    """A wall across link a-b at its midpoint, short enough to cross no other link."""
    (ax, ay), (bx, by) = _grid_position(a, spacing), _grid_position(b, spacing)
    mx, my = (ax + bx) / 2, (ay + by) / 2
    half = spacing * 0.4
    if ay == by:
        return [[mx, my - half], [mx, my + half]]
    return [[mx - half, my], [mx + half, my]]


def _grid_markers(columns: int, rows: int, teams: list[str], wid: Any) -> list[dict[str, Any]]:
    markers: list[dict[str, Any]] = []
    sides = [(0, 1), (columns - 1, columns - 2)]
    for team, (spawn_col, regroup_col) in zip(teams[:2], sides, strict=False):
        for r in range(rows):
            markers.append(
                {
                    "id": f"spawn-{team}-{r}",
                    "kind": "spawn",
                    "waypoint": wid(spawn_col, r),
                    "team": team,
                }
            )
        markers.append(
            {"id": f"regroup-{team}", "kind": "regroup", "waypoint": wid(regroup_col, rows // 2)}
        )
    middle = columns // 2
    for label, row in zip("abc", sorted({0, rows // 2, rows - 1}), strict=False):
        markers.append({"id": f"cp-{label}", "kind": "capture", "waypoint": wid(middle, row)})
    for label, col in (("west", columns // 4), ("east", columns - 1 - columns // 4)):
        markers.append({"id": f"tsp-{label}", "kind": "tsp", "waypoint": wid(col, rows // 2)})
    return markers
