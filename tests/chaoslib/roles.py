"""What a child process of the benchmark does: ``python -m tests.chaoslib.roles ROLE ARGS``
(see :func:`tests.chaoslib.children.role_argv`), reporting to its parent in JSON lines.

Raw-pyzmq roles (the baselines' ends, no warband imported):

- ``raw-sender ENDPOINT COUNT HEARTBEAT_S``: a DEALER sending COUNT numbered frames at RATE;
- ``raw-receiver ENDPOINT SECONDS``: a ROUTER counting numbered frames, echoing or blocking on
  request.

warband roles (tests/chaoslib/actors.py): ``sink ENDPOINT SECONDS``, ``source ENDPOINT COUNT``
and ``bot ENDPOINT 0``.
"""

from __future__ import annotations

import struct
import sys
import threading
import time

import zmq

from .children import emit
from .timing import BLACKHOLE_S, RATE, zmtp_heartbeats


def raw_sender(endpoint: str, count: int, heartbeat_s: float) -> None:
    """DEALER sending ``count`` numbered frames at RATE; reports disconnects and what it sent."""
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
    for seq in range(count):
        delay = start + seq / RATE - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        dealer.send(struct.pack(">Q", seq))
    time.sleep(3)
    emit(sent=count, events=events)
    dealer.disable_monitor()
    dealer.close()
    context.term()


def raw_receiver(endpoint: str, duration: float) -> None:
    """ROUTER counting numbered frames for ``duration`` s; echoes them when asked to."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    router = context.socket(zmq.ROUTER)
    router.bind(endpoint)
    router.setsockopt(zmq.RCVTIMEO, 100)
    emit(ready=time.monotonic())
    received: list[tuple[int, float]] = []
    deadline = time.monotonic() + duration
    while time.monotonic() < deadline:
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
        raw_sender(args[0], int(args[1]), float(args[2]))
    elif role == "raw-receiver":
        raw_receiver(args[0], float(args[1]))
    else:
        from .actors import run_actor

        run_actor(role, args[0], float(args[1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
