"""How loud the broker is about a notice of its own it could not send (``broker.notice_lost``).

A peer that sends and goes (every participant as a run ends: its last frames, then its
``_Leave``, then its connection closes) leaves the broker answering frames for a connection
that is gone: that is info, and the departure is logged for itself (a warning when the peer
said no goodbye). A notice refused by a connected peer's full queue stays an error.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

import msgpack
import structlog
import zmq

from warband.messaging.broker import Broker

WAIT_S = 10.0
ATTEMPTS = 20
"""Peers that send and close before one of them is gone when the broker answers it (the first
one nearly always is: 100 frames take the broker longer than the close takes to reach it)."""


def _register(
    context: zmq.Context[zmq.Socket[bytes]],
    endpoint: str,
    agent: str,
    *,
    linger_ms: int = 0,
    queue: int = 1000,
) -> zmq.Socket[bytes]:
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.ROUTING_ID, agent.encode())
    socket.setsockopt(zmq.LINGER, linger_ms)
    socket.setsockopt(zmq.RCVHWM, queue)
    socket.setsockopt(zmq.RCVTIMEO, int(WAIT_S * 1000))
    socket.connect(endpoint)
    socket.send(
        msgpack.packb(
            {"type": "_Register", "sender": agent, "recipient": "broker", "id": f"{agent}:c1"}
        )
    )
    assert "_Registered" == msgpack.unpackb(socket.recv())["type"]
    return socket


def _order(sender: str, recipient: str, number: int) -> bytes:
    frame: bytes = msgpack.packb(
        {
            "type": "Order",
            "sender": sender,
            "recipient": recipient,
            "id": f"{sender}:{number}",
            "seq": number,
            "task": "t",
        }
    )
    return frame


def _handled(broker: Broker, frames: int) -> bool:
    return broker.stats.routed + broker.stats.would_block >= frames


def _wait(condition: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {WAIT_S} s"
        time.sleep(0.01)


def test_a_notice_for_a_peer_that_is_gone_is_info_and_its_departure_a_warning(
    tmp_path: Path,
) -> None:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    broker = Broker(f"ipc://{tmp_path}/broker.sock", context=context)
    gone: list[str] = []
    with structlog.testing.capture_logs() as logs:
        broker.start()
        try:
            while broker.stats.notices_lost == 0 and len(gone) < ATTEMPTS:
                peer = f"leaver-{len(gone)}"
                socket = _register(context, broker.bound_endpoint, peer, linger_ms=2000)
                for number in range(1, 101):  # each answered with _Undeliverable: no 'nobody'
                    socket.send(_order(peer, "nobody", number))
                socket.close()
                gone.append(peer)
                _wait(lambda: broker.stats.departed == len(gone), f"the broker saw {peer} go")
        finally:
            broker.stop()
            context.term()

    lost = [e for e in logs if e["event"] == "broker.notice_lost"]
    assert lost, f"none of {len(gone)} peers was gone when the broker answered it"
    assert {("info", "EHOSTUNREACH")} == {(e["log_level"], e["errno"]) for e in lost}
    departed = {
        e["peer"]: (e["log_level"], e["reason"]) for e in logs if e["event"] == "broker.departed"
    }
    assert {peer: ("warning", "disconnected") for peer in gone} == departed


def test_a_notice_refused_by_a_connected_peers_full_queue_is_an_error() -> None:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    broker = Broker(f"inproc://full-{id(context)}", context=context, queue_limit=10)
    with structlog.testing.capture_logs() as logs:
        broker.start()
        sink = _register(context, broker.bound_endpoint, "sink", queue=10)
        filler = _register(context, broker.bound_endpoint, "filler")
        try:
            # The sink reads nothing: once its queue is full, the filler's orders bounce.
            number = 0
            while broker.stats.would_block == 0:
                number += 1
                filler.send(_order("filler", "sink", number))
                _wait(
                    functools.partial(_handled, broker, number),
                    "the broker routed the filler's order",
                )
            sink.send(_order("sink", "nobody", 1))  # its _Undeliverable finds the queue full
            _wait(lambda: broker.stats.notices_lost == 1, "the sink's notice was lost")
        finally:
            sink.close()
            filler.close()
            broker.stop()
            context.term()

    lost = [e for e in logs if e["event"] == "broker.notice_lost"]
    assert [("error", "sink", "_Undeliverable", "EAGAIN")] == [
        (e["log_level"], e["peer"], e["msg_type"], e["errno"]) for e in lost
    ]
