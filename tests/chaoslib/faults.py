"""Fault harnesses shared by the tests (correctness) and ``warband bench chaos`` (times).

Moved here from tests/messaging so both run the same code: the tests assert what happened
(everyone back, nothing lost or run twice, attempts per second), the benchmark prints how fast
next to the issue's targets. Everything a harness starts is stopped, killed and reaped in its
``finally``, whatever happens.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import zmq
import zmq.asyncio
from zmq.utils.monitor import recv_monitor_message

from warband.messaging import Actor, Order, Percept, handles
from warband.messaging.catalog import _Leave, _Register, _Registered
from warband.messaging.codec import Codec

REPO = Path(__file__).resolve().parents[2]


def free_tcp_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def most_in_one_second(times: list[float]) -> int:
    """The most of ``times`` inside any one-second window starting at one of them."""
    return max((sum(1 for t in times if start <= t < start + 1.0) for start in times), default=0)


class BrokerProcess:
    """``warband broker`` in its own process, on a TCP endpoint; killed with ``kill -9``."""

    def __init__(self, endpoint: str, log: Path | None = None) -> None:
        self.endpoint = endpoint
        self.log = log
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self) -> float:
        """Start it; the moment its port accepts connections (monotonic)."""
        with (self.log or Path(os.devnull)).open("ab") as err:
            self.processes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "warband", "broker", "--bind", self.endpoint],
                    cwd=REPO,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=err,
                )
            )
        host, port = self.endpoint.removeprefix("tcp://").rsplit(":", 1)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex((host, int(port))) == 0:
                    return time.monotonic()
            time.sleep(0.005)
        raise TimeoutError(f"the broker did not bind {self.endpoint} within 30 s")

    def kill(self) -> None:
        """``kill -9`` the running broker and reap it."""
        process = self.processes[-1]
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()

    def close(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            process.wait()


async def serving(endpoint: str, context: zmq.Context[zmq.Socket[bytes]]) -> None:
    """Return once a broker at ``endpoint`` answers a registration (it is back, and routing)."""
    probe = zmq.asyncio.Context.shadow(context).socket(zmq.DEALER)
    probe.setsockopt(zmq.ROUTING_ID, b"probe")
    probe.setsockopt(zmq.LINGER, 0)
    probe.connect(endpoint)
    codec = Codec()
    register = codec.encode(_Register(sender="probe", recipient="broker", id="probe:c1"))
    try:
        for _ in range(300):
            await probe.send(register)
            answered = await probe.poll(100)
            if answered and isinstance(codec.decode(await probe.recv()), _Registered):
                await probe.send(codec.encode(_Leave(sender="probe", recipient="broker")))
                return
        raise TimeoutError(f"no broker answered at {endpoint} within 30 s")
    finally:
        probe.close(linger=0)


async def until(condition: Any, timeout: float, what: str) -> None:
    """Wait for ``condition()`` to hold; TimeoutError naming ``what`` after ``timeout`` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.02)


# --- issue 12, test 9: reconnect storm ----------------------------------------------------------


class StormBot(Actor):
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


class Retries:
    """ZeroMQ's reconnection tries of each actor's socket, from its monitor (a thread)."""

    def __init__(self, bots: list[StormBot]) -> None:
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


async def reconnect_storm(bots: int = 24, down_s: float = 10.0) -> dict[str, Any]:
    """Kill -9 the broker under ``bots`` actors, start it again ``down_s`` later on its port.

    Figures: ``back`` (ids that re-registered, in order of their number), ``tries_per_s`` and
    ``registers_per_s`` (the most in any second of one bot while down), ``tries_min/max`` per
    bot, ``distinct_first_waits`` (jitter), ``recover_s`` (the last bot back after the return;
    None when one never came back within 30 s).
    """
    broker = BrokerProcess(f"tcp://127.0.0.1:{free_tcp_port()}")
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    actors = [StormBot(f"bot-{n}") for n in range(1, bots + 1)]
    tasks: list[asyncio.Task[None]] = []
    retries: Retries | None = None
    try:
        await asyncio.to_thread(broker.start)
        tasks = [
            asyncio.create_task(
                bot.run(broker.endpoint, context=context, mode="realtime", heartbeat_interval=0)
            )
            for bot in actors
        ]
        for bot in actors:
            await bot.wait_started(60)
        retries = Retries(actors)
        await asyncio.to_thread(broker.kill)
        killed = time.monotonic()
        await asyncio.sleep(down_s)
        returned = await asyncio.to_thread(broker.start)
        deadline = time.monotonic() + 30
        while not all(bot.back for bot in actors) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
    finally:
        if retries is not None:
            retries.close()
        for bot in actors:
            bot.stop()
        if tasks:
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 20)
        context.term()
        await asyncio.to_thread(broker.close)
    down = {bot.id: [t for t in retries.times[bot.id] if killed <= t <= returned] for bot in actors}
    registers = {bot.id: [t for t in bot.registers if killed <= t <= returned] for bot in actors}
    recovery = {bot.id: bot.back[0] - returned for bot in actors if bot.back}
    first_waits = {retries.waits[bot.id][0] for bot in actors if retries.waits[bot.id]}
    return {
        "bots": bots,
        "down_s": down_s,
        "back": sorted(recovery, key=lambda b: int(b.split("-")[1])),
        "tries_min": min(map(len, down.values())),
        "tries_max": max(map(len, down.values())),
        "tries_per_s": max(most_in_one_second(times) for times in down.values()),
        "registers_per_s": max(most_in_one_second(times) for times in registers.values()),
        "distinct_first_waits": len(first_waits),
        "recover_s": round(max(recovery.values()), 3) if len(recovery) == bots else None,
    }


# --- issue 12, test 4: broker kill -9 and restart after 1 s -------------------------------------

REALTIME: dict[str, Any] = {"mode": "realtime", "heartbeat_interval": 3600, "ping_interval": 0.25}


class Orderly(Actor):
    """Records the orders it runs, and when the broker came back."""

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.tasks: list[str] = []
        self.back = asyncio.Event()
        self.back_at = 0.0

    @handles(Order)
    def on_order(self, order: Order) -> None:
        self.tasks.append(order.task)

    def on_broker_back(self) -> None:
        super().on_broker_back()
        self.back_at = asyncio.get_running_loop().time()
        self.back.set()


async def broker_restart(log: Path, orders_per_bot: int = 120, bots: int = 3) -> dict[str, Any]:
    """A commander orders ``bots`` bots every 20 ms; the broker is killed with ``kill -9`` after
    0.8 s and started again 1 s later.

    Figures: ``tasks`` (each bot's orders run, in the order run), ``lost`` and ``duplicated``
    (orders never run, run more than once), ``resent``, ``abandoned``, ``duplicates_dropped``,
    ``reregister_s`` (the last actor back after the broker answered again).
    """
    broker = BrokerProcess(f"tcp://127.0.0.1:{free_tcp_port()}", log)
    commander = Orderly("commander")
    workers = [Orderly(f"bot-{n}") for n in range(1, bots + 1)]
    actors = [commander, *workers]
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    tasks: list[asyncio.Task[None]] = []
    try:
        await asyncio.to_thread(broker.start)
        tasks = [
            asyncio.create_task(actor.run(broker.endpoint, context=context, **REALTIME))
            for actor in actors
        ]
        for actor in actors:
            await actor.wait_started(timeout=20)
        loop = asyncio.get_running_loop()
        restarted_at = 0.0

        async def kill_and_restart() -> None:
            nonlocal restarted_at
            await asyncio.sleep(0.8)
            await asyncio.to_thread(broker.kill)
            await asyncio.sleep(1.0)
            await asyncio.to_thread(broker.start)
            await serving(broker.endpoint, context)
            restarted_at = loop.time()

        fault = asyncio.create_task(kill_and_restart())
        for number in range(orders_per_bot):
            for bot in workers:
                commander.send(Order(recipient=bot.id, task=str(number)))
            await asyncio.sleep(0.02)
        await fault
        # The deadline only stops a hang: how fast is the benchmark's figure.
        await asyncio.wait_for(asyncio.gather(*(actor.back.wait() for actor in actors)), 30)
        await until(lambda: all(len(bot.tasks) >= orders_per_bot for bot in workers), 20, "orders")
        await until(lambda: not commander._outbox, 20, "every ack")
        expected = {str(n) for n in range(orders_per_bot)}
        return {
            "tasks": {bot.id: bot.tasks for bot in workers},
            "lost": sum(len(expected - set(bot.tasks)) for bot in workers),
            "duplicated": sum(len(bot.tasks) - len(set(bot.tasks)) for bot in workers),
            "orders": orders_per_bot * bots,
            "resent": commander.stats.resent,
            "abandoned": commander.stats.abandoned,
            "duplicates_dropped": sum(bot.stats.duplicates for bot in workers),
            "reregister_s": round(max(actor.back_at for actor in actors) - restarted_at, 3),
        }
    finally:
        for actor in actors:
            actor.stop()
        if tasks:
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), timeout=15)
        context.term()
        await asyncio.to_thread(broker.close)


# --- issue 12, test 5: backpressure -------------------------------------------------------------


def rss_kib(pid: int) -> int:
    """Resident memory of ``pid`` (KiB), from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise LookupError(f"no VmRSS line in /proc/{pid}/status")


class SlowBot(Actor):
    """A bot whose Percept handler takes 50 ms; it notes which Percepts and orders it got."""

    mailbox_limit = 64

    def __init__(self, actor_id: str, last: int) -> None:
        super().__init__(actor_id)
        self.last = last
        self.percepts: list[int] = []
        self.orders: list[str] = []
        self.got_last = asyncio.Event()

    @handles(Percept)
    async def on_percept(self, percept: Percept) -> None:
        await asyncio.sleep(0.05)
        number = percept.facts[0][1]
        assert isinstance(number, int)
        self.percepts.append(number)
        if number == self.last:
            self.got_last.set()

    @handles(Order)
    def on_order(self, order: Order) -> None:
        self.orders.append(order.task)


async def flood(percepts: int = 10_000, order_every: int = 100) -> dict[str, Any]:
    """``percepts`` Percepts (and an Order after every ``order_every``-th) at a SlowBot through
    a broker in its own process (so its memory is its own).

    Figures: ``orders_sent`` and ``orders`` (run, in order), ``percepts`` (handled, in order),
    ``conflated`` (counted), ``conflated_logged`` (the last ``msg.conflated`` log's count, None
    when none was logged), ``mailbox_peak`` and ``mailbox_limit``, ``rss_growth_mb`` (broker).
    """
    import structlog

    broker = BrokerProcess(f"tcp://127.0.0.1:{free_tcp_port()}")
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    bot = SlowBot("bot", last=percepts - 1)
    world = Actor("world")
    options: dict[str, Any] = {"context": context, "mode": "realtime", "heartbeat_interval": 0}
    tasks: list[asyncio.Task[None]] = []
    try:
        await asyncio.to_thread(broker.start)
        tasks = [
            asyncio.create_task(bot.run(broker.endpoint, **options)),
            asyncio.create_task(world.run(broker.endpoint, **options)),
        ]
        await bot.wait_started(30)
        await world.wait_started(30)
        rss_before = rss_kib(broker.processes[-1].pid)
        sent: list[str] = []
        with structlog.testing.capture_logs() as logs:
            for number in range(percepts):
                world.send(Percept(recipient="bot", facts=[["n", number]]))
                if number % order_every == order_every - 1:
                    sent.append(f"order-{number}")
                    world.send(Order(recipient="bot", task=f"order-{number}"))
                if number % 200 == 0:
                    await asyncio.sleep(0)  # let the bot read, as a separate process would
            await asyncio.wait_for(bot.got_last.wait(), 60)
            await until(lambda: len(bot.orders) == len(sent), 30, "every order")
        growth = (rss_kib(broker.processes[-1].pid) - rss_before) / 1024
    finally:
        bot.stop()
        world.stop()
        if tasks:
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 15)
        context.term()
        await asyncio.to_thread(broker.close)
    logged = [e["conflated"] for e in logs if e["event"] == "msg.conflated"]
    return {
        "sent": percepts,
        "orders_sent": sent,
        "orders": bot.orders,
        "percepts": bot.percepts,
        "conflated": bot.stats.conflated,
        "conflated_logged": logged[-1] if logged else None,
        "mailbox_peak": bot.stats.mailbox_peak,
        "mailbox_limit": SlowBot.mailbox_limit,
        "rss_growth_mb": round(growth, 1),
    }


# --- issue 12, test 6: start order --------------------------------------------------------------

START_ORDER_SCENARIO = REPO / "tests" / "scenarios" / "start_order.py"


def _start_broker(endpoint: str) -> None:
    from warband.messaging.broker import Broker
    from warband.messaging.tracing import configure_logging

    # As `warband broker` without --log: warnings and errors on stderr. Left unconfigured,
    # structlog would print every info event on the benchmark's stdout.
    configure_logging(None, "broker")
    Broker(endpoint).serve()  # until it is killed


def _start_agent(agent_id: str, endpoint: str, result: str, bots: int) -> None:
    from warband.launcher import RunOptions, run_agent
    from warband.messaging.tracing import configure_logging
    from warband.scenario import load_scenario

    configure_logging(None, agent_id)  # as `warband agent` without --log
    options = RunOptions(params={"bots": str(bots)}, start_timeout=30, tick_timeout=10)
    scenario = load_scenario(START_ORDER_SCENARIO)
    raise SystemExit(run_agent(scenario, agent_id, endpoint, options, Path(result)))


def start_order(workdir: Path, orders: int = 20, bots: int = 24, seed: int = 12) -> dict[str, Any]:
    """Broker, clock (``world``), a commander and ``bots`` bots, each its own process, started
    in ``orders`` random orders (with up to 50 ms between starts).

    The processes fork from a server that has warband imported already (multiprocessing's
    forkserver), so a start costs milliseconds instead of an interpreter's start-up; each runs
    what ``warband broker`` / ``warband agent`` run. Figures: ``runs``, one per order, with
    ``order``, ``clock_exit``, ``answered`` and ``failed`` (the commander's final state),
    ``completed`` and ``departed``; ``run_s`` (each run's seconds, start to clock's end).
    """
    import multiprocessing
    import random

    import msgspec

    from warband.messaging.clock import RunResult

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(
        ["warband.launcher", "warband.messaging.broker", "warband.scenario", "zmq"]
    )
    names = ["broker", "world", "commander", *(f"bot-{n}" for n in range(1, bots + 1))]
    shuffle = random.Random(seed)
    runs: list[dict[str, Any]] = []
    for run in range(orders):
        order = shuffle.sample(names, len(names))
        folder = workdir / f"run-{run}"
        folder.mkdir(parents=True)
        endpoint = f"ipc://{folder / 'broker.sock'}"
        result = folder / "result.json"
        processes: dict[str, Any] = {}
        started = time.monotonic()
        try:
            for name in order:
                if name == "broker":
                    target: Any = _start_broker
                    args: tuple[Any, ...] = (endpoint,)
                else:
                    target, args = _start_agent, (name, endpoint, str(result), bots)
                processes[name] = context.Process(target=target, args=args, name=name)
                processes[name].start()
                time.sleep(shuffle.uniform(0, 0.05))
            processes["world"].join(60)
            ended = time.monotonic()
        finally:
            for process in processes.values():
                if process.is_alive():
                    process.kill()
                process.join(10)
        entry: dict[str, Any] = {
            "order": order,
            "clock_exit": processes["world"].exitcode,
            "run_s": round(ended - started, 3),
        }
        if result.exists():
            outcome = msgspec.json.decode(result.read_bytes(), type=RunResult)
            commander = outcome.final_states.get("commander") or {}
            entry.update(
                answered=commander.get("answered"),
                failed=commander.get("failed"),
                completed=outcome.completed,
                departed=outcome.departed,
            )
        runs.append(entry)
    return {"runs": runs, "bots": bots}


# --- issue 12, test 13: restart intensity -------------------------------------------------------


def restart_intensity(
    log: Path, timeout: float = 150, restart_period: float = 10.0
) -> dict[str, Any]:
    """Warzone with red's hierarchy, red-2 crashing in on_start (``os._exit(3)``) in every
    incarnation, 3 restarts per ``restart_period`` s (the default intensity: 10):
    ``warband run tests/scenarios/gave_up.py --processes``.

    Figures: ``returncode``, ``stderr`` (its tail), ``restarts``, ``incarnations`` (red-2's
    pids), ``departed`` (red-2's reason), ``completed``, ``gave_up`` (processes the launcher
    gave up on), ``told`` (peers red-commander was told left, gave_up), ``squad_members``
    (red-squad-1's last members), ``run_s``.
    """
    import json

    from warband.messaging.addresses import GAVE_UP

    started = time.monotonic()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "warband",
            "run",
            "tests/scenarios/gave_up.py",
            "--processes",
            "--json",
            "-q",
            "--param",
            "bots=2",
            "--param",
            "blue=freelance",
            "--param",
            "crash_start=red-2",
            "--ticks",
            "60",
            "--max-restarts",
            "3",
            "--restart-period",
            f"{restart_period:g}",
            "--log",
            str(log),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    run_s = round(time.monotonic() - started, 1)
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    summary: dict[str, Any] = json.loads(lines[-1]) if lines else {}
    events = [
        json.loads(line)
        for file in sorted(log.glob("*.jsonl"))
        for line in file.read_text().splitlines()
        if line.strip()
    ]
    plans = [
        e
        for e in events
        if e["event"] == "agent.plan" and e.get("agent") == "red-squad-1" and "memory" in e
    ]
    members = plans[-1]["memory"]["memory"] if plans else []
    return {
        "returncode": result.returncode,
        "stderr": result.stderr[-2000:],
        "restarts": summary.get("restarts"),
        "incarnations": len(summary.get("pids", {}).get("red-2", [])),
        "departed": summary.get("departed", {}).get("red-2"),
        "completed": summary.get("completed"),
        "gave_up": [e["process"] for e in events if e["event"] == "process.gave_up"],
        "told": [
            e["peer"]
            for e in events
            if e["event"] == "agent.subordinate_left"
            and e.get("agent") == "red-commander"
            and str(e.get("reason", "")).startswith(GAVE_UP)
        ],
        "squad_members": sorted(fact[1] for fact in members if fact[0] == "member"),
        "run_s": run_s,
    }
