"""Fault: backpressure. 10,000 Percepts (an Order after every 100th) at a bot whose handler
sleeps 50 ms (faults.py's ``flood``, which tests/messaging runs too), next to a raw DEALER
sending as many frames without blocking at a ROUTER that does not read."""

from __future__ import annotations

import struct
from typing import Any

import zmq

from tests.chaoslib.faults import flood, free_tcp_port

from .result import Result


def backpressure(percepts: int = 10_000) -> Result:
    """Issue 12, test 5: ``percepts`` Percepts at a bot whose handler sleeps 50 ms."""
    from warband.messaging import event_loop
    from warband.messaging.tracing import configure_logging

    # The harness counts the msg.conflated events, logged at info: let them through.
    configure_logging(None, "chaos", level="info")
    try:
        figures = event_loop.run(flood(percepts, 100))
    finally:
        configure_logging(None, "chaos", level="error")
    handled = figures.pop("percepts")
    orders, sent = figures.pop("orders"), figures.pop("orders_sent")
    silent = percepts - len(handled) - figures["conflated"]
    orders_lost = len(set(sent) - set(orders))
    figures.update(
        silent_drops=silent, orders_sent=len(sent), orders_lost=orders_lost, **_raw_flood(percepts)
    )
    passed = (
        silent == 0
        and orders == sent
        and handled == sorted(handled)
        and figures["conflated_logged"] is not None
        and figures["mailbox_peak"] <= figures["mailbox_limit"]
        and figures["rss_growth_mb"] <= 50
    )
    return Result(
        "backpressure",
        passed,
        orders_lost + silent,
        len(orders) - len(set(orders)),
        figures,
        note="lost: orders lost plus Percepts neither handled nor counted as conflated; "
        "baseline_lost: frames a raw DEALER (HWM 1000) refuses with EAGAIN when sent without "
        "blocking at a ROUTER that does not read, which a sender dropping on EAGAIN loses",
    )


def _raw_flood(count: int) -> dict[str, Any]:
    endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    router = context.socket(zmq.ROUTER)
    dealer = context.socket(zmq.DEALER)
    refused = 0
    try:
        router.bind(endpoint)
        dealer.connect(endpoint)
        dealer.send(b"hello")
        router.poll(10_000)
        router.recv_multipart()
        for seq in range(count):
            try:
                dealer.send(struct.pack("!I", seq), zmq.NOBLOCK)
            except zmq.Again:
                refused += 1
    finally:
        dealer.close(linger=0)
        router.close(linger=0)
        context.term()
    return {"baseline_lost": refused}
