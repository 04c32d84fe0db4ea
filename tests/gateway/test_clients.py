"""The gateway's clients in other languages each play a bot of a Warzone match to its end: the
browser client (clients/browser, plain JavaScript in headless Chromium, driven by Playwright)
and the Godot 3 client (clients/godot, GDScript in Debian's headless ``godot3-server``). Each is
red-1 of a 2-a-side match, ordered by its squad like any red bot; its acts are checked by the
world, and the match ends with the world's result."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, last_json_line
from tests.view.test_browser import browser, chromium  # noqa: F401 - the fixtures

from .conftest import Started

pytestmark = pytest.mark.processes

TIME_LIMIT = 40
MATCH = ("--param", "bots=2", "--param", f"time_limit={TIME_LIMIT}", "--param", "outside=red-1")
APT_TIMEOUT_S = 900
CLIENT_TIMEOUT_S = 120


def _start_match(start_run: Callable[..., Started]) -> Started:
    return start_run(REPO / "scenarios" / "warzone.py", *MATCH, tokens=["red-1"],
                     gateway_options=("--clock", "world"))  # fmt: skip


def _check_match(started: Started, stats: dict[str, Any]) -> dict[str, Any]:
    """The match ended with the world's result, and red-1 played it through the gateway."""
    out, err = started.finish()
    assert 0 == started.run.returncode, err
    report = last_json_line(out)
    assert "success" == report["outcome"], report["outcome_summary"]  # the world decided
    assert report["outcome_details"]["winner"] in ("red", "blue", None)
    assert TIME_LIMIT == report["ticks"]
    assert "red-1" not in report["departed"]
    assert TIME_LIMIT == stats["ticks"]  # it took part in every tick
    assert stats["accepted"] > 0  # acts the world checked and took
    assert stats["orders"] > 0 and stats["completed"] > 0  # its squad's orders, answered
    return report


def test_a_browser_client_plays_a_bot_of_a_warzone_match_to_its_end(
    start_run: Callable[..., Started],
    browser: Any,  # noqa: F811
) -> None:
    started = _start_match(start_run)
    page = browser.new_page()
    query = f"gateway={started.url}&agent=red-1&token={started.token('red-1')}&map=warzone"
    page.goto(f"file://{REPO / 'clients' / 'browser' / 'index.html'}?{query}")
    page.wait_for_function("window.botResult !== undefined", timeout=CLIENT_TIMEOUT_S * 1000)
    result = page.evaluate("window.botResult")
    assert "error" not in result, result
    assert 1000 == result["closed"]["code"], result
    _check_match(started, result["stats"])


def _godot() -> str:
    """Debian's headless Godot 3; installed with apt-get when missing and this runs as root
    (a fresh CI machine), else the test skips saying why."""
    found = shutil.which("godot3-server")
    if found is not None:
        return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip(
            "no godot3-server on PATH, and not root with apt-get to install it: the Godot "
            "client runs in Debian's headless Godot 3 (apt-get install godot3-server)"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for argv in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "godot3-server"],
    ):
        done = subprocess.run(
            argv, capture_output=True, text=True, env=env, timeout=APT_TIMEOUT_S, check=False
        )
        if done.returncode != 0:
            pytest.skip(f"no godot3-server, and `{' '.join(argv)}` failed: {done.stderr[-500:]}")
    found = shutil.which("godot3-server")
    if found is None:
        pytest.skip("apt-get installed godot3-server, yet it is not on PATH")
    return found


def test_a_godot_client_plays_a_bot_of_a_warzone_match_to_its_end(
    start_run: Callable[..., Started], tmp_path: Path
) -> None:
    godot = _godot()
    started = _start_match(start_run)
    result_file = tmp_path / "godot-result.json"
    client = subprocess.run(
        [godot, "--path", str(REPO / "clients" / "godot"), "--",
         f"--gateway={started.url}", "--agent=red-1", f"--token={started.token('red-1')}",
         "--map=warzone", f"--result={result_file}"],
        capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S,
        env={**os.environ, "HOME": str(tmp_path)},  # Godot writes its user data there
    )  # fmt: skip
    assert 0 == client.returncode, client.stdout[-2000:] + client.stderr[-2000:]
    result = json.loads(result_file.read_text())
    assert 1000 == result["closed"]["code"], result
    _check_match(started, result["stats"])
