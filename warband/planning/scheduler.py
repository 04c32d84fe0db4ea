"""The planning scheduler: agents share a per-tick planning budget, first come first served.

Pittman (§3.6) bounds the planning time per frame with two pieces: an interruptible A* and a
scheduler that queues the agents' planning requests. Here an agent submits a search (a
:class:`~warband.planning.GoapSearch`, a
:class:`~warband.planning.CooperativeSearch`, an
:class:`~warband.planning.HtnSearch`, or anything with the same ``step`` contract), so one
scheduler shares a budget among GOAP and HTN agents alike. Each ``run_tick(budget)`` serves
the queue in order, spending at most ``budget`` node expansions in total: a finished search is
delivered and the next one continues with what is left; a search the budget cuts short keeps
its place at the head of the queue (or, with ``round_robin=True``, goes to the back as in
Pittman's scheduler). Budgets count expansions, never seconds, so the results are exactly those
of unscheduled searches.

In lockstep, a budget shared by whichever agents happen to share a process would make a
search's progress per tick depend on that (and on their submission order), so a run would not
send the same messages in one process and with ``--processes``. There the budget must be given
per agent (a scheduler, or a ``run_tick`` budget, of its own) or allotted by agent id, never
shared per process.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..exceptions import PlanningError
from .search import SearchStatus


class InterruptibleSearch(Protocol):
    """What the scheduler needs from a search."""

    @property
    def expansions(self) -> int:
        """Expansions spent so far."""
        ...

    @property
    def done(self) -> bool:
        """True once ``result`` is available."""
        ...

    @property
    def result(self) -> object:
        """The result once done (None before): a :class:`~warband.planning.PlanResult`, a
        :class:`~warband.planning.CooperativePlanning`, an :class:`~warband.planning.HtnResult`,
        or what a search of another kind finds (an agent's decision)."""
        ...

    def step(self, budget: int) -> SearchStatus:
        """Spend at most ``budget`` expansions."""
        ...


@dataclass(frozen=True)
class PlanDelivery:
    """A finished planning request, handed back to the agent that asked."""

    agent: str
    """The agent id given to :meth:`PlanningScheduler.submit`."""
    ticket: int
    """The ticket :meth:`PlanningScheduler.submit` returned."""
    result: object
    """The search's result (:attr:`InterruptibleSearch.result`)."""
    expansions: int
    """Expansions the search spent in total."""
    submitted_tick: int
    """The scheduler tick during which the request was submitted."""
    delivered_tick: int
    """The tick that finished it (ticks are counted by ``run_tick`` calls, from 1)."""


DeliveryCallback = Callable[[PlanDelivery], None]
"""Called with the delivery when a request finishes."""


@dataclass
class _Request:
    agent: str
    ticket: int
    search: InterruptibleSearch
    callback: DeliveryCallback | None
    submitted_tick: int


class PlanningScheduler:
    """A FIFO queue of planning requests served within a per-tick expansion budget.

    One agent has at most one pending request: submitting again replaces the old one (its
    world changed, the old question is moot) and the new request joins the back of the queue.
    """

    def __init__(self, *, round_robin: bool = False) -> None:
        self._queue: deque[_Request] = deque()
        self._round_robin = round_robin
        self._next_ticket = 1
        self.tick = 0
        """Number of ``run_tick`` calls so far."""
        self.last_spent = 0
        """Expansions spent by the latest ``run_tick``."""

    @property
    def pending(self) -> tuple[str, ...]:
        """Agent ids with a pending request, in service order."""
        return tuple(request.agent for request in self._queue)

    def submit(
        self,
        agent: str,
        search: InterruptibleSearch,
        on_done: DeliveryCallback | None = None,
    ) -> int:
        """Queue ``search`` for ``agent``; returns a ticket. ``on_done`` gets the delivery."""
        if search.done:
            raise PlanningError(
                f"the search submitted for agent {agent!r} has already finished; "
                "submit a fresh search"
            )
        self.cancel(agent)
        ticket = self._next_ticket
        self._next_ticket += 1
        self._queue.append(_Request(agent, ticket, search, on_done, self.tick))
        return ticket

    def cancel(self, agent: str) -> bool:
        """Drop ``agent``'s pending request; True if there was one. Nothing is delivered."""
        for request in self._queue:
            if request.agent == agent:
                self._queue.remove(request)
                return True
        return False

    def run_tick(self, budget: int) -> list[PlanDelivery]:
        """Serve the queue in order within ``budget`` expansions; return what finished.

        Callbacks run before this returns, in delivery order.
        """
        if budget < 1:
            raise PlanningError(f"a planning tick needs a budget of at least 1, got {budget}")
        self.tick += 1
        remaining = budget
        deliveries: list[PlanDelivery] = []
        while remaining > 0 and self._queue:
            request = self._queue[0]
            before = request.search.expansions
            request.search.step(remaining)
            remaining -= request.search.expansions - before
            if request.search.done:
                self._queue.popleft()
                deliveries.append(self._deliver(request))
            else:
                if self._round_robin:
                    self._queue.rotate(-1)
                break
        self.last_spent = budget - remaining
        return deliveries

    def _deliver(self, request: _Request) -> PlanDelivery:
        result = request.search.result
        assert result is not None
        delivery = PlanDelivery(
            request.agent,
            request.ticket,
            result,
            request.search.expansions,
            request.submitted_tick,
            self.tick,
        )
        if request.callback is not None:
            request.callback(delivery)
        return delivery
