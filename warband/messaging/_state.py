"""What every part of an actor shares: its state, declared once for the type checker.

:class:`~warband.messaging.actor.Actor` is put together from one module per concern (timers,
requests and conversations, broker liveness, who may send what, the lockstep tick). Each of those
mixins reads and writes the same actor state, which ``Actor.__init__`` sets; this class only
declares it, so each module type-checks on its own. It has no behaviour.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from .catalog import Message

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ._liveness import BrokerLiveness
    from ._requests import Pending
    from ._timers import Timer
    from .otel import ActorTelemetry

M = TypeVar("M", bound=Message)
Mode = Literal["lockstep", "realtime"]
"""``lockstep``: ticks wait for every participant (deterministic); ``realtime``: on the clock."""


@dataclass
class ActorStats:
    """Counters an actor keeps; reported at the end of a run."""

    sent: int = 0
    received: int = 0
    rejected: int = 0
    undeliverable: int = 0
    handler_failures: int = 0
    late_replies: int = 0
    """Replies that came after their conversation closed (time-out, peer gone): dropped."""
    resent: int = 0
    """Reliable messages sent again because no ack came in time (or the broker came back)."""
    duplicates: int = 0
    """Reliable messages received again (a re-send of one already received): dropped."""
    abandoned: int = 0
    """Reliable messages given up on, unacknowledged (see ``on_abandoned``)."""
    conflated: int = 0
    """Percepts dropped for a newer one from the same sender before they were handled
    (backpressure, see ``_mailbox``); no other message is ever dropped."""
    would_block: int = 0
    """Sends refused because the queue to the broker was full (EAGAIN): each one raised
    DeliveryError to the sender and logged ``msg.would_block``."""
    mailbox_peak: int = 0
    """The most messages the mailbox held unhandled at once (bound: ``mailbox_limit``)."""


class ActorState:
    """The attributes and helpers the parts of an actor share (see the module docstring)."""

    id: str
    tick: int
    mode: Mode
    clock_id: str
    stats: ActorStats
    log: Any
    lockstep_participant: ClassVar[bool]
    percept_deltas: ClassVar[bool]
    _connection: Any
    _seq: int
    _buffer: list[Message]
    _pending: dict[str, Pending]
    _closed_conversations: set[str]
    _closed_order: collections.deque[str]
    _watching: set[str]
    _timers: list[Timer]
    _timer_order: itertools.count[int]
    _tracked: set[asyncio.Task[Any]]
    _runnable: int
    _idle: asyncio.Event
    _registered: asyncio.Event
    _stopping: bool
    _stop_reason: str
    _tick_done_sent: int
    _tick_running: bool
    _liveness: BrokerLiveness
    _fatal: BaseException | None
    _otel: ActorTelemetry | None

    if TYPE_CHECKING:

        def send(self, message: M) -> M: ...

        def _send(self, message: M, *, about_to_wait: bool) -> M: ...

        def reply(self, to: Message, message: M) -> M: ...

        def stop(self, reason: str = "stopped") -> None: ...

        def on_tick(self, tick: int) -> Awaitable[None] | None: ...

        def call_later(self, delay: float, callback: Callable[[], Any]) -> Timer: ...

        def _spawn(
            self, call: Callable[[], Any], message: Message | None
        ) -> asyncio.Task[Any] | None: ...

        async def _quiesce(self) -> None: ...

        def _deliver(self, message: Message) -> None: ...

        def _registration(self) -> Message: ...

        def on_undeliverable(self, notice: Any) -> None: ...

        def _fire_due_timers(self, tick: int) -> None: ...

        def _expire_deadlines(self, tick: int) -> None: ...

        def on_failure(self, error: BaseException, message: Message | None) -> None: ...

        def _fail(self, pending: Pending, error: BaseException) -> None: ...

        def _after_delivered(self, callback: Callable[[], None]) -> None: ...

        def _resend_all(self) -> None: ...
