"""Squad pathfinding over areas, regroup-marker choice, and waypoint paths inside a corridor.

The squad pathfinder is single-source (Killzone 3): one Dijkstra from the squad's area gives the
cost to every area, so a squad planner can ask many "how far / which way" questions per plan.
Entering an area costs the distance between area centres, plus ``influence_weight`` times the
enemy influence in it, plus ``claim_penalty`` for every friendly squad whose corridor already
uses it (spreading simultaneous attacks over different routes). The resulting sequence of
areas is the squad's *corridor*: members plan their own waypoint paths inside it with
:func:`waypoint_path`.
"""

from __future__ import annotations

import heapq
import math
import weakref
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

from warband.world._links import links_of
from warband.world.influence import InfluenceMap
from warband.world.maps import Map, Marker, link_key
from warband.world.strategic import StrategicGraph


@dataclass(frozen=True)
class RouteSettings:
    """Cost weights of the squad pathfinder."""

    influence_weight: float = 10.0
    """Extra cost per unit of enemy influence in an entered area."""
    claim_penalty: float = 15.0
    """Extra cost per other friendly squad whose corridor includes an entered area."""


class RouteTree:
    """Result of one single-source search: cost and best predecessor of every reachable area."""

    def __init__(self, source: int, costs: dict[int, float], parents: dict[int, int]) -> None:
        self.source = source
        self._costs = costs
        self._parents = parents

    def cost_to(self, area_id: int) -> float:
        """Cost of the best route to ``area_id`` (``math.inf`` when unreachable)."""
        return self._costs.get(area_id, math.inf)

    def reachable(self) -> frozenset[int]:
        """Every area the squad can reach."""
        return frozenset(self._costs)

    def corridor_to(self, area_id: int) -> tuple[int, ...] | None:
        """Areas from the source to ``area_id`` inclusive, or ``None`` when unreachable."""
        if area_id not in self._costs:
            return None
        path = [area_id]
        while path[-1] != self.source:
            path.append(self._parents[path[-1]])
        return tuple(reversed(path))


class SquadClaims:
    """Which areas each friendly squad's corridor uses, so other squads pay a penalty there."""

    def __init__(self) -> None:
        self._claims: dict[str, tuple[int, ...]] = {}

    def claim(self, squad: str, corridor: Iterable[int]) -> None:
        """Record (replacing any earlier one) the corridor ``squad`` is using."""
        self._claims[squad] = tuple(corridor)

    def release(self, squad: str) -> None:
        """Forget ``squad``'s corridor (no error if it had none)."""
        self._claims.pop(squad, None)

    def counts_for(self, squad: str) -> dict[int, int]:
        """Per area, how many *other* squads' corridors use it."""
        counts: dict[int, int] = {}
        for other, corridor in sorted(self._claims.items()):
            if other == squad:
                continue
            for area in set(corridor):
                counts[area] = counts.get(area, 0) + 1
        return counts


def plan_routes(
    graph: StrategicGraph,
    source: int,
    *,
    influence: InfluenceMap | Mapping[int, float] | None = None,
    claimed: Mapping[int, int] | None = None,
    settings: RouteSettings | None = None,
) -> RouteTree:
    """Single-source Dijkstra over areas from ``source`` (see the module docstring for costs).

    ``influence`` gives enemy influence per area (an :class:`InfluenceMap` of the squad's
    faction, or a plain mapping); ``claimed`` counts other squads per area (from
    :meth:`SquadClaims.counts_for`). Ties break on area id, so results are deterministic.
    """
    s = settings or RouteSettings()
    enemy = _enemy_lookup(influence)
    claims = claimed or {}
    costs = {source: 0.0}
    parents: dict[int, int] = {}
    heap = [(0.0, source)]
    done: set[int] = set()
    while heap:
        cost, area = heapq.heappop(heap)
        if area in done:
            continue
        done.add(area)
        for nxt in graph.neighbours(area):
            step = (
                graph.connection_cost(area, nxt)
                + s.influence_weight * max(0.0, enemy(nxt))
                + s.claim_penalty * claims.get(nxt, 0)
            )
            total = cost + step
            if total < costs.get(nxt, math.inf):
                costs[nxt] = total
                parents[nxt] = area
                heapq.heappush(heap, (total, nxt))
    return RouteTree(source, costs, parents)


def _enemy_lookup(influence: InfluenceMap | Mapping[int, float] | None) -> Callable[[int], float]:
    if influence is None:
        return lambda area: 0.0
    if isinstance(influence, InfluenceMap):
        return influence.enemy
    return lambda area: influence.get(area, 0.0)


def choose_regroup_marker(
    game_map: Map,
    graph: StrategicGraph,
    routes: RouteTree,
    *,
    influence: InfluenceMap | Mapping[int, float] | None = None,
    objective: int | None = None,
    influence_weight: float = 10.0,
    candidates: Collection[Marker] | None = None,
) -> Marker | None:
    """The regroup marker with the lowest score, or ``None`` when none is reachable.

    Score: the squad's route cost to the marker's area (which already counts influence on the
    way), plus ``influence_weight`` times the enemy influence at the marker, plus the straight
    distance from the marker's area to the ``objective`` area when one is given (regroup
    markers are safe places *near the objective*). ``candidates`` defaults to the map's
    regroup markers.
    """
    enemy = _enemy_lookup(influence)
    options = list(candidates) if candidates is not None else list(game_map.markers_of("regroup"))
    best: tuple[float, str, Marker] | None = None
    for marker in options:
        area = graph.area_of(marker.waypoint)
        travel = routes.cost_to(area)
        if math.isinf(travel):
            continue
        score = travel + influence_weight * max(0.0, enemy(area))
        if objective is not None:
            score += graph.connection_cost(area, objective)
        if best is None or (score, marker.id) < best[:2]:
            best = (score, marker.id, marker)
    return None if best is None else best[2]


PATH_MEMORY_LIMIT = 20_000
"""Paths :func:`waypoint_path` keeps per map before it empties its memory and starts again."""

_PathKey = tuple[str, str, frozenset[str] | None, frozenset[tuple[str, str]]]
_PATHS: weakref.WeakKeyDictionary[Map, dict[_PathKey, tuple[str, ...] | None]] = (
    weakref.WeakKeyDictionary()
)
_UNKNOWN = object()
_NO_LINKS: frozenset[tuple[str, str]] = frozenset()


def waypoint_path(
    game_map: Map,
    start: str,
    goal: str,
    *,
    allowed: Collection[str] | None = None,
    blocked_links: Collection[tuple[str, str]] = (),
) -> tuple[str, ...] | None:
    """Shortest waypoint path (A*) from ``start`` to ``goal``, both inclusive, or ``None``.

    ``allowed`` restricts the search to these waypoints (a corridor: see
    :meth:`StrategicGraph.waypoints_in`); ``start`` is always allowed. ``blocked_links`` are
    links that cannot be crossed now (closed doors and bars). Raises ``KeyError`` for an unknown
    waypoint id.

    A map never changes, so the answer depends on the arguments alone: it is remembered per
    map (up to :data:`PATH_MEMORY_LIMIT` paths), keyed by the ends, the set of waypoints
    allowed and the set of links blocked. Bots ask the same ways again and again (a 48 v 48
    match on warzone-x4: 1.3 ways asked per agent and tick, 0.5 to 0.8 of them searched).
    """
    memory = _PATHS.get(game_map)
    if memory is None:
        memory = _PATHS[game_map] = {}
    key: _PathKey = (
        start,
        goal,
        None if allowed is None else frozenset(allowed),
        frozenset(link_key(a, b) for a, b in blocked_links) if blocked_links else _NO_LINKS,
    )
    known = memory.get(key, _UNKNOWN)
    if known is not _UNKNOWN:
        return known  # type: ignore[return-value]  # a path or None, as worked out before
    path = _search_path(game_map, start, goal, key[2], key[3])
    if len(memory) >= PATH_MEMORY_LIMIT:
        memory.clear()
    memory[key] = path
    return path


def _search_path(
    game_map: Map,
    start: str,
    goal: str,
    allowed: Collection[str] | None,
    blocked: Collection[tuple[str, str]],
) -> tuple[str, ...] | None:
    """A* over the waypoints (see :func:`waypoint_path`); ``blocked`` holds link keys.

    It walks the map's link table (:mod:`~warband.world._links`), so its loop over links calls
    no method: the same floats (the same functions computed them) in the same order, hence the
    same heap and the same path as a search through the map's methods, which the tests check
    on every pair of ends. The restrictions are laid into where the search starts, not tested
    per link: a waypoint not ``allowed`` starts with a best cost of minus infinity (no way
    beats it, so none is taken), and the blocked links are left out of a copy of the links."""
    links = links_of(game_map)
    first = links.number(game_map, start)
    last = links.number(game_map, goal)
    guess = links.guesses(last)
    best = links.fresh_costs(allowed)
    best[first] = 0.0
    parents = [first] * len(best)
    out = links.without(blocked) if blocked else links.out
    push = heapq.heappush
    pop = heapq.heappop
    # Equal ways are taken nearer the map's centre first, then by id (indices rank as the ids
    # sort): on a mirror-symmetric map both sides then walk mirror images (by id alone, the west
    # team went round a house on its outer side and the east team on its inner side: 16 of
    # Warzone's 2,352 paths).
    heap = [(guess[first], 0.0, 0.0, first)]
    while heap:
        _, cost, _, node = pop(heap)
        if node == last:
            return links.path(parents, first, last)
        if cost > best[node]:
            continue
        for nxt, length, centre in out[node]:
            total = cost + length
            if total < best[nxt]:
                best[nxt] = total
                parents[nxt] = node
                push(heap, (total + guess[nxt], total, centre, nxt))
    return None


def area_weighted_path(
    game_map: Map,
    graph: StrategicGraph,
    origin: str,
    goal: str,
    area_costs: Mapping[int, float],
) -> tuple[str, ...] | None:
    """Cheapest waypoint path from ``origin`` to ``goal`` (Dijkstra), or ``None``: each link
    costs its length plus ``area_costs`` of the area it enters, when it leaves one area of
    ``graph`` (the map's strategic graph) for another; ties go to the smaller waypoint id.
    Raises ``KeyError`` for an unknown ``origin``."""
    links = links_of(game_map)
    first = links.index[origin]
    last = links.index.get(goal)
    areas = links.areas(graph)
    cost_of = area_costs.get
    out = links.out
    best = [math.inf] * len(areas)
    best[first] = 0.0
    parents = [first] * len(areas)
    done = [False] * len(areas)
    push = heapq.heappush
    pop = heapq.heappop
    heap = [(0.0, first)]  # indices rank as the ids sort: ties go the same way
    while heap:
        cost, here = pop(heap)
        if done[here]:
            continue
        done[here] = True
        if here == last:
            return links.path(parents, first, last)
        area = areas[here]
        for there, length, _ in out[here]:
            entered = areas[there]
            step = length
            if entered != area:
                step += cost_of(entered, 0.0)
            if cost + step < best[there]:
                best[there] = cost + step
                parents[there] = here
                push(heap, (cost + step, there))
    return None
