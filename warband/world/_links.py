"""A map's waypoint graph laid out for the searches over it (:mod:`~warband.world.pathfinding`,
:mod:`~warband.world.positions`): waypoints numbered, and per waypoint its links with what a
search reads of them, taken from the map's own methods once per map, so that a search's loop
over links calls no method. The floats are the very ones the methods give, so a search on the
table takes the same steps and finds the same answer as one through the methods.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Collection, Sequence
from typing import TypeVar

from warband.world.maps import Map, link_key
from warband.world.strategic import StrategicGraph


def _dist(a: tuple[float, float], b: tuple[float, float]) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


_K = TypeVar("_K")
_V = TypeVar("_V")

Out = tuple[int, float, float]
"""One link as a search reads it from a waypoint: the other end's index, the link's length
(:meth:`Map.link_length`) and the other end's :meth:`Map.from_centre`."""


class WaypointLinks:
    """The table of one map (see the module docstring): waypoints numbered in the order of
    their ids (so indices rank as the ids do, and a tie broken by index goes as one broken by
    id), and per waypoint its links in :meth:`Map.neighbours` order."""

    def __init__(self, game_map: Map) -> None:
        self.ids: tuple[str, ...] = tuple(sorted(game_map.waypoint_ids))
        self.index: dict[str, int] = {wp: i for i, wp in enumerate(self.ids)}
        self._positions = [game_map.position(wp) for wp in self.ids]
        self._guesses: dict[int, list[float]] = {}
        self._areas: weakref.WeakKeyDictionary[StrategicGraph, list[int]] = (
            weakref.WeakKeyDictionary()
        )
        self._costs: dict[frozenset[str], list[float]] = {}
        self._without: dict[frozenset[tuple[str, str]], tuple[tuple[Out, ...], ...]] = {}
        self.out: tuple[tuple[Out, ...], ...] = tuple(
            tuple(
                (self.index[nxt], game_map.link_length(wp, nxt), game_map.from_centre(nxt))
                for nxt in game_map.neighbours(wp)
            )
            for wp in self.ids
        )

    def number(self, game_map: Map, waypoint: str) -> int:
        """The index of ``waypoint``; for an unknown one, the map's own error (the table holds
        no reference to its map, which keys it weakly)."""
        found = self.index.get(waypoint)
        if found is None:
            game_map.waypoint(waypoint)  # raises UnknownIdError, naming the map's way to check
            raise AssertionError(f"{waypoint!r} is on the map but not in its link table")
        return found

    def path(self, parents: list[int], first: int, last: int) -> tuple[str, ...]:
        """The ids from ``first`` to ``last`` along ``parents`` (each waypoint's predecessor)."""
        path = [last]
        node = last
        while node != first:
            node = parents[node]
            path.append(node)
        ids = self.ids
        return tuple([ids[i] for i in reversed(path)])

    def areas(self, graph: StrategicGraph) -> list[int]:
        """Per waypoint, its area in ``graph`` (a strategic graph of the map)."""
        known = self._areas.get(graph)
        if known is None:
            known = self._areas[graph] = [graph.area_of(wp) for wp in self.ids]
        return known

    def guesses(self, goal: int) -> list[float]:
        """Per waypoint, the search's estimate of its way to ``goal``: the straight distance,
        :func:`_dist` (worked out once per goal: bots walk to few places)."""
        known = self._guesses.get(goal)
        if known is None:
            goal_pos = self._positions[goal]
            known = self._guesses[goal] = [_dist(pos, goal_pos) for pos in self._positions]
        return known

    def fresh_costs(self, allowed: Collection[str] | None) -> list[float]:
        """Best costs before a search: infinity where it may go, minus infinity elsewhere (no
        way beats minus infinity, so a search never takes a waypoint outside ``allowed``)."""
        if allowed is None:
            return [math.inf] * len(self.ids)
        key = allowed if isinstance(allowed, frozenset) else frozenset(allowed)
        known = self._costs.get(key)
        if known is None:
            known = [-math.inf] * len(self.ids)
            index = self.index
            for wp in key:
                i = index.get(wp)
                if i is not None:
                    known[i] = math.inf
            _remember(self._costs, key, known)
        return known.copy()

    def without(self, blocked: Collection[tuple[str, str]]) -> Sequence[tuple[Out, ...]]:
        """:attr:`out` without the links whose keys are in ``blocked`` (a pair that is no link's
        key, such as one not sorted, blocks nothing: the search looked keys up)."""
        key = blocked if isinstance(blocked, frozenset) else frozenset(blocked)
        known = self._without.get(key)
        if known is None:
            out = list(self.out)
            index = self.index
            for a, b in key:
                i, j = index.get(a), index.get(b)
                if i is None or j is None or link_key(a, b) != (a, b):
                    continue
                out[i] = tuple(link for link in out[i] if link[0] != j)
                out[j] = tuple(link for link in out[j] if link[0] != i)
            known = tuple(out)
            _remember(self._without, key, known)
        return known


_REMEMBER = 256
"""Corridors and sets of closed links whose starting state a table keeps: a match has few of
each (the doors' states; the squads' routes)."""


def _remember(memory: dict[_K, _V], key: _K, value: _V) -> None:
    if len(memory) >= _REMEMBER:
        memory.clear()
    memory[key] = value


_TABLES: weakref.WeakKeyDictionary[Map, WaypointLinks] = weakref.WeakKeyDictionary()


def links_of(game_map: Map) -> WaypointLinks:
    """The table of ``game_map``, made on the first call and kept while the map lives."""
    links = _TABLES.get(game_map)
    if links is None:
        links = _TABLES[game_map] = WaypointLinks(game_map)
    return links
