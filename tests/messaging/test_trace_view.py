"""Merging, filtering, pairing and rendering the trace logs of several processes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from warband.exceptions import ConfigurationError
from warband.messaging import Actor
from warband.messaging.trace_view import (
    filter_trace,
    load_trace,
    render_json,
    render_mermaid,
    render_text,
    trace_command,
)
from warband.messaging.tracing import configure_logging, flush_logging
from warband.testing import run_actors

from ..conftest import TRACE_CONTRACT_KEYS


def _event(
    kind: str,
    msg_id: str,
    sender: str,
    recipient: str,
    tick: int,
    ts: str,
    msg_type: str = "Order",
    conversation: str | None = None,
) -> dict[str, Any]:
    return {
        "timestamp": f"2026-01-01T00:00:{ts}+00:00",
        "level": "info",
        "pid": {"commander": 10, "bot-1": 11, "bot-2": 12}[
            sender if kind == "msg.send" else recipient
        ],
        "event": kind,
        "msg_id": msg_id,
        "msg_type": msg_type,
        "sender": sender,
        "recipient": recipient,
        "conversation": conversation,
        "tick": tick,
    }


def _write(path: Path, events: list[dict[str, Any]], extra: str = "") -> None:
    path.write_text("".join(json.dumps(e) + "\n" for e in events) + extra)


@pytest.fixture
def run_logs(tmp_path: Path) -> Path:
    _write(
        tmp_path / "commander.10.jsonl",
        [
            _event(
                "msg.send",
                "commander:1",
                "commander",
                "bot-1",
                1,
                "01.000000",
                conversation="commander:1",
            ),
            _event("msg.send", "commander:2", "commander", "bot-2", 1, "01.000100"),
            _event(
                "msg.recv",
                "bot-1:1",
                "bot-1",
                "commander",
                2,
                "02.000300",
                "CompletionReport",
                "commander:1",
            ),
        ],
    )
    _write(
        tmp_path / "bot-1.11.jsonl",
        [
            _event(
                "msg.recv",
                "commander:1",
                "commander",
                "bot-1",
                1,
                "01.000200",
                conversation="commander:1",
            ),
            _event(
                "msg.send",
                "bot-1:1",
                "bot-1",
                "commander",
                2,
                "02.000000",
                "CompletionReport",
                "commander:1",
            ),
            {"timestamp": "2026-01-01T00:00:03+00:00", "event": "actor.stop", "agent": "bot-1"},
        ],
        extra="{this is not json\n",
    )
    # bot-2 logs (it started) but never received commander:2.
    _write(tmp_path / "bot-2.12.jsonl", [{"event": "actor.start", "agent": "bot-2"}])
    return tmp_path


def test_merged_flow_is_ordered_by_tick_then_time_across_files(run_logs: Path) -> None:
    trace = load_trace(run_logs)
    assert ["commander:1", "commander:2", "commander:1", "bot-1:1", "bot-1:1"] == [
        e["msg_id"] for e in trace.messages
    ]
    assert ["bot-1.11.jsonl:4: not a JSON object"] == trace.problems


def test_sends_are_paired_with_receives_by_message_id(run_logs: Path) -> None:
    trace = load_trace(run_logs)
    assert ["commander:2"] == [e["msg_id"] for e in trace.unmatched_sends()]
    assert [] == trace.unmatched_recvs()


def test_filters_by_agent_conversation_and_type(run_logs: Path) -> None:
    trace = load_trace(run_logs)
    assert {"commander:2"} == {e["msg_id"] for e in filter_trace(trace, agent="bot-2").messages}
    by_conversation = filter_trace(trace, conversation="commander:1").sends()
    assert ["commander:1", "bot-1:1"] == [e["msg_id"] for e in by_conversation]
    by_type = filter_trace(trace, msg_types=["CompletionReport"]).sends()
    assert ["bot-1:1"] == [e["msg_id"] for e in by_type]


def test_text_timeline_marks_undelivered_messages_and_summarises(run_logs: Path) -> None:
    text = render_text(load_trace(run_logs))
    assert "commander -> bot-2  Order  commander:2  (never received)" in text
    assert "3 messages between 3 agents" in text
    assert "skipped as malformed: 1 (bot-1.11.jsonl:4: not a JSON object)" in text


def test_mermaid_diagram_has_one_arrow_per_message(run_logs: Path) -> None:
    lines = render_mermaid(load_trace(run_logs)).splitlines()
    assert "sequenceDiagram" == lines[0]
    assert 3 == sum("participant" in line for line in lines)
    arrows = [line for line in lines if "->>" in line or "-x" in line]
    assert 3 == len(arrows)
    assert any("-xp2_bot_2: Order" in line for line in arrows)


def test_json_rendering_keeps_the_contract_keys_and_delivery(run_logs: Path) -> None:
    rendered = json.loads(render_json(load_trace(run_logs)))
    first = rendered["events"][0]
    assert TRACE_CONTRACT_KEYS | {"delivered", "logged_by", "about"} == set(first)
    assert [True, False, True] == [e["delivered"] for e in rendered["events"]]
    assert ["both", "sender", "both"] == [e["logged_by"] for e in rendered["events"]]
    assert 1 == rendered["summary"]["unmatched_sends"]


def test_a_missing_or_empty_directory_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist; pass the --log DIR"):
        trace_command(tmp_path / "nope")
    with pytest.raises(ConfigurationError, match=r"no \*\.jsonl log files"):
        trace_command(tmp_path)


def test_broker_heartbeats_are_left_out_unless_asked_for_by_type(tmp_path: Path) -> None:
    ping = _event("msg.send", "bot-1:c2", "bot-1", "broker", 1, "01", msg_type="_Ping")
    order = _event("msg.send", "commander:1", "commander", "bot-1", 1, "02")
    _write(tmp_path / "bot-1.1.jsonl", [ping, order])
    trace = load_trace(tmp_path)
    assert ["commander:1"] == [e["msg_id"] for e in filter_trace(trace).messages]
    assert ["bot-1:c2"] == [e["msg_id"] for e in filter_trace(trace, msg_types=["_Ping"]).messages]


def test_a_silent_participants_conversation_is_drawn_from_both_sides_in_every_format(
    tmp_path: Path,
) -> None:
    # bot-2 is a client in another language: it logs nothing; bot-1 logs what it sent and
    # what it was sent. Nothing here was lost, and the trace must not say so.
    kinds = [("msg.send", "bot-1", "bot-2", "RequestTalk"), ("msg.recv", "bot-2", "bot-1",
             "TalkReply"), ("msg.send", "bot-1", "bot-2", "RequestCooperation"), ("msg.recv",
             "bot-2", "bot-1", "CooperationReply"), ("msg.recv", "bot-2", "bot-1",
             "CooperationResult")]  # fmt: skip
    events = [
        _event(kind, f"{sender}:{n}", sender, to, n, f"0{n}", msg_type, "bot-1:c")
        for n, (kind, sender, to, msg_type) in enumerate(kinds, 1)
    ]
    _write(tmp_path / "bot-1.11.jsonl", events)
    trace = filter_trace(load_trace(tmp_path), agent="bot-2")
    text = render_text(trace)
    for _, sender, to, msg_type in kinds:
        assert f"{sender} -> {to}  {msg_type} [bot-1:c]" in text
    assert 2 == text.count("(sender's log only)") and 3 == text.count("(receiver's log only)")
    assert "never received: 0; received without a logged send: 0" in text
    assert "known from one side only: 5 (bot-2 logged nothing)" in text
    mermaid = render_mermaid(trace)
    assert "p0_bot_1-->>p1_bot_2: RequestTalk (bot-1:c) [sender's log only]" in mermaid
    assert "p1_bot_2-->>p0_bot_1: CooperationResult (bot-1:c) [receiver's log only]" in mermaid
    assert "-x" not in mermaid
    rendered = json.loads(render_json(trace))
    assert ["sender", "receiver"] * 2 + ["receiver"] == [e["logged_by"] for e in rendered["events"]]
    assert {"messages": 5, "unmatched_sends": 0, "unmatched_recvs": 0, "one_sided": 5,
            "silent": ["bot-2"]}.items() <= rendered["summary"].items()  # fmt: skip


def test_an_agent_sees_the_ticks_it_received_from_its_group(tmp_path: Path) -> None:
    tick = _event("msg.send", "commander:1", "commander", "#ticks", 1, "01", msg_type="Tick")
    got = _event("msg.recv", "commander:1", "commander", "bot-1", 1, "02", msg_type="Tick")
    _write(tmp_path / "commander.10.jsonl", [tick])
    _write(tmp_path / "bot-1.11.jsonl", [got])
    text = render_text(filter_trace(load_trace(tmp_path), agent="bot-1"))
    assert "commander -> #ticks  Tick  commander:1" in text
    assert "1 messages" in text
    assert "0 messages" in render_text(filter_trace(load_trace(tmp_path), agent="bot-2"))


def test_an_agent_that_is_in_no_log_is_refused_naming_those_that_are(run_logs: Path) -> None:
    with pytest.raises(
        ConfigurationError,
        match=r"no agent 'bot-3' in the logs of .*; did you mean 'bot-2'\? agents there: "
        r"bot-1, bot-2, commander$",
    ):
        trace_command(run_logs, agent="bot-3")
    assert "0 messages" in trace_command(run_logs, agent="bot-2", msg_types=["Tick"])


def test_a_conversation_that_is_in_no_log_is_refused_naming_the_closest(run_logs: Path) -> None:
    with pytest.raises(
        ConfigurationError,
        match=r"no message of conversation 'commander:2' in the logs of .*; did you mean "
        r"'commander:1'\? 1 conversations there",
    ):
        trace_command(run_logs, conversation="commander:2")


def test_the_mermaid_diagram_ends_with_the_summary_and_the_skipped_lines(run_logs: Path) -> None:
    lines = render_mermaid(load_trace(run_logs)).splitlines()
    assert "%% 3 messages between 3 agents in 2 processes (3 log files)" in lines
    assert "%% never received: 1; received without a logged send: 0" in lines
    assert "%% skipped as malformed: 1 (bot-1.11.jsonl:4: not a JSON object)" in lines


def test_a_directory_named_like_a_log_file_is_skipped_with_a_warning(run_logs: Path) -> None:
    (run_logs / "x.jsonl").mkdir()
    text = trace_command(run_logs)
    assert "3 messages between 3 agents" in text
    assert (
        "skipped as malformed: 2 (x.jsonl: not a file; bot-1.11.jsonl:4: not a JSON object)" in text
    )


def test_an_order_and_its_completion_report_show_what_they_said_in_every_format(
    tmp_path: Path,
) -> None:
    order = _event("msg.send", "commander:1", "commander", "bot-1", 1, "01")
    heard = _event("msg.recv", "commander:1", "commander", "bot-1", 1, "02")
    done = {
        **_event("msg.send", "bot-1:1", "bot-1", "commander", 2, "03"),
        "reply_to": "commander:1",
    }
    done["msg_type"] = "CompletionReport"
    received = {
        "event": "order.received",
        "agent": "bot-1",
        "order": "commander:1",
        "task": "lead",
        "args": [["bot-1", "bot-2"], 0],
        "tick": 1,
    }
    finished = {"event": "order.finished", "agent": "bot-1", "order": "commander:1",
                "task": "lead", "success": False, "reason": "decimated", "tick": 2}  # fmt: skip
    _write(tmp_path / "commander.10.jsonl", [order])
    _write(tmp_path / "bot-1.11.jsonl", [heard, received, done, finished])
    trace = load_trace(tmp_path)
    text = render_text(trace)
    assert "commander -> bot-1  Order (lead [bot-1 bot-2] 0)" in text
    assert "bot-1 -> commander  CompletionReport (lead failed: decimated)" in text
    assert "Order lead [bot-1 bot-2] 0" in render_mermaid(trace)
    events = json.loads(render_json(trace))["events"]
    assert ["lead [bot-1 bot-2] 0", "lead failed: decimated"] == [e["about"] for e in events]


class _Watcher(Actor):
    def watched_peers(self) -> list[str]:
        return ["leaver"]


class _Leaver(Actor):
    def on_tick(self, tick: int) -> None:
        if tick == 3:
            self.stop("done here")


async def test_the_brokers_notice_of_a_departure_carries_the_runs_tick(tmp_path: Path) -> None:
    configure_logging(tmp_path, "main")
    try:
        await run_actors([_Watcher("watcher"), _Leaver("leaver")], ticks=6)
        flush_logging()
    finally:
        configure_logging(None, "main")
    trace = load_trace(tmp_path)
    left = [e for e in trace.sends() if e["msg_type"] == "_Left" and e["recipient"] == "watcher"]
    assert [3] == [e["tick"] for e in left]  # was 0: drawn before the ticks it ends
    mermaid = render_mermaid(filter_trace(trace, msg_types=["_Left", "Tick"])).splitlines()
    at = [line.split(": ")[-1] for line in mermaid if ": tick " in line or ": _Left" in line]
    assert ["tick 1", "tick 2", "tick 3", "_Left"] == at[:4]


def test_a_restarted_incarnations_control_messages_are_drawn_at_the_runs_tick(
    tmp_path: Path,
) -> None:
    # bot-1's second incarnation starts at tick 5 knowing no tick: its messages say tick 0.
    ticks = [
        _event("msg.send", f"commander:{n}", "commander", "#ticks", n, f"0{n}", msg_type="Tick")
        for n in range(1, 7)
    ]
    again = _event("msg.send", "bot-1:c1", "bot-1", "broker", 0, "05.5", msg_type="_Register")
    first = _event("msg.send", "bot-1:c0", "bot-1", "broker", 0, "00.5", msg_type="_Register")
    _write(tmp_path / "commander.10.jsonl", ticks)
    _write(tmp_path / "bot-1.11.jsonl", [first, again])
    trace = load_trace(tmp_path)
    flow = [e["msg_id"] for e in trace.flow()]
    assert ["bot-1:c0", "commander:1"] == flow[:2]
    assert ["commander:5", "bot-1:c1", "commander:6"] == flow[-3:]
    assert re.search(r"\ntick +5 .* bot-1 -> broker  _Register  bot-1:c1", render_text(trace))
    assert [0, 0] == [
        e["tick"] for e in json.loads(render_json(trace))["events"] if e["msg_type"] == "_Register"
    ]
