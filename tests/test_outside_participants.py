"""An outside participant a scenario declares (a client in any language): `warband run` waits
for it, the run takes it in like any participant, and `warband trace` shows what it said. The
client here is a raw pyzmq DEALER speaking only PROTOCOL.md: MessagePack maps, the PLAIN pass
of section 10, `_Register`, `_Ready`, `TickDone` at every tick, `_Stats` on `_Shutdown`; as the
heist's helper it also holds a whole cooperation conversation, which the trace draws from both
sides though the client logs nothing."""

from __future__ import annotations

import hashlib
import hmac
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq

from warband.messaging.secret import write_secret

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
        self.tick = 0
        self.ticks: list[int] = []
        self.heard: list[str] = []

    def send(self, kind: str, recipient: str, tick: int | None = None, **fields: Any) -> None:
        control = kind.startswith("_")
        if not control:
            self.sent += 1
        message = {
            "type": kind,
            "sender": "nora",
            "recipient": recipient,
            "id": f"nora:c{time.monotonic_ns()}" if control else f"nora:{self.sent}",
            "seq": 0 if control else self.sent,
            "tick": self.tick if tick is None else tick,
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
                self.tick = message["tick"]
                self.ticks.append(self.tick)
                self.on_tick(self.tick)
                self.send("TickDone", "clock")
            elif kind == "_Shutdown":
                self.send("_Stats", "clock", final_state={"heard": self.heard})
                return True
            else:
                if message.get("ack_token"):  # a reliable message: say it came (section 9)
                    self.send("_Ack", message["sender"], message_id=message["id"])
                self.on_message(message)
        return False

    def on_tick(self, tick: int) -> None:
        if tick == 4 and self.heard:
            self.send("StatusReport", "host", status="hello back", details={})

    def on_message(self, message: dict[str, Any]) -> None:
        if message["type"] == "StatusReport":
            self.heard.append(message["status"])

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


HEIST = """
from warband import Outcome, Scenario
from warband.agents.cooperation import CooperativeAgent, cooperative_role
from warband.planning import Action, Brain, Goal, eq

scenario = Scenario("heist", ticks=20, outside=["nora"])


def _get_away(agent, task):
    agent.memory.remember("away", "rita", True)
    return "done"


@scenario.actors
def actors(params, seed):
    # rita cannot open the vault herself: her plan asks an agent she knows (nora) to.
    brain = Brain(
        "crew",
        goals=[Goal("GetAway", [eq("away(rita)", True)], relevancy=1.0)],
        actions=[Action("GetAway", preconditions=[eq("open(vault)", True, any_agent=True)],
                        effects={"away(rita)": True})],
    )
    role = cooperative_role("crew", brain, {"GetAway": _get_away})
    return [CooperativeAgent("rita", role, acquaintances=["nora"])]


@scenario.outcome
def judge(result, params):
    helped_by = result.final_states.get("rita", {}).get("helped_by", [])
    return Outcome(helped_by == ["nora"], f"helped by {helped_by}", {"helped_by": helped_by})
"""

CONVERSATION = [
    ("rita", "nora", "RequestTalk"),
    ("nora", "rita", "TalkReply"),
    ("rita", "nora", "RequestCooperation"),
    ("nora", "rita", "CooperationReply"),
    ("rita", "nora", "EndTalk"),
    ("nora", "rita", "CooperationResult"),
]


class Accomplice(Nora):
    """nora as the heist's helper: agrees to talk and to open the vault, then says it is open
    (the wire side of Boeda's conversation, PROTOCOL.md sections 5 and 6); it logs nothing."""

    def __init__(self, endpoint: str, secret: bytes) -> None:
        super().__init__(endpoint, secret)
        self.agreed: dict[str, Any] | None = None

    def on_message(self, message: dict[str, Any]) -> None:
        reply = {"reply_to": message["id"], "conversation": message.get("conversation")}
        if message["type"] == "RequestTalk":
            self.send("TalkReply", message["sender"], accepted=True, **reply)
        elif message["type"] == "RequestCooperation":
            self.send("CooperationReply", message["sender"], accepted=True, **reply)
            self.agreed = message

    def on_tick(self, tick: int) -> None:
        if self.agreed is not None:  # the vault is open: a tick after agreeing
            asked, self.agreed = self.agreed, None
            self.send("CooperationResult", asked["sender"], success=True,
                      conversation=asked.get("conversation"))  # fmt: skip


@pytest.mark.processes
def test_the_trace_of_a_heist_with_a_client_that_logs_nothing_draws_both_sides_of_it(
    tmp_path: Path,
) -> None:
    scenario = tmp_path / "heist.py"
    scenario.write_text(HEIST)
    secret_file = write_secret(tmp_path)
    endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
    logs = tmp_path / "logs"
    run = subprocess.Popen(
        [sys.executable, "-m", "warband", "run", str(scenario), "--endpoint", endpoint,
         "--secret", str(secret_file), "--json", "-q", "--log", str(logs)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    nora = Accomplice(endpoint, secret_file.read_text().strip().encode())
    try:
        shut_down = nora.play(time.monotonic() + 120)
        out, err = run.communicate(timeout=120)
    finally:
        nora.close()
        if run.poll() is None:
            run.kill()
            run.wait()
    assert shut_down and 0 == run.returncode, err
    assert ["nora"] == last_json_line(out)["outcome_details"]["helped_by"]
    text, mermaid = (
        subprocess.run(
            [sys.executable, "-m", "warband", "trace", str(logs), "--agent", "nora", *fmt],
            capture_output=True, text=True, timeout=60, cwd=REPO, check=True,
        ).stdout
        for fmt in ([], ["--format", "mermaid"])
    )  # fmt: skip
    for sender, recipient, kind in CONVERSATION:
        side = "sender" if sender == "rita" else "receiver"
        assert re.search(
            rf"{sender} -> {recipient}  {kind} \[rita:\S+\]  \S+  \({side}'s log", text
        )
        assert re.search(
            rf"p\d_{sender}-->>p\d_{recipient}: {kind} \(rita:\S+\) \[{side}'s", mermaid
        )
    assert "never received: 0; received without a logged send: 0" in text
    assert "(nora logged nothing)" in text
    assert "-x" not in mermaid
