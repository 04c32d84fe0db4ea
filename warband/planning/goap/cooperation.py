"""Boeda's cooperative GOAP: find where another agent could help, and answer such requests.

Requester side (:class:`CooperativeSearch`, :func:`plan_cooperatively`): plan alone first. When
no solo plan exists, every node of that (exhausted) search holding conditions tagged
``achievable_by_any_agent`` is a cooperable node state (Boeda, Fig. 4). At each one a
cooperation action is added that makes some of those tagged conditions hold (another agent will
do it); the search then continues from what remains, alone, to the start state (Fig. 5). The
result lists the valid cooperative plans cheapest first, one per distinct request: the exact
conditions to ask another agent for, and what asking costs (``cooperation_cost``, a number or a
function of the requested conditions). A plan whose request asks for more than a cheaper-or-equal
plan's request is dropped: asking for more gains nothing.

Responder side (:func:`answer_request`): given the conditions of a RequestCooperation, plan for
them as a goal from the responder's own state and say whether it can help, with its plan.

Both are pure: deciding whether the responder is too busy, and all messaging, belong to the
agent loop.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from ...exceptions import PlanningError
from ..search import AStar, SearchStatus
from .explain import SearchTree, build_tree, tree_entries
from .model import Action, GoapPlan, GoapStep, Node
from .regression import regress
from .search import ActionsLike, GoalLike, GoapSearch, find_plan, simulate
from .state import (
    NO_BINDINGS,
    Condition,
    ConditionsLike,
    Effect,
    WorldState,
    as_conditions,
    sorted_conditions,
)

CooperationCost: TypeAlias = float | Callable[[tuple[Condition, ...]], float]
"""What a cooperation action costs: a number, or a function of the requested conditions."""

COOPERATION_ACTION = "Cooperate"
"""The name of the cooperation action in plans and explanations."""

_CoopNode: TypeAlias = tuple[Node, frozenset[Condition]]
"""A node after the cooperation action: what must still hold, and what was requested."""


@dataclass(frozen=True)
class CooperableNode:
    """A node of the solo search where another agent could help (Boeda, Fig. 4)."""

    conditions: tuple[Condition, ...]
    """Everything that must hold at this point of the plan."""
    cooperable: tuple[Condition, ...]
    """The conditions tagged achievable_by_any_agent among them."""
    cost_after: float
    """Cost of the requester's own actions from this node to the goal."""


@dataclass(frozen=True)
class CooperativePlan:
    """A plan with one cooperation step, and the conditions to ask another agent for."""

    plan: GoapPlan
    """All steps in execution order, the cooperation step included."""
    request: tuple[Condition, ...]
    """The exact conditions to put in the RequestCooperation."""
    request_cost: float
    """The cost charged for the cooperation step."""

    @property
    def cost(self) -> float:
        """Total cost, the cooperation step included."""
        return self.plan.cost

    @property
    def request_index(self) -> int:
        """Position of the cooperation step in :attr:`plan`."""
        return next(i for i, step in enumerate(self.plan.steps) if step.cooperation)

    @property
    def before(self) -> tuple[GoapStep, ...]:
        """The requester's steps before the helper's part."""
        return self.plan.steps[: self.request_index]

    @property
    def after(self) -> tuple[GoapStep, ...]:
        """The requester's steps once the requested conditions hold."""
        return self.plan.steps[self.request_index + 1 :]


@dataclass(frozen=True)
class CooperativePlanning:
    """What cooperative planning found."""

    status: SearchStatus
    """FOUND (a solo plan or cooperative plans), NO_PLAN, or GAVE_UP (expansion limit)."""
    solo: GoapPlan | None
    """The solo plan, when one exists (then no cooperation is needed)."""
    plans: tuple[CooperativePlan, ...]
    """Valid cooperative plans, cheapest first, one per distinct request."""
    cooperable_nodes: tuple[CooperableNode, ...]
    """The solo search's nodes where another agent could help."""
    expansions: int
    """Nodes expanded in both phases."""
    tree: SearchTree | None = None
    """The search tree (both phases), when asked to record it."""

    @property
    def best(self) -> CooperativePlan | None:
        """The cheapest cooperative plan, or None."""
        return self.plans[0] if self.plans else None


def cooperation_step(request: tuple[Condition, ...], cost: float) -> GoapStep:
    """The cooperation action for ``request``: no preconditions, its effects are the request."""
    action = Action(
        COOPERATION_ACTION,
        effects=[Effect(condition.key, condition.value) for condition in request],
        cost=cost,
        cooperation=True,
    )
    return GoapStep(action, NO_BINDINGS, (), action.effects, cost)


class CooperativeSearch:
    """Solo planning, then Boeda's cooperation planning, as one interruptible search.

    ``step(budget)`` spends at most ``budget`` node expansions across both phases, like
    :class:`~warband.planning.GoapSearch`; :attr:`result` is a :class:`CooperativePlanning`.
    ``max_request_size`` caps how many conditions one request may hold; ``max_plans`` stops
    once that many cooperative plans are certain to be the cheapest; ``max_expansions`` bounds
    the work of both phases together.
    """

    def __init__(
        self,
        start: WorldState,
        goal: GoalLike,
        actions: ActionsLike,
        context: Any = None,
        *,
        cooperation_cost: CooperationCost = 1.0,
        max_request_size: int | None = None,
        max_plans: int | None = None,
        record_tree: bool = False,
        max_expansions: int | None = None,
    ) -> None:
        if max_request_size is not None and max_request_size < 1:
            raise PlanningError(f"max_request_size must be >= 1 or None, got {max_request_size}")
        if max_plans is not None and max_plans < 1:
            raise PlanningError(f"max_plans must be >= 1 or None, got {max_plans}")
        self.solo = GoapSearch(
            start, goal, actions, context, max_expansions=max_expansions, cooperative=True
        )
        self._cooperation_cost = cooperation_cost
        self._max_request_size = max_request_size
        self._max_plans = max_plans
        self._record_tree = record_tree
        self._max_expansions = max_expansions
        self._core: AStar[_CoopNode, GoapStep] | None = None
        self._origins: dict[_CoopNode, tuple[Node, GoapStep]] = {}
        self._cooperable: list[CooperableNode] = []
        self._found: dict[frozenset[Condition], tuple[CooperativePlan, _CoopNode]] = {}
        self._result: CooperativePlanning | None = None

    @property
    def expansions(self) -> int:
        """Nodes expanded so far, both phases."""
        return self.solo.expansions + (self._core.expansions if self._core else 0)

    @property
    def done(self) -> bool:
        """True once :attr:`result` is available."""
        return self._result is not None

    @property
    def result(self) -> CooperativePlanning | None:
        """The result once the search is done, else None."""
        return self._result

    def run(self) -> CooperativePlanning:
        """Search to the end and return the result."""
        while self._result is None:
            self.step(1 << 30)
        return self._result

    def step(self, budget: int) -> SearchStatus:
        """Expand up to ``budget`` nodes; RUNNING means call again."""
        if budget < 1:
            raise PlanningError(f"a search step needs a budget of at least 1, got {budget}")
        if self._result is not None:
            return self._result.status
        if self._core is None:
            before = self.solo.expansions
            status = self.solo.step(budget)
            budget -= self.solo.expansions - before
            if status is SearchStatus.RUNNING:
                return status
            if status is SearchStatus.FOUND:
                return self._finish(status)
            self._core = self._cooperation_core()
            if budget < 1:
                return SearchStatus.RUNNING
        return self._step_cooperation(budget)

    def _cooperation_core(self) -> AStar[_CoopNode, GoapStep]:
        """Phase two: one root per (cooperable node, request), then solo search from each."""
        solo_core = self.solo.core
        roots: dict[_CoopNode, float] = {}
        for node in solo_core.expanded:
            tagged = sorted_conditions(c for c in node if c.achievable_by_any_agent)
            if not tagged:
                continue
            g = solo_core.records[node].g
            self._cooperable.append(CooperableNode(sorted_conditions(node), tagged, g))
            for request in self._requests(tagged):
                step = cooperation_step(request, self._request_cost(request))
                remaining = regress(node, step)
                if remaining is None:
                    continue
                root = (remaining, frozenset(request))
                if root not in roots or g + step.cost < roots[root]:
                    roots[root] = g + step.cost
                    self._origins[root] = (node, step)
        spent = self.solo.expansions
        limit = None if self._max_expansions is None else max(0, self._max_expansions - spent)
        regression = self.solo.regression
        return AStar(
            roots.items(),
            expand=self._expand,
            heuristic=lambda node: regression.heuristic(node[0]),
            is_goal=lambda node: node[1] not in self._found and regression.holds_at_start(node[0]),
            accept=self._executes,
            max_expansions=limit,
        )

    def _requests(self, tagged: tuple[Condition, ...]) -> list[tuple[Condition, ...]]:
        largest = len(tagged) if self._max_request_size is None else self._max_request_size
        sizes = range(1, min(largest, len(tagged)) + 1)
        return [combo for size in sizes for combo in itertools.combinations(tagged, size)]

    def _request_cost(self, request: tuple[Condition, ...]) -> float:
        cost = self._cooperation_cost
        value = float(cost(request) if callable(cost) else cost)
        if value < 0:
            raise PlanningError(f"cooperation cost for {request} is {value}; it must be >= 0")
        return value

    def _expand(self, node: _CoopNode) -> list[tuple[GoapStep, _CoopNode, float]]:
        conditions, request = node
        if request in self._found:
            return []
        successors = self.solo.regression.successors(conditions)
        return [(step, (child, request), cost) for step, child, cost in successors]

    def _steps(self, node: _CoopNode) -> list[GoapStep]:
        """All steps for a phase-two node, in execution order."""
        assert self._core is not None
        root = self._core.path_nodes(node)[0]
        solo_node, cooperation = self._origins[root]
        backwards = [*self.solo.core.path(solo_node), cooperation, *self._core.path(node)]
        return list(reversed(backwards))

    def _executes(self, node: _CoopNode) -> bool:
        search = self.solo
        steps = self._steps(node)
        return simulate(search.start, steps, goal=search.goal, context=search.context).ok

    def _step_cooperation(self, budget: int) -> SearchStatus:
        core = self._core
        assert core is not None
        while budget > 0:
            before = core.expansions
            status = core.step(budget)
            budget -= core.expansions - before
            if status is SearchStatus.FOUND and core.goal is not None:
                self._record(core.goal)
                if self._enough(core):
                    return self._finish(SearchStatus.FOUND)
            elif status is not SearchStatus.RUNNING:
                return self._finish(status)
        return SearchStatus.RUNNING

    def _record(self, node: _CoopNode) -> None:
        steps = tuple(self._steps(node))
        plan = GoapPlan(steps, self.solo.goal)
        cooperation = next(step for step in steps if step.cooperation)
        request = sorted_conditions(node[1])
        self._found[node[1]] = (CooperativePlan(plan, request, cooperation.cost), node)

    def _enough(self, core: AStar[_CoopNode, GoapStep]) -> bool:
        """True when ``max_plans`` plans are found and nothing cheaper can still come."""
        if self._max_plans is None:
            return False
        plans = self._kept()
        if len(plans) < self._max_plans:
            return False
        next_f = core.peek_f()
        return next_f is None or next_f > plans[self._max_plans - 1].cost

    def _kept(self) -> list[CooperativePlan]:
        """Found plans, cheapest first, without those that ask for more at no lower cost."""
        found = sorted((entry[0] for entry in self._found.values()), key=lambda plan: plan.cost)
        return [
            plan
            for plan in found
            if not any(
                other is not plan
                and set(other.request) < set(plan.request)
                and other.cost <= plan.cost
                for other in found
            )
        ]

    def _finish(self, status: SearchStatus) -> SearchStatus:
        solo_result = self.solo.result
        solo = solo_result.plan if solo_result is not None else None
        plans: tuple[CooperativePlan, ...] = ()
        if solo is None:
            plans = tuple(self._kept())[: self._max_plans]
            if plans:
                status = SearchStatus.FOUND
            elif SearchStatus.GAVE_UP in (status, self.solo.core.status):
                status = SearchStatus.GAVE_UP
            else:
                status = SearchStatus.NO_PLAN
        tree = self._tree(plans) if self._record_tree else None
        cooperable = tuple(self._cooperable)
        self._result = CooperativePlanning(status, solo, plans, cooperable, self.expansions, tree)
        return status

    def _tree(self, plans: tuple[CooperativePlan, ...]) -> SearchTree:
        solo_core = self.solo.core
        entries = tree_entries(solo_core)
        path: list[Any] = []
        if self._core is None:
            if solo_core.goal is not None:
                path = list(solo_core.path_nodes(solo_core.goal))
        else:
            entries += tree_entries(
                self._core, conditions_of=lambda node: node[0], origins=self._origins
            )
            if plans:
                node = self._found[frozenset(plans[0].request)][1]
                phase_two = self._core.path_nodes(node)
                solo_node = self._origins[phase_two[0]][0]
                path = [*solo_core.path_nodes(solo_node), *phase_two]
        return build_tree(self.solo.goal, self.solo.start, entries, path)


def plan_cooperatively(
    start: WorldState,
    goal: GoalLike,
    actions: ActionsLike,
    context: Any = None,
    *,
    cooperation_cost: CooperationCost = 1.0,
    max_request_size: int | None = None,
    max_plans: int | None = None,
    record_tree: bool = False,
    max_expansions: int | None = None,
) -> CooperativePlanning:
    """Plan alone if possible, else list the cooperative plans (see :class:`CooperativeSearch`)."""
    return CooperativeSearch(
        start,
        goal,
        actions,
        context,
        cooperation_cost=cooperation_cost,
        max_request_size=max_request_size,
        max_plans=max_plans,
        record_tree=record_tree,
        max_expansions=max_expansions,
    ).run()


@dataclass(frozen=True)
class CooperationAnswer:
    """The responder's answer to a RequestCooperation."""

    request: tuple[Condition, ...]
    """The conditions that were asked for."""
    plan: GoapPlan | None
    """The responder's plan to make them hold, or None when it cannot."""
    status: SearchStatus
    """FOUND, NO_PLAN, or GAVE_UP when the expansion limit cut the search short."""

    @property
    def can_help(self) -> bool:
        """True when the responder has a plan for every requested condition."""
        return self.plan is not None

    @property
    def cost(self) -> float | None:
        """The responder's plan cost, or None."""
        return None if self.plan is None else self.plan.cost


def answer_request(
    request: ConditionsLike,
    start: WorldState,
    actions: ActionsLike,
    context: Any = None,
    *,
    max_expansions: int | None = None,
) -> CooperationAnswer:
    """Plan for the requested conditions as a goal, from the responder's own ``start`` state.

    Conditions may be Condition objects, their text (``"bars_open(cell) == true"``) or a
    ``{key: value}`` mapping. Conditions that already hold need no action.
    """
    conditions = as_conditions(request)
    if not conditions:
        raise PlanningError("a cooperation request needs at least one condition")
    result = find_plan(start, conditions, actions, context, max_expansions=max_expansions)
    return CooperationAnswer(conditions, result.plan, result.status)
