"""The GOAP search heuristic: h^max over the relaxed regression problem.

Relaxing the problem lets every condition be achieved independently of the others: a condition
costs nothing when it holds at the start, and otherwise the cheapest way to achieve it is an
action whose effect satisfies it (the same candidates the search tries), at the action's
``min_cost`` plus the dearest of its preconditions. The cost of a node is the dearest of its
conditions (Bonet and Geffner's h^max). Along a chain of actions it adds up the chain, where
counting open conditions sees one step; a condition nothing can achieve costs infinity, and
the search drops such a node at once instead of expanding everything below it.

What is relaxed away keeps the bound below the true cost: procedural checks are ignored, cost
functions count their ``min_cost``, and a precondition that stays variable once the effect is
unified with the condition (bound later by ``bind`` or by trying values) counts nothing.

Admissible and consistent. For a step of cost ``w`` from node ``N`` to ``N'``: a condition the
step achieves costs at most ``w`` plus its (ground) preconditions, which are in ``N'``; a
condition it leaves alone is in ``N'`` as it is, or merged there into a ``==`` on the same key,
which costs at least as much (every effect that can make ``k == v`` hold can make ``k != u``
hold). So ``h(N) <= w + h(N')``, and A* returns the cheapest plan first.

The relaxed achievers of a condition depend on the action set only, so they are worked out once
per action set (:class:`RelaxedIndex`, kept with the search space's index). The graph of
conditions a goal can need is built once per goal and action set (:class:`_Graph`); the costs
over it depend on the start state only through the values of its keys, so they are computed
once per such assignment and shared by every search that has it (an agent replanning in an
unchanged world pays one dictionary look-up).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Mapping
from typing import TypeAlias

from .state import Condition, Key, StateValue

Achievers: TypeAlias = tuple[tuple[float, tuple[Condition, ...]], ...]
"""For an untagged condition: ``(min_cost, ground preconditions)`` of each action that may
achieve it (the preconditions keep their tags; the graph looks them up untagged)."""

INFINITY = math.inf

_GRAPH_CONDITIONS = 1 << 14
"""A bound on one goal's graph: conditions beyond it count nothing (a weaker, still admissible
bound), so an action set whose variables ground into endless conditions cannot stall a search."""
_VALUES_KEPT = 64
"""How many start assignments one graph keeps costs for; the oldest is dropped beyond that."""
_GRAPHS_KEPT = 64
"""How many goal graphs one action set keeps."""


def plain(condition: Condition) -> Condition:
    """``condition`` without its achievable_by_any_agent tag: the tag does not change what
    achieves a condition, and the search merges tagged and untagged copies."""
    if condition.achievable_by_any_agent:
        return Condition(condition.key, condition.value, condition.negated, False)
    return condition


class _Graph:
    """The conditions a goal can need, with their achievers, numbered for the cost pass."""

    __slots__ = (
        "achievers",
        "aliases",
        "conditions",
        "keys",
        "last",
        "position",
        "values",
        "waiting",
    )

    def __init__(
        self,
        roots: Iterable[Condition],
        achievers_of: Callable[[Condition], Achievers],
        known: Mapping[Condition, float],
    ) -> None:
        conditions: list[Condition] = []
        position: dict[Condition, int] = {}
        # Tagged copies met on the way: their costs are listed too, so nodes holding them find
        # their cost at once.
        self.aliases: dict[Condition, Condition] = {}
        stack = list(roots)
        while stack:
            tagged = stack.pop()
            condition = plain(tagged)
            if condition in known:
                continue
            if condition is not tagged:
                self.aliases[tagged] = condition
            if condition in position:
                continue
            position[condition] = len(conditions)
            conditions.append(condition)
            if len(conditions) >= _GRAPH_CONDITIONS:
                continue  # beyond the bound: its achievers are not followed, it counts nothing
            for _, pre in achievers_of(condition):
                stack.extend(p for p in pre if p not in position)
        capped = len(conditions) >= _GRAPH_CONDITIONS
        # (target, cost, preconditions still inside the graph, the dearest known one)
        self.achievers: list[tuple[int, float, tuple[int, ...], float]] = []
        self.waiting: list[list[int]] = [[] for _ in conditions]
        for index, condition in enumerate(conditions):
            if capped and index >= _GRAPH_CONDITIONS - 1:
                self.achievers.append((index, 0.0, (), 0.0))
                continue
            for cost, pre in achievers_of(condition):
                untagged = [plain(p) for p in pre]
                inside = tuple(sorted({position[p] for p in untagged if p not in known}))
                outside = max((known[p] for p in untagged if p in known), default=0.0)
                if outside == INFINITY:
                    continue
                number = len(self.achievers)
                self.achievers.append((index, cost, inside, outside))
                for pre_index in inside:
                    self.waiting[pre_index].append(number)
        self.conditions = conditions
        self.position = position
        self.keys = tuple(dict.fromkeys(c.key for c in conditions))
        self.values: dict[tuple[object, ...], dict[Condition, float]] = {}
        self.last: tuple[object, dict[Condition, float]] | None = None
        """The latest start state asked for and its costs: replanning from the same state
        object skips even the look-up."""

    def costs(
        self, state: object, start: Mapping[Key, StateValue], free: frozenset[str]
    ) -> dict[Condition, float]:
        """h^max of every condition of the graph from ``start`` (the values of the start
        ``state``), cached per assignment of the graph's keys; conditions on the property names
        in ``free`` cost nothing (a helper may make them hold). A graph is only ever asked with
        one ``free`` set."""
        last = self.last
        if last is not None and last[0] is state:
            return last[1]
        found = tuple(map(start.get, self.keys))
        # True == 1 for tuples, not for conditions: the types make the look-up exact.
        signature = (found, tuple(map(type, found)))
        cached = self.values.get(signature)
        if cached is None:
            cached = self._solve(start, free)
            if len(self.values) >= _VALUES_KEPT:
                del self.values[next(iter(self.values))]
            self.values[signature] = cached
        self.last = (state, cached)
        return cached

    def _solve(
        self, start: Mapping[Key, StateValue], free: frozenset[str]
    ) -> dict[Condition, float]:
        """Generalised Dijkstra (Knuth): conditions are settled cheapest first, and an achiever
        fires once all its preconditions are settled; its cost is then its own plus the dearest
        of them, the one settled last."""
        conditions = self.conditions
        heap: list[tuple[float, int]] = []
        for index, condition in enumerate(conditions):
            if condition.holds(start) or condition.key.name in free:
                heap.append((0.0, index))
        remaining = []
        for target, cost, inside, outside in self.achievers:
            remaining.append(len(inside))
            if not inside:
                heap.append((cost + outside, target))
        heapq.heapify(heap)
        settled: dict[Condition, float] = {}
        achievers, waiting = self.achievers, self.waiting
        while heap:
            value, index = heapq.heappop(heap)
            condition = conditions[index]
            if condition in settled:
                continue
            settled[condition] = value
            for number in waiting[index]:
                remaining[number] -= 1
                if remaining[number] == 0:
                    target, cost, _, outside = achievers[number]
                    if conditions[target] not in settled:
                        heapq.heappush(heap, (cost + max(value, outside), target))
        for condition in conditions:
            settled.setdefault(condition, INFINITY)
        for tagged, condition in self.aliases.items():
            settled[tagged] = settled[condition]
        return settled


class RelaxedIndex:
    """The action-set part of the heuristic: achievers per condition and graphs per goal."""

    def __init__(self, achievers_of: Callable[[Condition], Achievers]) -> None:
        self._achievers_of = achievers_of
        self._graphs: dict[tuple[frozenset[Condition], frozenset[str]], _Graph] = {}

    def graph(self, goal: frozenset[Condition], free: frozenset[str]) -> _Graph:
        """The graph of ``goal``'s conditions for one ``free`` set, built on first use."""
        graph = self._graphs.get((goal, free))
        if graph is None:
            graph = _Graph(goal, self._achievers_of, {})
            if len(self._graphs) >= _GRAPHS_KEPT:
                del self._graphs[next(iter(self._graphs))]
            self._graphs[goal, free] = graph
        return graph

    def extend(
        self,
        conditions: Iterable[Condition],
        known: Mapping[Condition, float],
        start: Mapping[Key, StateValue],
        free: frozenset[str],
    ) -> dict[Condition, float]:
        """Costs of ``conditions`` the goal's graph lacks (a precondition bound by ``bind``,
        say), given the costs already ``known``: those never depend on the new ones."""
        return _Graph(conditions, self._achievers_of, known)._solve(start, free)


class RelaxedCosts:
    """h^max for one search: a start state, a goal, and the action set's :class:`RelaxedIndex`.

    :attr:`costs` maps untagged conditions to their cost; :meth:`learn` adds one it lacks. A
    node's cost is the largest cost of its conditions that do not hold at the start (the
    search inlines that loop: it runs for every node).
    """

    __slots__ = ("_free", "_index", "_own", "_start", "costs")

    def __init__(
        self,
        index: RelaxedIndex,
        goal: frozenset[Condition],
        state: object,
        start: Mapping[Key, StateValue],
        free: frozenset[str],
    ) -> None:
        """``start`` holds the values of the start ``state`` (any object standing for them:
        costs are reused while the same object comes back)."""
        self._index = index
        self._start = start
        self._free = free
        self.costs = index.graph(goal, free).costs(state, start, free)
        self._own = False

    def of(self, node: Iterable[Condition]) -> float:
        """The dearest condition of ``node``; infinity when one of them cannot be achieved."""
        best = 0.0
        for condition in node:
            value = self.costs.get(condition)
            if value is None:
                value = self.learn(condition)
            best = max(best, value)
        return best

    def learn(self, condition: Condition) -> float:
        """The cost of a condition :attr:`costs` lacks (a tagged copy, or a precondition bound
        by ``bind``), added to :attr:`costs`."""
        untagged = plain(condition)
        learned: dict[Condition, float] = {}
        if untagged not in self.costs:
            learned = self._index.extend([untagged], self.costs, self._start, self._free)
        if not self._own:
            # The graph's costs are shared between searches: extend a copy of them.
            self.costs = dict(self.costs)
            self._own = True
        self.costs.update(learned)
        value = self.costs[condition] = self.costs[untagged]
        return value
