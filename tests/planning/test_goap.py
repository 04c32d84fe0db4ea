"""The GOAP planner: actions, variables, procedural preconditions, optimality, goal selection."""

from __future__ import annotations

from typing import Any

import pytest

from warband import planning
from warband.exceptions import PlanningError
from warband.planning import (
    Action,
    Brain,
    Effect,
    Goal,
    GoapSearch,
    Key,
    SearchStatus,
    WorldState,
    eq,
    find_plan,
    ne,
    select_goal,
    simulate,
)
from warband.planning.goap.state import Bindings


def _goto(cost: Any = 1.0, **kwargs: Any) -> Action:
    return Action("Goto", effects={"at(me)": "?node"}, cost=cost, **kwargs)


def test_cheapest_of_two_routes_is_returned() -> None:
    actions = [
        Action("Shoot", preconditions={"armed": True}, effects={"enemy_dead": True}, cost=1),
        Action("Arm", effects={"armed": True}, cost=1),
        Action("Strangle", effects={"enemy_dead": True}, cost=5),
    ]

    result = find_plan(WorldState({"armed": False}), {"enemy_dead": True}, actions)

    assert result.plan is not None
    assert ("Arm", "Shoot") == result.plan.names
    assert 2.0 == result.plan.cost


def test_goal_that_already_holds_needs_an_empty_plan() -> None:
    result = find_plan(WorldState({"armed": True}), {"armed": True}, [_goto()])

    assert result.plan is not None
    assert () == result.plan.names


def test_variable_is_bound_from_the_goal_and_flows_into_the_cost() -> None:
    distances = {"n1": 4.0, "n2": 1.0}

    def walk_cost(context: Any, bindings: Bindings) -> float:
        return distances[str(bindings["node"])]

    result = find_plan(WorldState({"at(me)": "n0"}), {"at(me)": "n1"}, [_goto(walk_cost)])

    assert result.plan is not None
    assert "n1" == result.plan.steps[0].bindings["node"]
    assert 4.0 == result.plan.cost
    assert (eq("at(me)", "n1"),) == result.plan.goal


def test_variable_binding_flows_into_preconditions() -> None:
    actions = [
        Action(
            "PickUp",
            preconditions={"at(me)": "?item"},
            effects={"holding(?item)": True},
        ),
        _goto(),
    ]

    result = find_plan(WorldState({"at(me)": "start"}), {"holding(rifle)": True}, actions)

    assert result.plan is not None
    assert ["Goto(node=rifle)", "PickUp(item=rifle)"] == [str(s) for s in result.plan.steps]


def test_inequality_goal_is_satisfied_by_a_variable_effect() -> None:
    actions = [Action("Act", preconditions={"at(me)": "a"}, effects={"at(me)": "b"}), _goto(3.0)]

    result = find_plan(WorldState({"at(me)": "b"}), [ne("at(me)", "b")], actions)

    assert result.plan is not None
    assert ("Goto",) == result.plan.names
    assert "a" == result.plan.steps[0].bindings["node"]


def test_bind_function_supplies_variables_the_open_condition_leaves_free() -> None:
    def items(context: Any, bindings: Bindings) -> list[dict[str, str]]:
        return [{"item": "rock"}, {"item": "knife"}]

    actions = [
        Action("Throw", preconditions={"holding(?item)": True}, effects={"hit": True}, bind=items),
        Action("PickRock", effects={"holding(rock)": True}, cost=3),
        Action("PickKnife", effects={"holding(knife)": True}, cost=1),
    ]

    result = find_plan(WorldState({"hit": False}), {"hit": True}, actions)

    assert result.plan is not None
    assert ["PickKnife", "Throw(item=knife)"] == [str(step) for step in result.plan]


def test_bind_function_chooses_the_values_for_an_inequality() -> None:
    def exits(context: Any, bindings: Bindings) -> list[dict[str, str]]:
        return [{"node": "roof"}, {"node": "here"}]

    result = find_plan(WorldState({"at(me)": "here"}), [ne("at(me)", "here")], [_goto(bind=exits)])

    assert result.plan is not None
    assert ["Goto(node=roof)"] == [str(step) for step in result.plan]


def test_procedural_precondition_excludes_bindings_during_search() -> None:
    def open_node(context: Any, bindings: Bindings) -> bool:
        return bindings["node"] not in context

    actions = [
        Action("Reach", preconditions={"at(me)": "?node"}, effects={"reached(?node)": True}),
        _goto(check=open_node),
    ]
    start = WorldState({"at(me)": "home"})

    assert find_plan(start, {"reached(hill)": True}, actions, context=set()).found
    blocked = find_plan(start, {"reached(hill)": True}, actions, context={"hill"})
    assert None is blocked.plan
    assert SearchStatus.NO_PLAN == blocked.status


def test_action_that_undoes_another_open_condition_is_never_used() -> None:
    actions = [
        Action("Blast", effects={"door_open": True, "alarm": True}, cost=1),
        Action("PickLock", effects={"door_open": True}, cost=3),
    ]
    start = WorldState({"door_open": False, "alarm": False})

    result = find_plan(start, {"door_open": True, "alarm": False}, actions)

    assert result.plan is not None
    assert ("PickLock",) == result.plan.names
    assert simulate(start, result.plan.steps, goal=result.plan.goal).ok


def test_simulation_reports_the_first_step_whose_preconditions_fail() -> None:
    actions = [
        Action("Arm", effects={"armed": True}),
        Action("Shoot", preconditions={"armed": True}, effects={"enemy_dead": True}),
    ]
    plan = find_plan(WorldState({"armed": False}), {"enemy_dead": True}, actions).plan
    assert plan is not None

    replay = simulate(WorldState({"armed": False}), plan.steps[1:], goal=plan.goal)

    assert not replay.ok
    assert 0 == replay.failed_step
    assert "armed == true" in replay.reason


def test_equal_inputs_give_equal_plans() -> None:
    actions = [Action(f"Way{i}", effects={"done": True}, cost=2) for i in range(5)]

    first = find_plan(WorldState({"done": False}), {"done": True}, actions)
    second = find_plan(WorldState({"done": False}), {"done": True}, actions)

    assert first.plan is not None
    assert first.plan == second.plan
    assert ("Way0",) == first.plan.names


def test_expansion_limit_gives_up_instead_of_running_on() -> None:
    actions = [
        Action(f"Step{i}", preconditions={f"s{i}": True}, effects={f"s{i + 1}": True})
        for i in range(10)
    ]
    start = WorldState({"s0": True})

    result = find_plan(start, {"s10": True}, actions, max_expansions=3)

    assert SearchStatus.GAVE_UP == result.status
    assert 3 == result.expansions


def test_step_resumes_where_it_stopped() -> None:
    actions = [
        Action(f"Step{i}", preconditions={f"s{i}": True}, effects={f"s{i + 1}": True})
        for i in range(6)
    ]
    search = GoapSearch(WorldState({"s0": True}), {"s6": True}, actions)

    assert SearchStatus.RUNNING == search.step(2)
    assert 2 == search.expansions
    assert SearchStatus.FOUND == search.step(100)
    assert search.result is not None and search.result.plan is not None
    assert 6 == len(search.result.plan)


def test_costs_below_one_keep_the_plan_optimal() -> None:
    actions = [
        Action("Cheap1", effects={"a": True}, cost=0.25),
        Action("Cheap2", effects={"b": True}, cost=0.25),
        Action("Both", effects={"a": True, "b": True}, cost=0.75),
    ]

    result = find_plan(WorldState({"a": False, "b": False}), {"a": True, "b": True}, actions)

    assert result.plan is not None
    assert 0.5 == result.plan.cost


def test_action_without_effects_is_rejected() -> None:
    with pytest.raises(PlanningError, match="has no effects"):
        Action("Idle", effects={})


def test_variable_no_effect_can_bind_is_rejected_with_a_fix() -> None:
    with pytest.raises(PlanningError, match="add a bind"):
        Action("Use", preconditions={"holding(?item)": True}, effects={"used": True})


def test_negative_cost_is_rejected() -> None:
    with pytest.raises(PlanningError, match="cost -1"):
        Action("Bad", effects={"x": True}, cost=-1)


def test_cost_function_below_its_declared_minimum_is_rejected() -> None:
    action = Action("Walk", effects={"x": True}, cost=lambda context, bindings: 0.1, min_cost=1)

    with pytest.raises(PlanningError, match="at least its min_cost"):
        find_plan(WorldState({"x": False}), {"x": True}, [action])


def test_brain_lists_the_known_actions_when_one_is_unknown() -> None:
    brain = Brain("soldier", [], [Action("Attack", effects={"x": True}), _goto()])

    with pytest.raises(PlanningError, match=r"unknown action 'Atack'.*known actions: Attack, Goto"):
        brain.action("Atack")


def test_goal_with_unbound_variable_says_how_to_bind_it() -> None:
    goal = Goal("Cover", {"at(me)": "?node"})

    with pytest.raises(PlanningError, match="give the goal a bind"):
        find_plan(WorldState({"at(me)": "a"}), goal, [_goto()])


def _brain() -> Brain:
    return Brain(
        "guard",
        [
            Goal("Attack", {"enemy_dead": True}, relevancy=0.8),
            Goal("Patrol", {"patrolled": True}, relevancy=0.3),
            Goal("Rest", {"rested": True}, relevancy=0.1),
        ],
        [
            Action("Patrol", effects={"patrolled": True}),
            Action("Sleep", effects={"rested": True}),
        ],
    )


def test_selector_falls_back_when_the_most_relevant_goal_has_no_plan() -> None:
    state = WorldState({"enemy_dead": False, "patrolled": False, "rested": False})

    selection = select_goal(_brain(), state)

    assert selection.goal is not None
    assert "Patrol" == selection.goal.name
    verdicts = {v.goal: v.outcome for v in selection.verdicts}
    assert {"Attack": "no plan", "Patrol": "chosen", "Rest": "not tried"} == verdicts


def test_superior_bias_recommends_a_goal_over_a_more_relevant_one() -> None:
    state = WorldState({"enemy_dead": False, "patrolled": False, "rested": False})

    selection = select_goal(_brain(), state, biases={"Rest": 0.5})

    assert selection.goal is not None
    assert "Rest" == selection.goal.name
    assert 0.6 == pytest.approx(selection.score)


def test_negative_bias_discourages_a_goal_until_it_is_not_relevant() -> None:
    state = WorldState({"enemy_dead": False, "patrolled": False, "rested": False})

    selection = select_goal(_brain(), state, biases={"Patrol": -0.3})

    assert selection.goal is not None
    assert "Rest" == selection.goal.name
    assert "not relevant" == {v.goal: v.outcome for v in selection.verdicts}["Patrol"]


def test_goal_that_already_holds_is_skipped() -> None:
    state = WorldState({"enemy_dead": False, "patrolled": True, "rested": False})

    selection = select_goal(_brain(), state)

    assert selection.goal is not None
    assert "Rest" == selection.goal.name


def test_bias_for_an_unknown_goal_is_rejected() -> None:
    with pytest.raises(PlanningError, match="unknown goal 'Dance'"):
        select_goal(_brain(), WorldState(), biases={"Dance": 1.0})


def test_relevancy_outside_zero_to_one_is_rejected() -> None:
    goal = Goal("Odd", {"x": True}, relevancy=lambda context: 1.5)

    with pytest.raises(PlanningError, match=r"must lie in 0\.\.1"):
        goal.relevance()


GOAP_NAMES = [
    "Action", "Brain", "Condition", "CooperableNode", "CooperationAnswer", "CooperationCost",
    "CooperativePlanning", "CooperativePlan", "CooperativeSearch", "Effect", "Goal",
    "GoalSelection", "GoalVerdict", "GoapPlan", "GoapSearch", "GoapStep",
    "InterruptibleSearch", "Key", "PlanDelivery", "PlanResult", "PlanningScheduler",
    "SearchStatus", "SearchTree", "SearchTreeNode", "Simulation", "StateValue", "WorldState",
    "answer_request", "eq", "find_plan", "goap_tree_dict", "goap_tree_dot", "goap_tree_text",
    "ne", "plan_cooperatively", "select_goal", "simulate",
]  # fmt: skip


def test_public_goap_names_are_exported_once() -> None:
    exported = planning.__all__

    assert [] == [name for name in GOAP_NAMES if exported.count(name) != 1]
    assert [] == [name for name in GOAP_NAMES if not hasattr(planning, name)]


# --- what is shared between searches must not change their results ---------------------------


def _fear_plan(memory: Any) -> tuple[str, ...]:
    from warband.planning.domains import fear

    start, brain, goal, _, _ = fear.problem("soldier")
    result = find_plan(start, goal, brain, memory)
    assert result.plan is not None
    return result.plan.names


def test_context_dependent_checks_run_again_on_every_search_over_a_brain() -> None:
    from warband.planning.domains import fear

    held = fear.FearMemory().remember_failure("OpenDoor")

    first = _fear_plan(None)
    blocked = _fear_plan(held)
    again = _fear_plan(None)

    assert ("OpenDoor", "EnterWarehouse", "Attack") == first
    assert "OpenDoor" not in blocked
    assert first == again


def test_costs_from_the_context_are_asked_again_on_every_search() -> None:
    actions = [Action("Goto", effects={"at(me)": "?node"}, cost=lambda ctx, b: ctx[b["node"]])]
    goal = {"at(me)": "far"}

    cheap = find_plan(WorldState({"at(me)": "home"}), goal, actions, {"far": 2.0})
    dear = find_plan(WorldState({"at(me)": "home"}), goal, actions, {"far": 7.0})

    assert cheap.plan is not None and dear.plan is not None
    assert (2.0, 7.0) == (cheap.plan.cost, dear.plan.cost)


def test_repeated_solves_expand_the_same_nodes_in_the_same_order() -> None:
    from warband.planning.domains import pirate, synthetic

    for problem in (pirate.problem("no_bottle"), synthetic.problem(6, 4, 3)):
        first = problem.solve(record_tree=True)
        second = problem.solve(record_tree=True)
        assert first.tree is not None and second.tree is not None
        assert first.tree.nodes == second.tree.nodes
        assert first.plan == second.plan


def test_successors_equal_regressing_through_each_ground_step() -> None:
    from warband.planning.domains import fear, pirate, synthetic
    from warband.planning.goap.regression import regress

    problems = [fear.problem("soldier"), pirate.problem("lawful"), synthetic.problem(5, 5, 2)]
    for problem in problems:
        search = problem.search()
        search.run()
        for node in search.core.expanded:
            for step, child, cost in search.regression.successors(node):
                assert regress(node, step) == child
                assert step.cost == cost


def test_successors_of_a_node_not_in_canonical_form_match_regress() -> None:
    from warband.planning.goap.regression import Regression, regress

    actions = [
        Action("SetOne", effects={"x": 1}, preconditions={"y": True}),
        Action("SetY", effects={"y": True}, preconditions={"x": 3}),
    ]
    regression = Regression(WorldState({"x": 0}), actions, None)
    node = frozenset({eq("x", 1), ne("x", 2), eq("z", True)})

    children = regression.successors(node)

    assert ["SetOne"] == [step.name for step, _, _ in children]
    assert [regress(node, step) for step, _, _ in children] == [c for _, c, _ in children]


def test_a_brain_refuses_a_property_compared_with_values_of_two_kinds() -> None:
    goal = Goal("Escape", ["door_open(cell) == true"])
    opener = Action("Open", effects=[Effect(Key("door_open", "cell"), "ture")])

    with pytest.raises(PlanningError, match=r"two kinds, true in goal 'Escape' \(bool\) and ture"):
        Brain("prisoner", [goal], [opener])
