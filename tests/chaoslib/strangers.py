"""The ``strangers`` fault: raw DEALERs on a run's TCP port that are none of its own (issue 25).

During one ``warband run tests/scenarios/endless.py --processes --endpoint tcp://...`` run, right
after tick 3, strangers speaking only PROTOCOL.md try what an outsider on the port could:

- ``rogue8`` registers (an id the scenario does not declare), joins ``ticks``, sends ``_Ready``
  and ``_FinishRun`` to the clock (which would end the run) and stays silent (which would stall
  every tick for its timeout);
- ``supervisor`` sends 150 ``_GaveUp`` for the run's agents (which would depart them);
- bot-1 is killed with ``kill -9`` and an impostor claims ``bot-1`` every 50 ms while the
  supervisor restarts it (which would lock the real bot-1 out and take its messages).

Its baseline is the same run with the same ``kill -9`` and no stranger. The fault passes when
the strangers changed nothing in the run's summary (ticks, how it ended, departures, tick
timeouts, missing reports, restarts): ``lost`` counts the summary keys that differ, and the
frames any stranger was answered.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import msgpack
import zmq

from .processes import Launch, last_json, process_groups, scratch_dir, start_run, wait_until
from .result import Result, progress

ENDLESS = "tests/scenarios/endless.py"
COMPARED = ("ticks", "finish_reason", "completed", "departed", "tick_timeouts", "missing")
"""The summary keys a stranger must not change (``restarts`` is compared too: the kill's one)."""


def strangers(ticks: int) -> Result:
    """The fault (see the module docstring) on a run of ``ticks`` ticks, next to its baseline."""
    progress(f"strangers: baseline run of {ticks} ticks, bot-1 killed with -9 at tick 3")
    baseline = _run(ticks, with_strangers=False)
    progress("strangers: the same run with strangers on its port")
    attacked = _run(ticks, with_strangers=True)
    if "error" in baseline or "error" in attacked:
        return Result("strangers", False, note=str(baseline.get("error") or attacked["error"]))
    summary, reference = attacked["summary"], baseline["summary"]
    differ = [key for key in (*COMPARED, "restarts") if summary.get(key) != reference.get(key)]
    answered = attacked["answered"]
    passed = not differ and answered == 0 and summary.get("completed") is True
    return Result(
        "strangers",
        passed,
        lost=len(differ),
        figures={
            "ticks": summary.get("ticks"),
            "finish_reason": summary.get("finish_reason"),
            "departed": summary.get("departed"),
            "tick_timeouts": summary.get("tick_timeouts"),
            "restarts": summary.get("restarts"),
            "differs_from_baseline": differ,
            # What the run without strangers gave for those keys: a baseline that itself went
            # wrong (not the strangers' doing) reads differently from one they changed.
            "baseline_values": {key: reference.get(key) for key in differ},
            "stranger_frames": attacked["sent"],
            "stranger_frames_answered": answered,
            "seconds": attacked["seconds"],
            "baseline_seconds": baseline["seconds"],
        },
        note="lost = keys of the run's summary the strangers changed (ticks, finish_reason, "
        "completed, departed, tick_timeouts, missing, restarts), against the same run and kill "
        "without strangers",
    )


def _run(ticks: int, *, with_strangers: bool) -> dict[str, Any]:
    with scratch_dir() as tmp:
        endpoint = f"tcp://127.0.0.1:{_free_port()}"
        marker = tmp / "ticking"
        launch = start_run(
            tmp,
            "strangers",
            ENDLESS,
            "--endpoint",
            endpoint,
            "--ticks",
            str(ticks),
            "--param",
            f"marker={marker}",
        )
        groups: set[int] = set()
        started = time.monotonic()
        try:
            if not wait_until(lambda: marker.exists() or launch.process.poll() is not None, 120):
                return {"error": "the run did not reach tick 3 within 120 s"}
            groups.update(process_groups(launch.process.pid))
            bot_1 = int(marker.read_text())
            if with_strangers:
                sent, answered = _attack(endpoint, bot_1, launch)
            else:
                os.kill(bot_1, signal.SIGKILL)
                sent = answered = 0
                launch.process.wait(timeout=600)
        except (OSError, ValueError) as error:
            return {"error": f"the harness failed: {error!r}"}
        finally:
            launch.kill_all(groups)
        summary = last_json(launch.out.read_text())
        if summary is None:
            return {"error": f"no summary line: {launch.err.read_text()[-500:]}"}
        seconds = round(time.monotonic() - started, 2)
        return {"summary": summary, "sent": sent, "answered": answered, "seconds": seconds}


def _attack(endpoint: str, bot_1: int, launch: Launch) -> tuple[int, int]:
    """Every stranger of the module docstring, until the run ends; (frames they tried to
    send, frames they were answered)."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    sent = answered = 0
    stop = threading.Event()
    counts = {"sent": 0, "answered": 0}

    def impostor() -> None:
        with stranger(context, endpoint, "bot-1") as claimant:
            number = 0
            while not stop.is_set():
                number += 1
                _offer(claimant, _frame("_Register", "bot-1", "broker", number, lockstep=False))
                counts["sent"] += 1
                counts["answered"] += _drain(claimant)
                time.sleep(0.05)

    try:
        with (
            stranger(context, endpoint, "rogue8") as rogue,
            stranger(context, endpoint, "supervisor") as liar,
        ):
            _offer(rogue, _frame("_Register", "rogue8", "broker", 1, groups=["ticks"]))
            _offer(rogue, _frame("_Ready", "rogue8", "clock", 2))
            _offer(rogue, _frame("_FinishRun", "rogue8", "clock", 3, reason="rogue8 ends the run"))
            sent += 3
            for number in range(1, 151):
                victim = ("bot-1", "bot-2", "clock")[number % 3]
                _offer(liar, _frame("_GaveUp", "supervisor", "broker", number, agent=victim))
                sent += 1
            os.kill(bot_1, signal.SIGKILL)
            claiming = threading.Thread(target=impostor, name="strangers-impostor")
            claiming.start()
            try:
                launch.process.wait(timeout=600)
            finally:
                stop.set()
                claiming.join(10)
            answered += _drain(rogue) + _drain(liar)
    finally:
        context.destroy(linger=0)
    return sent + counts["sent"], answered + counts["answered"]


@contextlib.contextmanager
def stranger(
    context: zmq.Context[zmq.Socket[bytes]], endpoint: str, agent_id: str
) -> Iterator[zmq.Socket[bytes]]:
    """A DEALER that claims ``agent_id`` (PROTOCOL.md, section 1), and nothing more."""
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.ROUTING_ID, agent_id.encode())
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(endpoint)
    try:
        yield socket
    finally:
        socket.close(linger=0)


def _frame(kind: str, sender: str, recipient: str, number: int, **fields: Any) -> bytes:
    """A frame as PROTOCOL.md spells it: one MessagePack map."""
    data: bytes = msgpack.packb(
        {"type": kind, "sender": sender, "recipient": recipient, "id": f"{sender}:c{number}"}
        | fields
    )
    return data


def _offer(socket: zmq.Socket[bytes], data: bytes) -> None:
    """Send without blocking: once its handshake failed, a DEALER has no peer to queue for."""
    with contextlib.suppress(zmq.Again):
        socket.send(data, zmq.NOBLOCK)


def _drain(socket: zmq.Socket[bytes]) -> int:
    count = 0
    while socket.poll(0):
        socket.recv()
        count += 1
    return count


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
