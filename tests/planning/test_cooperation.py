"""Boeda's cooperative GOAP on the prison escape: requester plans, requests, responder answers."""

from __future__ import annotations

import pytest

from warband.exceptions import PlanningError
from warband.planning import (
    Action,
    CooperativeSearch,
    SearchStatus,
    WorldState,
    answer_request,
    eq,
    plan_cooperatively,
    simulate,
)
from warband.planning.goap.state import Condition

BARS = eq("bars_open(cell)", True, any_agent=True)


def _prisoner_actions() -> list[Action]:
    return [
        Action(
            "WalkOut",
            preconditions=[BARS, eq("at(prisoner)", "cell")],
            effects={"at(prisoner)": "yard"},
        ),
        Action(
            "Eat", preconditions={"has_food(prisoner)": True}, effects={"hungry(prisoner)": False}
        ),
    ]


def _guard_actions() -> list[Action]:
    return [
        Action("Goto", effects={"at(guard)": "?place"}, cost=2),
        Action(
            "StepOnPlate",
            preconditions={"at(guard)": "plate"},
            effects={"bars_open(cell)": True},
        ),
    ]


PRISONER_START = WorldState(
    {"at(prisoner)": "cell", "bars_open(cell)": False, "hungry(prisoner)": True}
)


def test_solo_plan_means_no_cooperation_is_needed() -> None:
    start = PRISONER_START.updated({"bars_open(cell)": True})

    result = plan_cooperatively(start, {"at(prisoner)": "yard"}, _prisoner_actions())

    assert result.solo is not None
    assert ("WalkOut",) == result.solo.names
    assert () == result.plans


def test_prisoner_asks_another_agent_to_open_the_bars() -> None:
    result = plan_cooperatively(
        PRISONER_START, {"at(prisoner)": "yard"}, _prisoner_actions(), cooperation_cost=2.5
    )

    assert None is result.solo
    assert SearchStatus.FOUND == result.status
    best = result.best
    assert best is not None
    assert (BARS,) == best.request
    assert 2.5 == best.request_cost
    assert ("Cooperate", "WalkOut") == best.plan.names
    assert 3.5 == best.cost
    assert () == best.before
    assert ("WalkOut",) == tuple(step.name for step in best.after)


def test_cooperable_nodes_list_the_tagged_conditions() -> None:
    result = plan_cooperatively(PRISONER_START, {"at(prisoner)": "yard"}, _prisoner_actions())

    assert 1 == len(result.cooperable_nodes)
    node = result.cooperable_nodes[0]
    assert (BARS,) == node.cooperable
    assert 1.0 == node.cost_after


def test_untagged_condition_is_never_requested() -> None:
    result = plan_cooperatively(PRISONER_START, {"hungry(prisoner)": False}, _prisoner_actions())

    assert SearchStatus.NO_PLAN == result.status
    assert () == result.plans
    assert () == result.cooperable_nodes


def test_cooperative_plan_executes_once_the_helper_has_done_its_part() -> None:
    result = plan_cooperatively(PRISONER_START, {"at(prisoner)": "yard"}, _prisoner_actions())
    best = result.best
    assert best is not None

    helped = PRISONER_START.updated((c.key, c.value) for c in best.request)

    assert simulate(helped, best.after, goal=best.plan.goal).ok
    assert not simulate(PRISONER_START, best.after, goal=best.plan.goal).ok


def test_cooperative_plans_come_cheapest_first() -> None:
    key_cond = eq("has_key(prisoner)", True, any_agent=True)
    actions = [
        *_prisoner_actions(),
        Action("UnlockBars", preconditions=[key_cond], effects={"bars_open(cell)": True}),
    ]
    start = PRISONER_START.updated({"has_key(prisoner)": False})

    result = plan_cooperatively(start, {"at(prisoner)": "yard"}, actions, cooperation_cost=1.0)

    assert [(BARS,), (key_cond,)] == [plan.request for plan in result.plans]
    assert [2.0, 3.0] == [plan.cost for plan in result.plans]


def test_larger_request_that_costs_no_less_is_dropped() -> None:
    lamp = eq("lamp_on(cell)", True, any_agent=True)
    actions = [
        Action(
            "WalkOut",
            preconditions=[BARS, lamp, eq("at(prisoner)", "cell")],
            effects={"at(prisoner)": "yard"},
        ),
        Action("SwitchLamp", effects={"lamp_on(cell)": True}),
    ]
    start = PRISONER_START.updated({"lamp_on(cell)": False})

    def per_condition(request: tuple[Condition, ...]) -> float:
        return float(len(request))

    result = plan_cooperatively(
        start, {"at(prisoner)": "yard"}, actions, cooperation_cost=per_condition
    )

    assert [(BARS,)] == [plan.request for plan in result.plans]
    assert ["Cooperate", "SwitchLamp", "WalkOut"] == sorted(result.plans[0].plan.names)
    assert 3.0 == result.plans[0].cost


def test_cooperation_cost_can_depend_on_the_request() -> None:
    def cost(request: tuple[Condition, ...]) -> float:
        return 10.0 * len(request)

    result = plan_cooperatively(
        PRISONER_START, {"at(prisoner)": "yard"}, _prisoner_actions(), cooperation_cost=cost
    )

    assert result.best is not None
    assert 10.0 == result.best.request_cost


def test_max_plans_stops_after_the_cheapest() -> None:
    key_cond = eq("has_key(prisoner)", True, any_agent=True)
    actions = [
        *_prisoner_actions(),
        Action("UnlockBars", preconditions=[key_cond], effects={"bars_open(cell)": True}),
    ]
    start = PRISONER_START.updated({"has_key(prisoner)": False})

    result = plan_cooperatively(start, {"at(prisoner)": "yard"}, actions, max_plans=1)

    assert [(BARS,)] == [plan.request for plan in result.plans]


def test_guard_can_answer_the_request_with_its_own_plan() -> None:
    guard = WorldState({"at(guard)": "gate", "bars_open(cell)": False})

    answer = answer_request(["bars_open(cell) == true"], guard, _guard_actions())

    assert answer.can_help
    assert answer.plan is not None
    assert ("Goto", "StepOnPlate") == answer.plan.names
    assert 3.0 == answer.cost


def test_responder_without_a_way_says_it_cannot_help() -> None:
    cook = WorldState({"at(cook)": "kitchen"})

    answer = answer_request({"bars_open(cell)": True}, cook, _prisoner_actions())

    assert not answer.can_help
    assert None is answer.cost
    assert SearchStatus.NO_PLAN == answer.status


def test_empty_request_is_rejected() -> None:
    with pytest.raises(PlanningError, match="at least one condition"):
        answer_request([], WorldState(), _guard_actions())


def test_cooperative_search_can_be_spread_over_small_budgets() -> None:
    search = CooperativeSearch(PRISONER_START, {"at(prisoner)": "yard"}, _prisoner_actions())
    steps = 0
    while search.step(1) is SearchStatus.RUNNING:
        steps += 1

    assert search.result is not None
    assert search.result.best is not None
    assert ("Cooperate", "WalkOut") == search.result.best.plan.names
    assert steps <= search.result.expansions
