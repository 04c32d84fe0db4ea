"""Effectively-once delivery: reliable messages the broker loses are re-sent, acknowledged once,
run once, or abandoned and reported; lockstep runs send the same messages with losses as without.

The losses are real: a broker that drops frames on purpose (``warband.messaging.faults``),
seeded so that each test loses exactly the frames it means to.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

import pytest
import structlog
import zmq

from tests.conftest import read_log_events
from tests.messaging.collector import Collector
from tests.test_cli import _agent_sends
from warband.exceptions import DeliveryError
from warband.launcher import make_clock, run_actors_in_process
from warband.messaging import Actor, Message, Order, StatusReport, handles
from warband.messaging._delivery import DedupWindow
from warband.messaging.broker import Broker
from warband.messaging.catalog import RELIABLE_MESSAGES, CooperationResult, _Ack
from warband.messaging.faults import FrameDrops
from warband.messaging.tracing import configure_logging, flush_logging
from warband.scenario import load_scenario

REPO = Path(__file__).resolve().parents[2]


def seed_dropping(pattern: list[bool], rate: float = 0.5) -> int:
    """A seed whose first draws drop (True) or pass (False) frames as ``pattern`` says."""
    for seed in range(10_000):
        draws = random.Random(seed)
        if [draws.random() < rate for _ in pattern] == pattern:
            return seed
    raise AssertionError(f"no seed below 10000 draws {pattern}")


class Sender(Actor):
    """Sends what the test gives it; re-sends fast, so tests need not wait long."""

    resend_after: ClassVar[float] = 0.05
    resend_tries: ClassVar[int] = 4

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.abandoned: list[tuple[str, str]] = []
        self.gave_up = asyncio.Event()

    def on_abandoned(self, message: Message, reason: str) -> None:
        self.abandoned.append((message.id, reason))
        self.gave_up.set()


class Persistent(Sender):
    """A sender that tries long enough to beat a link losing a third of the frames each way."""

    resend_tries: ClassVar[int] = 12


class Pair:
    """A broker that loses frames, a Sender ``commander`` and a Collector ``bot``."""

    def __init__(
        self,
        broker: Broker,
        sender: Sender,
        collector: Collector,
        tasks: dict[str, asyncio.Task[None]],
    ) -> None:
        self.broker = broker
        self.sender = sender
        self.collector = collector
        self.tasks = tasks
        """Each actor's ``run``, by id."""
        self.actors: list[Actor] = [sender, collector]

    async def start(self, actor: Actor) -> None:
        """Run one more actor on this broker until the pair ends."""
        run = actor.run(self.broker.bound_endpoint, context=self.broker._context, mode="realtime")
        self.tasks[actor.id] = asyncio.create_task(run)
        self.actors.append(actor)
        await actor.wait_started()

    async def settled(self) -> None:
        """Wait until the sender has nothing left to re-send."""
        for _ in range(500):
            if not self.sender._outbox:
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"still unacknowledged: {list(self.sender._outbox)}")


@asynccontextmanager
async def pair(drops: FrameDrops, sender_type: type[Sender] = Sender) -> AsyncIterator[Pair]:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    broker = Broker("inproc://delivery", context=context, drops=drops)
    broker.start()
    sender, collector = sender_type("commander"), Collector("bot")
    actors: list[Actor] = [sender, collector]
    tasks = {
        actor.id: asyncio.create_task(
            actor.run(broker.bound_endpoint, context=context, mode="realtime")
        )
        for actor in actors
    }
    run = Pair(broker, sender, collector, tasks)
    try:
        await sender.wait_started()
        await collector.wait_started()
        yield run
    finally:
        for actor in run.actors:
            actor.stop()
        every = tasks.values()
        await asyncio.wait_for(asyncio.gather(*every, return_exceptions=True), timeout=10)
        broker.stop()
        context.term()


async def test_an_order_the_broker_lost_is_sent_again_and_runs_once() -> None:
    drops = FrameDrops(rate=0.5, seed=seed_dropping([True, False]), types={"Order"})
    async with pair(drops) as run:
        run.sender.send(Order(recipient="bot", task="hold"))
        await run.collector.wait_for(1)
        await run.settled()
        assert 1 == drops.dropped
        assert ["hold"] == run.collector.tasks
        assert 1 == run.sender.stats.resent
        assert [] == run.sender.abandoned


async def test_a_lost_ack_brings_a_resend_that_the_receiver_drops_as_a_duplicate() -> None:
    drops = FrameDrops(rate=0.5, seed=seed_dropping([True, False]), types={"_Ack"})
    async with pair(drops) as run:
        with structlog.testing.capture_logs() as logs:
            run.sender.send(Order(recipient="bot", task="hold"))
            await run.collector.wait_for(1)
            await run.settled()
        assert ["hold"] == run.collector.tasks
        assert (1, 1) == (run.sender.stats.resent, run.collector.stats.duplicates)
        assert ["commander:1"] == [e["msg_id"] for e in logs if e["event"] == "msg.duplicate"]


async def test_orders_lost_again_and_again_arrive_once_each_and_in_order() -> None:
    drops = FrameDrops(rate=0.3, seed=11, types={"Order", "_Ack"})
    async with pair(drops, Persistent) as run:
        for number in range(40):
            run.sender.send(Order(recipient="bot", task=f"task-{number}"))
        await run.collector.wait_for(40)
        await run.settled()
        assert drops.dropped > 10
        assert [f"task-{n}" for n in range(40)] == sorted(
            run.collector.tasks, key=lambda task: int(task.split("-")[1])
        )
        assert 0 == run.sender.stats.abandoned


async def test_an_order_never_acknowledged_is_abandoned_and_given_to_on_abandoned() -> None:
    drops = FrameDrops(rate=1.0, types={"Order"})
    async with pair(drops) as run:
        with structlog.testing.capture_logs() as logs:
            sent = run.sender.send(Order(recipient="bot", task="hold"))
            await asyncio.wait_for(run.sender.gave_up.wait(), timeout=10)
        assert [] == run.collector.tasks
        assert [sent.id] == [message_id for message_id, _ in run.sender.abandoned]
        assert "no ack after 4 sends" in run.sender.abandoned[0][1]
        assert (3, 1) == (run.sender.stats.resent, run.sender.stats.abandoned)
        (event,) = [e for e in logs if e["event"] == "msg.abandoned"]
        assert ("Order", "bot") == (event["msg_type"], event["recipient"])


async def test_a_request_whose_message_is_abandoned_fails_with_a_delivery_error() -> None:
    async with pair(FrameDrops(rate=1.0, types={"Order"})) as run:
        with pytest.raises(DeliveryError, match="no ack after 4 sends"):
            await run.sender.request(Order(recipient="bot", task="hold"), timeout=30)
        assert {} == run.sender._pending


async def test_by_default_an_abandoned_message_goes_to_on_failure() -> None:
    class Plain(Actor):
        resend_after: ClassVar[float] = 0.05
        resend_tries: ClassVar[int] = 2
        failures: list[tuple[str, str | None]] = []

        def on_failure(self, error: BaseException, message: Message | None) -> None:
            self.failures.append((str(error), message.id if message else None))

    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    broker = Broker("inproc://abandon", context=context, drops=FrameDrops(rate=1.0))
    broker.start()
    plain, collector = Plain("commander"), Collector("bot")
    tasks = [
        asyncio.create_task(a.run(broker.bound_endpoint, context=context, mode="realtime"))
        for a in (plain, collector)
    ]
    try:
        await plain.wait_started()
        await collector.wait_started()
        sent = plain.send(Order(recipient="bot", task="hold"))
        for _ in range(500):
            if Plain.failures:
                break
            await asyncio.sleep(0.01)
        ((error, message_id),) = Plain.failures
        assert sent.id == message_id
        assert f"Order {sent.id} to 'bot' was abandoned" in error
    finally:
        plain.stop()
        collector.stop()
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), timeout=10)
        broker.stop()
        context.term()


def test_reliable_types_are_orders_their_ends_and_every_conversation_turn() -> None:
    names = {cls.__name__ for cls in RELIABLE_MESSAGES}
    assert {
        "Order",
        "WithdrawOrder",
        "CompletionReport",
        "RequestTalk",
        "TalkReply",
        "RequestCooperation",
        "CooperationReply",
        "EndTalk",
        "CooperationResult",
    } == names
    assert CooperationResult in RELIABLE_MESSAGES


class Reporter(Actor):
    """Collects StatusReports (an agent's superior)."""

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.reports: list[StatusReport] = []

    @handles(StatusReport)
    def on_status(self, report: StatusReport) -> None:
        self.reports.append(report)


# --- lockstep: losses change nothing an agent sees -----------------------------------------------


def _run_ping_pong(log_dir: Path, drops: FrameDrops | None) -> tuple[Any, list[tuple[Any, ...]]]:
    scenario = load_scenario(REPO / "scenarios" / "ping_pong.py")
    params = scenario.resolve_params({"bots": "3", "rounds": "3"})
    actors = scenario.build(params, 5)
    clock = make_clock([a.id for a in actors], ticks=scenario.ticks, seed=5)
    configure_logging(log_dir, "run")
    try:
        result = asyncio.run(run_actors_in_process(actors, clock, drops=drops))
        flush_logging()
    finally:
        configure_logging(None, "tests")
    return result, _agent_sends(log_dir)


def test_a_lockstep_run_losing_reliable_frames_sends_the_same_messages_as_a_clean_run(
    tmp_path: Path,
) -> None:
    clean, clean_sends = _run_ping_pong(tmp_path / "clean", None)
    types = {cls.__name__ for cls in RELIABLE_MESSAGES} | {"_Ack"}
    drops = FrameDrops(rate=0.05, seed=14, types=types)
    lossy, lossy_sends = _run_ping_pong(tmp_path / "lossy", drops)
    assert drops.dropped > 0
    assert clean.final_states == lossy.final_states
    assert (clean.ticks, clean.finish_reason) == (lossy.ticks, lossy.finish_reason)
    assert len(clean_sends) > 50
    assert clean_sends == lossy_sends
    events = read_log_events(tmp_path / "lossy")
    assert [] == [e for e in events if e.get("msg_type") == "_Ack" and e["event"] == "msg.send"]
    assert any(e["event"] == "msg.resend" for e in events)


async def test_an_agent_closes_an_abandoned_order_as_lost_and_tells_its_superior() -> None:
    from tests.agents.test_agent_loop import BOT_DOMAIN, SQUAD_DOMAIN, Inspected, _role, _world

    class Squad(Inspected):
        resend_after: ClassVar[float] = 0.05
        resend_tries: ClassVar[int] = 3

        def final_state(self) -> dict[str, Any]:
            undelivered = [list(f) for f in self.memory.facts.facts("undelivered")]
            return {**super().final_state(), "undelivered": undelivered}

    hq = Reporter("hq")
    squad = Squad(
        "squad-1",
        _role("squad", SQUAD_DOMAIN),
        superior="hq",
        subordinates=["bot-1"],
        facts=[("member", "bot-1"), ("target", "m3")],
    )
    bot = Inspected("bot-1", _role("bot", BOT_DOMAIN), superior="squad-1", team="red")
    actors: list[Actor] = [hq, squad, bot]
    clock = make_clock([a.id for a in actors], ticks=6, world=_world())
    drops = FrameDrops(rate=1.0, types={"Order"})
    result = await run_actors_in_process(actors, clock, drops=drops)
    state = result.final_states["squad-1"]
    assert [["order_ended", "bot-1", "goto", "lost"]] == state["order_ended"]
    assert [["undelivered", "bot-1", "Order"]] == state["undelivered"]
    (report,) = [r for r in hq.reports if r.status == "undelivered"]
    assert ("Order", "bot-1", "squad-1:1") == (
        report.details["type"],
        report.details["recipient"],
        report.details["id"],
    )
    assert 3 == drops.dropped


def test_the_dedup_window_forgets_the_oldest_ids_and_the_least_recent_senders() -> None:
    window = DedupWindow(per_stream=2, streams=2)
    assert not window.seen_before("a", "t1", "a:1")
    assert window.seen_before("a", "t1", "a:1")
    assert not window.seen_before("a", "t2", "a:1")  # a restarted sender: a new token
    window.seen_before("a", "t1", "a:2")
    window.seen_before("a", "t1", "a:3")
    assert not window.seen_before("a", "t1", "a:1")  # pushed out by a:2 and a:3
    window.seen_before("b", "t1", "b:1")  # a third stream: a/t2 was heard least recently
    assert not window.seen_before("a", "t2", "a:1")


async def test_an_ack_from_anyone_but_the_recipient_is_rejected_and_the_message_kept() -> None:
    async with pair(FrameDrops(rate=1.0, types={"Order"})) as run:
        intruder = Collector("intruder")
        await run.start(intruder)
        sent = run.sender.send(Order(recipient="bot", task="hold"))
        with structlog.testing.capture_logs() as logs:
            intruder.send(_Ack(recipient="commander", message_id=sent.id))
            for _ in range(200):
                if run.sender.stats.rejected:
                    break
                await asyncio.sleep(0.01)
        assert [sent.id] == list(run.sender._outbox)
        (event,) = [e for e in logs if e["event"] == "msg.rejected"]
        assert ("intruder", "_Ack") == (event["peer"], event["msg_type"])


def test_each_run_of_an_actor_draws_its_own_ack_token() -> None:
    # A restarted process is a new actor object: its "commander:1" is not its old "commander:1"
    # to a receiver, whose window is keyed by (sender, token).
    first, second = Sender("commander"), Sender("commander")
    assert first._token != second._token
    window = DedupWindow()
    assert not window.seen_before("commander", first._token, "commander:1")
    assert not window.seen_before("commander", second._token, "commander:1")
