"""A run with outside participants and a ``warband gateway`` in front of it, as real processes,
and a JSON WebSocket client written against PROTOCOL.md section 15 alone (aiohttp's client)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.proc import free_tcp_port

aiohttp = pytest.importorskip("aiohttp", reason="warband gateway needs the gateway extra")

PROCESS_TIMEOUT = 120


@dataclass
class Started:
    """A run and its gateway, as processes; ``url`` is the gateway's WebSocket URL."""

    run: subprocess.Popen[str]
    gateway: subprocess.Popen[str]
    url: str
    logs: Path
    tokens: Path | None

    def token(self, agent: str) -> str:
        assert self.tokens is not None
        return (self.tokens / f"{agent}.token").read_text().strip()

    def http(self, path: str) -> str:
        return self.url.replace("ws://", "http://").removesuffix("/ws") + path

    def finish(self) -> tuple[str, str]:
        """Wait for the run to end; its stdout and stderr."""
        return self.run.communicate(timeout=PROCESS_TIMEOUT)

    def stop_gateway(self) -> str:
        """Stop the gateway (SIGTERM); its stderr (the summary line last)."""
        self.gateway.send_signal(signal.SIGTERM)
        _, err = self.gateway.communicate(timeout=30)
        return err


@pytest.fixture
def start_run(tmp_path: Path) -> Iterator[Callable[..., Started]]:
    """Start ``warband run SCENARIO`` on a tcp:// endpoint with a run secret, and a gateway on
    it (with tokens for ``tokens`` ids, if any); both are killed and reaped afterwards."""
    started: list[subprocess.Popen[str]] = []

    def start(
        scenario: str | Path,
        *run_options: str,
        tokens: list[str] | None = None,
        gateway_options: tuple[str, ...] = (),
    ) -> Started:
        if isinstance(scenario, str):
            path = tmp_path / "scenario.py"
            path.write_text(scenario)
            scenario = path
        keys = tmp_path / "keys"
        made = ["--secret", *(["--tokens", ",".join(tokens)] if tokens else [])]
        subprocess.run(
            [sys.executable, "-m", "warband", "keys", str(keys), *made],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
        logs = tmp_path / "logs"
        secret = str(keys / "run.secret")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        run = subprocess.Popen(
            [sys.executable, "-m", "warband", "run", str(scenario), "--endpoint", endpoint,
             "--secret", secret, "--json", "-q", "--log", str(logs / "run"), *run_options],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        started.append(run)
        port = free_tcp_port()
        gateway = subprocess.Popen(
            [sys.executable, "-m", "warband", "gateway", "--connect", endpoint, "--secret",
             secret, "--port", str(port), "--log", str(logs / "gateway"),
             *(["--tokens", str(keys)] if tokens else []), *gateway_options],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        started.append(gateway)
        assert gateway.stdout is not None
        url = gateway.stdout.readline().strip()
        if url != f"ws://127.0.0.1:{port}/ws":
            gateway.kill()
            _, err = gateway.communicate(timeout=10)
            raise AssertionError(f"warband gateway printed {url!r} first; stderr: {err}")
        return Started(run, gateway, url, logs, keys if tokens else None)

    try:
        yield start
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
            process.communicate(timeout=30)


@dataclass
class JsonClient:
    """A thin client: JSON messages over one WebSocket, nothing else (PROTOCOL.md section 15)."""

    ws: Any
    received: list[dict[str, Any]] = field(default_factory=list)
    close_code: int | None = None
    """The code of the gateway's close frame (None: none came)."""
    close_reason: str = ""

    async def send(self, **message: Any) -> None:
        await self.ws.send_str(json.dumps(message))

    async def receive(self, timeout: float = 30) -> dict[str, Any] | None:
        """The next message, or None when the gateway closed the connection."""
        frame = await asyncio.wait_for(self.ws.receive(), timeout)
        if frame.type == aiohttp.WSMsgType.CLOSE:
            self.close_code, self.close_reason = int(frame.data), str(frame.extra or "")
        if frame.type != aiohttp.WSMsgType.TEXT:
            return None
        message: dict[str, Any] = json.loads(frame.data)
        self.received.append(message)
        return message

    async def until(self, kind: str, timeout: float = 30) -> dict[str, Any]:
        while True:
            message = await self.receive(timeout)
            assert message is not None, f"closed ({self.ws.close_code}) before a {kind} came"
            if message["type"] == kind:
                return message

    async def until_closed(self, timeout: float = 60) -> tuple[int | None, str]:
        while await self.receive(timeout) is not None:
            pass
        return self.close_code, self.close_reason


def read_events(log_dir: Path, event: str) -> list[dict[str, Any]]:
    """Every ``event`` in the JSON logs under ``log_dir``."""
    found = []
    for file in sorted(log_dir.rglob("*.jsonl")):
        for line in file.read_text().splitlines():
            if line.strip() and json.loads(line).get("event") == event:
                found.append(json.loads(line))
    return found
