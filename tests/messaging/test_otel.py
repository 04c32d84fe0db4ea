"""OpenTelemetry export, run for real: spans of handled messages, linked by the ``trace`` key.

A ``--processes`` run exports to an OTLP/HTTP receiver started by the test (the real exporter,
over a real socket, protobuf decoded with the OpenTelemetry proto package); a run in this process
exports to the SDK's in-memory exporter. Either way each conversation is one trace and each
answer's span is a child of the span that handled the message it answers.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import msgspec
import pytest

from warband.messaging import Actor, handles, otel
from warband.messaging.catalog import CompletionReport, Order, RequestTalk, StatusReport
from warband.messaging.codec import Codec
from warband.testing import run_actors

from ..conftest import REPO, CommandResult

NO_EXTRA = "the otel extra is not installed: pip install 'warband[otel]'"
pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason=NO_EXTRA)
pb2 = pytest.importorskip(
    "opentelemetry.proto.collector.trace.v1.trace_service_pb2", reason=NO_EXTRA
)
in_memory_exporter = pytest.importorskip(
    "opentelemetry.sdk.trace.export.in_memory_span_exporter", reason=NO_EXTRA
)
InMemorySpanExporter = in_memory_exporter.InMemorySpanExporter

Cli = Callable[..., CommandResult]
PING_PONG = "scenarios/ping_pong.py"
CONVERSATION = "messaging.message.conversation_id"
TRACEPARENT = "00-" + "1" * 32 + "-" + "2" * 16 + "-01"


@dataclass(frozen=True)
class Span:
    """What the tests read of one exported span, from either exporter."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str | None
    attributes: dict[str, Any]
    process: str = ""
    links: tuple[tuple[str, str, str], ...] = ()
    """(trace id, span id, the link's ``warband.link``) of each span link."""

    @property
    def actor(self) -> str:
        return str(self.attributes["warband.actor"])

    @property
    def message_id(self) -> str:
        return str(self.attributes["messaging.message.id"])


@dataclass
class OtlpReceiver:
    """An OTLP/HTTP traces endpoint on 127.0.0.1 that keeps every span posted to it."""

    spans: list[Span] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def received(self, body: bytes) -> None:
        request = pb2.ExportTraceServiceRequest.FromString(body)
        found = []
        for resource_spans in request.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    found.append(
                        Span(
                            name=span.name,
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_id=span.parent_span_id.hex() or None,
                            attributes={a.key: _value(a.value) for a in span.attributes},
                            process=str(resource.get("warband.process", "")),
                            links=tuple(
                                (
                                    link.trace_id.hex(),
                                    link.span_id.hex(),
                                    str({a.key: _value(a.value) for a in link.attributes}),
                                )
                                for link in span.links
                            ),
                        )
                    )
        with self.lock:
            self.spans.extend(found)


def _value(value: Any) -> Any:
    return getattr(value, value.WhichOneof("value"))


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    state = OtlpReceiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path != otel.TRACES_PATH:
                self.send_error(404)
                return
            state.received(body)
            answer = pb2.ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture
def in_memory() -> Iterator[Any]:
    exporter = InMemorySpanExporter()
    otel.configure(None, "main", exporter=exporter)
    try:
        yield exporter
    finally:
        otel.shutdown()


def handled(spans: list[Span]) -> list[Span]:
    """The spans of messages handled: not the broker's ``route``, nor a launcher's ``run``."""
    return [span for span in spans if span.name.split(" ")[0] not in ("route", "run", "sweep")]


def check_routing(spans: list[Span]) -> None:
    """Each traced message the broker routed has a ``route`` span beside its handling span."""
    routes = {s.message_id: s for s in spans if s.name.startswith("route ")}
    replies = [s for s in handled(spans) if s.name == "CompletionReport"]
    assert replies
    for reply in replies:
        route = routes[reply.message_id]
        assert ("route CompletionReport", reply.trace_id, reply.parent_id) == (
            route.name,
            route.trace_id,
            route.parent_id,
        )
    assert not any(s.name == "route Order" and s.parent_id is None for s in spans)


def check_conversations(spans: list[Span]) -> None:
    """Each Order's trace holds its CompletionReport and the talk it led to, rightly parented.

    ping_pong: the commander's Order to a bot (a new trace), the bot's CompletionReport (a
    reply: child of the Order's span), and the RequestTalk ... TalkReply ... EndTalk the bot
    then holds with its peer (a follow-up from the Order's handler, then one conversation).
    The broker's ``route <type>`` spans are left out (see check_routing).
    """
    spans = handled(spans)
    by_id = {span.span_id: span for span in spans}
    by_message = {span.message_id: span for span in spans}
    orders = [span for span in spans if span.name == "Order"]
    assert orders, "no Order span was exported"
    for order in orders:
        assert order.parent_id is None, "a commander's new Order starts a trace"
        report = next(
            s for s in spans if s.name == "CompletionReport" and s.parent_id == order.span_id
        )
        assert (order.trace_id, "commander", order.message_id) == (
            report.trace_id,
            report.actor,
            report.attributes["warband.reply_to"],
        )
    for talk in (span for span in spans if span.name == "RequestTalk"):
        parent = by_id[talk.parent_id] if talk.parent_id else None
        assert parent is not None and "Order" == parent.name
        conversation = talk.attributes[CONVERSATION]
        turns = [s for s in spans if s.attributes.get(CONVERSATION) == conversation]
        assert {talk.trace_id} == {turn.trace_id for turn in turns}
        for reply in (s for s in turns if s.name == "TalkReply"):
            assert talk.span_id == reply.parent_id
            assert talk.message_id == reply.attributes["warband.reply_to"]
            end = next((s for s in turns if s.name == "EndTalk"), None)
            if end is not None:
                assert reply.span_id == end.parent_id
    for report in (span for span in spans if span.name == "CompletionReport"):
        assert by_message[report.attributes["warband.reply_to"]].span_id == report.parent_id


@pytest.mark.processes
def test_a_processes_run_exports_one_trace_per_conversation_across_processes(
    warband_cli: Cli, receiver: OtlpReceiver
) -> None:
    result = warband_cli(
        "run",
        PING_PONG,
        "--processes",
        "--param",
        "rounds=2",
        "--quiet",
        "--json",
        "--otel",
        receiver.url,
    )
    assert 0 == result.returncode, result.stderr
    # Every process flushed its spans when it exited, the launcher last.
    spans = list(receiver.spans)
    check_conversations(spans)
    check_routing(spans)
    assert {"launcher", "broker", "commander", "bot-1", "bot-2"} == {s.process for s in spans}
    report = json.loads(result.stdout.splitlines()[-1])
    (run,) = [span for span in spans if span.name == "run ping_pong"]
    assert ("launcher", None) == (run.process, run.parent_id)
    assert {
        "warband.scenario": "ping_pong",
        "warband.seed": report["seed"],
        "warband.processes": report["processes"],
        "warband.outcome": "success",
        "warband.ticks": report["ticks"],
        "warband.completed": True,
        "warband.finish_reason": report["finish_reason"],
    } == run.attributes
    orders = [span for span in spans if span.name == "Order"]
    assert 4 == len(orders)
    for order in orders:
        processes = {span.process for span in spans if span.trace_id == order.trace_id}
        assert {"broker", "commander", order.actor} <= processes, "a trace crosses processes"
    assert all(span.process == span.actor for span in handled(spans))
    # Each trace's root, in whichever process it started, links to the launcher's run span;
    # no other span does.
    to_run = ((run.trace_id, run.span_id, str({"warband.link": "run"})),)
    roots = [span for span in handled(spans) if span.parent_id is None]
    assert {"commander"} <= {root.process for root in roots}
    assert all(to_run == root.links for root in roots)
    assert not any(span.links for span in spans if span.parent_id is not None)


@pytest.mark.processes
def test_the_standard_variable_turns_export_on_without_the_flag(
    warband_cli: Cli, receiver: OtlpReceiver
) -> None:
    result = warband_cli(
        "run",
        PING_PONG,
        "--processes",
        "--param",
        "rounds=1",
        "--quiet",
        env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url},
    )
    assert 0 == result.returncode, result.stderr
    assert 2 == len([span for span in receiver.spans if span.name == "Order"])


def test_a_run_in_one_process_exports_linked_spans_to_the_in_memory_exporter(
    in_memory: Any,
) -> None:
    from warband.launcher import RunOptions, run_in_process
    from warband.scenario import load_scenario

    report = run_in_process(load_scenario(REPO / PING_PONG), RunOptions(seed=2))
    assert report.completed
    spans = [
        Span(
            name=span.name,
            trace_id=f"{span.context.trace_id:032x}",
            span_id=f"{span.context.span_id:016x}",
            parent_id=f"{span.parent.span_id:016x}" if span.parent else None,
            attributes=dict(span.attributes or {}),
        )
        for span in in_memory.get_finished_spans()
    ]
    check_conversations(spans)
    check_routing(spans)
    order = next(span for span in spans if span.name == "Order")
    assert {
        "messaging.system": "warband",
        "warband.sender": "commander",
        "warband.recipient": order.actor,
    }.items() <= order.attributes.items()
    assert order.attributes["warband.tick"] >= 1
    assert not any(span.name.startswith("_") or span.name == "Tick" for span in spans)


def test_a_frame_without_the_trace_key_decodes_with_trace_none() -> None:
    codec = Codec()
    old_frame = msgspec.msgpack.encode(
        {"type": "Order", "sender": "commander", "recipient": "bot-1", "id": "c:1", "task": "go"}
    )
    assert None is codec.decode(old_frame).trace
    traced = Order(recipient="bot-1", task="go", trace=TRACEPARENT)
    assert TRACEPARENT == codec.decode(codec.encode(traced)).trace


def test_without_export_an_actor_sends_no_trace_and_keeps_no_telemetry() -> None:
    otel.shutdown()
    assert None is otel.actor_telemetry("bot-1")


def test_a_missing_extra_is_named_with_the_command_that_installs_it(tmp_path: Path) -> None:
    # The real CLI in a child whose import of OpenTelemetry fails, as without the extra.
    code = (
        "import sys; sys.modules['opentelemetry'] = None; "
        "from warband.cli import main; "
        f"raise SystemExit(main(['run', {PING_PONG!r}, '--quiet', '--otel', 'http://127.0.0.1:9']))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert 2 == result.returncode, result.stderr
    assert "pip install 'warband[otel]'" in result.stderr


class _Giver(Actor):
    """Sends one Order from on_tick (no handler runs: a new trace)."""

    def on_tick(self, tick: int) -> None:
        if tick == 1:
            self.send(Order(recipient="taker", task="hold"))

    @handles(CompletionReport)
    def on_report(self, report: CompletionReport) -> None:
        self.send(StatusReport(recipient="taker", status="thanks"))


class _Taker(Actor):
    """Keeps the Order and reports on it three ticks later, from on_tick, its span long over."""

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.order: Order | None = None

    @handles(Order)
    def on_order(self, order: Order) -> None:
        self.order = order

    @handles(StatusReport)
    def on_status(self, report: StatusReport) -> None:
        pass

    def on_tick(self, tick: int) -> None:
        if self.order is not None and tick == self.order.tick + 3:
            self.reply(self.order, CompletionReport(task="hold", success=True))


async def test_a_reply_sent_ticks_later_from_on_tick_is_a_child_of_the_span_that_handled_it(
    in_memory: Any,
) -> None:
    await run_actors([_Giver("giver"), _Taker("taker")], ticks=8)
    spans = {span.name: span for span in in_memory.get_finished_spans()}
    order, report, thanks = spans["Order"], spans["CompletionReport"], spans["StatusReport"]
    assert None is order.parent
    assert (order.context.trace_id, order.context.span_id) == (
        report.context.trace_id,
        report.parent.span_id,
    )
    # No conversation: the thanks, sent while the report is handled, is a follow-up of it.
    assert (report.context.trace_id, report.context.span_id) == (
        thanks.context.trace_id,
        thanks.parent.span_id,
    )


class _Prodder(Actor):
    """At tick 1 sends an Order (its handler raises at once) and a StatusReport (its handler
    raises in its task, a tick later), both to ``failing``."""

    def on_tick(self, tick: int) -> None:
        if tick == 1:
            self.send(Order(recipient="failing", task="hold"))
            self.send(StatusReport(recipient="failing", status="late"))


class _Failing(Actor):
    @handles(Order)
    def on_order(self, order: Order) -> None:
        raise ValueError(f"no such task: {order.task}")

    @handles(StatusReport)
    async def on_status(self, report: StatusReport) -> None:
        await self.sleep(1)
        raise RuntimeError(f"status {report.status} came too late")


def _exception_event(span: Any) -> dict[str, Any]:
    events = [event for event in span.events if event.name == "exception"]
    assert 1 == len(events), [event.name for event in span.events]
    return dict(events[0].attributes or {})


async def test_a_handler_that_raises_leaves_its_span_in_error_with_the_exception(
    in_memory: Any,
) -> None:
    from opentelemetry.trace import StatusCode

    result = await run_actors(
        [_Prodder("prodder"), _Failing("failing")], ticks=5, raise_on_failure=False
    )
    assert {"failing": 2} == result.handler_failures
    spans = {span.name: span for span in in_memory.get_finished_spans()}
    order = spans["Order"]
    assert (StatusCode.ERROR, "ValueError: no such task: hold") == (
        order.status.status_code,
        order.status.description,
    )
    event = _exception_event(order)
    assert ("ValueError", "no such task: hold") == (
        event["exception.type"],
        event["exception.message"],
    )


async def test_a_handler_task_that_raises_leaves_its_span_in_error_with_the_exception(
    in_memory: Any,
) -> None:
    from opentelemetry.trace import StatusCode

    await run_actors([_Prodder("prodder"), _Failing("failing")], ticks=5, raise_on_failure=False)
    report = next(s for s in in_memory.get_finished_spans() if s.name == "StatusReport")
    assert (StatusCode.ERROR, "RuntimeError: status late came too late") == (
        report.status.status_code,
        report.status.description,
    )
    event = _exception_event(report)
    assert "RuntimeError" == event["exception.type"]
    # The span lasted as long as the task: it ended after the error, a tick after it began.
    assert report.start_time < event_time(report) <= report.end_time


def event_time(span: Any) -> int:
    return int(next(event.timestamp for event in span.events if event.name == "exception"))


class _Asker(Actor):
    """Handling an Order, asks ``mute`` something and gives up after two ticks, unharmed."""

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.timed_out = False

    def on_tick(self, tick: int) -> None:
        if tick == 1:
            self.send(Order(recipient=self.id, task="ask"))

    @handles(Order)
    async def on_order(self, order: Order) -> None:
        from warband.exceptions import RequestTimeout
        from warband.messaging.catalog import RequestTalk

        try:
            await self.request(RequestTalk(recipient="mute"), timeout=2)
        except RequestTimeout:
            self.timed_out = True


class _Mute(Actor):
    """Takes every RequestTalk and never answers."""

    @handles(RequestTalk)
    def on_talk(self, talk: RequestTalk) -> None:
        pass


async def test_a_request_that_times_out_is_an_event_on_the_span_it_was_made_from(
    in_memory: Any,
) -> None:
    from opentelemetry.trace import StatusCode

    asker = _Asker("asker")
    await run_actors([asker, _Mute("mute")], ticks=6)
    assert asker.timed_out
    spans = in_memory.get_finished_spans()
    order = next(s for s in spans if s.name == "Order")
    talk = next(s for s in spans if s.name == "RequestTalk")
    events = [e for e in order.events if e.name == otel.REQUEST_TIMEOUT_EVENT]
    assert 1 == len(events)
    assert {
        "messaging.message.id": talk.attributes["messaging.message.id"],
        "warband.message.type": "RequestTalk",
        "warband.recipient": "mute",
        CONVERSATION: talk.attributes[CONVERSATION],
        "warband.reason": "no reply within 2 ticks",
    } == dict(events[0].attributes or {})
    # The handler caught the time-out and went on: the span is no failure.
    assert StatusCode.UNSET == order.status.status_code


class _Misaddresser(Actor):
    """Sends two traced Orders the broker cannot route: one to the broker itself (rejected,
    it handles control messages only), one to an agent that is not connected."""

    def on_tick(self, tick: int) -> None:
        if tick == 1:
            self.send(Order(recipient="broker", task="hold", trace=TRACEPARENT))
            self.send(Order(recipient="nobody", task="hold", trace=TRACEPARENT))

    @handles(Order)
    def on_order(self, order: Order) -> None:
        pass


async def test_a_frame_the_broker_rejects_or_cannot_deliver_leaves_its_route_span_in_error(
    in_memory: Any,
) -> None:
    from opentelemetry.trace import StatusCode

    misaddresser = _Misaddresser("misaddresser")
    result = await run_actors([misaddresser], ticks=4)
    # Both come back naming the Order: neither is sent again.
    assert ({"misaddresser": 2}, 0) == (result.undeliverable, misaddresser.stats.resent)
    routes = {
        span.attributes["warband.recipient"]: span
        for span in in_memory.get_finished_spans()
        if span.name == "route Order"
    }
    assert {"broker", "nobody"} == set(routes)
    assert (StatusCode.ERROR, "rejected by broker: the broker does not handle Order") == (
        routes["broker"].status.status_code,
        routes["broker"].status.description,
    )
    assert (StatusCode.ERROR, "no agent 'nobody' is connected") == (
        routes["nobody"].status.status_code,
        routes["nobody"].status.description,
    )


def test_a_run_has_a_span_of_its_own_under_the_traceparent_variable_and_parent_of_nothing(
    in_memory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from warband.launcher import RunOptions, run_scenario
    from warband.scenario import load_scenario

    monkeypatch.setenv(otel.TRACEPARENT, TRACEPARENT)
    report = run_scenario(load_scenario(REPO / PING_PONG), RunOptions(seed=3), processes=False)
    assert report.completed
    spans = in_memory.get_finished_spans()
    run = next(span for span in spans if span.name == "run ping_pong")
    assert {
        "warband.scenario": "ping_pong",
        "warband.seed": 3,
        "warband.processes": 1,
        "warband.outcome": "success",
        "warband.ticks": report.ticks,
        "warband.completed": True,
        "warband.finish_reason": report.finish_reason,
    } == dict(run.attributes or {})
    assert ("1" * 32, "2" * 16) == (f"{run.context.trace_id:032x}", f"{run.parent.span_id:016x}")
    # The match's conversations stay traces of their own: nothing hangs under the run.
    assert not any(s.parent is not None and s.parent.span_id == run.context.span_id for s in spans)
    assert all(s.context.trace_id != run.context.trace_id for s in spans if s is not run)
    # They link to it instead: every root of a trace in the run, and nothing else.
    roots = [s for s in spans if s.parent is None and s is not run]
    assert roots
    for root in roots:
        (link,) = root.links
        assert (run.context.trace_id, run.context.span_id, {"warband.link": "run"}) == (
            link.context.trace_id,
            link.context.span_id,
            dict(link.attributes),
        )
    assert not any(s.links for s in spans if s.parent is not None)
    # The link ends with the run: the variable for the run's processes is gone too.
    assert otel.RUN_SPAN_VARIABLE not in os.environ


def test_a_run_that_raises_ends_its_span_in_error_with_the_exception(in_memory: Any) -> None:
    from opentelemetry.trace import StatusCode

    from warband.exceptions import ConfigurationError
    from warband.launcher import RunOptions, run_scenario
    from warband.scenario import load_scenario

    options = RunOptions(params={"no_such_parameter": "1"})
    with pytest.raises(ConfigurationError):
        run_scenario(load_scenario(REPO / PING_PONG), options)
    run = next(s for s in in_memory.get_finished_spans() if s.name == "run ping_pong")
    assert ("error", False, StatusCode.ERROR) == (
        run.attributes["warband.outcome"],
        run.attributes["warband.completed"],
        run.status.status_code,
    )
    assert "warband.exceptions.ConfigurationError" == _exception_event(run)["exception.type"]


@pytest.mark.processes
def test_a_sweep_exports_one_trace_with_a_span_per_run_each_parent_of_that_runs_own_span(
    warband_cli: Cli, receiver: OtlpReceiver
) -> None:
    result = warband_cli(
        "sweep",
        PING_PONG,
        "--seeds",
        "2",
        "--jobs",
        "1",
        "--param",
        "rounds=1",
        "--quiet",
        "--otel",
        receiver.url,
    )
    assert 0 == result.returncode, result.stderr
    spans = list(receiver.spans)
    (sweep,) = [span for span in spans if span.name == "sweep ping_pong"]
    assert ("sweep", None) == (sweep.process, sweep.parent_id)
    assert {
        "warband.scenario": "ping_pong",
        "warband.seeds": 2,
        "warband.jobs": 1,
        "warband.completed": 2,
        "warband.runs": 2,
    } == sweep.attributes
    seeds = {s.attributes["warband.seed"]: s for s in spans if s.name == "sweep run ping_pong"}
    runs = {s.attributes["warband.seed"]: s for s in spans if s.name == "run ping_pong"}
    assert {1, 2} == set(seeds) == set(runs)
    for seed, seed_span in seeds.items():
        assert ("sweep", sweep.span_id, "success", 0) == (
            seed_span.process,
            seed_span.parent_id,
            seed_span.attributes["warband.outcome"],
            seed_span.attributes["warband.exit_code"],
        )
        # The run process got its seed's span in TRACEPARENT: its own span hangs under it.
        assert ("main", seed_span.span_id, sweep.trace_id) == (
            runs[seed].process,
            runs[seed].parent_id,
            runs[seed].trace_id,
        )
    # Each run exported its messages too (--otel is passed on), in traces of their own.
    orders = [span for span in spans if span.name == "Order"]
    assert 4 == len(orders)
    assert sweep.trace_id not in {order.trace_id for order in orders}


def test_a_stopping_process_waits_a_bounded_time_for_a_collector_that_never_answers() -> None:
    import socket
    import time

    # A collector that takes the connection and never answers: the OTLP exporter alone would
    # wait out its 10 s request time-out and retries at exit, past the 5 s a run has to end.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        otel.configure(f"http://127.0.0.1:{silent.getsockname()[1]}", "test")
        span = otel.run_span("run silent", {})
        assert span is not None
        span.end({})
        exporter = otel._exporter
        started = time.monotonic()
        otel.shutdown()
        waited = time.monotonic() - started
    assert not otel.configured()
    assert exporter._shutdown, "the retrying export was ended, its spans dropped"
    # 2 x SHUTDOWN_FLUSH_S is the design; the rest is slack for a loaded machine, still
    # below the exporter's own 10 s.
    assert waited < 2 * otel.SHUTDOWN_FLUSH_S + 5, waited
