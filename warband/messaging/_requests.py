"""Requests and conversations: ``request`` awaits a reply, ``sleep`` awaits ticks, time-outs
close a conversation on both sides, and a request no handler takes is refused at once.

A handler that awaits is *parked*: in lockstep the tick does not wait for it (it waits only for
handlers that can still run), and it becomes runnable again when its reply, time-out or wake-up
comes, which is how a lockstep tick stays deterministic with handlers that await.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

import msgspec

from ..exceptions import DeliveryError, RequestTimeout
from ._state import ActorState
from .addresses import BROKER_ID, GROUP_PREFIX
from .catalog import (
    Act,
    ActResult,
    CompletionReport,
    CooperationReply,
    EndTalk,
    Message,
    Order,
    RequestCooperation,
    RequestTalk,
    TalkReply,
    Tick,
    _Undeliverable,
    _Watch,
)

CLOSED_KEPT = 10_000
"""Closed conversations an actor remembers (for ``is_closed`` and dropping late replies)."""

NOT_HANDLED = "not handled"
"""The reason in the refusal an actor sends for a request none of its handlers takes."""


@dataclass
class Pending:
    """A request waiting for its reply: who waits, and when it times out."""

    future: asyncio.Future[Message]
    message: Message
    tracked: bool
    deadline_tick: int | None = None
    timer: asyncio.TimerHandle | None = None
    span: Any = None
    """With OpenTelemetry export: the span the request was made from, told of a time-out."""


def _refusal_of(request: Message) -> Message | None:
    """The reply that refuses ``request``, for the types that have a reply type."""
    if isinstance(request, RequestTalk):
        return TalkReply(accepted=False, reason=NOT_HANDLED)
    if isinstance(request, RequestCooperation):
        return CooperationReply(accepted=False, reason=NOT_HANDLED)
    if isinstance(request, Order):
        return CompletionReport(task=request.task, success=False, reason=NOT_HANDLED)
    if isinstance(request, Act):
        return ActResult(accepted=False, reason=NOT_HANDLED)
    return None


class RequestsMixin(ActorState):
    """The request and conversation part of :class:`~warband.messaging.actor.Actor`."""

    async def request(self, message: Message, *, timeout: float = 10) -> Message:
        """Send ``message`` and wait for the message whose ``reply_to`` is its id.

        ``timeout`` counts ticks in lockstep (a round trip takes at least two) and seconds in
        realtime. On timeout the conversation is closed on both sides (we send EndTalk) and
        :class:`RequestTimeout` is raised. If the broker cannot deliver the request, or
        reports the recipient gone while we wait (it died, left, or stopped answering its
        broker pings: stuck or cut off), :class:`DeliveryError` is raised at once and the
        conversation is closed; a reply that still comes is dropped and logged.
        """
        if message.conversation is None:
            message = msgspec.structs.replace(message, conversation=f"{self.id}:{self._seq + 1}")
        self._watch_peer(message.recipient)
        sent = self._send(message, about_to_wait=True)
        tracked = asyncio.current_task() in self._tracked
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        pending = Pending(future, sent, tracked)
        if self._otel is not None:
            pending.span = self._otel.waiting_span()
        if self.mode == "lockstep":
            pending.deadline_tick = self.tick + max(1, int(timeout))
        else:
            pending.timer = asyncio.get_running_loop().call_later(
                timeout, self._expire, sent.id, f"no reply within {timeout} s"
            )
        self._pending[sent.id] = pending
        # What _park does, inline: one coroutine less to create and resume per request.
        if tracked:
            self._runnable -= 1
            if self._runnable == 0:
                self._idle.set()
        return await future

    async def sleep(self, duration: float) -> None:
        """Wait ``duration`` ticks (lockstep) or seconds (realtime)."""
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        tracked = asyncio.current_task() in self._tracked

        def wake() -> None:
            if not future.done():
                future.set_result(Tick())
                self._mark_runnable(tracked)

        self.call_later(duration, wake)
        await self._park(future, tracked)

    async def _park(self, future: asyncio.Future[Message], tracked: bool) -> Message:
        if tracked:
            self._runnable -= 1
            if self._runnable == 0:
                self._idle.set()
        return await future

    def _mark_runnable(self, tracked: bool) -> None:
        if tracked:
            self._runnable += 1
            self._idle.clear()

    def is_closed(self, conversation: str) -> bool:
        """True when ``conversation`` was ended by EndTalk or a timeout."""
        return conversation in self._closed_conversations

    def _refuse_unhandled(self, message: Message) -> None:
        """Answer a request no handler takes, so its sender need not wait for its time-out.

        A request type gets its own reply type, refusing; any other message that looks like
        a request (it opens a conversation: ``conversation`` set, ``reply_to`` not) gets an
        ``_Undeliverable`` naming it. Replies and notices get nothing: nobody awaits an answer.
        """
        if message.reply_to is not None or type(message).__name__.startswith("_"):
            return
        refusal = _refusal_of(message)
        try:
            if refusal is not None:
                self.reply(message, refusal)
            elif message.conversation is not None:
                self.send(
                    _Undeliverable(
                        recipient=message.sender,
                        conversation=message.conversation,
                        message_id=message.id,
                        message_type=type(message).__name__,
                        target=self.id,
                        reason=NOT_HANDLED,
                    )
                )
        except DeliveryError:
            pass  # the conversation is closed: nobody waits for the answer any more

    def _resolve(self, pending: Pending, message: Message) -> None:
        if pending.timer is not None:
            pending.timer.cancel()
        if not pending.future.done():
            pending.future.set_result(message)
            self._mark_runnable(pending.tracked)

    def _fail(self, pending: Pending, error: BaseException) -> None:
        if pending.timer is not None:
            pending.timer.cancel()
        if not pending.future.done():
            pending.future.set_exception(error)
            self._mark_runnable(pending.tracked)

    def _undeliverable(self, notice: _Undeliverable) -> None:
        self.stats.undeliverable += 1
        self.log.error(
            "msg.undeliverable",
            msg_id=notice.message_id,
            msg_type=notice.message_type,
            recipient=notice.target,
            reason=notice.reason,
        )
        pending = self._pending.pop(notice.message_id, None)
        if pending is not None:
            self._fail(
                pending,
                DeliveryError(f"{notice.message_type} to {notice.target!r}: {notice.reason}"),
            )
        self.on_undeliverable(notice)

    def _close_conversation(self, conversation: str, reason: str) -> None:
        self._mark_closed(conversation)
        for message_id, pending in list(self._pending.items()):
            if pending.message.conversation == conversation:
                del self._pending[message_id]
                self._fail(pending, DeliveryError(f"conversation {conversation} {reason}"))

    def _mark_closed(self, conversation: str) -> None:
        """Remember ``conversation`` as closed; only the last CLOSED_KEPT are kept, so a peer
        sending EndTalk for made-up conversations cannot grow the set without end (a reply in
        a conversation closed longer ago is handled as an unexpected message, and logged)."""
        if conversation in self._closed_conversations:
            return
        self._closed_conversations.add(conversation)
        self._closed_order.append(conversation)
        if len(self._closed_order) > CLOSED_KEPT:
            self._closed_conversations.discard(self._closed_order.popleft())

    def _watch_peer(self, peer: str) -> None:
        """Have the broker tell us (``_Left``) when ``peer`` is gone, once per peer."""
        if peer in self._watching or peer in (self.id, self.clock_id, BROKER_ID):
            return
        if peer.startswith(GROUP_PREFIX):
            return
        self._watching.add(peer)
        self.send(_Watch(recipient=BROKER_ID, agent=peer))

    def _close_conversations_with(self, peer: str, reason: str) -> None:
        """``peer`` is gone: fail every request waiting on it and close those conversations.

        A peer found silent (stuck or cut off) may come back and answer: it is sent EndTalk so
        that it closes its side too; its late reply is dropped here (``reply.late``).
        """
        for message_id, pending in list(self._pending.items()):
            request = pending.message
            if request.recipient != peer:
                continue
            del self._pending[message_id]
            self.log.warning(
                "conversation.peer_gone",
                peer=peer,
                msg_id=request.id,
                msg_type=type(request).__name__,
                conversation=request.conversation,
                reason=reason,
            )
            if request.conversation is not None:
                self._mark_closed(request.conversation)
                if reason.startswith("silent") and not self._stopping:
                    with contextlib.suppress(DeliveryError):
                        self.send(
                            EndTalk(
                                recipient=peer,
                                conversation=request.conversation,
                                reason=f"peer gone: {reason}",
                            )
                        )
            self._fail(
                pending,
                DeliveryError(
                    f"{type(request).__name__} {request.id} to {peer!r}: the peer is gone "
                    f"({reason}); the conversation is closed"
                ),
            )

    def _late_reply(self, message: Message) -> None:
        """A reply in a conversation we closed (time-out, peer gone): nobody waits for it."""
        self.stats.late_replies += 1
        self.log.warning(
            "reply.late",
            peer=message.sender,
            msg_id=message.id,
            msg_type=type(message).__name__,
            reply_to=message.reply_to,
            conversation=message.conversation,
        )

    def _expire_deadlines(self, tick: int) -> None:
        for message_id, pending in list(self._pending.items()):
            if pending.deadline_tick is not None and pending.deadline_tick <= tick:
                self._expire(
                    message_id,
                    f"no reply within {pending.deadline_tick - pending.message.tick} ticks",
                )

    def _expire(self, message_id: str, why: str) -> None:
        pending = self._pending.pop(message_id, None)
        if pending is None:
            return
        request = pending.message
        if pending.span is not None and self._otel is not None:
            self._otel.timed_out(pending.span, request, why)
        self.log.warning(
            "request.timeout",
            msg_id=request.id,
            msg_type=type(request).__name__,
            recipient=request.recipient,
            conversation=request.conversation,
        )
        if request.conversation is not None:
            self._mark_closed(request.conversation)
            self.send(
                EndTalk(
                    recipient=request.recipient, conversation=request.conversation, reason="timeout"
                )
            )
        self._fail(
            pending,
            RequestTimeout(
                f"{type(request).__name__} {request.id} to {request.recipient!r}: {why}"
            ),
        )
