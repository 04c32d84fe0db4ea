"""Only the run's own can end it, stall it or depart anyone (issue 25, findings 1, 2, 3 and 5).

Real processes on real TCP ports. Every stranger is a plain pyzmq DEALER speaking only
PROTOCOL.md (MessagePack maps, no warband import on its side), as an attacker on the port or a
client in another language would be. Every process a test starts is killed and reaped when the
test ends, pass or fail (``Launched``; a launcher's children end with it).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq

from tests.chaoslib.strangers import stranger
from tests.conftest import REPO, last_json_line, read_log_events
from tests.proc import free_tcp_port, wait_until
from tests.test_runs_that_end import Launched

pytestmark = [
    pytest.mark.processes,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)"),
]

ENDLESS = str(REPO / "tests" / "scenarios" / "endless.py")
PING_PONG = str(REPO / "scenarios" / "ping_pong.py")
TICKS = 20_000
"""Long enough that whatever a stranger does right after tick 3 lands mid-run (the idle run
takes some 10 s on two loaded cores); the run ends on its own at this tick."""
STARTUP_S = 120.0
RUN_S = 600.0
"""Generous bounds: a loaded machine is slow, and nothing here asserts how fast it is."""

Context = zmq.Context[zmq.Socket[bytes]]


@pytest.fixture
def launched(tmp_path: Path) -> Iterator[Launched]:
    processes = Launched(tmp_path)
    try:
        yield processes
    finally:
        processes.kill_all()


@pytest.fixture
def context() -> Iterator[Context]:
    context: Context = zmq.Context()
    yield context
    context.destroy(linger=0)


def frame(kind: str, sender: str, recipient: str, number: int = 1, **fields: Any) -> bytes:
    """One frame as PROTOCOL.md spells it (sections 3 and 5)."""
    data: bytes = msgpack.packb(
        {"type": kind, "sender": sender, "recipient": recipient, "id": f"{sender}:c{number}"}
        | fields
    )
    return data


def offer(socket: zmq.Socket[bytes], data: bytes) -> None:
    """Send without blocking: once its handshake failed, a DEALER has no peer to queue for."""
    with contextlib.suppress(zmq.Again):
        socket.send(data, zmq.NOBLOCK)


def received(socket: zmq.Socket[bytes]) -> list[dict[str, Any]]:
    """Every frame waiting in ``socket``, decoded."""
    frames = []
    while socket.poll(0):
        frames.append(msgpack.unpackb(socket.recv()))
    return frames


def start_ticking(
    launched: Launched, tmp_path: Path, *args: str, processes: bool = True
) -> tuple[str, int]:
    """``warband run ENDLESS --processes`` (or in one process) on a TCP port, under way (tick 3
    reached): returns the endpoint and the pid of bot-1, which writes the marker file then."""
    endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
    marker = tmp_path / "ticking"
    launcher = launched.start(
        "run",
        "run",
        ENDLESS,
        *(["--processes"] if processes else []),
        "--endpoint",
        endpoint,
        "--ticks",
        str(TICKS),
        "--param",
        f"marker={marker}",
        "--json",
        "--quiet",
        *args,
    )
    wait_until(lambda: marker.exists() or launcher.poll() is not None, STARTUP_S, "tick 3")
    assert launcher.poll() is None, launched.stderr("run")
    return endpoint, int(marker.read_text())


def run_summary(launched: Launched) -> dict[str, Any]:
    assert 0 == launched.wait("run", RUN_S), launched.stderr("run")
    return last_json_line((launched.folder / "run.out").read_text())


# --- finding 1: a stranger can end or stall a run -----------------------------------------------


@pytest.mark.parametrize("processes", [True, False], ids=["processes", "one-process"])
def test_a_stranger_on_the_port_can_neither_end_nor_stall_a_run(
    launched: Launched, tmp_path: Path, context: Context, processes: bool
) -> None:
    endpoint, _ = start_ticking(launched, tmp_path, processes=processes)
    with (
        stranger(context, endpoint, "rogue8") as ender,
        stranger(context, endpoint, "rogue9") as staller,
    ):
        offer(ender, frame("_Register", "rogue8", "broker", 1, groups=["ticks"], lockstep=False))
        offer(ender, frame("_Ready", "rogue8", "clock", 2))
        offer(ender, frame("_FinishRun", "rogue8", "clock", 3, reason="rogue8 ends the run"))
        # Joins the ticks and stays silent: each tick would wait its timeout for it.
        offer(staller, frame("_Register", "rogue9", "broker", 1, groups=["ticks"], lockstep=False))
        offer(staller, frame("_Ready", "rogue9", "clock", 2))
        summary = run_summary(launched)
        got = received(ender) + received(staller)
    assert (TICKS, "ticks", True) == (
        summary["ticks"],
        summary["finish_reason"],
        summary["completed"],
    )
    assert (0, [], {}) == (summary["tick_timeouts"], summary["missing"], summary["departed"])
    assert [] == got, "a stranger without the run's secret was answered"


# --- finding 2: a stranger can make the broker depart any agent ---------------------------------


def test_a_stranger_calling_itself_supervisor_departs_nobody(
    launched: Launched, tmp_path: Path, context: Context
) -> None:
    endpoint, _ = start_ticking(launched, tmp_path)
    with stranger(context, endpoint, "supervisor") as liar:
        for number in range(1, 151):
            victim = ("bot-1", "bot-2", "clock")[number % 3]
            gave_up = frame("_GaveUp", "supervisor", "broker", number, agent=victim, reason="spam")
            offer(liar, gave_up)
        summary = run_summary(launched)
        got = received(liar)
    assert ({}, True, TICKS) == (summary["departed"], summary["completed"], summary["ticks"])
    assert {"bot-1", "bot-2", "clock"} == set(summary["pids"]) - {"broker"}
    assert [] == got


# --- finding 3: an impostor during a restart -----------------------------------------------------


def test_a_restarted_agent_gets_its_id_back_from_an_impostor_that_keeps_claiming_it(
    launched: Launched, tmp_path: Path, context: Context
) -> None:
    endpoint, bot_1 = start_ticking(launched, tmp_path, "--log", str(tmp_path / "log"))
    stop = threading.Event()
    answers: list[dict[str, Any]] = []

    def claim_bot_1() -> None:
        # Claims the id at once, before the supervisor restarts bot-1, and keeps claiming it:
        # a fresh registration every 50 ms on a connection that ZeroMQ keeps re-opening.
        with stranger(context, endpoint, "bot-1") as impostor:
            number = 0
            while not stop.is_set():
                number += 1
                offer(impostor, frame("_Register", "bot-1", "broker", number, lockstep=False))
                answers.extend(received(impostor))
                time.sleep(0.05)

    impostor = threading.Thread(target=claim_bot_1)
    os.kill(bot_1, signal.SIGKILL)
    impostor.start()
    try:
        summary = run_summary(launched)
    finally:
        stop.set()
        impostor.join(10)
    assert (1, {}, True, TICKS) == (
        summary["restarts"],
        summary["departed"],
        summary["completed"],
        summary["ticks"],
    )
    assert 2 == len(summary["pids"]["bot-1"])
    assert [] == answers, "the impostor was answered"
    events = read_log_events(tmp_path / "log")
    rejoined = [e for e in events if e["event"] == "agent.rejoined" and e["peer"] == "bot-1"]
    assert rejoined, "the restarted bot-1 never took part again"


# --- finding 5: a broker serves one run only -----------------------------------------------------


def _recipe_run(
    launched: Launched, endpoint: str, number: int, broker_log: Path, secret: list[str]
) -> dict[str, Any]:
    """One run of the README's multi-host recipe on the running broker: the agents first (the
    order that broke the second run), then the clock; returns the clock's result."""
    common = ["agent", "--connect", endpoint, "--scenario", PING_PONG, *secret]
    agents = ("commander", "bot-1", "bot-2")
    for agent in agents:
        launched.start(f"{agent}-{number}", *common, "--id", agent)

    def all_registered() -> bool:
        if any(launched.processes[f"{a}-{number}"].poll() is not None for a in agents):
            return True  # one stopped already: the exit codes below say why
        events = read_log_events(broker_log)
        joined = [e["peer"] for e in events if e["event"] == "broker.register"]
        return all(joined.count(agent) >= number for agent in agents)

    wait_until(all_registered, STARTUP_S, f"the agents of run {number} to register")
    result = launched.folder / f"result-{number}.json"
    launched.start(f"clock-{number}", *common, "--id", "clock", "--result", str(result))
    for name in ("clock", *agents):
        code = launched.wait(f"{name}-{number}", RUN_S)
        assert 0 == code, launched.stderr(f"{name}-{number}")
    data: dict[str, Any] = json.loads(result.read_text())
    return data


@pytest.mark.parametrize("with_secret", [False, True], ids=["open", "secret"])
def test_the_second_run_of_the_multi_host_recipe_plays_as_the_first_did(
    launched: Launched, tmp_path: Path, context: Context, with_secret: bool
) -> None:
    endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
    broker_log = tmp_path / "broker-log"
    secret: list[str] = []
    if with_secret:
        # The recipe as README's Security section gives it: one secret file for every process.
        launched.start("keys", "keys", str(tmp_path / "keys"), "--secret")
        assert 0 == launched.wait("keys", STARTUP_S), launched.stderr("keys")
        secret = ["--secret", str(tmp_path / "keys" / "run.secret")]
    launched.start("broker", "broker", "--bind", endpoint, "--log", str(broker_log), *secret)
    first = _recipe_run(launched, endpoint, 1, broker_log, secret)
    with stranger(context, endpoint, "supervisor") as liar:
        # Between the runs, on an open broker too: nobody can prove to be the supervisor.
        offer(liar, frame("_GaveUp", "supervisor", "broker", 1, agent="bot-1"))
        second = _recipe_run(launched, endpoint, 2, broker_log, secret)
        answers = received(liar)
    assert (first["ticks"], first["completed"], first["departed"]) == (15, True, {})
    for key in ("ticks", "finish_reason", "completed", "departed", "messages_sent", "missing"):
        assert first[key] == second[key], key
    assert first["final_states"] == second["final_states"]
    assert launched.processes["broker"].poll() is None, "the broker stopped"
    if with_secret:
        assert [] == answers  # it never got in
    else:
        [refusal] = answers
        assert "no connection can prove it is 'supervisor'" in refusal["reason"]
