"""Starting brokers that check proofs of identity (a run secret, CURVE keys) in one process.

Each answers its handshakes on its ZeroMQ context's one ZAP endpoint. Two on the shared default
context (a test's broker still stopping while the next test starts one, on a busy machine)
collided there; the second's routing thread died before it bound its socket, and ``start``
waited for it forever. Now a broker given no context takes one of its own, and ``start``
raises whatever kept its thread from binding.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import zmq

from warband.exceptions import ConfigurationError
from warband.messaging.addresses import BROKER_ID
from warband.messaging.broker import Broker
from warband.messaging.catalog import _Register, _Registered
from warband.messaging.codec import Codec
from warband.messaging.secret import new_secret

SECRET = new_secret()
WAIT_S = 30.0


@pytest.fixture
def brokers() -> Iterator[list[Broker]]:
    """Brokers a test starts, stopped at its end."""
    started: list[Broker] = []
    try:
        yield started
    finally:
        for broker in started:
            broker.stop()


def _start(broker: Broker) -> None:
    """``broker.start()``, failing the test rather than hanging it."""
    errors: list[BaseException] = []

    def start() -> None:
        try:
            broker.start()
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=start, daemon=True)
    thread.start()
    thread.join(WAIT_S)
    assert not thread.is_alive(), f"Broker.start() did not return within {WAIT_S} s"
    if errors:
        raise errors[0]


def _registers_at(broker: Broker, agent: str) -> bool:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    socket = context.socket(zmq.DEALER)
    try:
        socket.setsockopt(zmq.ROUTING_ID, agent.encode())
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.RCVTIMEO, int(WAIT_S * 1000))
        SECRET.apply_client(socket, agent)
        socket.connect(broker.bound_endpoint)
        codec = Codec()
        socket.send(codec.encode(_Register(sender=agent, recipient=BROKER_ID, id=f"{agent}:c1")))
        return isinstance(codec.decode(socket.recv()), _Registered)
    finally:
        socket.close(linger=0)
        context.term()


def test_two_brokers_with_a_run_secret_serve_at_once_in_one_process(brokers: list[Broker]) -> None:
    for _ in range(2):
        broker = Broker("tcp://127.0.0.1:*", secret=SECRET)
        brokers.append(broker)
        _start(broker)

    assert [True, True] == [_registers_at(broker, "bot-1") for broker in brokers]


def test_a_broker_that_cannot_check_proofs_on_a_shared_context_says_so(
    brokers: list[Broker],
) -> None:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    try:
        first = Broker("tcp://127.0.0.1:*", secret=SECRET, context=context)
        brokers.append(first)
        _start(first)
        with pytest.raises(ConfigurationError, match="give each broker a context of its own"):
            _start(Broker("tcp://127.0.0.1:*", secret=SECRET, context=context))
    finally:
        for broker in brokers:
            broker.stop()
        brokers.clear()
        context.term()
