"""Pittman's pirate demo: lawful buys, unlawful steals, no bottle brews, and replanning."""

from __future__ import annotations

import pytest

from warband.exceptions import PlanningError
from warband.planning import find_plan, simulate
from warband.planning.domains import pirate

from .test_goap_properties import forward_optimal_cost


@pytest.mark.parametrize("variant", pirate.VARIANTS)
def test_ready_made_situations_match_the_forward_oracle(variant: str) -> None:
    problem = pirate.problem(variant)

    result = problem.solve()

    expected = forward_optimal_cost(
        problem.start, problem.goal.conditions, problem.brain.actions, problem.context
    )
    assert expected == problem.optimal_cost
    assert expected == (None if result.plan is None else result.plan.cost)


def _names(variant: str) -> tuple[str, ...]:
    plan = pirate.problem(variant).solve().plan
    assert plan is not None
    return plan.names


def test_lawful_pirate_works_for_gold_and_buys_the_bottle() -> None:
    assert ("Goto", "WorkForGold", "Goto", "BuyRum", "DrinkRum") == _names("lawful")


def test_unlawful_pirate_steals_the_bottle() -> None:
    assert ("Goto", "StealRum", "DrinkRum") == _names("unlawful")


def test_lawful_pirate_never_steals_even_though_stealing_is_cheaper() -> None:
    problem = pirate.problem("lawful")
    assert problem.optimal_cost is not None
    assert pirate.problem("unlawful").optimal_cost < problem.optimal_cost  # type: ignore[operator]

    assert "StealRum" not in _names("lawful")


def test_with_the_bottle_removed_he_brews_his_own_rum() -> None:
    assert ("Goto", "CollectMolasses", "Goto", "BrewRum", "DrinkRum") == _names("no_bottle")


def test_with_neither_bottle_nor_molasses_there_is_no_plan() -> None:
    problem = pirate.problem("dry")

    assert None is problem.solve().plan
    assert None is problem.optimal_cost


def test_removing_the_bottle_mid_plan_breaks_the_plan_and_he_replans_from_the_tavern() -> None:
    problem = pirate.problem("unlawful")
    plan = problem.solve().plan
    assert plan is not None
    walked = problem.start.updated({"at(pirate)": "tavern"})
    removed = walked.updated({"bottle_in(tavern)": False})

    replay = simulate(removed, plan.steps[1:], goal=plan.goal)
    replanned = find_plan(removed, problem.goal, problem.brain)

    assert not replay.ok
    assert 0 == replay.failed_step
    assert replanned.plan is not None
    assert ("Goto", "CollectMolasses", "Goto", "BrewRum", "DrinkRum") == replanned.plan.names


def test_walking_cost_depends_on_the_destination() -> None:
    plan = pirate.problem("no_bottle").solve().plan
    assert plan is not None

    walks = [(str(step.bindings["place"]), step.cost) for step in plan if step.name == "Goto"]

    assert [("storehouse", 2.0), ("still", 3.0)] == walks


def test_unknown_situation_lists_the_known_ones() -> None:
    with pytest.raises(PlanningError, match="known situations: lawful, unlawful, no_bottle, dry"):
        pirate.problem("sober")
