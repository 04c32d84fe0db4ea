"""Actors stepped tick by tick with no broker and no sockets: the engine of
:class:`warband.testing.Drive`.

A detached actor's connection is a :class:`_Outbox`: what the actor sends is encoded to its
MessagePack frame as always, and the frame is decoded again, as its recipient would decode it
(a list argument comes back a tuple), and kept. A tick runs the actor's own lockstep tick body
(buffered messages in (tick, sender, seq) order, timers, request time-outs, ``on_tick``) on a
private event loop, so handlers that await (a request, a conversation) work as in a run.
Messages between detached actors reach their recipients at the next tick, as under a lockstep
clock; broadcasts reach the detached members of the group. Nothing is acknowledged or re-sent:
there is no broker to lose anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence

import msgspec

from .actor import Actor
from .addresses import GROUP_PREFIX
from .catalog import Heartbeat, Message, TickDone
from .codec import Codec

_PLUMBING = (TickDone, Heartbeat)
"""Runtime messages a detached run keeps out of what the actors 'said'."""


def _is_plumbing(message: Message) -> bool:
    return type(message).__name__.startswith("_") or isinstance(message, _PLUMBING)


class _Outbox:
    """Stands in for an actor's connection: keeps what it sends, decoded from its frames."""

    endpoint = "detached"
    closed = False

    def __init__(self, codec: Codec) -> None:
        self._codec = codec
        self.frames: list[bytes] = []

    def send(self, frame: bytes, *, about_to_wait: bool = False) -> None:
        self.frames.append(frame)

    def take(self) -> list[Message]:
        frames, self.frames = self.frames, []
        return [self._codec.decode(frame) for frame in frames]

    def close(self) -> None:
        self.closed = True


class DetachedRun:
    """Actors stepped by :meth:`step`, each on its own outbox (see the module docstring)."""

    def __init__(self, actors: Sequence[Actor]) -> None:
        _not_in_a_running_loop()
        ids = [actor.id for actor in actors]
        if len(set(ids)) != len(ids):
            raise ValueError(f"two detached actors share an id: {sorted(ids)}")
        self.actors = {actor.id: actor for actor in actors}
        self.tick = 0
        self._loop = asyncio.new_event_loop()
        self._codec = Codec()
        self._next: list[Message] = []
        self._outboxes: dict[str, _Outbox] = {}
        self._outside = 0
        for actor in actors:
            outbox = _Outbox(self._codec)
            self._outboxes[actor.id] = outbox
            actor.mode = "lockstep"
            actor._connection = outbox
            # No broker, so no loss to guard against: nothing is tracked for acknowledgement.
            actor.reliable_types = frozenset()  # type: ignore[misc]  # this actor only
            actor._registered.set()
        for actor in actors:
            self._loop.run_until_complete(actor.on_start())
            outbox = self._outboxes[actor.id]
            self._next += self._said(outbox.take())

    def stamped(self, message: Message, sender: str) -> Message:
        """``message`` as if ``sender`` (a test, not a detached actor) had sent it last tick."""
        self._outside += 1
        who = message.sender or sender
        return msgspec.structs.replace(
            message, sender=who, id=f"{who}:x{self._outside}", seq=self._outside, tick=self.tick
        )

    def step(self, messages: Iterable[Message] = ()) -> list[Message]:
        """Run the next tick: deliver ``messages`` (stamped already) and what the actors sent
        each other last tick, then every actor's tick; return what they sent during it."""
        _not_in_a_running_loop()
        due = [*self._next, *messages]
        self.tick += 1
        for message in due:
            for actor in self._recipients(message):
                actor._buffer.append(message)
                actor.stats.received += 1
        sent: list[Message] = []
        for actor in self.actors.values():
            self._loop.run_until_complete(actor._run_tick_body(self.tick))
            sent += self._said(self._outboxes[actor.id].take())
        self._next = [m for m in sent if self._recipients(m)]
        return sent

    def _recipients(self, message: Message) -> list[Actor]:
        target = message.recipient
        if target.startswith(GROUP_PREFIX):
            group = target[len(GROUP_PREFIX) :]
            return [
                actor
                for actor in self.actors.values()
                if actor.id != message.sender and (group == "all" or group in actor.groups)
            ]
        actor = self.actors.get(target)
        return [actor] if actor is not None else []

    @staticmethod
    def _said(messages: list[Message]) -> list[Message]:
        return [m for m in messages if not _is_plumbing(m)]

    def close(self) -> None:
        """Run every actor's ``on_stop`` and close the private event loop."""
        try:
            for actor in self.actors.values():
                actor._stopping = True
                self._loop.run_until_complete(actor.on_stop())
                actor._cancel_tracked()
        finally:
            self._loop.close()


def _not_in_a_running_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(
        "detached actors run on an event loop of their own, so step them from plain code "
        "(a `def test_...`, not an `async def` one); in async code use warband.testing.run_actors"
    )


__all__ = ["DetachedRun"]
