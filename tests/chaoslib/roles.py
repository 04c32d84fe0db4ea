"""What a child process of the benchmark does: ``python -m tests.chaoslib.roles ROLE ARGS``
(see :func:`tests.chaoslib.children.role_argv`), reporting to its parent in JSON lines.

Raw-pyzmq roles (the baselines' ends, no warband imported):

- ``raw-sender ENDPOINT COUNT HEARTBEAT_S [STOP]``: a DEALER sending COUNT numbered frames at
  RATE;
- ``raw-receiver ENDPOINT SECONDS [STOP]``: a ROUTER counting numbered frames, echoing or
  blocking on request.

warband roles (tests/chaoslib/actors.py): ``sink ENDPOINT SECONDS [STOP]``, ``source ENDPOINT
COUNT [STOP]`` and ``bot ENDPOINT 0``. With a STOP file, senders end once it exists and
receivers STOP_GRACE_S after: the parent creates it when its faults are over, however long
they lasted.
"""

from __future__ import annotations

import struct
import sys
import threading
import time
from pathlib import Path

import zmq

from .children import emit
from .timing import BLACKHOLE_S, RATE, STOP_GRACE_S, zmtp_heartbeats


def raw_sender(endpoint: str, count: int, heartbeat_s: float, stop: Path | None = None) -> None:
    """DEALER sending ``count`` numbered frames at RATE (fewer once the file ``stop`` exists);
    reports disconnects and what it sent."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    dealer = context.socket(zmq.DEALER)
    zmtp_heartbeats(dealer, heartbeat_s)
    dealer.setsockopt(zmq.LINGER, 2000)
    monitor = dealer.get_monitor_socket(zmq.EVENT_DISCONNECTED | zmq.EVENT_CONNECTED)
    dealer.connect(endpoint)
    events: list[tuple[str, float]] = []

    def watch() -> None:
        from zmq.utils.monitor import recv_monitor_message

        while True:
            try:
                event = recv_monitor_message(monitor)
            except zmq.ZMQError:
                return
            name = "disconnected" if event["event"] == zmq.EVENT_DISCONNECTED else "connected"
            events.append((name, time.monotonic()))

    threading.Thread(target=watch, daemon=True).start()
    start = time.monotonic()
    emit(ready=start)
    sent = 0
    for seq in range(count):
        if stop is not None and stop.exists():
            break
        delay = start + seq / RATE - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        dealer.send(struct.pack(">Q", seq))
        sent += 1
    time.sleep(3)
    emit(sent=sent, events=events)
    dealer.disable_monitor()
    dealer.close()
    context.term()


def raw_receiver(endpoint: str, duration: float, stop: Path | None = None) -> None:
    """ROUTER counting numbered frames for ``duration`` s, or until STOP_GRACE_S after the file
    ``stop`` exists; echoes them when asked to."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    router = context.socket(zmq.ROUTER)
    router.bind(endpoint)
    router.setsockopt(zmq.RCVTIMEO, 100)
    emit(ready=time.monotonic())
    received: list[tuple[int, float]] = []
    deadline = time.monotonic() + duration
    while time.monotonic() < deadline:
        if stop is not None and stop.exists():
            deadline = min(deadline, time.monotonic() + STOP_GRACE_S)
            stop = None
        try:
            peer, payload = router.recv_multipart()
        except zmq.Again:
            continue
        if payload == b"block":
            time.sleep(BLACKHOLE_S)
            continue
        if payload.startswith(b"echo"):
            router.send_multipart([peer, payload])
            continue
        received.append((struct.unpack(">Q", payload)[0], time.monotonic()))
    emit(received=received)
    router.close(linger=0)
    context.term()


def main(argv: list[str]) -> int:
    """Play the role ``argv[0]`` with the arguments after it."""
    role, *args = argv
    if role == "raw-sender":
        stop = Path(args[3]) if len(args) > 3 else None
        raw_sender(args[0], int(args[1]), float(args[2]), stop)
    elif role == "raw-receiver":
        raw_receiver(args[0], float(args[1]), Path(args[2]) if len(args) > 2 else None)
    else:
        from .actors import run_actor

        run_actor(role, args[0], float(args[1]), Path(args[2]) if len(args) > 2 else None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
