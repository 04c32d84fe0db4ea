"""``warband bench messaging``: round-trip latency and one-way throughput between two actors.

Four cases run in the same invocation, each as real OS processes talking over ``ipc://``:

- **framework, tracing on** (the default level): a warband broker process and two actor
  processes in realtime mode, every send and receive traced to JSON-lines files;
- **framework, tracing off**: the same, without a log directory;
- **baseline, same topology**: a raw blocking-pyzmq ROUTER broker that reads the recipient from
  the MessagePack payload, and two blocking DEALER processes, with the same msgspec encoding and
  decoding of the same struct (``StatusReport``);
- **direct**: two processes, one DEALER to ROUTER connection, no broker (the physical limit).

With ``--curve`` two more cases run, to show what CURVE encryption and authentication cost: the
framework with tracing off over ``tcp://127.0.0.1``, plain and with CURVE keys (``warband
keys``); their figures are under the ``tcp_`` and ``curve_`` keys.

With ``--otel`` (needs ``warband[otel]``) one more case runs, to show what OpenTelemetry export
costs: the framework with tracing off and every actor exporting a span per message handled over
OTLP/HTTP to a collector stand-in in the benchmark process (it answers every export and counts
the spans); its figures are under the ``otel_`` keys, its ratios against "tracing off".

Round trip: the ping process times N request/reply exchanges after a warm-up. Throughput: the
ping process sends M messages as fast as it can and then one last message that the pong process
answers once it has counted all M; throughput is M divided by the time from the first send to
that answer.

The framework's actors run on the event loop warband picks (uvloop where installed); set
``WARBAND_EVENT_LOOP=asyncio`` to measure them on the standard loop instead.

``main(argv)`` is the entry point (``warband bench messaging`` loads this file by path and calls
it). With ``--json`` the last stdout line is one JSON object; the keys listed in ``JSON_KEYS``
are a public contract. The same file is run as a child process with the hidden ``--role``
option to play the broker, ping or pong of a case.
"""

# No `from __future__ import annotations`: `warband bench` executes this file without adding it
# to sys.modules, and dataclasses and msgspec look string annotations up there.

import argparse
import asyncio
import json
import os
import platform
import signal
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Final

import msgspec
import zmq

from warband.messaging import Actor, Message, StatusReport, event_loop, handles
from warband.messaging.broker import Broker
from warband.messaging.curve import load_client, load_server, make_keys
from warband.messaging.tracing import configure_logging, flush_logging
from warband.values import Value

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # `warband bench` runs this file by path; bench is a package
    sys.path.insert(0, str(REPO))

from bench import instructions  # noqa: E402
from bench.measure import BenchmarkError, Child, percentile  # noqa: E402

JSON_KEYS: Final = (
    "rtt_p50_us",
    "rtt_p99_us",
    "throughput_msgs_s",
    "baseline_rtt_p50_us",
    "baseline_throughput_msgs_s",
    "direct_rtt_p50_us",
    "direct_throughput_msgs_s",
)
"""Keys the ``--json`` object always holds (a public contract, all positive numbers)."""

RTT_TARGET: Final = 1.5
"""The framework's p50 round trip may be at most this many times the same-topology baseline's."""
THROUGHPUT_TARGET: Final = 0.7
"""The framework's throughput must be at least this fraction of the same-topology baseline's."""

CASES: Final = ("traced", "untraced", "baseline", "direct")
CURVE_CASES: Final = ("tcp", "curve")
"""With ``--curve``: the framework, tracing off, over tcp:// without and with CURVE."""
OTEL_CASES: Final = ("otel",)
"""With ``--otel``: the framework, tracing off, exporting OpenTelemetry spans over OTLP/HTTP."""
_FRAMEWORK_CASES: Final = ("traced", "untraced", *CURVE_CASES, *OTEL_CASES)
_CASE_LABELS: Final = {
    "traced": "framework, tracing on (default)",
    "untraced": "framework, tracing off",
    "tcp": "framework, tracing off, tcp://",
    "curve": "framework, tracing off, tcp:// + CURVE",
    "otel": "framework, tracing off, OTel export",
    "baseline": "baseline, same topology (raw pyzmq)",
    "direct": "direct, two sockets (no broker)",
}

_PING_ID: Final = "ping"
_PONG_ID: Final = "pong"
_RAW_BROKER_ID: Final = "broker"
_DETAILS: Final[dict[str, Value]] = {"health": 80, "at": "w12"}
"""The payload every benchmark message carries: a realistic small StatusReport."""
_HWM: Final = 100_000
"""The warband broker's queue limits, used by the raw broker too so both queue alike."""
_READY: Final = "ready"
_READY_TIMEOUT_S: Final = 60.0
_RESULT_TIMEOUT_S: Final = 600.0
_EXIT_TIMEOUT_S: Final = 10.0


@dataclass(frozen=True)
class Sizes:
    """How much work each case does."""

    round_trips: int
    """Timed request/reply exchanges per run."""
    messages: int
    """Messages sent one way per run for the throughput figure."""
    warmup: int
    """Untimed round trips before the timed ones (imports, caches, connection set-up)."""
    batch: int
    """Framework sender: messages sent between two yields to the event loop."""
    repeat: int
    """Runs of each case; round-trip samples are pooled, throughput is the median run."""


DEFAULT_SIZES: Final = Sizes(round_trips=2000, messages=20_000, warmup=200, batch=256, repeat=3)
QUICK_SIZES: Final = Sizes(round_trips=200, messages=2000, warmup=20, batch=256, repeat=1)


@dataclass(frozen=True)
class RunResult:
    """What one ping process measured in one run of one case."""

    rtt_ns: list[int]
    flood_ns: int
    messages: int


@dataclass(frozen=True)
class Figures:
    """The reported figures of one case, over all its runs."""

    rtt_p50_us: float
    rtt_p99_us: float
    throughput_msgs_s: float


@dataclass
class _CaseRuns:
    rtt_ns: list[int] = field(default_factory=list)
    throughputs: list[float] = field(default_factory=list)

    def add(self, result: RunResult) -> None:
        self.rtt_ns.extend(result.rtt_ns)
        self.throughputs.append(result.messages / (result.flood_ns / 1e9))

    def figures(self) -> Figures:
        return Figures(
            rtt_p50_us=percentile(self.rtt_ns, 0.50) / 1000,
            rtt_p99_us=percentile(self.rtt_ns, 0.99) / 1000,
            throughput_msgs_s=statistics.median(self.throughputs),
        )


# --- entry point ------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    """Run the benchmark (or, with the hidden ``--role``, one of its processes); 0 on success."""
    args = _parser().parse_args(argv)
    if args.role:
        return _run_role(args)
    if args.broker:
        return _count(args)
    sizes = _sizes(args)
    try:
        figures, trace_events, spans = _measure(sizes, curve=args.curve, otel=args.otel)
    except BenchmarkError as error:
        print(f"messaging bench failed: {error}", file=sys.stderr)
        return 1
    report = build_report(figures, sizes, trace_events)
    if spans is not None:
        report["otel_spans_exported"] = spans
    print(render_table(report))
    if args.json:
        print(json.dumps(report, sort_keys=True))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="warband bench messaging",
        description="Round-trip latency and one-way throughput between two actor processes, "
        "next to a raw-pyzmq baseline with the same topology and a direct two-socket exchange.",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument("--quick", action="store_true", help="tiny counts, for a smoke test")
    parser.add_argument("--round-trips", type=int, metavar="N", help="timed round trips per run")
    parser.add_argument("--messages", type=int, metavar="M", help="one-way messages per run")
    parser.add_argument("--warmup", type=int, metavar="W", help="untimed round trips first")
    parser.add_argument("--batch", type=int, metavar="B", help="framework sends per loop yield")
    parser.add_argument("--repeat", type=int, metavar="R", help="runs of each case")
    parser.add_argument(
        "--curve",
        action="store_true",
        help="also run the framework over tcp:// without and with CURVE, to show its cost",
    )
    parser.add_argument(
        "--otel",
        action="store_true",
        help="also run the framework exporting OpenTelemetry spans (needs warband[otel])",
    )
    parser.add_argument(
        "--broker",
        action="store_true",
        help="instead: count the instructions the broker takes per routed frame next to a raw "
        "pyzmq forwarder, and the actors' per round trip next to raw asyncio endpoints "
        "(callgrind; CPU time when valgrind is missing)",
    )
    parser.add_argument(
        "--frames", type=int, metavar="F", help="with --broker: frames each broker routes"
    )
    # The options below are for the child processes this benchmark starts.
    hidden = argparse.SUPPRESS
    parser.add_argument("--role", help=hidden)
    parser.add_argument("--endpoint", help=hidden)
    parser.add_argument("--log-dir", type=Path, help=hidden)
    parser.add_argument("--parent", type=int, help=hidden)
    parser.add_argument("--keys", type=Path, help=hidden)
    parser.add_argument("--otel-endpoint", help=hidden)
    return parser


def _count(args: argparse.Namespace) -> int:
    """``--broker``: count the broker's and the actors' instructions (bench/instructions.py)."""
    base = instructions.QUICK_SIZES if args.quick else instructions.DEFAULT_SIZES
    sizes = instructions.Sizes(
        frames=base.frames if args.frames is None else args.frames,
        round_trips=base.round_trips if args.round_trips is None else args.round_trips,
        warmup=base.warmup if args.warmup is None else args.warmup,
    )
    if min(sizes.frames, sizes.round_trips) < 1 or sizes.warmup < 0:
        raise SystemExit("--frames and --round-trips must be at least 1, --warmup 0 or more")
    if instructions.valgrind() is None:
        _progress("valgrind not found: counting CPU time instead of instructions (noisy)")
    try:
        report = instructions.measure(Path(__file__).resolve(), sizes)
    except BenchmarkError as error:
        print(f"messaging bench failed: {error}", file=sys.stderr)
        return 1
    report.update(
        python=platform.python_version(),
        pyzmq=zmq.pyzmq_version(),
        libzmq=zmq.zmq_version(),
        event_loop=event_loop.event_loop_name(),
    )
    print(instructions.render(report))
    if args.json:
        print(json.dumps(report, sort_keys=True))
    return 0


def _sizes(args: argparse.Namespace) -> Sizes:
    base = QUICK_SIZES if args.quick else DEFAULT_SIZES
    sizes = Sizes(
        round_trips=base.round_trips if args.round_trips is None else args.round_trips,
        messages=base.messages if args.messages is None else args.messages,
        warmup=base.warmup if args.warmup is None else args.warmup,
        batch=base.batch if args.batch is None else args.batch,
        repeat=base.repeat if args.repeat is None else args.repeat,
    )
    for name in ("round_trips", "messages", "batch", "repeat"):
        if getattr(sizes, name) < 1:
            raise SystemExit(f"--{name.replace('_', '-')} must be at least 1")
    if sizes.warmup < 0:
        raise SystemExit("--warmup must be 0 or more")
    return sizes


# --- orchestration ----------------------------------------------------------------------------


def _measure(
    sizes: Sizes, *, curve: bool = False, otel: bool = False
) -> tuple[dict[str, Figures], int, int | None]:
    """Run every case ``sizes.repeat`` times, interleaved so drift hits all cases alike.

    Returns the figures, the trace events written, and (with ``otel``) the spans exported.
    """
    cases = (*CASES, *(CURVE_CASES if curve else ()), *(OTEL_CASES if otel else ()))
    runs = {case: _CaseRuns() for case in cases}
    trace_events = 0
    with (
        tempfile.TemporaryDirectory(prefix="wb-bench-") as tmp,
        _OtlpSink(enabled=otel) as sink,
    ):
        workdir = Path(tmp)
        keys = workdir / "keys"
        if curve:
            make_keys(keys, [_PING_ID, _PONG_ID])
        for round_index in range(1, sizes.repeat + 1):
            for case in cases:
                _progress(f"{_CASE_LABELS[case]}: run {round_index}/{sizes.repeat}")
                log_dir = workdir / f"logs-{round_index}" if case == "traced" else None
                if case in CURVE_CASES:
                    endpoint = f"tcp://127.0.0.1:{_free_tcp_port()}"
                else:
                    endpoint = f"ipc://{workdir}/{case}-{round_index}.sock"
                result = _run_case(
                    case,
                    endpoint,
                    sizes,
                    log_dir,
                    keys if case == "curve" else None,
                    sink.url if case == "otel" else None,
                )
                runs[case].add(result)
                if log_dir is not None:
                    trace_events += _count_trace_events(log_dir)
        spans = sink.spans if otel else None
    if trace_events == 0:
        raise BenchmarkError("the traced runs wrote no msg.send/msg.recv events; tracing is off")
    if spans == 0:
        raise BenchmarkError("the OTel runs exported no span; export is off")
    return {case: runs[case].figures() for case in cases}, trace_events, spans


class _OtlpSink:
    """A stand-in OTLP/HTTP collector on 127.0.0.1: answers every export, counts the spans."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self.url = ""
        self.spans = 0
        self._server: Any = None

    def __enter__(self) -> "_OtlpSink":
        if not self.enabled:
            return self
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        try:
            from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as pb2
        except ImportError:
            raise BenchmarkError(
                "--otel needs the otel extra: pip install 'warband[otel]'"
            ) from None
        sink = self
        lock = threading.Lock()
        answer = pb2.ExportTraceServiceResponse().SerializeToString()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                request = pb2.ExportTraceServiceRequest.FromString(body)
                count = sum(
                    len(scope.spans)
                    for resource in request.resource_spans
                    for scope in resource.scope_spans
                )
                with lock:
                    sink.spans += count
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def _free_tcp_port() -> int:
    # The broker binds it a moment later; nothing else on a benchmark machine should race it.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _run_case(
    case: str,
    endpoint: str,
    sizes: Sizes,
    log_dir: Path | None,
    keys: Path | None = None,
    otel_endpoint: str | None = None,
) -> RunResult:
    """Start the processes of one case, collect the ping's result, and reap every process."""
    framework = case in _FRAMEWORK_CASES
    counts = [
        f"--round-trips={sizes.round_trips}",
        f"--messages={sizes.messages}",
        f"--warmup={sizes.warmup}",
        f"--batch={sizes.batch}",
    ]
    common = [
        f"--endpoint={endpoint}",
        *([f"--log-dir={log_dir}"] if log_dir else []),
        *([f"--keys={keys}"] if keys else []),
        *([f"--otel-endpoint={otel_endpoint}"] if otel_endpoint else []),
    ]
    children: list[Child] = []
    try:
        if case != "direct":
            broker_role = "broker" if framework else "raw-broker"
            children.append(_child(broker_role, common))
            children[-1].expect(_READY, _READY_TIMEOUT_S)
        prefix = "framework" if framework else ("raw" if case == "baseline" else "direct")
        pong = _child(f"{prefix}-pong", [*common, *counts])
        children.append(pong)
        pong.expect(_READY, _READY_TIMEOUT_S)
        ping = _child(f"{prefix}-ping", [*common, *counts])
        children.append(ping)
        result = _decode_result(ping.line(_RESULT_TIMEOUT_S), ping.role)
        for child in (ping, pong):
            child.wait_exit(_EXIT_TIMEOUT_S)
    finally:
        for child in reversed(children):
            child.reap()
    if result.messages != sizes.messages:
        raise BenchmarkError(
            f"{case}: the receiver counted {result.messages} of {sizes.messages} messages"
        )
    return result


def _decode_result(line: str, role: str) -> RunResult:
    try:
        raw = json.loads(line)
        return RunResult(
            rtt_ns=[int(x) for x in raw["rtt_ns"]],
            flood_ns=int(raw["flood_ns"]),
            messages=int(raw["messages"]),
        )
    except (ValueError, KeyError, TypeError) as error:
        raise BenchmarkError(f"{role} printed {line[:200]!r}, not a result: {error}") from None


def _count_trace_events(log_dir: Path) -> int:
    events = 0
    for file in log_dir.glob("*.jsonl"):
        with file.open("rb") as lines:
            events += sum(1 for line in lines if b'"event":"msg.' in line)
    return events


def _progress(text: str) -> None:
    print(f"[bench messaging] {text}", file=sys.stderr, flush=True)


def _child(role: str, options: list[str]) -> Child:
    """This file run as one of the benchmark's processes (``--role``)."""
    return Child(Path(__file__).resolve(), role, options)


# --- report -----------------------------------------------------------------------------------


def build_report(figures: dict[str, Figures], sizes: Sizes, trace_events: int) -> dict[str, Any]:
    """The JSON object: the ``JSON_KEYS`` figures, ratios, targets, counts and versions."""
    traced, untraced = figures["traced"], figures["untraced"]
    baseline, direct = figures["baseline"], figures["direct"]
    rtt_ratio = traced.rtt_p50_us / baseline.rtt_p50_us
    throughput_ratio = traced.throughput_msgs_s / baseline.throughput_msgs_s
    rtt_ratio_notrace = untraced.rtt_p50_us / baseline.rtt_p50_us
    throughput_ratio_notrace = untraced.throughput_msgs_s / baseline.throughput_msgs_s
    return {
        "rtt_p50_us": traced.rtt_p50_us,
        "rtt_p99_us": traced.rtt_p99_us,
        "throughput_msgs_s": traced.throughput_msgs_s,
        "rtt_p50_us_notrace": untraced.rtt_p50_us,
        "rtt_p99_us_notrace": untraced.rtt_p99_us,
        "throughput_msgs_s_notrace": untraced.throughput_msgs_s,
        "baseline_rtt_p50_us": baseline.rtt_p50_us,
        "baseline_rtt_p99_us": baseline.rtt_p99_us,
        "baseline_throughput_msgs_s": baseline.throughput_msgs_s,
        "direct_rtt_p50_us": direct.rtt_p50_us,
        "direct_rtt_p99_us": direct.rtt_p99_us,
        "direct_throughput_msgs_s": direct.throughput_msgs_s,
        "rtt_ratio": rtt_ratio,
        "throughput_ratio": throughput_ratio,
        "rtt_ratio_notrace": rtt_ratio_notrace,
        "throughput_ratio_notrace": throughput_ratio_notrace,
        "rtt_target": RTT_TARGET,
        "throughput_target": THROUGHPUT_TARGET,
        "rtt_target_met": rtt_ratio <= RTT_TARGET,
        "throughput_target_met": throughput_ratio >= THROUGHPUT_TARGET,
        "rtt_target_met_notrace": rtt_ratio_notrace <= RTT_TARGET,
        "throughput_target_met_notrace": throughput_ratio_notrace >= THROUGHPUT_TARGET,
        "round_trips": sizes.round_trips,
        "messages": sizes.messages,
        "warmup": sizes.warmup,
        "batch": sizes.batch,
        "repeat": sizes.repeat,
        **_curve_figures(figures),
        **_otel_figures(figures),
        "trace_events": trace_events,
        "transport": "ipc",
        "python": platform.python_version(),
        "pyzmq": zmq.pyzmq_version(),
        "libzmq": zmq.zmq_version(),
        "msgspec": msgspec.__version__,
        "event_loop": event_loop.event_loop_name(),
    }


def _curve_figures(figures: dict[str, Figures]) -> dict[str, float]:
    """With ``--curve``: the tcp and CURVE cases' figures and what CURVE costs over plain tcp."""
    if "curve" not in figures:
        return {}
    plain, curve = figures["tcp"], figures["curve"]
    return {
        "tcp_rtt_p50_us": plain.rtt_p50_us,
        "tcp_rtt_p99_us": plain.rtt_p99_us,
        "tcp_throughput_msgs_s": plain.throughput_msgs_s,
        "curve_rtt_p50_us": curve.rtt_p50_us,
        "curve_rtt_p99_us": curve.rtt_p99_us,
        "curve_throughput_msgs_s": curve.throughput_msgs_s,
        "curve_rtt_ratio": curve.rtt_p50_us / plain.rtt_p50_us,
        "curve_throughput_ratio": curve.throughput_msgs_s / plain.throughput_msgs_s,
    }


def _otel_figures(figures: dict[str, Figures]) -> dict[str, float]:
    """With ``--otel``: the export case's figures and what export costs over tracing off."""
    if "otel" not in figures:
        return {}
    off, on = figures["untraced"], figures["otel"]
    return {
        "otel_rtt_p50_us": on.rtt_p50_us,
        "otel_rtt_p99_us": on.rtt_p99_us,
        "otel_throughput_msgs_s": on.throughput_msgs_s,
        "otel_rtt_ratio": on.rtt_p50_us / off.rtt_p50_us,
        "otel_throughput_ratio": on.throughput_msgs_s / off.throughput_msgs_s,
    }


def render_table(report: dict[str, Any]) -> str:
    """The human-readable result: one row per case, then the ratios and the targets."""
    rows = [
        ("traced", "rtt_p50_us", "rtt_p99_us", "throughput_msgs_s"),
        ("untraced", "rtt_p50_us_notrace", "rtt_p99_us_notrace", "throughput_msgs_s_notrace"),
        ("baseline", "baseline_rtt_p50_us", "baseline_rtt_p99_us", "baseline_throughput_msgs_s"),
        ("direct", "direct_rtt_p50_us", "direct_rtt_p99_us", "direct_throughput_msgs_s"),
    ]
    if "curve_rtt_ratio" in report:
        rows += [
            (case, f"{case}_rtt_p50_us", f"{case}_rtt_p99_us", f"{case}_throughput_msgs_s")
            for case in CURVE_CASES
        ]
    if "otel_rtt_ratio" in report:
        rows.append(("otel", "otel_rtt_p50_us", "otel_rtt_p99_us", "otel_throughput_msgs_s"))
    lines = [
        f"warband messaging benchmark: {report['round_trips']} round trips and "
        f"{report['messages']} one-way messages per run, {report['repeat']} run(s) per case, "
        f"{report['transport']}://; python {report['python']}, pyzmq {report['pyzmq']}, "
        f"libzmq {report['libzmq']}, actors on the {report['event_loop']} event loop",
        "",
        f"{'case':<38}{'RTT p50 µs':>12}{'RTT p99 µs':>12}{'msgs/s':>12}",
    ]
    for case, p50, p99, throughput in rows:
        lines.append(
            f"{_CASE_LABELS[case]:<38}{report[p50]:>12.1f}{report[p99]:>12.1f}"
            f"{report[throughput]:>12,.0f}"
        )
    lines += ["", "framework vs the same-topology baseline:"]
    for label, suffix in (("tracing on ", ""), ("tracing off", "_notrace")):
        lines.append(
            f"  {label}: RTT p50 x{report[f'rtt_ratio{suffix}']:.2f} (target <= {RTT_TARGET}: "
            f"{_verdict(report[f'rtt_target_met{suffix}'])}), "
            f"throughput x{report[f'throughput_ratio{suffix}']:.2f} "
            f"(target >= {THROUGHPUT_TARGET}: "
            f"{_verdict(report[f'throughput_target_met{suffix}'])})"
        )
    if "curve_rtt_ratio" in report:
        lines.append(
            f"CURVE vs plain tcp://: RTT p50 x{report['curve_rtt_ratio']:.2f}, "
            f"throughput x{report['curve_throughput_ratio']:.2f}"
        )
    if "otel_rtt_ratio" in report:
        lines.append(
            f"OTel export vs tracing off: RTT p50 x{report['otel_rtt_ratio']:.2f}, "
            f"throughput x{report['otel_throughput_ratio']:.2f} "
            f"({report.get('otel_spans_exported', 0):,} spans exported)"
        )
    return "\n".join(lines)


def _verdict(met: bool) -> str:
    return "target met" if met else "missed"


# --- child processes --------------------------------------------------------------------------


def _run_role(args: argparse.Namespace) -> int:
    roles: dict[str, Callable[[argparse.Namespace], int]] = {
        "broker": _framework_broker,
        "framework-ping": _framework_ping,
        "framework-pong": _framework_pong,
        "raw-broker": _raw_broker,
        "raw-ping": _raw_ping,
        "raw-pong": _raw_pong,
        "direct-ping": _raw_ping,
        "direct-pong": _raw_pong,
        **instructions.ROLES,
    }
    role = roles.get(args.role)
    if role is None or not args.endpoint:
        raise SystemExit(f"unknown role {args.role!r} or no --endpoint; roles: {', '.join(roles)}")
    if args.parent:
        _exit_with_parent(args.parent)
    # Ctrl-C reaches the whole process group; the benchmark itself then ends its children.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _leave)
    code = role(args)
    # Past this point a SIGTERM would only interrupt the interpreter's own shutdown.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    return code


def _leave(signum: int, frame: FrameType | None) -> None:
    """Turn the first SIGTERM into SystemExit so sockets close and logs flush on the way out."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise SystemExit(128 + signum)


def _exit_with_parent(parent: int) -> None:
    """End this process if the benchmark that started it dies without reaping it."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(2)

    threading.Thread(target=watch, name="bench-parent-watch", daemon=True).start()


def _announce(text: str) -> None:
    print(text, flush=True)


def _configure(args: argparse.Namespace, name: str) -> None:
    # Tracing at its default level when a log dir is given; no log dir means tracing off.
    configure_logging(args.log_dir, name, trace_messages=True)
    if args.otel_endpoint:
        from warband.messaging import otel

        otel.configure(args.otel_endpoint, name)


def _framework_broker(args: argparse.Namespace) -> int:
    _configure(args, "broker")
    broker = Broker(args.endpoint, curve=load_server(args.keys) if args.keys else None)
    broker.start()
    _announce(_READY)
    try:
        while broker.is_running():
            broker.join(0.5)
    finally:
        broker.stop()
        flush_logging()
    return 0


class _Pong(Actor):
    """Answers pings, counts the one-way flood, and answers its last message with the count."""

    def __init__(self) -> None:
        super().__init__(_PONG_ID)
        self.received = 0

    async def on_start(self) -> None:
        _announce(_READY)

    @handles(StatusReport)
    def on_status(self, report: StatusReport) -> None:
        status = report.status
        if status == "ping":
            self.reply(report, StatusReport(status="pong", details=_DETAILS))
        elif status == "flood":
            self.received += 1
        elif status == "last":
            self.received += 1
            self.reply(report, StatusReport(status="ack", details={"received": self.received}))
        elif status == "bye":
            self.stop("benchmark done")


class _Ping(Actor):
    """Times request/reply round trips, then a one-way flood, then tells the pong to stop."""

    def __init__(self, sizes: Sizes) -> None:
        super().__init__(_PING_ID)
        self.sizes = sizes
        self.rtt_ns: list[int] = []
        self.flood_ns = 0
        self.acked = 0
        self.error: BaseException | None = None

    async def on_start(self) -> None:
        # on_start runs before the actor reads its inbox, so the exchange runs as a task.
        self.start_task(self._exchange())

    async def _exchange(self) -> None:
        try:
            for _ in range(self.sizes.warmup):
                await self._round_trip()
            clock = time.perf_counter_ns
            for _ in range(self.sizes.round_trips):
                start = clock()
                await self._round_trip()
                self.rtt_ns.append(clock() - start)
            await self._flood()
            self.send(StatusReport(recipient=_PONG_ID, status="bye"))
        except Exception as error:
            self.error = error
        finally:
            self.stop("benchmark done")

    async def _round_trip(self) -> Message:
        return await self.request(
            StatusReport(recipient=_PONG_ID, status="ping", details=_DETAILS), timeout=30
        )

    async def _flood(self) -> None:
        batch = self.sizes.batch
        start = time.perf_counter_ns()
        for index in range(1, self.sizes.messages):
            self.send(StatusReport(recipient=_PONG_ID, status="flood", details=_DETAILS))
            if index % batch == 0:
                # Let the loop read: a sender that never yields starves its own connection.
                await asyncio.sleep(0)
        ack = await self.request(
            StatusReport(recipient=_PONG_ID, status="last", details=_DETAILS), timeout=120
        )
        self.flood_ns = time.perf_counter_ns() - start
        assert isinstance(ack, StatusReport)
        self.acked = int(ack.details.get("received") or 0)


def _run_actor(actor: Actor, endpoint: str, keys: Path | None) -> None:
    curve = load_client(keys, actor.id) if keys else None
    # No clock in this benchmark and no heartbeats: nobody would receive them.
    event_loop.run(actor.run(endpoint, mode="realtime", heartbeat_interval=0, curve=curve))


def _framework_pong(args: argparse.Namespace) -> int:
    _configure(args, _PONG_ID)
    _run_actor(_Pong(), args.endpoint, args.keys)
    flush_logging()
    return 0


def _framework_ping(args: argparse.Namespace) -> int:
    _configure(args, _PING_ID)
    ping = _Ping(_role_sizes(args))
    _run_actor(ping, args.endpoint, args.keys)
    flush_logging()
    if ping.error is not None:
        print(f"framework ping failed: {ping.error!r}", file=sys.stderr)
        return 1
    _print_result(ping.rtt_ns, ping.flood_ns, ping.acked)
    return 0


def _role_sizes(args: argparse.Namespace) -> Sizes:
    return Sizes(
        round_trips=args.round_trips,
        messages=args.messages,
        warmup=args.warmup,
        batch=args.batch,
        repeat=1,
    )


def _print_result(rtt_ns: list[int], flood_ns: int, messages: int) -> None:
    _announce(json.dumps({"rtt_ns": rtt_ns, "flood_ns": flood_ns, "messages": messages}))


# --- the no-framework baselines ---------------------------------------------------------------


class _Route(msgspec.Struct):
    """All the raw broker reads of a frame: where it goes."""

    recipient: str = ""


def _raw_broker(args: argparse.Namespace) -> int:
    """Blocking ROUTER: forward each payload to the peer named in its ``recipient`` field."""
    context = zmq.Context()
    router = context.socket(zmq.ROUTER)
    router.setsockopt(zmq.ROUTER_MANDATORY, 1)
    router.setsockopt(zmq.SNDHWM, _HWM)
    router.setsockopt(zmq.RCVHWM, _HWM)
    router.bind(args.endpoint)
    route = msgspec.msgpack.Decoder(_Route)
    _announce(_READY)
    try:
        while True:
            peer, payload = router.recv_multipart()
            recipient = route.decode(payload).recipient
            if recipient == _RAW_BROKER_ID:
                router.send_multipart([peer, b"registered"])
            else:
                router.send_multipart([recipient.encode(), payload])
    finally:
        router.close(linger=0)
        context.term()


class _RawSocket:
    """The raw ping's or pong's one socket: a DEALER to the broker, or a direct connection."""

    def __init__(self, args: argparse.Namespace, actor_id: str) -> None:
        self.direct = args.role.startswith("direct")
        self.context = zmq.Context()
        # Direct: the pong binds a ROUTER (to answer whoever pinged) and the ping connects.
        is_server = self.direct and actor_id == _PONG_ID
        self.socket = self.context.socket(zmq.ROUTER if is_server else zmq.DEALER)
        self.socket.setsockopt(zmq.ROUTING_ID, actor_id.encode())
        self.socket.setsockopt(zmq.SNDHWM, 0)
        self.socket.setsockopt(zmq.RCVHWM, 0)
        if is_server:
            self.socket.bind(args.endpoint)
        else:
            self.socket.connect(args.endpoint)
        self._peer = b""
        if not self.direct:
            # Like an actor's registration: the broker must know us before anyone replies to us.
            self.socket.send(_ENCODER.encode(StatusReport(recipient=_RAW_BROKER_ID, status="hi")))
            self.socket.recv()

    def send(self, payload: bytes) -> None:
        if self.socket.socket_type == zmq.ROUTER:
            self.socket.send_multipart([self._peer, payload])
        else:
            self.socket.send(payload)

    def recv(self) -> bytes:
        if self.socket.socket_type == zmq.ROUTER:
            self._peer, payload = self.socket.recv_multipart()
            return payload
        return self.socket.recv()

    def close(self) -> None:
        self.socket.close(linger=2000)
        self.context.term()


_ENCODER: Final = msgspec.msgpack.Encoder()


def _raw_pong(args: argparse.Namespace) -> int:
    """The baseline pong: decode each StatusReport, answer pings, count the flood."""
    connection = _RawSocket(args, _PONG_ID)
    decoder = msgspec.msgpack.Decoder(StatusReport)
    encode = _ENCODER.encode
    _announce(_READY)
    received = sent = 0
    details: dict[str, Value]
    try:
        while True:
            report = decoder.decode(connection.recv())
            status = report.status
            if status == "flood":
                received += 1
                continue
            if status == "bye":
                return 0
            if status == "last":
                received += 1
                answer, details = "ack", {"received": received}
            else:
                answer, details = "pong", _DETAILS
            sent += 1
            connection.send(
                encode(
                    StatusReport(
                        recipient=report.sender,
                        sender=_PONG_ID,
                        id=f"{_PONG_ID}:{sent}",
                        seq=sent,
                        conversation=report.conversation,
                        reply_to=report.id,
                        status=answer,
                        details=details,
                    )
                )
            )
    finally:
        connection.close()


def _raw_ping(args: argparse.Namespace) -> int:
    """The baseline ping: the same exchange as the framework's, with blocking calls."""
    sizes = _role_sizes(args)
    connection = _RawSocket(args, _PING_ID)
    decoder = msgspec.msgpack.Decoder(StatusReport)
    encode = _ENCODER.encode
    sequence = 0

    def report(status: str) -> bytes:
        nonlocal sequence
        sequence += 1
        message_id = f"{_PING_ID}:{sequence}"
        return encode(
            StatusReport(
                recipient=_PONG_ID,
                sender=_PING_ID,
                id=message_id,
                seq=sequence,
                conversation=message_id,
                status=status,
                details=_DETAILS,
            )
        )

    try:
        for _ in range(sizes.warmup):
            connection.send(report("ping"))
            decoder.decode(connection.recv())
        rtt_ns: list[int] = []
        clock = time.perf_counter_ns
        for _ in range(sizes.round_trips):
            start = clock()
            connection.send(report("ping"))
            decoder.decode(connection.recv())
            rtt_ns.append(clock() - start)
        start = clock()
        for _ in range(sizes.messages - 1):
            connection.send(report("flood"))
        connection.send(report("last"))
        ack = decoder.decode(connection.recv())
        flood_ns = clock() - start
        connection.send(report("bye"))
    finally:
        connection.close()
    _print_result(rtt_ns, flood_ns, int(ack.details.get("received") or 0))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
