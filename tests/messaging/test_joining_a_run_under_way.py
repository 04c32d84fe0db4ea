"""An actor that joins a run under way (a restarted agent, an agent started late) gets the
clock's Tick right behind the broker's _Registered: its ``on_start`` still runs, to the end,
before its first ``on_tick``.

The loop is held on purpose while the broker (its own thread) answers the registration and
routes a Tick behind it, so both frames wait in the actor's socket when its loop turns again:
the order the test needs is made, not hoped for.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import zmq

from warband.messaging.actor import Actor, listening_to_sends
from warband.messaging.addresses import BROKER_ID, TICK_GROUP
from warband.messaging.broker import Broker
from warband.messaging.catalog import Message, Tick, _Register, _Registered
from warband.messaging.codec import Codec

WAIT_S = 10.0
"""The most any step waits for the broker's thread (it takes milliseconds)."""


class Recorder(Actor):
    """Notes its hooks in the order they ran; on_start yields to the loop on its way."""

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.events: list[str] = []

    async def on_start(self) -> None:
        self.events.append("on_start begins")
        await asyncio.sleep(0)
        self.events.append("on_start ends")

    def on_tick(self, tick: int) -> None:
        self.events.append(f"on_tick {tick}")


def _hold_loop_until(done: object, what: str) -> None:
    """Block the event loop (no callback runs) until ``done()`` is true."""
    deadline = time.monotonic() + WAIT_S
    while not done():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"the broker did not {what} within {WAIT_S} s"
        time.sleep(0.005)


async def test_a_tick_that_comes_with_registered_waits_until_on_start_has_finished() -> None:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    broker = Broker(f"inproc://join-{uuid.uuid4().hex[:8]}", context=context)
    broker.start()
    codec = Codec()
    clock = context.socket(zmq.DEALER)
    clock.setsockopt(zmq.ROUTING_ID, b"clock")
    clock.setsockopt(zmq.LINGER, 0)
    clock.setsockopt(zmq.RCVTIMEO, int(WAIT_S * 1000))
    clock.connect(broker.endpoint)
    actor = Recorder("late")
    registers: list[Message] = []
    task: asyncio.Task[None] | None = None
    try:
        clock.send(codec.encode(_Register(sender="clock", recipient=BROKER_ID, id="clock:c1")))
        assert isinstance(codec.decode(clock.recv()), _Registered)

        with listening_to_sends(lambda m: registers.append(m) if m.sender == "late" else None):
            task = asyncio.create_task(actor.run(broker.endpoint, context=context))
            async with asyncio.timeout(WAIT_S):
                while not registers:  # until the actor sent its _Register and waits
                    await asyncio.sleep(0)
        assert isinstance(registers[0], _Register)

        # The loop is held from here: the answer and the Tick queue up in the actor's socket.
        _hold_loop_until(lambda: "late" in broker.stats.peers, "register the actor")
        tick = Tick(sender="clock", recipient=f"#{TICK_GROUP}", id="clock:1", seq=1, tick=1)
        clock.send(codec.encode(tick))
        _hold_loop_until(lambda: broker.stats.routed >= 1, "route the Tick")

        async with asyncio.timeout(WAIT_S):
            while "on_tick 1" not in actor.events:
                await asyncio.sleep(0.01)
    finally:
        actor.stop()
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)
        clock.close(linger=0)
        await asyncio.to_thread(broker.stop)
        await asyncio.to_thread(context.term)

    assert ["on_start begins", "on_start ends", "on_tick 1"] == actor.events
