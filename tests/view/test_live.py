"""Following a running run over ZeroMQ: the run's publisher and the viewer's feed, ``warband view
--live`` with a run in one process and across processes, a stopped viewer that the run does not
wait for, and ``warband run --view``."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, read_log_events
from tests.proc import free_tcp_port, wait_until
from tests.view.conftest import ViewProcess
from warband.exceptions import ConfigurationError
from warband.messaging.live_feed import DROPPED_EVENT, QUEUE_BLOCKS, QUEUE_VARIABLE, LivePublisher
from warband.view import LiveFeed, Timeline

TICKS = 20
"""Warzone's time limit in these runs (the last tick the viewer should show)."""


def _block(tick: int) -> bytes:
    event = {"event": "agent.plan", "agent": "a", "tick": tick, "pid": 7}
    return json.dumps(event).encode() + b"\n"


@pytest.fixture
def publisher(tmp_path: Path) -> Iterator[LivePublisher]:
    """A process's publisher to ``ipc://tmp_path/view.sock`` (nobody bound there yet)."""
    live = LivePublisher(f"ipc://{tmp_path}/view.sock", pid=7)
    try:
        yield live
    finally:
        live.close()


def test_the_feed_reads_what_a_publisher_pushes_as_events(
    publisher: LivePublisher, tmp_path: Path
) -> None:
    feed = LiveFeed(f"ipc://{tmp_path}/view.sock")
    try:
        publisher.publish(_block(1) + _block(2), 2)
        found: list[dict[str, Any]] = []

        def two_found() -> bool:
            found.extend(feed.read_new())
            return 2 <= len(found)

        wait_until(two_found, 10, "both events")
        assert [1, 2] == [e["tick"] for e in found]
        assert (1, 2, []) == (feed.blocks, feed.events, feed.problems)
    finally:
        feed.close()


def _read(feed: LiveFeed, timeline: Timeline) -> bool:
    timeline.add(feed.read_new())
    return True


def test_a_publisher_with_no_viewer_drops_blocks_past_its_queue_and_tells_the_next_viewer(
    publisher: LivePublisher, tmp_path: Path
) -> None:
    for tick in range(QUEUE_BLOCKS + 10):
        publisher.publish(_block(tick), 1)  # never waits, though nobody reads
    assert QUEUE_BLOCKS + 10 == publisher.sent_blocks + publisher.dropped_blocks
    assert 0 < publisher.dropped_blocks
    assert publisher.dropped_blocks == publisher.dropped_events
    feed = LiveFeed(f"ipc://{tmp_path}/view.sock")
    timeline = Timeline(tmp_path)
    try:
        # The queued blocks go out once the viewer binds; the next block says what was lost.
        wait_until(lambda: _read(feed, timeline) and 0 < feed.blocks, 10, "the queued blocks")
        publisher.publish(_block(999), 1)
        wait_until(lambda: _read(feed, timeline) and 999 in timeline.ticks, 10, "the notice")
        assert {7: publisher.dropped_events} == timeline.dropped
        assert publisher.dropped_events == timeline.summary()["dropped"]
    finally:
        feed.close()


def test_a_viewer_cannot_bind_an_endpoint_in_use_and_says_so(tmp_path: Path) -> None:
    feed = LiveFeed(f"ipc://{tmp_path}/view.sock")
    port_feed = LiveFeed("tcp://127.0.0.1:*")
    try:
        with pytest.raises(ConfigurationError, match=r"cannot bind 'tcp://127\.0\.0\.1:"):
            LiveFeed(port_feed.endpoint)
    finally:
        port_feed.close()
        feed.close()


def _summary(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "api/summary", timeout=10) as response:
        found: dict[str, Any] = json.load(response)
        return found


_RUN = [sys.executable, "-m", "warband", "run", "scenarios/warzone.py", "-q"]
_RUN += ["--param", "bots=2", "--param", f"time_limit={TICKS}"]


def _warzone(*options: str, queue: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ} if queue is None else {**os.environ, QUEUE_VARIABLE: str(queue)}
    return subprocess.run(
        [*_RUN, *options],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def test_warband_view_live_shows_a_run_in_one_process_to_its_last_tick(
    start_view: Any, tmp_path: Path
) -> None:
    endpoint = f"ipc://{tmp_path}/view.sock"
    view: ViewProcess = start_view(None, "--live", endpoint)
    assert (True, 0, f"live {endpoint}") == (
        _summary(view.url)["following"],
        _summary(view.url)["last_tick"],
        _summary(view.url)["log_dir"],
    )
    result = _warzone("--live", endpoint)
    assert 0 == result.returncode, result.stderr
    wait_until(lambda: TICKS == _summary(view.url)["last_tick"], 60, "the last tick to show")
    summary = _summary(view.url)
    assert ("warzone", 0) == (summary["map"]["name"], summary["dropped"])
    assert "red-1" in summary["agents"]
    assert 0 < summary["messages"]


def test_warband_view_live_follows_every_process_of_a_run(start_view: Any, tmp_path: Path) -> None:
    endpoint = f"ipc://{tmp_path}/view.sock"
    view: ViewProcess = start_view(None, "--live", endpoint)
    result = _warzone("--processes", "--live", endpoint, "--log", str(tmp_path / "logs"))
    assert 0 == result.returncode, result.stderr
    wait_until(lambda: TICKS == _summary(view.url)["last_tick"], 60, "the last tick to show")
    # Every message the run's processes sent reaches the page: the broker's and the agents'.
    sent = [e for e in read_log_events(tmp_path / "logs") if e["event"] == "msg.send"]
    wait_until(lambda: len(sent) == _summary(view.url)["messages"], 60, "every message")
    assert 0 == _summary(view.url)["dropped"]


def test_a_stopped_viewer_does_not_stop_the_run_which_counts_what_it_dropped(
    start_view: Any, tmp_path: Path
) -> None:
    endpoint = f"ipc://{tmp_path}/view.sock"
    view: ViewProcess = start_view(None, "--live", endpoint)
    view.process.send_signal(signal.SIGSTOP)
    try:
        # Two blocks a process may queue: a short run overflows them.
        stalled = _warzone("--live", endpoint, "--log", str(tmp_path / "logs"), queue=2)
    finally:
        view.process.send_signal(signal.SIGCONT)
    assert 0 == stalled.returncode, stalled.stderr
    dropped = [e for e in read_log_events(tmp_path / "logs") if e["event"] == DROPPED_EVENT]
    assert dropped, "no process said it dropped blocks"
    assert all(0 < e["blocks"] <= e["events"] for e in dropped)
    # The viewer goes on, and shows the next run.
    assert 0 == _warzone("--live", endpoint).returncode
    wait_until(lambda: TICKS == _summary(view.url)["last_tick"], 60, "the next run to show")


def test_warband_view_takes_a_log_dir_or_live_not_both(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "warband", "view", str(tmp_path), "--live", "ipc://x"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert 2 == result.returncode
    assert "not both" in result.stderr


def test_warband_run_view_prints_the_url_first_and_serves_the_run_until_stopped() -> None:
    pytest.importorskip("aiohttp", reason="warband view needs the view extra (aiohttp)")
    port = free_tcp_port()
    process = subprocess.Popen(
        [*_RUN, "--view", "--view-port", str(port)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        url = process.stdout.readline().strip()
        assert f"http://127.0.0.1:{port}/" == url
        assert "scenario warzone: SUCCESS" in process.stdout.readline()  # then the report
        # A stop signal is the viewer's to take once it says it keeps serving; the page may
        # show the last tick before (SIGTERM then found the run's own handler, or none).
        while "keeps serving" not in (line := process.stderr.readline()):
            assert line, "warband run --view ended before it said it keeps serving"
        wait_until(lambda: TICKS == _summary(url)["last_tick"], 60, "the last tick to show")
        assert process.poll() is None  # the run is over; the page is still served
        process.send_signal(signal.SIGTERM)
        assert 0 == process.wait(timeout=30)
        with pytest.raises(urllib.error.URLError):
            _summary(url)  # the viewer stopped with it
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def test_a_run_with_a_live_endpoint_that_is_no_endpoint_stops_before_it_starts() -> None:
    result = _warzone("--live", "not-an-endpoint")
    assert 2 == result.returncode
    assert "--live 'not-an-endpoint' is not an endpoint" in result.stderr


def test_a_page_that_stops_reading_its_updates_stops_neither_the_run_nor_the_viewer(
    start_view: Any, tmp_path: Path
) -> None:
    endpoint = f"ipc://{tmp_path}/view.sock"
    view: ViewProcess = start_view(None, "--live", endpoint)
    host, port = view.url.removeprefix("http://").rstrip("/").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as stalled:
        # Asks for the stream of updates, then never reads a byte of it.
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.sendall(b"GET /api/updates HTTP/1.1\r\nHost: x\r\n\r\n")
        result = _warzone("--live", endpoint)
        assert 0 == result.returncode, result.stderr
        wait_until(lambda: TICKS == _summary(view.url)["last_tick"], 60, "the last tick to show")
