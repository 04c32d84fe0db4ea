"""Issue 12, test 11 (bounded for CI): malformed input into the codec and into a live broker and
actor. Only the codec's own error (ProtocolError) escapes, the broker and the actor stay up, a
good client next to the fuzzer loses nothing, and memory does not grow.
``warband bench chaos --fuzz 1000000`` runs the issue's million inputs."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import msgspec
import pytest
import zmq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.chaoslib.fuzz import fuzz_live
from warband.exceptions import ProtocolError
from warband.messaging import catalog
from warband.messaging.broker import Broker
from warband.messaging.codec import Codec

CODEC = Codec()
SAMPLES = [
    CODEC.encode(message)
    for message in (
        catalog.Order(recipient="bot-1", sender="squad-a", id="squad-a:1", task="hold", args=[1]),
        catalog.StatusReport(recipient="squad-a", sender="bot-1", id="bot-1:1", status="x"),
        catalog.RequestCooperation(
            recipient="p2", sender="p1", id="p1:1", conversation="c", conditions=[]
        ),
        catalog.Percept(recipient="bot-1", sender="world", id="w:1", facts=[["at", "x", "w"]]),
        catalog._Register(recipient="broker", sender="bot-1", id="bot-1:c1", groups=["red"]),
    )
]
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats()
    | st.text(max_size=8)
    | st.binary(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=10,
)


@st.composite
def mutated_frames(draw: st.DrawFn) -> bytes:
    """A good frame with bytes changed, cut, or spliced with others."""
    frame = bytearray(draw(st.sampled_from(SAMPLES)))
    for index, byte in draw(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)))):
        frame[index % len(frame)] = byte
    cut = draw(st.integers(0, len(frame)))
    return bytes(frame[:cut]) + draw(st.binary(max_size=16)) + bytes(frame[cut:])


@st.composite
def typed_wrong_frames(draw: st.DrawFn) -> bytes:
    """A known type with its own field names, each holding any value."""
    kind = draw(st.sampled_from(sorted(catalog.MESSAGE_TYPES)))
    names = [*catalog.MESSAGE_TYPES[kind].__struct_fields__, "type"]
    body: dict[str, Any] = draw(st.dictionaries(st.sampled_from(names), VALUES, max_size=6))
    body["type"] = draw(st.sampled_from([kind, kind, "Ordr", 3]))
    return msgspec.msgpack.encode(body)


FRAMES = st.binary(max_size=128) | mutated_frames() | typed_wrong_frames()


@settings(max_examples=1500, deadline=None)
@given(FRAMES)
def test_the_codec_rejects_malformed_frames_with_its_own_error_only(frame: bytes) -> None:
    for read in (CODEC.decode, CODEC.decode_envelope):
        try:
            read(frame)
        except ProtocolError as error:
            assert str(error), "a rejection says why"
    CODEC.salvage_envelope(frame)  # never raises: it is how a rejection names the peer


def _dealer(context: zmq.Context[zmq.Socket[bytes]], endpoint: str, name: str) -> Any:
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.ROUTING_ID, name.encode())
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.RCVTIMEO, 5000)
    socket.connect(endpoint)
    register = {"type": "_Register", "sender": name, "recipient": "broker", "id": f"{name}:c1"}
    socket.send(msgspec.msgpack.encode({**register, "groups": [], "lockstep": False}))
    assert b"_Registered" in socket.recv()
    return socket


def test_the_broker_keeps_routing_a_good_client_while_frames_are_thrown_at_it() -> None:
    directory = Path(tempfile.mkdtemp(prefix="wbf-", dir="/tmp"))
    endpoint = f"ipc://{directory}/broker.sock"
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    broker = Broker(endpoint, context=context)
    broker.start()
    sockets: list[Any] = []
    try:
        fuzzer, good, peer = (_dealer(context, endpoint, n) for n in ("fuzzer", "good", "peer"))
        sockets += [fuzzer, good, peer]
        sent: list[int] = []
        got: list[int] = []

        @settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(st.lists(FRAMES, min_size=1, max_size=3))
        def throw(parts: list[bytes]) -> None:
            fuzzer.send_multipart(parts)
            seq = len(sent)
            report = catalog.StatusReport(
                recipient="peer", sender="good", id=f"good:{seq}", status="seq", seq=seq
            )
            good.send(CODEC.encode(report))
            sent.append(seq)
            # Read as we go: a peer that stops reading is "not keeping up" (PROTOCOL.md, 7).
            while (message := CODEC.decode(peer.recv())).sender != "good":
                pass
            got.append(message.seq)
            while fuzzer.poll(0):
                fuzzer.recv()

        throw()

        assert broker.is_running()
        assert sent == got
    finally:
        for socket in sockets:
            socket.close(linger=0)
        broker.stop()
        context.term()


@pytest.mark.processes
def test_a_live_actor_and_broker_survive_20000_fuzzed_frames_next_to_a_good_client() -> None:
    figures = fuzz_live(20_000, good=300)

    assert {"broker": True, "sink": True} == figures["alive"]
    assert (0, 0) == (figures["good_lost"], figures["good_duplicated"]), figures
    for process, growth in figures["rss_growth_mb"].items():
        assert growth <= 10, f"{process} grew by {growth} MB"


def test_a_peer_re_registering_without_end_leaves_at_most_two_pending_group_changes() -> None:
    directory = Path(tempfile.mkdtemp(prefix="wbf-", dir="/tmp"))
    endpoint = f"ipc://{directory}/broker.sock"
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    broker = Broker(endpoint, context=context)
    broker.start()
    try:
        client = _dealer(context, endpoint, "bot-1")
        for tick in range(1, 301):
            body = {"type": "_Register", "sender": "bot-1", "recipient": "broker"}
            again = {**body, "id": f"bot-1:c{tick + 1}", "groups": ["red"], "lockstep": True}
            client.send(msgspec.msgpack.encode({**again, "tick": tick % 7}))
            assert b"_Registered" in client.recv()
        client.close(linger=0)

        assert len(broker._deferred) <= 2
    finally:
        broker.stop()
        context.term()


async def test_endtalk_for_made_up_conversations_cannot_grow_an_actors_memory() -> None:
    import asyncio

    from warband.messaging.actor import Actor

    directory = Path(tempfile.mkdtemp(prefix="wbf-", dir="/tmp"))
    endpoint = f"ipc://{directory}/broker.sock"
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    broker = Broker(endpoint, context=context)
    broker.start()
    actor = Actor("bot-1")
    runner = asyncio.create_task(
        actor.run(endpoint, context=context, mode="realtime", heartbeat_interval=0)
    )
    try:
        await actor.wait_started()
        rogue = _dealer(context, endpoint, "rogue")
        count = 12_000
        for number in range(count):
            end = catalog.EndTalk(
                recipient="bot-1", sender="rogue", id=f"rogue:{number}", conversation=f"c{number}"
            )
            rogue.send(CODEC.encode(end))
            if number % 500 == 0:
                await asyncio.sleep(0)
        for _ in range(500):  # wait for the last one, by what it leaves behind
            if actor.is_closed(f"c{count - 1}"):
                break
            await asyncio.sleep(0.02)

        from warband.messaging._requests import CLOSED_KEPT

        assert actor.is_closed(f"c{count - 1}")
        assert not actor.is_closed("c0")
        assert CLOSED_KEPT == len(actor._closed_conversations)
        rogue.close(linger=0)
    finally:
        actor.stop()
        await asyncio.wait({runner}, timeout=5)
        broker.stop()
        context.term()
