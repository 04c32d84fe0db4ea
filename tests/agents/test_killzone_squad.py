"""The Killzone squad: its pathfinder, corridors, rally points and reports, with the shipped
``squad.htn`` on the Warzone map. The squad's members are stand-ins here (real agents, driven
tick by tick with warband.testing.Drive, no sockets) that report what the test scripts and
record what they are told, and the commander's orders are handed in, so each test can say
exactly which orders and reports the squad sent."""

from __future__ import annotations

from typing import Any

import pytest

from warband.agents import Agent, Assignment, Role, SquadAssignment
from warband.agents.commander import squad_lanes
from warband.agents.squad import squad_functions, squad_role, squad_route
from warband.messaging import CompletionReport, Order, StatusReport
from warband.planning import FactDB, parse_domain
from warband.testing import Drive
from warband.values import Value
from warband.world import build_strategic_graph, load_map, waypoint_path

WARZONE = load_map("warzone")
GRAPH = build_strategic_graph(WARZONE)
IDLE = """
(:domain idle)
(:primitive !idle ?ticks)
(:method (behave) (:branch "idle" () ((!idle 1))))
"""


def _idle_role(name: str) -> Role:
    return Role(name, parse_domain(IDLE))


class Member(Agent):
    """A squad member that reports the statuses ``script`` gives by tick ("alive" with a
    waypoint, or "dead") and records every order it receives as (tick, task, args)."""

    def __init__(self, actor_id: str, script: dict[int, tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(actor_id, _idle_role("member"), superior="squad-1", team="red", **kwargs)
        self.script = script
        self.received: list[tuple[int, str, list[Value]]] = []

    def on_order(self, order: Order) -> None:
        self.received.append((self.tick, order.task, list(order.args)))
        super().on_order(order)

    def on_tick(self, tick: int) -> None:
        super().on_tick(tick)
        if tick in self.script:
            life, waypoint = self.script[tick]
            details: dict[str, Value] = {"life": life, "waypoint": waypoint, "health": 100}
            self.send(StatusReport(recipient="squad-1", status=life, details=details))

    def final_state(self) -> dict[str, Any]:
        return {**super().final_state(), "received": self.received}


def _lead(
    scripts: dict[str, dict[int, tuple[str, str]]],
    task: str,
    target: str,
    *,
    corridors: bool,
    ticks: int = 20,
) -> dict[str, Any]:
    """Drive the squad and its scripted members (no sockets): the commander's lead and
    objective orders arrive as if sent at tick 1; returns the members' final states and the
    commander's CompletionReports as (task, success, reason)."""
    squad = Agent(
        "squad-1", squad_role(WARZONE, corridors=corridors), superior="commander", team="red"
    )
    members = [Member(member, script) for member, script in scripts.items()]
    lead = [tuple(sorted(scripts)), 0]
    with Drive(squad, *members, sender="commander") as drive:
        drive.tick()
        drive.ticks(
            ticks - 1,
            Order(recipient="squad-1", task="lead", args=lead, sequence="s"),
            Order(recipient="squad-1", task=task, args=[target], sequence="s"),
        )
    states = {member.id: member.final_state() for member in members}
    reports = [
        [m.task, m.success, m.reason]
        for m in drive.sent
        if isinstance(m, CompletionReport) and m.recipient == "commander"
    ]
    return {**states, "commander": {"reports": reports}}


def _facts(*facts: tuple[Value, ...]) -> FactDB:
    db = FactDB()
    for fact in facts:
        db.assert_fact(str(fact[0]), *fact[1:])
    return db


def _squad_at(*members: tuple[str, str], now: int = 20) -> list[tuple[Value, ...]]:
    facts: list[tuple[Value, ...]] = [("now", now)]
    for member, waypoint in members:
        facts += [
            ("member", member),
            ("member_alive", member),
            ("status", member, "alive", "alive", waypoint, 100),
            ("last_at", member, waypoint),
        ]
    return facts


# --- the squad pathfinder and the commander's lanes -------------------------------------------


def test_a_squad_alone_seeing_no_enemy_takes_the_shortest_way() -> None:
    assert waypoint_path(WARZONE, "a3", "e3") == squad_route(WARZONE, GRAPH, "a3", "e3")


def test_the_second_squad_on_an_objective_comes_at_it_by_another_route() -> None:
    first = squad_route(WARZONE, GRAPH, "a3", "e3", lane=0)
    second = squad_route(WARZONE, GRAPH, "a3", "e3", lane=1)
    assert first is not None and second is not None
    ends = {GRAPH.area_of("a3"), GRAPH.area_of("e3")}
    first_areas = {GRAPH.area_of(w) for w in first} - ends
    second_areas = {GRAPH.area_of(w) for w in second} - ends
    assert first_areas != second_areas
    assert GRAPH.area_of("d2") in first_areas  # the first comes by the south-centre...
    assert GRAPH.area_of("d2") not in second_areas  # ...the second does not


def test_the_commander_gives_squads_sharing_an_objective_lanes_in_pool_order() -> None:
    assignment = Assignment(
        squads=(
            SquadAssignment("s1", "capture:cp-centre", ("b1",)),
            SquadAssignment("s2", "defend:cp-north", ("b2",)),
            SquadAssignment("s3", "capture:cp-centre", ("b3",)),
        )
    )
    assert {"s1": 0, "s2": 0, "s3": 1} == squad_lanes(assignment)


def test_a_route_avoids_the_areas_where_members_reported_enemies() -> None:
    enemy = {GRAPH.area_of("d2"): 2.0}
    path = squad_route(WARZONE, GRAPH, "a3", "e3", enemy=enemy)
    assert path is not None
    assert GRAPH.area_of("d2") not in {GRAPH.area_of(w) for w in path}


# --- rally points by influence ----------------------------------------------------------------


def test_a_rally_point_moves_away_from_where_members_just_reported_enemies() -> None:
    rally_point = squad_functions(WARZONE)["rally_point"]
    squad = _squad_at(("red-1", "a3"), ("red-2", "a3"))
    assert "d2" == rally_point(_facts(*squad), "red", "cp-centre")
    threats = [
        ("threat_report", "red-1", "blue-1", "d2", 18),
        ("threat_report", "red-2", "blue-2", "e2", 19),
    ]
    moved = rally_point(_facts(*squad, *threats), "red", "cp-centre")
    assert "d2" != moved
    # still short of the objective, on the squad's side of it
    assert len(waypoint_path(WARZONE, "a3", str(moved)) or ()) < len(
        waypoint_path(WARZONE, "a3", "e3") or ()
    )


def test_enemies_reported_long_ago_no_longer_move_the_rally_point() -> None:
    rally_point = squad_functions(WARZONE)["rally_point"]
    squad = _squad_at(("red-1", "a3"), now=40)
    threats = [("threat_report", "red-1", "blue-1", "d2", 18)]
    assert "d2" == rally_point(_facts(*squad, *threats), "red", "cp-centre")


# --- corridors: Listing 29.3 ------------------------------------------------------------------


def test_a_corridor_holds_the_squads_route_from_where_the_member_stands() -> None:
    corridor = squad_functions(WARZONE)["corridor"]
    allowed = corridor(_facts(*_squad_at(("red-1", "a3"))), "red", "red-1", "cp-centre")
    assert isinstance(allowed, tuple)  # a list value, an array on the wire
    route = squad_route(WARZONE, GRAPH, "a3", "e3") or ()
    assert set(route) <= set(allowed)
    assert () == corridor(_facts(("now", 1)), "red", "red-9", "cp-centre")  # nowhere known


def test_a_squad_with_corridors_restricts_each_member_first_in_its_sequence() -> None:
    states = _lead({"red-1": {2: ("alive", "a3")}}, "defend", "cp-centre", corridors=True)
    orders = [(task, args) for _, task, args in states["red-1"]["received"]]
    assert ["restrict", "goto", "send_message", "defend"] == [task for task, _ in orders]
    corridor = list(orders[0][1][0])
    assert {"a3", "e3"} <= set(corridor)
    assert set(squad_route(WARZONE, GRAPH, "a3", "e3") or ()) <= set(corridor)
    assert ("goto", ["e3"]) == orders[1]


def test_a_squad_without_corridors_sends_the_same_sequence_unrestricted() -> None:
    states = _lead({"red-1": {2: ("alive", "a3")}}, "defend", "cp-centre", corridors=False)
    tasks = [task for _, task, _ in states["red-1"]["received"]]
    assert ["goto", "send_message", "defend"] == tasks


def test_a_member_back_from_the_dead_gets_a_corridor_from_where_it_respawned() -> None:
    script = {2: ("alive", "d1"), 8: ("dead", "d1"), 14: ("alive", "a2")}
    mate = {2: ("alive", "d2")}  # keeps the squad from being decimated meanwhile
    scripts = {"red-1": script, "red-2": mate}
    states = _lead(scripts, "defend", "cp-centre", corridors=True, ticks=24)
    received = states["red-1"]["received"]
    restricts = [(tick, args) for tick, task, args in received if task == "restrict"]
    assert 2 == len(restricts), received
    first, again = (set(args[0]) for _, args in restricts)
    assert "d1" in first and "a2" not in first
    assert "a2" in again
    assert restricts[1][0] > 14


# --- reports up: an objective about to fail --------------------------------------------------


def test_a_decimated_squad_tells_its_commander_its_objective_failed() -> None:
    scripts = {
        "red-1": {2: ("alive", "a3"), 6: ("dead", "a3")},
        "red-2": {2: ("alive", "a2"), 7: ("dead", "a2")},
    }
    states = _lead(scripts, "capture", "cp-centre", corridors=False, ticks=14)
    assert [["lead", True, ""], ["capture", False, "decimated"]] == states["commander"]["reports"]


# --- regroups: each member its place, over by arrival ----------------------------------------


def test_members_are_dealt_their_own_places_around_the_rally_point() -> None:
    regroup_spot = squad_functions(WARZONE)["regroup_spot"]
    squad = _facts(*_squad_at(*((f"red-{n}", "a3") for n in range(1, 5))))
    spots = [regroup_spot(squad, "red", "d2", "cp-centre", f"red-{n}") for n in range(1, 5)]
    assert "d2" == spots[0]  # the first member by id takes the rally waypoint itself
    assert 4 == len(set(spots)), spots  # nobody shares a waypoint
    short = len(waypoint_path(WARZONE, "d2", "e3") or ())
    for spot in spots:  # around the rally point, and on the squad's side of the objective
        assert len(waypoint_path(WARZONE, "d2", str(spot)) or ()) <= 3  # two links at most
        assert len(waypoint_path(WARZONE, str(spot), "e3") or ()) >= short


def test_members_defending_a_tsp_are_dealt_its_neighbours_when_it_has_no_defend_markers() -> None:
    defend_spot = squad_functions(WARZONE)["defend_spot"]
    squad = _facts(*_squad_at(*((f"red-{n}", "a3") for n in range(1, 6))))
    spots = [defend_spot(squad, "red", "tsp-west-north", f"red-{n}") for n in range(1, 6)]
    tsp = WARZONE.marker("tsp-west-north").waypoint
    assert tsp == spots[0]  # the first member by id holds the TSP itself
    assert 5 == len(set(spots)), spots  # nobody shares a waypoint with a mate
    # The others beside it first, then one link further: c3, as near the other western TSP
    # (c2) as this one, is that TSP's defenders' place as much as this one's, so it comes last.
    beside = [spot for spot in spots[1:] if WARZONE.has_link(tsp, str(spot))]
    assert ["b4", "c5", "d4"] == sorted(map(str, beside))
    assert "c3" not in spots
    assert all(len(waypoint_path(WARZONE, tsp, str(spot)) or ()) <= 3 for spot in spots)


def test_members_defending_a_vips_house_spread_over_the_rings_of_links_around_it() -> None:
    defend_spot = squad_functions(WARZONE)["defend_spot"]
    squad = _facts(*_squad_at(*((f"blue-{n}", "i3") for n in range(1, 5))))
    spots = [defend_spot(squad, "blue", "hide-house-east", f"blue-{n}") for n in range(1, 5)]
    # The house is the VIP's and its escorts' place: the defenders take its yard (its one
    # neighbour), the yard's neighbours, then theirs.
    assert "house-east-yard" == spots[0]
    assert {"g3", "h3"} == set(spots[1:3])
    assert 4 == len(set(spots)) and "house-east" not in spots, spots


def test_two_squads_at_neighbouring_markers_keep_to_their_own_side_of_the_waypoint_between() -> (
    None
):
    # Body Count: squads hold regroup-f2 and regroup-f4; f3 lies one link from each. Both
    # squads used to send a member there (the least enemy influence) and it held four.
    defend_spot = squad_functions(WARZONE)["defend_spot"]
    south = _facts(*_squad_at(*((f"blue-{n}", "h3") for n in range(1, 5))))
    north = _facts(*_squad_at(*((f"blue-{n}", "h3") for n in range(5, 9))))
    south_spots = {defend_spot(south, "blue", "regroup-f2", f"blue-{n}") for n in range(1, 5)}
    north_spots = {defend_spot(north, "blue", "regroup-f4", f"blue-{n}") for n in range(5, 9)}
    assert 4 == len(south_spots) == len(north_spots)  # nobody shares with a squad mate
    assert set() == south_spots & north_spots, (south_spots, north_spots)


def _mirrored(waypoint: str) -> str:
    """The Warzone waypoint's mirror image east-west (a1 <-> i1, d2 <-> f2, e3 stays)."""
    return chr(ord("a") + ord("i") - ord(waypoint[0])) + waypoint[1:]


@pytest.mark.parametrize("marker", ["regroup-d2", "regroup-d4", "tsp-west-north"])
def test_the_teams_spread_around_mirrored_markers_as_mirror_images(marker: str) -> None:
    # Ties between spots were broken by waypoint id, which is no mirror image of itself: the
    # west team took its side of a marker, the east team the enemy's (Body Count, hierarchy
    # against hierarchy: the west won 16 of 20).
    functions = squad_functions(WARZONE)
    defend_spot, regroup_spot = functions["defend_spot"], functions["regroup_spot"]
    theirs = {"regroup-d2": "regroup-f2", "regroup-d4": "regroup-f4"}
    theirs["tsp-west-north"] = "tsp-east-north"
    red = _facts(*_squad_at(*((f"red-{n}", "a3") for n in range(1, 6))))
    blue = _facts(*_squad_at(*((f"blue-{n}", "i3") for n in range(1, 6))))
    red_spots = [str(defend_spot(red, "red", marker, f"red-{n}")) for n in range(1, 6)]
    blue_spots = [str(defend_spot(blue, "blue", theirs[marker], f"blue-{n}")) for n in range(1, 6)]
    assert [_mirrored(w) for w in red_spots] == blue_spots
    rally = WARZONE.marker(marker).waypoint
    red_rally = [str(regroup_spot(red, "red", rally, "cp-centre", f"red-{n}")) for n in range(1, 6)]
    blue_rally = [
        str(regroup_spot(blue, "blue", _mirrored(rally), "cp-centre", f"blue-{n}"))
        for n in range(1, 6)
    ]
    assert [_mirrored(w) for w in red_rally] == blue_rally


def test_a_regroup_ends_when_three_quarters_of_the_living_members_arrived() -> None:
    most_arrived = squad_functions(WARZONE)["most_arrived"]
    squad = _squad_at(*((f"red-{n}", "d2") for n in range(1, 5)))
    arrived = [("member_arrived", f"red-{n}", "o:1") for n in (1, 2)]
    assert not most_arrived(_facts(*squad, *arrived), "o:1")
    third = ("member_arrived", "red-3", "o:1")
    assert most_arrived(_facts(*squad, *arrived, third), "o:1")
    assert not most_arrived(_facts(*squad, *arrived, third), "o:2")  # another order's regroup
    # A dead member does not count: two of the three alive is not enough, three of three is.
    dead = [fact for fact in squad if fact != ("member_alive", "red-4")]
    assert most_arrived(_facts(*dead, *arrived, third), "o:1")


def test_a_squad_tasks_every_member_in_the_tick_it_starts_a_regroup() -> None:
    scripts = {f"red-{n}": {2: ("alive", "a3")} for n in range(1, 5)}
    states = _lead(scripts, "capture", "cp-centre", corridors=True, ticks=8)
    first = {member: min(t for t, _, _ in states[member]["received"]) for member in scripts}
    assert 1 == len(set(first.values())), first
    # and each its own place: four goto orders to four waypoints
    gotos = {
        member: next(args[0] for _, task, args in states[member]["received"] if task == "goto")
        for member in scripts
    }
    assert 4 == len(set(gotos.values())), gotos


def test_the_factions_influence_map_moves_the_rally_point_when_the_world_tells_it() -> None:
    rally_point = squad_functions(WARZONE)["rally_point"]
    squad = _squad_at(("red-1", "a3"), ("red-2", "a3"))
    assert "d2" == rally_point(_facts(*squad), "red", "cp-centre")
    # No member reported an enemy, but the faction's map has one strong around d2.
    area = GRAPH.area_of("d2")
    told = [("influence", area, 0.0, 3.0)]
    assert "d2" != rally_point(_facts(*squad, *told), "red", "cp-centre")
