"""Squad pathfinding: influence avoidance, corridor spreading, regroup choice, waypoint paths."""

from __future__ import annotations

import heapq
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.world import Map, load_map, map_from_data, pathfinding
from warband.world.influence import InfluenceMap, InfluenceSettings
from warband.world.maps import link_key
from warband.world.pathfinding import (
    RouteSettings,
    SquadClaims,
    area_weighted_path,
    choose_regroup_marker,
    plan_routes,
    waypoint_path,
)
from warband.world.strategic import StrategicGraph, build_strategic_graph, cluster_waypoints


def _two_routes() -> StrategicGraph:
    """S to T directly through M (short), or around through N1 and N2 (longer)."""
    positions = {
        "S": (0.0, 0.0),
        "M": (10.0, 0.0),
        "T": (20.0, 0.0),
        "N1": (5.0, 10.0),
        "N2": (15.0, 10.0),
    }
    links = [("S", "M"), ("M", "T"), ("S", "N1"), ("N1", "N2"), ("N2", "T")]
    return cluster_waypoints(positions, links, max_waypoints=1)


def _names(graph: StrategicGraph, corridor: tuple[int, ...] | None) -> list[str]:
    assert corridor is not None
    return [graph.areas[a].waypoints[0] for a in corridor]


def test_without_influence_the_squad_takes_the_short_route() -> None:
    graph = _two_routes()
    routes = plan_routes(graph, graph.area_of("S"))
    assert ["S", "M", "T"] == _names(graph, routes.corridor_to(graph.area_of("T")))
    assert 20.0 == routes.cost_to(graph.area_of("T"))


def test_squad_avoids_a_high_influence_zone_when_a_detour_exists() -> None:
    graph = _two_routes()
    influence = InfluenceMap(graph, "red", InfluenceSettings(persistence=0.0, spread_radius=0.0))
    influence.update(enemy=["M", "M", "M"])
    routes = plan_routes(graph, graph.area_of("S"), influence=influence)
    assert ["S", "N1", "N2", "T"] == _names(graph, routes.corridor_to(graph.area_of("T")))


def test_the_claim_penalty_spreads_two_squads_over_different_routes() -> None:
    graph = _two_routes()
    claims = SquadClaims()
    source, target = graph.area_of("S"), graph.area_of("T")
    first = plan_routes(graph, source, claimed=claims.counts_for("alpha")).corridor_to(target)
    assert first is not None
    claims.claim("alpha", first)
    second = plan_routes(graph, source, claimed=claims.counts_for("bravo")).corridor_to(target)
    assert ["S", "M", "T"] == _names(graph, first)
    assert ["S", "N1", "N2", "T"] == _names(graph, second)
    claims.release("alpha")
    assert {} == claims.counts_for("bravo")


def test_a_squad_is_not_penalised_by_its_own_claim() -> None:
    claims = SquadClaims()
    claims.claim("alpha", [0, 1, 2])
    assert {} == claims.counts_for("alpha")
    assert {0: 1, 1: 1, 2: 1} == claims.counts_for("bravo")


def test_unreachable_areas_have_infinite_cost_and_no_corridor() -> None:
    graph = cluster_waypoints({"a": (0.0, 0.0), "b": (9.0, 0.0)}, [], max_waypoints=1)
    routes = plan_routes(graph, graph.area_of("a"))
    assert math.inf == routes.cost_to(graph.area_of("b"))
    assert None is routes.corridor_to(graph.area_of("b"))


def test_regroup_choice_prefers_the_marker_without_enemies() -> None:
    game_map = load_map("test")
    graph = build_strategic_graph(game_map)
    routes_no_threat = plan_routes(graph, graph.area_of("c"))
    influence = InfluenceMap(graph, "red", InfluenceSettings(persistence=0.0, spread_radius=0.0))
    influence.update(enemy=["m4"] * 5)
    routes = plan_routes(graph, graph.area_of("c"), influence=influence)
    calm = choose_regroup_marker(game_map, graph, routes_no_threat)
    chosen = choose_regroup_marker(game_map, graph, routes, influence=influence)
    assert calm is not None and chosen is not None
    assert "regroup-east" == calm.id  # as near as the west one from c: the smaller id
    assert "regroup-west" == chosen.id  # the east one is where the enemies are


def test_waypoint_path_is_shortest_and_respects_corridor_and_doors() -> None:
    game_map = load_map("test")
    assert ("r1", "m1", "m3", "b1") == waypoint_path(game_map, "r1", "b1")
    corridor = {"r1", "r2", "m2", "m4", "b2", "b1"}
    assert ("r1", "r2", "m2", "m4", "b2", "b1") == waypoint_path(
        game_map, "r1", "b1", allowed=corridor
    )
    assert None is waypoint_path(game_map, "m2", "s", blocked_links=[("s", "d")])
    assert ("m2", "d", "s") == waypoint_path(game_map, "m2", "s")


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), limit=st.integers(1, 8))
def test_a_remembered_waypoint_path_is_the_one_searched_again(seed: int, limit: int) -> None:
    # Few ends, corridors and closed links, asked many times in any order (the corridor and the
    # closed links in another order or form each time): every answer, from memory or not, is
    # the one a fresh search gives; a small limit empties the memory now and then.
    rng = random.Random(seed)
    game_map = load_map("warzone")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pathfinding, "PATH_MEMORY_LIMIT", limit)
        _ask_again_and_again(rng, game_map, limit)


def _ask_again_and_again(rng: random.Random, game_map: Map, limit: int) -> None:
    ids = list(game_map.waypoint_ids)
    ends = rng.sample(ids, 4)
    corridors = [None, set(rng.sample(ids, len(ids) // 2)), set(ids)]
    closed = [(), rng.sample(list(game_map.links), 6)]
    for _ in range(40):
        start, goal = rng.choice(ends), rng.choice(ends)
        allowed = rng.choice(corridors)
        shut = [link[::-1] if rng.random() < 0.5 else link for link in rng.choice(closed)]
        asked = None if allowed is None else sorted(allowed, key=lambda _: rng.random())
        found = waypoint_path(game_map, start, goal, allowed=asked, blocked_links=shut)
        searched = pathfinding._search_path(
            game_map, start, goal, allowed, {pathfinding.link_key(a, b) for a, b in shut}
        )
        assert searched == found
        assert 1 <= len(pathfinding._PATHS[game_map]) <= limit


def test_a_remembered_path_still_refuses_an_unknown_waypoint() -> None:
    game_map = load_map("test")
    assert ("r1", "m1", "m3", "b1") == waypoint_path(game_map, "r1", "b1")
    with pytest.raises(KeyError):
        waypoint_path(game_map, "r1", "nowhere")


def test_route_settings_change_the_tradeoff() -> None:
    graph = _two_routes()
    influence = {graph.area_of("M"): 0.5}
    cheap = plan_routes(
        graph, graph.area_of("S"), influence=influence, settings=RouteSettings(influence_weight=1.0)
    )
    assert ["S", "M", "T"] == _names(graph, cheap.corridor_to(graph.area_of("T")))


def test_of_two_equal_ways_the_path_takes_the_one_nearer_the_maps_centre() -> None:
    # A square of four waypoints: from "south" to "north" by "west" or by "east", the same
    # length. A far waypoint further east moves the map's centre east of the square, so "east"
    # lies nearer it, though "west" sorts first by id.
    square = map_from_data(
        {
            "name": "square",
            "teams": ["red", "blue"],
            "waypoints": [
                {"id": "south", "pos": [10.0, 0.0]},
                {"id": "west", "pos": [0.0, 10.0]},
                {"id": "east", "pos": [20.0, 10.0]},
                {"id": "north", "pos": [10.0, 20.0]},
                {"id": "far", "pos": [60.0, 10.0]},
            ],
            "links": [
                ["south", "west"],
                ["south", "east"],
                ["west", "north"],
                ["east", "north"],
                ["east", "far"],
            ],
        },
        source="<square test map>",
    )
    assert square.from_centre("east") < square.from_centre("west")
    assert ("south", "east", "north") == waypoint_path(square, "south", "north")
    assert ("north", "east", "south") == waypoint_path(square, "north", "south")


def _plain_search(
    game_map: Map,
    start: str,
    goal: str,
    allowed: set[str] | None = None,
    blocked: set[tuple[str, str]] | frozenset[tuple[str, str]] = frozenset(),
) -> tuple[str, ...] | None:
    """A* written the straightforward way, through the map's methods (what ``_search_path``
    did before it walked a table): the reference its paths must equal, float for float."""
    goal_pos = game_map.position(goal)
    best = {start: 0.0}
    parents: dict[str, str] = {}
    start_guess = math.hypot(
        game_map.position(start)[0] - goal_pos[0], game_map.position(start)[1] - goal_pos[1]
    )
    heap = [(start_guess, 0.0, 0.0, start)]
    while heap:
        _, cost, _, node = heapq.heappop(heap)
        if node == goal:
            path = [goal]
            while path[-1] != start:
                path.append(parents[path[-1]])
            return tuple(reversed(path))
        if cost > best[node]:
            continue
        for nxt in game_map.neighbours(node):
            if allowed is not None and nxt not in allowed:
                continue
            if link_key(node, nxt) in blocked:
                continue
            total = cost + game_map.link_length(node, nxt)
            if total < best.get(nxt, math.inf):
                best[nxt] = total
                parents[nxt] = node
                pos = game_map.position(nxt)
                guess = math.hypot(pos[0] - goal_pos[0], pos[1] - goal_pos[1])
                heapq.heappush(heap, (total + guess, total, game_map.from_centre(nxt), nxt))
    return None


@pytest.mark.parametrize("name", ["warzone", "warzone-x2", "warzone-x4", "test", "prison"])
def test_every_waypoint_path_is_the_plain_searchs(name: str) -> None:
    # Every ordered pair of ends: free, in a random corridor (a random half of the waypoints,
    # or the areas of a squad's route), and with random links and the map's doors closed.
    game_map = load_map(name)
    ids = list(game_map.waypoint_ids)
    rng = random.Random(name)
    graph = build_strategic_graph(game_map)
    doors = {link_key(*o.link) for o in game_map.objects if o.link is not None}
    for start in ids:
        for goal in ids:
            assert _plain_search(game_map, start, goal) == waypoint_path(game_map, start, goal)
            corridor = _corridor(rng, game_map, graph, start, goal)
            shut = set(rng.sample(sorted(game_map.links), 3)) | doors
            asked = [link[::-1] if rng.random() < 0.5 else link for link in shut]
            expected = _plain_search(game_map, start, goal, corridor, shut)
            found = waypoint_path(game_map, start, goal, allowed=corridor, blocked_links=asked)
            assert expected == found


def _corridor(
    rng: random.Random, game_map: Map, graph: StrategicGraph, start: str, goal: str
) -> set[str]:
    if rng.random() < 0.5:
        return set(rng.sample(list(game_map.waypoint_ids), len(game_map.waypoints) // 2))
    route = plan_routes(graph, graph.area_of(start)).corridor_to(graph.area_of(goal)) or ()
    return set(graph.waypoints_in(route))


def _plain_dijkstra(
    game_map: Map, graph: StrategicGraph, origin: str, goal: str, area_costs: dict[int, float]
) -> tuple[str, ...] | None:
    """The squad's area-weighted Dijkstra written the straightforward way, through the map's
    and the graph's methods: the reference of ``area_weighted_path``."""
    best = {origin: 0.0}
    parents: dict[str, str] = {}
    heap = [(0.0, origin)]
    done: set[str] = set()
    while heap:
        cost, here = heapq.heappop(heap)
        if here in done:
            continue
        done.add(here)
        if here == goal:
            path = [goal]
            while path[-1] != origin:
                path.append(parents[path[-1]])
            return tuple(reversed(path))
        area = graph.area_of(here)
        for there in sorted(game_map.neighbours(here)):
            entered = graph.area_of(there)
            step = game_map.link_length(here, there)
            if entered != area:
                step += area_costs.get(entered, 0.0)
            if cost + step < best.get(there, math.inf):
                best[there] = cost + step
                parents[there] = here
                heapq.heappush(heap, (cost + step, there))
    return None


@pytest.mark.parametrize("name", ["warzone", "warzone-x4", "prison"])
def test_the_area_weighted_path_is_the_plain_dijkstras(name: str) -> None:
    # Every origin, to every goal (warzone, prison) or to 12 random ones (warzone-x4), with no
    # area costs, random ones (some zero, some equal: ties) and a few large ones.
    game_map = load_map(name)
    graph = build_strategic_graph(game_map)
    ids = list(game_map.waypoint_ids)
    rng = random.Random(name)
    areas = range(len(graph.areas))
    for origin in ids:
        goals = ids if len(ids) < 100 else rng.sample(ids, 12)
        for goal in goals:
            costs = rng.choice(
                [
                    {},
                    {a: float(rng.choice([0, 5, 15])) for a in rng.sample(areas, len(areas) // 3)},
                    {a: rng.uniform(0.0, 40.0) for a in rng.sample(areas, 3)},
                ]
            )
            expected = _plain_dijkstra(game_map, graph, origin, goal, costs)
            assert expected == area_weighted_path(game_map, graph, origin, goal, costs)
