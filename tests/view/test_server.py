"""The HTTP side of ``warband view``: the JSON API through aiohttp's test client, and the
command as a real process (URL first, Ctrl-C stops it with a summary)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.view.conftest import RECORDED_TICKS, ViewProcess
from warband.agents.explain import explain
from warband.metrics import load_match, measure, tick_flags
from warband.view import load_timeline, make_app

aiohttp_test_utils = pytest.importorskip(
    "aiohttp.test_utils", reason="warband view needs the view extra: pip install 'warband[view]'"
)


@pytest.fixture
async def client(recorded_run: Path) -> AsyncIterator[Any]:
    app = make_app(load_timeline(recorded_run))
    async with aiohttp_test_utils.TestClient(aiohttp_test_utils.TestServer(app)) as test_client:
        yield test_client


async def _json(client: Any, path: str, status: int = 200) -> Any:
    response = await client.get(path)
    assert status == response.status, await response.text()
    return await response.json()


async def test_the_page_and_its_scripts_are_served_from_the_package(client: Any) -> None:
    page = await client.get("/")
    assert 200 == page.status
    assert '<script src="/static/app.js">' in await page.text()
    for asset in ("/static/app.js", "/static/style.css"):
        assert 200 == (await client.get(asset)).status


async def test_the_summary_gives_the_ticks_agents_types_and_map(client: Any) -> None:
    summary = await _json(client, "/api/summary")
    assert (0, RECORDED_TICKS) == (summary["first_tick"], summary["last_tick"])
    assert {"Order", "CompletionReport"} <= set(summary["message_types"])
    assert "warzone" == summary["map"]["name"]


async def test_a_frame_holds_the_agents_and_commanders_of_its_tick(client: Any) -> None:
    frame = await _json(client, "/api/frame?tick=7")
    assert 7 == frame["tick"]
    assert {"red-1", "red-2", "blue-1", "blue-2"} == set(frame["agents"])
    assert {"blue-commander", "red-commander"} == set(frame["commanders"])


async def test_the_measures_of_a_tick_name_the_bots_warband_metrics_counts(
    client: Any, recorded_run: Path
) -> None:
    match = load_match(recorded_run)
    for tick in (1, 7, RECORDED_TICKS):
        found = await _json(client, f"/api/measures?tick={tick}")
        assert RECORDED_TICKS == found["as_of"]
        assert {"red", "blue"} == set(found["teams"])
        for team, flags in found["teams"].items():
            assert tick_flags(match, team)[tick] == flags  # what warband metrics counts
    # Summed over the ticks, the page's counts are warband metrics' own.
    red = measure(match)["teams"]["red"]
    total = 0
    for tick in sorted(match.snapshots):
        total += len((await _json(client, f"/api/measures?tick={tick}"))["teams"]["red"]["crowded"])
    assert red["crowded"] == total


async def test_messages_are_filtered_by_agent_and_type_as_warband_trace_filters(
    client: Any,
) -> None:
    found = await _json(client, "/api/messages?tick=17&before=17&agent=red-1&type=Order")
    assert found["messages"]
    assert {("Order", "red-1")} == {(m["type"], m["recipient"]) for m in found["messages"]}


async def test_the_inspector_answers_with_warband_explains_text(
    client: Any, recorded_run: Path
) -> None:
    found = await _json(client, "/api/inspect?agent=blue-2&tick=11")
    assert explain(recorded_run, "blue-2", 11).text() == found["text"]


@pytest.mark.parametrize(
    ("path", "status", "says"),
    [
        ("/api/frame", 400, "missing query parameter 'tick'"),
        ("/api/frame?tick=soon", 400, "tick='soon' is not an integer"),
        ("/api/inspect?tick=3", 400, "missing query parameter 'agent'"),
        ("/api/inspect?agent=nobody&tick=3", 404, "no agent 'nobody'"),
    ],
)
async def test_a_bad_query_is_answered_with_what_was_wrong(
    client: Any, path: str, status: int, says: str
) -> None:
    assert says in (await _json(client, path, status))["error"]


async def test_play_pushes_one_frame_per_tick_as_server_sent_events(client: Any) -> None:
    response = await client.get(f"/api/play?from={RECORDED_TICKS - 2}&fps=60")
    assert "text/event-stream" == response.headers["Content-Type"]
    body = await response.text()
    frames = [json.loads(line[6:]) for line in body.splitlines() if line.startswith('data: {"')]
    assert [RECORDED_TICKS - 2, RECORDED_TICKS - 1, RECORDED_TICKS] == [f["tick"] for f in frames]
    assert body.rstrip().endswith("event: end\ndata: {}")


def test_warband_view_prints_its_url_first_and_stops_on_ctrl_c_with_a_summary(
    view_process: ViewProcess,
) -> None:
    with urllib.request.urlopen(view_process.url + "api/summary", timeout=10) as response:
        assert RECORDED_TICKS == json.load(response)["last_tick"]
    view_process.process.send_signal(signal.SIGINT)
    out, err = view_process.process.communicate(timeout=20)
    assert 0 == view_process.process.returncode, err
    assert ["warband view: stopped after 1 request"] == out.strip().splitlines()


def test_warband_view_without_aiohttp_says_which_extra_to_install(recorded_run: Path) -> None:
    # None in sys.modules makes `import aiohttp` fail, as on a machine without the extra.
    code = (
        "import sys; sys.modules['aiohttp'] = None\n"
        "from warband.cli import main\n"
        f"raise SystemExit(main(['view', {str(recorded_run)!r}]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert 2 == result.returncode
    assert "pip install 'warband[view]'" in result.stderr


def test_warband_view_on_a_port_in_use_says_so_and_how_to_pick_another(
    view_process: ViewProcess, recorded_run: Path
) -> None:
    port = view_process.url.rstrip("/").rsplit(":", 1)[1]
    result = subprocess.run(
        [sys.executable, "-m", "warband", "view", str(recorded_run), "--port", port],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert 2 == result.returncode
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "--port" in result.stderr


def test_a_client_that_stops_listening_to_play_leaves_no_error_behind(
    view_process: ViewProcess,
) -> None:
    with urllib.request.urlopen(view_process.url + "api/play?from=0&fps=60", timeout=10) as stream:
        assert b"event: frame\n" == stream.readline()
    # The server's next frame (1/60 s on) meets the closed connection while these are served.
    for _ in range(5):
        with urllib.request.urlopen(view_process.url + "api/summary", timeout=10) as response:
            response.read()
    view_process.process.send_signal(signal.SIGINT)
    _, err = view_process.process.communicate(timeout=20)
    assert 0 == view_process.process.returncode
    assert "Traceback" not in err


def test_warband_view_of_a_missing_directory_says_to_pass_a_runs_log_or_follow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from warband.cli import main

    assert 2 == main(["view", str(tmp_path / "nowhere")])
    err = capsys.readouterr().err
    assert f"log directory '{tmp_path / 'nowhere'}' does not exist" in err
    assert "--log DIR" in err
    assert "--follow" in err


@pytest.mark.parametrize(
    "args",
    [
        ["view", "LOGS", "--port", "99999"],
        ["view", "LOGS", "--port", "65536"],
        ["view", "--live", "ipc:///nonexistent/v.sock", "--port", "-1"],
        ["run", "scenarios/ping_pong.py", "--view", "--view-port", "99999"],
    ],
)
def test_a_port_outside_the_tcp_range_is_one_line_of_bad_input(
    warband_cli: Any, tmp_path: Path, args: list[str]
) -> None:
    (tmp_path / "logs").mkdir()
    argv = [str(tmp_path / "logs") if arg == "LOGS" else arg for arg in args]
    result = warband_cli(*argv, timeout=60)
    flag = "--view-port" if "--view" in args else "--port"
    assert 2 == result.returncode, result.stderr  # was OverflowError, exit 1
    assert [f"warband: error: {flag} must be a TCP port, 1 to 65535 (0 picks a free one), "
            f"got {args[-1]}"] == result.stderr.splitlines()  # fmt: skip
    assert "" == result.stdout  # no URL: nothing was served or run
