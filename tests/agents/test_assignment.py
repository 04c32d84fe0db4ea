"""The commander's objectives and the six-step assignment of bots and squads to them."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.agents.assignment import (
    Assignment,
    BotInfo,
    Objective,
    ObjectiveKind,
    SquadAssignment,
    assign,
    choose_hiding_spot,
    choose_spawn,
    ideal_distribution,
    objectives_for_assassination,
    objectives_for_body_count,
    objectives_for_capture_and_hold,
    objectives_for_search_and_destroy,
    objectives_for_search_and_retrieve,
    objectives_for_tsps,
)
from warband.agents.commander import travel_distance
from warband.agents.objectives import enemy_control
from warband.exceptions import ConfigurationError, UnknownIdError
from warband.planning import FactDB
from warband.world import load_map
from warband.world.geometry import distance as euclidean
from warband.world.vocabulary import ATTACK, DEFEND

ADVANCE = ObjectiveKind.ADVANCE_TO_WAYPOINT
DEFEND_MARKER = ObjectiveKind.DEFEND_MARKER
ATTACK_ENTITY = ObjectiveKind.ATTACK_ENTITY
ESCORT = ObjectiveKind.ESCORT_ENTITY

POOL = tuple(f"squad-{i}" for i in range(1, 9))

# Waypoints "x0" .. "x99" lie on a line, "x<n>" at n: distances are easy to read.


def line(a: str, b: str) -> float:
    return float(abs(int(a[1:]) - int(b[1:])))


def goal(ident: str, waypoint: str, weight: float = 1.0, optimal: int = 4) -> Objective:
    return Objective(ident, DEFEND_MARKER, ident, waypoint, weight, optimal)


def bot(ident: str, waypoint: str | None, alive: bool = True) -> BotInfo:
    return BotInfo(ident, waypoint, alive)


def run(
    objectives: Sequence[Objective],
    bots: Sequence[BotInfo],
    previous: Assignment | None = None,
    *,
    pool: Sequence[str] = POOL,
    max_squad_size: int = 4,
) -> Assignment:
    return assign(
        objectives,
        bots,
        previous,
        distance=line,
        squad_ids=pool,
        max_squad_size=max_squad_size,
    )


def layout(assignment: Assignment) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {s.squad: (s.objective, s.members) for s in assignment.squads}


def bots_on(assignment: Assignment, objective: str) -> int:
    return sum(len(s.members) for s in assignment.squads_on(objective))


# --- step 1: the ideal distribution ---------------------------------------------------------


def test_weights_three_to_one_share_eight_bots_six_to_two() -> None:
    objectives = [goal("a", "x0", 3.0, optimal=8), goal("b", "x50", 1.0, optimal=8)]
    assert {"a": 6, "b": 2} == ideal_distribution(objectives, 8)
    assignment = run(objectives, [bot(f"bot-{i}", f"x{i * 7}") for i in range(8)])
    assert 6 == bots_on(assignment, "a")
    assert 2 == bots_on(assignment, "b")
    assert [3, 3] == [len(s.members) for s in assignment.squads_on("a")]
    assert (("a", 6), ("b", 2)) == assignment.ideal


def test_the_optimal_number_caps_a_share_until_every_objective_has_its_own() -> None:
    objectives = [goal("a", "x0", 3.0, optimal=2), goal("b", "x50", 1.0, optimal=2)]
    assert {"a": 2, "b": 2} == ideal_distribution(objectives, 4)
    # The four bots over the optimal numbers go by weight, counting the bots already given.
    assert {"a": 6, "b": 2} == ideal_distribution(objectives, 8)


def test_with_more_objectives_than_bots_the_heaviest_get_the_bots() -> None:
    objectives = [
        goal("a", "x0", 2.0),
        goal("b", "x10", 5.0),
        goal("c", "x20", 3.0),
        goal("d", "x30", 4.0),
    ]
    assignment = run(objectives, [bot("bot-1", "x5"), bot("bot-2", "x25")])
    assert {"b": 1, "d": 1} == {o: n for o, n in assignment.ideal if n}
    assert {"b", "d"} == {s.objective for s in assignment.squads}
    assert () == assignment.free


def test_no_bots_means_no_squads_and_last_times_squads_are_deactivated() -> None:
    objectives = [goal("a", "x0"), goal("b", "x9")]
    assert Assignment(ideal=(("a", 0), ("b", 0))) == run(objectives, [])
    before = run(objectives, [bot("bot-1", "x1"), bot("bot-2", "x8")])
    after = run(objectives, [], before)
    assert () == after.squads
    assert ("squad-1", "squad-2") == after.changes(before).deactivated


def test_no_objectives_leaves_every_bot_free() -> None:
    assignment = run([], [bot("bot-2", "x1"), bot("bot-1", None)])
    assert () == assignment.squads
    assert ("bot-1", "bot-2") == assignment.free


# --- steps 2 to 6 ---------------------------------------------------------------------------


def test_squads_come_from_the_pool_in_pool_order_heaviest_objective_first() -> None:
    objectives = [goal("a", "x0", 1.0, optimal=2), goal("b", "x40", 2.0, optimal=2)]
    bots = [bot(f"bot-{i}", f"x{i * 10}") for i in range(4)]
    assignment = run(objectives, bots, pool=["s-9", "s-3", "s-5"])
    assert {"s-9": ("b", ("bot-2", "bot-3")), "s-3": ("a", ("bot-0", "bot-1"))} == layout(
        assignment
    )
    assert ("s-9", "s-3") == tuple(s.squad for s in assignment.squads)


def test_a_squad_keeps_its_objective_when_others_are_now_closer() -> None:
    objectives = [goal("a", "x0"), goal("b", "x90")]
    first = run(objectives, [bot("bot-1", "x1"), bot("bot-2", "x89")])
    assert {"squad-1": ("a", ("bot-1",)), "squad-2": ("b", ("bot-2",))} == layout(first)
    # The bots crossed the map: each is now next to the other's objective.
    moved = run(objectives, [bot("bot-1", "x88"), bot("bot-2", "x2")], first)
    assert layout(first) == layout(moved)
    assert ((), ()) == (moved.changes(first).retasked, moved.changes(first).joined)


def test_when_a_weight_drops_the_excess_squad_leaves_for_the_objective_now_wanted() -> None:
    heavy_a = [goal("a", "x0", 3.0, optimal=8), goal("b", "x50", 1.0, optimal=8)]
    bots = [bot(f"bot-{i}", f"x{i * 7}") for i in range(8)]
    first = run(heavy_a, bots)
    assert ["squad-1", "squad-2"] == [s.squad for s in first.squads_on("a")]
    heavy_b = [goal("a", "x0", 1.0, optimal=8), goal("b", "x50", 3.0, optimal=8)]
    second = run(heavy_b, bots, first)
    # squad-1 (bots at x0, x7, x14) stays on a, closer than squad-2 (x21, x28, x35): squad-2
    # goes to b; squad-1 lets go of its member farthest from a, who joins the squad in need.
    assert {
        "squad-1": ("a", ("bot-0", "bot-1")),
        "squad-2": ("b", ("bot-3", "bot-4", "bot-5")),
        "squad-3": ("b", ("bot-2", "bot-6", "bot-7")),
    } == layout(second)
    changes = second.changes(first)
    assert (("squad-2", "b"),) == changes.retasked
    assert (("bot-2", "squad-3"),) == changes.joined
    assert (("bot-2", "squad-1"),) == changes.left
    assert () == changes.activated + changes.deactivated


def test_a_squad_no_objective_needs_any_more_is_deactivated() -> None:
    objectives = [goal("a", "x0", optimal=2), goal("b", "x50", optimal=2), goal("c", "x90")]
    bots = [bot(f"bot-{i}", f"x{i * 15}") for i in range(6)]
    first = run(objectives, bots)
    assert 3 == len(first.squads)
    # a is done and two bots left the run: two squads are enough, for b and c.
    remaining = [b for b in bots if b.id not in ("bot-0", "bot-1")]
    second = run([goal("b", "x50", optimal=2), goal("c", "x90")], remaining, first)
    assert {"b", "c"} == {s.objective for s in second.squads}
    assert 2 == len(second.squads)
    assert {"bot-2", "bot-3", "bot-4", "bot-5"} == {m for s in second.squads for m in s.members}
    assert first.squad_of("bot-5") == second.squad_of("bot-5")


def test_equidistant_squads_the_first_in_the_pool_takes_the_objective() -> None:
    first = run(
        [goal("x", "x0", optimal=1), goal("y", "x20", optimal=1)],
        [bot("bot-1", "x0"), bot("bot-2", "x20")],
    )
    second = run([goal("z", "x10", optimal=2)], [bot("bot-1", "x0"), bot("bot-2", "x20")], first)
    assert {"squad-1": ("z", ("bot-1", "bot-2"))} == layout(second)
    assert ("squad-2",) == second.changes(first).deactivated


def test_a_bot_equidistant_from_two_squads_joins_the_heavier_objective_then_pool_order() -> None:
    bots = [bot("bot-1", "x10"), bot("bot-2", "x10")]
    heavier_b = [goal("a", "x0", 1.0, optimal=1), goal("b", "x20", 2.0, optimal=1)]
    assert {"squad-1": ("b", ("bot-1",)), "squad-2": ("a", ("bot-2",))} == layout(
        run(heavier_b, bots)
    )
    equal = [goal("a", "x0", 1.0, optimal=1), goal("b", "x20", 1.0, optimal=1)]
    assert {"squad-1": ("a", ("bot-1",)), "squad-2": ("b", ("bot-2",))} == layout(run(equal, bots))


def test_respawning_bots_are_assigned_after_the_located_ones() -> None:
    objectives = [goal("a", "x0", 2.0, optimal=1), goal("b", "x50", 1.0, optimal=1)]
    bots = [bot("bot-1", None, alive=False), bot("bot-2", "x49")]
    assignment = run(objectives, bots)
    assert "b" == _objective_of(assignment, "bot-2")
    assert "a" == _objective_of(assignment, "bot-1")
    # Downed bots (not alive, still somewhere) are placed by where they lie.
    downed = run(objectives, [bot("bot-1", "x48", alive=False), bot("bot-2", "x1")])
    assert "b" == _objective_of(downed, "bot-1")


def test_a_squad_too_big_lets_go_of_a_respawning_member_first() -> None:
    bots = [bot("bot-1", "x1"), bot("bot-2", "x2"), bot("bot-3", "x3")]
    first = run([goal("a", "x0", optimal=3)], bots)
    assert {"squad-1": ("a", ("bot-1", "bot-2", "bot-3"))} == layout(first)
    # a now wants two bots, b one; bot-2 waits to respawn, bot-3 is the farthest of the others.
    later = [bot("bot-1", "x1"), bot("bot-2", None, alive=False), bot("bot-3", "x3")]
    second = run([goal("a", "x0", optimal=2), goal("b", "x90", optimal=1)], later, first)
    assert {"squad-1": ("a", ("bot-1", "bot-3")), "squad-2": ("b", ("bot-2",))} == layout(second)


def test_an_exhausted_squad_pool_serves_the_heaviest_objectives_and_leaves_bots_free() -> None:
    objectives = [goal("a", "x0", 3.0, optimal=8), goal("b", "x50", 1.0, optimal=8)]
    bots = [bot(f"bot-{i}", f"x{i}") for i in range(8)]
    assignment = run(objectives, bots, pool=["only"])
    assert {"only": ("a", ("bot-0", "bot-1", "bot-2", "bot-3"))} == layout(assignment)
    assert ("bot-4", "bot-5", "bot-6", "bot-7") == assignment.free
    assert {"a": 4, "b": 0} == dict(assignment.ideal)
    nothing = run(objectives, bots, pool=[])
    assert () == nothing.squads
    assert 8 == len(nothing.free)


def test_previous_squads_outside_the_pool_and_bots_that_left_are_dropped() -> None:
    objectives = [goal("a", "x0", optimal=2)]
    first = run(objectives, [bot("bot-1", "x0"), bot("bot-2", "x1")], pool=["old", "new"])
    second = run(objectives, [bot("bot-2", "x1"), bot("bot-3", "x2")], first, pool=["new"])
    assert {"new": ("a", ("bot-2", "bot-3"))} == layout(second)


def test_the_assignment_answers_who_is_where() -> None:
    assignment = run([goal("a", "x0", optimal=2)], [bot("bot-1", "x0"), bot("bot-2", "x3")])
    assert "squad-1" == _squad(assignment.squad_of("bot-2")).squad
    assert assignment.squad_of("bot-9") is None
    assert assignment.squad("squad-2") is None
    assert 2 == assignment.wanted("a")
    assert 0 == assignment.wanted("zzz")
    assert (("squad-1", "a"),) == assignment.changes(None).retasked


def test_distances_are_asked_once_per_pair_of_waypoints() -> None:
    asked: list[tuple[str, str]] = []

    def counting(a: str, b: str) -> float:
        asked.append((a, b))
        return line(a, b)

    objectives = [goal(f"g{i}", f"x{i * 10}", optimal=2) for i in range(4)]
    bots = [bot(f"bot-{i}", f"x{i * 3}") for i in range(8)]
    assign(objectives, bots, None, distance=counting, squad_ids=POOL)
    assert len(set(asked)) == len(asked)


# --- bad input ------------------------------------------------------------------------------


def test_bad_input_is_refused_naming_what_is_wrong() -> None:
    with pytest.raises(ConfigurationError, match="two objectives have the id 'a'"):
        run([goal("a", "x0"), goal("a", "x1")], [])
    with pytest.raises(ConfigurationError, match="bot 'bot-1' is listed twice"):
        run([], [bot("bot-1", "x0"), bot("bot-1", "x1")])
    with pytest.raises(ConfigurationError, match="lists s1 more than once"):
        run([], [], pool=["s1", "s2", "s1"])
    with pytest.raises(ConfigurationError, match="max_squad_size must be at least 1"):
        run([], [], max_squad_size=0)
    with pytest.raises(ConfigurationError, match="weight must be a finite number > 0"):
        goal("a", "x0", 0.0)
    with pytest.raises(ConfigurationError, match="weight must be a finite number > 0"):
        goal("a", "x0", math.nan)
    with pytest.raises(ConfigurationError, match="optimal_bots must be at least 1"):
        goal("a", "x0", optimal=0)
    with pytest.raises(ConfigurationError, match="unknown kind 'patrol'; known kinds: advance"):
        Objective("a", "patrol", "a", "x0", 1.0)  # type: ignore[arg-type]


def test_an_objective_kind_given_by_value_becomes_the_enum() -> None:
    objective = Objective("a", "defend_marker", "a", "x0", 1.0)  # type: ignore[arg-type]
    assert ObjectiveKind.DEFEND_MARKER is objective.kind


# --- properties -----------------------------------------------------------------------------

WAYPOINTS = [f"x{i}" for i in range(0, 40, 5)]
OBJECTIVE_IDS = [f"o{i}" for i in range(7)]
BOT_IDS = [f"bot-{i}" for i in range(14)]

objectives_st = st.lists(
    st.builds(
        lambda ident, kind, waypoint, weight, optimal: Objective(
            ident, kind, ident, waypoint, weight, optimal
        ),
        st.sampled_from(OBJECTIVE_IDS),
        st.sampled_from(list(ObjectiveKind)),
        st.sampled_from(WAYPOINTS),
        st.sampled_from([0.5, 1.0, 2.0, 3.0]),
        st.integers(1, 6),
    ),
    max_size=6,
    unique_by=lambda o: o.id,
)
bots_st = st.lists(
    st.builds(
        BotInfo,
        st.sampled_from(BOT_IDS),
        st.none() | st.sampled_from(WAYPOINTS),
        st.booleans(),
    ),
    max_size=14,
    unique_by=lambda b: b.id,
)
pools_st = st.integers(0, len(POOL)).map(lambda n: POOL[:n])
sizes_st = st.integers(1, 5)


@st.composite
def previous_st(draw: st.DrawFn) -> Assignment | None:
    """None, or what the assignment gave for other objectives and bots (one or two steps)."""
    previous: Assignment | None = None
    for _ in range(draw(st.integers(0, 2))):
        previous = run(
            draw(objectives_st), draw(bots_st), previous, pool=draw(pools_st),
            max_squad_size=draw(sizes_st),
        )  # fmt: skip
    return previous


@settings(max_examples=200, deadline=None)
@given(objectives_st, bots_st, previous_st(), pools_st, sizes_st, st.data())
def test_the_same_input_in_any_order_gives_the_same_assignment(
    objectives: list[Objective],
    bots: list[BotInfo],
    previous: Assignment | None,
    pool: tuple[str, ...],
    size: int,
    data: st.DataObject,
) -> None:
    expected = run(objectives, bots, previous, pool=pool, max_squad_size=size)
    shuffled_objectives = data.draw(st.permutations(objectives))
    shuffled_bots = data.draw(st.permutations(bots))
    assert expected == run(
        shuffled_objectives, shuffled_bots, previous, pool=pool, max_squad_size=size
    )


@settings(max_examples=300, deadline=None)
@given(objectives_st, bots_st, previous_st(), pools_st, sizes_st)
def test_the_same_objectives_and_bots_as_last_time_give_last_times_assignment(
    objectives: list[Objective],
    bots: list[BotInfo],
    previous: Assignment | None,
    pool: tuple[str, ...],
    size: int,
) -> None:
    first = run(objectives, bots, previous, pool=pool, max_squad_size=size)
    assert first == run(objectives, bots, first, pool=pool, max_squad_size=size)


@settings(max_examples=300, deadline=None)
@given(objectives_st, bots_st, previous_st(), pools_st, sizes_st)
def test_every_bot_is_in_one_squad_or_free_and_squads_fit_the_ideal(
    objectives: list[Objective],
    bots: list[BotInfo],
    previous: Assignment | None,
    pool: tuple[str, ...],
    size: int,
) -> None:
    assignment = run(objectives, bots, previous, pool=pool, max_squad_size=size)
    placed = [m for s in assignment.squads for m in s.members] + list(assignment.free)
    assert sorted(b.id for b in bots) == sorted(placed)
    assert all(1 <= len(s.members) <= size for s in assignment.squads)
    assert {s.squad for s in assignment.squads} <= set(pool)
    for objective in objectives:
        assert assignment.wanted(objective.id) == bots_on(assignment, objective.id)
        squads = len(assignment.squads_on(objective.id))
        assert math.ceil(assignment.wanted(objective.id) / size) == squads
    if assignment.free:
        assert not objectives or len(pool) == len(assignment.squads)


@settings(max_examples=200, deadline=None)
@given(objectives_st, bots_st, previous_st(), pools_st, sizes_st)
def test_changes_turn_the_previous_assignment_into_the_new_one(
    objectives: list[Objective],
    bots: list[BotInfo],
    previous: Assignment | None,
    pool: tuple[str, ...],
    size: int,
) -> None:
    assignment = run(objectives, bots, previous, pool=pool, max_squad_size=size)
    changes = assignment.changes(previous)
    squads = {s.squad: (s.objective, set(s.members)) for s in (previous or Assignment()).squads}
    for squad in changes.deactivated:
        del squads[squad]
    for squad, objective in changes.retasked:
        squads[squad] = (objective, squads.get(squad, ("", set()))[1])
    for member, squad in changes.left:
        if squad in squads:
            squads[squad][1].discard(member)
    for member, squad in changes.joined:
        squads[squad][1].add(member)
    assert {s.squad: (s.objective, set(s.members)) for s in assignment.squads} == squads


def _objective_of(assignment: Assignment, bot_id: str) -> str | None:
    squad = assignment.squad_of(bot_id)
    return squad.objective if squad is not None else None


def _squad(squad: SquadAssignment | None) -> SquadAssignment:
    assert squad is not None, "expected a squad"
    return squad


# --- objectives per game mode ---------------------------------------------------------------

WARZONE = load_map("warzone")
MARKERS = {m.id: m.waypoint for m in WARZONE.markers}
POINTS = ("cp-centre", "cp-north", "cp-south")
TSPS = {m.id: None for m in WARZONE.markers_of("tsp")}


def kinds(objectives: Sequence[Objective]) -> dict[str, ObjectiveKind]:
    return {o.id: o.kind for o in objectives}


def test_capture_and_hold_captures_what_is_not_ours_and_defends_what_is() -> None:
    points = {"cp-north": "red", "cp-centre": "blue", "cp-south": None}
    objectives = objectives_for_capture_and_hold(points, MARKERS, "red", {"red": 5, "blue": 9})
    assert {
        "defend:cp-north": DEFEND_MARKER,
        "capture:cp-centre": ADVANCE,
        "capture:cp-south": ADVANCE,
    } == kinds(objectives)
    capture = next(o for o in objectives if o.id == "capture:cp-south")
    assert ("cp-south", "e1") == (capture.target, capture.waypoint)
    assert capture.weight > next(o for o in objectives if o.id == "defend:cp-north").weight


def test_capture_and_hold_ahead_with_two_of_three_points_only_defends() -> None:
    points = {"cp-north": "red", "cp-centre": "red", "cp-south": "blue"}
    ahead = objectives_for_capture_and_hold(points, MARKERS, "red", {"red": 30, "blue": 20})
    assert {"defend:cp-centre": DEFEND_MARKER, "defend:cp-north": DEFEND_MARKER} == kinds(ahead)
    behind = objectives_for_capture_and_hold(points, MARKERS, "red", {"red": 20, "blue": 30})
    assert "capture:cp-south" in kinds(behind)
    level = objectives_for_capture_and_hold(points, MARKERS, "red", {"red": 20, "blue": 20})
    assert "capture:cp-south" in kinds(level)


def test_tsps_we_do_not_own_are_a_lower_priority_advance_in_every_mode() -> None:
    tsps = {"tsp-west-north": "red", "tsp-east-north": "blue", "tsp-west-south": None}
    objectives = objectives_for_capture_and_hold(dict.fromkeys(POINTS), MARKERS, "red", {}, tsps)
    tsp_objectives = [o for o in objectives if o.target.startswith("tsp-")]
    assert ["capture:tsp-east-north", "capture:tsp-west-south"] == [o.id for o in tsp_objectives]
    assert all(o.kind is ADVANCE for o in tsp_objectives)
    assert max(o.weight for o in tsp_objectives) < min(
        o.weight for o in objectives if o not in tsp_objectives
    )
    assert tsp_objectives == objectives_for_tsps(tsps, MARKERS, "red")
    for more in (
        objectives_for_search_and_destroy(
            "red", role=ATTACK, targets={}, marker_waypoints=MARKERS, tsps=tsps
        ),
        objectives_for_body_count("red", marker_waypoints=MARKERS, tsps=tsps),
        objectives_for_assassination(
            "red", role=ATTACK, vip="v", vip_waypoint="e3", marker_waypoints=MARKERS, tsps=tsps
        ),
    ):
        assert {o.id for o in tsp_objectives} <= {o.id for o in more}


def test_a_marker_without_a_waypoint_is_named_in_the_error() -> None:
    with pytest.raises(UnknownIdError, match="capture point 'cp-nowhere'"):
        objectives_for_capture_and_hold({"cp-nowhere": None}, MARKERS, "red", {})


def test_search_and_retrieve_advances_on_the_loose_object() -> None:
    objectives = objectives_for_search_and_retrieve(
        "red",
        object_id="retrieval-object",
        object_waypoint="e3",
        return_points={"red": "return-red", "blue": "return-blue"},
        marker_waypoints=MARKERS,
    )
    assert {"retrieve:retrieval-object": ADVANCE} == kinds(objectives)
    assert ("retrieval-object", "e3") == (objectives[0].target, objectives[0].waypoint)


@pytest.mark.parametrize("carrier", ["red-2", "red-5"])
def test_search_and_retrieve_escorts_our_carrier_and_clears_the_way_home(carrier: str) -> None:
    objectives = objectives_for_search_and_retrieve(
        "red",
        object_id="retrieval-object",
        object_waypoint="d3",
        carrier=carrier,
        carrier_team="red",
        return_points={"red": "return-red", "blue": "return-blue"},
        marker_waypoints=MARKERS,
    )
    assert {"escort:retrieval-object": ESCORT, "return:return-red": ADVANCE} == kinds(objectives)
    escort = objectives[0]
    assert (carrier, "d3") == (escort.target, escort.waypoint)


def test_search_and_retrieve_attacks_the_enemy_carrier_and_blocks_its_return() -> None:
    objectives = objectives_for_search_and_retrieve(
        "red",
        object_id="retrieval-object",
        object_waypoint="f3",
        carrier="blue-1",
        carrier_team="blue",
        return_points={"red": "return-red", "blue": "return-blue"},
        marker_waypoints=MARKERS,
    )
    assert {"attack:retrieval-object": ATTACK_ENTITY, "block:return-blue": DEFEND_MARKER} == kinds(
        objectives
    )
    assert ("blue-1", "h3") == (objectives[0].target, objectives[1].waypoint)
    with pytest.raises(ConfigurationError, match="must be given together"):
        objectives_for_search_and_retrieve(
            "red",
            object_id="retrieval-object",
            object_waypoint="f3",
            carrier="blue-1",
            return_points={},
            marker_waypoints=MARKERS,
        )


def test_search_and_destroy_attackers_attack_intact_targets_and_guard_armed_ones() -> None:
    targets = {"target-blue-north": "intact", "target-blue-south": "armed"}
    objectives = objectives_for_search_and_destroy(
        "red", role=ATTACK, targets=targets, marker_waypoints=MARKERS
    )
    assert {
        "destroy:target-blue-north": ATTACK_ENTITY,
        "guard:target-blue-south": DEFEND_MARKER,
    } == kinds(objectives)
    done = {"target-blue-north": "destroyed", "target-blue-south": "armed"}
    assert ["guard:target-blue-south"] == [
        o.id
        for o in objectives_for_search_and_destroy(
            "red", role=ATTACK, targets=done, marker_waypoints=MARKERS
        )
    ]


def test_search_and_destroy_defenders_defend_their_targets_harder_when_armed() -> None:
    calm = objectives_for_search_and_destroy(
        "blue",
        role=DEFEND,
        targets={"target-blue-north": "intact", "target-blue-south": "intact"},
        marker_waypoints=MARKERS,
    )
    assert {
        "defend:target-blue-north": DEFEND_MARKER,
        "defend:target-blue-south": DEFEND_MARKER,
    } == kinds(calm)
    alarm = objectives_for_search_and_destroy(
        "blue",
        role=DEFEND,
        targets={"target-blue-north": "intact", "target-blue-south": "armed"},
        marker_waypoints=MARKERS,
    )
    weights = {o.id: o.weight for o in alarm}
    assert weights["defend:target-blue-south"] > weights["defend:target-blue-north"]
    with pytest.raises(ConfigurationError, match="role must be 'attack' or 'defend'"):
        objectives_for_search_and_destroy("blue", role="x", targets={}, marker_waypoints=MARKERS)
    with pytest.raises(ConfigurationError, match="known states: intact, armed, destroyed"):
        objectives_for_search_and_destroy(
            "blue", role=DEFEND, targets={"target-blue-north": "gone"}, marker_waypoints=MARKERS
        )


def test_assassination_defenders_escort_their_vip_and_hold_its_hiding_spot() -> None:
    objectives = objectives_for_assassination(
        "blue",
        role=DEFEND,
        vip="blue-3",
        vip_waypoint="h2",
        hiding_spot="hide-house-east",
        marker_waypoints=MARKERS,
    )
    assert {"escort:blue-3": ESCORT, "hide:hide-house-east": DEFEND_MARKER} == kinds(objectives)
    assert ("blue-3", "h2") == (objectives[0].target, objectives[0].waypoint)


def test_assassination_attackers_hunt_the_vip_where_it_is_or_search_the_hiding_spots() -> None:
    seen = objectives_for_assassination(
        "red", role=ATTACK, vip="blue-3", vip_waypoint="h2", marker_waypoints=MARKERS
    )
    assert {"attack:blue-3": ATTACK_ENTITY} == kinds(seen)
    hidden = objectives_for_assassination(
        "red",
        role=ATTACK,
        vip="blue-3",
        vip_waypoint=None,
        search_spots=["hide-i1", "hide-house-east"],
        marker_waypoints=MARKERS,
    )
    assert {"search:hide-house-east": ADVANCE, "search:hide-i1": ADVANCE} == kinds(hidden)


def test_body_count_holds_the_regroup_locations() -> None:
    objectives = objectives_for_body_count(
        "red", regroup_points=["regroup-d4", "regroup-d2"], marker_waypoints=MARKERS
    )
    assert {"hold:regroup-d2": DEFEND_MARKER, "hold:regroup-d4": DEFEND_MARKER} == kinds(objectives)


def test_together_the_modes_use_all_four_objective_kinds() -> None:
    used = {
        o.kind
        for o in objectives_for_capture_and_hold(
            {"cp-north": "red", "cp-south": None}, MARKERS, "red", {}
        )
        + objectives_for_search_and_retrieve(
            "red",
            object_id="o",
            object_waypoint="e3",
            carrier="red-1",
            carrier_team="red",
            return_points={"red": "return-red"},
            marker_waypoints=MARKERS,
        )
        + objectives_for_search_and_destroy(
            "red", role=ATTACK, targets={"target-blue-north": "intact"}, marker_waypoints=MARKERS
        )
    }
    assert set(ObjectiveKind) == used


def test_the_vip_hides_at_the_cheapest_spot_and_stays_unless_another_is_much_better() -> None:
    spots = {"near": "x10", "far": "x40", "mid": "x20"}
    assert "near" == choose_hiding_spot(spots, "x0", line)
    assert "mid" == choose_hiding_spot(spots, "x0", line, danger={"x10": 100.0})
    # From x15, near (5) is not cheaper than mid (5) by the margin: the VIP stays at mid.
    assert "mid" == choose_hiding_spot(spots, "x15", line, current="mid")
    assert "near" == choose_hiding_spot(spots, "x12", line, current="mid")
    assert "near" == choose_hiding_spot(spots, "x0", line, current="gone")
    assert choose_hiding_spot({}, "x0", line) is None


def test_capture_and_hold_on_warzone_sends_a_squad_to_each_point_and_keeps_them() -> None:
    def metres(a: str, b: str) -> float:
        return euclidean(WARZONE.position(a), WARZONE.position(b))

    spawns = [m.waypoint for m in WARZONE.spawns("red")]
    bots = [BotInfo(f"red-{i}", spawns[i % len(spawns)]) for i in range(12)]
    pool = [f"red-squad-{i}" for i in range(1, 7)]
    objectives = objectives_for_capture_and_hold(dict.fromkeys(POINTS), MARKERS, "red", {})
    first = assign(objectives, bots, distance=metres, squad_ids=pool)
    assert {f"capture:{p}": 4 for p in POINTS} == dict(first.ideal)
    assert 3 == len(first.squads)
    assert () == first.free
    assert first == assign(objectives, bots, first, distance=metres, squad_ids=pool)
    # The squads reached their points and cp-north is now ours: its squad stays, to defend it.
    north = _squad(first.squads_on("capture:cp-north")[0])
    arrived = [BotInfo(b.id, MARKERS["cp-north"]) if b.id in north.members else b for b in bots]
    owners: dict[str, str | None] = {**dict.fromkeys(POINTS), "cp-north": "red"}
    later = objectives_for_capture_and_hold(owners, MARKERS, "red", {"red": 1})
    second = assign(later, arrived, first, distance=metres, squad_ids=pool)
    assert ("defend:cp-north", north.members) == (
        _squad(second.squad(north.squad)).objective,
        _squad(second.squad(north.squad)).members,
    )
    assert (((north.squad, "defend:cp-north"),)) == second.changes(first).retasked


def test_a_respawning_bot_comes_back_at_the_spawn_nearest_its_squad() -> None:
    distance = travel_distance(WARZONE)
    spawns = [m.waypoint for m in WARZONE.spawns("red")]  # a2, a3, a4, a1, a5
    assert "a5" == choose_spawn(spawns, ["b5", "c5"], distance)  # a squad up north
    assert "a1" == choose_spawn(spawns, ["b1", "c1"], distance)  # down south
    # No member located yet: the squad's objective decides; nothing to go by: the smallest id.
    assert "a5" == choose_spawn(spawns, [], distance, objective="d5")
    assert "a1" == choose_spawn(spawns, [], distance)
    assert None is choose_spawn([], ["b5"], distance)


def test_a_respawning_bot_keeps_out_of_a_spawn_under_enemy_influence() -> None:
    distance = travel_distance(WARZONE)
    spawns = ["a2", "a3", "a4", "c4"]  # the base spawns and a TSP held
    assert "c4" == choose_spawn(spawns, ["d5", "d4"], distance)  # the TSP is nearest
    danger = {"c4": 3.0}  # but the enemy is strong there
    assert "a4" == choose_spawn(spawns, ["d5", "d4"], distance, danger=danger)


def test_a_spawn_is_shunned_only_where_the_enemy_outweighs_the_team() -> None:
    facts = FactDB()
    facts.assert_fact("influence", 4, 1.0, 3.0)  # the enemy holds sway in area 4: shun it
    facts.assert_fact("influence", 5, 2.5, 2.0)  # a fight the team holds its own in
    assert {4: 2.0} == enemy_control(facts)
