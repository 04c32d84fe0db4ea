"""GOAP goal selection: the most relevant goal that has a plan, with a superior's biases."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..search import SearchStatus
from .model import Brain, Goal, GoapPlan
from .search import find_plan
from .state import WorldState


@dataclass(frozen=True)
class GoalVerdict:
    """How goal selection treated one goal."""

    goal: str
    score: float
    """Relevancy plus the superior's bias."""
    outcome: str
    """"chosen", "no plan", "gave up", "already satisfied", "not relevant" or "not tried"."""


@dataclass(frozen=True)
class GoalSelection:
    """The goal an agent should pursue now, its plan, and why the others were passed over."""

    goal: Goal | None
    plan: GoapPlan | None
    score: float
    verdicts: tuple[GoalVerdict, ...]


def select_goal(
    brain: Brain,
    state: WorldState,
    context: Any = None,
    *,
    biases: Mapping[str, float] | None = None,
    max_expansions: int | None = None,
) -> GoalSelection:
    """Pick the most relevant goal that has a plan, falling back down the ranking (Orkin's rat
    that cannot attack falls back to Patrol).

    A goal's score is its relevancy plus the superior's bias for it (Pittman: recommended
    goals get a positive bias, discouraged ones a negative bias). Goals scoring 0 or less are
    not relevant; goals whose conditions already hold need no plan and are skipped. Ties keep
    the brain's goal order. ``max_expansions`` bounds each goal's search.
    """
    biases = dict(biases or {})
    for name in biases:
        brain.goal(name)
    scored = [(goal.relevance(context) + biases.get(goal.name, 0.0), goal) for goal in brain.goals]
    ranking = sorted(range(len(scored)), key=lambda i: (-scored[i][0], i))
    verdicts: list[GoalVerdict] = []
    chosen: tuple[Goal, GoapPlan, float] | None = None
    for index in ranking:
        score, goal = scored[index]
        if chosen is not None:
            skipped = "not relevant" if score <= 0 else "not tried"
            verdicts.append(GoalVerdict(goal.name, score, skipped))
            continue
        outcome = _try_goal(goal, score, brain, state, context, max_expansions)
        if isinstance(outcome, GoapPlan):
            chosen = (goal, outcome, score)
            outcome = "chosen"
        verdicts.append(GoalVerdict(goal.name, score, outcome))
    if chosen is None:
        return GoalSelection(None, None, 0.0, tuple(verdicts))
    return GoalSelection(chosen[0], chosen[1], chosen[2], tuple(verdicts))


def _try_goal(
    goal: Goal,
    score: float,
    brain: Brain,
    state: WorldState,
    context: Any,
    max_expansions: int | None,
) -> GoapPlan | str:
    if score <= 0:
        return "not relevant"
    if state.satisfies(goal.ground(context)):
        return "already satisfied"
    result = find_plan(state, goal, brain, context, max_expansions=max_expansions)
    if result.plan is not None:
        return result.plan
    return "gave up" if result.status is SearchStatus.GAVE_UP else "no plan"
