"""Effectively-once delivery: acks, re-sends and deduplication of the reliable message types.

ZeroMQ delivers at most once, in order, per connection: what is in flight when a connection
dies (a broker killed, a link black-holed) is lost without a word. For the types in
:data:`~warband.messaging.catalog.RELIABLE_MESSAGES` (orders, their ends, conversation turns)
sent to one agent, the actor adds:

- **on the sender**: the message carries the sender's ``ack_token`` (random, drawn when the
  actor is made) and waits in the *outbox* until the recipient's ``_Ack`` comes. Unacknowledged,
  the same frame (same id) is sent again after ``resend_after`` seconds, doubling up to 1 s,
  and again at once when the broker comes back after a restart. After ``resend_tries`` sends
  or ``resend_deadline`` seconds it is *abandoned*: counted, logged (``msg.abandoned``) and
  passed to :meth:`DeliveryMixin.on_abandoned`. A broker notice that the recipient is not
  registered yet, or that our own registration was lost, is taken as "try again", not as a
  failure, while the broker is coming back (``broker_back_grace`` s after it did);
- **on the receiver**: the actor layer answers ``_Ack`` as soon as it has decoded the frame,
  before any handler runs (the ack says "received", not "handled"), and drops a frame whose
  (sender, ack_token, id) it has seen (``msg.duplicate``), so a re-sent order never runs
  twice. The window of ids kept per sender is bounded (:data:`DEDUP_WINDOW` ids, for at most
  :data:`DEDUP_STREAMS` sender tokens, the least recently heard forgotten first).

Lockstep: a participant sends ``TickDone(N)`` only once every reliable message it sent is
acknowledged or abandoned. An ack means the frame sits in its recipient's buffer, so it is
handled at the start of tick N+1 exactly as in a run where nothing was lost: re-sends change
no agent message's id, order or tick, and a lost-then-re-sent reliable message changes nothing
an agent sees. Re-sends, acks and duplicates are not traced as sends and receives (they are
logged under their own event names), so traces compare equal.
"""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from ..exceptions import DeliveryError
from ._state import ActorState
from .addresses import BROKER_ID, GROUP_PREFIX
from .catalog import RELIABLE_MESSAGES, Message, _Ack, _Undeliverable

DEDUP_WINDOW = 10_000
"""Message ids remembered per sender token; a re-send older than that would run again.
A sender re-sends for at most ``resend_deadline`` seconds, so this holds 10,000 reliable
messages a sender sends one receiver within that time."""
DEDUP_STREAMS = 1024
"""Sender tokens (one per run of each sender) a receiver keeps a window for."""

_TRANSIENT_ALWAYS = ("rejected by broker: you have not registered", "is not keeping up")
"""Reasons a re-send may cure at any time: our registration is on its way back (a restarted
broker), or the recipient's queue is full for now."""
_TRANSIENT_REJOINING = "is connected"
"""``no agent 'X' is connected``: cured by a re-send while peers register again after a broker
restart; after that, the recipient is gone and the notice is final."""


@dataclass
class Outgoing:
    """A reliable message not acknowledged yet."""

    message: Message
    frame: bytes
    first_sent: float
    due: float
    tries: int = 1


class DedupWindow:
    """The ids of reliable messages received, per (sender, ack_token), bounded."""

    def __init__(self, per_stream: int = DEDUP_WINDOW, streams: int = DEDUP_STREAMS) -> None:
        self.per_stream = per_stream
        self.streams = streams
        self._seen: OrderedDict[tuple[str, str], OrderedDict[str, None]] = OrderedDict()

    def seen_before(self, sender: str, token: str, message_id: str) -> bool:
        """Record ``message_id``; True when it was recorded already (a repeat)."""
        key = (sender, token)
        ids = self._seen.get(key)
        if ids is None:
            ids = self._seen[key] = OrderedDict()
            if len(self._seen) > self.streams:
                self._seen.popitem(last=False)
        else:
            self._seen.move_to_end(key)
        if message_id in ids:
            return True
        ids[message_id] = None
        if len(ids) > self.per_stream:
            ids.popitem(last=False)
        return False


class DeliveryMixin(ActorState):
    """The effectively-once part of :class:`~warband.messaging.actor.Actor` (module docstring)."""

    reliable_types: ClassVar[frozenset[type[Message]]] = RELIABLE_MESSAGES
    """Types this actor sends reliably (to one agent); empty turns re-sending off."""
    resend_after: ClassVar[float] = 0.2
    """Seconds before the first re-send; each later wait doubles, up to 1 s."""
    resend_tries: ClassVar[int] = 8
    """Sends (the first included) before a message is abandoned."""
    resend_deadline: ClassVar[float] = 15.0
    """Seconds after the first send after which a message is abandoned whatever the tries."""
    broker_back_grace: ClassVar[float] = 5.0
    """Seconds after the broker came back during which "not connected" means "not yet"."""

    _token: str
    _outbox: dict[str, Outgoing]
    _dedup: DedupWindow
    _on_delivered: list[Callable[[], None]]
    _resend_handle: asyncio.TimerHandle | None
    _broker_back_at: float | None

    def _init_delivery(self) -> None:
        self._token = os.urandom(4).hex()
        self._outbox = {}
        self._dedup = DedupWindow()
        self._on_delivered = []
        self._resend_handle = None
        self._broker_back_at = None

    # --- hook -----------------------------------------------------------------------------------

    def on_abandoned(self, message: Message, reason: str) -> None:
        """Called when a reliable ``message`` of ours was never acknowledged (already logged).

        It may have arrived (only its ack was lost) or not: warband does not know, and never
        sends it again. The default passes a :class:`DeliveryError` to :meth:`on_failure`;
        an agent reports it to its superior instead.
        """
        self.on_failure(
            DeliveryError(
                f"{type(message).__name__} {message.id} to {message.recipient!r} was abandoned: "
                f"{reason}; the recipient may be gone or unreachable"
            ),
            message,
        )

    # --- sender ---------------------------------------------------------------------------------

    def _ack_token(self, message: Message) -> str | None:
        """The ack token to stamp on ``message``: ours for a reliable one, else None."""
        if type(message) in self.reliable_types and not message.recipient.startswith(GROUP_PREFIX):
            return self._token
        return None

    def _track(self, message: Message, frame: bytes) -> None:
        """Keep ``message`` (just sent as ``frame``) until its ack comes."""
        now = asyncio.get_running_loop().time()
        self._outbox[message.id] = Outgoing(message, frame, now, now + self.resend_after)
        self._schedule_resend()

    def _schedule_resend(self) -> None:
        if self._resend_handle is not None or not self._outbox:
            return
        loop = asyncio.get_running_loop()
        due = min(entry.due for entry in self._outbox.values())
        self._resend_handle = loop.call_at(due, self._resend_due)

    def _resend_due(self) -> None:
        self._resend_handle = None
        if self._stopping or self._connection is None or self._connection.closed:
            return
        now = asyncio.get_running_loop().time()
        broker_lost = self._liveness.lost
        for message_id, entry in list(self._outbox.items()):
            if entry.due > now:
                continue
            if broker_lost and now - entry.first_sent < self.resend_deadline:
                # Nothing gets through until the broker is back, and then everything is sent
                # again at once (_resend_all): a try now would only queue another copy.
                entry.due = now + self.resend_after
                continue
            if entry.tries >= self.resend_tries or now - entry.first_sent >= self.resend_deadline:
                self._abandon(
                    message_id,
                    f"no ack after {entry.tries} sends in {now - entry.first_sent:.1f} s",
                )
            else:
                self._resend(entry, now)
        self._schedule_resend()

    def _resend(self, entry: Outgoing, now: float) -> None:
        entry.tries += 1
        entry.due = now + min(1.0, self.resend_after * 2 ** (entry.tries - 1))
        self.stats.resent += 1
        message = entry.message
        self.log.info(
            "msg.resend",
            msg_id=message.id,
            msg_type=type(message).__name__,
            recipient=message.recipient,
            tries=entry.tries,
        )
        self._connection.send(entry.frame)

    def _resend_all(self) -> None:
        """Send every unacknowledged message again now, oldest first (the broker is back)."""
        self._broker_back_at = asyncio.get_running_loop().time()
        if self._connection is None or self._connection.closed:
            return
        now = self._broker_back_at
        for entry in list(self._outbox.values()):
            self._resend(entry, now)

    def _abandon(self, message_id: str, reason: str) -> None:
        entry = self._outbox.pop(message_id, None)
        if entry is None:
            return
        message = entry.message
        self.stats.abandoned += 1
        self.log.error(
            "msg.abandoned",
            msg_id=message.id,
            msg_type=type(message).__name__,
            recipient=message.recipient,
            reason=reason,
        )
        pending = self._pending.pop(message_id, None)
        if pending is not None:
            self._fail(pending, DeliveryError(f"{type(message).__name__} {message_id}: {reason}"))
        self._spawn(lambda: self.on_abandoned(message, reason), message)
        self._settled()

    def _after_delivered(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once no reliable message of ours waits for its ack (now if none)."""
        if self._outbox:
            self._on_delivered.append(callback)
        else:
            callback()

    def _settled(self) -> None:
        if self._outbox or not self._on_delivered:
            return
        callbacks, self._on_delivered = self._on_delivered, []
        for callback in callbacks:
            callback()

    def _stop_delivery(self) -> None:
        if self._resend_handle is not None:
            self._resend_handle.cancel()
            self._resend_handle = None
        if self._outbox:
            self.log.warning("msg.unacknowledged_at_stop", count=len(self._outbox))

    # --- receiver -------------------------------------------------------------------------------

    def _on_receipt(self, message: Message) -> bool:
        """Handle the delivery part of a decoded frame; False when nothing else should see it.

        An ``_Ack`` settles our outbox; a broker notice about a reliable message of ours may
        only mean "try again"; a reliable message is acknowledged, and dropped if a repeat.
        """
        if isinstance(message, _Ack):
            self._acked(message)
            return False
        if isinstance(message, _Undeliverable):
            return self._notice_about_ours(message)
        if message.ack_token is None:
            return True
        self.send(_Ack(recipient=message.sender, message_id=message.id))
        if self._dedup.seen_before(message.sender, message.ack_token, message.id):
            self.stats.duplicates += 1
            self.log.info(
                "msg.duplicate",
                msg_id=message.id,
                msg_type=type(message).__name__,
                sender=message.sender,
            )
            return False
        return True

    def _acked(self, ack: _Ack) -> None:
        entry = self._outbox.get(ack.message_id)
        if entry is None:
            return  # a second ack (for a re-send), or for a message we already abandoned
        if entry.message.recipient != ack.sender:
            self.stats.rejected += 1
            self.log.error(
                "msg.rejected",
                peer=ack.sender,
                msg_type="_Ack",
                msg_id=ack.id,
                reason=f"acks {ack.message_id}, which was sent to {entry.message.recipient!r}",
            )
            return
        del self._outbox[ack.message_id]
        self._settled()

    def _notice_about_ours(self, notice: _Undeliverable) -> bool:
        """True when the notice goes on to the usual path (pending request, on_undeliverable)."""
        entry = self._outbox.get(notice.message_id)
        if entry is None or notice.sender != BROKER_ID:
            return True
        now = asyncio.get_running_loop().time()
        rejoining = self._liveness.lost or self._liveness.rejoining
        recently_back = (
            self._broker_back_at is not None and now - self._broker_back_at < self.broker_back_grace
        )
        transient = any(reason in notice.reason for reason in _TRANSIENT_ALWAYS) or (
            _TRANSIENT_REJOINING in notice.reason and (rejoining or recently_back)
        )
        if transient and now - entry.first_sent < self.resend_deadline:
            self.log.info(
                "msg.retry",
                msg_id=notice.message_id,
                msg_type=notice.message_type,
                recipient=notice.target,
                reason=notice.reason,
            )
            entry.due = min(entry.due, now + self.resend_after)
            if self._resend_handle is not None:
                self._resend_handle.cancel()
                self._resend_handle = None
            self._schedule_resend()
            return False
        del self._outbox[notice.message_id]
        self._settled()
        return True
