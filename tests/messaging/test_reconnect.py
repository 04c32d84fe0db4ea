"""Reconnect storm (issue 12, test 9): the broker is down 10 s under 24 actors; each tries at
most 2 times a second, at its own jittered times, and all re-register within 1.5 s of the
broker's return. The broker is a real process (``kill -9``, then started again on its port);
the actors share the test's process and event loop."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import zmq
from zmq.utils.monitor import recv_monitor_message

from tests.proc import free_tcp_port
from warband.messaging import Actor

BOTS = 24
DOWN_S = 10.0


class Bot(Actor):
    """Notes when it sends _Register (after its first) and when the broker came back."""

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.registers: list[float] = []
        self.back: list[float] = []

    def _registration(self) -> Any:
        self.registers.append(time.monotonic())
        return super()._registration()

    def on_broker_back(self) -> None:
        self.back.append(time.monotonic())
        super().on_broker_back()


class Broker:
    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> float:
        """Start it; the moment its port accepts connections (monotonic)."""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "warband", "broker", "--bind", self.endpoint],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        host, port = self.endpoint.removeprefix("tcp://").rsplit(":", 1)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex((host, int(port))) == 0:
                    return time.monotonic()
            time.sleep(0.005)
        raise AssertionError(f"the broker did not bind {self.endpoint} within 30 s")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture
def broker() -> Iterator[Broker]:
    running = Broker(f"tcp://127.0.0.1:{free_tcp_port()}")
    try:
        yield running
    finally:
        if running.process is not None:
            running.process.kill()
            running.process.wait()


class Retries:
    """ZeroMQ's reconnection tries of each actor's socket, from its monitor (a thread)."""

    def __init__(self, context: zmq.Context[zmq.Socket[bytes]], bots: list[Bot]) -> None:
        self.times: dict[str, list[float]] = {bot.id: [] for bot in bots}
        """When each actor's socket tries to connect again (monotonic)."""
        self.waits: dict[str, list[int]] = {bot.id: [] for bot in bots}
        self._monitors = []
        for bot in bots:
            watched = bot._connection._socket
            monitor = watched.get_monitor_socket(zmq.EVENT_CONNECT_RETRIED)
            self._monitors.append((bot.id, watched, monitor))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        poller = zmq.Poller()
        names = {}
        for name, _, monitor in self._monitors:
            poller.register(monitor, zmq.POLLIN)
            names[monitor] = name
        while not self._stop.is_set():
            for monitor, _ in poller.poll(50):
                # The event comes when a try failed and the next is scheduled; its value is
                # the wait (ms) until that next try.
                event = recv_monitor_message(monitor)
                self.times[names[monitor]].append(time.monotonic() + event["value"] / 1000)
                self.waits[names[monitor]].append(event["value"])

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for _, watched, monitor in self._monitors:
            if not watched.closed:
                watched.disable_monitor()
            monitor.close(linger=0)


def _most_in_one_second(times: list[float]) -> int:
    return max((sum(1 for t in times if start <= t < start + 1.0) for start in times), default=0)


async def test_a_broker_down_10_s_under_24_actors_sees_no_storm_and_all_back_within_1_5_s(
    broker: Broker,
) -> None:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    bots = [Bot(f"bot-{n}") for n in range(1, BOTS + 1)]
    broker.start()
    tasks = [
        asyncio.create_task(
            bot.run(broker.endpoint, context=context, mode="realtime", heartbeat_interval=0)
        )
        for bot in bots
    ]
    retries: Retries | None = None
    try:
        for bot in bots:
            await bot.wait_started(60)
        retries = Retries(context, bots)
        await asyncio.to_thread(broker.kill)
        killed = time.monotonic()
        await asyncio.sleep(DOWN_S)
        returned = await asyncio.to_thread(broker.start)
        deadline = time.monotonic() + 30
        while not all(bot.back for bot in bots) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
    finally:
        if retries is not None:
            retries.close()
        for bot in bots:
            bot.stop()
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 20)
        context.term()

    down = {bot.id: [t for t in retries.times[bot.id] if killed <= t <= returned] for bot in bots}
    registers = {bot.id: [t for t in bot.registers if killed <= t <= returned] for bot in bots}
    recovery = {bot.id: bot.back[0] - returned for bot in bots if bot.back}
    rate = max(_most_in_one_second(times) for times in down.values())
    register_rate = max(_most_in_one_second(times) for times in registers.values())
    first_waits = sorted(retries.waits[bot.id][0] for bot in bots)
    print(
        f"reconnect tries while down per bot: {min(map(len, down.values()))}-"
        f"{max(map(len, down.values()))} (at most {rate} in any second); _Register while down: "
        f"{min(map(len, registers.values()))}-{max(map(len, registers.values()))} (at most "
        f"{register_rate} in any second); first waits after the kill {first_waits[0]}-"
        f"{first_waits[-1]} ms; back after the return: {min(recovery.values()):.3f}-"
        f"{max(recovery.values()):.3f} s"
    )
    assert [bot.id for bot in bots] == sorted(recovery, key=lambda b: int(b.split("-")[1]))
    assert max(recovery.values()) <= 1.5
    assert all(down.values()), "every actor kept trying while the broker was down"
    assert rate <= 2
    assert register_rate <= 2
    # Jitter: the actors do not try at the same instants (each drew its own first wait).
    assert len(set(first_waits)) > BOTS // 2
