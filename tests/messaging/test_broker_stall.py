"""A broker that did not run for a while (its thread starved of the interpreter lock in a busy
one-process run, or its process of the CPU) does not count that time as its peers' silence;
silence while it runs still departs them.

The interpreter lock is held on purpose: with a switch interval longer than the hold, the test's
thread keeps it while it spins, so the broker's thread and the peer (this thread) are stopped
together, as every thread of one busy process is.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq

from warband.messaging.addresses import BROKER_ID
from warband.messaging.broker import SILENT_PINGS, Broker
from warband.messaging.catalog import _Ping, _Register, _Registered
from warband.messaging.codec import Codec

PING_S = 0.2
"""The peer's ping interval: silent after 0.6 s."""
HOLD_S = 1.5
"""How long the broker's thread cannot run: more than twice the silence that departs a peer."""


class Peer:
    """A raw connection that registers and pings when told to."""

    def __init__(self, context: zmq.Context[zmq.Socket[bytes]], endpoint: str) -> None:
        self.codec = Codec()
        self.pings = 0
        self.socket = context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.ROUTING_ID, b"peer")
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.RCVTIMEO, 10_000)
        self.socket.connect(endpoint)
        self.socket.send(
            self.codec.encode(_Register(sender="peer", recipient=BROKER_ID, id="p:c0"))
        )
        assert isinstance(self.codec.decode(self.socket.recv()), _Registered)

    def ping(self) -> None:
        self.pings += 1
        ping = _Ping(sender="peer", recipient=BROKER_ID, id=f"p:c{self.pings}", interval=PING_S)
        self.socket.send(self.codec.encode(ping))

    def ping_for(self, seconds: float) -> None:
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            self.ping()
            time.sleep(PING_S / 2)


@pytest.fixture
def peer(tmp_path: Path) -> Iterator[tuple[Broker, Peer]]:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    broker = Broker(f"ipc://{tmp_path}/broker.sock", context=context)
    broker.start()
    connected = Peer(context, broker.bound_endpoint)
    try:
        yield broker, connected
    finally:
        connected.socket.close(linger=0)
        broker.stop()
        context.term()


def _hold_the_interpreter(seconds: float) -> None:
    """Spin in Python without letting another thread of this process run."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(seconds * 4)
    try:
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            pass
    finally:
        sys.setswitchinterval(interval)


def test_time_the_broker_did_not_run_is_not_its_peers_silence(peer: tuple[Broker, Peer]) -> None:
    broker, connected = peer
    assert HOLD_S > 2 * SILENT_PINGS * PING_S
    connected.ping_for(0.3)  # the broker knows its interval now

    _hold_the_interpreter(HOLD_S)
    connected.ping_for(0.6)  # the broker's first looks after the hold see it pinging again

    assert 0 == broker.stats.departed


def test_silence_while_the_broker_runs_still_departs_a_peer(peer: tuple[Broker, Peer]) -> None:
    broker, connected = peer
    connected.ping_for(0.3)

    time.sleep(HOLD_S)  # the broker runs; the peer says nothing

    assert 1 == broker.stats.departed
