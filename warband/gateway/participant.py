"""One WebSocket client's place in a run: a warband actor that speaks for it.

The gateway gives each client an :class:`~warband.messaging.Actor` of its own, with the
client's agent id. The actor does what PROTOCOL.md asks of every participant, so the client
does not have to: it registers (and again after a broker restart), pings the broker, answers
``_RollCall`` with ``_Ready`` and ``_Shutdown`` with ``_Stats``, acknowledges every reliable
message it receives and drops repeats, makes the client's own reliable messages reliable
(``ack_token``, re-sends, ``TickDone`` only once they are acknowledged), and stamps the
envelope (``sender``, ``id``, ``seq``, ``tick``).

What is left to the client: it receives every catalog message addressed to it (and the
``Tick`` of each lockstep tick), and sends catalog messages and ``TickDone``.

- **Lockstep** (a client that joins ``ticks``): the actor buffers what reaches it and, at tick
  N, gives the client the messages stamped before N in (tick, sender, seq) order, then ``Tick``
  N; it sends what the client sends until the client's ``TickDone``, stamped N; what the client
  sends after its ``TickDone`` waits for the next tick. A client that does not finish a tick
  within ``tick_timeout`` seconds is dropped, so a stuck client never holds the run.
- **Ids**: the wire ids are the actor's (``<agent>:<seq>``, unique, so no receiver mistakes one
  message for a repeat of another). A client may set its own ``id`` on what it sends; the
  actor then writes that id back where a message names the client's: ``reply_to``,
  ``_Undeliverable.message_id``, and it translates ``WithdrawOrder.order_id`` on the way out.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from ..exceptions import DeliveryError, ProtocolError
from ..messaging.actor import Actor
from ..messaging.catalog import (
    Message,
    Tick,
    TickDone,
    WithdrawOrder,
    _FinishRun,
    _Leave,
    _Left,
    _Register,
    _Registered,
    _Shutdown,
    _Undeliverable,
    _Watch,
)
from .wire import JsonCodec

GATEWAY_SENDER = "gateway"
"""The ``sender`` of the notices the gateway itself writes to a client (``_Undeliverable``)."""
REJECTED = "rejected by gateway: "
"""How the reason of a notice about a message the gateway refused starts."""
ID_MEMORY = 10_000
"""Client-chosen message ids the actor remembers, to write them back in replies."""

CLIENT_CONTROL: tuple[type[Message], ...] = (_Register, _Leave, _Watch, _FinishRun)
"""The control messages a client may send: changing its groups, leaving, watching a peer,
asking the clock to end the run. The others are the gateway's to send."""

Outbox = Callable[[str], None]
"""Takes the JSON text of one message for the client (and drops a client that is behind)."""
Drop = Callable[[str], None]
"""Drops the client with a reason."""


class ClientActor(Actor):
    """Speaks for one WebSocket client in the run (see the module docstring)."""

    def __init__(
        self,
        agent_id: str,
        *,
        groups: Sequence[str],
        watch: Sequence[str],
        lockstep: bool,
        outbox: Outbox,
        drop: Drop,
        tick_timeout: float,
        held_limit: int,
        codec: JsonCodec,
    ) -> None:
        super().__init__(agent_id, groups=groups)
        self.lockstep_participant = lockstep  # type: ignore[misc]  # this client only
        self.watch = list(watch)
        self.tick_timeout = tick_timeout
        self.held_limit = held_limit
        self._to_client_text = outbox
        self._drop = drop
        self._json = codec
        self._tick_message: Tick | None = None
        self._tick_done: asyncio.Future[None] | None = None
        self._held: list[Message] = []
        self._wire_of: OrderedDict[str, str] = OrderedDict()
        self._client_of: OrderedDict[str, str] = OrderedDict()
        self.from_client = 0
        self.to_client = 0
        self.register_id = ""
        """The ``id`` of the client's ``_Register``, which its ``_Registered`` answers."""

    # --- from the run to the client -------------------------------------------------------------

    def handler_for(self, message_type: type[Message]) -> Callable[[Any], Any] | None:
        return self._forward

    def _forward(self, message: Message) -> None:
        replaced: dict[str, Any] = {}
        if message.reply_to is not None and message.reply_to in self._client_of:
            replaced["reply_to"] = self._client_of[message.reply_to]
        if isinstance(message, _Undeliverable) and message.message_id in self._client_of:
            replaced["message_id"] = self._client_of[message.message_id]
        if replaced:
            message = msgspec.structs.replace(message, **replaced)
        self.to_client += 1
        self._to_client_text(self._json.encode(message))

    def on_undeliverable(self, notice: _Undeliverable) -> None:
        self._forward(notice)

    def on_abandoned(self, message: Message, reason: str) -> None:
        self.tell_client(message, f"abandoned: {reason}")

    def watched_peers(self) -> list[str]:
        return list(self.watch)

    async def _handle_immediate(self, message: Message) -> None:
        if isinstance(message, _Registered) and not self._registered.is_set():
            # The client's answer, first of all it is sent: a Tick may follow at once.
            self._forward(msgspec.structs.replace(message, reply_to=self.register_id or None))
        elif isinstance(message, Tick):
            # Never before the actor runs: a Tick read with the broker's _Registered waits in
            # the inbox until on_start has finished (Actor._drain_inbox).
            self._tick_message = message
        elif isinstance(message, _Shutdown) or (
            isinstance(message, _Left) and message.agent in self.watch
        ):
            self._forward(message)
        await super()._handle_immediate(message)

    def stop(self, reason: str = "stopped") -> None:
        super().stop(reason)
        if self._tick_done is not None and not self._tick_done.done():
            self._tick_done.set_result(None)  # nobody will answer this tick any more

    async def on_tick(self, tick: int) -> None:
        if self.stopping:
            return
        held, self._held = self._held, []
        for message in held:
            self._send_for_client(message)
        if self._tick_message is not None:
            self._forward(self._tick_message)
        if not self.lockstep_participant or self.mode != "lockstep":
            return
        # Awaiting the client breaks no lockstep rule: the tick waits for it as for any
        # handler, and what the client sends is stamped with this tick whenever it comes.
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._tick_done = done
        try:
            await asyncio.wait_for(done, self.tick_timeout)
        except TimeoutError:
            self._drop(
                f"did not send TickDone for tick {tick} within {self.tick_timeout:g} s "
                "(--tick-timeout): answer every Tick with TickDone"
            )
        finally:
            self._tick_done = None

    # --- from the client to the run -------------------------------------------------------------

    def from_text(self, text: str | bytes) -> None:
        """Take one JSON message the client sent: check it, then send it (or hold it until the
        next tick); a message that cannot go is answered with ``_Undeliverable``."""
        try:
            message = self._json.decode(text)
        except ProtocolError as error:
            self.log.error("gateway.rejected", peer=self.id, reason=str(error))
            self._notice(
                _Undeliverable(message_id="", message_type="", target="", reason=f"{error}")
            )
            return
        self.take(message)

    def take(self, message: Message) -> None:
        """Send ``message`` from the client, or hold it until the next tick, or refuse it."""
        refusal = self._refusal_of_client(message)
        if refusal is not None:
            self.log.error(
                "gateway.rejected",
                peer=self.id,
                msg_type=type(message).__name__,
                msg_id=message.id,
                reason=refusal,
            )
            self.tell_client(message, refusal)
            return
        self.from_client += 1
        if isinstance(message, TickDone):
            if self._tick_done is not None and not self._tick_done.done():
                self._tick_done.set_result(None)
            return
        if isinstance(message, CLIENT_CONTROL):
            self._control(message)
            return
        waiting = self.lockstep_participant and self.mode == "lockstep" and self._tick_done is None
        if waiting:
            if len(self._held) >= self.held_limit:
                self._drop(
                    f"sent more than {self.held_limit} messages between two ticks (--queue): "
                    "send during a tick, between Tick and TickDone"
                )
                return
            self._held.append(message)
            return
        self._send_for_client(message)

    def _refusal_of_client(self, message: Message) -> str | None:
        kind = type(message).__name__
        if message.sender and message.sender != self.id:
            return (
                f"sender {message.sender!r} is not your agent id {self.id!r}: leave sender out "
                "or set it to your id"
            )
        if kind.startswith("_") and not isinstance(message, CLIENT_CONTROL):
            allowed = ", ".join(c.__name__ for c in CLIENT_CONTROL)
            return (
                f"{kind} is the gateway's to send, not a client's: a client sends catalog "
                f"messages, TickDone, and of the control messages only {allowed}"
            )
        addressed = TickDone | _Register | _Leave | _Watch | _FinishRun  # the gateway knows where
        if not isinstance(message, addressed) and not message.recipient:
            return f"{kind} has no recipient: set 'recipient' to an agent id or #group"
        return None

    def _control(self, message: Message) -> None:
        if isinstance(message, _Register):
            self.watch = list(message.watch)
            self.groups = tuple(g for g in message.groups if g != "ticks")
            self.update_registration()
        elif isinstance(message, _Leave):
            self.stop(message.reason or "the client left")
        elif isinstance(message, _Watch):
            if message.agent not in self.watch:
                self.watch.append(message.agent)
            self.update_registration()
        elif isinstance(message, _FinishRun):
            self.finish_run(message.reason or f"{self.id} asked to finish")

    def _send_for_client(self, message: Message) -> None:
        client_id = message.id
        if isinstance(message, WithdrawOrder) and message.order_id in self._wire_of:
            message = msgspec.structs.replace(message, order_id=self._wire_of[message.order_id])
        try:
            stamped = self.send(message)
        except DeliveryError as error:
            self.tell_client(message, f"{REJECTED}{error}")
            return
        if client_id:
            self._remember(client_id, stamped.id)

    def _remember(self, client_id: str, wire_id: str) -> None:
        self._wire_of[client_id] = wire_id
        self._client_of[wire_id] = client_id
        while len(self._wire_of) > ID_MEMORY:
            _, old_wire = self._wire_of.popitem(last=False)
            self._client_of.pop(old_wire, None)

    def tell_client(self, message: Message, reason: str) -> None:
        """Write the client an ``_Undeliverable`` about its ``message`` (from the gateway)."""
        if not reason.startswith((REJECTED, "abandoned")):
            reason = REJECTED + reason
        message_id = self._client_of.get(message.id, message.id)
        self._notice(
            _Undeliverable(
                message_id=message_id,
                message_type=type(message).__name__,
                target=message.recipient,
                reason=reason,
            )
        )

    def _notice(self, notice: _Undeliverable) -> None:
        if not notice.reason.startswith((REJECTED, "abandoned")):
            notice = msgspec.structs.replace(notice, reason=REJECTED + notice.reason)
        stamped = msgspec.structs.replace(
            notice, sender=GATEWAY_SENDER, recipient=self.id, tick=self.tick
        )
        self.to_client += 1
        self._to_client_text(self._json.encode(stamped))


__all__ = ["CLIENT_CONTROL", "GATEWAY_SENDER", "REJECTED", "ClientActor"]
