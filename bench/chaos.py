"""``warband bench chaos``: faults against warband and against raw ZeroMQ, in the same run.

Each fault runs twice at the same moment or one after the other: once against warband (broker,
actors, ``warband run --processes``) and once against a raw-pyzmq baseline of the same fault
(a DEALER sending numbered frames to a ROUTER at a fixed rate, lost frames counted by sequence
number). Faults:

- **partition**: two network namespaces (the "squad host" with the broker and the receivers,
  the "bots host" with the senders) joined by a veth pair with link-local addresses; the link
  is blackholed both ways (``tc qdisc ... netem loss 100%``) for 3 s, 5 times. Warband's sender
  and the baseline's DEALER send 100 msg/s each across the same link during the same
  blackholes. Needs CAP_NET_ADMIN (``ip netns add``): skipped with the reason otherwise.
- **stuck-sigstop** and **stuck-blocked**: a requester asks a bot process every 0.1 s; the bot
  is stopped with SIGSTOP for 3 s, or its event loop is blocked for 3 s. Warband's broker flags
  it (broker pings every 0.5 s), the requester's waiting conversations fail and close at once,
  the bot is told (EndTalk), and the replies it sends when it wakes are dropped and logged. The
  baseline is a DEALER with ZMTP heartbeats at the same interval: libzmq's I/O thread answers
  heartbeats, so it sees a stopped process but never a blocked loop.
- **churn**: ``kill -9`` a random bot every 2 s in a ``--processes`` Warzone match.
- **clean-exit**: SIGINT or SIGTERM at a random moment of ``--processes`` runs, half of them
  with a bot that keeps sending to an id nobody has: every process gone within 5 s, none
  orphaned, the summary printed.
- **broker-restart**: ``kill -9`` the broker under a commander ordering bots every 20 ms, start
  it again 1 s later: everyone re-registers, outstanding orders are re-sent, none lost or run
  twice. Baseline: a DEALER at a ROUTER closed and bound again.
- **backpressure**: 10,000 Percepts (an Order after every 100th) at a bot whose handler sleeps
  50 ms: no silent drop, orders kept, conflation counted and logged, mailbox within its bound,
  broker RSS growth. Baseline: frames a raw DEALER refuses with EAGAIN at its HWM.
- **start-order**: broker, clock, commander and 24 bots started in 20 random orders: every
  first order answered.
- **reconnect-storm**: the broker down 10 s under 24 actors: tries per second per bot, jitter,
  all back. Baseline: DEALERs with libzmq's default reconnect interval.
- **restart-intensity**: an agent crashing at start under 3 restarts per 10 s is restarted 3
  times, then given up on and its squad led without it.
- **fuzz** (with ``--fuzz N``): N malformed inputs into the codec, and N frames into a live
  broker and actor next to a good client.

The harnesses of broker-restart, backpressure, start-order, reconnect-storm and
restart-intensity live in bench/faults.py, which their tests in tests/messaging run too: the
tests assert what happened, this benchmark prints how fast. ``passed`` is correctness only;
``target`` names the issue's timing target and ``target_met`` says whether this run held it.

``main(argv)`` is the entry point. With ``--json`` the last stdout line is one JSON object whose
``tests`` list holds one entry per fault with ``name``, ``passed``, ``lost``, ``duplicated``,
the times measured (``detect_s``, ``recover_s``, ...), ``target`` and ``target_met``, and the
baseline's figures (``baseline_lost``, ``baseline_detect_s``, ...). Progress goes to stderr.
Children of this benchmark run this file again with ``--child ROLE``.
"""

# No `from __future__ import annotations`: `warband bench` executes this file without adding it
# to sys.modules (see bench/messaging.py).

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import zmq

REPO = Path(__file__).resolve().parent.parent
ME = Path(__file__).resolve()
PY = sys.executable
RATE = 100
"""Messages per second each sender sends across the partitioned link."""
BLACKHOLE_S = 3.0
PING_S = 0.25
"""Broker ping interval of the partition's actors: ``detected within about 1 s``."""
STUCK_PING_S = 0.5
"""Broker ping interval of the stuck bot and its requester: flagged within 4 of them."""


def _log(text: str) -> None:
    print(f"[chaos] {text}", file=sys.stderr, flush=True)


# --- network namespaces -------------------------------------------------------------------------


class NetnsUnavailable(Exception):
    """``ip netns add`` is not permitted here (no CAP_NET_ADMIN) or ``ip``/``tc`` are missing."""


@dataclass
class Hosts:
    """Two namespaces joined by one veth pair: ``a`` (169.254.77.1) and ``b`` (169.254.77.2)."""

    a: str
    b: str
    dev_a: str
    dev_b: str
    addr_a: str = "169.254.77.1"
    addr_b: str = "169.254.77.2"

    def run(self, host: str, *argv: str) -> list[str]:
        return ["ip", "netns", "exec", host, *argv]

    method: str = ""
    """How the link is cut: ``netem`` (100% loss) where the kernel has sch_netem, else ``link``
    (both ends set down: no frame leaves, nothing is answered; the kernel keeps the sockets)."""

    def blackhole(self) -> None:
        if not self.method:
            try:
                self._netem("add", "netem", "loss", "100%")
                self.method = "netem"
                return
            except NetnsUnavailable:
                self.method = "link"
        if self.method == "netem":
            self._netem("add", "netem", "loss", "100%")
        else:
            self._links("down")

    def heal(self) -> None:
        if self.method == "netem":
            self._netem("del")
        elif self.method == "link":
            self._links("up")

    def _netem(self, action: str, *qdisc: str) -> None:
        for host, dev in ((self.a, self.dev_a), (self.b, self.dev_b)):
            _ip("netns", "exec", host, "tc", "qdisc", action, "dev", dev, "root", *qdisc)

    def _links(self, state: str) -> None:
        for host, dev in ((self.a, self.dev_a), (self.b, self.dev_b)):
            _ip("-n", host, "link", "set", dev, state)


def _ip(*argv: str) -> None:
    completed = subprocess.run(["ip", *argv], capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise NetnsUnavailable(f"`ip {' '.join(argv)}` failed: {completed.stderr.strip()}")


@contextlib.contextmanager
def two_hosts() -> Iterator[Hosts]:
    """Make the two namespaces and their link; remove them on the way out, whatever happens."""
    if shutil.which("ip") is None or shutil.which("tc") is None:
        raise NetnsUnavailable("the `ip` and `tc` commands (iproute2) are not installed")
    tag = f"{os.getpid() % 100000}{random.randrange(100):02d}"
    hosts = Hosts(a=f"wbc{tag}a", b=f"wbc{tag}b", dev_a=f"wv{tag}a", dev_b=f"wv{tag}b")
    made: list[str] = []
    try:
        for name in (hosts.a, hosts.b):
            _ip("netns", "add", name)
            made.append(name)
        _ip("link", "add", hosts.dev_a, "type", "veth", "peer", "name", hosts.dev_b)
        _ip("link", "set", hosts.dev_a, "netns", hosts.a)
        _ip("link", "set", hosts.dev_b, "netns", hosts.b)
        for host, dev, addr in (
            (hosts.a, hosts.dev_a, hosts.addr_a),
            (hosts.b, hosts.dev_b, hosts.addr_b),
        ):
            _ip("-n", host, "addr", "add", f"{addr}/24", "dev", dev)
            _ip("-n", host, "link", "set", dev, "up")
            _ip("-n", host, "link", "set", "lo", "up")
        yield hosts
    finally:
        for name in made:  # deleting a namespace deletes its end of the veth, and so the pair
            subprocess.run(["ip", "netns", "delete", name], capture_output=True, check=False)


def netns_available() -> str | None:
    """None when namespaces can be made here, else the reason they cannot."""
    try:
        with two_hosts():
            return None
    except NetnsUnavailable as error:
        return str(error)


# --- child processes ------------------------------------------------------------------------------


class Child:
    """A child process whose stdout carries JSON lines; killed and reaped by :meth:`close`."""

    def __init__(self, argv: list[str], name: str) -> None:
        self.name = name
        self.process = subprocess.Popen(
            argv,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        self.lines: list[dict[str, Any]] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with contextlib.suppress(ValueError):
                item = json.loads(line)
                with self._changed:
                    self.lines.append(item)
                    self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, key: str, timeout: float) -> dict[str, Any]:
        """The first JSON line holding ``key``; raises after ``timeout`` s or if the child ends."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for item in self.lines:
                    if key in item:
                        return item
                left = deadline - time.monotonic()
                if left <= 0 or (self.process.poll() is not None and not self._reader.is_alive()):
                    raise RuntimeError(f"{self.name} gave no {key!r} within {timeout} s")
                self._changed.wait(min(left, 0.1))

    def close(self, grace: float = 3.0) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()
            try:
                self.process.wait(grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self._reader.join(2)
        if self.process.stdout is not None:
            self.process.stdout.close()


@contextlib.contextmanager
def children() -> Iterator[Callable[[list[str], str], Child]]:
    started: list[Child] = []

    def start(argv: list[str], name: str) -> Child:
        child = Child(argv, name)
        started.append(child)
        return child

    try:
        yield start
    finally:
        for child in reversed(started):
            child.close()


def _role(role: str, *args: object) -> list[str]:
    return [PY, str(ME), "--child", role, *(str(a) for a in args)]


def _warband(*args: str) -> list[str]:
    return [PY, "-m", "warband", *args]


# --- what the children do -------------------------------------------------------------------------


def _emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def _raw_sender(endpoint: str, count: int, heartbeat_s: float) -> None:
    """DEALER sending ``count`` numbered frames at RATE; reports disconnects and what it sent."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.HEARTBEAT_IVL, int(heartbeat_s * 1000))
    dealer.setsockopt(zmq.HEARTBEAT_TIMEOUT, int(heartbeat_s * 3000))
    dealer.setsockopt(zmq.LINGER, 2000)
    monitor = dealer.get_monitor_socket(zmq.EVENT_DISCONNECTED | zmq.EVENT_CONNECTED)
    dealer.connect(endpoint)
    events: list[tuple[str, float]] = []

    def watch() -> None:
        from zmq.utils.monitor import recv_monitor_message

        while True:
            try:
                event = recv_monitor_message(monitor)
            except zmq.ZMQError:
                return
            name = "disconnected" if event["event"] == zmq.EVENT_DISCONNECTED else "connected"
            events.append((name, time.monotonic()))

    threading.Thread(target=watch, daemon=True).start()
    start = time.monotonic()
    _emit(ready=start)
    for seq in range(count):
        delay = start + seq / RATE - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        dealer.send(struct.pack(">Q", seq))
    time.sleep(3)
    _emit(sent=count, events=events)
    dealer.disable_monitor()
    dealer.close()
    context.term()


def _raw_receiver(endpoint: str, duration: float) -> None:
    """ROUTER counting numbered frames for ``duration`` s; echoes them when asked to."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    router = context.socket(zmq.ROUTER)
    router.bind(endpoint)
    router.setsockopt(zmq.RCVTIMEO, 100)
    _emit(ready=time.monotonic())
    received: list[tuple[int, float]] = []
    deadline = time.monotonic() + duration
    while time.monotonic() < deadline:
        try:
            peer, payload = router.recv_multipart()
        except zmq.Again:
            continue
        if payload == b"block":
            time.sleep(BLACKHOLE_S)
            continue
        if payload.startswith(b"echo"):
            router.send_multipart([peer, payload])
            continue
        received.append((struct.unpack(">Q", payload)[0], time.monotonic()))
    _emit(received=received)
    router.close(linger=0)
    context.term()


def _wb_child(role: str, endpoint: str, number: float) -> None:
    """The warband actors of the faults, each in its own process (see the Actor classes below)."""
    from warband.messaging import event_loop

    event_loop.run(_wb_child_main(role, endpoint, number))


async def _wb_child_main(role: str, endpoint: str, number: float) -> None:
    from warband.messaging.actor import Actor, handles
    from warband.messaging.catalog import EndTalk, RequestTalk, StatusReport, TalkReply

    class Sink(Actor):
        """Counts the numbered StatusReports from ``source`` for ``number`` seconds."""

        lockstep_participant = False  # realtime, no clock: no _Ready

        def __init__(self) -> None:
            super().__init__("sink")
            self.received: list[tuple[int, float]] = []

        async def on_start(self) -> None:
            _emit(ready=time.monotonic())
            self.call_later(number, lambda: self.stop("done"))

        @handles(StatusReport)
        def on_status(self, message: StatusReport) -> None:
            if message.sender == "source":
                self.received.append((int(str(message.details["seq"])), time.monotonic()))
            elif message.status == "quit" and message.sender == "fuzzer":
                self.stop("quit")

    class Source(Actor):
        """Sends ``number`` numbered StatusReports to ``sink`` at RATE; notes broker loss."""

        lockstep_participant = False  # realtime, no clock: no _Ready

        def __init__(self) -> None:
            super().__init__("source")
            self.events: list[tuple[str, float]] = []

        async def on_start(self) -> None:
            self.start_task(self._send_all())

        async def _send_all(self) -> None:
            loop = asyncio.get_running_loop()
            start = time.monotonic()
            _emit(ready=start)
            lost = False
            count = int(number)
            for seq in range(count):
                delay = start + seq / RATE - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                if self._liveness.lost != lost:
                    lost = self._liveness.lost
                    stamp = time.monotonic() - (loop.time() - self._liveness.lost_since) * lost
                    self.events.append(("lost" if lost else "back", stamp))
                self.send(StatusReport(recipient="sink", status="seq", details={"seq": seq}))
            await asyncio.sleep(3)
            _emit(sent=count, events=self.events, undeliverable=self.stats.undeliverable)
            self.stop("done")

        def on_broker_back(self) -> None:
            super().on_broker_back()
            self.events.append(("back", time.monotonic()))

    class Bot(Actor):
        """Answers RequestTalk; blocks its loop on StatusReport ``block``; ends on ``quit``."""

        lockstep_participant = False  # realtime, no clock: no _Ready

        def __init__(self) -> None:
            super().__init__("bot-1")
            self.closed_by_peer = 0

        async def on_start(self) -> None:
            _emit(ready=time.monotonic(), pid=os.getpid())

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
                time.sleep(BLACKHOLE_S)  # the fault: a handler that never yields
            elif message.status == "quit":
                _emit(closed=self.closed_by_peer, failures=self.stats.handler_failures)
                self.stop("quit")

    actor: Actor = {"sink": Sink, "source": Source, "bot": Bot}[role]()
    ping = STUCK_PING_S if role == "bot" else PING_S
    await actor.run(
        endpoint, mode="realtime", ping_interval=ping, broker_timeout=60, heartbeat_interval=0
    )
    if isinstance(actor, Sink):
        _emit(received=actor.received)


def _child(argv: list[str]) -> int:
    role, *args = argv
    if role == "raw-sender":
        _raw_sender(args[0], int(args[1]), float(args[2]))
    elif role == "raw-receiver":
        _raw_receiver(args[0], float(args[1]))
    else:
        _wb_child(role, args[0], float(args[1]))
    return 0


# --- results --------------------------------------------------------------------------------------


@dataclass
class Result:
    """One fault's figures; ``entry()`` is its JSON object."""

    name: str
    passed: bool | None
    lost: int | None = None
    duplicated: int | None = None
    figures: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    target: str = ""
    """The issue's timing target, in words (empty: the issue sets none for this fault)."""
    target_met: bool | None = None
    """Whether the figures met ``target`` (None: no target, or no figure to hold it to).
    ``passed`` is correctness only (lost, duplicated, detected at all, everyone back...)."""

    def entry(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "lost": self.lost,
            "duplicated": self.duplicated,
            **self.figures,
            "target": self.target,
            "target_met": self.target_met,
            "note": self.note,
        }


def _count(received: list[list[float]], sent: int) -> tuple[int, int]:
    seqs = [int(item[0]) for item in received]
    distinct = set(seqs)
    return sent - len(distinct & set(range(sent))), len(seqs) - len(distinct)


def _after(times: list[float], moment: float) -> float | None:
    later = [t - moment for t in times if t >= moment]
    return round(min(later), 3) if later else None


def _worst(values: Sequence[float | None]) -> float | None:
    if not values or any(v is None for v in values):
        return None
    return round(max(v for v in values if v is not None), 3)


# --- fault: silent partition ----------------------------------------------------------------------


def partition(blackholes: int = 5, gap_s: float = 2.0) -> Result:
    """Blackhole the bots' host from the squad's host ``blackholes`` times for 3 s each."""
    try:
        with two_hosts() as hosts, children() as start:
            return _partition(hosts, start, blackholes, gap_s)
    except NetnsUnavailable as error:
        return Result("partition", None, note=f"skipped: {error}")


def _partition(
    hosts: Hosts, start: Callable[[list[str], str], Child], blackholes: int, gap_s: float
) -> Result:
    span = 1.0 + blackholes * (BLACKHOLE_S + gap_s)
    count = int(span * RATE)
    listen = f"tcp://{hosts.addr_a}"
    broker = start(hosts.run(hosts.a, *_warband("broker", "--bind", f"{listen}:5555")), "broker")
    raw_rx = start(hosts.run(hosts.a, *_role("raw-receiver", f"{listen}:5556", span + 15)), "raw")
    time.sleep(0.3)  # the broker binds before the sink connects (it would retry, but slower)
    sink = start(hosts.run(hosts.a, *_role("sink", f"{listen}:5555", span + 12)), "sink")
    for child in (raw_rx, sink):
        child.wait_for("ready", 30)
    raw_tx = start(
        hosts.run(hosts.b, *_role("raw-sender", f"{listen}:5556", count, PING_S)), "raw-tx"
    )
    source = start(hosts.run(hosts.b, *_role("source", f"{listen}:5555", count)), "source")
    began = max(raw_tx.wait_for("ready", 30)["ready"], source.wait_for("ready", 30)["ready"])
    _log(
        f"partition: {count} messages each way at {RATE}/s, "
        f"{blackholes} blackholes of {BLACKHOLE_S:g} s"
    )
    cuts: list[tuple[float, float]] = []
    time.sleep(max(0.0, began + 1.0 - time.monotonic()))
    try:
        for number in range(blackholes):
            cut = time.monotonic()
            hosts.blackhole()
            time.sleep(BLACKHOLE_S)
            hosts.heal()
            healed = time.monotonic()
            cuts.append((cut, healed))
            _log(f"partition: blackhole {number + 1}/{blackholes} healed")
            time.sleep(gap_s)
    finally:
        with contextlib.suppress(NetnsUnavailable):
            hosts.heal()
    sent = source.wait_for("sent", span + 30)
    raw_sent = raw_tx.wait_for("sent", 30)
    got = sink.wait_for("received", 30)["received"]
    raw_got = raw_rx.wait_for("received", 30)["received"]
    broker.close()
    lost, duplicated = _count(got, count)
    raw_lost, raw_dup = _count(raw_got, count)
    lost_at = [t for name, t in sent["events"] if name == "lost"]
    raw_lost_at = [t for name, t in raw_sent["events"] if name == "disconnected"]
    detect = [_after(lost_at, cut) for cut, _ in cuts]
    recover = [_after([t for _, t in got], healed) for _, healed in cuts]
    raw_detect = [_after(raw_lost_at, cut) for cut, _ in cuts]
    raw_recover = [_after([t for _, t in raw_got], healed) for _, healed in cuts]
    detect_s, recover_s = _worst(detect), _worst(recover)
    passed = (
        detect_s is not None
        and detect_s <= BLACKHOLE_S  # noticed during each blackhole, not by the next one
        and recover_s is not None
        and lost == 0
        and duplicated == 0
    )
    met = (
        None
        if detect_s is None or recover_s is None
        else detect_s <= 1.0 + PING_S and (recover_s <= 0.5)
    )
    return Result(
        "partition",
        passed,
        lost,
        duplicated,
        {
            "sent": count,
            "blackholes": blackholes,
            "cut_by": hosts.method,
            "detect_s": detect_s,
            "recover_s": recover_s,
            "detect_each_s": detect,
            "recover_each_s": recover,
            "reported_undeliverable": sent["undeliverable"],
            "baseline_lost": raw_lost,
            "baseline_duplicated": raw_dup,
            "baseline_detect_s": _worst(raw_detect),
            "baseline_recover_s": _worst(raw_recover),
        },
        note="lost: sent but never received (each one reported to the sender as undeliverable "
        "when reported_undeliverable says so); resend is the reliable-delivery layer's (issue 12)",
        target=f"detect <= {1.0 + PING_S:g} s, recover <= 0.5 s",
        target_met=met,
    )


# --- fault: stuck actor ---------------------------------------------------------------------------


async def _stuck_warband(
    kind: str, endpoint: str, start: Callable[[list[str], str], Child]
) -> dict[str, Any]:
    from warband.exceptions import DeliveryError, RequestTimeout
    from warband.messaging.actor import Actor
    from warband.messaging.catalog import RequestTalk, StatusReport

    bot = start(_role("bot", endpoint, 0), "bot")
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

    await ask_for(1.0)
    fault = time.monotonic()
    if kind == "sigstop":
        os.kill(pid, signal.SIGSTOP)
        await ask_for(BLACKHOLE_S)
        os.kill(pid, signal.SIGCONT)
    else:
        requester.send(StatusReport(recipient="bot-1", status="block"))
        await ask_for(BLACKHOLE_S)
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
        "detect_s": _after(gone, fault),
        "recover_s": _after(
            [done for what, asked, done in outcomes if what == "ok" and asked >= woke], woke
        ),
        "requests": len(outcomes),
        "closed_requester_side": len(gone),
        "closed_bot_side": bot_report["closed"],
        "late_replies_dropped": late,
        "timed_out": sum(1 for what, _, _ in outcomes if what == "timeout"),
        "unanswered": len(tasks) - len(outcomes),
    }


def _stuck_baseline(kind: str, start: Callable[[list[str], str], Child], tmp: Path) -> float | None:
    """A ZMTP-heartbeat DEALER (same interval) at a raw ROUTER that is stopped or blocked."""
    endpoint = f"ipc://{tmp}/raw.sock"
    echo = start(_role("raw-receiver", endpoint, 60), "raw-echo")
    echo.wait_for("ready", 30)
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.HEARTBEAT_IVL, int(STUCK_PING_S * 1000))
    dealer.setsockopt(zmq.HEARTBEAT_TIMEOUT, int(STUCK_PING_S * 3000))
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


def stuck(kind: str) -> Result:
    """SIGSTOP a bot process for 3 s (``sigstop``), or block its event loop 3 s (``blocked``)."""
    from warband.messaging import event_loop
    from warband.messaging.broker import Broker

    tmp = Path(tempfile.mkdtemp(prefix="wbc-", dir="/tmp"))
    endpoint = f"ipc://{tmp}/broker.sock"
    broker = Broker(endpoint)
    broker.start()
    try:
        with children() as start:
            figures = event_loop.run(_stuck_warband(kind, endpoint, start))
            figures["baseline_detect_s"] = _stuck_baseline(kind, start, tmp)
    finally:
        broker.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    limit = 4 * STUCK_PING_S
    detect = figures["detect_s"]
    passed = (
        detect is not None
        and detect <= BLACKHOLE_S  # flagged while it was stuck
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


# --- processes of a run ---------------------------------------------------------------------------


def _proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent, process group) of ``pid``, None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[2])


def _alive(pid: int) -> bool:
    found = _proc_stat(pid)
    return found is not None and found[0] not in ("Z", "X")


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _agents_of(launcher: int) -> dict[str, int]:
    """Agent id -> pid of the launcher's children started as ``warband agent --id ID``."""
    found: dict[str, int] = {}
    for pid in _pids():
        stat = _proc_stat(pid)
        if stat is None or stat[1] != launcher or not _alive(pid):
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "--id" in argv:
            found[argv[argv.index("--id") + 1]] = pid
    return found


def _members(groups: set[int]) -> list[int]:
    return [
        pid
        for pid in _pids()
        if (s := _proc_stat(pid)) is not None and s[2] in groups and _alive(pid)
    ]


def _last_json(text: str) -> dict[str, Any] | None:
    for line in reversed(text.strip().splitlines()):
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                return value
    return None


@dataclass
class Launch:
    """A ``warband run ... --processes --json`` launcher and the files it writes to."""

    process: subprocess.Popen[bytes]
    out: Path
    err: Path

    def kill_all(self, groups: set[int]) -> None:
        for group in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def _launch(tmp: Path, name: str, *args: str) -> Launch:
    out, err = tmp / f"{name}.out", tmp / f"{name}.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            _warband("run", *args, "--processes", "--json"),
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            env={**os.environ, "TMPDIR": str(tmp)},
        )
    return Launch(process, out, err)


def _wait(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


# --- fault: bot churn -----------------------------------------------------------------------------


def _bots_of(launcher: int) -> list[str]:
    """The Warzone bots (``red-3``, ``blue-7``: not squads, commanders or the world) running."""
    return [a for a in _agents_of(launcher) if re.fullmatch(r"(red|blue)-\d+", a)]


def churn(seconds: float, bots: int = 12, seed: int = 1) -> Result:
    """``kill -9`` a random bot every 2 s for ``seconds`` in a Warzone match with processes."""
    rng = random.Random(seed)
    tmp = Path(tempfile.mkdtemp(prefix="wbc-", dir="/tmp"))
    launch = _launch(
        tmp,
        "churn",
        "scenarios/warzone.py",
        "--param",
        f"bots={bots}",
        "--seed",
        str(seed),
        "--ticks",
        str(int(seconds * 12) + 40),
        "--tick-timeout",
        "5",
        "--log",
        str(tmp / "log"),
    )
    groups: set[int] = set()
    kills = restarted = 0
    killed: list[str] = []
    restart_s: list[float] = []
    try:
        if not _wait(lambda: len(_bots_of(launch.process.pid)) >= 2 * bots, 60):
            raise RuntimeError("the match's bots did not all start within 60 s")
        groups = {s[2] for pid in _agents_of(launch.process.pid).values() if (s := _proc_stat(pid))}
        _log(f"churn: {2 * bots} bots, a kill -9 every 2 s for {seconds:g} s")
        until = time.monotonic() + seconds
        while time.monotonic() < until and launch.process.poll() is None:
            time.sleep(2.0)
            agents = _agents_of(launch.process.pid)
            victims = sorted(_bots_of(launch.process.pid))
            if not victims:
                break
            victim = rng.choice(victims)
            old = agents[victim]
            killed_at = time.monotonic()
            with contextlib.suppress(ProcessLookupError):
                os.kill(old, signal.SIGKILL)
            kills += 1
            killed.append(victim)
            back = _wait(
                lambda v=victim, o=old: _agents_of(launch.process.pid).get(v, o) != o,  # type: ignore[misc]
                10,
            )
            if back:
                restarted += 1
                restart_s.append(time.monotonic() - killed_at)
        launch.process.wait(timeout=seconds * 4 + 120)
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        launch.kill_all(groups)
        shutil.rmtree(tmp, ignore_errors=True)
        return Result("churn", False, note=str(error))
    summary = _last_json(launch.out.read_text()) or {}
    survivors = _members(groups)
    launch.kill_all(groups)
    orders = order_fates(tmp / "log", set(killed))
    shutil.rmtree(tmp, ignore_errors=True)
    completed = bool(summary.get("completed"))
    passed = (
        completed
        and kills > 0
        and restarted == kills
        and not survivors
        and orders["lost"] == 0
        and orders["duplicated"] == 0
    )
    return Result(
        "churn",
        passed,
        orders["lost"],
        orders["duplicated"],
        {
            "seconds": seconds,
            "bots": 2 * bots,
            "kills": kills,
            "restarted": restarted,
            "restart_s": _worst(restart_s),
            "completed": completed,
            "ticks": summary.get("ticks"),
            "restarts_reported": summary.get("restarts"),
            "orphans": len(survivors),
            "orders": orders,
        },
        note="orders from the run's traces: lost = sent to a bot never killed, neither received "
        "nor abandoned; duplicated = received twice by one process; orders to killed bots are "
        "counted apart (a kill -9 loses the victim's unwritten trace lines)",
    )


def order_fates(log_dir: Path, killed: set[str]) -> dict[str, int]:
    """What became of every Order in a run's traces (see :func:`churn`)."""
    sent: dict[str, str] = {}
    received: dict[tuple[str, int], int] = {}
    abandoned: set[str] = set()
    for file in sorted(log_dir.glob("*.jsonl")):
        for line in file.read_text(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a line cut by kill -9
            if event.get("msg_type") != "Order":
                continue
            kind, msg_id = event.get("event"), str(event.get("msg_id"))
            if kind == "msg.send":
                sent[msg_id] = str(event.get("recipient"))
            elif kind == "msg.recv":
                key = (msg_id, int(event.get("pid", 0)))
                received[key] = received.get(key, 0) + 1
            elif kind == "msg.abandoned":
                abandoned.add(msg_id)
    got = {msg_id for msg_id, _ in received}
    to_killed = {i for i, r in sent.items() if r in killed}
    lost = {i for i in sent if i not in got and i not in abandoned and i not in to_killed}
    return {
        "sent": len(sent),
        "received": len(got & set(sent)),
        "abandoned": len(abandoned),
        "to_killed_bots": len(to_killed),
        "lost": len(lost),
        "duplicated": sum(count - 1 for count in received.values()),
    }


# --- fault: clean exit ----------------------------------------------------------------------------


PENDING = "tests/scenarios/pending_sends.py"


def clean_exit(runs: int, seed: int = 2) -> Result:
    """SIGINT or SIGTERM at a random moment of ``runs`` runs; half keep sending to a ghost."""
    rng = random.Random(seed)
    times: list[float] = []
    orphans = failures = 0
    problems: list[str] = []
    for number in range(runs):
        tmp = Path(tempfile.mkdtemp(prefix="wbc-", dir="/tmp"))
        marker = tmp / "ticking"
        ghost = "ghost" if number % 2 else ""
        signum = rng.choice((signal.SIGINT, signal.SIGTERM))
        launch = _launch(
            tmp, "run", PENDING, "--param", f"marker={marker}", "--param", f"ghost={ghost}"
        )
        groups: set[int] = set()
        try:
            if not _wait(lambda m=marker, r=launch: m.exists() or r.process.poll() is not None, 60):  # type: ignore[misc]
                raise RuntimeError("did not start ticking within 60 s")
            groups = {
                s[2] for pid in _agents_of(launch.process.pid).values() if (s := _proc_stat(pid))
            }
            time.sleep(rng.uniform(0.0, 2.0))
            signalled = time.monotonic()
            launch.process.send_signal(signum)
            launch.process.wait(timeout=30)
            # The deadline only stops a hang: within 5 s is the target, not the verdict.
            _wait(lambda g=groups: not _members(g), 30.0)  # type: ignore[misc]
            times.append(time.monotonic() - signalled)
            left = _members(groups)
            orphans += len(left)
            summary = _last_json(launch.out.read_text())
            if summary is None or "completed" not in summary:
                problems.append(f"run {number + 1}: no summary line")
            if launch.process.returncode != 128 + signum:
                problems.append(f"run {number + 1}: exit code {launch.process.returncode}")
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            failures += 1
            problems.append(f"run {number + 1}: {error}")
        finally:
            launch.kill_all(groups)
            shutil.rmtree(tmp, ignore_errors=True)
        _log(
            f"clean exit: run {number + 1}/{runs} ({signal.Signals(signum).name}"
            f"{', pending sends to a ghost' if ghost else ''}) done"
        )
    worst = _worst(list(times)) if times else None
    passed = not failures and not problems and orphans == 0 and worst is not None
    return Result(
        "clean-exit",
        passed,
        None,
        None,
        {
            "runs": runs,
            "exit_s": worst,
            "exit_each_s": [round(t, 2) for t in times],
            "orphans": orphans,
        },
        note="; ".join(problems),
        target="every process gone <= 5 s after the signal",
        target_met=None if worst is None else worst <= 5.0,
    )


# --- faults whose harness the tests share (bench/faults.py) -------------------------------------


def _faults() -> Any:
    """bench/faults.py, the harnesses its tests run too (imported as ``bench.faults``)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from bench import faults

    return faults


def _free_port() -> int:
    return int(_faults().free_tcp_port())


def broker_restart(bots: int = 8, orders_per_bot: int = 120) -> Result:
    """Issue 12, test 4: ``kill -9`` the broker mid-flow and start it again after 1 s."""
    from warband.messaging import event_loop

    tmp = Path(tempfile.mkdtemp(prefix="wbc-", dir="/tmp"))
    try:
        figures = event_loop.run(
            _faults().broker_restart(tmp / "broker.err", orders_per_bot=orders_per_bot, bots=bots)
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    del figures["tasks"]
    lost, duplicated = figures.pop("lost"), figures.pop("duplicated")
    figures.update(_raw_router_restart())
    recover = figures["reregister_s"]
    return Result(
        "broker-restart",
        lost == 0 and duplicated == 0 and figures["abandoned"] == 0,
        lost,
        duplicated,
        {**figures, "recover_s": recover, "actors": bots + 1},
        note="recover_s: the last actor re-registered after the broker answered again; baseline: "
        "a DEALER sending 100 numbered frames/s to a ROUTER closed (as by kill -9) and bound "
        "again 1 s later",
        target="everyone re-registered <= 2 s after the restart",
        target_met=recover <= 2.0,
    )


def _raw_router_restart(seconds: float = 3.0) -> dict[str, Any]:
    endpoint = f"tcp://127.0.0.1:{_free_port()}"
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    router: zmq.Socket[bytes] | None = context.socket(zmq.ROUTER)
    assert router is not None
    router.setsockopt(zmq.LINGER, 0)
    router.bind(endpoint)
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(endpoint)
    down_at = 0.0
    received: set[int] = set()
    duplicated = 0
    rebound_at: float | None = None
    first_after: float | None = None
    count = int(seconds * RATE)
    try:
        began = time.monotonic()
        for seq in range(count):
            dealer.send(struct.pack("!I", seq))
            now = time.monotonic()
            if router is not None and rebound_at is None and now - began >= 0.8:
                router.close(linger=0)  # the broker dies with what it had not read
                router = None
                down_at = now
            if router is None and now - down_at >= 1.0:
                router = context.socket(zmq.ROUTER)
                router.setsockopt(zmq.LINGER, 0)
                router.bind(endpoint)
                rebound_at = time.monotonic()
            while router is not None and router.poll(0):
                _, frame = router.recv_multipart()
                number = struct.unpack("!I", frame)[0]
                duplicated += number in received
                received.add(number)
                if rebound_at is not None and first_after is None:
                    first_after = time.monotonic() - rebound_at
            time.sleep(max(0.0, began + (seq + 1) / RATE - time.monotonic()))
        deadline = time.monotonic() + 2.0
        while router is not None and time.monotonic() < deadline:
            if router.poll(100):
                _, frame = router.recv_multipart()
                number = struct.unpack("!I", frame)[0]
                duplicated += number in received
                received.add(number)
    finally:
        dealer.close(linger=0)
        if router is not None:
            router.close(linger=0)
        context.term()
    return {
        "baseline_lost": count - len(received),
        "baseline_duplicated": duplicated,
        "baseline_recover_s": None if first_after is None else round(first_after, 3),
    }


def reconnect_storm(bots: int = 24, down_s: float = 10.0) -> Result:
    """Issue 12, test 9: the broker down ``down_s`` under ``bots`` actors."""
    from warband.messaging import event_loop

    figures = event_loop.run(_faults().reconnect_storm(bots, down_s))
    back = figures.pop("back")
    figures["back"] = len(back)
    figures.update(_raw_storm(bots, min(down_s, 3.0)))
    recover = figures["recover_s"]
    passed = (
        len(back) == bots
        and figures["tries_min"] > 0
        and figures["tries_per_s"] <= 2
        and figures["registers_per_s"] <= 2
        and figures["distinct_first_waits"] > bots // 2
    )
    return Result(
        "reconnect-storm",
        passed,
        bots - len(back),
        None,
        figures,
        note="tries_per_s: the most reconnection tries of one bot in any second while down; "
        "lost: bots that never re-registered; baseline: DEALERs with libzmq's defaults "
        "(RECONNECT_IVL 100 ms, no jitter) at a closed port, then a ROUTER bound there",
        target="<= 2 tries/s per bot; all back <= 1.5 s after the return",
        target_met=None if recover is None else recover <= 1.5,
    )


def _raw_storm(bots: int, down_s: float) -> dict[str, Any]:
    from zmq.utils.monitor import recv_monitor_message

    faults = _faults()
    endpoint = f"tcp://127.0.0.1:{_free_port()}"
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    dealers = [context.socket(zmq.DEALER) for _ in range(bots)]
    monitors = [
        dealer.get_monitor_socket(zmq.EVENT_CONNECT_RETRIED | zmq.EVENT_CONNECTED)
        for dealer in dealers
    ]
    tries: list[list[float]] = [[] for _ in dealers]
    connected: dict[int, float] = {}
    router = None
    poller = zmq.Poller()
    for monitor in monitors:
        poller.register(monitor, zmq.POLLIN)
    try:
        for dealer in dealers:
            dealer.setsockopt(zmq.LINGER, 0)
            dealer.connect(endpoint)
        began = time.monotonic()
        bound_at = 0.0
        deadline = began + down_s + 30
        while len(connected) < bots and time.monotonic() < deadline:
            if router is None and time.monotonic() - began >= down_s:
                router = context.socket(zmq.ROUTER)
                router.setsockopt(zmq.LINGER, 0)
                router.bind(endpoint)
                bound_at = time.monotonic()
            for monitor, _ in poller.poll(20):
                index = monitors.index(monitor)
                event = recv_monitor_message(monitor)
                if event["event"] == zmq.EVENT_CONNECT_RETRIED and router is None:
                    tries[index].append(time.monotonic() + event["value"] / 1000)
                elif event["event"] == zmq.EVENT_CONNECTED and router is not None:
                    connected.setdefault(index, time.monotonic() - bound_at)
    finally:
        for dealer, monitor in zip(dealers, monitors, strict=True):
            dealer.disable_monitor()
            monitor.close(linger=0)
            dealer.close(linger=0)
        if router is not None:
            router.close(linger=0)
        context.term()
    return {
        "baseline_tries_per_s": max(faults.most_in_one_second(t) for t in tries),
        "baseline_recover_s": round(max(connected.values()), 3) if len(connected) == bots else None,
        "baseline_down_s": down_s,
    }


def backpressure(percepts: int = 10_000) -> Result:
    """Issue 12, test 5: ``percepts`` Percepts at a bot whose handler sleeps 50 ms."""
    from warband.messaging import event_loop
    from warband.messaging.tracing import configure_logging

    # The harness counts the msg.conflated events, logged at info: let them through.
    configure_logging(None, "chaos", level="info")
    try:
        figures = event_loop.run(_faults().flood(percepts, 100))
    finally:
        configure_logging(None, "chaos", level="error")
    handled = figures.pop("percepts")
    orders, sent = figures.pop("orders"), figures.pop("orders_sent")
    silent = percepts - len(handled) - figures["conflated"]
    orders_lost = len(set(sent) - set(orders))
    figures.update(
        silent_drops=silent, orders_sent=len(sent), orders_lost=orders_lost, **_raw_flood(percepts)
    )
    passed = (
        silent == 0
        and orders == sent
        and handled == sorted(handled)
        and figures["conflated_logged"] is not None
        and figures["mailbox_peak"] <= figures["mailbox_limit"]
        and figures["rss_growth_mb"] <= 50
    )
    return Result(
        "backpressure",
        passed,
        orders_lost + silent,
        len(orders) - len(set(orders)),
        figures,
        note="lost: orders lost plus Percepts neither handled nor counted as conflated; "
        "baseline_lost: frames a raw DEALER (HWM 1000) refuses with EAGAIN when sent without "
        "blocking at a ROUTER that does not read, which a sender dropping on EAGAIN loses",
    )


def _raw_flood(count: int) -> dict[str, Any]:
    endpoint = f"tcp://127.0.0.1:{_free_port()}"
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    router = context.socket(zmq.ROUTER)
    dealer = context.socket(zmq.DEALER)
    refused = 0
    try:
        router.bind(endpoint)
        dealer.connect(endpoint)
        dealer.send(b"hello")
        router.poll(10_000)
        router.recv_multipart()
        for seq in range(count):
            try:
                dealer.send(struct.pack("!I", seq), zmq.NOBLOCK)
            except zmq.Again:
                refused += 1
    finally:
        dealer.close(linger=0)
        router.close(linger=0)
        context.term()
    return {"baseline_lost": refused}


def restart_intensity() -> Result:
    """Issue 12, test 13: an agent that crashes at start under 3 restarts per 10 s."""
    tmp = Path(tempfile.mkdtemp(prefix="wbc-", dir="/tmp"))
    try:
        figures = _faults().restart_intensity(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    stderr = figures.pop("stderr")
    passed = (
        figures["returncode"] == 0
        and figures["restarts"] == 3
        and figures["incarnations"] == 4
        and str(figures["departed"]).startswith("gave_up: exited with code 3 after 3 restarts")
        and bool(figures["completed"])
        and figures["gave_up"] == ["red-2"]
        and figures["told"] == ["red-2"]
        and figures["squad_members"] == ["red-1"]
    )
    return Result(
        "restart-intensity",
        passed,
        None,
        None,
        figures,
        note="" if passed else stderr[-500:],
    )


def start_order(orders: int = 20, bots: int = 24) -> Result:
    """Issue 12, test 6: broker, clock and ``bots`` bots started in ``orders`` random orders."""
    tmp = Path(tempfile.mkdtemp(prefix="wbc-", dir="/tmp"))
    try:
        figures = _faults().start_order(tmp, orders=orders, bots=bots)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    names = {f"bot-{n}" for n in range(1, bots + 1)}
    runs = figures["runs"]
    unanswered = sum(len(names - set(run.get("answered") or [])) for run in runs)
    twice = sum(
        len(run.get("answered") or []) - len(set(run.get("answered") or [])) for run in runs
    )
    bad = [
        run
        for run in runs
        if run["clock_exit"] != 0
        or set(run.get("answered") or []) != names
        or run.get("failed")
        or not run.get("completed")
        or run.get("departed")
    ]
    return Result(
        "start-order",
        not bad and len(runs) == orders,
        unanswered,
        twice,
        {
            "orders": orders,
            "processes": bots + 3,
            "run_s": _worst([run["run_s"] for run in runs]),
            "failed_orders": len(bad),
        },
        note="lost: first orders never answered; run_s: the slowest run, first start to the "
        "clock's end" + (f"; first failing run: {bad[0]}" if bad else ""),
    )


# --- fuzzing --------------------------------------------------------------------------------------


def fuzz_inputs(
    rng: random.Random, sender: str = "fuzzer", recipient: str = "sink"
) -> Iterator[bytes]:
    """Endless malformed frames: random bytes, valid frames with flipped bytes, truncated or
    spliced, envelopes with values of the wrong type, and random MessagePack values."""
    from warband.messaging import catalog
    from warband.messaging.codec import Codec

    codec = Codec()
    valid = [
        codec.encode(msgspec.structs.replace(message, sender=sender, id=f"{sender}:{n}"))
        for n, message in enumerate(
            [
                catalog.StatusReport(recipient=recipient, status="busy", details={"hp": 3}),
                catalog.Order(recipient=recipient, task="defend", args=["w1", 2]),
                catalog.RequestTalk(recipient=recipient, topic="t", conversation="c1"),
                catalog.Percept(recipient=recipient, facts=[["at", "x", "w1"]]),
                catalog.Tick(recipient=recipient, tick=3),
                catalog._Register(recipient="broker", groups=["g"]),
                catalog._Left(recipient=recipient, agent="clock"),
            ]
        )
    ]
    types = [*catalog.MESSAGE_TYPES, "Ordr", "", "_Nope"]
    oddities: list[Any] = [
        None,
        True,
        -1,
        2**63,
        1.5e308,
        "",
        "x" * 300,
        b"\xff",
        [],
        {},
        [[1]],
        {"a": None},
    ]
    while True:
        kind = rng.randrange(6)
        if kind == 0:
            yield rng.randbytes(rng.randrange(0, 64))
        elif kind == 1:
            flipped = bytearray(rng.choice(valid))
            for _ in range(rng.randrange(1, 4)):
                flipped[rng.randrange(len(flipped))] = rng.randrange(256)
            yield bytes(flipped)
        elif kind == 2:
            frame = rng.choice(valid)
            yield frame[: rng.randrange(len(frame))]
        elif kind == 3:
            frame = rng.choice(valid)
            cut = rng.randrange(len(frame))
            yield frame[:cut] + rng.randbytes(rng.randrange(1, 16)) + frame[cut:]
        elif kind == 4:
            body: dict[str, Any] = {
                "type": rng.choice(types),
                "sender": rng.choice([sender, sender, "bot-2", 7, None]),
                "recipient": rng.choice([recipient, recipient, "broker", "#all", 3, ""]),
                "id": rng.choice([f"{sender}:9", 9, None]),
            }
            for key in rng.sample(
                ["tick", "task", "status", "details", "facts", "seq", "args", "agent", "groups"], 3
            ):
                body[key] = rng.choice(oddities)
            yield msgspec.msgpack.encode(body)
        else:
            yield msgspec.msgpack.encode(rng.choice(oddities))


def fuzz_codec(count: int, seed: int = 11) -> dict[str, Any]:
    """Decode ``count`` malformed frames; count what escapes other than ProtocolError."""
    from warband.exceptions import ProtocolError
    from warband.messaging.codec import Codec

    codec = Codec()
    rng = random.Random(seed)
    inputs = fuzz_inputs(rng)
    rejected = accepted = 0
    escaped: dict[str, int] = {}
    started = time.monotonic()
    for _ in range(count):
        frame = next(inputs)
        try:
            codec.decode(frame)
            accepted += 1
        except ProtocolError:
            rejected += 1
        except Exception as error:
            escaped[type(error).__name__] = escaped.get(type(error).__name__, 0) + 1
    return {
        "inputs": count,
        "rejected": rejected,
        "accepted": accepted,
        "escaped": escaped,
        "seconds": round(time.monotonic() - started, 1),
    }


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _sync(fuzzer: zmq.Socket[bytes]) -> None:
    """Read every answer the fuzz has had so far, then ping the broker and read until its pong:
    the broker has routed all we sent and holds nothing for us (else its queue to us grows)."""
    while fuzzer.poll(50):
        while fuzzer.poll(0):
            fuzzer.recv()
    token = f"fuzzer:p{time.monotonic_ns()}"
    ping = {"type": "_Ping", "sender": "fuzzer", "recipient": "broker", "id": token}
    fuzzer.send(msgspec.msgpack.encode(ping))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if fuzzer.poll(100) and b"_Pong" in fuzzer.recv():
            while fuzzer.poll(0):
                fuzzer.recv()
            return
    raise RuntimeError("the broker did not answer the fuzzer's _Ping within 10 s")


def _register_fuzzer(fuzzer: zmq.Socket[bytes]) -> None:
    fuzzer.send(
        msgspec.msgpack.encode(
            {
                "type": "_Register",
                "sender": "fuzzer",
                "recipient": "broker",
                "id": f"fuzzer:r{time.monotonic_ns()}",
                "groups": [],
                "lockstep": False,
            }
        )
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if fuzzer.poll(100) and b"_Registered" in fuzzer.recv():
            return
    raise RuntimeError("the broker did not answer the fuzzer's _Register within 10 s")


def fuzz_live(count: int, seed: int = 12, good: int = 2000) -> dict[str, Any]:
    """Send ``count`` malformed frames through a live broker at an actor, next to a good client."""
    tmp = Path(tempfile.mkdtemp(prefix="wbc-", dir="/tmp"))
    endpoint = f"ipc://{tmp}/broker.sock"
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    fuzzer = context.socket(zmq.DEALER)
    fuzzer.setsockopt(zmq.ROUTING_ID, b"fuzzer")
    fuzzer.setsockopt(zmq.LINGER, 0)
    rng = random.Random(seed)
    try:
        with children() as start:
            broker = start(_warband("broker", "--bind", endpoint), "broker")
            _wait(lambda: (tmp / "broker.sock").exists(), 30)
            sink = start(_role("sink", endpoint, 100_000), "sink")
            sink.wait_for("ready", 30)
            fuzzer.connect(endpoint)
            _register_fuzzer(fuzzer)
            source = start(_role("source", endpoint, good), "source")
            source.wait_for("ready", 30)
            inputs = fuzz_inputs(rng)
            warm = max(1, count // 20)
            rss: dict[str, float] = {}
            started = time.monotonic()
            for number in range(count):
                fuzzer.send(next(inputs))
                if number % 1000 == 999:
                    _sync(fuzzer)  # the broker has routed all we sent: no queue grows
                if number == warm:
                    rss = {"broker": _rss_mb(broker.process.pid), "sink": _rss_mb(sink.process.pid)}
                if number % 200_000 == 0 and number:
                    _log(f"fuzz: {number:,} frames into the broker")
            seconds = time.monotonic() - started
            # Read every notice the broker and the sink sent back, so what the broker still
            # holds for the fuzzer is not counted as growth.
            while fuzzer.poll(1000):
                while fuzzer.poll(0):
                    fuzzer.recv()
            source.wait_for("sent", good / RATE + 60)
            alive = {"broker": broker.process.poll() is None, "sink": sink.process.poll() is None}
            growth = {
                name: round(_rss_mb(child.process.pid) - rss.get(name, 0.0), 1)
                if alive[name]
                else None
                for name, child in (("broker", broker), ("sink", sink))
            }
            _register_fuzzer(fuzzer)  # fuzzed _Leave frames may have unregistered it
            fuzzer.send(
                msgspec.msgpack.encode(
                    {
                        "type": "StatusReport",
                        "sender": "fuzzer",
                        "recipient": "sink",
                        "id": "fuzzer:end",
                        "status": "quit",
                    }
                )
            )
            got = sink.wait_for("received", 30)["received"] if alive["sink"] else []
    finally:
        fuzzer.close(linger=0)
        context.term()
        shutil.rmtree(tmp, ignore_errors=True)
    lost, duplicated = _count(got, good)
    return {
        "frames": count,
        "frames_per_s": round(count / seconds) if seconds else None,
        "alive": alive,
        "rss_growth_mb": growth,
        "good_sent": good,
        "good_lost": lost,
        "good_duplicated": duplicated,
    }


def fuzz(count: int) -> Result:
    codec = fuzz_codec(count)
    _log(f"fuzz: codec done ({codec['inputs']:,} inputs in {codec['seconds']} s)")
    live = fuzz_live(count)
    growth = [g for g in live["rss_growth_mb"].values()]
    passed = (
        not codec["escaped"]
        and all(live["alive"].values())
        and live["good_lost"] == 0
        and live["good_duplicated"] == 0
        and all(g is not None and g <= 10 for g in growth)
    )
    return Result(
        "fuzz",
        passed,
        live["good_lost"],
        live["good_duplicated"],
        {
            "codec": codec,
            **{k: v for k, v in live.items() if k not in ("good_lost", "good_duplicated")},
        },
        note="lost/duplicated: the good client's messages next to the fuzzer; rss growth after "
        "the first 5% of the frames",
    )


# --- the benchmark --------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    from warband.messaging.tracing import configure_logging

    configure_logging(None, "chaos", level="error")
    names = args.only or [
        "partition",
        "stuck-sigstop",
        "stuck-blocked",
        "broker-restart",
        "backpressure",
        "start-order",
        "churn",
        "clean-exit",
        "reconnect-storm",
        "restart-intensity",
    ]
    if args.fuzz:
        names.append("fuzz")
    started = time.monotonic()
    results: list[Result] = []
    for name in names:
        _log(f"{name}: running")
        result = _run_one(name, args)
        results.append(result)
        _log(f"{name}: {_verdict(result)}")
    report = {
        "tests": [result.entry() for result in results],
        "seconds": round(time.monotonic() - started, 1),
        "quick": args.quick,
        "python": sys.version.split()[0],
        "libzmq": zmq.zmq_version(),
    }
    print(_table(results), file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(report))
    return 0 if all(result.passed is not False for result in results) else 1


def _run_one(name: str, args: argparse.Namespace) -> Result:
    try:
        if name == "partition":
            return partition(blackholes=2 if args.quick else 5)
        if name in ("stuck-sigstop", "stuck-blocked"):
            return stuck(name.removeprefix("stuck-"))
        if name == "churn":
            return churn(60.0 if args.full else 8.0 if args.quick else 20.0, bots=12)
        if name == "clean-exit":
            return clean_exit(2 if args.quick else 20 if args.full else 6)
        if name == "fuzz":
            return fuzz(args.fuzz)
        if name == "broker-restart":
            return broker_restart(bots=3 if args.quick else 8)
        if name == "backpressure":
            return backpressure(2_000 if args.quick else 10_000)
        if name == "start-order":
            return start_order(orders=4 if args.quick else 20, bots=6 if args.quick else 24)
        if name == "reconnect-storm":
            return reconnect_storm(bots=24, down_s=4.0 if args.quick else 10.0)
        if name == "restart-intensity":
            return restart_intensity()
    except Exception as error:  # one fault's harness breaking must not hide the others' figures
        return Result(name, False, note=f"the harness failed: {error!r}")
    raise SystemExit(f"unknown fault {name!r}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="warband bench chaos", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.add_argument("--quick", action="store_true", help="fewer blackholes, kills and runs")
    parser.add_argument(
        "--full", action="store_true", help="churn for 60 s and 20 clean exits (issue 12)"
    )
    parser.add_argument(
        "--fuzz",
        type=int,
        default=0,
        metavar="N",
        help="also fuzz with N inputs (1000000 for issue 12)",
    )
    parser.add_argument(
        "--only", action="append", metavar="FAULT", help="run only this fault; repeatable"
    )
    return parser


def _verdict(result: Result) -> str:
    return "passed" if result.passed else "skipped" if result.passed is None else "FAILED"


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _table(results: list[Result]) -> str:
    header = (
        "fault",
        "result",
        "lost",
        "dup",
        "detect s",
        "recover s",
        "baseline lost",
        "baseline detect s",
        "baseline recover s",
        "target",
        "met",
    )
    rows = [header]
    for r in results:
        f = r.figures
        verdict = "passed" if r.passed else "skipped" if r.passed is None else "FAILED"
        rows.append(
            (
                r.name,
                verdict,
                _fmt(r.lost),
                _fmt(r.duplicated),
                _fmt(f.get("detect_s")),
                _fmt(f.get("recover_s") or f.get("exit_s") or f.get("restart_s")),
                _fmt(f.get("baseline_lost")),
                _fmt(f.get("baseline_detect_s")),
                _fmt(f.get("baseline_recover_s")),
                r.target or "-",
                {True: "yes", False: "NO", None: "-"}[r.target_met],
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    for r in results:
        extra = {
            k: v
            for k, v in r.figures.items()
            if k
            not in (
                "detect_s",
                "recover_s",
                "baseline_lost",
                "baseline_detect_s",
                "baseline_recover_s",
            )
        }
        lines.append(f"{r.name}: {json.dumps(extra)}")
        if r.note:
            lines.append(f"  {r.note}")
    return "\n".join(lines)


if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[1] == "--child":
    raise SystemExit(_child(sys.argv[2:]))
