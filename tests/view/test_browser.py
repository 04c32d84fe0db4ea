"""``warband view`` in a real browser: headless Chromium (the system's ``chromium``) driven by
Playwright loads the page of a recorded run, scrubs, plays, clicks an agent, and the inspector
shows what the logs say. A screenshot is kept under the test's tmp dir, and copied to
``$WARBAND_ARTIFACTS`` when that is set (CI keeps it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, read_log_events
from tests.view.conftest import RECORDED_TICKS, ViewProcess, overlay_snapshot, write_log
from warband.agents.explain import explain

TIMEOUT_MS = 20_000
APT_TIMEOUT_S = 900

pytestmark = pytest.mark.processes

sync_api = pytest.importorskip(
    "playwright.sync_api",
    reason="the browser test needs Playwright: pip install 'warband[browser]' "
    "(no `playwright install`: it uses the system's chromium)",
)


def _system_chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def chromium() -> str:
    """The system's chromium; installed from Debian's packages when it is missing and this
    runs as root with apt-get (a fresh CI machine), else the browser tests skip saying why."""
    found = _system_chromium()
    if found is not None:
        return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip(
            "no chromium on PATH, and not root with apt-get to install it: the browser test "
            "drives the system's chromium (Debian: apt-get install chromium)"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for argv in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"],
    ):
        done = subprocess.run(
            argv, capture_output=True, text=True, env=env, timeout=APT_TIMEOUT_S, check=False
        )
        if done.returncode != 0:
            pytest.skip(f"no chromium, and `{' '.join(argv)}` failed: {done.stderr[-500:]}")
    found = _system_chromium()
    if found is None:
        pytest.skip("apt-get installed chromium, yet no chromium is on PATH")
    return found


@pytest.fixture
def browser(chromium: str) -> Iterator[Any]:
    """Headless Chromium (the system's), closed afterwards."""
    with sync_api.sync_playwright() as playwright:
        try:
            # --no-sandbox: CI containers run as root, where Chromium's sandbox refuses to start.
            browser = playwright.chromium.launch(
                executable_path=chromium, headless=True, args=["--no-sandbox"]
            )
        except sync_api.Error as error:
            # e.g. Ubuntu's chromium, a stub for a snap that cannot run in a container.
            pytest.skip(f"{chromium} does not start under Playwright: {error}")
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def _open(browser: Any, url: str) -> Iterator[Any]:
    """A page on ``url``, ready; no script error on it meanwhile."""
    page = browser.new_page(viewport={"width": 1500, "height": 1000})
    page.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")
    try:
        yield page
        assert [] == errors
    finally:
        page.close()


@pytest.fixture
def page(browser: Any, view_process: ViewProcess) -> Iterator[Any]:
    """A page on ``warband view`` of the recorded run."""
    with _open(browser, view_process.url) as opened:
        yield opened


def _scrub_to(page: Any, tick: int) -> None:
    page.locator("#scrubber").fill(str(tick))
    page.wait_for_selector(f"body[data-shown-tick='{tick}']")


def _keep_screenshot(page: Any, tmp_path: Path, name: str) -> Path:
    shot = tmp_path / name
    page.screenshot(path=str(shot), full_page=True)
    artifacts = os.environ.get("WARBAND_ARTIFACTS")
    if artifacts:
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(artifacts) / name)
    return shot


def test_scrubbing_to_a_tick_and_clicking_an_agent_shows_its_plan_as_the_logs_have_it(
    page: Any, recorded_run: Path, tmp_path: Path
) -> None:
    tick = 15
    _scrub_to(page, tick)
    assert 4 == page.locator("circle.agent").count()
    # Warzone holds 3 capture points and 4 tactical support points, each drawn as a ring.
    assert 7 == page.locator("circle.capture").count()
    page.locator("circle.agent[data-agent='red-1']").click()
    page.wait_for_function(
        f"document.getElementById('inspector-agent').textContent === 'red-1 at tick {tick}'"
    )
    shown = page.locator("#inspector-text").text_content()
    assert explain(recorded_run, "red-1", tick).text() == shown
    decided = [
        e
        for e in read_log_events(recorded_run)
        if e.get("event") == "agent.plan"
        and e.get("agent") == "red-1"
        and e["tick"] <= tick
        and "memory" in e
    ][-1]
    assert all(step in shown for step in decided["plan"])
    assert 1 == page.locator("circle.agent.selected").count()
    table = page.locator("#assignment-red-commander").text_content()
    assert "red-squad-1 (red-1, red-2)" in table
    shot = _keep_screenshot(page, tmp_path, "warband-view.png")
    assert shot.stat().st_size > 10_000


def test_the_sequence_diagram_links_an_order_to_its_completion_report(page: Any) -> None:
    _scrub_to(page, 17)
    page.locator("#filter-agent").select_option("blue-1")
    page.locator("#filter-before").fill("17")
    page.locator("#filter-before").dispatch_event("change")
    page.wait_for_selector("path.reply-link")
    # Acts are linked to their ActResults too; find the links that start at an Order.
    links = [
        (link.get_attribute("data-from"), link.get_attribute("data-to"))
        for link in page.locator("path.reply-link").all()
    ]
    kinds = {
        (
            page.locator(f"g.msg[data-id='{asked}']").get_attribute("data-type"),
            page.locator(f"g.msg[data-id='{answer}']").get_attribute("data-type"),
        ): (asked, answer)
        for asked, answer in links
    }
    asked, answer = kinds[("Order", "CompletionReport")]
    answer_title = page.locator(f"g.msg[data-id='{answer}'] > title").text_content()
    assert f"answers {asked}" in answer_title


def test_play_moves_the_timeline_on_and_pause_stops_it(page: Any) -> None:
    _scrub_to(page, 3)
    page.locator("#speed").select_option("25")
    page.locator("#play").click()
    page.wait_for_function("Number(document.body.dataset.shownTick) >= 6")
    page.locator("#play").click()
    stopped = int(page.locator("#tick-label").text_content())
    assert 6 <= stopped
    assert "play" in page.locator("#play").text_content()


def test_the_clock_and_world_traffic_is_hidden_until_asked_for(page: Any) -> None:
    _scrub_to(page, 10)
    assert 0 == page.locator("g.msg[data-type='TickDone']").count()
    assert 0 < page.locator("g.msg").count()
    page.locator("#filter-runtime").uncheck()
    page.wait_for_selector("g.msg[data-type='TickDone']")


def test_influence_and_corridors_are_overlays_that_can_be_hidden(
    browser: Any, start_view: Callable[..., ViewProcess], tmp_path: Path
) -> None:
    logs = write_log(tmp_path / "logs", [overlay_snapshot(0)])
    with _open(browser, start_view(logs).url) as page:
        assert 0 < page.locator("circle.influence").count()
        assert ["red-squad-1"] == [
            c.get_attribute("data-squad") for c in page.locator("polyline.corridor").all()
        ]
        page.locator("#show-influence").uncheck()
        page.wait_for_function("!document.querySelector('circle.influence')")
        assert 1 == page.locator("polyline.corridor").count()


def test_a_squad_with_no_body_on_the_map_is_inspected_from_the_agent_list(
    page: Any, recorded_run: Path
) -> None:
    _scrub_to(page, 12)
    page.locator("#inspect-agent").select_option("red-squad-1")
    page.wait_for_function(
        "document.getElementById('inspector-agent').textContent === 'red-squad-1 at tick 12'"
    )
    expected = explain(recorded_run, "red-squad-1", 12).text()
    assert expected == page.locator("#inspector-text").text_content()


def test_agents_on_the_same_spot_can_each_be_clicked(
    browser: Any, start_view: Callable[..., ViewProcess], tmp_path: Path
) -> None:
    snapshot = overlay_snapshot(0)
    bodies = snapshot["snapshot"]["agents"]
    bodies["red-2"] = bodies["blue-1"] = dict(bodies["red-1"])
    with _open(browser, start_view(write_log(tmp_path / "logs", [snapshot])).url) as page:
        for name in ("red-1", "red-2", "blue-1"):
            page.locator(f"circle.agent[data-agent='{name}']").click()
            page.wait_for_function(
                f"document.getElementById('inspector-agent').textContent === '{name} at tick 0'"
            )


def test_the_labels_of_agents_on_one_spawn_do_not_overlap(
    browser: Any, start_view: Callable[..., ViewProcess], tmp_path: Path
) -> None:
    # At tick 0 of every Warzone match three bots stand on each spawn waypoint.
    snapshot = overlay_snapshot(0)
    bodies = snapshot["snapshot"]["agents"]
    bodies["red-2"] = bodies["red-3"] = dict(bodies["red-1"])
    with _open(browser, start_view(write_log(tmp_path / "logs", [snapshot])).url) as page:
        page.wait_for_selector("circle.agent[data-agent='red-3']")
        boxes = page.evaluate(
            """() => [...document.querySelectorAll('text.agent-label')].map(t => {
                const b = t.getBBox();
                return [t.textContent, b.x, b.y, b.x + b.width, b.y + b.height]; })"""
        )
        _keep_screenshot(page, tmp_path, "one-spawn.png")
    assert 3 <= len(boxes)
    for i, (text, x1, y1, x2, y2) in enumerate(boxes):
        for other, a1, b1, a2, b2 in boxes[i + 1 :]:
            overlap = x1 < a2 and a1 < x2 and y1 < b2 and b1 < y2
            assert not overlap, f"{text!r} is written over {other!r}"


def test_the_page_follows_a_run_that_writes_its_logs_after_the_page_opened(
    browser: Any, start_view: Callable[..., ViewProcess], recorded_run: Path, tmp_path: Path
) -> None:
    logs = tmp_path / "live"
    with _open(browser, start_view(logs, "--follow").url) as page:
        assert page.locator("#follow-box").is_visible()
        assert "waiting" in page.locator("#map").text_content()
        for source in sorted(recorded_run.glob("*.jsonl")):
            logs.mkdir(exist_ok=True)
            (logs / source.name).write_bytes(source.read_bytes())
        page.wait_for_selector(f"body[data-shown-tick='{RECORDED_TICKS}']")
        assert 4 == page.locator("circle.agent").count()
        assert str(RECORDED_TICKS) == page.locator("#last-tick").text_content()


def test_the_page_follows_a_live_run_started_after_it_opened(
    browser: Any, start_view: Callable[..., ViewProcess], tmp_path: Path
) -> None:
    endpoint = f"ipc://{tmp_path}/view.sock"
    with _open(browser, start_view(None, "--live", endpoint).url) as page:
        assert page.locator("#follow-box").is_visible()
        argv = [sys.executable, "-m", "warband", "run", "scenarios/warzone.py", "-q"]
        argv += ["--param", "bots=2", "--param", f"time_limit={RECORDED_TICKS}"]
        run = subprocess.run(
            [*argv, "--live", endpoint],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        assert 0 == run.returncode, run.stderr
        page.wait_for_selector(f"body[data-shown-tick='{RECORDED_TICKS}']")
        assert 4 == page.locator("circle.agent").count()
        assert not page.locator("#dropped").is_visible()  # a viewer that kept up lost nothing
