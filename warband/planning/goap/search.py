"""The GOAP planner: a regressive A* search for the cheapest plan, and forward replay.

The planner searches backwards from the goal: a node is the set of conditions that must still
hold, an action is tried only if its effects satisfy one of them and contradict none, and the
node it leads to is the remaining conditions plus the action's preconditions (the search space is
:mod:`warband.planning.goap.regression`). The search is A* with an admissible, consistent
heuristic, so the first plan it returns is the cheapest; every plan is replayed forward from the
start state (:func:`simulate`) before it is returned, and a plan that does not execute is
discarded and the search continues.

The heuristic is h^max over the relaxed problem (:mod:`warband.planning.goap.heuristic`): it
adds up chains of actions, so a deep chain with many alternative producers is searched along the
chain instead of level by level, and a node needing a condition nothing can achieve is dropped.

Duplicate detection. Equal nodes are one node (the A* core keeps the cheapest path to each). Two
nodes are not equal when they differ only in conditions that already hold at the start, and a
search meets the same open conditions once per way of reaching them, each time with other
satisfied conditions to keep. Keying nodes on their open conditions alone would be unsound: a
satisfied condition still constrains the rest of the plan (no earlier step may undo it without
making it hold again), so ``{a, b}`` with ``b`` satisfied can cost more to reach than ``{a}``.
What is sound is subsumption. Nodes are ground (the bindings of every step are substituted into
the conditions it adds), so a node is a plain conjunction, and if node ``M`` is a subset of node
``N`` then every plan prefix that makes ``N`` hold makes ``M`` hold: ``M``'s best completion costs
no more than ``N``'s. So a node taken from the queue is dropped when an expanded node has the same
open conditions, a subset of its satisfied ones, and a path no dearer (Torralba and Hoffmann's
dominance pruning, with the subset order); the optimal cost is kept because the heuristic is
consistent and never larger on a subset. The check starts once a search has expanded
``_DOMINANCE_AFTER`` nodes: small searches end first and would only pay for it.

Cooperation. Boeda's cooperative planner asks a helper for tagged (``achievable_by_any_agent``)
conditions at a node of the exhausted solo search. Duplicate detection never drops a node for a
dominating node that lacks one of its tagged conditions (the tagged conditions in the difference
must be none), so every request that could be made at a dropped node can be made, with the same
conditions, at the node that dominated it, at no higher cost, and from a remaining node that is a
subset of the dropped one's: the list of cooperative plans is unchanged. The cooperative search
also counts tagged properties as free in the heuristic (``cooperative=True``), so the nodes that
only a helper can complete are still expanded rather than dropped as dead ends.

Everything here is pure and deterministic: the context object is passed through to the user's
functions untouched and nothing reads a clock or a global.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeAlias

from ...exceptions import PlanningError
from ..search import AStar, SearchStatus
from .explain import SearchTree, build_tree, tree_entries
from .model import Action, Brain, Goal, GoapPlan, GoapStep, Node
from .regression import Regression
from .state import (
    Condition,
    ConditionsLike,
    Key,
    StateValue,
    WorldState,
    as_conditions,
    is_variable,
)


@dataclass(frozen=True)
class Simulation:
    """The outcome of replaying steps forward from a state."""

    final: WorldState
    """The state after the last step that ran."""
    failed_step: int | None
    """Index of the first step that could not run, or None."""
    reason: str
    """Why the replay failed, or empty when it succeeded."""

    @property
    def ok(self) -> bool:
        """True when every step could run and the goal holds at the end."""
        return not self.reason


def simulate(
    start: WorldState,
    steps: Iterable[GoapStep],
    *,
    goal: Iterable[Condition] = (),
    context: Any = None,
) -> Simulation:
    """Replay ``steps`` from ``start``: each step's preconditions (and procedural check in
    ``context``) must hold when it runs, and ``goal`` must hold at the end.

    This is how a plan is checked before the planner returns it, and how an agent tells that
    its current plan broke (the world or its working memory changed) and it must replan.
    """
    values = start.to_dict()
    failed, reason = _replay(values, steps, goal, context)
    return Simulation(WorldState._trusted(values), failed, reason)


def _replay(
    values: dict[Key, StateValue],
    steps: Iterable[GoapStep],
    goal: Iterable[Condition],
    context: Any,
) -> tuple[int | None, str]:
    """:func:`simulate` on a plain dict, updated in place: the failed step's index and the
    reason, or ``(None, "")``. The planner replays every plan it returns and only needs to know
    whether it runs, so it skips building WorldStates (one per step used to re-sort every key).
    """
    for index, step in enumerate(steps):
        unmet = [str(c) for c in step.preconditions if not c.holds(values)]
        if unmet:
            return index, f"step {index} ({step}) needs {', '.join(unmet)}"
        check = step.action.check
        if check is not None and not check(context, step.bindings):
            return index, f"step {index} ({step}) fails its procedural check"
        for effect in step.effects:
            if effect.key.has_variable or is_variable(effect.value):
                # Let WorldState reject a variable with its usual message.
                WorldState([(effect.key, effect.value)])
            values[effect.key] = effect.value
    unmet = [str(c) for c in goal if not c.holds(values)]
    if unmet:
        return None, f"the goal does not hold at the end: {', '.join(unmet)}"
    return None, ""


@dataclass(frozen=True)
class PlanResult:
    """What a finished search produced."""

    status: SearchStatus
    """FOUND, NO_PLAN (provably none) or GAVE_UP (expansion limit reached)."""
    plan: GoapPlan | None
    """The cheapest plan, or None."""
    expansions: int
    """Nodes expanded in total."""
    tree: SearchTree | None = None
    """The search tree, when the search was asked to record it."""

    @property
    def found(self) -> bool:
        """True when a plan was found."""
        return self.plan is not None


GoalLike: TypeAlias = Goal | ConditionsLike
"""A :class:`Goal`, or just the conditions to make hold."""
ActionsLike: TypeAlias = Brain | Iterable[Action]
"""A :class:`Brain` (its actions are used) or the actions themselves."""


def goal_conditions(goal: GoalLike, context: Any = None) -> tuple[Condition, ...]:
    """The ground conditions of a goal, or of plain conditions given as a goal."""
    if isinstance(goal, Goal):
        return goal.ground(context)
    conditions = as_conditions(goal)
    for condition in conditions:
        if condition.variables:
            raise PlanningError(
                f"goal condition {condition} has a variable; plain goal conditions must be "
                "ground, or wrap them in a Goal with a bind(context) function"
            )
    return conditions


def actions_of(actions: ActionsLike) -> tuple[Action, ...]:
    """The action set of a brain, or the given actions as a tuple."""
    return actions.actions if isinstance(actions, Brain) else tuple(actions)


class _Replays:
    """The A* core's acceptance test: the plan to a goal node must replay forward.

    It reaches the core through a weak reference: the core holds this test, and a strong
    reference back (as a bound method of the search would be) makes every search a reference
    cycle that only the cyclic garbage collector frees, which costs each solve time.
    """

    __slots__ = ("context", "core", "goal", "start")

    def __init__(self, start: WorldState, goal: tuple[Condition, ...], context: Any) -> None:
        self.start = start
        self.goal = goal
        self.context = context
        self.core: weakref.ReferenceType[AStar[Node, GoapStep]] | None = None

    def __call__(self, node: Node) -> bool:
        core = self.core() if self.core is not None else None
        assert core is not None, "the core calls its acceptance test, so it is alive"
        steps = reversed(core.path(node))
        return not _replay(self.start.to_dict(), steps, self.goal, self.context)[1]


_DOMINANCE_AFTER = 32
"""Expansions before duplicate detection starts: most searches end sooner, and a check that
can only find something in a larger search would only cost them time (skipping it is sound)."""


class _Dominance:
    """Duplicate detection beyond equal nodes: a node taken from the queue is dropped when a
    node expanded before makes it redundant (see the module docstring). It reaches the core
    through a weak reference, like :class:`_Replays`.
    """

    __slots__ = ("buckets", "core", "regression")

    def __init__(self, regression: Regression) -> None:
        self.regression = regression
        self.buckets: dict[frozenset[Condition], list[tuple[frozenset[Condition], Node]]] = {}
        self.core: weakref.ReferenceType[AStar[Node, GoapStep]] | None = None

    def __call__(self, node: Node, g: float) -> bool:
        core = self.core() if self.core is not None else None
        assert core is not None, "the core calls its pruning test, so it is alive"
        if core.expansions < _DOMINANCE_AFTER:
            return False
        opened = self.regression.open_conditions(node)
        if len(opened) == len(node):
            # Nothing satisfied: no other node has the same open conditions and fewer
            # satisfied ones, so none can make this one redundant.
            return False
        records = core.records
        key = frozenset(opened)
        satisfied = node.difference(key)
        bare = records.get(key)
        if bare is not None and bare.expanded and bare.g <= g and not _tagged(satisfied):
            return True
        bucket = self.buckets.setdefault(key, [])
        for other_satisfied, other in bucket:
            if (
                other_satisfied <= satisfied
                and records[other].g <= g
                and not _tagged(satisfied - other_satisfied)
            ):
                return True
        bucket.append((satisfied, node))
        return False


def _tagged(conditions: frozenset[Condition]) -> bool:
    return any(condition.achievable_by_any_agent for condition in conditions)


class GoapSearch:
    """An interruptible regressive A* search for the cheapest plan (Pittman §3.6).

    ``step(budget)`` expands at most ``budget`` nodes and returns a :class:`SearchStatus`;
    call it again to resume. Once the status is not RUNNING, :attr:`result` holds the
    :class:`PlanResult`. ``run()`` steps to the end. The plan found is the same however the
    work is sliced. ``record_tree`` keeps the search tree for explanations (off by default).
    ``max_expansions`` bounds the total work; hitting it gives GAVE_UP. ``cooperative``
    counts tagged properties as free in the heuristic, so that an exhausted search holds every
    node where a helper could help (:class:`~warband.planning.CooperativeSearch`
    sets it). Building the search works out the heuristic for the goal, once per action set,
    goal and start values (later searches reuse it); ``step`` budgets count expansions only.
    """

    def __init__(
        self,
        start: WorldState,
        goal: GoalLike,
        actions: ActionsLike,
        context: Any = None,
        *,
        record_tree: bool = False,
        max_expansions: int | None = None,
        cooperative: bool = False,
    ) -> None:
        self.start = start
        self.goal = goal_conditions(goal, context)
        self.context = context
        self.regression = Regression(
            start, actions_of(actions), context, self.goal, helped=cooperative
        )
        self._record_tree = record_tree
        replays = _Replays(start, self.goal, context)
        dominance = _Dominance(self.regression)
        self.core: AStar[Node, GoapStep] = AStar(
            [(self.regression.root(self.goal), 0.0)],
            expand=self.regression.successors,
            heuristic=self.regression.heuristic,
            is_goal=self.regression.holds_at_start,
            accept=replays,
            max_expansions=max_expansions,
            prune=dominance,
        )
        replays.core = dominance.core = weakref.ref(self.core)
        self._result: PlanResult | None = None

    @property
    def expansions(self) -> int:
        """Nodes expanded so far."""
        return self.core.expansions

    @property
    def done(self) -> bool:
        """True once :attr:`result` is available."""
        return self._result is not None

    @property
    def result(self) -> PlanResult | None:
        """The result once the search is done, else None."""
        return self._result

    def step(self, budget: int) -> SearchStatus:
        """Expand up to ``budget`` nodes; RUNNING means call again."""
        if self._result is not None:
            return self._result.status
        status = self.core.step(budget)
        if status is not SearchStatus.RUNNING:
            self._result = self._finish(status)
        return status

    def run(self) -> PlanResult:
        """Search to the end and return the result."""
        while self._result is None:
            self.step(1 << 30)
        return self._result

    def plan_to(self, node: Node) -> GoapPlan:
        """The plan that the search path to ``node`` stands for, in execution order."""
        return GoapPlan(tuple(reversed(self.core.path(node))), self.goal)

    def _finish(self, status: SearchStatus) -> PlanResult:
        goal = self.core.goal if status is SearchStatus.FOUND else None
        plan = self.plan_to(goal) if goal is not None else None
        tree = None
        if self._record_tree:
            path = self.core.path_nodes(goal) if goal is not None else []
            tree = build_tree(self.goal, self.start, tree_entries(self.core), path)
        return PlanResult(status, plan, self.core.expansions, tree)


def find_plan(
    start: WorldState,
    goal: GoalLike,
    actions: ActionsLike,
    context: Any = None,
    *,
    record_tree: bool = False,
    max_expansions: int | None = None,
) -> PlanResult:
    """The cheapest plan from ``start`` to ``goal`` with ``actions``, searched in one go."""
    search = GoapSearch(
        start, goal, actions, context, record_tree=record_tree, max_expansions=max_expansions
    )
    return search.run()
