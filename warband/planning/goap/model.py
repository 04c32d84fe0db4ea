"""The GOAP model: actions, plan steps, plans, goals and brains (Orkin, Pittman).

An :class:`Action` has a cost, preconditions, effects, an optional procedural precondition
evaluated during search, and ``?variables`` bound from the condition it is chosen to satisfy
(Orkin's Goto satisfies ``at(me) == ?node`` for whichever node is asked for). A :class:`Goal` is a
set of desired conditions plus a relevancy in 0..1; a superior can bias goals by name. A
:class:`Brain` is a goal set plus an action set, so characters share goals and differ in how they
satisfy them.

The search is in :mod:`warband.planning.goap.search` (``find_plan``), its search space in
:mod:`warband.planning.goap.regression`, goal choice in :mod:`warband.planning.goap.goal_selection`
and search trees in :mod:`warband.planning.goap.explain`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeAlias

from ...exceptions import PlanningError
from .state import (
    NO_BINDINGS,
    Bindings,
    Condition,
    ConditionsLike,
    Effect,
    EffectsLike,
    KeyLike,
    StateValue,
    as_conditions,
    as_effects,
    is_variable,
    value_text,
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
    action is chosen to satisfy. The action may be chosen for any of its effects, so every
    effect must mention every variable the action uses, unless ``bind(context, bindings)``
    supplies the rest (one successor per mapping it yields): ``effects={"f1": False, "pos":
    "?n"}`` is refused when built, since chosen for ``f1`` nothing would say where ``?n`` is;
    give it a ``bind`` yielding the places ``?n`` may be, or make two actions.
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
        if not used or self.bind is not None:
            return
        if not any(e.variables >= used for e in self.effects):
            names = ", ".join(f"?{v}" for v in sorted(used))
            raise PlanningError(
                f"action {self.name!r} uses {names} but no single effect mentions all of them, "
                "so they cannot be bound from the condition it satisfies; add a "
                "bind(context, bindings) function that supplies the others"
            )
        for effect in self.effects:
            free = used - effect.variables
            if free:
                names = ", ".join(f"?{v}" for v in sorted(free))
                binders = " and ".join(str(e) for e in self.effects if e.variables & free)
                raise PlanningError(
                    f"action {self.name!r} may be chosen for its effect {effect}, and then "
                    f"nothing binds {names} (only a condition met by {binders} does), so the "
                    "step could not be grounded; give the action a bind(context, bindings) "
                    f"function that yields the values {names} may take, or split it into one "
                    "action per effect"
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
            asked = "; ".join(f"{e.key} == {value_text(e.value)}" for e in self.effects)
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
        _check_value_kinds(self)

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


def _kind(value: StateValue) -> str:
    if isinstance(value, bool):
        return "bool"
    return "str" if isinstance(value, str) else "number"


def _check_value_kinds(brain: Brain) -> None:
    """Refuse a property compared with values of two kinds (``true`` here, ``ture`` there):
    such a condition can never hold, and a bare word in condition text is a string, so this is
    how a typo in a value shows itself."""
    seen: dict[str, dict[str, str]] = {}
    uses: list[tuple[str, Condition | Effect]] = []
    for goal in brain.goals:
        uses += [(f"goal {goal.name!r}", c) for c in goal.conditions]
    for action in brain.actions:
        uses += [(f"action {action.name!r}", c) for c in action.preconditions]
        uses += [(f"action {action.name!r}", e) for e in action.effects]
    for where, item in uses:
        if is_variable(item.value):
            continue
        kinds = seen.setdefault(item.key.name, {})
        kinds.setdefault(_kind(item.value), f"{value_text(item.value)} in {where}")
        if len(kinds) > 1:
            listed = " and ".join(f"{text} ({kind})" for kind, text in kinds.items())
            raise PlanningError(
                f"brain {brain.name!r}: property {item.key.name!r} takes values of two kinds, "
                f"{listed}; give one property values of one kind (a typo such as 'ture'?)"
            )
