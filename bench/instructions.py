"""``warband bench messaging --broker``: routing a frame and a round trip, in instructions.

Four cases run in the same invocation, each counted in its own OS processes:

- **broker**: a warband :class:`~warband.messaging.broker.Broker` routes ``frames`` StatusReport
  frames from one DEALER to another (both driven by the benchmark process, not counted);
- **forwarder**: a raw pyzmq ROUTER forwarder (``recv_multipart``, the recipient read with
  msgspec, ``send_multipart``) routes the same frames between the same DEALERs;
- **actors**: two :class:`~warband.messaging.Actor` processes exchange ``round_trips``
  request/reply pairs (``await request`` answered by ``reply``) through a warband broker (not
  counted); the figure is both actors' instructions per round trip;
- **endpoints**: the same exchange between two raw asyncio pyzmq endpoints (a DEALER read by
  ``loop.add_reader``, msgspec encoding the same struct) through the raw forwarder.

Counting: a counted process runs under ``valgrind --tool=callgrind --dump-before=getloadavg``
and calls ``os.getloadavg()`` at the start and at the end of its window (after start-up and a
warm-up); callgrind then writes the window's instructions (every thread's, libzmq's I/O thread
included) as its second dump, so start-up, warm-up and shutdown never count. Without valgrind
the same marks read ``time.process_time_ns()``: CPU time, noisier, and labelled so.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import msgspec
import zmq

from bench.measure import BenchmarkError, Child
from warband.messaging import Actor, StatusReport, event_loop, handles
from warband.messaging.broker import Broker
from warband.messaging.catalog import _Register
from warband.messaging.codec import Codec
from warband.messaging.tracing import configure_logging
from warband.values import Value

BROKER_TARGET: Final = 20_000
"""Instructions per routed frame the warband broker may take at most (issue 22)."""
ACTORS_TARGET: Final = 1.2
"""The actors' instructions per round trip may be at most this many times the raw endpoints'."""

CASES: Final = ("broker", "forwarder", "actors", "endpoints")
LABELS: Final = {
    "broker": "warband broker, per routed frame",
    "forwarder": "raw pyzmq ROUTER forwarder, per routed frame",
    "actors": "warband actors (both), per round trip",
    "endpoints": "raw asyncio pyzmq endpoints (both), per round trip",
}

_PING: Final = "ping"
_PONG: Final = "pong"
_SENDER: Final = "a"
_RECEIVER: Final = "b"
_RAW_BROKER: Final = "broker"
_DETAILS: Final[dict[str, Value]] = {"health": 80, "at": "w12"}
_BURST: Final = 100
"""Frames the driver sends before it reads them back: the broker always has work queued."""
_HWM: Final = 100_000
_READY: Final = "ready"
_TIMEOUT_S: Final = 300.0
"""Under callgrind a process runs some 50 times slower, on a machine other work shares."""
_NOBLOCK: Final = int(zmq.NOBLOCK)
_SNDMORE: Final = int(zmq.SNDMORE)
_EVENTS: Final = int(zmq.EVENTS)
_POLLIN: Final = int(zmq.POLLIN)


@dataclass(frozen=True)
class Sizes:
    """How much each case does inside its counted window."""

    frames: int
    """Frames routed by each broker."""
    round_trips: int
    """Request/reply exchanges between each pair of endpoints."""
    warmup: int
    """Frames and round trips before the window (caches, connections, specialisation)."""


DEFAULT_SIZES: Final = Sizes(frames=5000, round_trips=1000, warmup=200)
QUICK_SIZES: Final = Sizes(frames=300, round_trips=100, warmup=50)


def valgrind() -> str | None:
    """The valgrind executable, or None when it is not installed."""
    return shutil.which("valgrind")


def measure(script: Path, sizes: Sizes) -> dict[str, Any]:
    """Count every case; the report's figures are per frame (brokers) or per round trip.

    ``script`` is the benchmark file whose ``--role`` option runs :data:`ROLES`.
    """
    tool = valgrind()
    unit = "instructions" if tool else "cpu_ns"
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="wb-count-") as tmp:
        counter = _Counter(script, Path(tmp), tool)
        figures["broker"] = counter.broker("count-broker", _register_warband, sizes)
        figures["forwarder"] = counter.broker("count-forwarder", _register_raw, sizes)
        figures["actors"] = counter.pair("broker", "count-actor", sizes)
        figures["endpoints"] = counter.pair("raw-broker", "count-endpoint", sizes)
    return build_report(figures, unit, sizes)


def measure_routing(script: Path, sizes: Sizes) -> tuple[float, float, str]:
    """Only the two brokers' cases: (warband broker, raw forwarder) per routed frame, and the
    unit (``instructions`` or ``cpu_ns``); for ``warband bench scale``."""
    tool = valgrind()
    with tempfile.TemporaryDirectory(prefix="wb-count-") as tmp:
        counter = _Counter(script, Path(tmp), tool)
        broker = counter.broker("count-broker", _register_warband, sizes)
        forwarder = counter.broker("count-forwarder", _register_raw, sizes)
    return broker, forwarder, "instructions" if tool else "cpu_ns"


def build_report(figures: dict[str, float], unit: str, sizes: Sizes) -> dict[str, Any]:
    """The JSON figures: ``<case>_<unit>`` per frame or round trip, ratios, targets."""
    report: dict[str, Any] = {_key(case, unit): figures[case] for case in CASES}
    broker_ratio = figures["broker"] / figures["forwarder"]
    actors_ratio = figures["actors"] / figures["endpoints"]
    report.update(
        unit=unit,
        counter="callgrind" if unit == "instructions" else "process_time",
        broker_vs_forwarder=broker_ratio,
        actors_vs_endpoints=actors_ratio,
        broker_target=BROKER_TARGET,
        actors_target=ACTORS_TARGET,
        actors_target_met=actors_ratio <= ACTORS_TARGET,
        frames=sizes.frames,
        round_trips=sizes.round_trips,
        warmup=sizes.warmup,
    )
    if unit == "instructions":
        report["broker_target_met"] = figures["broker"] <= BROKER_TARGET
    return report


def _key(case: str, unit: str) -> str:
    """``broker_instructions_per_frame``, ``actors_cpu_ns_per_round_trip``, ..."""
    per = "frame" if case in ("broker", "forwarder") else "round_trip"
    return f"{case}_{unit}_per_{per}"


def render(report: dict[str, Any]) -> str:
    """The human-readable table of :func:`build_report`'s figures."""
    unit = report["unit"]
    heading = (
        "instructions (callgrind, every thread of the counted processes)"
        if unit == "instructions"
        else "CPU ns (valgrind not found: process CPU time, noisy; install valgrind to count "
        "instructions)"
    )
    lines = [
        f"warband broker and actors, counted in {heading}: {report['frames']} frames, "
        f"{report['round_trips']} round trips after {report['warmup']} warm-up",
        "",
    ]
    for case in CASES:
        lines.append(f"{LABELS[case]:<52}{report[_key(case, unit)]:>12,.0f}")
    lines.append("")
    broker_line = f"broker vs forwarder: x{report['broker_vs_forwarder']:.2f}"
    if "broker_target_met" in report:
        verdict = "target met" if report["broker_target_met"] else "missed"
        broker_line += f" (target <= {BROKER_TARGET:,} instructions per frame: {verdict})"
    lines.append(broker_line)
    verdict = "target met" if report["actors_target_met"] else "missed"
    lines.append(
        f"actors vs raw endpoints: x{report['actors_vs_endpoints']:.2f} "
        f"(target <= {ACTORS_TARGET}: {verdict})"
    )
    return "\n".join(lines)


# --- the counting side --------------------------------------------------------------------------


class _Counter:
    """Starts counted processes (under callgrind when there is valgrind) and reads their counts."""

    def __init__(self, script: Path, workdir: Path, tool: str | None) -> None:
        self.script = script
        self.workdir = workdir
        self.tool = tool

    def broker(
        self, role: str, register: Callable[[zmq.Socket[bytes], str], None], sizes: Sizes
    ) -> float:
        """Per routed frame: the counted broker process ``role`` routes the driver's frames."""
        _progress(f"{LABELS['broker' if role == 'count-broker' else 'forwarder']}")
        endpoint = f"ipc://{self.workdir}/{role}.sock"
        child = self._counted(role, [f"--endpoint={endpoint}"], stdin=True)
        context = zmq.Context()
        sockets: list[zmq.Socket[bytes]] = []
        try:
            child.expect(_READY, _TIMEOUT_S)
            for name in (_SENDER, _RECEIVER):
                sockets.append(_dealer(context, endpoint, name))
                register(sockets[-1], name)
            sender, receiver = sockets
            _route(sender, receiver, sizes.warmup)
            start = _mark(child)
            _route(sender, receiver, sizes.frames)
            end = _mark(child)
            child.tell("quit")
            child.wait_exit(_TIMEOUT_S)
        finally:
            for socket in sockets:
                socket.close(linger=0)
            context.term()
            child.reap()
        return self._window(role, start, end) / sizes.frames

    def pair(self, broker_role: str, role: str, sizes: Sizes) -> float:
        """Per round trip: both counted endpoint processes ``role``, through ``broker_role``."""
        _progress(LABELS["actors" if role == "count-actor" else "endpoints"])
        endpoint = f"ipc://{self.workdir}/{role}.sock"
        counts = [f"--round-trips={sizes.round_trips}", f"--warmup={sizes.warmup}"]
        children: list[Child] = []
        try:
            children.append(Child(self.script, broker_role, [f"--endpoint={endpoint}"]))
            children[-1].expect(_READY, _TIMEOUT_S)
            pong = self._counted(f"{role}-pong", [f"--endpoint={endpoint}", *counts])
            children.append(pong)
            pong.expect(_READY, _TIMEOUT_S)
            ping = self._counted(f"{role}-ping", [f"--endpoint={endpoint}", *counts])
            children.append(ping)
            ping_cpu, pong_cpu = (int(n) for n in ping.line(_TIMEOUT_S).split())
            for child in (ping, pong):
                child.wait_exit(_TIMEOUT_S)
        finally:
            for child in reversed(children):
                child.reap()
        total = self._window(f"{role}-ping", 0, ping_cpu)
        total += self._window(f"{role}-pong", 0, pong_cpu)
        # Each window holds the round trips and the mark exchange that closes it.
        return total / (sizes.round_trips + 1)

    def _counted(self, role: str, options: list[str], *, stdin: bool = False) -> Child:
        wrapper: list[str] = []
        if self.tool is not None:
            wrapper = [
                self.tool,
                "--tool=callgrind",
                "--quiet",
                "--dump-before=getloadavg",
                f"--callgrind-out-file={self.workdir / role}.cg",
            ]
        return Child(self.script, role, options, wrapper=wrapper, stdin=stdin)

    def _window(self, role: str, start_ns: int, end_ns: int) -> float:
        """The instructions of ``role``'s window (callgrind's second dump), or its CPU ns."""
        if self.tool is None:
            return float(end_ns - start_ns)
        dump = self.workdir / f"{role}.cg.2"
        try:
            text = dump.read_text()
        except OSError as error:
            raise BenchmarkError(f"callgrind wrote no window count for {role}: {error}") from None
        for line in text.splitlines():
            if line.startswith("totals:"):
                return float(line.split()[1])
        raise BenchmarkError(f"{dump} has no 'totals:' line")


def _progress(text: str) -> None:
    print(f"[bench messaging --broker] {text}", file=sys.stderr, flush=True)


def _dealer(context: zmq.Context[zmq.Socket[bytes]], endpoint: str, name: str) -> zmq.Socket[bytes]:
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.ROUTING_ID, name.encode())
    socket.setsockopt(zmq.SNDHWM, 0)
    socket.setsockopt(zmq.RCVHWM, 0)
    socket.setsockopt(zmq.RCVTIMEO, int(_TIMEOUT_S * 1000))
    socket.connect(endpoint)
    return socket


def _register_warband(socket: zmq.Socket[bytes], name: str) -> None:
    codec = Codec()
    register = _Register(sender=name, recipient="broker", id=f"{name}:c1", lockstep=False)
    socket.send(codec.encode(register))
    answer = codec.decode(socket.recv())
    if type(answer).__name__ != "_Registered":
        raise BenchmarkError(f"the broker answered {name}'s _Register with {answer!r}")


def _register_raw(socket: zmq.Socket[bytes], name: str) -> None:
    socket.send(_ENCODER.encode(StatusReport(sender=name, recipient=_RAW_BROKER, status="hi")))
    socket.recv()


_ENCODER: Final = msgspec.msgpack.Encoder()
_FRAME: Final = _ENCODER.encode(
    StatusReport(
        sender=_SENDER,
        recipient=_RECEIVER,
        id=f"{_SENDER}:1",
        seq=1,
        conversation=f"{_SENDER}:1",
        status="flood",
        details=_DETAILS,
    )
)
"""The frame both brokers route: a small StatusReport, as the latency cases send."""


def _route(sender: zmq.Socket[bytes], receiver: zmq.Socket[bytes], frames: int) -> None:
    """Send ``frames`` frames through the broker in bursts and read every one back."""
    left = frames
    while left:
        burst = min(left, _BURST)
        for _ in range(burst):
            sender.send(_FRAME)
        for _ in range(burst):
            try:
                receiver.recv()
            except zmq.Again:
                raise BenchmarkError(
                    f"a routed frame did not arrive within {_TIMEOUT_S:.0f} s"
                ) from None
        left -= burst


def _mark(child: Child) -> int:
    child.tell("mark")
    line = child.line(_TIMEOUT_S)
    if not line.startswith("marked "):
        raise BenchmarkError(f"{child.role} printed {line[:200]!r}, expected 'marked NS'")
    return int(line.split()[1])


# --- the counted processes ----------------------------------------------------------------------


def _quiet(role: str) -> None:
    """Tracing off (the raw cases trace nothing), warnings and errors to stderr, not stdout."""
    configure_logging(None, role)


def _mark_window() -> int:
    """Start or end a counted window: callgrind dumps before ``getloadavg``; the CPU time."""
    os.getloadavg()
    return time.process_time_ns()


def _serve_marks() -> None:
    """Answer the benchmark's ``mark`` lines on stdin until ``quit`` (or the pipe closes)."""
    print(_READY, flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "mark":
            print(f"marked {_mark_window()}", flush=True)
        elif command == "quit":
            return


def _count_broker(args: argparse.Namespace) -> int:
    _quiet(args.role)
    broker = Broker(args.endpoint)
    broker.start()
    try:
        _serve_marks()
    finally:
        broker.stop()
    return 0


def _count_forwarder(args: argparse.Namespace) -> int:
    _quiet(args.role)
    context = zmq.Context()
    router = context.socket(zmq.ROUTER)
    router.setsockopt(zmq.ROUTER_MANDATORY, 1)
    router.setsockopt(zmq.SNDHWM, _HWM)
    router.setsockopt(zmq.RCVHWM, _HWM)
    router.bind(args.endpoint)
    threading.Thread(target=forward, args=(router,), name="forwarder", daemon=True).start()
    _serve_marks()
    return 0  # the daemon thread ends with the process; the socket with it


class _Route(msgspec.Struct):
    """All the raw forwarder reads of a frame: where it goes."""

    recipient: str = ""


def forward(router: zmq.Socket[bytes]) -> None:
    """The raw forwarder: each payload to the peer named in its ``recipient`` field.

    Written as lean as raw pyzmq allows: two ``recv`` and two ``send`` with plain int flags
    (``recv_multipart`` and ``send_multipart`` would cost more than all the rest), msgspec
    reading only the recipient."""
    route = msgspec.msgpack.Decoder(_Route).decode
    recv = router.recv
    send = router.send
    while True:
        peer = recv()
        payload = recv()
        recipient = route(payload).recipient
        if recipient == _RAW_BROKER:
            send(peer, _SNDMORE)
            send(b"registered")
        else:
            send(recipient.encode(), _SNDMORE)
            send(payload)


class _CountedPong(Actor):
    """Answers pings; a ``mark`` request starts or ends its window, and the end's reply carries
    the window's CPU time."""

    def __init__(self) -> None:
        super().__init__(_PONG)
        self.started = 0

    async def on_start(self) -> None:
        print(_READY, flush=True)

    @handles(StatusReport)
    def on_status(self, report: StatusReport) -> None:
        status = report.status
        if status == "ping":
            self.reply(report, StatusReport(status="pong", details=_DETAILS))
        elif status == "mark":
            now = _mark_window()
            window = now - self.started if self.started else 0
            self.started = now
            self.reply(report, StatusReport(status="marked", details={"cpu_ns": window}))
        elif status == "bye":
            self.stop("benchmark done")


class _CountedPing(Actor):
    """Warms up, then counts ``round_trips`` round trips between two marks."""

    def __init__(self, sizes: Sizes) -> None:
        super().__init__(_PING)
        self.sizes = sizes
        self.windows: tuple[int, int] = (0, 0)
        self.error: BaseException | None = None

    async def on_start(self) -> None:
        self.start_task(self._exchange())

    async def _exchange(self) -> None:
        try:
            for _ in range(self.sizes.warmup):
                await self._ask("ping")
            start = _mark_window()
            await self._ask("mark")
            for _ in range(self.sizes.round_trips):
                await self._ask("ping")
            end = _mark_window()
            answer = await self._ask("mark")
            self.windows = (end - start, _cpu_ns(answer))
            self.send(StatusReport(recipient=_PONG, status="bye"))
        except Exception as error:
            self.error = error
        finally:
            self.stop("benchmark done")

    async def _ask(self, status: str) -> StatusReport:
        answer = await self.request(
            StatusReport(recipient=_PONG, status=status, details=_DETAILS), timeout=_TIMEOUT_S
        )
        assert isinstance(answer, StatusReport)
        return answer


def _run_counted_actor(actor: Actor, endpoint: str) -> None:
    # No heartbeats and no broker pings: wall-clock traffic would count in the window, and a
    # process under callgrind has more wall time than a native one.
    event_loop.run(
        actor.run(
            endpoint,
            mode="realtime",
            heartbeat_interval=0,
            ping_interval=3600.0,
            register_timeout=_TIMEOUT_S,
        )
    )


def _count_actor_pong(args: argparse.Namespace) -> int:
    _quiet(args.role)
    _run_counted_actor(_CountedPong(), args.endpoint)
    return 0


def _count_actor_ping(args: argparse.Namespace) -> int:
    _quiet(args.role)
    ping = _CountedPing(_sizes(args))
    _run_counted_actor(ping, args.endpoint)
    if ping.error is not None:
        print(f"counted ping failed: {ping.error!r}", file=sys.stderr)
        return 1
    print(f"{ping.windows[0]} {ping.windows[1]}", flush=True)
    return 0


def _cpu_ns(answer: StatusReport) -> int:
    """The pong's window CPU time, from its answer to the closing mark."""
    cpu_ns = answer.details.get("cpu_ns")
    return cpu_ns if isinstance(cpu_ns, int) else 0


def _sizes(args: argparse.Namespace) -> Sizes:
    return Sizes(frames=0, round_trips=args.round_trips, warmup=args.warmup)


class _RawEndpoint:
    """A raw asyncio pyzmq endpoint, lean but correct: a DEALER read by ``loop.add_reader``,
    msgspec for the StatusReport, one callback per payload.

    ZeroMQ's fd signals edges, so a reader must look at ZMQ_EVENTS after what it handled (more
    frames may wait, and a handler's send can take the edge of one that came) and after a send
    made outside the reader; it looks nowhere else."""

    def __init__(self, endpoint: str, name: str, on_report: Callable[[StatusReport], None]) -> None:
        self.name = name
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.ROUTING_ID, name.encode())
        self.socket.connect(endpoint)
        _register_raw(self.socket, name)  # blocking, before the loop reads the socket
        self.decoder = msgspec.msgpack.Decoder(StatusReport)
        self.on_report = on_report
        self.sent = 0
        self.draining = False
        self.loop = asyncio.get_running_loop()
        fd = self.socket.getsockopt(zmq.FD)
        assert isinstance(fd, int)
        self.fd = fd
        self.loop.add_reader(fd, self.drain)
        self.loop.call_soon(self.drain)

    def drain(self) -> None:
        socket = self.socket
        self.draining = True
        try:
            while True:
                try:
                    payload = socket.recv(_NOBLOCK)
                except zmq.Again:
                    return  # a wake-up for ZeroMQ's own commands, not a frame
                self.on_report(self.decoder.decode(payload))
                # The fd signals edges: ZMQ_EVENTS (which also re-arms it, after any send the
                # handler made) says whether another frame waits.
                if not socket.getsockopt(_EVENTS) & _POLLIN:  # type: ignore[operator]
                    return
        finally:
            self.draining = False

    def send(
        self, recipient: str, status: str, details: dict[str, Value], reply_to: str = ""
    ) -> str:
        self.sent += 1
        message_id = f"{self.name}:{self.sent}"
        report = StatusReport(
            sender=self.name,
            recipient=recipient,
            id=message_id,
            seq=self.sent,
            conversation=message_id,
            reply_to=reply_to,
            status=status,
            details=details,
        )
        socket = self.socket
        socket.send(_ENCODER.encode(report), _NOBLOCK)
        # A send can take the fd's edge of a frame that came meanwhile: outside a drain (which
        # looks after its handlers), look once more.
        if not self.draining and socket.getsockopt(_EVENTS) & _POLLIN:  # type: ignore[operator]
            self.loop.call_soon(self.drain)
        return message_id

    def close(self) -> None:
        self.loop.remove_reader(self.fd)
        self.socket.close(linger=2000)
        self.context.term()


async def _raw_pong(endpoint: str) -> None:
    done = asyncio.get_running_loop().create_future()
    started = 0

    def on_report(report: StatusReport) -> None:
        nonlocal started
        status = report.status
        if status == "ping":
            pong.send(report.sender, "pong", _DETAILS, report.id)
        elif status == "mark":
            now = _mark_window()
            window = now - started if started else 0
            started = now
            pong.send(report.sender, "marked", {"cpu_ns": window}, report.id)
        elif status == "bye" and not done.done():
            done.set_result(None)

    pong = _RawEndpoint(endpoint, _PONG, on_report)
    print(_READY, flush=True)
    try:
        await done
    finally:
        pong.close()


async def _raw_ping(endpoint: str, sizes: Sizes) -> tuple[int, int]:
    answers: asyncio.Queue[StatusReport] = asyncio.Queue()
    ping = _RawEndpoint(endpoint, _PING, answers.put_nowait)

    async def ask(status: str) -> StatusReport:
        ping.send(_PONG, status, _DETAILS)
        return await asyncio.wait_for(answers.get(), _TIMEOUT_S)

    try:
        for _ in range(sizes.warmup):
            await ask("ping")
        start = _mark_window()
        await ask("mark")
        for _ in range(sizes.round_trips):
            await ask("ping")
        end = _mark_window()
        answer = await ask("mark")
        ping.send(_PONG, "bye", {})
    finally:
        ping.close()
    return end - start, _cpu_ns(answer)


def _count_endpoint_pong(args: argparse.Namespace) -> int:
    _quiet(args.role)
    event_loop.run(_raw_pong(args.endpoint))
    return 0


def _count_endpoint_ping(args: argparse.Namespace) -> int:
    _quiet(args.role)
    ping, pong = event_loop.run(_raw_ping(args.endpoint, _sizes(args)))
    print(f"{ping} {pong}", flush=True)
    return 0


ROLES: Final[dict[str, Callable[[argparse.Namespace], int]]] = {
    "count-broker": _count_broker,
    "count-forwarder": _count_forwarder,
    "count-actor-pong": _count_actor_pong,
    "count-actor-ping": _count_actor_ping,
    "count-endpoint-pong": _count_endpoint_pong,
    "count-endpoint-ping": _count_endpoint_ping,
}
"""The processes of this benchmark, run as ``messaging.py --role=NAME``."""
