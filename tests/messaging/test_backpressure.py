"""Backpressure: a bounded mailbox where only Percepts are conflated (newest per sender kept,
counted and logged), orders are never dropped, and every EAGAIN / EHOSTUNREACH is counted.

Real sockets: the broker of the flood test runs in its own process, so its memory is its own.
"""

from __future__ import annotations

import asyncio

import msgpack
import structlog
import zmq

from tests.chaoslib.faults import flood
from warband.messaging import Actor, Order, Percept, Tick, handles
from warband.messaging.broker import Broker
from warband.testing import wait_until_async

PERCEPTS = 10_000
ORDER_EVERY = 100


async def test_a_flood_of_percepts_at_a_slow_bot_is_conflated_never_silently_dropped() -> None:
    # Issue 12, test 5: 10,000 Percepts (and an Order after every 100th) at a bot whose
    # Percept handler sleeps 50 ms. The harness is chaoslib/faults.py's (`warband bench chaos`).
    figures = await flood(PERCEPTS, ORDER_EVERY)

    assert figures["orders_sent"] == figures["orders"]
    # No silent drop: every Percept was handled or counted as conflated, and those handled
    # came in the order sent, the last one among them.
    handled = figures["percepts"]
    assert PERCEPTS == len(handled) + figures["conflated"]
    assert sorted(handled) == handled
    assert PERCEPTS - 1 == handled[-1]
    assert 0 < figures["conflated"]
    assert figures["mailbox_peak"] <= figures["mailbox_limit"]
    assert figures["rss_growth_mb"] <= 50, f"the broker grew by {figures['rss_growth_mb']} MiB"
    assert figures["conflated_logged"] is not None, "conflation must be logged"
    assert figures["conflated_logged"] <= figures["conflated"]


class LockstepBot(Actor):
    mailbox_limit = 50

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.percepts: list[int] = []
        self.orders: list[str] = []

    @handles(Percept)
    def on_percept(self, percept: Percept) -> None:
        number = percept.facts[0][1]
        assert isinstance(number, int)
        self.percepts.append(number)

    @handles(Order)
    def on_order(self, order: Order) -> None:
        self.orders.append(order.task)


class TickSource(Actor):
    """Stands in for the clock: sends one Tick to the bot when told."""

    lockstep_participant = False

    def __init__(self) -> None:
        super().__init__("clock")


async def test_a_lockstep_mailbox_at_its_bound_conflates_percepts_and_keeps_every_order() -> None:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    broker = Broker(f"inproc://backpressure-{id(context)}", context=context)
    broker.start()
    bot = LockstepBot("bot")
    world = Actor("world")
    clock = TickSource()
    tasks = [
        asyncio.create_task(clock.run(broker.bound_endpoint, context=context, mode="realtime")),
        asyncio.create_task(bot.run(broker.bound_endpoint, context=context)),
        asyncio.create_task(world.run(broker.bound_endpoint, context=context, mode="realtime")),
    ]
    try:
        for actor in (clock, bot, world):
            await actor.wait_started(30)
        for number in range(500):
            world.send(Percept(recipient="bot", facts=[["n", number]]))
            if number % 50 == 49:
                world.send(Order(recipient="bot", task=f"order-{number}"))
        await wait_until_async(
            lambda: bot.stats.received == 510, timeout=30, what="every message in the bot's buffer"
        )
        assert [] == bot.percepts  # nothing is handled before its tick
        clock.tick = 1
        clock.send(Tick(recipient="bot"))
        await wait_until_async(lambda: len(bot.orders) == 10, timeout=30, what="the tick's orders")
    finally:
        for actor in (bot, world, clock):
            actor.stop()
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 15)
        broker.stop()
        context.term()

    assert [f"order-{n}" for n in range(49, 500, 50)] == bot.orders
    assert 500 == len(bot.percepts) + bot.stats.conflated
    assert 499 == bot.percepts[-1]
    assert 0 < bot.stats.conflated
    assert bot.stats.mailbox_peak <= LockstepBot.mailbox_limit


def _raw(
    context: zmq.Context[zmq.Socket[bytes]], endpoint: str, agent: str, *, queue: int = 1000
) -> zmq.Socket[bytes]:
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.ROUTING_ID, agent.encode())
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.RCVHWM, queue)
    socket.setsockopt(zmq.RCVTIMEO, 10_000)
    socket.connect(endpoint)
    register = {"type": "_Register", "sender": agent, "recipient": "broker", "id": f"{agent}:c1"}
    socket.send(msgpack.packb(register))
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
            "task": f"t{number}",
        }
    )
    return frame


def test_every_frame_for_a_peer_that_does_not_read_is_counted_answered_and_logged() -> None:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    broker = Broker(f"inproc://eagain-{id(context)}", context=context, queue_limit=10)
    with structlog.testing.capture_logs() as logs:
        broker.start()
        sink = _raw(context, broker.bound_endpoint, "sink", queue=10)
        sender = _raw(context, broker.bound_endpoint, "sender")
        try:
            for number in range(1, 101):
                sender.send(_order("sender", "sink", number))
            sender.send(_order("sender", "nobody", 101))
            # The broker handles the sender's frames in order: the notice about the last one
            # comes after those about every earlier one.
            notices = [msgpack.unpackb(sender.recv())]
            while notices[-1]["target"] != "nobody":
                notices.append(msgpack.unpackb(sender.recv()))
        finally:
            sink.close()
            sender.close()
            broker.stop()
            context.term()

    stats = broker.stats
    # 100 orders for the sink: those past its queue each came back as a notice.
    assert 100 == stats.routed + stats.would_block
    assert 0 < stats.would_block
    assert 1 == stats.unreachable
    assert stats.would_block + stats.unreachable == len(notices)
    reasons = [n["reason"] for n in notices]
    assert stats.would_block == sum("is not keeping up (queue full)" in r for r in reasons)
    logged = [e for e in logs if e["event"] == "broker.undeliverable"]
    assert ["EAGAIN"] * stats.would_block + ["EHOSTUNREACH"] == [e["errno"] for e in logged]
