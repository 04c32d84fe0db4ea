"""Restarted participants and the clock.

A killed agent's restart that stays dead (``warband run --processes --kill AGENT@TICK``)
leaves without announcing itself to the clock, and the clock counts it gone at its goodbye,
whether the run is still on or already ending, rather than waiting for a _Stats it never sends.
A participant that crashes before the run starts is waited for as long as any participant not
ready yet, not the rejoin grace: on a busy machine its restart takes longer.

(The run ended "no final report from: scout" about one time in five when the restart's
``_Ready`` reached the clock just before the run ended: the clock then waited for its _Stats,
and had stopped watching departures, so it never heard the restart leave.)

Real broker, real sockets; the participant's incarnations are raw DEALER sockets, so the test
decides when each one connects, speaks and vanishes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq

from warband.messaging.actor import Actor
from warband.messaging.addresses import BROKER_ID, TICK_GROUP
from warband.messaging.broker import Broker
from warband.messaging.catalog import (
    Message,
    Tick,
    TickDone,
    _Leave,
    _Left,
    _Ready,
    _Register,
    _Registered,
    _Shutdown,
    _Stats,
)
from warband.messaging.clock import Clock
from warband.messaging.codec import Codec
from warband.messaging.supervisor import INCARNATION_VARIABLE

WAIT_S = 30.0
"""The most a socket waits for a frame; every step here takes milliseconds."""


class RawPeer:
    """One connection to the broker under ``peer``'s id, spoken to by hand."""

    def __init__(self, context: zmq.Context[zmq.Socket[bytes]], endpoint: str, peer: str) -> None:
        self.peer = peer
        self.codec = Codec()
        self.socket = context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.ROUTING_ID, peer.encode())
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.RCVTIMEO, int(WAIT_S * 1000))
        self.socket.connect(endpoint)
        self.sent = 0

    def send(self, message: Message) -> None:
        self.sent += 1
        self.socket.send(self.codec.encode(message))

    async def receive(self, kind: type[Message]) -> Message:
        """The next frame of type ``kind`` (others are skipped), read off the event loop."""
        while True:
            message = self.codec.decode(await asyncio.to_thread(self.socket.recv))
            if isinstance(message, kind):
                return message

    def waiting(self, kind: type[Message]) -> list[Message]:
        """The frames of type ``kind`` among those already received (all are read)."""
        read = []
        while self.socket.poll(0):
            read.append(self.codec.decode(self.socket.recv()))
        return [message for message in read if isinstance(message, kind)]

    async def register(self, *, groups: tuple[str, ...] = (TICK_GROUP,)) -> None:
        self.send(
            _Register(
                sender=self.peer,
                recipient=BROKER_ID,
                id=f"{self.peer}:c{self.sent}",
                groups=list(groups),
                watch=["*"],
            )
        )
        await self.receive(_Registered)

    def close(self) -> None:
        self.socket.close(linger=0)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[tuple[Broker, zmq.Context[zmq.Socket[bytes]]]]:
    # ipc, as in a run with processes: the broker sees a connection close when it closes.
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    running = Broker(f"ipc://{tmp_path}/broker.sock", context=context)
    running.start()
    try:
        yield running, context
    finally:
        running.stop()
        context.term()


class Quiet(Actor):
    """An agent that does nothing of its own."""


async def test_a_restart_that_stays_dead_leaves_without_announcing_itself(
    broker: tuple[Broker, zmq.Context[zmq.Socket[bytes]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    running, context = broker
    clock = RawPeer(context, running.endpoint, "clock")
    try:
        await clock.register(groups=())
        monkeypatch.setenv(INCARNATION_VARIABLE, "1")  # as in the process a supervisor restarted
        scout = Quiet("scout")
        scout.kill_at(5)
        await asyncio.wait_for(scout.run(running.endpoint, context=context), WAIT_S)

        seen: list[Message] = []
        while not (isinstance(seen[-1:][0], _Left) if seen else False):
            seen.append(await clock.receive(Message))
    finally:
        clock.close()

    # Its frames reach the clock in the order sent: a _Ready would come before the departure.
    assert [] == [m for m in seen if isinstance(m, _Ready)]
    assert _Left(agent="scout", reason="left: killed at tick 5") == msgspec_plain(seen[-1])


def msgspec_plain(left: Message) -> _Left:
    """``left`` without the broker's stamps (sender, id, tick), to compare what it says."""
    assert isinstance(left, _Left)
    return _Left(agent=left.agent, reason=left.reason)


class WaitsForTheSuspect(Clock):
    """A clock that, after tick 1, waits until it suspects ``scout`` (gone without a goodbye)
    before it goes on: so the run is on, or ending, with the suspect as the test needs."""

    def __init__(self, ticks: int) -> None:
        super().__init__(participants=["scout"], ticks=ticks, tick_timeout=WAIT_S)
        # A grace and a shutdown wait far longer than the test: waiting them out fails it.
        self.rejoin_grace = 120.0
        self.shutdown_timeout = 60.0
        self.suspected = asyncio.Event()
        self.last_tick = asyncio.Event()

    async def advance(self, tick: int) -> None:
        if tick == 1:
            while "scout" not in self._suspects:
                await asyncio.sleep(0.01)
            self.suspected.set()
        if tick == self.max_ticks:
            self.last_tick.set()


@pytest.mark.parametrize("when", ["mid_run", "as_the_run_ends"])
async def test_the_clock_counts_a_suspect_gone_when_its_restart_leaves(
    broker: tuple[Broker, zmq.Context[zmq.Socket[bytes]]], when: str
) -> None:
    running, context = broker
    ending = when == "as_the_run_ends"
    clock = WaitsForTheSuspect(ticks=1 if ending else 3)
    first = RawPeer(context, running.endpoint, "scout")
    restart: RawPeer | None = None
    clock_run = asyncio.create_task(clock.run(running.endpoint, context=context))
    try:
        # A _Ready sent before the clock registered is undeliverable, and the run never starts.
        await clock.wait_started()
        await first.register()
        first.send(_Ready(sender="scout", recipient="clock", id="scout:c9"))
        tick = await first.receive(Tick)
        first.send(TickDone(sender="scout", recipient="clock", id="scout:1", seq=1, tick=tick.tick))
        first.close()  # it dies without a goodbye
        await asyncio.wait_for(clock.suspected.wait(), WAIT_S)
        if ending:
            # The run is over (tick 1 was its last) and the clock waits for the suspect's _Stats.
            await asyncio.wait_for(clock.last_tick.wait(), WAIT_S)
            await asyncio.sleep(0)  # the clock's turn: it begins its shutdown
        restart = RawPeer(context, running.endpoint, "scout")
        await restart.register()
        restart.send(_Leave(sender="scout", recipient=BROKER_ID, id="scout:c2", reason="killed"))
        await asyncio.wait_for(asyncio.shield(clock_run), WAIT_S)
    finally:
        clock.stop()
        await asyncio.gather(clock_run, return_exceptions=True)
        first.close()
        if restart is not None:
            restart.close()

    assert clock.result is not None
    assert {"scout": "left: killed"} == clock.result.departed
    assert ([], True) == (clock.result.missing, clock.result.completed)


async def test_a_participant_that_crashes_before_the_start_is_waited_for_past_the_grace(
    broker: tuple[Broker, zmq.Context[zmq.Socket[bytes]]],
) -> None:
    running, context = broker
    clock = Clock(participants=["scout", "sergeant"], ticks=1, tick_timeout=WAIT_S)
    clock.rejoin_grace = 0.05  # what a participant gone mid-run gets, and so far at the start
    sergeant = RawPeer(context, running.endpoint, "sergeant")
    crashed = RawPeer(context, running.endpoint, "scout")
    restart: RawPeer | None = None
    clock_run = asyncio.create_task(clock.run(running.endpoint, context=context))
    try:
        # A _Ready sent before the clock registered is undeliverable, and the run never starts.
        await clock.wait_started()
        await sergeant.register()
        sergeant.send(_Ready(sender="sergeant", recipient="clock", id="sergeant:c9"))
        await crashed.register()
        crashed.close()  # it crashes in on_start: it never said it was ready
        while running.stats.departed < 1:  # the broker saw it go (and told the clock)
            await asyncio.sleep(0.01)
        # Ten graces later the run has not started without it.
        await asyncio.sleep(10 * clock.rejoin_grace)
        assert [] == sergeant.waiting(Tick), "the run started without the crashed participant"

        restart = RawPeer(context, running.endpoint, "scout")
        await restart.register()
        restart.send(_Ready(sender="scout", recipient="clock", id="scout:c9"))
        for peer in (sergeant, restart):
            await peer.receive(Tick)
            peer.send(TickDone(sender=peer.peer, recipient="clock", id=f"{peer.peer}:1", tick=1))
        for peer in (sergeant, restart):
            await peer.receive(_Shutdown)
            peer.send(_Stats(sender=peer.peer, recipient="clock", id=f"{peer.peer}:c99"))
        await asyncio.wait_for(asyncio.shield(clock_run), WAIT_S)
    finally:
        clock.stop()
        await asyncio.gather(clock_run, return_exceptions=True)
        sergeant.close()
        crashed.close()
        if restart is not None:
            restart.close()

    assert clock.result is not None
    assert ({}, [], 1, 0) == (
        clock.result.departed,
        clock.result.missing,
        clock.result.ticks,
        clock.result.tick_timeouts,
    )


async def test_a_clock_whose_driver_is_cancelled_stops_rather_than_idle_forever(
    broker: tuple[Broker, zmq.Context[zmq.Socket[bytes]]],
) -> None:
    running, context = broker
    clock = Clock(participants=["scout"], ticks=100, tick_timeout=WAIT_S)
    scout = RawPeer(context, running.endpoint, "scout")
    clock_run = asyncio.create_task(clock.run(running.endpoint, context=context))
    try:
        # A _Ready sent before the clock registered is undeliverable, and the run never starts.
        await clock.wait_started()
        await scout.register()
        scout.send(_Ready(sender="scout", recipient="clock", id="scout:c9"))
        await scout.receive(Tick)  # the driver waits for this tick's TickDone
        assert clock._driver is not None
        clock._driver.cancel()  # what a stray cancellation does
        await asyncio.wait_for(asyncio.shield(clock_run), WAIT_S)
    finally:
        clock.stop()
        await asyncio.gather(clock_run, return_exceptions=True)
        scout.close()

    assert clock.result is None  # no result: the run failed, and says so at once
