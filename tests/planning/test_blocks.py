"""Tests of the blocks-world HTN domain and its problem generator: every plan, run by an
independent simulator below, reaches the goal in exactly the optimal number of actions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.exceptions import PlanningError
from warband.planning import FactDB, HtnPlanner, Task, format_domain, parse_domain
from warband.planning.domains import blocks


def _simulate(facts: FactDB, steps: tuple[Task, ...]) -> dict[str, str | None]:
    """Run the plan on a plain dict model, checking each action's preconditions."""
    on: dict[str, str | None] = {}
    for fact in facts.facts("on"):
        on[str(fact[1])] = str(fact[2])
    for fact in facts.facts("on_table"):
        on[str(fact[1])] = None
    held: str | None = None

    def clear(block: str) -> bool:
        return block != held and block not in on.values()

    for step in steps:
        name, args = step.name, [str(a) for a in step.args]
        if name == "!pickup":
            assert held is None and on[args[0]] is None and clear(args[0]), step
            held = args[0]
            del on[args[0]]
        elif name == "!unstack":
            assert held is None and on[args[0]] == args[1] and clear(args[0]), step
            held = args[0]
            del on[args[0]]
        elif name == "!putdown":
            assert held == args[0], step
            on[args[0]], held = None, None
        elif name == "!stack":
            assert held == args[0] and args[1] in on and clear(args[1]), step
            on[args[0]], held = args[1], None
        else:
            raise AssertionError(f"unexpected step {step}")
    assert held is None
    return on


def _goal(facts: FactDB) -> dict[str, str | None]:
    goal: dict[str, str | None] = {str(f[1]): str(f[2]) for f in facts.facts("goal_on")}
    goal.update({str(f[1]): None for f in facts.facts("goal_on_table")})
    return goal


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 25), st.integers(0, 10_000))
def test_every_plan_reaches_the_goal_in_the_optimal_number_of_actions(n: int, seed: int) -> None:
    problem = blocks.problem(n, seed)
    result = HtnPlanner(problem.domain).plan(problem.facts, problem.root)
    assert result.plan is not None, result.status
    assert _goal(problem.facts) == _simulate(problem.facts, result.plan.steps)
    assert problem.optimal_length == len(result.plan.steps)


def test_problems_are_deterministic_per_seed_and_differ_across_seeds() -> None:
    first, again, other = blocks.problem(12, 7), blocks.problem(12, 7), blocks.problem(12, 8)
    assert set(first.facts) == set(again.facts)
    assert first.optimal_length == again.optimal_length
    assert set(first.facts) != set(other.facts)


def test_a_problem_unpacks_into_domain_facts_root_and_optimum() -> None:
    domain, facts, root, optimal = blocks.problem(6, 1)
    assert "blocks" == domain.name
    assert blocks.ROOT == root
    assert 6 == len(facts.facts("block"))
    assert 0 == optimal % 2 and optimal <= 2 * 6


def test_the_optimum_is_the_lower_bound_of_two_actions_per_misplaced_block() -> None:
    problem = blocks.problem(15, 3)
    misplaced = [
        b for (_, b) in problem.facts.facts("block") if not blocks.is_done(problem.facts, str(b))
    ]
    assert 2 * len(misplaced) == problem.optimal_length


def test_a_block_is_done_only_when_everything_under_it_is_in_place() -> None:
    facts = FactDB(
        [
            ("on", "a", "b"),
            ("on_table", "b"),
            ("goal_on", "a", "b"),
            ("goal_on", "b", "c"),
            ("goal_on_table", "c"),
            ("on_table", "c"),
        ]
    )
    assert False is blocks.is_done(facts, "a")
    assert False is blocks.is_done(facts, "b")
    assert True is blocks.is_done(facts, "c")


def test_problems_need_at_least_one_block() -> None:
    with pytest.raises(PlanningError, match="at least 1 block"):
        blocks.problem(0, 1)


def test_the_python_built_domain_prints_as_text_that_parses_back_to_it() -> None:
    domain = blocks.domain()
    again = parse_domain(format_domain(domain), functions=domain.functions)
    assert domain.methods == again.methods
    assert domain.primitives == again.primitives


def test_is_done_follows_changes_to_the_facts_it_was_asked_about() -> None:
    facts = FactDB([("on", "a", "b"), ("on_table", "b"), ("goal_on", "a", "b")])
    facts.assert_fact("goal_on_table", "b")
    assert blocks.is_done(facts, "a")
    moved = facts.copy()
    moved.retract("on", "a", "b")
    assert not blocks.is_done(moved, "a")
    assert blocks.is_done(facts, "a")
    facts.retract("goal_on_table", "b")
    facts.assert_fact("goal_on", "b", "c")
    assert not blocks.is_done(facts, "a")
    assert not blocks.is_done(facts, "b")
