"""An outside participant a scenario declares (a client in any language): `warband run` waits
for it, the run takes it in like any participant, and `warband trace` shows what it said. The
client here is a raw pyzmq DEALER speaking only PROTOCOL.md: MessagePack maps, the PLAIN pass
of section 10, `_Register`, `_Ready`, `TickDone` at every tick, `_Stats` on `_Shutdown`."""

from __future__ import annotations

import hashlib
import hmac
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq

from .conftest import REPO, last_json_line
from .proc import free_tcp_port

SCENARIO = """
from warband import Actor, Outcome, Scenario, StatusReport, handles

scenario = Scenario("with_nora", ticks=12, outside=["nora"])


class Host(Actor):
    def __init__(self) -> None:
        super().__init__("host")
        self.heard: list[list[object]] = []

    @handles(StatusReport)
    def on_status(self, report: StatusReport) -> None:
        self.heard.append([report.sender, report.status, report.tick])

    def on_tick(self, tick: int) -> None:
        if tick == 2:
            self.send(StatusReport(recipient="nora", status="hello"))

    def final_state(self) -> dict[str, object]:
        return {"heard": self.heard}


@scenario.actors
def actors(params, seed):
    return [Host()]


@scenario.outcome
def judge(result, params):
    heard = result.final_states.get("host", {}).get("heard", [])
    return Outcome(bool(heard), f"host heard {heard}", {"heard": heard})
"""


class Nora:
    """The outside client: registers, joins the ticks, answers host's hello with its own."""

    def __init__(self, endpoint: str, secret: bytes) -> None:
        self.context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        self.socket = self.context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.ROUTING_ID, b"nora")
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.plain_username = b"nora"
        self.socket.plain_password = hmac.new(secret, b"nora", hashlib.sha256).hexdigest().encode()
        self.socket.connect(endpoint)
        self.sent = 0
        self.ticks: list[int] = []
        self.heard: list[str] = []

    def send(self, kind: str, recipient: str, tick: int = 0, **fields: Any) -> None:
        control = kind.startswith("_")
        if not control:
            self.sent += 1
        message = {
            "type": kind,
            "sender": "nora",
            "recipient": recipient,
            "id": f"nora:c{time.monotonic_ns()}" if control else f"nora:{self.sent}",
            "seq": 0 if control else self.sent,
            "tick": tick,
            **fields,
        }
        self.socket.send(msgpack.packb(message))

    def play(self, deadline: float) -> bool:
        """Until ``_Shutdown``: True when it came."""
        self.send("_Register", "broker", groups=["ticks"], lockstep=True)
        while time.monotonic() < deadline:
            if not self.socket.poll(100):
                continue
            message = msgpack.unpackb(self.socket.recv())
            kind = message.get("type")
            joined = kind == "_Registered" and "clock" in message.get("peers", [])
            if joined or kind == "_RollCall":
                self.send("_Ready", "clock")
            elif kind == "Tick":
                tick = message["tick"]
                self.ticks.append(tick)
                if tick == 4 and self.heard:
                    self.send("StatusReport", "host", tick, status="hello back", details={})
                self.send("TickDone", "clock", tick)
            elif kind == "StatusReport":
                self.heard.append(message["status"])
            elif kind == "_Shutdown":
                self.send("_Stats", "clock", final_state={"heard": self.heard})
                return True
        return False

    def close(self) -> None:
        self.socket.close(linger=0)
        self.context.term()


@pytest.mark.processes
@pytest.mark.parametrize("processes", [False, True], ids=["one-process", "processes"])
def test_a_declared_outside_client_joins_plays_every_tick_and_shows_in_the_trace(
    tmp_path: Path, processes: bool
) -> None:
    scenario = tmp_path / "with_nora.py"
    scenario.write_text(SCENARIO)
    keys = subprocess.run(
        [sys.executable, "-m", "warband", "keys", str(tmp_path / "keys"), "--secret"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert 0 == keys.returncode, keys.stderr
    secret_file = tmp_path / "keys" / "run.secret"
    endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
    logs = tmp_path / "logs"
    argv = [sys.executable, "-m", "warband", "run", str(scenario), "--endpoint", endpoint,
            "--secret", str(secret_file), "--json", "-q", "--log", str(logs)]  # fmt: skip
    run = subprocess.Popen(
        [*argv, *(["--processes"] if processes else [])],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    nora = Nora(endpoint, secret_file.read_text().strip().encode())
    try:
        shut_down = nora.play(time.monotonic() + 120)
        out, err = run.communicate(timeout=120)
    finally:
        nora.close()
        if run.poll() is None:
            run.kill()
            run.wait()
    assert shut_down, err
    assert 0 == run.returncode, err
    report = last_json_line(out)
    assert report["completed"], report
    assert list(range(1, 13)) == nora.ticks  # it took part in every tick
    assert ["hello"] == nora.heard
    assert [["nora", "hello back", 4]] == report["outcome_details"]["heard"]
    trace = subprocess.run(
        [sys.executable, "-m", "warband", "trace", str(logs), "--agent", "nora"],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )  # fmt: skip
    assert "nora -> host  StatusReport" in trace.stdout
    assert "(receiver's log only)" in trace.stdout


def test_a_run_with_outside_participants_needs_an_endpoint_they_reach_and_a_secret(
    tmp_path: Path,
) -> None:
    scenario = tmp_path / "with_nora.py"
    scenario.write_text(SCENARIO)
    plain = subprocess.run(
        [sys.executable, "-m", "warband", "run", str(scenario)],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )  # fmt: skip
    assert 2 == plain.returncode
    assert "declares outside participants (nora)" in plain.stderr
    assert "--endpoint tcp://HOST:PORT" in plain.stderr
    tcp = f"tcp://127.0.0.1:{free_tcp_port()}"
    no_secret = subprocess.run(
        [sys.executable, "-m", "warband", "run", str(scenario), "--endpoint", tcp],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )  # fmt: skip
    assert 2 == no_secret.returncode
    assert "pass --secret FILE" in no_secret.stderr
