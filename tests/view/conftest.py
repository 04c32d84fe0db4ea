"""A recorded Warzone match shared by the view tests, and a ``warband view`` process fixture."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.proc import free_tcp_port

RECORDED_TICKS = 30


@pytest.fixture(scope="session")
def recorded_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``--log`` directory of a 2-bot-a-side Warzone match of 30 ticks (seed 0)."""
    logs = tmp_path_factory.mktemp("view") / "wz"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "warband",
            "run",
            "scenarios/warzone.py",
            "--param",
            "bots=2",
            "--param",
            f"time_limit={RECORDED_TICKS}",
            "--log",
            str(logs),
            "-q",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert 0 == result.returncode, result.stderr
    return logs


@pytest.fixture(scope="session")
def recorded_cooperation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``--log`` directory of a Prison Escape run (GOAP characters who talk to cooperate)."""
    logs = tmp_path_factory.mktemp("view") / "pe"
    result = subprocess.run(
        [sys.executable, "-m", "warband", "run", "scenarios/prison_escape.py", "--log", str(logs)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert 0 == result.returncode, result.stderr
    return logs


@dataclass
class ViewProcess:
    """A running ``warband view``: its process and the URL it printed first."""

    process: subprocess.Popen[str]
    url: str


@pytest.fixture
def start_view() -> Iterator[Callable[..., ViewProcess]]:
    """Start ``warband view LOG_DIR [OPTIONS]`` on a free port (as many as a test wants; no
    LOG_DIR when it is None, for ``--live``); each is killed and reaped afterwards."""
    pytest.importorskip("aiohttp", reason="warband view needs the view extra (aiohttp)")
    started: list[subprocess.Popen[str]] = []

    def start(log_dir: Path | None, *options: str) -> ViewProcess:
        port = free_tcp_port()
        source = [] if log_dir is None else [str(log_dir)]
        process = subprocess.Popen(
            [sys.executable, "-m", "warband", "view", *source, "--port", str(port), *options],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        started.append(process)
        assert process.stdout is not None
        # readline returns the URL line, or "" when the process ended before printing it.
        first = process.stdout.readline().strip()
        if f"http://127.0.0.1:{port}/" != first:
            process.kill()
            _, err = process.communicate(timeout=10)
            raise AssertionError(f"warband view printed {first!r} first; stderr: {err}")
        return ViewProcess(process, first)

    try:
        yield start
    finally:
        for process in started:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()


@pytest.fixture
def view_process(start_view: Callable[..., ViewProcess], recorded_run: Path) -> ViewProcess:
    """``warband view`` on the recorded run, on a free port."""
    return start_view(recorded_run)


def write_log(log_dir: Path, events: list[dict[str, Any]]) -> Path:
    """A run's log directory holding ``events`` (timestamps added, in order) in one file."""
    log_dir.mkdir()
    lines = [
        json.dumps({"timestamp": f"2026-11-23T10:00:00.{i:06d}+00:00", **event})
        for i, event in enumerate(events)
    ]
    (log_dir / "main.1.jsonl").write_text("\n".join(lines) + "\n")
    return log_dir


def overlay_snapshot(tick: int) -> dict[str, Any]:
    """A world snapshot on Warzone with red's influence over areas 0 and 3 and a corridor."""
    return {
        "event": "world.snapshot",
        "agent": "world",
        "tick": tick,
        "snapshot": {
            "map": "warzone",
            "tick": tick,
            "teams": ["red", "blue"],
            "scores": {"red": 0, "blue": 0},
            "agents": {
                "red-1": {
                    "team": "red",
                    "class": "assault",
                    "x": 5.0,
                    "y": 15.0,
                    "heading": 0.0,
                    "health": 150,
                    "max_health": 150,
                    "state": "alive",
                },
            },
            "influence": {"red": {"0": 1.0, "3": -0.5}},
            "corridors": {"red-squad-1": ["0", "1", "2"]},
        },
    }
