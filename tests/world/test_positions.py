"""Position picking: behaviours weigh cover, distances, line of fire and travel differently."""

from __future__ import annotations

import heapq
import math
import random

import pytest

from warband.exceptions import ConfigurationError
from warband.world import Map, load_map, positions
from warband.world.maps import link_key
from warband.world.positions import PositionWeights, best_position, pick_positions


def test_flee_picks_a_spot_far_from_the_threat_and_out_of_its_sight() -> None:
    game_map = load_map("test")
    threat = game_map.position("b1")
    choice = best_position(game_map, origin="c", behaviour="flee", threats=[threat], radius=40.0)
    assert "s" == choice
    assert not game_map.line_of_sight(game_map.position("s"), threat)


def test_snipe_prefers_line_of_fire_at_a_distance() -> None:
    game_map = load_map("test")
    threat = game_map.position("b1")
    ranked = pick_positions(game_map, origin="r1", behaviour="snipe", threats=[threat], radius=15)
    assert "r2" == ranked[0].waypoint
    assert 1.0 == ranked[0].line_of_fire
    assert max(s.threat_distance for s in ranked) == ranked[0].threat_distance


def test_cover_from_the_threat_direction_raises_the_score() -> None:
    game_map = load_map("test")
    threat = (30.0, 5.0)
    only_cover = PositionWeights(cover=1.0)
    ranked = pick_positions(game_map, origin="m1", behaviour=only_cover, threats=[threat], radius=8)
    assert "m1" == ranked[0].waypoint
    assert 0.5 == ranked[0].cover


def test_travel_cost_prefers_nearby_spots() -> None:
    game_map = load_map("test")
    ranked = pick_positions(game_map, origin="r1", behaviour=PositionWeights(travel=-1.0))
    assert "r1" == ranked[0].waypoint


def test_candidates_stay_inside_the_allowed_corridor() -> None:
    game_map = load_map("test")
    corridor = {"r1", "m1", "c"}
    ranked = pick_positions(game_map, origin="r1", behaviour="defend", radius=50, allowed=corridor)
    assert corridor == {s.waypoint for s in ranked}


def test_a_centre_outside_the_corridor_still_has_candidates_inside_it() -> None:
    # An enemy at b2 stands outside a squad's corridor r1-m1-c-m3: the reach is measured from
    # it over the whole map, the candidates are the corridor's waypoints within that reach.
    game_map = load_map("test")
    corridor = {"r1", "m1", "c", "m3"}
    within = pick_positions(game_map, origin="r1", behaviour="attack", centre="b2", radius=50)
    ranked = pick_positions(
        game_map, origin="r1", behaviour="attack", centre="b2", radius=50, allowed=corridor
    )
    assert {s.waypoint for s in ranked} == corridor & {s.waypoint for s in within}
    assert "m3" in {s.waypoint for s in ranked}


def test_ties_break_on_the_tie_break_given_then_on_the_id() -> None:
    game_map = load_map("test")
    flat = PositionWeights()  # every spot scores 0
    by_id = pick_positions(game_map, origin="c", behaviour=flat, radius=8)
    assert [s.waypoint for s in by_id] == sorted(s.waypoint for s in by_id)
    far_from_c = pick_positions(
        game_map, origin="c", behaviour=flat, radius=8, tie_break=lambda w: -len(w)
    )
    assert "c" == far_from_c[-1].waypoint  # the one-letter id last
    assert [s.waypoint for s in far_from_c[:-1]] == sorted(
        s.waypoint for s in by_id if s.waypoint != "c"
    )


def test_unknown_behaviour_lists_the_known_ones() -> None:
    with pytest.raises(ConfigurationError, match="known behaviours: attack, defend, flee, snipe"):
        pick_positions(load_map("test"), origin="r1", behaviour="dance")


def _plain_within(
    game_map: Map,
    start: str,
    radius: float,
    allowed: set[str] | None,
    blocked: set[tuple[str, str]],
) -> dict[str, float]:
    """The travel distances of ``positions._within`` worked out the straightforward way,
    through the map's methods: the reference of the search on the map's link table."""
    best = {start: 0.0}
    heap = [(0.0, start)]
    while heap:
        cost, node = heapq.heappop(heap)
        if cost > best[node]:
            continue
        for nxt in game_map.neighbours(node):
            if allowed is not None and nxt not in allowed:
                continue
            if blocked and link_key(node, nxt) in blocked:
                continue
            total = cost + game_map.link_length(node, nxt)
            if total <= radius and total < best.get(nxt, math.inf):
                best[nxt] = total
                heapq.heappush(heap, (total, nxt))
    return best


@pytest.mark.parametrize("name", ["warzone", "warzone-x4", "prison"])
def test_travel_distances_are_the_plain_dijkstras(name: str) -> None:
    # From every waypoint: within a random radius (or none), free or in a random corridor, with
    # random links and the map's doors closed or not; the same distances, float for float, in
    # the same order (the order the waypoints were first reached).
    game_map = load_map(name)
    ids = list(game_map.waypoint_ids)
    rng = random.Random(name)
    doors = {link_key(*o.link) for o in game_map.objects if o.link is not None}
    for start in ids:
        # A radius equal to a waypoint's distance too: that waypoint is within it.
        distances = list(_plain_within(game_map, start, math.inf, None, set()).values())
        for _ in range(3):
            radius = rng.choice([math.inf, rng.uniform(0.0, 60.0), rng.choice(distances)])
            allowed = rng.choice([None, set(rng.sample(ids, len(ids) // 2))])
            blocked = rng.choice([set(), doors | set(rng.sample(sorted(game_map.links), 3))])
            expected = _plain_within(game_map, start, radius, allowed, blocked)
            found = positions._within(game_map, start, radius, allowed, blocked)
            assert list(expected.items()) == list(found.items())
