"""The regressive search space of GOAP: ground steps, regressing a node through them, and the
:class:`Regression` the A* search expands, with the per-action-set index it shares between searches.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from functools import cached_property
from typing import Any

from ...exceptions import PlanningError
from .heuristic import Achievers, RelaxedCosts, RelaxedIndex
from .model import Action, GoapStep, Node
from .state import (
    NO_BINDINGS,
    Bindings,
    Condition,
    Effect,
    Key,
    StateValue,
    WorldState,
    is_variable,
    normalize,
    sorted_conditions,
    unify_key,
    unify_value,
)


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
        self._achievers: dict[Condition, Achievers] = {}
        self.relaxed = RelaxedIndex(self.achievers)
        """The heuristic's share of the index (see :mod:`warband.planning.goap.heuristic`)."""

    def achievers(self, condition: Condition) -> Achievers:
        """``(min_cost, ground preconditions)`` for every way an action may achieve
        ``condition`` in the relaxed problem: the effects :meth:`candidates` gives,
        with the preconditions that the unification with ``condition`` grounds."""
        cached = self._achievers.get(condition)
        if cached is None:
            found: list[tuple[float, tuple[Condition, ...]]] = []
            for action, effect, kind in self.candidates(condition):
                options: tuple[Bindings, ...] = (NO_BINDINGS,)
                if kind == _BOUND:
                    options = self.bound(action, effect, condition)
                elif kind == _UNIFY:
                    unified = unify_key(effect.key, condition.key, NO_BINDINGS)
                    options = () if unified is None else (unified,)
                for bindings in options:
                    # Interned, so the heuristic finds a node's conditions by identity.
                    pre = [self.intern(c.substitute(bindings)) for c in action.preconditions]
                    ground = tuple(c for c in pre if not c.variables)
                    if normalize(ground) is not None:
                        found.append((action.min_cost, ground))
            cached = self._achievers[condition] = tuple(found)
        return cached

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
                # values_equal, inline: this runs for every (condition, effect) pair
                same = effect.value == value and (effect.value.__class__ is bool) is (
                    value.__class__ is bool
                )
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
        *,
        helped: bool = False,
    ) -> None:
        self.start = start
        self.actions = tuple(actions)
        self.context = context
        self._goal = tuple(goal)
        self._index = _index_of(self.actions)
        # Read-only here, so the state's own dict serves (no copy per search).
        self._start_values = start.to_dict()
        self._ground_cache: dict[tuple[Action, Bindings], tuple[_Ground, ...]] = {}
        self._scale = self._index.scale
        self._span = self._index.span
        self._open: dict[Node, tuple[Condition, ...]] = {}
        free = _helped_names(self._goal, self.actions) if helped else frozenset()
        self._relaxed = RelaxedCosts(
            self._index.relaxed, self.root(self._goal), start, self._start_values, free
        )
        self._costs = self._relaxed.costs

    @cached_property
    def _values(self) -> dict[str, tuple[StateValue, ...]]:
        # Only a '!=' condition met by an effect with a variable value needs these, so they
        # are worked out on first use rather than on every solve.
        pairs = [(key.name, value) for key, value in self.start.items()]
        pairs += [(c.key.name, c.value) for c in self._goal]
        return _sorted_values(pairs + self._index.mentioned)

    def root(self, goal: tuple[Condition, ...]) -> Node:
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

    def open_conditions(self, node: Node) -> tuple[Condition, ...]:
        """The conditions of ``node`` that do not hold at the start (the goal test, the
        heuristic and duplicate detection all need them, so they are found once per node)."""
        found = self._open.get(node)
        if found is None:
            start = self._start_values
            opened = []
            for condition in node:
                current = start.get(condition.key)
                same = (
                    current is not None
                    and current == condition.value
                    and (current.__class__ is bool) is (condition.value.__class__ is bool)
                )
                if same == condition.negated:
                    opened.append(condition)
            found = self._open[node] = tuple(opened)
        return found

    def holds_at_start(self, node: Node) -> bool:
        """True when every condition of ``node`` holds in the start state (a solution)."""
        return not self.open_conditions(node)

    def heuristic(self, node: Node) -> float:
        """Admissible and consistent: the larger of two bounds that are both.

        h^max over the relaxed problem (:mod:`warband.planning.goap.heuristic`) sees along
        chains and is infinite for a node no plan can reach; one action satisfies at most
        ``span`` open conditions and costs at least ``scale``, so ``ceil(unsatisfied / span) *
        scale`` counts the width h^max misses.
        """
        opened = self._open.get(node)
        if opened is None:
            opened = self.open_conditions(node)
        if not opened:
            return 0.0
        costs = self._costs
        estimate = 0.0
        for condition in opened:
            cost = costs.get(condition)
            if cost is None:
                cost = self._relaxed.learn(condition)
                self._costs = self._relaxed.costs
            if cost > estimate:
                estimate = cost
        if self._scale > 0:
            count = math.ceil(len(opened) / self._span) * self._scale
            if count > estimate:
                return count
        return estimate

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


def _helped_names(goal: Iterable[Condition], actions: Iterable[Action]) -> frozenset[str]:
    """Property names some condition tagged achievable_by_any_agent asks for: a helper may make
    them hold, so a cooperative search's heuristic counts them as free."""
    names = {c.key.name for c in goal if c.achievable_by_any_agent}
    for action in actions:
        names |= {c.key.name for c in action.preconditions if c.achievable_by_any_agent}
    return frozenset(names)


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
            same = value == condition.value and (value.__class__ is bool) is (
                condition.value.__class__ is bool
            )
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


def root_node(conditions: tuple[Condition, ...]) -> Node:
    """The search root for goal ``conditions``; raises PlanningError if they contradict."""
    root = normalize(conditions)
    if root is None:
        listed = ", ".join(str(c) for c in conditions)
        raise PlanningError(f"goal conditions contradict each other: {listed}")
    return root
