"""Position picking: behaviours weigh cover, distances, line of fire and travel differently."""

from __future__ import annotations

import pytest

from warband.exceptions import ConfigurationError
from warband.world import load_map
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
