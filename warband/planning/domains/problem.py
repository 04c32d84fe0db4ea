"""The ready-made GOAP problem type the bundled domains build (tests and benchmarks use it)."""

from __future__ import annotations

from typing import Any, NamedTuple

from ..goap.model import Brain, Goal
from ..goap.search import GoapSearch, PlanResult
from ..goap.state import WorldState


class GoapProblem(NamedTuple):
    """A ready-made planning problem, as the bundled domains build them.

    Unpacks as ``start, brain, goal, optimal_cost, context``. ``optimal_cost`` is the known
    cost of the cheapest plan, or None when no plan exists.
    """

    start: WorldState
    brain: Brain
    goal: Goal
    optimal_cost: float | None
    context: Any = None

    def search(self, *, record_tree: bool = False, max_expansions: int | None = None) -> GoapSearch:
        """An interruptible search for this problem."""
        return GoapSearch(
            self.start,
            self.goal,
            self.brain,
            self.context,
            record_tree=record_tree,
            max_expansions=max_expansions,
        )

    def solve(self, *, record_tree: bool = False, max_expansions: int | None = None) -> PlanResult:
        """Search this problem to the end."""
        return self.search(record_tree=record_tree, max_expansions=max_expansions).run()
