"""Logging to JSON-lines files: one per process, the trace keys, flushing, reconfiguring."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from warband.exceptions import ConfigurationError
from warband.messaging.tracing import (
    configure_logging,
    flush_logging,
    get_logger,
    log_every_tick,
    trace_recv,
    trace_send,
    tracing_enabled,
)

from ..conftest import TRACE_CONTRACT_KEYS


@pytest.fixture(autouse=True)
def _reset_logging() -> Iterator[None]:
    yield
    configure_logging(None, "tests")


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_trace_events_carry_exactly_the_contract_keys(tmp_path: Path) -> None:
    configure_logging(tmp_path, "bot-3")
    trace_send("bot-3:1", "Order", "bot-3", "bot-4", "bot-3:1", 7)
    trace_recv("bot-4:2", "TalkReply", "bot-4", "bot-3", None, 8)
    flush_logging()
    log_file = tmp_path / f"bot-3.{os.getpid()}.jsonl"
    sent, received = _lines(log_file)
    assert TRACE_CONTRACT_KEYS | {"level"} == set(sent) == set(received)
    assert ("msg.send", "Order", 7, "bot-3:1") == (
        sent["event"],
        sent["msg_type"],
        sent["tick"],
        sent["conversation"],
    )
    assert ("msg.recv", None, os.getpid()) == (
        received["event"],
        received["conversation"],
        received["pid"],
    )


def test_a_sent_reply_names_the_message_it_answers_and_others_leave_the_key_out(
    tmp_path: Path,
) -> None:
    configure_logging(tmp_path, "bot-3")
    trace_send("bot-3:2", "CompletionReport", "bot-3", "squad-1", None, 9, reply_to="squad-1:4")
    trace_send("bot-3:3", "StatusReport", "bot-3", "squad-1", None, 9)
    flush_logging()
    reply, other = _lines(tmp_path / f"bot-3.{os.getpid()}.jsonl")
    assert "squad-1:4" == reply["reply_to"]
    assert "reply_to" not in other


def test_other_events_share_the_file_with_their_bound_context(tmp_path: Path) -> None:
    configure_logging(tmp_path, "main")
    get_logger(agent="squad-a").info("plan.chosen", goal="Defend", cost=3)
    flush_logging()
    (event,) = _lines(tmp_path / f"main.{os.getpid()}.jsonl")
    assert {"event": "plan.chosen", "agent": "squad-a", "goal": "Defend", "cost": 3}.items() <= (
        event.items()
    )
    assert str(event["timestamp"]).endswith("+00:00")


def test_a_value_json_has_no_type_for_is_written_as_its_repr(tmp_path: Path) -> None:
    configure_logging(tmp_path, "main")
    where = Path("maps/test.map")
    get_logger().info("odd.values", path=where, pair=(1, 2), ok=[1, "a"], table={"k": None})
    flush_logging()
    (event,) = _lines(tmp_path / f"main.{os.getpid()}.jsonl")
    assert (repr(where), repr((1, 2)), [1, "a"], {"k": None}) == (
        event["path"],
        event["pair"],
        event["ok"],
        event["table"],
    )


def test_without_a_log_directory_tracing_is_off_and_writes_nothing(tmp_path: Path) -> None:
    configure_logging(None, "main")
    trace_send("a:1", "Order", "a", "b", None, 1)
    assert not tracing_enabled()
    assert [] == list(tmp_path.iterdir())


def test_tracing_can_be_switched_off_while_other_events_are_kept(tmp_path: Path) -> None:
    configure_logging(tmp_path, "main", trace_messages=False)
    trace_send("a:1", "Order", "a", "b", None, 1)
    get_logger().warning("tick.timeout", tick=3)
    flush_logging()
    (event,) = _lines(tmp_path / f"main.{os.getpid()}.jsonl")
    assert "tick.timeout" == event["event"]


def test_reconfiguring_moves_logging_to_the_new_directory(tmp_path: Path) -> None:
    configure_logging(tmp_path / "one", "main")
    configure_logging(tmp_path / "two", "main")
    trace_send("a:1", "Order", "a", "b", None, 1)
    flush_logging()
    (first,) = (tmp_path / "one").glob("*.jsonl")
    (second,) = (tmp_path / "two").glob("*.jsonl")
    assert [] == first.read_text().splitlines()
    assert 1 == len(second.read_text().splitlines())


def test_an_unknown_level_is_refused_with_the_valid_ones() -> None:
    with pytest.raises(ConfigurationError, match="unknown log level 'loud'; use one of debug"):
        configure_logging(None, "main", level="loud")


def test_events_keep_their_order_and_their_values_as_they_were_when_logged(
    tmp_path: Path,
) -> None:
    configure_logging(tmp_path, "main")
    orders = ["hold"]
    trace_send("a:1", "Order", "a", "b", None, 1)
    get_logger().info("orders.given", orders=orders)
    orders.append("charge")  # after logging: must not change the recorded event
    trace_recv("b:1", "CompletionReport", "b", "a", None, 2)
    flush_logging()
    events = _lines(tmp_path / f"main.{os.getpid()}.jsonl")
    assert ["msg.send", "orders.given", "msg.recv"] == [e["event"] for e in events]
    assert ["hold"] == events[1]["orders"]
    stamps = [str(e["timestamp"]) for e in events]
    assert stamps == sorted(stamps)
    assert all(len(s) == len("2026-11-23T09:12:17.123456+00:00") for s in stamps)


def test_timestamps_are_iso_8601_utc_with_microseconds() -> None:
    from datetime import UTC, datetime

    from warband.messaging.tracing import _iso_utc

    moment = datetime(2026, 11, 23, 9, 12, 17, 123456, tzinfo=UTC)
    nanoseconds = int(moment.timestamp()) * 1_000_000_000 + 123_456_789
    assert moment.isoformat(timespec="microseconds") == _iso_utc(nanoseconds)
    assert "2026-11-23T09:12:18.000000+00:00" == _iso_utc(nanoseconds - 123_456_789 + 10**9)


def test_the_trace_records_of_a_block_are_stamped_to_the_microsecond_across_seconds() -> None:
    from datetime import UTC, datetime, timedelta

    import msgspec

    from warband.messaging.tracing import _lines as block_lines

    start = datetime(2026, 11, 23, 9, 12, 59, 999_998, tzinfo=UTC)
    start_ns = int(start.timestamp()) * 1_000_000_000 + 999_998_000
    after_ns = [0, 1_000, 2_999, 3_000, 1_000_000_000 + 7_000]  # the block crosses two seconds
    records: list[object] = [
        (start_ns + ns, "msg.send", f"a:{i}", "Order", "a", "b", None, i, None)
        for i, ns in enumerate(after_ns)
    ]
    other = msgspec.Raw(b'{"event":"agent.plan"}')
    records.insert(2, other)  # an event already encoded keeps its place

    lines = block_lines(records, pid=7)  # type: ignore[arg-type]

    assert other is lines[2]
    stamps = [line.timestamp for line in lines if not isinstance(line, msgspec.Raw)]
    expected = [start + timedelta(microseconds=ns // 1000) for ns in after_ns]
    assert [moment.isoformat(timespec="microseconds") for moment in expected] == stamps


def test_an_event_logged_every_tick_is_written_as_structlog_would_write_it(
    tmp_path: Path,
) -> None:
    configure_logging(tmp_path, "main")
    logger = get_logger(agent="blue-1")
    fields = {"tick": 3, "plan": ["(!go a b)"], "where": Path("a")}
    structlog.contextvars.bind_contextvars(run="r-1", agent="not this one")
    try:
        logger.info("agent.plan", **fields)
        log_every_tick(logger, "agent.plan", **fields)
    finally:
        structlog.contextvars.clear_contextvars()
    flush_logging()

    by_structlog, fast = _lines(tmp_path / f"main.{os.getpid()}.jsonl")
    assert list(by_structlog) == list(fast)  # the same keys in the same order
    assert {**by_structlog, "timestamp": None} == {**fast, "timestamp": None}
    assert ("blue-1", "r-1", repr(Path("a"))) == (fast["agent"], fast["run"], fast["where"])


def test_an_event_logged_every_tick_goes_to_structlog_when_no_file_or_viewer_takes_it() -> None:
    configure_logging(None, "main")
    with structlog.testing.capture_logs() as logs:
        log_every_tick(get_logger(agent="blue-1"), "agent.plan", tick=3)
    assert [{"agent": "blue-1", "tick": 3, "event": "agent.plan", "log_level": "info"}] == logs


def test_an_event_logged_every_tick_is_left_out_below_the_level(tmp_path: Path) -> None:
    configure_logging(tmp_path, "main", level="warning")
    log_every_tick(get_logger(agent="blue-1"), "agent.plan", tick=3)
    get_logger().warning("tick.timeout", tick=3)
    flush_logging()
    assert ["tick.timeout"] == [e["event"] for e in _lines(tmp_path / f"main.{os.getpid()}.jsonl")]
