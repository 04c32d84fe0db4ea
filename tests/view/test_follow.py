"""Following a run still writing its logs: the reader of growing files, the timeline growing
out of order, and ``warband view --follow`` as a process and in the browser."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

from tests.proc import wait_until
from tests.view.conftest import RECORDED_TICKS, ViewProcess
from warband.view import LogFollower, Timeline


def _event(**fields: Any) -> bytes:
    return json.dumps({"timestamp": "2026-11-23T10:00:00.000000+00:00", **fields}).encode()


def _send(msg_id: str, msg_type: str, tick: int, reply_to: str | None = None) -> dict[str, Any]:
    sender, recipient = ("bot", "squad") if reply_to else ("squad", "bot")
    fields = {
        "event": "msg.send",
        "msg_id": msg_id,
        "msg_type": msg_type,
        "sender": sender,
        "recipient": recipient,
        "conversation": None,
        "tick": tick,
        "pid": 1,
    }
    return {**fields, "reply_to": reply_to} if reply_to else fields


def test_the_follower_returns_whole_lines_only_and_finds_files_that_appear_later(
    tmp_path: Path,
) -> None:
    follower = LogFollower(tmp_path / "logs")
    assert [] == follower.read_new()  # the run has not made its directory yet
    (tmp_path / "logs").mkdir()
    first = tmp_path / "logs" / "main.1.jsonl"
    line = _event(event="actor.start", agent="a")
    first.write_bytes(line + b"\n" + line[:10])
    assert ["actor.start"] == [e["event"] for e in follower.read_new()]
    with first.open("ab") as file:
        file.write(line[10:] + b"\nnot json\n")
    (tmp_path / "logs" / "bot.2.jsonl").write_bytes(_event(event="actor.stop", agent="b") + b"\n")
    assert ["actor.start", "actor.stop"] == sorted(e["event"] for e in follower.read_new())
    assert ["main.1.jsonl:3: not JSON"] == follower.problems
    assert [] == follower.read_new()
    (tmp_path / "logs" / "x.jsonl").mkdir()  # not a file: said once, never read
    assert [] == follower.read_new() == follower.read_new()
    assert ["main.1.jsonl:3: not JSON", "x.jsonl: not a file"] == follower.problems


def test_a_reply_read_before_its_order_and_a_receive_before_its_send_are_still_joined(
    tmp_path: Path,
) -> None:
    timeline = Timeline(tmp_path)
    receive = {**_send("squad:1", "Order", 1), "event": "msg.recv"}
    timeline.add([_send("bot:1", "CompletionReport", 2, reply_to="squad:1"), receive])
    timeline.add([_send("squad:1", "Order", 1)])
    order, report = timeline.messages
    assert ("squad:1", ["bot:1"], True) == (order["id"], order["replies"], order["delivered"])
    assert ([1, 2], "squad:1") == (timeline.ticks, report["reply_to"])


def _write_part(recorded_run: Path, logs: Path, part: int) -> None:
    """Append the first (``part`` 0) or second half of each of the recorded run's files to
    ``logs``, as a run writes its files by blocks (a half may end inside a line)."""
    logs.mkdir(exist_ok=True)
    for source in sorted(recorded_run.glob("*.jsonl")):
        data = source.read_bytes()
        half = len(data) // 2
        with (logs / source.name).open("ab") as file:
            file.write(data[half:] if part else data[:half])


def _summary(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "api/summary", timeout=10) as response:
        found: dict[str, Any] = json.load(response)
        return found


def test_warband_view_follow_takes_in_a_run_that_starts_after_it(
    start_view: Any, recorded_run: Path, tmp_path: Path
) -> None:
    logs = tmp_path / "live"
    view: ViewProcess = start_view(logs, "--follow")
    assert (True, 0, None) == (
        _summary(view.url)["following"],
        _summary(view.url)["last_tick"],
        _summary(view.url)["map"],
    )
    _write_part(recorded_run, logs, 0)
    wait_until(lambda: 0 < _summary(view.url)["last_tick"], 20, "the first half to show")
    assert RECORDED_TICKS > _summary(view.url)["last_tick"]
    _write_part(recorded_run, logs, 1)
    wait_until(
        lambda: RECORDED_TICKS == _summary(view.url)["last_tick"], 20, "the last tick to show"
    )
    summary = _summary(view.url)
    assert "warzone" == summary["map"]["name"]
    with urllib.request.urlopen(
        view.url + f"api/messages?tick={RECORDED_TICKS}&before={RECORDED_TICKS}"
        "&type=CompletionReport",
        timeout=10,
    ) as response:
        reports = json.load(response)["messages"]
    assert reports
    assert all(r["reply_to"] for r in reports)
