"""OpenTelemetry export: one span per message handled, the trace context riding in the envelope.

Turned on per process by :func:`configure` (``--otel ENDPOINT`` or the standard
``OTEL_EXPORTER_OTLP_ENDPOINT`` variable); needs the ``warband[otel]`` extra. Off, nothing here
imports OpenTelemetry and an actor's hot paths pay one attribute check (``Actor._otel``).

What a process exports, over OTLP/HTTP (protobuf) with a batching processor:

- **One span per message an actor handles** (given to its handler, or answering one of its
  ``request(...)`` calls): named after the message type, kind CONSUMER, with the attributes
  ``messaging.system`` (``"warband"``), ``messaging.message.id``,
  ``messaging.message.conversation_id`` (when the message has one), ``warband.sender``,
  ``warband.recipient`` (as addressed, maybe ``#group``), ``warband.actor`` (who handled it),
  ``warband.tick`` and ``warband.reply_to`` (when it answers one). It lasts while the handler
  runs, its coroutine included. The runtime's own plumbing (underscored control messages, the
  clock's ``Tick``) gets no span.
- **The parent** is the span named by the message's ``trace`` envelope field (a W3C
  ``traceparent``); a message without one starts a new trace.

Which ``trace`` a message sent carries, first that applies:

1. it answers a message (``reply_to``) this actor handled: that message's span. So an Order's
   CompletionReport, sent ticks later from ``on_tick``, is a child of the span that handled
   the Order;
2. it belongs to a conversation in which this actor handled a message: the span of the latest
   such message. So a RequestTalk ... EndTalk exchange is one trace;
3. it is sent while a handler runs (a follow-up): that handler's span. A squad's Orders to its
   bots, given while it handles its commander's Order, continue the commander's trace;
4. otherwise (``on_tick``, ``on_start``, a timer, with no conversation to continue): none, and
   the span that handles it is the root of a new trace. A new Order from a commander's plan
   starts its own trace.

A broker that exports (``warband broker --otel``, or the broker of a run that does) adds a span
``route <type>`` for each frame with a ``trace`` it routes, a child of the sender's span.

Both lookups (1, 2) remember the last :data:`REMEMBERED` messages and conversations per actor.

**Failures** are marked where they happen:

- a handler that raises (at once, or in the task its coroutine runs in): the span of the
  message it was handling gets status ERROR (``TypeName: message``) and the exception as an
  ``exception`` event (``record_exception``). The actor still logs ``actor.failure`` and goes
  on, as without export. A failing ``on_tick`` or timer has no message span: nothing is marked;
- a ``request(...)`` whose reply never came: the span the request was made from (the handler
  awaiting it; none from ``on_tick`` or ``on_start``) gets an event
  :data:`REQUEST_TIMEOUT_EVENT` naming the request, and keeps its status: the handler may catch
  :class:`~warband.exceptions.RequestTimeout` and carry on; if it does not, the failure marks
  the span ERROR as above;
- a frame the broker rejects or cannot deliver while its ``route <type>`` span is open (a
  catalog message addressed to the broker itself, a recipient not connected, a full queue):
  that span gets status ERROR with the broker's reason as description. A frame refused before
  routing (unregistered sender, forged sender, bad frame) gets no route span at all.

**A run** also has a span of its own, in the process that launched it (the ``warband run``
process, ``launcher`` with ``--processes``, ``main`` without): ``run <scenario>``, made by
:func:`run_span`, with the attributes ``warband.scenario``, ``warband.seed``,
``warband.processes``, ``warband.outcome`` (``success``, ``failure``, ``interrupted`` or
``error``), ``warband.ticks``, ``warband.completed`` and ``warband.finish_reason``; status ERROR
when the run did not complete. Its parent is the W3C traceparent in the :data:`TRACEPARENT`
environment variable when one is set (OpenTelemetry's convention for context carried from a
parent process: a CI job, or ``warband sweep``), else none. It is the parent of nothing in the
run, on purpose: a match's messages are one trace per conversation (the rules above), and
hanging every conversation under the run would make one trace of tens of thousands of spans
out of a match, and claim a causality (the run "caused" a commander's plan) no tool can use.
The run span is never made current, so it cannot become a parent by accident (rule 3).
Instead, every span that starts a new trace in the run (rule 4's roots) carries a span
**link** to the run span (OpenTelemetry's "related, not caused by"), with the attribute
``warband.link`` = ``"run"``: from any conversation a tracing tool leads to its run, and from
the run (by its trace and span id) to every conversation. The run's processes learn the run
span from :data:`RUN_SPAN_VARIABLE`, which the launcher sets for the children it starts.
``warband sweep`` exports ``sweep <scenario>`` and, under it, one ``sweep run <scenario>`` per
seed; each seed's ``warband run`` gets that span in :data:`TRACEPARENT`, so its own
``run <scenario>`` span is the seed's child: one trace per sweep.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..exceptions import ConfigurationError

if TYPE_CHECKING:
    from .catalog import Message
    from .codec import Envelope

ENDPOINT_VARIABLE = "OTEL_EXPORTER_OTLP_ENDPOINT"
"""The standard variable that turns export on when ``--otel`` is not given."""
TRACEPARENT = "TRACEPARENT"
"""The environment variable a parent process's span reaches a child in (OpenTelemetry's
environment carrier: the W3C ``traceparent`` header's value under its name in capitals)."""
RUN_SPAN_VARIABLE = "WARBAND_RUN_SPAN"
"""The environment variable the run span reaches a run's processes in (a W3C traceparent):
the roots of their traces link to it. Set by the launcher, read by :func:`configure`."""
REQUEST_TIMEOUT_EVENT = "warband.request.timeout"
"""The event on the span a timed-out ``request(...)`` was made from."""
TRACES_PATH = "/v1/traces"
SHUTDOWN_FLUSH_S = 1.0
"""The longest a stopping process waits for its last spans to be exported."""
REMEMBERED = 4096
"""Handled messages and conversations an actor remembers the span of, for later replies."""

_MISSING_EXTRA = (
    "OpenTelemetry export (--otel or {variable}) needs the otel extra: "
    "pip install 'warband[otel]' (opentelemetry-sdk and the OTLP/HTTP exporter); or unset "
    "{variable} and leave out --otel"
)

_provider: Any = None
_tracer: Any = None
_exporter: Any = None
_run_links: Any = None
"""The links the root spans of this process's traces carry (to the run span), or None."""


def endpoint_from(flag: str | None) -> str | None:
    """The OTLP endpoint to export to: ``--otel``'s value, else the standard variable, else None."""
    if flag:
        return flag
    return os.environ.get(ENDPOINT_VARIABLE) or None


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL of a collector's base endpoint (``/v1/traces`` appended once)."""
    base = endpoint.rstrip("/")
    return base if base.endswith(TRACES_PATH) else base + TRACES_PATH


def configure(endpoint: str | None, process: str, *, exporter: Any = None) -> None:
    """Export this process's spans to ``endpoint`` over OTLP/HTTP, or to ``exporter``.

    ``endpoint`` is a collector's base URL (``http://localhost:4318``), as
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` takes it; ``process`` names this process in the spans'
    resource (``warband.process``). ``exporter`` (any OpenTelemetry ``SpanExporter``, such as
    the SDK's ``InMemorySpanExporter``) replaces the OTLP one and is flushed span by span.
    Actors started afterwards export; raises ConfigurationError when the extra is missing.
    """
    global _provider, _tracer, _exporter
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    except ImportError:
        raise ConfigurationError(_MISSING_EXTRA.format(variable=ENDPOINT_VARIABLE)) from None
    if exporter is None:
        if not endpoint:
            raise ConfigurationError(
                f"--otel needs an OTLP/HTTP endpoint, e.g. --otel http://localhost:4318 (or set "
                f"{ENDPOINT_VARIABLE})"
            )
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise ConfigurationError(_MISSING_EXTRA.format(variable=ENDPOINT_VARIABLE)) from None
        exporter = OTLPSpanExporter(endpoint=traces_url(endpoint))
        processor: Any = BatchSpanProcessor(exporter)
    else:
        processor = SimpleSpanProcessor(exporter)
    shutdown()
    resource = Resource.create(
        {
            "service.name": os.environ.get("OTEL_SERVICE_NAME", "warband"),
            "warband.process": process,
            "host.name": socket.gethostname(),
            "process.pid": os.getpid(),
        }
    )
    # Not the SDK's own exit hook, which waits as long as the exporter retries: ours is bounded.
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    atexit.unregister(shutdown)  # once, however often this process configures export
    atexit.register(shutdown)
    provider.add_span_processor(processor)
    _provider = provider
    _exporter = exporter
    _tracer = provider.get_tracer("warband")
    link_to_run(os.environ.get(RUN_SPAN_VARIABLE))


def link_to_run(traceparent: str | None) -> None:
    """Link the roots of the traces this process starts from now on to the span
    ``traceparent`` names (a run's), or to none; a malformed one is no link."""
    global _run_links
    _run_links = None
    if not traceparent:
        return
    from opentelemetry.trace import Link, get_current_span

    span_context = get_current_span(_context_from(traceparent)).get_span_context()
    if span_context.is_valid:
        _run_links = (Link(span_context, {"warband.link": "run"}),)


def configured() -> bool:
    """True once :func:`configure` ran (and :func:`shutdown` did not since)."""
    return _tracer is not None


def shutdown() -> None:
    """Export what is still queued, for at most :data:`SHUTDOWN_FLUSH_S`, and stop exporting;
    no-op when not configured.

    The bound keeps a process that stops (a run's end, SIGTERM) from waiting on a collector
    that does not answer: the OTLP exporter retries a batch, and waits on each request, for
    up to 10 s, and a run's processes would outlive the 5 s a signalled run has to end. What
    is not exported by then is dropped, and the SDK logs it."""
    global _provider, _tracer, _run_links, _exporter
    provider, exporter = _provider, _exporter
    _provider, _tracer, _run_links, _exporter = None, None, None, None
    if provider is None:
        return
    # The SDK's force_flush exports in the calling thread and ignores its own time-out while
    # the exporter retries, so the flush runs in a thread of its own that is waited for.
    flush = threading.Thread(target=provider.force_flush, name="otel-flush", daemon=True)
    flush.start()
    flush.join(SHUTDOWN_FLUSH_S)
    if flush.is_alive():
        exporter.shutdown()  # ends a retrying export now; its spans are dropped
        flush.join(SHUTDOWN_FLUSH_S)
    if flush.is_alive():
        # A request still waits on a collector that took it and never answers. Shutting the
        # provider down would wait for it too (the export lock): leave it, and its daemon
        # threads, to the process's exit.
        return
    provider.shutdown()


def actor_telemetry(actor_id: str) -> ActorTelemetry | None:
    """The span bookkeeping of one actor, or None when export is off (the actor's one check)."""
    return ActorTelemetry(_tracer, actor_id) if _tracer is not None else None


def broker_telemetry() -> BrokerTelemetry | None:
    """The routing spans of a broker, or None when export is off (the broker's one check)."""
    return BrokerTelemetry(_tracer) if _tracer is not None else None


class BrokerTelemetry:
    """One span per traced frame the broker routes: ``route <type>``, a sibling of the span
    that handles it (both children of the sender's span), so a trace shows the broker's hop."""

    def __init__(self, tracer: Any) -> None:
        from opentelemetry import trace
        from opentelemetry.trace import Status, StatusCode
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self._tracer = tracer
        self._propagator = TraceContextTextMapPropagator()
        self._current_span = trace.get_current_span
        self._status = Status
        self._error = StatusCode.ERROR

    def route(self, envelope: Envelope, forward: Callable[[], None]) -> None:
        """Run ``forward()`` (the routing of the frame ``envelope`` heads) inside its span."""
        parent = self._propagator.extract({"traceparent": envelope.trace})
        attributes = {
            "messaging.system": "warband",
            "messaging.message.id": envelope.id,
            "warband.sender": envelope.sender,
            "warband.recipient": envelope.recipient,
            "warband.tick": envelope.tick,
        }
        with self._tracer.start_as_current_span(
            f"route {envelope.type}", context=parent, attributes=attributes
        ):
            forward()

    def refused(self, reason: str) -> None:
        """Mark the open ``route`` span ERROR, ``reason`` its description: the frame being
        routed was rejected or found undeliverable. No-op outside :meth:`route` (a frame
        refused before routing has no span)."""
        span = self._current_span()
        if span.is_recording():
            span.set_status(self._status(self._error, reason))


class ActorTelemetry:
    """Starts the spans of the messages one actor handles and picks the ``trace`` it sends."""

    def __init__(self, tracer: Any, actor_id: str) -> None:
        from opentelemetry import context, trace
        from opentelemetry.context import Context
        from opentelemetry.trace import SpanKind, Status, StatusCode
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self._tracer = tracer
        self._actor_id = actor_id
        self._attach = context.attach
        self._detach = context.detach
        self._in_context = trace.set_span_in_context
        self._current_span = trace.get_current_span
        self._empty = Context
        self._consumer = SpanKind.CONSUMER
        self._status = Status
        self._error = StatusCode.ERROR
        self._propagator = TraceContextTextMapPropagator()
        self._handled: dict[str, Any] = {}
        self._conversations: dict[str, Any] = {}
        self._delivering = False
        self._task: asyncio.Task[Any] | None = None

    def outgoing(self, message: Message) -> str | None:
        """The ``traceparent`` ``message`` carries (see the module's rules), or None."""
        span = None
        if message.reply_to is not None:
            span = self._handled.get(message.reply_to)
        if span is None and message.conversation is not None:
            span = self._conversations.get(message.conversation)
        if span is None:
            span = self._current_span()
        span_context = span.get_span_context()
        return _traceparent(span_context) if span_context.is_valid else None

    def deliver(self, message: Message, dispatch: Callable[[Message], None]) -> None:
        """Run ``dispatch(message)`` inside the span of handling ``message``.

        The span is current while the handler runs, in the handler's task too (asyncio copies
        the context), and ends when the handler has returned or its task finished.
        """
        parent = (
            self._propagator.extract({"traceparent": message.trace})
            if message.trace is not None
            else self._empty()
        )
        attributes: dict[str, Any] = {
            "messaging.system": "warband",
            "messaging.message.id": message.id,
            "warband.sender": message.sender,
            "warband.recipient": message.recipient,
            "warband.actor": self._actor_id,
            "warband.tick": message.tick,
        }
        if message.conversation is not None:
            attributes["messaging.message.conversation_id"] = message.conversation
        if message.reply_to is not None:
            attributes["warband.reply_to"] = message.reply_to
        span = self._tracer.start_span(
            type(message).__name__,
            context=parent,
            kind=self._consumer,
            attributes=attributes,
            links=_run_links if message.trace is None else None,
        )
        _remember(self._handled, message.id, span)
        if message.conversation is not None:
            _remember(self._conversations, message.conversation, span)
        token = self._attach(self._in_context(span))
        self._delivering, self._task = True, None
        try:
            dispatch(message)
        finally:
            self._detach(token)
            self._delivering = False
        task, self._task = self._task, None
        if task is None:
            span.end()
        else:
            task.add_done_callback(lambda _: span.end())

    def task_started(self, task: asyncio.Task[Any]) -> None:
        """Note a handler task started by the message being delivered: its span ends with it."""
        if self._delivering:
            self._task = task

    def failed(self, message: Message, error: BaseException) -> None:
        """The handler of ``message`` raised ``error``: its span gets status ERROR and the
        exception event. Called before the span ends (the handler task's own done callback
        ends it, and the actor catches the error inside the task); no-op for a message that
        has no span (control messages) or whose span has ended."""
        span = self._handled.get(message.id)
        if span is not None and span.is_recording():
            _mark_failed(span, error, self._status(self._error, _describe(error)))

    def waiting_span(self) -> Any:
        """The span a ``request(...)`` made now waits in (the running handler's), or None."""
        span = self._current_span()
        return span if span.is_recording() else None

    def timed_out(self, span: Any, request: Message, why: str) -> None:
        """``request``, made from ``span``, got no reply: :data:`REQUEST_TIMEOUT_EVENT` on it."""
        if not span.is_recording():
            return
        attributes: dict[str, Any] = {
            "messaging.message.id": request.id,
            "warband.message.type": type(request).__name__,
            "warband.recipient": request.recipient,
            "warband.reason": why,
        }
        if request.conversation is not None:
            attributes["messaging.message.conversation_id"] = request.conversation
        span.add_event(REQUEST_TIMEOUT_EVENT, attributes)


def run_span(
    name: str, attributes: Mapping[str, Any], *, parent: str | None = None
) -> RunSpan | None:
    """Start the span of a run (or a sweep), or None when export is off.

    ``parent`` is a W3C traceparent; None reads it from the :data:`TRACEPARENT` variable (an
    unset or malformed one gives a new trace). The span is never made current: see the
    module's docstring for why a run's span parents nothing inside the run.
    """
    if _tracer is None:
        return None
    return RunSpan(
        _tracer, name, attributes, os.environ.get(TRACEPARENT) if parent is None else parent
    )


class RunSpan:
    """A span a launching process opens around work it hands to others (a run, a sweep)."""

    def __init__(
        self, tracer: Any, name: str, attributes: Mapping[str, Any], parent: str | None
    ) -> None:
        from opentelemetry.trace import SpanKind, Status, StatusCode

        self._tracer = tracer
        self._status = Status
        self._error = StatusCode.ERROR
        self._span = tracer.start_span(
            name, context=_context_from(parent), kind=SpanKind.INTERNAL, attributes=dict(attributes)
        )

    @property
    def traceparent(self) -> str:
        """This span as a W3C traceparent, for a child process's :data:`TRACEPARENT`."""
        return _traceparent(self._span.get_span_context())

    @contextlib.contextmanager
    def linked(self) -> Iterator[None]:
        """While the block runs, the roots of new traces link to this span: this process's
        (:func:`link_to_run`), and the processes it starts (:data:`RUN_SPAN_VARIABLE`)."""
        before = os.environ.get(RUN_SPAN_VARIABLE)
        os.environ[RUN_SPAN_VARIABLE] = self.traceparent
        link_to_run(self.traceparent)
        try:
            yield
        finally:
            if before is None:
                os.environ.pop(RUN_SPAN_VARIABLE, None)
            else:
                os.environ[RUN_SPAN_VARIABLE] = before
            link_to_run(before)

    def child(self, name: str, attributes: Mapping[str, Any]) -> RunSpan:
        """A span under this one, for a part of the work (one seed of a sweep)."""
        return RunSpan(self._tracer, name, attributes, self.traceparent)

    def end(
        self,
        attributes: Mapping[str, Any],
        *,
        failure: str | None = None,
        error: BaseException | None = None,
    ) -> None:
        """Set ``attributes`` and end; status ERROR when ``failure`` (the description) or
        ``error`` (recorded as the exception event) is given."""
        self._span.set_attributes(dict(attributes))
        if error is not None:
            _mark_failed(self._span, error, self._status(self._error, failure or _describe(error)))
        elif failure is not None:
            self._span.set_status(self._status(self._error, failure))
        self._span.end()


def _traceparent(span_context: Any) -> str:
    """``span_context`` as the value of a W3C ``traceparent`` header."""
    return (
        f"00-{span_context.trace_id:032x}-{span_context.span_id:016x}-"
        f"{int(span_context.trace_flags):02x}"
    )


def _context_from(traceparent: str | None) -> Any:
    """The OpenTelemetry context whose parent ``traceparent`` names; an empty one (a new
    trace) for None or a malformed value."""
    from opentelemetry.context import Context
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    if not traceparent:
        return Context()
    return TraceContextTextMapPropagator().extract({"traceparent": traceparent})


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def _mark_failed(span: Any, error: BaseException, status: Any) -> None:
    span.record_exception(error)
    span.set_status(status)


def _remember(spans: dict[str, Any], key: str, span: Any) -> None:
    spans.pop(key, None)
    spans[key] = span
    if len(spans) > REMEMBERED:
        del spans[next(iter(spans))]
