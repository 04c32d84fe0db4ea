"""Structured logs and message tracing: one JSON-lines file per process under ``--log DIR``.

Every line is one event with ``timestamp`` (ISO 8601, UTC, microseconds), ``level``, ``pid``,
``event`` and key-values. Message tracing writes ``msg.send`` / ``msg.recv`` events with the
keys ``msg_id``, ``msg_type``, ``sender``, ``recipient``, ``conversation``, ``tick`` (a public
contract: ``warband trace`` and users' tools read them). A ``msg.send`` of a reply also has
``reply_to``, the id of the message it answers (an Order's CompletionReport, an Act's result):
``warband view`` links the two by it.

The two trace calls are the hot path of every message, so they skip structlog's processor chain
and encode straight to a buffered file with msgspec's JSON encoder, a block at a time. Events
logged at every tick (:func:`log_every_tick`: an agent's ``agent.plan``, the world's
``world.snapshot``) skip the chain too when they are written; every other event goes through
structlog. Without a log directory, warnings and errors go to stderr as readable
key=value lines and tracing is off, unless the events go to a live viewer
(:mod:`~warband.messaging.live_feed`): then the same blocks of lines are pushed there.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import msgspec
import structlog

from .live_feed import DROPPED_EVENT, FLUSH_EVERY, LivePublisher

TRACE_KEYS = (
    "event",
    "msg_id",
    "msg_type",
    "sender",
    "recipient",
    "conversation",
    "tick",
    "pid",
    "timestamp",
)
"""The keys of every ``msg.send`` / ``msg.recv`` event: a contract ``warband trace`` and users'
tools read (each event also has ``level``)."""

_FLUSH_EVERY = 256
_FLUSHED_AT_ONCE = frozenset({"broker.register"})
"""Events written out as they happen, like warnings: who joined a broker. A long-lived broker
(the multi-host recipe) logs a few pings a second; its buffer took some 40 s to fill."""
_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}


class _TraceEvent(msgspec.Struct, omit_defaults=True):
    """One ``msg.send`` / ``msg.recv`` line; the field order is the key order in the file."""

    timestamp: str
    level: str
    pid: int
    event: str
    msg_id: str
    msg_type: str
    sender: str
    recipient: str
    conversation: str | None
    tick: int | None
    reply_to: str | None = None
    """Left out of the line when the message answers none."""


_TraceRecord = tuple[int, str, str, str, str, str, str | None, int | None, str | None]
"""A trace event as captured: (time_ns, event, msg_id, msg_type, sender, recipient,
conversation, tick, reply_to); formatted and encoded only when the sink writes out."""


class _JsonLinesSink:
    """A buffered, thread-safe JSON-lines file; written out every few hundred events and at exit.

    Trace events are kept as tuples and turned into JSON a block at a time: formatting the
    timestamp and encoding each event as it happens cost more per message, on the hot path of
    every send and receive, than the rest of the trace together.
    """

    def __init__(self, path: Path | None, pid: int, live: LivePublisher | None = None) -> None:
        self.path = path
        self.pid = pid
        self._file: IO[bytes] | None = open(path, "ab") if path is not None else None  # noqa: SIM115
        self._live = live
        self._encoder = msgspec.json.Encoder()
        self._lock = threading.Lock()
        # Trace records, and other events already encoded (their values may be mutable).
        self._pending: list[_TraceRecord | msgspec.Raw] = []
        self._closed = threading.Event()
        if live is not None:
            # A live page should move even when this process logs a few events a tick.
            threading.Thread(target=self._flush_often, name="live-feed", daemon=True).start()

    def _flush_often(self) -> None:
        while not self._closed.wait(FLUSH_EVERY):
            self.flush()

    def trace(self, record: _TraceRecord) -> None:
        with self._lock:
            pending = self._pending
            pending.append(record)
            if len(pending) >= _FLUSH_EVERY:
                self._write_out()

    def write(self, event: dict[str, Any], *, flush: bool = False) -> None:
        line = msgspec.Raw(self._encoder.encode(event))
        with self._lock:
            self._pending.append(line)
            if flush or len(self._pending) >= _FLUSH_EVERY:
                self._write_out()

    def flush(self) -> None:
        with self._lock:
            self._write_out()

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            self._write_out()
            live, self._live = self._live, None
            if live is not None:
                live.close()
                if live.dropped_blocks and self._file is not None and not self._file.closed:
                    line = {
                        "timestamp": _now(),
                        "level": "warning",
                        "pid": self.pid,
                        "event": DROPPED_EVENT,
                        "endpoint": live.endpoint,
                        "blocks": live.dropped_blocks,
                        "events": live.dropped_events,
                    }
                    self._file.write(self._encoder.encode(line) + b"\n")
            if self._file is not None:
                self._file.close()

    def _write_out(self) -> None:
        pending, self._pending = self._pending, []
        if not pending or self._closed_for_good():
            return
        block = self._encoder.encode_lines(_lines(pending, self.pid))
        if self._file is not None:
            self._file.write(block)  # a buffered file: it writes all of it, even in parts
            self._file.flush()
        if self._live is not None:
            self._live.publish(block, len(pending))

    def _closed_for_good(self) -> bool:
        return self._live is None and (self._file is None or self._file.closed)


def _lines(pending: list[_TraceRecord | msgspec.Raw], pid: int) -> list[_TraceEvent | msgspec.Raw]:
    """What a block holds, in order, for ``encode_lines``: trace records become events."""
    lines: list[_TraceEvent | msgspec.Raw] = []
    second, prefix = -1, ""
    for item in pending:
        if isinstance(item, msgspec.Raw):
            lines.append(item)
            continue
        micros = item[0] // 1000
        if micros // 1_000_000 != second:
            second = micros // 1_000_000
            prefix = _second_prefix(second)
        # _iso_utc inlined: the call alone costs more than the rest of a record.
        stamp = prefix + str(micros % 1_000_000).zfill(6) + "+00:00"
        # item is (time_ns, event, msg_id, ...): the rest in _TraceEvent's field order
        lines.append(_TraceEvent(stamp, "info", pid, *item[1:]))
    return lines


class _State:
    sink: _JsonLinesSink | None = None
    tracing: bool = False
    pid: int = os.getpid()
    info: bool = True
    """Whether info events are written (the level is info or debug)."""


_state = _State()


_stamp_prefix: tuple[int, str] = (-1, "")


def _now() -> str:
    """The current UTC time as ISO 8601 with microseconds (``2026-11-23T09:12:17.123456+00:00``)."""
    return _iso_utc(time.time_ns())


def _iso_utc(time_ns: int) -> str:
    # zfill, not a `:06d` format: it takes half the time.
    micros = time_ns // 1000
    return _second_prefix(micros // 1_000_000) + str(micros % 1_000_000).zfill(6) + "+00:00"


def _second_prefix(second: int) -> str:
    """A Unix second as the start of a timestamp, up to its dot (``2026-11-23T09:12:17.``);
    formatted once per second: a datetime per event was slow."""
    global _stamp_prefix
    if _stamp_prefix[0] != second:
        prefix = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S.")
        _stamp_prefix = (second, prefix)
    return _stamp_prefix[1]


def _to_sink(logger: Any, method_name: str, event_dict: dict[str, Any]) -> str:
    """structlog's last processor: write the event to the process's file."""
    sink = _state.sink
    if sink is not None:
        event = {"timestamp": _now(), "level": method_name, "pid": _state.pid, **event_dict}
        exc = event.pop("exc_info", None)
        if isinstance(exc, BaseException):
            event["exception"] = repr(exc)
        at_once = method_name in ("warning", "error", "critical")
        sink.write(_jsonable(event), flush=at_once or event_dict.get("event") in _FLUSHED_AT_ONCE)
    raise structlog.DropEvent


_JSON_VALUES = (str, int, float, bool, type(None), list, dict)
"""The values an event keeps as they are; any other is written as its repr. A tuple, not the
union ``str | int | ...``: that one would be built anew for every value of every event."""


def _jsonable(event: dict[str, Any]) -> dict[str, Any]:
    for key, value in event.items():
        if not isinstance(value, _JSON_VALUES):
            event[key] = repr(value)
    return event


def configure_logging(
    log_dir: Path | None,
    process_name: str,
    *,
    level: str = "info",
    console: bool = False,
    trace_messages: bool = True,
    live: str | None = None,
) -> None:
    """Set up logging for this process; safe to call again (the previous file is closed).

    With ``log_dir``: every event at ``level`` or above goes to
    ``log_dir/<process_name>.<pid>.jsonl`` and, if ``trace_messages``, every message sent and
    received too. Warnings and errors also go to stderr when ``console`` is true or no file is
    set. With ``live`` (a ``warband view --live`` endpoint), the same events, messages
    included, are also pushed to that viewer (:mod:`~warband.messaging.live_feed`). Without
    either, tracing is off.
    """
    if level not in _LEVELS:
        from ..exceptions import ConfigurationError

        raise ConfigurationError(f"unknown log level {level!r}; use one of {', '.join(_LEVELS)}")
    if _state.sink is not None:
        _state.sink.close()
    _state.pid = os.getpid()
    _state.sink = None
    path = None
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        path = log_dir / f"{process_name}.{_state.pid}.jsonl"
    if path is not None or live is not None:
        publisher = LivePublisher(live, _state.pid) if live is not None else None
        _state.sink = _JsonLinesSink(path, _state.pid, publisher)
    _state.tracing = _state.sink is not None and trace_messages
    _state.info = _LEVELS[level] <= _LEVELS["info"]
    processors: list[Any] = [structlog.contextvars.merge_contextvars]
    if path is None or console:
        processors += [_console_tee(_LEVELS["warning"])]
    processors.append(_to_sink)
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )


_VARYING_FIELDS = frozenset({"msg_id", "tick", "timestamp", "pid", "seq"})
"""Event fields that differ between repeats of one event (see ``_console_tee``)."""


def _console_tee(minimum: int) -> Any:
    """Warnings and errors on stderr, but an event that repeats (the same event with the same
    fields but for its message id and tick: every Percept to a dead agent is undeliverable)
    only its 1st, 10th, 100th ... time, with ``repeated=N``: the console stays readable, the
    log file has them all and the run's summary counts them."""
    renderer = structlog.dev.ConsoleRenderer(colors=False)
    seen: dict[tuple[tuple[str, str], ...], int] = {}

    def tee(logger: Any, method_name: str, event_dict: dict[str, Any]) -> dict[str, Any]:
        if _LEVELS.get(method_name, 0) >= minimum:
            key = tuple(
                sorted((k, str(v)) for k, v in event_dict.items() if k not in _VARYING_FIELDS)
            )
            count = seen[key] = seen.get(key, 0) + 1
            if len(seen) > 10_000:
                seen.clear()  # bounded: a long run's peers come and go
            if logged_at(count):
                shown = {"level": method_name, **event_dict}
                if count > 1:
                    shown["repeated"] = count
                print(renderer(logger, method_name, shown), file=sys.stderr, flush=True)
        return event_dict

    return tee


def logged_at(count: int) -> bool:
    """True at the 1st, 10th, 100th ... of a repeated event: shown then, so that something
    that repeats without end does not fill the console (or a log)."""
    while count % 10 == 0:
        count //= 10
    return count == 1


def flush_logging() -> None:
    """Write out buffered events (also done at exit and on every warning or error)."""
    if _state.sink is not None:
        _state.sink.flush()


def tracing_enabled() -> bool:
    """True when ``msg.send`` / ``msg.recv`` events are being written."""
    return _state.tracing


def logging_to_files() -> bool:
    """True when this process writes its events to a ``--log DIR`` file or a live viewer."""
    return _state.sink is not None


def get_logger(**initial_context: Any) -> Any:
    """A structlog logger with ``initial_context`` bound (e.g. ``agent="bot-3"``).

    In a process that never configured logging (a script or test calling
    :func:`warband.testing.run_actors`), events go to stderr, never stdout: structlog's own
    default prints to stdout, where they would mix with what the script prints.
    """
    if not structlog.is_configured():
        structlog.configure(logger_factory=_stderr_logger)
    return structlog.get_logger().bind(**initial_context)


def _stderr_logger(*args: Any) -> structlog.PrintLogger:
    # sys.stderr looked up for each logger, not once: a test may have replaced it since.
    return structlog.PrintLogger(sys.stderr)


def log_every_tick(logger: Any, event: str, **fields: Any) -> None:
    """``logger.info(event, **fields)`` for an event logged at every tick (an agent's
    ``agent.plan``): when this process writes events, the same line is written straight to its
    file and live feed, without structlog's processor chain (a third of such an event's cost);
    otherwise the call goes to structlog as any other."""
    sink = _state.sink
    if sink is None or not _state.info:
        logger.info(event, **fields)
        return
    line = {
        "timestamp": _now(),
        "level": "info",
        "pid": _state.pid,
        **structlog.get_context(logger),
        **fields,
        "event": event,
    }
    for key, value in structlog.contextvars.get_contextvars().items():
        line.setdefault(key, value)  # as merge_contextvars does: bound values come first
    sink.write(_jsonable(line))


def trace_send(
    msg_id: str,
    msg_type: str,
    sender: str,
    recipient: str,
    conversation: str | None,
    tick: int | None,
    reply_to: str | None = None,
) -> None:
    """Record one sent message (no-op unless tracing is on); ``reply_to`` when it answers one."""
    # Both trace calls hand the sink their record themselves: one call level less per message.
    sink = _state.sink
    if _state.tracing and sink is not None:
        now = time.time_ns()
        sink.trace(
            (now, "msg.send", msg_id, msg_type, sender, recipient, conversation, tick, reply_to)
        )


def trace_recv(
    msg_id: str,
    msg_type: str,
    sender: str,
    recipient: str,
    conversation: str | None,
    tick: int | None,
) -> None:
    """Record one received message (no-op unless tracing is on)."""
    sink = _state.sink
    if _state.tracing and sink is not None:
        now = time.time_ns()
        sink.trace((now, "msg.recv", msg_id, msg_type, sender, recipient, conversation, tick, None))


def _close_at_exit() -> None:
    if _state.sink is not None:
        _state.sink.close()


atexit.register(_close_at_exit)
