"""Goal-oriented action planning: actions, goals, brains, plans, the regressive A* planner, goal
choice.

The model follows Orkin (F.E.A.R.) and Pittman: an :class:`Action` has a cost, preconditions,
effects, an optional procedural precondition evaluated during search, and ``?variables`` bound
from the condition it is chosen to satisfy (Orkin's Goto satisfies ``at(me) == ?node`` for
whichever node is asked for). A :class:`Goal` is a set of desired conditions plus a relevancy in
0..1; a superior can bias goals by name. A :class:`Brain` is a goal set plus an action set, so
characters share goals and differ in how they satisfy them.

The planner searches backwards from the goal: a node is the set of conditions that must still
hold, an action is tried only if its effects satisfy one of them and contradict none, and the
node it leads to is the remaining conditions plus the action's preconditions. The search is A*
with an admissible, consistent heuristic, so the first plan it returns is the cheapest; every
plan is replayed forward from the start state before it is returned, and a plan that does not
execute is discarded and the search continues.

The search space (ground steps and regressing through them) is in
:mod:`warband.planning.goap_regression`; its public names are re-exported here.

Everything here is pure and deterministic: the context object is passed through to the user's
functions untouched and nothing reads a clock or a global.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple, TypeAlias

from ..exceptions import PlanningError
from .goap_explain import SearchTree, SearchTreeNode
from .goap_regression import GoapStep as GoapStep
from .goap_regression import Regression as Regression
from .goap_regression import _as_dict
from .goap_regression import regress as regress
from .goap_regression import root_node as root_node
from .search import AStar, SearchStatus
from .state import (
    NO_BINDINGS,
    Bindings,
    Condition,
    ConditionsLike,
    Effect,
    EffectsLike,
    Key,
    KeyLike,
    StateValue,
    WorldState,
    as_conditions,
    as_effects,
    is_variable,
    sorted_conditions,
)

CostFunction: TypeAlias = Callable[[Any, Bindings], float]
"""``cost(context, bindings) -> float``: an action's cost once its variables are bound."""
CheckFunction: TypeAlias = Callable[[Any, Bindings], bool]
"""``check(context, bindings) -> bool``: a procedural precondition, evaluated during search."""
BindFunction: TypeAlias = Callable[[Any, Bindings], Iterable[Mapping[str, StateValue]]]
"""``bind(context, bindings)``: extra bindings for variables the open condition leaves free."""
RelevancyFunction: TypeAlias = Callable[[Any], float]
"""``relevancy(context) -> float`` in 0..1."""
GoalBindFunction: TypeAlias = Callable[[Any], Mapping[str, StateValue]]
"""``bind(context)``: values for the ``?variables`` in a goal's conditions."""

Node: TypeAlias = frozenset[Condition]
"""A search node: the (normalised) conditions that must still hold."""


def _known(kind: str, names: Iterable[str]) -> str:
    listed = ", ".join(names)
    return f"known {kind}: {listed}" if listed else f"no {kind} are defined"


@dataclass(frozen=True, init=False, eq=False)
class Action:
    """A GOAP action. Compared by identity; build each once and share it between brains.

    ``cost`` is a number or ``cost(context, bindings)``; a cost function must never return
    less than ``min_cost`` (default 0), which keeps the heuristic admissible. ``check(context,
    bindings)`` is a procedural precondition (Orkin): the action is only used when it returns
    True. Variables (``?node``) are bound by unifying one effect with the open condition the
    action is chosen to satisfy, so some effect must mention every variable the action uses,
    unless ``bind(context, bindings)`` supplies the rest (one successor per mapping it yields).
    A ``!=`` condition fixes no value, so an effect ``key = ?var`` chosen for it tries every
    value the problem mentions for that property (start state, goal, action conditions and
    effects) that the condition accepts; give a ``bind`` to choose the values yourself.
    ``any_agent`` lists precondition keys to tag ``achievable_by_any_agent``.
    """

    name: str
    preconditions: tuple[Condition, ...]
    effects: tuple[Effect, ...]
    cost: float | CostFunction
    min_cost: float
    check: CheckFunction | None
    bind: BindFunction | None
    cooperation: bool

    def __init__(
        self,
        name: str,
        *,
        effects: EffectsLike,
        preconditions: ConditionsLike = (),
        cost: float | CostFunction = 1.0,
        min_cost: float | None = None,
        check: CheckFunction | None = None,
        bind: BindFunction | None = None,
        any_agent: Iterable[KeyLike] = (),
        cooperation: bool = False,
    ) -> None:
        set_field = object.__setattr__
        set_field(self, "name", name)
        set_field(self, "preconditions", as_conditions(preconditions, any_agent=any_agent))
        set_field(self, "effects", as_effects(effects))
        set_field(self, "cost", cost)
        set_field(self, "min_cost", self._lower_bound(cost, min_cost))
        set_field(self, "check", check)
        set_field(self, "bind", bind)
        set_field(self, "cooperation", cooperation)
        self._validate()

    def _lower_bound(self, cost: float | CostFunction, min_cost: float | None) -> float:
        if callable(cost):
            bound = 0.0 if min_cost is None else float(min_cost)
        else:
            if not math.isfinite(cost) or cost < 0:
                raise PlanningError(f"action {self.name!r} has cost {cost}; use a number >= 0")
            bound = float(cost) if min_cost is None else float(min_cost)
            if bound > cost:
                raise PlanningError(
                    f"action {self.name!r} declares min_cost {bound} above its cost {cost}"
                )
        if not math.isfinite(bound) or bound < 0:
            raise PlanningError(f"action {self.name!r} has min_cost {bound}; use a number >= 0")
        return bound

    def _validate(self) -> None:
        if not self.name:
            raise PlanningError("an action needs a non-empty name")
        if not self.effects:
            raise PlanningError(
                f"action {self.name!r} has no effects; the planner only uses actions whose "
                "effects satisfy an open condition, so give it at least one"
            )
        keys = [effect.key for effect in self.effects]
        if len(set(keys)) != len(keys):
            raise PlanningError(f"action {self.name!r} sets the same property twice in its effects")
        used = self.variables
        if used and self.bind is None and not any(e.variables >= used for e in self.effects):
            names = ", ".join(f"?{v}" for v in sorted(used))
            raise PlanningError(
                f"action {self.name!r} uses {names} but no single effect mentions all of them, "
                "so they cannot be bound from the condition it satisfies; add a "
                "bind(context, bindings) function that supplies the others"
            )

    @cached_property
    def variables(self) -> frozenset[str]:
        """Every variable name (without ``?``) in the preconditions and effects."""
        found: set[str] = set()
        for condition in self.preconditions:
            found |= condition.variables
        for effect in self.effects:
            found |= effect.variables
        return frozenset(found)

    def __repr__(self) -> str:
        return f"Action({self.name!r})"


@dataclass(frozen=True)
class GoapPlan:
    """A sequence of steps, in execution order, that makes ``goal`` hold."""

    steps: tuple[GoapStep, ...]
    goal: tuple[Condition, ...]

    @property
    def cost(self) -> float:
        """Sum of the step costs."""
        return sum(step.cost for step in self.steps)

    @property
    def names(self) -> tuple[str, ...]:
        """The action names, in execution order."""
        return tuple(step.name for step in self.steps)

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self) -> Iterator[GoapStep]:
        return iter(self.steps)

    def __str__(self) -> str:
        body = " -> ".join(str(step) for step in self.steps) or "(nothing to do)"
        return f"{body} (cost {self.cost:g})"


@dataclass(frozen=True, init=False, eq=False)
class Goal:
    """A goal: conditions to make hold, and how relevant it is in a context (0..1).

    ``relevancy`` is a constant or ``relevancy(context)``. Conditions may use ``?variables``;
    ``bind(context)`` gives their values (Orkin's Cover goal names the node to go to).
    ``any_agent`` lists condition keys to tag ``achievable_by_any_agent``.
    """

    name: str
    conditions: tuple[Condition, ...]
    relevancy: float | RelevancyFunction
    bind: GoalBindFunction | None

    def __init__(
        self,
        name: str,
        conditions: ConditionsLike,
        *,
        relevancy: float | RelevancyFunction = 1.0,
        bind: GoalBindFunction | None = None,
        any_agent: Iterable[KeyLike] = (),
    ) -> None:
        if not name:
            raise PlanningError("a goal needs a non-empty name")
        set_field = object.__setattr__
        set_field(self, "name", name)
        set_field(self, "conditions", as_conditions(conditions, any_agent=any_agent))
        set_field(self, "relevancy", relevancy)
        set_field(self, "bind", bind)
        if not self.conditions:
            raise PlanningError(f"goal {name!r} has no conditions; say what should hold")

    def relevance(self, context: Any = None) -> float:
        """The goal's relevancy in ``context``; raises PlanningError outside 0..1."""
        value = self.relevancy(context) if callable(self.relevancy) else self.relevancy
        if not 0.0 <= value <= 1.0:
            raise PlanningError(
                f"relevancy of goal {self.name!r} is {value}; relevancy must lie in 0..1 "
                "(superior biases are added on top by select_goal)"
            )
        return float(value)

    def ground(self, context: Any = None) -> tuple[Condition, ...]:
        """The conditions with their variables bound; raises PlanningError if any stay free."""
        if self.bind is None and self._ground_already:
            return self.conditions
        bindings = Bindings(self.bind(context)) if self.bind is not None else NO_BINDINGS
        grounded = tuple(condition.substitute(bindings) for condition in self.conditions)
        for condition in grounded:
            if condition.variables:
                free = ", ".join(f"?{v}" for v in sorted(condition.variables))
                raise PlanningError(
                    f"goal {self.name!r}: condition {condition} has unbound {free}; "
                    "give the goal a bind(context) that returns a value for it"
                )
        return grounded

    @cached_property
    def _ground_already(self) -> bool:
        # Most goals have no variables: grounding them returns the conditions unchanged, so
        # planning skips substituting and re-checking them on every search.
        return not any(condition.variables for condition in self.conditions)

    def __repr__(self) -> str:
        return f"Goal({self.name!r})"


@dataclass(frozen=True, init=False, eq=False)
class Brain:
    """An agent brain (Orkin's goal set + action set): what it wants and what it can do."""

    name: str
    goals: tuple[Goal, ...]
    actions: tuple[Action, ...]

    def __init__(self, name: str, goals: Iterable[Goal] = (), actions: Iterable[Action] = ()):
        set_field = object.__setattr__
        set_field(self, "name", name)
        set_field(self, "goals", tuple(goals))
        set_field(self, "actions", tuple(actions))
        for kind, items in (("goal", self.goals), ("action", self.actions)):
            names = [item.name for item in items]
            duplicates = sorted({n for n in names if names.count(n) > 1})
            if duplicates:
                raise PlanningError(
                    f"brain {name!r} has more than one {kind} named {', '.join(duplicates)}; "
                    f"{kind} names must be unique within a brain"
                )

    def goal(self, name: str) -> Goal:
        """The goal called ``name``; raises PlanningError listing the known goals."""
        for goal in self.goals:
            if goal.name == name:
                return goal
        known = _known("goals", (g.name for g in self.goals))
        raise PlanningError(f"unknown goal {name!r} in brain {self.name!r}; {known}")

    def action(self, name: str) -> Action:
        """The action called ``name``; raises PlanningError listing the known actions."""
        for action in self.actions:
            if action.name == name:
                return action
        known = _known("actions", (a.name for a in self.actions))
        raise PlanningError(f"unknown action {name!r} in brain {self.name!r}; {known}")

    def without_actions(self, *names: str) -> Brain:
        """A copy of this brain lacking the named actions (each must exist)."""
        dropped = {self.action(name).name for name in names}
        kept = [action for action in self.actions if action.name not in dropped]
        return Brain(self.name, self.goals, kept)

    def __repr__(self) -> str:
        return f"Brain({self.name!r})"


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
    values = _as_dict(start)
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


def achieved_by(step: GoapStep, parent: Iterable[Condition]) -> tuple[Condition, ...]:
    """The conditions of ``parent`` that ``step``'s effects satisfy."""
    assigned = {effect.key: effect.value for effect in step.effects}
    return sorted_conditions(c for c in parent if c.key in assigned and c.accepts(assigned[c.key]))


@dataclass(frozen=True)
class TreeEntry:
    """One expanded node, as the tree builder needs it."""

    node: Hashable
    conditions: Node
    parent: Hashable | None
    step: GoapStep | None
    g: float
    h: float


def build_tree(
    goal: tuple[Condition, ...],
    start: WorldState,
    entries: Sequence[TreeEntry],
    path: Sequence[Hashable],
) -> SearchTree:
    """Number the expanded nodes in expansion order and mark the ones on ``path``."""
    ids = {entry.node: index for index, entry in enumerate(entries)}
    conditions = {entry.node: entry.conditions for entry in entries}
    on_path = set(path)
    nodes = []
    for index, entry in enumerate(entries):
        parent_conditions = conditions.get(entry.parent, frozenset())
        ordered = sorted_conditions(entry.conditions)
        nodes.append(
            SearchTreeNode(
                id=index,
                parent=None if entry.parent is None else ids[entry.parent],
                step=entry.step,
                achieved=achieved_by(entry.step, parent_conditions) if entry.step else (),
                satisfied=tuple(c for c in ordered if c.holds(start)),
                open=tuple(c for c in ordered if not c.holds(start)),
                g=entry.g,
                h=entry.h,
                on_path=entry.node in on_path,
            )
        )
    return SearchTree(goal=goal, nodes=tuple(nodes), path=tuple(ids[n] for n in path if n in ids))


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
        return not _replay(_as_dict(self.start), steps, self.goal, self.context)[1]


class GoapSearch:
    """An interruptible regressive A* search for the cheapest plan (Pittman §3.6).

    ``step(budget)`` expands at most ``budget`` nodes and returns a :class:`SearchStatus`;
    call it again to resume. Once the status is not RUNNING, :attr:`result` holds the
    :class:`PlanResult`. ``run()`` steps to the end. The plan found is the same however the
    work is sliced. ``record_tree`` keeps the search tree for explanations (off by default).
    ``max_expansions`` bounds the total work; hitting it gives GAVE_UP.
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
    ) -> None:
        self.start = start
        self.goal = goal_conditions(goal, context)
        self.context = context
        self.regression = Regression(start, actions_of(actions), context, self.goal)
        self._record_tree = record_tree
        replays = _Replays(start, self.goal, context)
        self.core: AStar[Node, GoapStep] = AStar(
            [(self.regression._root(self.goal), 0.0)],
            expand=self.regression.successors,
            heuristic=self.regression.heuristic,
            is_goal=self.regression.holds_at_start,
            accept=replays,
            max_expansions=max_expansions,
        )
        replays.core = weakref.ref(self.core)
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


def tree_entries(
    core: AStar[Any, GoapStep],
    *,
    conditions_of: Callable[[Any], Node] | None = None,
    origins: Mapping[Any, tuple[Hashable, GoapStep]] | None = None,
) -> list[TreeEntry]:
    """The expanded nodes of ``core`` as tree entries, in expansion order.

    ``conditions_of`` maps a node to its conditions when nodes are not plain condition sets;
    ``origins`` gives a parent and edge for root nodes that continue another search's node.
    """
    entries = []
    for node in core.expanded:
        record = core.records[node]
        parent, step = record.parent, record.edge
        if parent is None and origins and node in origins:
            parent, step = origins[node]
        conditions = conditions_of(node) if conditions_of is not None else node
        entries.append(TreeEntry(node, conditions, parent, step, record.g, record.h))
    return entries


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
