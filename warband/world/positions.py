"""Position picking: score waypoints near a point for a behaviour (defend, snipe, flee, ...).

As in Killzone 3, candidates are the waypoints within travel distance of a centre point (in
the bot's corridor if it has one) that the bot can reach now: travel never crosses a link
closed by a door or bars (``blocked_links``, as :meth:`Map.closed_links
<warband.world.maps.Map.closed_links>` gives them). Each gets a weighted sum of properties,
all scaled to 0..1:

* ``cover``: mean cover the waypoint gives against the known threats;
* ``threat_distance``: distance to the nearest threat (divided by ``distance_scale``, capped at 1);
* ``friend_distance``: distance to the nearest friend (same scale), to spread out;
* ``line_of_fire``: share of threats visible from the waypoint (walls block it);
* ``travel``: path length from the bot (divided by ``distance_scale``, capped at 1).

Weights per behaviour say which properties matter and with which sign; :data:`BEHAVIOURS`
holds the built-in ones and callers may pass their own :class:`PositionWeights`.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from warband.exceptions import ConfigurationError
from warband.world._links import links_of
from warband.world.geometry import Point, distance
from warband.world.maps import Link, Map, link_key


@dataclass(frozen=True)
class PositionWeights:
    """How much each property adds to a candidate's score (negative: a cost)."""

    cover: float = 0.0
    threat_distance: float = 0.0
    friend_distance: float = 0.0
    line_of_fire: float = 0.0
    travel: float = 0.0


BEHAVIOURS: dict[str, PositionWeights] = {
    "attack": PositionWeights(
        cover=1.0, threat_distance=-0.5, friend_distance=0.3, line_of_fire=2.0, travel=-1.0
    ),
    "defend": PositionWeights(
        cover=2.0, threat_distance=0.3, friend_distance=0.5, line_of_fire=1.0, travel=-0.5
    ),
    "snipe": PositionWeights(
        cover=1.0, threat_distance=2.0, friend_distance=0.2, line_of_fire=3.0, travel=-0.3
    ),
    "flee": PositionWeights(
        cover=1.5, threat_distance=3.0, friend_distance=-0.5, line_of_fire=-2.0, travel=-0.5
    ),
}
"""Built-in weights per behaviour name."""


@dataclass(frozen=True)
class ScoredPosition:
    """A candidate waypoint, its total score and the property values that made it."""

    waypoint: str
    score: float
    cover: float
    threat_distance: float
    friend_distance: float
    line_of_fire: float
    travel: float


def pick_positions(
    game_map: Map,
    *,
    origin: str,
    behaviour: str | PositionWeights,
    threats: Sequence[Point] = (),
    friends: Sequence[Point] = (),
    centre: str | None = None,
    radius: float = 20.0,
    allowed: Collection[str] | None = None,
    distance_scale: float = 30.0,
    blocked_links: Collection[tuple[str, str]] = (),
    tie_break: Callable[[str], float] | None = None,
) -> list[ScoredPosition]:
    """Candidates within travel distance ``radius`` of ``centre`` (default: ``origin``), best first.

    ``origin`` is the bot's waypoint (travel is measured from it); ``allowed`` restricts
    candidates and travel to a corridor; travel never crosses ``blocked_links`` (links closed
    now), so every candidate is one the bot can reach. Ties break on ``tie_break`` of the
    waypoint (the smaller first), then on its id: an id is no mirror image of itself, so on a
    mirrored map a side-aware ``tie_break`` keeps both sides' picks mirror images. Raises
    ConfigurationError for an unknown behaviour name (listing the known ones) and
    :class:`~warband.exceptions.UnknownIdError` for unknown waypoints.
    """
    weights = _weights(behaviour)
    game_map.waypoint(origin)
    if centre is not None:
        game_map.waypoint(centre)
    around = centre if centre is not None else origin
    blocked = {link_key(a, b) for a, b in blocked_links}
    # The radius is measured over the whole map: the centre (an enemy, say) often stands outside
    # the corridor, and a walk out from it that kept to the corridor found no candidate at all
    # (a bot in a crowd at a corridor's end never spread out). The candidates themselves, and
    # the bot's way to them, keep to the corridor.
    candidates = _within(game_map, around, radius, None, blocked)
    if allowed is not None:
        candidates = {wp: d for wp, d in candidates.items() if wp in allowed}
    travel = _within(game_map, origin, math.inf, allowed, blocked)
    scored: list[ScoredPosition] = []
    for wp in sorted(candidates):
        if wp not in travel:
            continue
        pos = game_map.position(wp)
        point = game_map.waypoint(wp)
        cover = sum(point.cover_from(t) for t in threats) / len(threats) if threats else 0.0
        threat_d = _nearest_scaled(pos, threats, distance_scale)
        friend_d = _nearest_scaled(pos, friends, distance_scale)
        fire = (
            sum(1 for t in threats if game_map.line_of_sight(pos, t)) / len(threats)
            if threats
            else 0.0
        )
        trip = min(1.0, travel[wp] / distance_scale)
        score = (
            weights.cover * cover
            + weights.threat_distance * threat_d
            + weights.friend_distance * friend_d
            + weights.line_of_fire * fire
            + weights.travel * trip
        )
        scored.append(ScoredPosition(wp, score, cover, threat_d, friend_d, fire, trip))
    prefer = tie_break or (lambda _waypoint: 0.0)
    scored.sort(key=lambda s: (-s.score, prefer(s.waypoint), s.waypoint))
    return scored


def best_position(
    game_map: Map,
    *,
    origin: str,
    behaviour: str | PositionWeights,
    threats: Sequence[Point] = (),
    friends: Sequence[Point] = (),
    centre: str | None = None,
    radius: float = 20.0,
    allowed: Collection[str] | None = None,
    blocked_links: Collection[tuple[str, str]] = (),
) -> str | None:
    """Waypoint id of the best candidate of :func:`pick_positions`, or ``None`` if there is none."""
    ranked = pick_positions(
        game_map,
        origin=origin,
        behaviour=behaviour,
        threats=threats,
        friends=friends,
        centre=centre,
        radius=radius,
        allowed=allowed,
        blocked_links=blocked_links,
    )
    return ranked[0].waypoint if ranked else None


def _weights(behaviour: str | PositionWeights) -> PositionWeights:
    if isinstance(behaviour, PositionWeights):
        return behaviour
    try:
        return BEHAVIOURS[behaviour]
    except KeyError:
        raise ConfigurationError(
            f"unknown behaviour {behaviour!r}; known behaviours: {', '.join(sorted(BEHAVIOURS))}"
            " (or pass PositionWeights)"
        ) from None


def _nearest_scaled(pos: Point, others: Sequence[Point], scale: float) -> float:
    if not others:
        return 1.0
    return min(1.0, min(distance(pos, o) for o in others) / scale)


def _within(
    game_map: Map,
    start: str,
    radius: float,
    allowed: Collection[str] | None,
    blocked: Collection[Link],
) -> dict[str, float]:
    """Travel distance from ``start`` to every waypoint within ``radius`` (Dijkstra), not
    crossing the ``blocked`` links (in :func:`~warband.world.maps.link_key` form). On the map's
    link table (:mod:`~warband.world._links`): the same steps as through the map's methods, so
    the same distances, keyed in the order the waypoints were first reached."""
    links = links_of(game_map)
    first = links.number(game_map, start)
    best = links.fresh_costs(allowed)
    best[first] = 0.0
    out = links.without(blocked) if blocked else links.out
    reached = [first]
    push = heapq.heappush
    pop = heapq.heappop
    heap = [(0.0, first)]  # indices rank as the ids sort: ties go the same way
    while heap:
        cost, node = pop(heap)
        if cost > best[node]:
            continue
        for nxt, length, _ in out[node]:
            total = cost + length
            if total <= radius and total < best[nxt]:
                if best[nxt] == math.inf:
                    reached.append(nxt)
                best[nxt] = total
                push(heap, (total, nxt))
    ids = links.ids
    return {ids[i]: best[i] for i in reached}
