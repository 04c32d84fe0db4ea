"""The warband actors of the faults, each run in a child process of its own
(``python -m tests.chaoslib.roles sink|source|bot ENDPOINT NUMBER``), in realtime mode with no
clock, reporting to the parent in JSON lines."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

from warband.messaging import event_loop
from warband.messaging.actor import Actor, handles
from warband.messaging.catalog import EndTalk, RequestTalk, StatusReport, TalkReply
from warband.messaging.tracing import configure_logging

from .children import emit
from .timing import BLACKHOLE_S, FAULT_AT_MOST_S, PING_S, RATE, STOP_GRACE_S, STUCK_PING_S


class _Realtime(Actor):
    lockstep_participant = False  # realtime, no clock: no _Ready


class Sink(_Realtime):
    """Counts the numbered StatusReports from ``source`` for ``seconds``; ends on ``quit``."""

    def __init__(self, seconds: float, stop: Path | None = None) -> None:
        super().__init__("sink")
        self.seconds = seconds
        self.stop_file = stop
        self.received: list[tuple[int, float]] = []

    async def on_start(self) -> None:
        emit(ready=time.monotonic())
        self.call_later(self.seconds, lambda: self.stop("done"))
        if self.stop_file is not None:
            self.start_task(self._until_stop_file(self.stop_file))

    async def _until_stop_file(self, stop: Path) -> None:
        """Stop STOP_GRACE_S after the parent created ``stop`` (its senders are done)."""
        while not stop.exists():
            await asyncio.sleep(0.1)
        await asyncio.sleep(STOP_GRACE_S)
        self.stop("done")

    @handles(StatusReport)
    def on_status(self, message: StatusReport) -> None:
        if message.sender == "source":
            self.received.append((int(str(message.details["seq"])), time.monotonic()))
        elif message.status == "quit" and message.sender == "fuzzer":
            self.stop("quit")


class Source(_Realtime):
    """Sends ``count`` numbered StatusReports to ``sink`` at RATE; notes broker loss."""

    def __init__(self, count: int, stop: Path | None = None) -> None:
        super().__init__("source")
        self.count = count
        self.stop_file = stop
        self.events: list[tuple[str, float]] = []

    async def on_start(self) -> None:
        self.start_task(self._send_all())

    async def _send_all(self) -> None:
        loop = asyncio.get_running_loop()
        start = time.monotonic()
        emit(ready=start)
        lost = False
        sent = 0
        for seq in range(self.count):
            if self.stop_file is not None and self.stop_file.exists():
                break  # the parent is done with its faults: at most ``count``
            delay = start + seq / RATE - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            if self._liveness.lost != lost:
                lost = self._liveness.lost
                stamp = time.monotonic() - (loop.time() - self._liveness.lost_since) * lost
                self.events.append(("lost" if lost else "back", stamp))
                emit(noticed="lost" if lost else "back", at=stamp)  # live, for the parent
            self.send(StatusReport(recipient="sink", status="seq", details={"seq": seq}))
            sent += 1
        await asyncio.sleep(3)
        emit(sent=sent, events=self.events, undeliverable=self.stats.undeliverable)
        self.stop("done")

    def on_broker_back(self) -> None:
        super().on_broker_back()
        self.events.append(("back", time.monotonic()))


class Bot(_Realtime):
    """Answers RequestTalk; blocks its loop on StatusReport ``block``; ends on ``quit``."""

    def __init__(self) -> None:
        super().__init__("bot-1")
        self.closed_by_peer = 0

    async def on_start(self) -> None:
        emit(ready=time.monotonic(), pid=os.getpid())

    @handles(RequestTalk)
    def on_talk(self, message: RequestTalk) -> None:
        with contextlib.suppress(Exception):
            self.reply(message, TalkReply(accepted=True))

    @handles(EndTalk)
    def on_end(self, message: EndTalk) -> None:
        if message.reason.startswith("peer gone"):
            self.closed_by_peer += 1

    @handles(StatusReport)
    def on_status(self, message: StatusReport) -> None:
        if message.status == "block":
            # The fault: a handler that never yields, for BLACKHOLE_S and then until the
            # requester creates the file it named (it has seen the bot flagged), at most
            # FAULT_AT_MOST_S (tests/chaoslib/stuck.py).
            release = Path(str(message.details["until"]))
            at_most = time.monotonic() + FAULT_AT_MOST_S
            time.sleep(BLACKHOLE_S)
            while not release.exists() and time.monotonic() < at_most:
                time.sleep(0.02)
        elif message.status == "quit":
            emit(closed=self.closed_by_peer, failures=self.stats.handler_failures)
            self.stop("quit")


def run_actor(role: str, endpoint: str, number: float, stop: Path | None = None) -> None:
    """Run the actor of ``role`` (``sink``: for ``number`` s; ``source``: ``number`` messages;
    ``bot``) at the broker at ``endpoint`` until it stops; ``sink`` and ``source`` end early
    once the file ``stop`` exists (the parent's faults are over)."""
    # Warnings and errors on stderr, as `warband agent` without --log; unconfigured, structlog
    # prints every event on stdout, the JSON lines this child reports on.
    configure_logging(None, role)
    event_loop.run(_run(role, endpoint, number, stop))


async def _run(role: str, endpoint: str, number: float, stop: Path | None) -> None:
    makers: dict[str, Callable[[], Actor]] = {
        "sink": lambda: Sink(number, stop),
        "source": lambda: Source(int(number), stop),
        "bot": Bot,
    }
    actor = makers[role]()
    ping = STUCK_PING_S if role == "bot" else PING_S
    await actor.run(
        endpoint, mode="realtime", ping_interval=ping, broker_timeout=60, heartbeat_interval=0
    )
    if isinstance(actor, Sink):
        emit(received=actor.received)
