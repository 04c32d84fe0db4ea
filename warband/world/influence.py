"""Per-faction influence maps over the strategic graph's areas.

Each faction keeps its own map: per area, how strongly friends and how strongly enemies hold
it. One :meth:`InfluenceMap.update` per tick

1. counts friendly and enemy bots and turrets per area, plus a "danger" heat from recent
   deaths (a friend killed here means enemies hold it; an enemy killed here means we do), the
   heat fading by ``death_decay`` each tick;
2. smooths by distance: each area's raw value spreads to areas within ``spread_radius`` along
   the area graph, halving every ``half_distance`` units;
3. smooths over time: the new value is ``persistence * old + (1 - persistence) * new``.

Everything is deterministic: areas are visited in id order.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass

from warband.world.strategic import StrategicGraph


@dataclass(frozen=True)
class InfluenceSettings:
    """Weights and smoothing of an influence map (defaults suit maps in metres)."""

    bot_weight: float = 1.0
    """Influence of one bot in its area."""
    turret_weight: float = 1.5
    """Influence of one automated turret or drone in its area."""
    death_weight: float = 2.0
    """Heat added to the killers' side by one death in an area."""
    death_decay: float = 0.8
    """Share of death heat kept from one tick to the next (0..1)."""
    spread_radius: float = 25.0
    """How far (along area connections) an area's influence reaches."""
    half_distance: float = 10.0
    """Distance over which spread influence halves."""
    persistence: float = 0.5
    """Share of last tick's value kept (0: no temporal smoothing, 1: frozen)."""


class InfluenceMap:
    """Influence of one faction's friends and enemies per area; updated once per tick."""

    def __init__(
        self, graph: StrategicGraph, faction: str, settings: InfluenceSettings | None = None
    ) -> None:
        self.graph = graph
        self.faction = faction
        self.settings = settings or InfluenceSettings()
        count = len(graph.areas)
        self._friendly = [0.0] * count
        self._enemy = [0.0] * count
        self._friendly_heat = [0.0] * count
        self._enemy_heat = [0.0] * count
        self._spread_cache: dict[int, list[tuple[int, float]]] = {}

    def update(
        self,
        *,
        friendly: Iterable[str] = (),
        enemy: Iterable[str] = (),
        friendly_turrets: Iterable[str] = (),
        enemy_turrets: Iterable[str] = (),
        friendly_deaths: Iterable[str] = (),
        enemy_deaths: Iterable[str] = (),
    ) -> None:
        """Advance one tick. Every argument lists waypoint ids (one entry per bot/turret/death).

        ``friendly_deaths``/``enemy_deaths`` are the deaths of this tick only.
        """
        s = self.settings
        count = len(self.graph.areas)
        area_of = self.graph.area_of
        self._friendly_heat = [h * s.death_decay for h in self._friendly_heat]
        self._enemy_heat = [h * s.death_decay for h in self._enemy_heat]
        for wp in enemy_deaths:
            self._friendly_heat[area_of(wp)] += s.death_weight
        for wp in friendly_deaths:
            self._enemy_heat[area_of(wp)] += s.death_weight
        raw_friendly = list(self._friendly_heat)
        raw_enemy = list(self._enemy_heat)
        for wps, weight, raw in (
            (friendly, s.bot_weight, raw_friendly),
            (friendly_turrets, s.turret_weight, raw_friendly),
            (enemy, s.bot_weight, raw_enemy),
            (enemy_turrets, s.turret_weight, raw_enemy),
        ):
            for wp in wps:
                raw[area_of(wp)] += weight
        spread_friendly = self._spread(raw_friendly)
        spread_enemy = self._spread(raw_enemy)
        keep = s.persistence
        self._friendly = [
            keep * self._friendly[a] + (1 - keep) * spread_friendly[a] for a in range(count)
        ]
        self._enemy = [keep * self._enemy[a] + (1 - keep) * spread_enemy[a] for a in range(count)]

    def _spread(self, raw: list[float]) -> list[float]:
        out = [0.0] * len(raw)
        for source, value in enumerate(raw):
            if value == 0.0:
                continue
            for target, factor in self._reach(source):
                out[target] += value * factor
        return out

    def _reach(self, source: int) -> list[tuple[int, float]]:
        """Areas within the spread radius of ``source`` and their falloff factor (cached)."""
        cached = self._spread_cache.get(source)
        if cached is not None:
            return cached
        s = self.settings
        best = {source: 0.0}
        heap = [(0.0, source)]
        while heap:
            dist, area = heapq.heappop(heap)
            if dist > best.get(area, float("inf")):
                continue
            for nxt in self.graph.neighbours(area):
                nd = dist + self.graph.connection_cost(area, nxt)
                if nd <= s.spread_radius and nd < best.get(nxt, float("inf")):
                    best[nxt] = nd
                    heapq.heappush(heap, (nd, nxt))
        reach = sorted((a, 0.5 ** (d / s.half_distance)) for a, d in best.items())
        self._spread_cache[source] = reach
        return reach

    def friendly(self, area_id: int) -> float:
        """Friendly influence in an area (>= 0)."""
        return self._friendly[area_id]

    def enemy(self, area_id: int) -> float:
        """Enemy influence in an area (>= 0)."""
        return self._enemy[area_id]

    def value(self, area_id: int) -> float:
        """Balance of control: positive when friends hold the area, negative for enemies."""
        return self._friendly[area_id] - self._enemy[area_id]

    def enemy_by_area(self) -> tuple[float, ...]:
        """Enemy influence of every area, indexed by area id."""
        return tuple(self._enemy)

    def as_dict(self) -> dict[int, float]:
        """Balance of control per area id, for snapshots and rendering."""
        return {a: self.value(a) for a in range(len(self._enemy))}
