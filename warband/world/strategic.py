"""The strategic graph: areas clustered from the waypoint graph, for squad-level reasoning.

Killzone 3 summarises the waypoint graph into areas (groups of waypoints) joined by
connections, so squads plan over tens of areas instead of hundreds of waypoints. Clustering
starts from one area per waypoint and repeatedly merges two *linked* areas while the merged
area stays within a waypoint-count limit and a spatial-extent limit. Because only areas joined
by a link are merged, every area's waypoints are connected inside the area, and a path exists
between two areas exactly when one exists between their waypoints (tests check this on every
bundled map and on generated graphs).

Merges happen smallest-first (then closest centroids first), which grows balanced areas
instead of one area swallowing its neighbours; ties break on ids so the result is deterministic.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field

from warband.exceptions import ConfigurationError
from warband.world.geometry import BoundingBox, Point, centroid, distance, distance_sq
from warband.world.maps import Link, Map, link_key

DEFAULT_MAX_WAYPOINTS = 6
"""Default limit on the number of waypoints in one area."""

DEFAULT_MAX_EXTENT = 10.0
"""Default limit on an area's width and height, in map units."""


@dataclass(frozen=True)
class Area:
    """A group of waypoints connected inside the group; ``id`` indexes ``StrategicGraph.areas``."""

    id: int
    waypoints: tuple[str, ...]
    centre: Point
    box: BoundingBox


@dataclass(frozen=True, eq=False)
class StrategicGraph:
    """Areas and the connections between them. Build it with :func:`build_strategic_graph`.

    Two areas are connected when a waypoint link joins them; the connection cost is the
    distance between their centres.
    """

    areas: tuple[Area, ...]
    connections: tuple[tuple[int, int], ...]
    positions: Mapping[str, Point]
    _area_of: dict[str, int] = field(init=False, repr=False)
    _neighbours: dict[int, tuple[int, ...]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # Frozen dataclass: derived indexes are set once here.
        area_of = {wp: area.id for area in self.areas for wp in area.waypoints}
        neighbours: dict[int, set[int]] = {area.id: set() for area in self.areas}
        for a, b in self.connections:
            neighbours[a].add(b)
            neighbours[b].add(a)
        object.__setattr__(self, "_area_of", area_of)
        object.__setattr__(
            self, "_neighbours", {k: tuple(sorted(v)) for k, v in neighbours.items()}
        )

    def area_of(self, waypoint_id: str) -> int:
        """Id of the area holding ``waypoint_id`` (``KeyError`` if unknown)."""
        return self._area_of[waypoint_id]

    def area_at(self, point: Point) -> int:
        """Id of the area holding the waypoint nearest to ``point``."""
        nearest = min(self.positions, key=lambda wp: (distance_sq(self.positions[wp], point), wp))
        return self._area_of[nearest]

    def neighbours(self, area_id: int) -> tuple[int, ...]:
        """Ids of the areas connected to ``area_id``, sorted."""
        return self._neighbours[area_id]

    def connection_cost(self, a: int, b: int) -> float:
        """Distance between the centres of areas ``a`` and ``b``."""
        return distance(self.areas[a].centre, self.areas[b].centre)

    def waypoints_in(self, area_ids: Iterable[int]) -> frozenset[str]:
        """All waypoints of the given areas: a squad corridor as the waypoints it allows."""
        return frozenset(wp for a in area_ids for wp in self.areas[a].waypoints)

    def reachable_from(self, area_id: int) -> frozenset[int]:
        """Areas reachable from ``area_id`` through connections (including itself)."""
        seen = {area_id}
        stack = [area_id]
        while stack:
            for nxt in self._neighbours[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return frozenset(seen)


@dataclass
class _Cluster:
    waypoints: list[str]
    box: BoundingBox
    sum_x: float
    sum_y: float
    alive: bool = True
    version: int = 0

    @property
    def centre(self) -> Point:
        return (self.sum_x / len(self.waypoints), self.sum_y / len(self.waypoints))


def build_strategic_graph(
    game_map: Map,
    *,
    max_waypoints: int = DEFAULT_MAX_WAYPOINTS,
    max_extent: float = DEFAULT_MAX_EXTENT,
) -> StrategicGraph:
    """Cluster a map's waypoints into areas.

    Links blocked by doors or bars are never merged over, so a cell or a room behind a door
    is its own area and the door sits on an area connection.
    """
    positions = {w.id: w.pos for w in game_map.waypoints}
    separators = [o.link for o in game_map.objects if o.link is not None]
    return cluster_waypoints(
        positions,
        game_map.links,
        max_waypoints=max_waypoints,
        max_extent=max_extent,
        separators=separators,
    )


def cluster_waypoints(
    positions: Mapping[str, Point],
    links: Iterable[tuple[str, str]],
    *,
    max_waypoints: int = DEFAULT_MAX_WAYPOINTS,
    max_extent: float = DEFAULT_MAX_EXTENT,
    separators: Collection[tuple[str, str]] = (),
) -> StrategicGraph:
    """Cluster any waypoint graph (ids -> positions, undirected links) into a strategic graph.

    ``separators`` are links the clustering must not merge over (they still connect areas).
    Raises ConfigurationError for a link naming an unknown waypoint or for limits below one.
    """
    if max_waypoints < 1 or max_extent < 0:
        raise ConfigurationError(
            f"max_waypoints must be >= 1 and max_extent >= 0, got {max_waypoints}, {max_extent}"
        )
    order = list(positions)
    link_set: set[Link] = set()
    for a, b in links:
        if a not in positions or b not in positions:
            raise ConfigurationError(f"link {a!r}-{b!r} names a waypoint without a position")
        if a != b:
            link_set.add(link_key(a, b))
    blocked = {link_key(a, b) for a, b in separators}
    clusters, owner = _merge(order, positions, sorted(link_set), blocked, max_waypoints, max_extent)
    return _assemble(order, positions, sorted(link_set), clusters, owner)


def _merge(
    order: list[str],
    positions: Mapping[str, Point],
    links: list[Link],
    blocked: set[Link],
    max_waypoints: int,
    max_extent: float,
) -> tuple[list[_Cluster], dict[str, int]]:
    clusters = [
        _Cluster([wp], (*positions[wp], *positions[wp]), positions[wp][0], positions[wp][1])
        for wp in order
    ]
    owner = {wp: i for i, wp in enumerate(order)}
    # Cluster adjacency through mergeable links only; separators never join two clusters.
    adjacent: dict[int, set[int]] = {i: set() for i in range(len(clusters))}
    for a, b in links:
        if (a, b) not in blocked:
            adjacent[owner[a]].add(owner[b])
            adjacent[owner[b]].add(owner[a])
    heap: list[_Candidate] = []
    middle = centroid(positions[wp] for wp in order) if order else (0.0, 0.0)

    def push(i: int, j: int) -> None:
        ci, cj = clusters[i], clusters[j]
        size = len(ci.waypoints) + len(cj.waypoints)
        if size > max_waypoints or _extent(_union(ci.box, cj.box)) > max_extent:
            return
        lo, hi = min(i, j), max(i, j)
        gap = round(distance(ci.centre, cj.centre), GAP_DIGITS)
        merged = ((ci.sum_x + cj.sum_x) / size, (ci.sum_y + cj.sum_y) / size)
        # Outer merges first: a rule a mirror image of the map ranks the same way (its
        # distance to the middle is the mirror's), unlike a tie broken by waypoint order.
        outward = -round(distance(merged, middle), GAP_DIGITS)
        version = (clusters[lo].version, clusters[hi].version)
        heapq.heappush(heap, (size, gap, outward, lo, hi, *version))

    for i, others in adjacent.items():
        for j in others:
            if i < j:
                push(i, j)
    while heap:
        batch = _next_batch(heap, clusters)
        # A cluster with two candidates of the same rank (a waypoint between two mirror
        # images, say) merges with neither: picking one by id would make the areas of a
        # mirror-symmetric map lopsided. Candidates of one batch are otherwise disjoint, so
        # the order they are merged in does not matter.
        uses: dict[int, int] = {}
        for i, j in batch:
            uses[i] = uses.get(i, 0) + 1
            uses[j] = uses.get(j, 0) + 1
        for i, j in batch:
            if uses[i] == 1 and uses[j] == 1:
                _absorb(clusters, owner, adjacent, i, j, push)
    return clusters, owner


GAP_DIGITS = 6
"""Centroid gaps equal to this many decimals rank the same (mirror images' gaps differ by
float noise only)."""


_Candidate = tuple[int, float, float, int, int, int, int]
"""A merge candidate: (size, gap, outward, cluster, cluster, their versions); the first three
are its rank."""


def _next_batch(heap: list[_Candidate], clusters: list[_Cluster]) -> list[tuple[int, int]]:
    """The live merge candidates of the best rank, popped from ``heap``."""
    batch: list[tuple[int, int]] = []
    rank: tuple[int, float, float] | None = None
    while heap:
        size, gap, outward, i, j, vi, vj = heap[0]
        if rank is not None and (size, gap, outward) != rank:
            break
        heapq.heappop(heap)
        ci, cj = clusters[i], clusters[j]
        if not (ci.alive and cj.alive) or ci.version != vi or cj.version != vj:
            continue  # stale entry: one side has grown or been absorbed since it was pushed
        rank = (size, gap, outward)
        batch.append((i, j))
    return batch


def _absorb(
    clusters: list[_Cluster],
    owner: dict[str, int],
    adjacent: dict[int, set[int]],
    i: int,
    j: int,
    push: Callable[[int, int], None],
) -> None:
    """Merge cluster ``j`` into cluster ``i`` and push ``i``'s new merge candidates."""
    ci, cj = clusters[i], clusters[j]
    ci.waypoints.extend(cj.waypoints)
    ci.box = _union(ci.box, cj.box)
    ci.sum_x += cj.sum_x
    ci.sum_y += cj.sum_y
    ci.version += 1
    cj.alive = False
    for wp in cj.waypoints:
        owner[wp] = i
    adjacent[i] = (adjacent[i] | adjacent.pop(j)) - {i, j}
    for k in adjacent[i]:
        adjacent[k].discard(j)
        adjacent[k].add(i)
        push(i, k)


def _assemble(
    order: list[str],
    positions: Mapping[str, Point],
    links: list[Link],
    clusters: list[_Cluster],
    owner: dict[str, int],
) -> StrategicGraph:
    # Number areas by their first waypoint in map order, so ids are stable and readable.
    rank = {wp: i for i, wp in enumerate(order)}
    alive = sorted(
        (c for c in clusters if c.alive), key=lambda c: min(rank[wp] for wp in c.waypoints)
    )
    new_id = {id(c): n for n, c in enumerate(alive)}
    areas = tuple(
        Area(
            new_id[id(c)],
            tuple(sorted(c.waypoints, key=rank.__getitem__)),
            centroid(positions[wp] for wp in c.waypoints),
            c.box,
        )
        for c in alive
    )
    area_of = {wp: new_id[id(clusters[owner[wp]])] for wp in order}
    connections = sorted(
        {
            (min(area_of[a], area_of[b]), max(area_of[a], area_of[b]))
            for a, b in links
            if area_of[a] != area_of[b]
        }
    )
    return StrategicGraph(areas, tuple(connections), dict(positions))


def _union(a: BoundingBox, b: BoundingBox) -> BoundingBox:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _extent(box: BoundingBox) -> float:
    return max(box[2] - box[0], box[3] - box[1])


def area_path_exists(graph: StrategicGraph, a: int, b: int) -> bool:
    """True when area ``b`` can be reached from area ``a`` through connections."""
    return b in graph.reachable_from(a)
