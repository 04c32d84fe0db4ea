"""Backpressure: an actor's bounded mailbox, where Percepts may be conflated and nothing else is
ever dropped.

The *mailbox* holds the messages an actor has received and not handled yet: those waiting for
their tick (lockstep's buffer) and Percepts waiting for the sender's previous Percept to be
handled (realtime). Its bound is the actor class's ``mailbox_limit``
(:data:`DEFAULT_MAILBOX_LIMIT` messages unless a subclass sets another). Frames read from the
socket ahead of decoding are bounded apart, by the same number (the connection's inbox).

A Percept says what its sender sees *now*, so only the newest of a sender's Percepts matters
to an agent that is behind; every other message (orders, reports, conversation turns, acks,
control messages) carries something no later message repeats.

- **Realtime**: while an async Percept handler runs for a sender's Percept, the next Percept
  from that sender waits (at most one per sender); a newer one replaces it, and the one
  replaced is counted as conflated. A handler that does not await finishes before the next
  Percept is read, so nothing ever waits for it.
- **Lockstep**: messages wait in the buffer for their tick. When the buffer reaches the bound,
  the older Percepts of each sender in it are conflated into the newest one; the tick then
  handles only that one, in its place in (tick, sender, seq) order. Lockstep runs stay
  deterministic below the bound.
- **Everything else is never dropped**: when the bound is reached without a Percept to
  conflate, the message is kept all the same, and ``actor.mailbox_full`` is logged (once per
  time the mailbox fills up). The connection stops reading when its own inbox holds
  ``mailbox_limit`` frames (ZeroMQ then queues them, and past the broker's high-water mark the
  broker answers the sender with ``_Undeliverable``, counted on both sides).

Every conflated Percept is counted (``ActorStats.conflated``, the ``conflated`` counts of
``_Stats`` and of ``warband run --json``), and logged: ``msg.conflated`` with the running count
at the 1st, 10th, 100th ... conflation, so a flood does not flood the log too.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ._state import ActorState
from .catalog import Message, Percept

DEFAULT_MAILBOX_LIMIT = 10_000
"""Messages an actor holds unhandled before it conflates Percepts (see the module docstring)."""


@dataclass
class Mailbox:
    """What the mailbox part of an actor keeps besides the buffer and the connection's inbox."""

    busy: set[str] = field(default_factory=set)
    """Senders whose Percept is being handled right now (realtime)."""
    waiting: dict[str, Percept] = field(default_factory=dict)
    """The newest Percept of each busy sender, handled once the current one is done."""
    full: bool = False
    """True from the moment the bound was reached until the mailbox is below it again."""
    next_report: int = 1
    """The conflated count at which the next ``msg.conflated`` event is logged."""


class MailboxMixin(ActorState):
    """The mailbox part of :class:`~warband.messaging.actor.Actor` (module docstring)."""

    mailbox_limit: ClassVar[int]
    _mailbox: Mailbox

    def mailbox_size(self) -> int:
        """Messages received and not handled yet: the lockstep buffer and the Percepts waiting
        in realtime."""
        return len(self._buffer) + len(self._mailbox.waiting)

    def _note_mailbox(self) -> None:
        size = self.mailbox_size()
        if size > self.stats.mailbox_peak:
            self.stats.mailbox_peak = size

    # --- lockstep -------------------------------------------------------------------------------

    def _buffer_message(self, message: Message) -> None:
        """Keep ``message`` for its tick; at the bound, conflate the buffer's Percepts first."""
        if len(self._buffer) >= self.mailbox_limit:
            self._conflate_buffer()
            if len(self._buffer) >= self.mailbox_limit and not self._mailbox.full:
                self._mailbox.full = True
                self.log.warning(
                    "actor.mailbox_full",
                    limit=self.mailbox_limit,
                    size=self.mailbox_size(),
                    kept=type(message).__name__,
                    reason="no Percept left to conflate; nothing else is ever dropped",
                )
        elif self._mailbox.full and len(self._buffer) < self.mailbox_limit // 2:
            self._mailbox.full = False
        self._buffer.append(message)
        self._note_mailbox()

    def _conflate_buffer(self) -> None:
        newest: dict[str, Percept] = {}
        for message in self._buffer:
            if isinstance(message, Percept):
                newest[message.sender] = message  # the buffer is in arrival order
        if not newest:
            return
        kept: list[Message] = []
        for message in self._buffer:
            if isinstance(message, Percept) and newest[message.sender] is not message:
                self._conflated(message, newest[message.sender])
            else:
                kept.append(message)
        self._buffer = kept

    # --- realtime -------------------------------------------------------------------------------

    def _hold_percept(self, percept: Percept) -> bool:
        """True when ``percept`` must wait: its sender's previous Percept is still handled.

        It then replaces the one that waited (conflated), if any.
        """
        sender = percept.sender
        if sender not in self._mailbox.busy:
            return False
        older = self._mailbox.waiting.get(sender)
        if older is not None:
            self._conflated(older, percept)
        self._mailbox.waiting[sender] = percept
        self._note_mailbox()
        return True

    def _percept_started(self, percept: Percept, task: asyncio.Task[Any] | None) -> None:
        """The handler of ``percept`` runs as ``task`` (None: it already finished)."""
        if task is None:
            return
        sender = percept.sender
        self._mailbox.busy.add(sender)

        def done(_: asyncio.Task[Any]) -> None:
            self._mailbox.busy.discard(sender)
            following = self._mailbox.waiting.pop(sender, None)
            if following is not None and not self._stopping:
                self._deliver(following)

        task.add_done_callback(done)

    # --- counting -------------------------------------------------------------------------------

    def _conflated(self, dropped: Percept, newer: Percept) -> None:
        self.stats.conflated += 1
        if self.stats.conflated >= self._mailbox.next_report:
            self._mailbox.next_report *= 10
            self.log.warning(
                "msg.conflated",
                peer=dropped.sender,
                msg_id=dropped.id,
                newer_id=newer.id,
                conflated=self.stats.conflated,
                reason="a newer Percept from the same sender came before this one was handled",
            )
