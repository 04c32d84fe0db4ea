"""Effectively-once delivery under real faults, with real processes (issue 12, tests 4 and 12).

- a broker killed with ``kill -9`` mid-flow and started again a second later: every actor
  registers again, and every order sent meanwhile runs exactly once;
- 50 cooperation conversations through a broker losing 10% of the frames it routes, while
  responder processes are killed: each side of each conversation ends in exactly one terminal
  state, none leaks, and no CooperationResult is applied twice.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import pytest
import zmq
import zmq.asyncio

from tests.chaoslib.faults import broker_restart, until
from tests.proc import free_tcp_port
from warband.exceptions import DeliveryError, RequestTimeout
from warband.messaging import (
    Actor,
    CooperationReply,
    CooperationResult,
    EndTalk,
    RequestCooperation,
    RequestTalk,
    TalkReply,
    handles,
)
from warband.messaging.broker import Broker
from warband.messaging.catalog import WireCondition
from warband.messaging.faults import FrameDrops

REPO = Path(__file__).resolve().parents[2]
REALTIME: dict[str, Any] = {"mode": "realtime", "heartbeat_interval": 3600, "ping_interval": 0.25}

PEER = [sys.executable, "-m", "tests.messaging.delivery_peer"]

pytestmark = pytest.mark.processes


async def test_a_broker_killed_and_restarted_loses_no_order_and_runs_none_twice(
    tmp_path: Path,
) -> None:
    # The harness is chaoslib/faults.py's; `warband bench chaos --only broker-restart` times it
    # (everyone re-registered within 2 s is its target).
    figures = await broker_restart(tmp_path / "broker.err", orders_per_bot=120, bots=3)

    expected = [str(n) for n in range(120)]
    for bot, tasks in figures["tasks"].items():
        assert expected == sorted(tasks, key=int), bot
    assert (0, 0, 0) == (figures["lost"], figures["duplicated"], figures["abandoned"])
    print({k: v for k, v in figures.items() if k != "tasks"})


# --- 50 cooperation conversations, 10% of frames lost, responders killed ------------------------

TERMINAL = ("done", "refused", "timed out")


class Requester(Actor):
    """Holds one cooperation conversation with ``peer`` and ends in one terminal state."""

    resend_tries: ClassVar[int] = 10

    def __init__(self, actor_id: str, peer: str) -> None:
        super().__init__(actor_id)
        self.peer = peer
        self.states: list[str] = []
        self.applied: Counter[str] = Counter()
        self.result = asyncio.Event()
        self.conversation: str | None = None

    @handles(CooperationResult)
    def on_result(self, result: CooperationResult) -> None:
        if result.conversation is not None:
            self.applied[result.conversation] += 1
        self.result.set()

    async def converse(self) -> None:
        self.states.append(await self._converse())

    async def _converse(self) -> str:
        try:
            talk = await self.request(RequestTalk(recipient=self.peer), timeout=3)
            self.conversation = talk.conversation
            if not isinstance(talk, TalkReply) or not talk.accepted:
                return "refused"
            wanted = [WireCondition(key="door_open", subject="cell-1")]
            answer = await self.request(
                RequestCooperation(
                    recipient=self.peer, conversation=talk.conversation, conditions=wanted
                ),
                timeout=3,
            )
            if not isinstance(answer, CooperationReply) or not answer.accepted:
                return "refused"
            self.send(EndTalk(recipient=self.peer, conversation=talk.conversation))
            await asyncio.wait_for(self.result.wait(), timeout=6)
            return "done"
        except (RequestTimeout, DeliveryError, TimeoutError):
            return "timed out"


async def test_fifty_conversations_through_a_lossy_broker_end_once_on_each_side(
    tmp_path: Path,
) -> None:
    chance = random.Random(12)
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    drops = FrameDrops(rate=0.1, seed=12)
    broker = Broker(f"tcp://127.0.0.1:{free_tcp_port()}", context=context, drops=drops)
    broker.start()
    endpoint = broker.bound_endpoint
    responders = [f"helper-{n}" for n in range(1, 6)]
    journals = {name: tmp_path / f"{name}.jsonl" for name in responders}
    peers: dict[str, subprocess.Popen[bytes]] = {}
    requesters = [Requester(f"asker-{n}", responders[n % 5]) for n in range(1, 51)]
    tasks: list[asyncio.Task[None]] = []
    try:
        for name in responders:
            with (tmp_path / f"{name}.err").open("wb") as err:
                peers[name] = subprocess.Popen(
                    [*PEER, endpoint, name, str(journals[name])],
                    cwd=REPO,
                    stderr=err,
                )
        tasks = [
            asyncio.create_task(actor.run(endpoint, context=context, **REALTIME))
            for actor in requesters
        ]
        for actor in requesters:
            await actor.wait_started(timeout=30)

        def ready(name: str) -> bool:
            return journals[name].exists() and '"ready"' in journals[name].read_text()

        await until(lambda: all(ready(name) for name in responders), 30, "helpers to start")
        killed = chance.sample(responders, 2)

        async def kill_some() -> None:
            for name in killed:
                await asyncio.sleep(chance.uniform(0.05, 0.6))
                peers[name].kill()

        conversations = [asyncio.create_task(r.converse()) for r in requesters]
        await kill_some()
        await asyncio.wait_for(asyncio.gather(*conversations), timeout=45)

        # The requesters' side: one terminal state each, nothing left open, nothing applied twice.
        for requester in requesters:
            assert 1 == len(requester.states), requester.id
            assert requester.states[0] in TERMINAL
            assert {} == requester._pending, requester.id
            assert all(1 == count for count in requester.applied.values()), requester.id
            if requester.states[0] == "done":
                assert 1 == requester.applied[requester.conversation or ""], requester.id
        await until(lambda: all(not r._outbox for r in requesters), 20, "every ack")

        # The responders' side: every conversation a live responder opened ends exactly once.
        def ends(name: str) -> tuple[Counter[str], Counter[str]]:
            lines = [json.loads(line) for line in journals[name].read_text().splitlines()]
            opened = Counter(e["conversation"] for e in lines if e["event"] == "open")
            ended = Counter(e["conversation"] for e in lines if e["event"] in TERMINAL)
            return opened, ended

        alive = [name for name in responders if name not in killed]
        await until(lambda: all(ends(n)[0] == ends(n)[1] for n in alive), 20, "helpers' ends")
        for name in responders:
            opened, ended = ends(name)
            assert all(1 == count for count in opened.values()), name
            assert all(1 == count for count in ended.values()), name
        states = Counter(r.states[0] for r in requesters)
        print(
            f"50 conversations, {drops.dropped} frames dropped, killed {killed}: {dict(states)}; "
            f"{sum(r.stats.resent for r in requesters)} re-sent by requesters"
        )
        assert states["done"] > 0
        assert states["refused"] > 0
    finally:
        for requester in requesters:
            requester.stop()
        if tasks:
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), timeout=15)
        for peer in peers.values():
            if peer.poll() is None:
                peer.kill()
            peer.wait()
        broker.stop()
        context.term()
