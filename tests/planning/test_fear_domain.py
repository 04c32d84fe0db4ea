"""The F.E.A.R. domain (Orkin): one goal set, three action sets, and the blocked-door replan."""

from __future__ import annotations

import pytest

from warband.exceptions import PlanningError
from warband.planning import find_plan, plan_cooperatively, select_goal, simulate
from warband.planning.domains import fear

from .test_goap_properties import forward_optimal_cost


@pytest.mark.parametrize("kind", fear.KINDS)
@pytest.mark.parametrize("goal", ["KillEnemy", "Patrol"])
def test_ready_made_problems_match_the_forward_oracle(kind: str, goal: str) -> None:
    problem = fear.problem(kind, goal)
    conditions = problem.goal.ground(problem.context)

    result = problem.solve()

    expected = forward_optimal_cost(
        problem.start, conditions, problem.brain.actions, problem.context
    )
    assert expected == problem.optimal_cost
    assert expected == (None if result.plan is None else result.plan.cost)


def test_all_three_characters_share_the_same_goal_set() -> None:
    goal_sets = {kind: [g.name for g in fear.brain(kind).goals] for kind in fear.KINDS}

    assert 1 == len({tuple(names) for names in goal_sets.values()})
    assert ["KillEnemy", "Cover", "Patrol"] == goal_sets["soldier"]


def test_same_goal_gives_each_character_its_own_behaviour() -> None:
    plans = {}
    for kind in fear.KINDS:
        problem = fear.problem(kind)
        selection = select_goal(problem.brain, problem.start, problem.context)
        assert selection.goal is not None and selection.plan is not None
        plans[kind] = (selection.goal.name, selection.plan.names)

    assert {
        "soldier": ("KillEnemy", ("OpenDoor", "EnterWarehouse", "Attack")),
        "assassin": ("KillEnemy", ("Cloak", "StickToWall", "LungeFromWall")),
        "rat": ("Patrol", ("Patrol",)),
    } == plans


def test_rat_that_cannot_attack_falls_back_to_patrol() -> None:
    problem = fear.problem("rat")

    selection = select_goal(problem.brain, problem.start, problem.context)

    outcomes = {v.goal: v.outcome for v in selection.verdicts}
    assert "no plan" == outcomes["KillEnemy"]
    assert "chosen" == outcomes["Patrol"]


def test_soldier_with_an_empty_weapon_reloads_first() -> None:
    problem = fear.problem("soldier")
    start = fear.start_state("soldier", weapon_loaded=False)

    result = find_plan(start, problem.goal, problem.brain, problem.context)

    assert result.plan is not None
    assert 4.0 == result.plan.cost
    assert result.plan.names.index("Reload") < result.plan.names.index("Attack")


def test_soldier_replans_when_the_door_is_blocked() -> None:
    problem = fear.problem("soldier")
    first = problem.solve().plan
    assert first is not None
    assert "OpenDoor" == first.names[0]

    memory = problem.context.remember_failure("OpenDoor")
    assert not simulate(problem.start, first.steps, goal=first.goal, context=memory).ok
    second = find_plan(problem.start, problem.goal, problem.brain, memory).plan

    assert second is not None
    assert ("KickDoor", "EnterWarehouse", "Attack") == second.names
    memory = memory.remember_failure("KickDoor")
    third = find_plan(problem.start, problem.goal, problem.brain, memory).plan
    assert third is not None
    assert ("DiveThroughWindow", "AttackMelee") == third.names


def test_soldier_who_cannot_get_in_asks_another_agent_to_open_the_door() -> None:
    problem = fear.problem("soldier")
    memory = problem.context
    for action in ("OpenDoor", "KickDoor", "DiveThroughWindow"):
        memory = memory.remember_failure(action)

    result = plan_cooperatively(problem.start, problem.goal, problem.brain, memory)

    assert None is result.solo
    assert result.best is not None
    assert ["door_open(door-1) == true"] == [str(c) for c in result.best.request]
    assert ("Cooperate", "EnterWarehouse", "Attack") == result.best.plan.names


def test_cover_goal_binds_the_goto_to_the_cover_node() -> None:
    brain = fear.brain("soldier")
    memory = fear.FearMemory(threatened=True, cover_node="cover-2")

    selection = select_goal(brain, fear.start_state("soldier"), memory)

    assert selection.goal is not None and selection.plan is not None
    assert "Cover" == selection.goal.name
    assert ["Goto(node=cover-2)"] == [str(step) for step in selection.plan]


def test_unreachable_cover_node_falls_back_to_killing_the_enemy() -> None:
    memory = fear.FearMemory(threatened=True, cover_node="roof")

    selection = select_goal(fear.brain("soldier"), fear.start_state("soldier"), memory)

    assert selection.goal is not None
    assert "KillEnemy" == selection.goal.name


def test_unknown_character_kind_lists_the_known_ones() -> None:
    with pytest.raises(PlanningError, match="known kinds: soldier, assassin, rat"):
        fear.brain("ninja")


def test_no_context_means_the_default_memory() -> None:
    problem = fear.problem("soldier")

    plan = find_plan(problem.start, problem.goal, problem.brain).plan

    assert plan is not None
    assert ("OpenDoor", "EnterWarehouse", "Attack") == plan.names


def test_a_context_of_the_wrong_type_is_rejected() -> None:
    problem = fear.problem("soldier")

    with pytest.raises(PlanningError, match="needs a FearMemory"):
        find_plan(problem.start, problem.goal, problem.brain, context={"failed": []})
