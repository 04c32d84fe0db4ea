"""The synthetic GOAP family: seeded, sized as asked, with a known optimal cost."""

from __future__ import annotations

import pytest

from warband.exceptions import PlanningError
from warband.planning import GoapSearch, SearchStatus, simulate
from warband.planning.domains import synthetic

from .test_goap_properties import forward_optimal_cost


def test_same_arguments_give_the_same_problem() -> None:
    first = synthetic.problem(depth=6, distractors=4, seed=7)
    second = synthetic.problem(depth=6, distractors=4, seed=7)

    assert first.start == second.start
    assert [a.name for a in first.brain.actions] == [a.name for a in second.brain.actions]
    assert first.optimal_cost == second.optimal_cost


def test_different_seeds_give_different_problems() -> None:
    names = {
        tuple(a.name for a in synthetic.problem(depth=6, distractors=4, seed=s).brain.actions)
        for s in range(5)
    }

    assert 5 == len(names)


@pytest.mark.parametrize(("depth", "distractors"), [(1, 0), (2, 2), (3, 3), (4, 2)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_known_optimal_cost_matches_the_forward_oracle(
    depth: int, distractors: int, seed: int
) -> None:
    problem = synthetic.problem(depth, distractors, seed)

    expected = forward_optimal_cost(problem.start, problem.goal.conditions, problem.brain.actions)

    assert expected == problem.optimal_cost


@pytest.mark.parametrize("depth", [4, 8, 16])
@pytest.mark.parametrize("distractors", [2, 5, 8])
def test_planner_finds_the_known_optimal_cost_across_the_benchmark_range(
    depth: int, distractors: int
) -> None:
    problem = synthetic.problem(depth, distractors, seed=depth * 10 + distractors)

    result = problem.solve()

    assert result.plan is not None
    assert problem.optimal_cost == result.plan.cost
    assert simulate(problem.start, result.plan.steps, goal=result.plan.goal).ok
    assert [f"Advance{i}" for i in range(1, depth + 1)] == list(result.plan.names)


def test_each_stage_gets_the_asked_number_of_distractors() -> None:
    problem = synthetic.problem(depth=8, distractors=6, seed=3)
    names = [a.name for a in problem.brain.actions]

    ways_in = [n for n in names if not n.startswith(("Advance", "Prepare"))]

    assert 8 * 6 == len(ways_in)
    assert 8 == sum(n.startswith("Advance") for n in names)


def test_all_distractor_kinds_occur_including_the_clobbering_trap() -> None:
    problem = synthetic.problem(depth=12, distractors=8, seed=5)
    prefixes = {"Pricier", "DeadEnd", "Clobber", "Shortcut", "Detour"}

    found = {p for p in prefixes for a in problem.brain.actions if a.name.startswith(p)}

    assert prefixes == found


def test_stepwise_search_finds_the_same_plan() -> None:
    problem = synthetic.problem(depth=8, distractors=4, seed=11)
    search = GoapSearch(problem.start, problem.goal, problem.brain)
    while search.step(1) is SearchStatus.RUNNING:
        pass

    assert search.result is not None and search.result.plan is not None
    assert problem.solve().plan == search.result.plan


@pytest.mark.parametrize(("depth", "distractors"), [(0, 2), (4, -1)])
def test_bad_sizes_are_rejected(depth: int, distractors: int) -> None:
    with pytest.raises(PlanningError, match="must be at least"):
        synthetic.problem(depth, distractors, seed=0)
