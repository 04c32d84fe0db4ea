"""Actions whose effects set a property to a ``?variable``, next to ground effects.

An action may be chosen for any of its effects, so one whose variable only some effects mention
would leave it unbound when chosen for another (issue 9, item 2: such an action used to be
silently useless for its ground effects). It is refused when built unless a ``bind`` names the
values; with one, the planner uses it for every effect and agrees with an exhaustive search.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warband.exceptions import PlanningError
from warband.planning import Action, WorldState, find_plan
from warband.planning.goap.state import Bindings, Effect, Key, StateValue, eq

from .test_goap_properties import (
    COSTS,
    DOMAINS,
    Problem,
    check_against_oracle,
    conditions,
    problems,
)


def test_an_effect_variable_that_nothing_binds_is_refused_when_the_action_is_built() -> None:
    with pytest.raises(PlanningError) as refused:
        Action("Goto0", effects={"f1": False, "pos": "?n"}, cost=1)

    message = str(refused.value)
    assert "'Goto0'" in message
    assert "f1 = false" in message
    assert "?n" in message
    assert "bind(context, bindings)" in message


def test_the_issue_example_with_a_bind_is_a_one_step_plan_for_its_ground_effect() -> None:
    goto = Action(
        "Goto0",
        effects={"f1": False, "pos": "?n"},
        cost=1,
        bind=lambda context, bindings: [{"n": "n0"}, {"n": "n1"}],
    )

    result = find_plan(WorldState({"pos": "n0"}), [eq("f1", False)], [goto])

    assert result.plan is not None
    assert ("Goto0",) == result.plan.names
    assert 1.0 == result.plan.cost


def test_with_a_bind_the_variable_effect_still_meets_the_condition_it_is_chosen_for() -> None:
    goto = Action(
        "Goto0",
        effects={"f1": False, "pos": "?n"},
        bind=lambda context, bindings: [{"n": "n0"}, {"n": "n1"}],
    )

    result = find_plan(WorldState({"pos": "n0"}), [eq("pos", "n1")], [goto])

    assert result.plan is not None
    assert Bindings({"n": "n1"}) == result.plan.steps[0].bindings


def test_every_effect_mentioning_the_variable_needs_no_bind() -> None:
    move = Action("Move", effects={"at(me)": "?to", "visited(?to)": True})

    result = find_plan(WorldState({"at(me)": "a"}), [eq("visited(b)", True)], [move])

    assert result.plan is not None
    assert WorldState({"at(me)": "b", "visited(b)": True}) == WorldState(
        (e.key, e.value) for e in result.plan.steps[0].effects
    )


class _Values:
    """A ``bind`` that yields fixed values for ``?v`` (a class, so a failing example prints)."""

    def __init__(self, values: Iterable[StateValue]) -> None:
        self.values = tuple(values)

    def __call__(self, context: Any, bindings: Bindings) -> list[Mapping[str, StateValue]]:
        return [{"v": value} for value in self.values]

    def __repr__(self) -> str:
        return f"bind{self.values!r}"


@st.composite
def variable_actions(draw: st.DrawFn, first: int, count: int) -> list[Action]:
    """Actions setting one property to ``?v`` (values from a ``bind``) and 0-2 others to
    ground values."""
    result = []
    for index in range(first, first + count):
        keys = draw(st.lists(st.sampled_from(sorted(DOMAINS)), min_size=1, max_size=3, unique=True))
        values = draw(st.lists(st.sampled_from(DOMAINS[keys[0]]), min_size=1, unique=True))
        effects = [Effect(Key.parse(keys[0]), "?v")]
        effects += [Effect(Key.parse(k), draw(st.sampled_from(DOMAINS[k]))) for k in keys[1:]]
        result.append(
            Action(
                f"Set{index}",
                preconditions=draw(conditions(frozenset(), (0, 2))),
                effects=effects,
                cost=draw(st.sampled_from(COSTS)),
                bind=_Values(values),
            )
        )
    return result


@st.composite
def variable_problems(draw: st.DrawFn) -> Problem:
    problem = draw(problems())
    added = draw(variable_actions(len(problem.actions), draw(st.integers(1, 3))))
    mixed = draw(st.permutations([*problem.actions, *added]))
    return Problem(problem.start, problem.goal, mixed, problem.context, problem.public)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variable_problems())
def test_with_variable_effects_the_planner_costs_what_an_exhaustive_search_finds(
    problem: Problem,
) -> None:
    check_against_oracle(problem)
