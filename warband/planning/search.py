"""An interruptible A* core: stop after a budget of node expansions, resume where it stopped.

Pittman (§3.6) keeps the open and closed lists between frames so a long search can be spread
over many ticks; this module does exactly that and nothing GOAP-specific. The caller supplies
the successor function, the heuristic, the goal test and an optional acceptance test (GOAP uses
it to replay a plan forward before trusting it). Budgets count expansions, not seconds, so a
search gives the same answer however it is sliced.

Ties on ``f`` prefer the lower ``h`` (the node closer to a goal), then the older entry, so equal
inputs always expand the same nodes in the same order.
"""

from __future__ import annotations

import enum
import heapq
import itertools
import math
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..exceptions import PlanningError

_INFINITY = math.inf

N = TypeVar("N", bound=Hashable)
E = TypeVar("E")


class SearchStatus(enum.Enum):
    """Where a search stands after a call to ``step``."""

    RUNNING = "running"
    """The budget ran out; call ``step`` again to continue."""
    FOUND = "found"
    """A goal was reached (and accepted)."""
    NO_PLAN = "no plan"
    """Every reachable node was expanded; there is no (further) solution."""
    GAVE_UP = "gave up"
    """The expansion limit was reached before the search could finish."""


@dataclass(slots=True)
class NodeRecord(Generic[N, E]):
    """What the search knows about one node: best cost, how it was reached, when expanded."""

    g: float
    """Cost of the best known path from a root."""
    h: float
    """Heuristic estimate of the remaining cost."""
    parent: N | None
    """Predecessor on the best known path; None for a root."""
    edge: E | None
    """The edge from ``parent``; None for a root."""
    order: int = -1
    """Position in the expansion sequence, or -1 while the node is only generated."""

    @property
    def expanded(self) -> bool:
        """True once the node has been expanded (closed)."""
        return self.order >= 0


class AStar(Generic[N, E]):
    """A best-first search over ``N`` nodes joined by ``E`` edges, resumable by budget.

    ``roots`` are ``(node, initial cost)`` pairs. ``expand(node)`` yields ``(edge, child,
    cost)`` with non-negative costs. With a consistent ``heuristic`` the first accepted goal is
    the cheapest, and after a FOUND result further ``step`` calls go on to the next goal in
    order of cost. A goal that fails ``accept`` is expanded like any other node. A node whose
    heuristic is infinite cannot reach a goal, so it is neither recorded nor queued. ``prune(node,
    g)``, when given, is asked about each node met for the first time and drops it when it
    returns True (the caller's duplicate detection: it must only drop a node when another
    recorded node leads to a goal at no higher cost).
    """

    def __init__(
        self,
        roots: Iterable[tuple[N, float]],
        *,
        expand: Callable[[N], Iterable[tuple[E, N, float]]],
        heuristic: Callable[[N], float],
        is_goal: Callable[[N], bool],
        accept: Callable[[N], bool] | None = None,
        max_expansions: int | None = None,
        prune: Callable[[N, float], bool] | None = None,
    ) -> None:
        if max_expansions is not None and max_expansions < 0:
            raise PlanningError(f"max_expansions must be >= 0 or None, got {max_expansions}")
        self._expand = expand
        self._heuristic = heuristic
        self._is_goal = is_goal
        self._accept = accept
        self._prune = prune
        self._max_expansions = max_expansions
        self._counter = itertools.count()
        self._open: list[tuple[float, float, int, float, N]] = []
        self.records: dict[N, NodeRecord[N, E]] = {}
        """Every generated node, with its best path and expansion order."""
        self.expanded: list[N] = []
        """Expanded nodes in expansion order."""
        self.expansions = 0
        """Number of expansions so far (the unit of ``step`` budgets)."""
        self.status = SearchStatus.RUNNING
        """The status returned by the latest ``step``."""
        self.goal: N | None = None
        """The latest accepted goal node."""
        for node, cost in roots:
            self._offer(node, cost, None, None)

    @property
    def done(self) -> bool:
        """True once the search can do no more work (exhausted or out of expansions)."""
        return self.status in (SearchStatus.NO_PLAN, SearchStatus.GAVE_UP)

    def step(self, budget: int) -> SearchStatus:
        """Expand at most ``budget`` nodes; stop early at an accepted goal or at exhaustion."""
        if budget < 1:
            raise PlanningError(
                f"a search step needs a budget of at least 1 expansion, got {budget}"
            )
        if self.done:
            return self.status
        self.status = SearchStatus.RUNNING
        spent = 0
        while spent < budget:
            if self.peek_f() is None:
                self.status = SearchStatus.NO_PLAN
                return self.status
            if self._max_expansions is not None and self.expansions >= self._max_expansions:
                self.status = SearchStatus.GAVE_UP
                return self.status
            node = heapq.heappop(self._open)[4]
            if self._prune is not None and self._prune(node, self.records[node].g):
                continue
            spent += 1
            if self._close(node):
                self.goal = node
                self.status = SearchStatus.FOUND
                return self.status
        return self.status

    def peek_f(self) -> float | None:
        """The smallest ``f`` still waiting to be expanded, or None when nothing is left.

        Stale heap entries (a node since reached more cheaply, or already expanded) are
        discarded here, so they never count against a budget.
        """
        while self._open:
            f, _, _, g, node = self._open[0]
            record = self.records[node]
            if not record.expanded and g == record.g:
                return f
            heapq.heappop(self._open)
        return None

    def path(self, node: N) -> list[E]:
        """The edges from a root to ``node`` along the best known path, root side first."""
        edges: list[E] = []
        record = self.records[node]
        while record.parent is not None:
            assert record.edge is not None
            edges.append(record.edge)
            record = self.records[record.parent]
        edges.reverse()
        return edges

    def path_nodes(self, node: N) -> list[N]:
        """The nodes from a root to ``node`` along the best known path, root first."""
        nodes = [node]
        parent = self.records[node].parent
        while parent is not None:
            nodes.append(parent)
            parent = self.records[parent].parent
        nodes.reverse()
        return nodes

    def _close(self, node: N) -> bool:
        """Expand ``node``; True when it is a goal that passes the acceptance test."""
        record = self.records[node]
        record.order = self.expansions
        self.expansions += 1
        self.expanded.append(node)
        if self._is_goal(node) and (self._accept is None or self._accept(node)):
            return True
        for edge, child, cost in self._expand(node):
            if cost < 0:
                raise PlanningError(f"edge {edge} has negative cost {cost}; costs must be >= 0")
            self._offer(child, record.g + cost, node, edge)
        return False

    def _offer(self, node: N, g: float, parent: N | None, edge: E | None) -> None:
        """Record a path to ``node`` if it is the first or a cheaper one, and queue it."""
        record = self.records.get(node)
        if record is None:
            h = self._heuristic(node)
            if h == _INFINITY:
                return
            record = NodeRecord(g, h, parent, edge)
            self.records[node] = record
        elif record.expanded or g >= record.g:
            return
        else:
            record.g, record.parent, record.edge = g, parent, edge
        heapq.heappush(self._open, (g + record.h, record.h, next(self._counter), g, node))
