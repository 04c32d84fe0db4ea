"""Bad frames from a live peer are rejected with a logged reason; good frames all get through.

A raw ZeroMQ DEALER (no warband code on its side) connects to a real broker and fires generated
frames at a running actor, interleaved with valid messages. The actor must keep running and
receive every valid message; every rejection must name the peer and the reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import msgpack
import pytest
import structlog
import zmq
import zmq.asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.messaging.collector import Collector
from warband.messaging import Order
from warband.messaging.codec import Codec
from warband.testing import running_broker


class Harness:
    """A running broker + collector actor + raw DEALER client called ``intruder``."""

    def __init__(self, context: zmq.asyncio.Context, collector: Collector) -> None:
        self.context = context
        self.collector = collector
        self.raw: zmq.asyncio.Socket | None = None
        self.sent_good = 0

    def good_frame(self, task: str) -> bytes:
        self.sent_good += 1
        return msgpack.packb(
            {
                "type": "Order",
                "sender": "intruder",
                "recipient": "collector",
                "id": f"intruder:{self.sent_good}",
                "seq": self.sent_good,
                "task": task,
            }
        )

    async def send(self, frame: bytes) -> None:
        assert self.raw is not None
        await self.raw.send(frame)


REGISTER = {"type": "_Register", "sender": "intruder", "recipient": "broker", "id": "intruder:c1"}


@pytest.fixture
async def harness() -> AsyncIterator[Harness]:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    raw_context = zmq.asyncio.Context.shadow(context)
    collector = Collector("collector")
    with running_broker(context=context) as broker:
        task = asyncio.create_task(
            collector.run(broker.bound_endpoint, context=context, mode="realtime")
        )
        await collector.wait_started()
        raw = raw_context.socket(zmq.DEALER)
        raw.setsockopt(zmq.ROUTING_ID, b"intruder")
        raw.setsockopt(zmq.LINGER, 0)
        raw.connect(broker.bound_endpoint)
        h = Harness(raw_context, collector)
        h.raw = raw
        await h.send(msgpack.packb(REGISTER))
        await asyncio.wait_for(raw.recv(), timeout=10)  # _Registered
        try:
            yield h
        finally:
            raw.close(linger=0)
            collector.stop()
            await asyncio.wait_for(task, timeout=10)
    context.term()


BAD_FRAMES: dict[str, bytes] = {
    "garbage": b"\x00\xffnot msgpack",
    "truncated": msgpack.packb(
        {"type": "Order", "sender": "intruder", "recipient": "collector", "task": "x"}
    )[:-3],
    "invalid-utf8": b"\x83\xa4type\xa5Order\xa6sender\xa8intruder\xa9recipient\xa9coll\xffctor",
    "wrong-shape": msgpack.packb(
        {
            "type": "Order",
            "sender": "intruder",
            "recipient": "collector",
            "task": ["not", "a", "string"],
        }
    ),
    "unknown-type": msgpack.packb({"type": "Ordr", "sender": "intruder", "recipient": "collector"}),
    "spoofed-sender": msgpack.packb(
        {"type": "Order", "sender": "commander", "recipient": "collector", "task": "obey"}
    ),
    "unknown-recipient": msgpack.packb(
        {"type": "Order", "sender": "intruder", "recipient": "ghost", "task": "boo"}
    ),
    "oversized": msgpack.packb(
        {"type": "Order", "sender": "intruder", "recipient": "collector", "task": "x" * (1 << 20)}
    ),
}


@pytest.mark.parametrize("kind", sorted(BAD_FRAMES))
async def test_bad_frame_is_logged_with_peer_and_reason_and_neighbours_arrive(
    harness: Harness, kind: str
) -> None:
    with structlog.testing.capture_logs() as logs:
        await harness.send(harness.good_frame("before"))
        await harness.send(BAD_FRAMES[kind])
        await harness.send(harness.good_frame("after"))
        await harness.collector.wait_for(2)
    assert harness.collector.tasks == ["before", "after"]
    errors = [e for e in logs if e["log_level"] == "error"]
    assert len(errors) == 1, errors
    assert errors[0]["peer"] == "intruder"
    assert errors[0]["reason"]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    frames=st.lists(
        st.binary(max_size=64) | st.sampled_from(list(BAD_FRAMES.values())), min_size=1, max_size=6
    )
)
async def test_generated_frames_never_stop_the_actor_or_lose_good_messages(
    harness: Harness, frames: list[bytes]
) -> None:
    before = len(harness.collector.tasks)
    expected: list[str] = []
    for index, frame in enumerate(frames):
        await harness.send(frame)
        task = f"good-{harness.sent_good}-{index}"
        expected.append(task)
        await harness.send(harness.good_frame(task))
    await harness.collector.wait_for(before + len(expected))
    assert expected == harness.collector.tasks[before:]


async def test_a_frame_rejected_by_the_broker_is_answered_with_a_notice(harness: Harness) -> None:
    assert harness.raw is not None
    await harness.send(BAD_FRAMES["spoofed-sender"])
    notice: dict[str, Any] = msgpack.unpackb(await asyncio.wait_for(harness.raw.recv(), 10))
    assert notice["type"] == "_Undeliverable"
    assert "does not match the connection's id 'intruder'" in notice["reason"]


def test_codec_instance_is_shared_safely_between_encode_and_decode() -> None:
    codec = Codec()
    frame = codec.encode(Order(recipient="a", task="t"))
    assert codec.decode(frame) == codec.decode(frame)


class SmallMailbox(Collector):
    mailbox_limit = 3


async def test_a_full_mailbox_pauses_reading_without_losing_or_reordering_messages() -> None:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    actor = SmallMailbox("collector")
    try:
        with running_broker(context=context) as broker:
            task = asyncio.create_task(
                actor.run(broker.bound_endpoint, context=context, mode="realtime")
            )
            await actor.wait_started()
            raw = context.socket(zmq.DEALER)
            raw.setsockopt(zmq.ROUTING_ID, b"intruder")
            raw.setsockopt(zmq.LINGER, 0)
            raw.connect(broker.bound_endpoint)
            try:
                raw.send(msgpack.packb(REGISTER))
                raw.setsockopt(zmq.RCVTIMEO, 10_000)
                raw.recv()  # _Registered
                harness = Harness(zmq.asyncio.Context.shadow(context), actor)
                for number in range(40):
                    raw.send(harness.good_frame(f"t{number}"))
                await actor.wait_for(40)
            finally:
                raw.close(linger=0)
                actor.stop()
                await asyncio.wait_for(task, timeout=10)
    finally:
        context.term()
    assert [f"t{n}" for n in range(40)] == actor.tasks
