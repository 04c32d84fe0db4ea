"""Trust no stranger: a raw ZeroMQ peer can neither take over an agent's id nor steer a run.

Every rogue here is a plain pyzmq DEALER speaking MessagePack, as an attacker or a buggy client
in another language would; the broker and actors are the real ones, over real sockets (TCP
where the transport matters).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

import msgpack
import pytest
import structlog
import zmq

from tests.messaging.collector import Collector
from warband.exceptions import DeliveryError, ProtocolError, RequestTimeout
from warband.messaging import (
    Actor,
    Message,
    Order,
    RequestTalk,
    StatusReport,
    ThreatReport,
)
from warband.messaging.broker import Broker
from warband.messaging.clock import Clock
from warband.messaging.codec import Codec
from warband.testing import run_actors, running_broker, wait_until_async

Context = zmq.Context[zmq.Socket[bytes]]
LogEvents = list[MutableMapping[str, Any]]


def frame(kind: str, sender: str, recipient: str, number: int = 1, **fields: Any) -> bytes:
    control = kind.startswith("_")
    data: bytes = msgpack.packb(
        {
            "type": kind,
            "sender": sender,
            "recipient": recipient,
            "id": f"{sender}:c{number}" if control else f"{sender}:{number}",
            "seq": 0 if control else number,
            **fields,
        }
    )
    return data


@contextmanager
def raw_dealer(context: Context, endpoint: str, routing_id: bytes | None) -> Iterator[Any]:
    socket = context.socket(zmq.DEALER)
    if routing_id is not None:
        socket.setsockopt(zmq.ROUTING_ID, routing_id)
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.RCVTIMEO, 10_000)
    socket.connect(endpoint)
    try:
        yield socket
    finally:
        socket.close(linger=0)


def register(socket: Any, agent: str) -> dict[str, Any]:
    socket.send(frame("_Register", agent, "broker", lockstep=False))
    answer: dict[str, Any] = msgpack.unpackb(socket.recv())
    assert "_Registered" == answer["type"], answer
    return answer


async def receive(socket: Any) -> dict[str, Any]:
    """The next frame of a blocking raw socket, read without blocking the event loop."""
    data = await asyncio.to_thread(socket.recv)
    message: dict[str, Any] = msgpack.unpackb(data)
    return message


async def wait_for_log(
    logs: LogEvents, wanted: Callable[[MutableMapping[str, Any]], bool], timeout: float = 10
) -> MutableMapping[str, Any]:
    def found() -> MutableMapping[str, Any] | None:
        return next((event for event in list(logs) if wanted(event)), None)

    event = await wait_until_async(found, timeout=timeout, what=f"a log event like it in {logs}")
    assert event is not None
    return event


async def start(actor: Actor, broker: Broker, context: Context) -> asyncio.Task[None]:
    task = asyncio.create_task(actor.run(broker.bound_endpoint, context=context, mode="realtime"))
    await actor.wait_started()
    return task


async def finish(actor: Actor, task: asyncio.Task[None]) -> None:
    actor.stop()
    await asyncio.wait_for(task, timeout=10)


@pytest.fixture
def context() -> Iterator[Context]:
    context: Context = zmq.Context()
    yield context
    context.term()


# --- 7. one connection per agent id -----------------------------------------------------------


async def test_a_second_connection_claiming_a_connected_id_is_refused_and_the_agent_keeps_its_route(
    context: Context,
) -> None:
    broker = Broker("tcp://127.0.0.1:*", context=context, first_frame_timeout=0.5)
    broker.start()
    agent = Collector("bot-1")
    try:
        task = await start(agent, broker, context)
        with (
            structlog.testing.capture_logs() as logs,
            raw_dealer(context, broker.bound_endpoint, b"commander") as commander,
            raw_dealer(context, broker.bound_endpoint, b"bot-1") as rogue,
        ):
            rogue_events = rogue.get_monitor_socket(zmq.EVENT_DISCONNECTED)
            register(commander, "commander")
            rogue.send(frame("_Register", "bot-1", "broker", lockstep=False))
            rogue.send(frame("Order", "bot-1", "commander", task="obey the rogue"))
            refused = await wait_for_log(
                logs, lambda e: e["event"] == "broker.rejected" and e["peer"] == "unknown"
            )
            commander.send(frame("Order", "commander", "bot-1", task="hold"))
            await agent.wait_for(1)
            closed = await asyncio.to_thread(rogue_events.poll, 10_000)
            rogue_events.close(linger=0)
            assert 0 == rogue.poll(0), "the rogue received something"
            assert 0 == commander.poll(200), "the rogue's Order got through"
        await finish(agent, task)
    finally:
        broker.stop()
    assert ["hold"] == agent.tasks
    assert refused["address"].startswith("127.0.0.1:")
    assert {"bot-1", "commander"} <= set(refused["connected_from_same_host"])
    assert "claims the routing id of an agent that is already connected" in refused["reason"]
    assert closed, "the broker did not close the refused connection"


async def test_an_agent_whose_old_connection_closed_gets_its_id_back(context: Context) -> None:
    with running_broker("tcp://127.0.0.1:*", context=context) as broker:
        with raw_dealer(context, broker.bound_endpoint, b"bot-1") as first:
            register(first, "bot-1")
        # At once, as a supervisor restarts a process: the broker may not have dropped the old
        # connection yet, and then refuses the new one until it has (the actor asks again).
        agent = Collector("bot-1")
        task = await start(agent, broker, context)
        with raw_dealer(context, broker.bound_endpoint, b"commander") as commander:
            register(commander, "commander")
            commander.send(frame("Order", "commander", "bot-1", task="hold"))
            await agent.wait_for(1)
        await finish(agent, task)
    assert ["hold"] == agent.tasks


# --- 8. control messages only from the peer entitled to send them ------------------------------


async def test_a_peer_that_never_registered_cannot_reach_an_agent(context: Context) -> None:
    with (
        running_broker(context=context) as broker,
        raw_dealer(context, broker.bound_endpoint, b"stranger") as stranger,
    ):
        agent = Collector("bot-1")
        task = await start(agent, broker, context)
        stranger.send(frame("_Shutdown", "stranger", "bot-1", reason="bye"))
        notice = await receive(stranger)
        stranger.send(frame("Order", "stranger", "bot-1", 2, task="obey"))
        second = await receive(stranger)
        still_running = not task.done()
        await finish(agent, task)
    assert still_running
    assert [] == agent.tasks
    assert ("_Undeliverable", "stranger:c1") == (notice["type"], notice["message_id"])
    assert "you have not registered: send _Register" in notice["reason"]
    assert "stranger:2" == second["message_id"]


@pytest.mark.parametrize("kind", ["_Shutdown", "Tick", "_RollCall", "_Registered"])
async def test_a_control_message_from_a_registered_stranger_is_rejected_and_counted(
    context: Context, kind: str
) -> None:
    with (
        running_broker(context=context) as broker,
        raw_dealer(context, broker.bound_endpoint, b"rogue") as rogue,
        structlog.testing.capture_logs() as logs,
    ):
        agent = Collector("bot-1")
        task = await start(agent, broker, context)
        register(rogue, "rogue")
        rogue.send(frame(kind, "rogue", "bot-1", tick=7, reason="bye"))
        rogue.send(frame("Order", "rogue", "bot-1", 2, task="after"))
        await agent.wait_for(1)
        still_running = not task.done()
        rejected = agent.stats.rejected
        await finish(agent, task)
    assert still_running
    assert (["after"], 1, 0) == (agent.tasks, rejected, agent.tick)
    event = next(e for e in logs if e["event"] == "msg.rejected")
    assert ("rogue", kind) == (event["peer"], event["msg_type"])
    assert "obeyed only from the" in event["reason"]


class Steady(Actor):
    """A lockstep participant that counts its ticks."""

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.ticks = 0

    def on_tick(self, tick: int) -> None:
        self.ticks = tick

    def final_state(self) -> dict[str, Any]:
        return {"ticks": self.ticks}


async def test_strangers_can_neither_end_nor_stall_nor_forge_a_run(context: Context) -> None:
    with (
        running_broker(context=context) as broker,
        raw_dealer(context, broker.bound_endpoint, b"stranger") as stranger,
        raw_dealer(context, broker.bound_endpoint, b"rogue") as rogue,
        structlog.testing.capture_logs() as logs,
    ):
        clock = Clock(participants=["bot-1"], ticks=4, tick_timeout=30, ready_timeout=30)
        clock_task = asyncio.create_task(clock.run(broker.bound_endpoint, context=context))
        await clock.wait_started()
        # Never registered: the broker stops these before they reach the clock.
        stranger.send(frame("_Ready", "stranger", "clock"))
        stranger.send(frame("_FinishRun", "stranger", "clock", 2, reason="stop"))
        # No member of the run the clock declared: its registration is refused (issue 25), and
        # so is everything it sends after.
        rogue.send(frame("_Register", "rogue", "broker", lockstep=False))
        rogue.send(frame("_FinishRun", "rogue", "clock", 2, reason="rogue says stop"))
        rogue.send(frame("_Stats", "rogue", "clock", 3, final_state={"forged": True}))
        rogue.send(frame("TickDone", "rogue", "clock", 4, tick=1))
        # The broker answers each of the rogue's frames with a notice, in order.
        refused, *notices = [await receive(rogue) for _ in range(4)]
        assert ["_Undeliverable"] * 3 == [notice["type"] for notice in notices]
        bot = Steady("bot-1")
        bot_task = asyncio.create_task(bot.run(broker.bound_endpoint, context=context))
        await asyncio.wait_for(clock_task, timeout=30)
        await asyncio.wait_for(bot_task, timeout=10)
    result = clock.result
    assert result is not None
    assert (4, "ticks") == (result.ticks, result.finish_reason)
    assert {"clock", "bot-1"} == set(result.final_states)
    assert ["bot-1"] == clock.participants
    assert ("_Undeliverable", "_Register") == (refused["type"], refused["message_type"])
    assert "'rogue' is not a participant of run" in refused["reason"]
    assert [] == [e for e in logs if e["event"] == "msg.rejected"]  # none reached the clock
    assert 6 == sum(1 for e in logs if e["event"] == "broker.rejected")


# --- 9. oversized frames and connections without a routing id ----------------------------------


async def test_an_oversized_frame_is_refused_unread_and_its_connection_dropped(
    context: Context,
) -> None:
    with (
        running_broker("tcp://127.0.0.1:*", context=context) as broker,
        raw_dealer(context, broker.bound_endpoint, b"intruder") as intruder,
        structlog.testing.capture_logs() as logs,
    ):
        events = intruder.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        register(intruder, "intruder")
        intruder.send(frame("Order", "intruder", "intruder", task="x" * (1 << 20)))
        dropped = await asyncio.to_thread(events.poll, 10_000)
        events.close(linger=0)
        await wait_for_log(logs, lambda e: e["event"] == "broker.disconnected")
        rejected = broker.stats.rejected
    assert dropped, "the broker kept the connection of a peer that sent an oversized frame"
    assert 0 == rejected  # never decoded: libzmq refused it before it was read whole
    event = next(e for e in logs if e["event"] == "broker.disconnected")
    assert "intruder" == event["peer"]


@pytest.mark.parametrize("transport", ["tcp://127.0.0.1:*", None])
async def test_a_connection_without_a_routing_id_is_told_to_set_one(
    context: Context, transport: str | None
) -> None:
    with (
        running_broker(transport, context=context) as broker,
        raw_dealer(context, broker.bound_endpoint, None) as anonymous,
    ):
        anonymous.send(frame("_Register", "probe", "broker"))
        notice = await receive(anonymous)
    assert ("_Undeliverable", "probe:c1") == (notice["type"], notice["message_id"])
    assert "set your socket's routing id (ZMQ_ROUTING_ID) to your agent id" in notice["reason"]


# --- 10. a request nobody handles is refused, not left to time out -----------------------------


class Deaf(Actor):
    """Handles nothing at all."""


class Requester(Actor):
    """At tick 1, sends ``request`` to ``deaf`` and records the answer (or the error)."""

    def __init__(self, actor_id: str, request: Message) -> None:
        super().__init__(actor_id)
        self.request_message = request
        self.outcome = "nothing"

    def on_tick(self, tick: int) -> None:
        if tick == 1:
            self.start_task(self._ask())

    async def _ask(self) -> None:
        try:
            reply = await self.request(self.request_message, timeout=20)
        except RequestTimeout:
            self.outcome = "timeout"
        except DeliveryError as error:
            self.outcome = f"refused: {error}"
        else:
            self.outcome = f"{type(reply).__name__} {_fields(reply)}"

    def final_state(self) -> dict[str, Any]:
        return {"outcome": self.outcome}


def _fields(message: Message) -> dict[str, Any]:
    keys = ("accepted", "success", "reason", "task")
    return {key: getattr(message, key) for key in keys if hasattr(message, key)}


@pytest.mark.parametrize(
    ("request_message", "expected"),
    [
        (
            RequestTalk(recipient="deaf"),
            "TalkReply {'accepted': False, 'reason': 'not handled'}",
        ),
        (
            Order(recipient="deaf", task="hold"),
            "CompletionReport {'success': False, 'reason': 'not handled', 'task': 'hold'}",
        ),
        (
            StatusReport(recipient="deaf", status="idle"),
            "refused: StatusReport to 'deaf': not handled",
        ),
    ],
)
async def test_a_request_no_handler_takes_is_answered_with_a_refusal(
    request_message: Message, expected: str
) -> None:
    result = await run_actors([Requester("asker", request_message), Deaf("deaf")], ticks=4)
    assert {"outcome": expected} == result.final_states["asker"]


async def test_a_forged_undeliverable_fails_no_request_of_ours(context: Context) -> None:
    with (
        running_broker(context=context) as broker,
        raw_dealer(context, broker.bound_endpoint, b"rogue") as rogue,
    ):
        agent = Collector("bot-1")
        task = await start(agent, broker, context)
        register(rogue, "rogue")
        rogue.send(
            frame(
                "_Undeliverable",
                "rogue",
                "bot-1",
                message_id="bot-1:1",
                message_type="Order",
                target="x",
                reason="forged",
            )
        )
        rogue.send(frame("Order", "rogue", "bot-1", 2, task="after"))
        await agent.wait_for(1)
        counts = (agent.stats.rejected, agent.stats.undeliverable)
        await finish(agent, task)
    assert (1, 0) == counts


# --- 11. notices name the frame they refuse ------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        [frame("Ordr", "intruder", "bot-1", 9)],
        [frame("Order", "intruder", "bot-1", 9, task="x"), b"a second part"],
        [frame("Order", "intruder", "bot-1", 9, task="x" * (1 << 20))],
    ],
    ids=["unknown-type", "multipart", "oversized"],
)
async def test_a_rejection_notice_names_the_id_the_frame_carried(
    context: Context, bad: list[bytes]
) -> None:
    with (
        running_broker(context=context) as broker,
        raw_dealer(context, broker.bound_endpoint, b"intruder") as intruder,
    ):
        register(intruder, "intruder")
        intruder.send_multipart(bad)
        notice = await receive(intruder)
    assert ("_Undeliverable", "intruder:9") == (notice["type"], notice["message_id"])
    assert notice["reason"].startswith("rejected by broker: ")


async def test_sender_and_recipient_are_required(context: Context) -> None:
    with (
        running_broker(context=context) as broker,
        raw_dealer(context, broker.bound_endpoint, b"intruder") as intruder,
    ):
        register(intruder, "intruder")
        intruder.send(msgpack.packb({"type": "Order", "recipient": "intruder", "id": "i:1"}))
        no_sender = await receive(intruder)
        intruder.send(msgpack.packb({"type": "Order", "sender": "intruder", "id": "i:2"}))
        no_recipient = await receive(intruder)
    assert ("i:1", "i:2") == (no_sender["message_id"], no_recipient["message_id"])
    assert "sender field '' does not match the connection's id 'intruder'" in no_sender["reason"]
    assert "no agent '' is connected" == no_recipient["reason"]


def test_a_float_field_accepts_an_integer_and_an_int_field_refuses_a_float() -> None:
    codec = Codec()
    report = codec.decode(msgpack.packb({"type": "ThreatReport", "threat": "bot-7", "level": 1}))
    assert isinstance(report, ThreatReport)
    assert (1.0, float) == (report.level, type(report.level))
    with pytest.raises(ProtocolError, match="Expected `int`, got `float`"):
        codec.decode(msgpack.packb({"type": "Order", "task": "hold", "priority": 1.5}))
