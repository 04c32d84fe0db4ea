"""The broker's fast path for the common frame keeps the checks of the full path.

Raw pyzmq DEALERs (no warband actor) talk to a real broker over tcp://: a frame from a
registered peer to a registered peer is routed at once, and every frame that is not that common
frame (a split payload, a spoofed sender, a recipient gone) is still refused or answered as
PROTOCOL.md says; the liveness of a peer that only sends through the fast path is kept.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import msgpack
import pytest
import zmq

from warband.messaging.broker import Broker
from warband.testing import running_broker, wait_until

_TIMEOUT_MS = 10_000


@pytest.fixture
def broker() -> Iterator[Broker]:
    with running_broker("tcp://127.0.0.1:*") as running:
        yield running


class _Sockets:
    """A context whose DEALERs are all closed when the test ends, passed or not."""

    def __init__(self) -> None:
        self.context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        self.made: list[zmq.Socket[bytes]] = []

    def socket(self, kind: int) -> zmq.Socket[bytes]:
        self.made.append(self.context.socket(kind))
        return self.made[-1]

    def close(self) -> None:
        for socket in self.made:
            socket.close(linger=0)
        self.context.term()


@pytest.fixture
def context() -> Iterator[_Sockets]:
    sockets = _Sockets()
    yield sockets
    sockets.close()


def _dealer(context: _Sockets, broker: Broker, name: str) -> zmq.Socket[bytes]:
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.ROUTING_ID, name.encode())
    socket.setsockopt(zmq.RCVTIMEO, _TIMEOUT_MS)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(broker.bound_endpoint)
    return socket


def _register(socket: zmq.Socket[bytes], name: str) -> dict[str, Any]:
    socket.send(
        msgpack.packb({"type": "_Register", "sender": name, "recipient": "broker", "id": "c1"})
    )
    answer: dict[str, Any] = msgpack.unpackb(socket.recv())
    return answer


def _registered(context: _Sockets, broker: Broker, name: str) -> zmq.Socket[bytes]:
    socket = _dealer(context, broker, name)
    assert "_Registered" == _register(socket, name)["type"]
    return socket


def _report(sender: str, recipient: str, number: int) -> bytes:
    frame: bytes = msgpack.packb(
        {
            "type": "StatusReport",
            "sender": sender,
            "recipient": recipient,
            "id": f"{sender}:{number}",
            "seq": number,
            "status": f"n{number}",
        }
    )
    return frame


def _status(socket: zmq.Socket[bytes]) -> str:
    message: dict[str, Any] = msgpack.unpackb(socket.recv())
    return str(message.get("status") or message["type"])


def test_a_payload_split_over_two_frames_is_refused_and_the_next_frame_routes(
    broker: Broker, context: _Sockets
) -> None:
    alice = _registered(context, broker, "alice")
    bob = _registered(context, broker, "bob")
    alice.send(_report("alice", "bob", 1))
    # Its second frame names bob as if it were a routing id: read as one, it would be routed.
    alice.send_multipart([_report("alice", "bob", 2), b"bob"])
    alice.send(_report("alice", "bob", 3))

    notice: dict[str, Any] = msgpack.unpackb(alice.recv())

    assert "_Undeliverable" == notice["type"]
    assert "expected 1 payload frame, got 2" in notice["reason"]
    assert ["n1", "n3"] == [_status(bob), _status(bob)]
    # Counted just after the send, so maybe after bob read the frame.
    wait_until(lambda: broker.stats.routed == 2, timeout=10, what="two frames routed")


def test_a_registered_peer_naming_another_as_sender_is_refused_and_not_routed(
    broker: Broker, context: _Sockets
) -> None:
    alice = _registered(context, broker, "alice")
    bob = _registered(context, broker, "bob")
    alice.send(_report("bob", "bob", 1))
    alice.send(_report("alice", "bob", 2))

    notice: dict[str, Any] = msgpack.unpackb(alice.recv())

    assert "sender field 'bob' does not match the connection's id 'alice'" in notice["reason"]
    assert "n2" == _status(bob)


def test_a_frame_for_a_peer_whose_connection_closed_is_answered_undeliverable(
    broker: Broker, context: _Sockets
) -> None:
    alice = _registered(context, broker, "alice")
    bob = _registered(context, broker, "bob")
    alice.send(_report("alice", "bob", 1))
    assert "n1" == _status(bob)
    bob.close(linger=0)

    def answered() -> dict[str, Any] | None:
        alice.send(_report("alice", "bob", 2))
        try:
            notice: dict[str, Any] = msgpack.unpackb(alice.recv(zmq.NOBLOCK))
        except zmq.Again:
            time.sleep(0.05)  # the broker may still hold bob's route: send again
            return None
        return notice

    notice = wait_until(answered, timeout=10, what="an _Undeliverable for bob")

    assert notice is not None
    assert "_Undeliverable" == notice["type"]
    assert "no agent 'bob' is connected" in notice["reason"]


@pytest.mark.parametrize("name", ["broker", "#red"])
def test_an_id_naming_the_broker_or_a_group_cannot_register(
    broker: Broker, context: _Sockets, name: str
) -> None:
    # Registered, it would take the frames meant for the broker or the group.
    squatter = _dealer(context, broker, name)

    answer = _register(squatter, name)

    assert "_Undeliverable" == answer["type"]
    assert "names the broker or a group, not an agent" in answer["reason"]


def test_a_pinging_peer_that_only_routes_frames_is_not_found_silent(
    broker: Broker, context: _Sockets
) -> None:
    alice = _registered(context, broker, "alice")
    bob = _registered(context, broker, "bob")
    ping = {"type": "_Ping", "sender": "alice", "recipient": "broker", "id": "c2", "interval": 0.2}
    alice.send(msgpack.packb(ping))
    assert "_Pong" == _status(alice)

    # No more pings: only routed frames tell the broker alice is alive, for some 5 intervals
    # past the 3 that make a pinging peer silent.
    deadline = time.monotonic() + 1.6
    number = 0
    while time.monotonic() < deadline:
        number += 1
        alice.send(_report("alice", "bob", number))
        assert f"n{number}" == _status(bob)
        time.sleep(0.02)

    assert 0 == broker.stats.departed
    assert "alice" in broker.stats.peers
