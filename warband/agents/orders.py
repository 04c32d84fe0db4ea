"""Orders that outlive a message: the subordinate's command queue and the superior's order book.

Killzone gives every squad and bot a command queue, like an RTS unit: a new order overwrites
what the queue holds unless it belongs to the command sequence being filled, in which case it
queues up behind it; the receiver works on the head of the queue and pops it when done
(``!clear_order``). An order lasts many ticks, so nobody awaits it with ``request``: the sender
keeps an *order book* keyed by order id, and every order it gave ends there in one of three
ways — a CompletionReport (done, or failed with a reason), a withdrawal by the sender
(:class:`~warband.messaging.WithdrawOrder`, when it replans), or the subordinate leaving the run.

Both are plain bookkeeping: they decide, the agent sends (see :mod:`warband.agents.agent`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from ..messaging import CompletionReport, Order
from ..values import Fact
from .facts import ORDER, ORDER_ENDED, ORDER_OPEN, QUEUED_ORDER

OrderState = Literal["open", "done", "failed", "withdrawn", "lost"]


class CommandQueue:
    """The orders an agent received and has not finished, the current one first."""

    def __init__(self) -> None:
        self._queue: deque[Order] = deque()
        # facts() until the queue changes: asked every tick, the same tuples each time, so
        # that the agent's memory sees at once that they did not change.
        self._facts: list[Fact] | None = None

    @property
    def current(self) -> Order | None:
        """The order to work on now, or None."""
        return self._queue[0] if self._queue else None

    def __len__(self) -> int:
        return len(self._queue)

    def __iter__(self) -> Iterator[Order]:
        return iter(self._queue)

    def receive(self, order: Order) -> list[Order]:
        """Take ``order`` in; return the orders it overwrote (they end, unfinished).

        An order of the sequence already queued (same ``sequence`` id) queues up behind it; any
        other order replaces the whole queue.
        """
        self._facts = None
        tail = self._queue[-1] if self._queue else None
        if order.sequence is not None and tail is not None and tail.sequence == order.sequence:
            self._queue.append(order)
            return []
        overwritten = list(self._queue)
        self._queue.clear()
        self._queue.append(order)
        return overwritten

    def pop(self) -> Order | None:
        """Remove and return the current order (``!clear_order``: it is finished)."""
        if not self._queue:
            return None
        self._facts = None
        return self._queue.popleft()

    def withdraw(self, order_id: str) -> Order | None:
        """Remove the order with id ``order_id`` wherever it is; None if it is not held."""
        for order in self._queue:
            if order.id == order_id:
                self._facts = None
                self._queue.remove(order)
                return order
        return None

    def facts(self) -> list[Fact]:
        """The queue as facts for the planner: ``("order", id, sender, task, *args)`` for the
        current order, ``("queued_order", position, id, task)`` for every order after it."""
        if self._facts is not None:
            return list(self._facts)
        facts: list[Fact] = []
        for position, order in enumerate(self._queue):
            if position == 0:
                facts.append(ORDER.fact(order.id, order.sender, order.task, *order.args))
            else:
                facts.append(QUEUED_ORDER.fact(position, order.id, order.task))
        self._facts = facts
        return list(facts)


@dataclass
class IssuedOrder:
    """An order an agent gave, and how it ended."""

    order: Order
    state: OrderState = "open"
    reason: str = ""
    issued_tick: int = 0
    ended_tick: int | None = None


@dataclass
class OrderBook:
    """The orders an agent gave, by id: open until reported on, withdrawn or lost.

    ``orders`` keeps every order given (the agent's summary counts them); the book also keeps
    the open ones and each recipient's last ended one apart, so that :meth:`facts` and
    :meth:`open`, asked every tick, cost what is open rather than what a long match has given.
    Change the book through its methods only."""

    orders: dict[str, IssuedOrder] = field(default_factory=dict)
    _open: dict[str, IssuedOrder] = field(default_factory=dict, repr=False)
    _sequence: dict[str, int] = field(default_factory=dict, repr=False)
    _last_end: dict[str, IssuedOrder] = field(default_factory=dict, repr=False)
    # facts() until the book changes (CommandQueue's reason: the same tuples each tick).
    _facts: list[Fact] | None = field(default=None, repr=False, compare=False)

    def issued(self, order: Order, tick: int) -> None:
        """Record ``order`` as sent (with its id, as stamped by ``send``)."""
        self._facts = None
        again = order.id in self.orders
        self.orders[order.id] = IssuedOrder(order, issued_tick=tick)
        if again:  # an id given twice keeps its first place: rebuild the indexes (rare)
            self._reindex()
            return
        self._sequence[order.id] = len(self._sequence)
        self._open[order.id] = self.orders[order.id]

    def reported(self, report: CompletionReport, tick: int) -> IssuedOrder | None:
        """Close the order ``report`` answers; None if it is not an open order of this book
        (a report on an order withdrawn meanwhile is late, not an error)."""
        state: OrderState = "done" if report.success else "failed"
        return self._close(report.reply_to or "", state, report.reason, tick)

    def withdrawn(self, order_id: str, reason: str, tick: int) -> IssuedOrder | None:
        """Close ``order_id`` as withdrawn by us; None if it was not open."""
        return self._close(order_id, "withdrawn", reason, tick)

    def undelivered(self, order_id: str, reason: str, tick: int) -> IssuedOrder | None:
        """Close ``order_id`` as lost: it was never acknowledged (the runtime abandoned it)."""
        return self._close(order_id, "lost", reason, tick)

    def lost(self, agent: str, reason: str, tick: int) -> list[IssuedOrder]:
        """Close every open order given to ``agent``, which left the run."""
        lost = self.open(agent)
        for entry in lost:
            self._close(entry.order.id, "lost", reason, tick)
        return lost

    def open(self, recipient: str | None = None) -> list[IssuedOrder]:
        """Open orders (to ``recipient`` only, if given), oldest first."""
        return [
            e for e in self._open.values() if recipient is None or e.order.recipient == recipient
        ]

    def facts(self) -> list[Fact]:
        """Open orders as ``("order_open", id, recipient, task)`` and the last end of each
        recipient's orders (the last given of those that ended) as ``("order_ended",
        recipient, task, state)``, for the planner."""
        if self._facts is not None:
            return list(self._facts)
        facts: list[Fact] = [
            ORDER_OPEN.fact(e.order.id, e.order.recipient, e.order.task)
            for e in self._open.values()
        ]
        for recipient, entry in sorted(self._last_end.items()):
            facts.append(ORDER_ENDED.fact(recipient, entry.order.task, entry.state))
        self._facts = facts
        return list(facts)

    def _close(
        self, order_id: str, state: OrderState, reason: str, tick: int
    ) -> IssuedOrder | None:
        entry = self._open.pop(order_id, None)
        if entry is None:
            return None
        self._facts = None
        entry.state = state
        entry.reason = reason
        entry.ended_tick = tick
        self._ended(entry)
        return entry

    def _ended(self, entry: IssuedOrder) -> None:
        recipient = entry.order.recipient
        last = self._last_end.get(recipient)
        if last is None or self._sequence[last.order.id] < self._sequence[entry.order.id]:
            self._last_end[recipient] = entry

    def _reindex(self) -> None:
        self._facts = None
        self._sequence = {order_id: n for n, order_id in enumerate(self.orders)}
        self._open = {i: e for i, e in self.orders.items() if e.state == "open"}
        self._last_end = {}
        for entry in self.orders.values():
            if entry.state != "open" and entry.ended_tick is not None:
                self._ended(entry)
