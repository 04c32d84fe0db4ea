"""Fault: a stuck actor. A requester asks a bot process every 0.1 s; the bot is stopped with
SIGSTOP for 3 s (``sigstop``), or its event loop is blocked for 3 s by a handler (``blocked``),
longer only while the broker has not flagged it yet (at most FAULT_AT_MOST_S: a busy machine).
Baseline: a DEALER with ZMTP heartbeats at the broker's ping interval at a raw ROUTER stopped
or blocked the same way."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

import zmq

from .children import Start, children, role_argv
from .processes import scratch_dir
from .result import Result, first_after
from .timing import BLACKHOLE_S, FAULT_AT_MOST_S, STUCK_PING_S, zmtp_heartbeats


def stuck(kind: str) -> Result:
    """SIGSTOP a bot process for 3 s (``sigstop``), or block its event loop 3 s (``blocked``)."""
    from warband.messaging import event_loop
    from warband.messaging.broker import Broker

    with scratch_dir() as tmp:
        endpoint = f"ipc://{tmp}/broker.sock"
        broker = Broker(endpoint)
        broker.start()
        try:
            with children() as start:
                figures = event_loop.run(_stuck_warband(kind, endpoint, start, tmp))
                figures["baseline_detect_s"] = _stuck_baseline(kind, start, tmp)
        finally:
            broker.stop()
    limit = 4 * STUCK_PING_S
    detect = figures["detect_s"]
    passed = (
        detect is not None
        and detect <= figures["stuck_s"]  # flagged while it was stuck
        and figures["closed_bot_side"] >= 1
        and figures["late_replies_dropped"] >= 1
        and figures["timed_out"] == 0
        and figures["unanswered"] == 0
    )
    figures["heartbeat_s"] = STUCK_PING_S
    return Result(
        f"stuck-{kind}",
        passed,
        figures["unanswered"] + figures["timed_out"],
        0,
        figures,
        note=f"flagged within 4 heartbeats = {limit:g} s; baseline: ZMTP heartbeats at the same "
        "interval (None: never noticed)",
        target=f"detect <= 4 heartbeats = {limit:g} s",
        target_met=None if detect is None else detect <= limit,
    )


async def _stuck_warband(kind: str, endpoint: str, start: Start, tmp: Path) -> dict[str, Any]:
    from warband.exceptions import DeliveryError, RequestTimeout
    from warband.messaging.actor import Actor
    from warband.messaging.catalog import RequestTalk, StatusReport

    bot = start(role_argv("bot", endpoint, 0), "bot")
    pid = int(bot.wait_for("ready", 30)["pid"])
    requester = Actor("requester")
    runner = asyncio.get_running_loop().create_task(
        requester.run(endpoint, mode="realtime", ping_interval=STUCK_PING_S, heartbeat_interval=0)
    )
    await requester.wait_started(30)
    outcomes: list[tuple[str, float, float]] = []

    async def ask() -> None:
        asked = time.monotonic()
        try:
            await requester.request(RequestTalk(recipient="bot-1", topic="chaos"), timeout=10)
            outcomes.append(("ok", asked, time.monotonic()))
        except RequestTimeout:
            outcomes.append(("timeout", asked, time.monotonic()))
        except DeliveryError:
            outcomes.append(("gone", asked, time.monotonic()))

    tasks: list[asyncio.Task[None]] = []

    async def ask_for(seconds: float) -> None:
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            tasks.append(asyncio.create_task(ask()))
            await asyncio.sleep(0.1)

    def flagged() -> bool:
        return any(what == "gone" for what, _, _ in outcomes)

    async def ask_while_stuck() -> None:
        """Ask for BLACKHOLE_S; past that, until the bot is flagged (at most FAULT_AT_MOST_S)
        and half a second more, for the requester to close every conversation before the bot
        wakes, as when it is flagged within BLACKHOLE_S."""
        at_most = time.monotonic() + FAULT_AT_MOST_S - BLACKHOLE_S
        await ask_for(BLACKHOLE_S)
        if not flagged():
            while not flagged() and time.monotonic() < at_most:
                await ask_for(0.1)
            await ask_for(0.5)

    await ask_for(1.0)
    fault = time.monotonic()
    if kind == "sigstop":
        os.kill(pid, signal.SIGSTOP)
        await ask_while_stuck()
        os.kill(pid, signal.SIGCONT)
    else:
        release = tmp / "release"  # the blocked handler returns once this exists (actors.Bot)
        requester.send(
            StatusReport(recipient="bot-1", status="block", details={"until": str(release)})
        )
        await ask_while_stuck()
        release.touch()
    woke = time.monotonic()
    await ask_for(2.0)
    await asyncio.wait(tasks, timeout=15)
    requester.send(StatusReport(recipient="bot-1", status="quit"))
    bot_report = await asyncio.to_thread(bot.wait_for, "closed", 10)
    late = requester.stats.late_replies
    requester.stop()
    await asyncio.wait({runner}, timeout=5)
    gone = [done for what, _, done in outcomes if what == "gone"]
    return {
        "detect_s": first_after(gone, fault),
        "stuck_s": round(woke - fault, 3),
        "recover_s": first_after(
            [done for what, asked, done in outcomes if what == "ok" and asked >= woke], woke
        ),
        "requests": len(outcomes),
        "closed_requester_side": len(gone),
        "closed_bot_side": bot_report["closed"],
        "late_replies_dropped": late,
        "timed_out": sum(1 for what, _, _ in outcomes if what == "timeout"),
        "unanswered": len(tasks) - len(outcomes),
    }


def _stuck_baseline(kind: str, start: Start, tmp: Path) -> float | None:
    """A ZMTP-heartbeat DEALER (same interval) at a raw ROUTER that is stopped or blocked."""
    endpoint = f"ipc://{tmp}/raw.sock"
    echo = start(role_argv("raw-receiver", endpoint, 60), "raw-echo")
    echo.wait_for("ready", 30)
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    dealer = context.socket(zmq.DEALER)
    zmtp_heartbeats(dealer, STUCK_PING_S)
    monitor = dealer.get_monitor_socket(zmq.EVENT_DISCONNECTED)
    try:
        dealer.connect(endpoint)
        dealer.send(b"echo")
        dealer.poll(5000)
        dealer.recv()
        fault = time.monotonic()
        if kind == "sigstop":
            os.kill(echo.process.pid, signal.SIGSTOP)
        else:
            dealer.send(b"block")
        detected = monitor.poll(int(BLACKHOLE_S * 1000))
        seen = round(time.monotonic() - fault, 3) if detected else None
        if kind == "sigstop":
            os.kill(echo.process.pid, signal.SIGCONT)
        return seen
    finally:
        dealer.disable_monitor()
        monitor.close(linger=0)
        dealer.close(linger=0)
        context.term()
        echo.close()
