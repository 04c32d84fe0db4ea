"""Who may send what: control messages are obeyed only from the peer entitled to send them.

Ticks, roll calls and shutdowns come from the actor's clock; registration answers, pongs,
departure notices and undeliverable notices from the broker (PROTOCOL.md, "Who may send what").
The broker already checks that a frame's ``sender`` is its connection's id, so checking the
sender here is enough.
"""

from __future__ import annotations

from ._state import ActorState
from .addresses import BROKER_ID
from .catalog import Message, Tick, _Left, _Pong, _Registered, _RollCall, _Shutdown, _Undeliverable

_FROM_CLOCK: frozenset[type[Message]] = frozenset({Tick, _RollCall, _Shutdown})
_FROM_BROKER: frozenset[type[Message]] = frozenset({_Registered, _Undeliverable, _Pong, _Left})


class ControlMixin(ActorState):
    """The part of :class:`~warband.messaging.actor.Actor` that refuses control messages from
    peers not entitled to send them."""

    def _refusal(self, message: Message) -> str | None:
        """Why ``message`` is not obeyed, or None when it may be.

        Control messages are obeyed only from the peer entitled to send them (PROTOCOL.md,
        "Who may send what"): ticks, roll calls and shutdowns from our clock; registration
        answers, pongs and departure notices from the broker. An ``_Undeliverable`` comes from
        the broker, or from the peer we sent a request to (it refuses a request it does not
        handle). The other control messages are for the broker or the clock, never an agent.
        """
        kind = type(message)
        if kind in _FROM_CLOCK:
            if message.sender == self.clock_id:
                return None
            return f"{kind.__name__} is obeyed only from the clock {self.clock_id!r}"
        if kind in _FROM_BROKER:
            if message.sender == BROKER_ID or self._answers_our_request(message):
                return None
            return f"{kind.__name__} is obeyed only from the broker"
        if kind.__name__.startswith("_"):
            return f"{kind.__name__} is for the broker or the clock, not for an agent"
        return None

    def _answers_our_request(self, message: Message) -> bool:
        if not isinstance(message, _Undeliverable):
            return False
        pending = self._pending.get(message.message_id)
        return pending is not None and pending.message.recipient == message.sender
