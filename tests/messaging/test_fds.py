"""No leaks under churn (issue 12, test 8): 2,000 actor starts and stops in one process, then
200 restarts of a supervised process that connects to the broker and crashes; the file
descriptors of this process (the broker and the supervisor live in it) come back to where they
were, and nothing ever fails with EMFILE."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
import zmq

from tests.proc import free_tcp_port, wait_until
from warband.messaging import Actor
from warband.messaging import broker as broker_module
from warband.messaging.addresses import BROKER_ID
from warband.messaging.broker import Broker
from warband.messaging.catalog import _Leave, _Left, _Register, _Registered
from warband.messaging.codec import Codec
from warband.messaging.supervisor import Supervisor

ACTOR_STARTS = 2_000
AT_ONCE = 50
PROCESS_RESTARTS = 200


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _settle(baseline: int, timeout: float = 15.0) -> int:
    """The fd count once it is back at ``baseline`` (ZeroMQ closes sockets in its own threads,
    a moment after close()), or the last count seen after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    count = _fds()
    while count > baseline and time.monotonic() < deadline:
        time.sleep(0.05)
        count = _fds()
    return count


@pytest.fixture
def broker() -> Iterator[Broker]:
    running = Broker(f"tcp://127.0.0.1:{free_tcp_port()}")
    running.start()
    try:
        yield running
    finally:
        running.stop()


async def _start_and_stop(
    endpoint: str, context: zmq.Context[zmq.Socket[bytes]], round_number: int
) -> None:
    actors = [Actor(f"bot-{round_number}-{n}") for n in range(AT_ONCE)]
    tasks = [
        asyncio.create_task(
            actor.run(endpoint, context=context, mode="realtime", heartbeat_interval=0)
        )
        for actor in actors
    ]
    try:
        for actor in actors:
            await actor.wait_started(30)
    finally:
        for actor in actors:
            actor.stop()
        for result in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(result, BaseException):
                raise result


def test_2000_actor_starts_and_200_process_restarts_leave_no_file_descriptor_behind(
    broker: Broker, tmp_path: Path
) -> None:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    with structlog.testing.capture_logs() as logs:
        try:
            # One round first: ZeroMQ opens its I/O thread's descriptors on first use.
            asyncio.run(_start_and_stop(broker.bound_endpoint, context, 0))
            baseline = _settle(0, timeout=0.5)
            baseline = _settle(baseline)
            started = time.monotonic()
            for round_number in range(1, ACTOR_STARTS // AT_ONCE + 1):
                asyncio.run(_start_and_stop(broker.bound_endpoint, context, round_number))
            actors_s = time.monotonic() - started
            after_actors = _settle(baseline)

            started = time.monotonic()
            restarts = _restart_crashing_process(broker.bound_endpoint)
            processes_s = time.monotonic() - started
            after_processes = _settle(baseline)
        finally:
            context.term()
    print(
        f"fds: baseline {baseline}, after {ACTOR_STARTS} actor starts {after_actors} "
        f"({actors_s:.1f} s), after {restarts} process restarts {after_processes} "
        f"({processes_s:.1f} s)"
    )
    assert PROCESS_RESTARTS == restarts
    assert baseline >= after_actors
    assert baseline >= after_processes
    assert broker.is_running()
    assert [] == [e for e in logs if "Too many open files" in str(e) or "EMFILE" in str(e)]


# The crashing child imports only zmq (found where this interpreter finds it): it connects with
# a fresh id per incarnation, registers, waits for the answer and dies without closing anything.
_CHILD = """
import os, sys
sys.path.insert(0, sys.argv[1])
import zmq
number = os.environ["WARBAND_INCARNATION"].zfill(3)
socket = zmq.Context().socket(zmq.DEALER)
socket.setsockopt(zmq.ROUTING_ID, ("crash-" + number).encode())
socket.setsockopt(zmq.RCVTIMEO, 10000)
socket.connect(sys.argv[2])
socket.send(bytes.fromhex(sys.argv[3].replace("@@@", number.encode().hex())))
socket.recv()
os._exit(1)
"""


def _restart_crashing_process(endpoint: str) -> int:
    # The _Register frame, with "@@@" standing for the incarnation number (3 digits, so the
    # MessagePack string lengths stay right) in the id fields.
    template = Codec().encode(_Register(sender="crash-@@@", recipient=BROKER_ID, id="crash-@@@:c1"))
    frame = template.hex().replace(b"@@@".hex(), "@@@")
    zmq_home = str(Path(zmq.__file__).resolve().parents[1])
    supervisor = Supervisor(max_restarts=PROCESS_RESTARTS, restart_period=3600.0)
    managed = supervisor.start(
        "crash", [sys.executable, "-I", "-S", "-c", _CHILD, zmq_home, endpoint, frame]
    )
    deadline = time.monotonic() + 240
    try:
        while not managed.finished:
            assert time.monotonic() < deadline, f"only {managed.restarts} restarts in 240 s"
            supervisor.check()
            time.sleep(0.005)
    finally:
        supervisor.stop_all(grace=0.5)
    return managed.restarts


def test_actors_restarted_at_once_under_their_old_ids_all_get_in_and_leave_nothing_behind(
    broker: Broker,
) -> None:
    # The same 50 ids, stopped and started again right away, 12 times: a new connection often
    # comes before the broker has seen the old one go, and is refused as a squatter until it
    # has. The broker must keep reading its connection monitor while busy, or the events that
    # tell the old connection went away are dropped and the new one is never let in; and the
    # old connection's last frames, read late, must not mark the new one heard on the
    # descriptor it reused (test_router_watch.py has that sequence on its own).
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    try:
        asyncio.run(_start_and_stop(broker.bound_endpoint, context, 0))
        baseline = _settle(0, timeout=0.5)
        for _ in range(12):
            asyncio.run(_start_and_stop(broker.bound_endpoint, context, 0))
        after = _settle(baseline)
    finally:
        context.term()
    assert baseline >= after
    assert broker.is_running()


def test_the_broker_remembers_only_the_latest_departures(monkeypatch: pytest.MonkeyPatch) -> None:
    # Departures are kept for watchers that register later; an endless stream of new ids
    # (restarts under fresh ids) must not grow the broker without bound.
    monkeypatch.setattr(broker_module, "GONE_KEPT", 3)
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    codec = Codec()
    running = Broker(f"inproc://gone-{id(context)}", context=context)
    running.start()

    def client(agent: str, watch: list[str]) -> zmq.Socket[bytes]:
        socket = context.socket(zmq.DEALER)
        socket.setsockopt(zmq.ROUTING_ID, agent.encode())
        socket.setsockopt(zmq.LINGER, 1000)
        socket.setsockopt(zmq.RCVTIMEO, 5000)
        socket.connect(running.bound_endpoint)
        socket.send(codec.encode(_Register(sender=agent, recipient=BROKER_ID, watch=watch)))
        assert isinstance(codec.decode(socket.recv()), _Registered)
        return socket

    try:
        for number in range(5):
            agent = f"bot-{number}"
            socket = client(agent, [])
            socket.send(codec.encode(_Leave(sender=agent, recipient=BROKER_ID)))
            socket.close()
        # Each client has its own pipe into the broker, which reads them in turn: a _Register
        # sent now could be read before the last _Leave, and the watcher then be told of bot-4
        # live, on top of the three kept. Register once all five departures are in.
        wait_until(lambda: 5 == running.stats.departed, 60, "the broker to count 5 departures")
        watcher = client("clock", ["*"])
        watcher.setsockopt(zmq.RCVTIMEO, 500)
        told = []
        with pytest.raises(zmq.Again):
            while True:
                notice = codec.decode(watcher.recv())
                assert isinstance(notice, _Left)
                told.append(notice.agent)
        watcher.close()
    finally:
        running.stop()
        context.term()
    assert ["bot-2", "bot-3", "bot-4"] == told
