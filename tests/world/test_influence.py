"""Influence maps: counting, spreading by distance, decay over time, determinism."""

from __future__ import annotations

import pytest

from warband.world.influence import InfluenceMap, InfluenceSettings
from warband.world.strategic import StrategicGraph, cluster_waypoints


def _line(count: int = 5, spacing: float = 10.0) -> StrategicGraph:
    positions = {f"w{i}": (i * spacing, 0.0) for i in range(count)}
    links = [(f"w{i}", f"w{i + 1}") for i in range(count - 1)]
    return cluster_waypoints(positions, links, max_waypoints=1)


def test_enemies_raise_enemy_influence_where_they_stand() -> None:
    graph = _line()
    influence = InfluenceMap(graph, "red", InfluenceSettings(persistence=0.0))
    influence.update(enemy=["w4", "w4"], friendly=["w0"])
    assert 2.0 == influence.enemy(graph.area_of("w4"))
    assert 1.0 == influence.friendly(graph.area_of("w0"))
    assert influence.value(graph.area_of("w4")) < 0 < influence.value(graph.area_of("w0"))


def test_influence_spreads_to_neighbours_and_fades_with_distance() -> None:
    graph = _line()
    settings = InfluenceSettings(persistence=0.0, half_distance=10.0, spread_radius=25.0)
    influence = InfluenceMap(graph, "red", settings)
    influence.update(enemy=["w0"])
    assert [1.0, 0.5, 0.25, 0.0, 0.0] == [influence.enemy(a) for a in range(5)]


def test_influence_decays_over_time_when_enemies_leave() -> None:
    graph = _line()
    influence = InfluenceMap(graph, "red", InfluenceSettings(persistence=0.5))
    influence.update(enemy=["w2"])
    first = influence.enemy(2)
    influence.update()
    assert first / 2 == pytest.approx(influence.enemy(2))


def test_a_friendly_death_marks_the_area_as_enemy_held_for_a_while() -> None:
    graph = _line()
    settings = InfluenceSettings(persistence=0.0, death_weight=2.0, death_decay=0.5)
    influence = InfluenceMap(graph, "red", settings)
    influence.update(friendly_deaths=["w3"])
    assert 2.0 == influence.enemy(3)
    influence.update()
    assert 1.0 == influence.enemy(3)


def test_turrets_weigh_more_than_bots() -> None:
    graph = _line()
    influence = InfluenceMap(graph, "red", InfluenceSettings(persistence=0.0))
    influence.update(enemy_turrets=["w0"], enemy=["w4"])
    assert influence.enemy(0) > influence.enemy(4)


def test_same_inputs_give_the_same_map() -> None:
    graph = _line()
    maps = [InfluenceMap(graph, "red"), InfluenceMap(graph, "red")]
    for influence in maps:
        influence.update(enemy=["w1", "w3"], friendly=["w0"], enemy_deaths=["w2"])
        influence.update(enemy=["w2"])
    assert maps[0].as_dict() == maps[1].as_dict()
