"""A recorded Warzone match shared by the view tests, and a ``warband view`` process fixture."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

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


@dataclass
class ViewProcess:
    """A running ``warband view``: its process and the URL it printed first."""

    process: subprocess.Popen[str]
    url: str


@pytest.fixture
def view_process(recorded_run: Path) -> Iterator[ViewProcess]:
    """``warband view`` on the recorded run, on a free port; killed and reaped afterwards."""
    pytest.importorskip("aiohttp", reason="warband view needs the view extra (aiohttp)")
    port = free_tcp_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "warband", "view", str(recorded_run), "--port", str(port)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        # readline blocks until the URL line; the process's own exit ends it too.
        first = process.stdout.readline().strip()
        assert f"http://127.0.0.1:{port}/" == first, process.stderr.read() if process.stderr else ""
        yield ViewProcess(process, first)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
