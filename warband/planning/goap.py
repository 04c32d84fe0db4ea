"""Goal-oriented action planning: actions, goals, brains, the regressive A* planner, goal choice.

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
    format_value,
    is_variable,
    normalize,
    sorted_conditions,
    unify_key,
    unify_value,
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


@dataclass(frozen=True, slots=True)
class GoapStep:
    """One step of a plan: an action with its variable bindings, grounded, and its cost."""

    action: Action
    bindings: Bindings
    preconditions: tuple[Condition, ...]
    """The action's preconditions with the bindings substituted."""
    effects: tuple[Effect, ...]
    """The action's effects with the bindings substituted."""
    cost: float

    @property
    def name(self) -> str:
        """The action's name."""
        return self.action.name

    @property
    def cooperation(self) -> bool:
        """True for Boeda's cooperation action: another agent makes the effects hold."""
        return self.action.cooperation

    def __str__(self) -> str:
        if self.cooperation:
            asked = "; ".join(f"{e.key} == {format_value(e.value)}" for e in self.effects)
            return f"{self.name}[{asked}]"
        return f"{self.name}({self.bindings})" if self.bindings else self.name


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


def _as_dict(state: WorldState) -> dict[Key, StateValue]:
    """A fresh dict of ``state``'s values (without going through the Mapping mixins)."""
    if isinstance(state, WorldState):
        return dict(state._values)
    return dict(state.items())


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


class _Shape:
    """What regressing through a ground action needs; it depends on the action and its
    bindings only, never on the context, so it is worked out once per action set. There is
    one shape per (action, bindings), so a shape also identifies a step among successors."""

    __slots__ = ("assigned", "effects", "pre", "preconditions")

    def __init__(self, action: Action, bindings: Bindings, index: _ActionIndex) -> None:
        intern = index.intern
        self.preconditions = tuple(intern(c.substitute(bindings)) for c in action.preconditions)
        self.effects = tuple(e.substitute(bindings) for e in action.effects)
        self.assigned = {effect.key: effect.value for effect in self.effects}
        # The preconditions in canonical form, grouped by key; None when they contradict each
        # other, which makes every regression through the step fail.
        pre = normalize(self.preconditions)
        grouped: dict[Key, list[Condition]] | None = None
        if pre is not None:
            grouped = {}
            for condition in sorted_conditions(pre):
                grouped.setdefault(condition.key, []).append(intern(condition))
        self.pre = grouped


class _Ground:
    """A ground step with its shape."""

    __slots__ = ("shape", "step")

    def __init__(self, step: GoapStep, shape: _Shape) -> None:
        self.step = step
        self.shape = shape


_INTERNED_KEPT = 1 << 16
"""A bound on the conditions one action set shares (goals bound from a context add some)."""

_STATIC, _GROUND, _UNIFY, _BOUND = 0, 1, 2, 3
"""Kinds of candidate effect: see :meth:`_ActionIndex.candidates`."""


def _pure(action: Action) -> bool:
    """True when grounding ``action`` cannot depend on the context (no check, bind or cost
    function), so its ground steps can be shared by every search over the action set."""
    return action.check is None and action.bind is None and not callable(action.cost)


class _ActionIndex:
    """What a search needs from an action set alone (not from start, goal or context).

    Building it walks every action, which used to be paid on every solve; it is built once per
    action set (see :func:`_index_of`) and its lazily filled tables are shared by the searches.
    """

    def __init__(self, actions: tuple[Action, ...]) -> None:
        # Effects indexed by the keys they can set: a ground key, or (for a variable subject)
        # every key with that name. Candidates keep the action order, for determinism.
        self.by_key: dict[Key, list[tuple[int, Action, Effect]]] = {}
        self.by_name: dict[str, list[tuple[int, Action, Effect]]] = {}
        for index, action in enumerate(actions):
            for effect in action.effects:
                entry = (index, action, effect)
                if effect.key.has_variable:
                    self.by_name.setdefault(effect.key.name, []).append(entry)
                else:
                    self.by_key.setdefault(effect.key, []).append(entry)
        self.scale = min((a.min_cost for a in actions), default=0.0)
        self.span = max((len(a.effects) for a in actions), default=1)
        self.mentioned: list[tuple[str, StateValue]] = []
        for action in actions:
            self.mentioned += [(c.key.name, c.value) for c in action.preconditions]
            self.mentioned += [(e.key.name, e.value) for e in action.effects]
        self._effects_on: dict[Key, tuple[tuple[Action, Effect, bool], ...]] = {}
        self.pure_ground: dict[tuple[Action, Bindings], tuple[_Ground, ...]] = {}
        self._shapes: dict[tuple[Action, Bindings], _Shape] = {}
        self._conditions: dict[Condition, Condition] = {}
        self.roots: dict[tuple[Condition, ...], Node] = {}
        self._bound: dict[tuple[Action, Key, Condition], tuple[Bindings, ...]] = {}
        self._candidates: dict[Condition, tuple[tuple[Action, Effect, int], ...]] = {}
        self.static: dict[Action, tuple[_Ground, ...]] = {}
        """Ground steps of pure actions under no bindings, shared by every search."""

    def shape(self, action: Action, bindings: Bindings) -> _Shape:
        """The shape of ``action`` under the complete ``bindings``."""
        cache_key = (action, bindings)
        shape = self._shapes.get(cache_key)
        if shape is None:
            shape = self._shapes[cache_key] = _Shape(action, bindings, self)
        return shape

    def bound(self, action: Action, effect: Effect, condition: Condition) -> tuple[Bindings, ...]:
        """The bindings under which ``effect`` satisfies the ``==`` ``condition``: they do not
        depend on the start state or the context, so they are unified once."""
        cache_key = (action, effect.key, condition)
        found = self._bound.get(cache_key)
        if found is None:
            bindings = unify_key(effect.key, condition.key, NO_BINDINGS)
            if bindings is not None:
                bindings = unify_value(effect.value, condition.value, bindings)
            found = self._bound[cache_key] = () if bindings is None else (bindings,)
        return found

    def intern(self, condition: Condition) -> Condition:
        """The shared object equal to ``condition``: nodes built from shared objects compare
        by identity when the search meets a node again, instead of field by field."""
        found = self._conditions.get(condition)
        if found is None:
            found = condition
            if len(self._conditions) < _INTERNED_KEPT:
                self._conditions[condition] = condition
        return found

    def candidates(self, condition: Condition) -> tuple[tuple[Action, Effect, int], ...]:
        """``(action, effect, kind)`` for every effect that may satisfy ``condition``, in
        action order. Ground effects that cannot satisfy it are left out (a step through
        them would contradict the condition, so regression fails anyway). ``kind`` is
        ``STATIC`` for a ground effect of a pure action, ``GROUND`` for a ground effect of
        another action, ``UNIFY`` when the effect has variables and ``BOUND`` when they are
        fixed by an ``==`` condition alone (see :meth:`bound`)."""
        cached = self._candidates.get(condition)
        if cached is None:
            value, negated = condition.value, condition.negated
            found = []
            for action, effect, ground in self.effects_on(condition.key):
                if not ground:
                    kind = _UNIFY if negated else _BOUND
                    found.append((action, effect, kind))
                    continue
                same = effect.value == value and type(effect.value) is type(value)
                if same != negated:
                    found.append((action, effect, _STATIC if _pure(action) else _GROUND))
            cached = self._candidates[condition] = tuple(found)
        return cached

    def effects_on(self, key: Key) -> tuple[tuple[Action, Effect, bool], ...]:
        """``(action, effect, ground)`` for every effect that may set ``key``, in action order;
        ``ground`` is True when the effect has no variable at all."""
        cached = self._effects_on.get(key)
        if cached is None:
            merged = sorted(
                self.by_key.get(key, []) + self.by_name.get(key.name, []),
                key=lambda entry: entry[0],
            )
            cached = tuple(
                (action, effect, not effect.key.has_variable and not is_variable(effect.value))
                for _, action, effect in merged
            )
            self._effects_on[key] = cached
        return cached


_INDEXES: dict[tuple[Action, ...], _ActionIndex] = {}
_INDEXES_KEPT = 64
"""How many action sets keep an index; the oldest is dropped beyond that, bounding memory."""


def _index_of(actions: tuple[Action, ...]) -> _ActionIndex:
    """The shared index of an action set (actions compare by identity, so this is safe)."""
    index = _INDEXES.get(actions)
    if index is None:
        if len(_INDEXES) >= _INDEXES_KEPT:
            del _INDEXES[next(iter(_INDEXES))]
        index = _INDEXES[actions] = _ActionIndex(actions)
    return index


class Regression:
    """Regression over a fixed start state, action set and context: the planner's search space.

    Used by :class:`GoapSearch` and by the cooperative planner; not needed for plain planning.
    Ground actions are cached per (action, bindings), so cost and procedural checks run once
    per search for each binding; actions without a check, bind or cost function are ground
    once for every search over the same action set.
    """

    def __init__(
        self,
        start: WorldState,
        actions: Sequence[Action],
        context: Any,
        goal: Iterable[Condition] = (),
    ) -> None:
        self.start = start
        self.actions = tuple(actions)
        self.context = context
        self._goal = tuple(goal)
        self._index = _index_of(self.actions)
        # Read-only here, so the state's own dict serves (no copy per search).
        self._start_values = start._values if isinstance(start, WorldState) else _as_dict(start)
        self._ground_cache: dict[tuple[Action, Bindings], tuple[_Ground, ...]] = {}
        self._scale = self._index.scale
        self._span = self._index.span
        self._open_counts: dict[Node, int] = {}

    @cached_property
    def _values(self) -> dict[str, tuple[StateValue, ...]]:
        # Only a '!=' condition met by an effect with a variable value needs these, so they
        # are worked out on first use rather than on every solve.
        pairs = [(key.name, value) for key, value in self.start.items()]
        pairs += [(c.key.name, c.value) for c in self._goal]
        return _sorted_values(pairs + self._index.mentioned)

    def _root(self, goal: tuple[Condition, ...]) -> Node:
        """:func:`root_node` of ``goal``, worked out once per goal and action set, with the
        conditions shared with the rest of the search space (see :meth:`_ActionIndex.intern`).
        """
        roots = self._index.roots
        root = roots.get(goal)
        if root is None:
            root = frozenset(map(self._index.intern, root_node(goal)))
            if len(roots) < _INDEXES_KEPT:
                roots[goal] = root
        return root

    def _open_count(self, node: Node) -> int:
        """How many conditions of ``node`` do not hold at the start (heuristic and goal test
        both need it, so it is counted once per node)."""
        count = self._open_counts.get(node)
        if count is None:
            start = self._start_values
            count = 0
            for condition in node:
                current = start.get(condition.key)
                same = (
                    current is not None
                    and current == condition.value
                    and type(current) is type(condition.value)
                )
                if same == condition.negated:
                    count += 1
            self._open_counts[node] = count
        return count

    def holds_at_start(self, node: Node) -> bool:
        """True when every condition of ``node`` holds in the start state (a solution)."""
        return self._open_count(node) == 0

    def heuristic(self, node: Node) -> float:
        """Admissible and consistent: one action satisfies at most ``span`` open conditions
        and costs at least ``scale``, so ``ceil(unsatisfied / span) * scale`` never overshoots.
        """
        if self._scale <= 0:
            return 0.0
        return math.ceil(self._open_count(node) / self._span) * self._scale

    def successors(self, node: Node) -> list[tuple[GoapStep, Node, float]]:
        """Every ground action whose effects satisfy an open condition and contradict none,
        with the node it regresses to, in a deterministic order."""
        grouped = _group(node)
        result: list[tuple[GoapStep, Node, float]] = []
        seen: set[_Shape] = set()
        index = self._index
        static = index.static
        for condition in sorted_conditions(node) if len(node) > 1 else node:
            for action, effect, kind in index.candidates(condition):
                entries: Sequence[_Ground]
                if kind == _BOUND:
                    entries = [
                        entry
                        for bindings in index.bound(action, effect, condition)
                        for entry in self._ground_entries(action, bindings)
                    ]
                elif kind == _UNIFY:
                    entries = [
                        entry
                        for bindings in self._unify(action, effect, condition)
                        for entry in self._ground_entries(action, bindings)
                    ]
                elif kind == _STATIC:
                    found = static.get(action)
                    if found is None:
                        found = static[action] = self._ground_entries(action, NO_BINDINGS)
                    entries = found
                else:
                    entries = self._ground_entries(action, NO_BINDINGS)
                for entry in entries:
                    # One shape per (action, bindings): a step met twice is regressed once.
                    shape = entry.shape
                    if shape in seen:
                        continue
                    seen.add(shape)
                    child = _regress(node, grouped, entry, index)
                    if child is not None:
                        step = entry.step
                        result.append((step, child, step.cost))
        return result

    def _unify(self, action: Action, effect: Effect, condition: Condition) -> Iterator[Bindings]:
        """The bindings under which ``effect`` satisfies the open ``condition``.

        An ``==`` condition fixes a variable value. A ``!=`` condition does not, so a free
        variable value is tried with every value the problem mentions for that property
        (start state, goal, action conditions and effects) that the condition accepts, unless
        the action's ``bind`` function supplies the values itself.
        """
        bindings = unify_key(effect.key, condition.key, NO_BINDINGS)
        if bindings is None:
            return
        if not condition.negated:
            unified = unify_value(effect.value, condition.value, bindings)
            if unified is not None:
                yield unified
            return
        value = bindings.resolve(effect.value)
        if not is_variable(value) or action.bind is not None:
            yield bindings
            return
        for candidate in self._values.get(effect.key.name, ()):
            if condition.accepts(candidate):
                bound = bindings.bind(str(value), candidate)
                if bound is not None:
                    yield bound

    def ground(self, action: Action, bindings: Bindings) -> tuple[GoapStep, ...]:
        """The ground steps of ``action`` extending ``bindings`` that pass its check."""
        return tuple(entry.step for entry in self._ground_entries(action, bindings))

    def _ground_entries(self, action: Action, bindings: Bindings) -> tuple[_Ground, ...]:
        cache_key = (action, bindings)
        cache = self._index.pure_ground if _pure(action) else self._ground_cache
        cached = cache.get(cache_key)
        if cached is None:
            cached = tuple(self._ground(action, bindings))
            cache[cache_key] = cached
        return cached

    def _ground(self, action: Action, bindings: Bindings) -> Iterator[_Ground]:
        for full in self._complete(action, bindings):
            if not action.variables <= set(full):
                continue
            if action.check is not None and not action.check(self.context, full):
                continue
            shape = self._index.shape(action, full)
            step = GoapStep(
                action, full, shape.preconditions, shape.effects, self._cost(action, full)
            )
            yield _Ground(step, shape)

    def _complete(self, action: Action, bindings: Bindings) -> Iterator[Bindings]:
        if action.bind is None:
            yield bindings
            return
        for extra in action.bind(self.context, bindings):
            merged: Bindings | None = bindings
            for name, value in extra.items():
                merged = merged.bind(name, value) if merged is not None else None
            if merged is None:
                continue
            if not action.variables <= set(merged):
                free = ", ".join(f"?{v}" for v in sorted(action.variables - set(merged)))
                raise PlanningError(
                    f"bind() of action {action.name!r} left {free} unbound; it must yield a "
                    "value for every variable the open condition does not fix"
                )
            yield merged

    def _cost(self, action: Action, bindings: Bindings) -> float:
        cost = float(action.cost(self.context, bindings) if callable(action.cost) else action.cost)
        if not math.isfinite(cost) or cost < action.min_cost:
            raise PlanningError(
                f"cost of action {action.name!r} with {bindings or 'no bindings'} is {cost}; "
                f"it must be finite and at least its min_cost {action.min_cost}"
            )
        return cost


def _sorted_values(pairs: Iterable[tuple[str, StateValue]]) -> dict[str, tuple[StateValue, ...]]:
    """Ground values per property name, in a fixed order."""
    # Typed entries keep True and 1 apart, which a plain set of values would merge.
    found: dict[str, set[tuple[str, str, StateValue]]] = {}
    for name, value in pairs:
        if not is_variable(value):
            found.setdefault(name, set()).add((type(value).__name__, repr(value), value))
    return {name: tuple(entry[2] for entry in sorted(entries)) for name, entries in found.items()}


def _group(node: Node) -> dict[Key, list[Condition]] | None:
    """The node's conditions by key, or None when the node is not in :func:`normalize`'s
    canonical form (one ``==`` per key, or only ``!=`` conditions on it)."""
    grouped: dict[Key, list[Condition]] = {}
    for condition in node:
        grouped.setdefault(condition.key, []).append(condition)
    for group in grouped.values():
        if len(group) > 1 and not all(condition.negated for condition in group):
            return None
    return grouped


def _regress(
    node: Node, grouped: dict[Key, list[Condition]] | None, entry: _Ground, index: _ActionIndex
) -> Node | None:
    """:func:`regress` for a canonical node whose conditions are already grouped by key.

    The result equals ``regress(node, entry.step)``; it only touches the keys the step sets or
    needs, instead of re-normalising the whole node for every successor.
    """
    if grouped is None:
        return regress(node, entry.step)
    shape = entry.shape
    assigned = shape.assigned
    removed: list[Condition] = []
    for key, value in assigned.items():
        group = grouped.get(key)
        if group is None:
            continue
        for condition in group:
            same = value == condition.value and type(value) is type(condition.value)
            if same == condition.negated:
                return None  # the step undoes a condition that must still hold
        removed += group
    if not removed:
        return None  # the step achieves nothing the node asks for
    pre = shape.pre
    if pre is None:
        return None
    added: list[Condition] = []
    for key, conditions in pre.items():
        existing = grouped.get(key)
        if existing is None or key in assigned:
            added += conditions
            continue
        merged = normalize(existing + conditions)
        if merged is None:
            return None
        removed += existing
        added += map(index.intern, merged)
    child = node.difference(removed)
    return child.union(added) if added else child


def regress(node: Node, step: GoapStep) -> Node | None:
    """The conditions that must hold before ``step`` so that ``node`` holds after it.

    None when the step satisfies none of the node's conditions, or contradicts one (the trap:
    an action that undoes another open condition would yield a plan that does not execute),
    or when its preconditions contradict what must still hold.
    """
    assigned = {effect.key: effect.value for effect in step.effects}
    kept: list[Condition] = []
    achieved = 0
    for condition in node:
        if condition.key not in assigned:
            kept.append(condition)
        elif condition.accepts(assigned[condition.key]):
            achieved += 1
        else:
            return None
    if achieved == 0:
        return None
    kept.extend(step.preconditions)
    return normalize(kept)


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


def root_node(conditions: tuple[Condition, ...]) -> Node:
    """The search root for goal ``conditions``; raises PlanningError if they contradict."""
    root = normalize(conditions)
    if root is None:
        listed = ", ".join(str(c) for c in conditions)
        raise PlanningError(f"goal conditions contradict each other: {listed}")
    return root


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
