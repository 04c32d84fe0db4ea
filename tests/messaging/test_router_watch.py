"""RouterWatch joins the broker's connection monitor with the descriptor each frame came over
(ZMQ_SRCFD). A descriptor names a connection only until it closes: the kernel gives the number
to the next connection at once. These tests drive a real ROUTER over TCP, with the clients in
a separate process so that the next connection does get the number of the closed one."""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq

from tests.proc import wait_until
from warband.messaging.router_watch import Link, RouterWatch

Context = zmq.Context[zmq.Socket[bytes]]

# A restarted agent, as a supervisor restarts a process at once: "old" says two frames; told to,
# it closes; told again, "new" connects under the same routing id, prints a line once its
# handshake is done and speaks every 0.1 s until standard input closes. Only zmq is imported
# (found where this interpreter finds it).
_CLIENT = """
import select, sys
sys.path.insert(0, sys.argv[1])
import zmq
context = zmq.Context()
def dealer():
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.ROUTING_ID, b"bot-1")
    socket.setsockopt(zmq.RECONNECT_IVL, 100)
    socket.setsockopt(zmq.LINGER, 1000)
    socket.connect(sys.argv[2])
    return socket
old = dealer()
old.send(b"first")
old.send(b"last words")
sys.stdin.readline()
old.close()
sys.stdin.readline()
new = dealer()
events = new.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
events.recv_multipart()
print("handshake done", flush=True)
while not select.select([sys.stdin], [], [], 0.1)[0]:
    new.send(b"again")
events.close(linger=0)
new.close(linger=0)
context.term()
"""


@pytest.fixture
def context() -> Iterator[Context]:
    context: Context = zmq.Context()
    yield context
    context.term()


def _peer_of(fd: int) -> str | None:
    """The peer address of the socket on ``fd`` now, or None when ``fd`` is closed.

    ``os.dup`` of a closed descriptor fails without taking a number, so looking never takes
    the number a connection being accepted would get."""
    try:
        duplicate = os.dup(fd)
    except OSError:
        return None
    try:
        view = socket.socket(fileno=duplicate)
    except OSError:  # not a socket
        os.close(duplicate)
        return None
    with view:
        try:
            host, port = view.getpeername()[:2]
        except (OSError, ValueError):  # not connected, or not an internet socket
            return None
    return f"{host}:{port}"


def _descriptor_of(address: str) -> int:
    for name in os.listdir("/proc/self/fd"):
        if _peer_of(int(name)) == address:
            return int(name)
    raise AssertionError(f"no descriptor of this process is connected to {address}")


def test_a_restarted_client_on_its_old_connections_descriptor_gets_in_though_libzmq_parked_it(
    context: Context,
) -> None:
    # The sequence that locked a restarted agent out: its old connection's last frame was still
    # queued when the monitor told of the close and of the new connection, which the kernel
    # gave the same descriptor and libzmq kept apart (the old one still held the id). Read
    # then, that last frame marked the new connection heard, so it was never found silent,
    # never closed, and its frames never reached the broker.
    router = context.socket(zmq.ROUTER)
    router.setsockopt(zmq.LINGER, 0)
    router.setsockopt(zmq.RCVTIMEO, 10_000)
    router.bind("tcp://127.0.0.1:*")
    watch = RouterWatch(router, first_frame_timeout=0.5)
    received: list[tuple[bytes, bytes]] = []

    def take(flags: int = 0) -> None:
        routing_id = router.recv(flags)
        last = router.recv(copy=False)
        watch.heard(last, routing_id)
        received.append((routing_id, last.bytes))

    def route_queued() -> None:
        while True:
            try:
                take(zmq.NOBLOCK)
            except zmq.Again:
                return

    zmq_home = str(Path(zmq.__file__).resolve().parents[1])
    endpoint = router.getsockopt_string(zmq.LAST_ENDPOINT)
    client = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _CLIENT, zmq_home, endpoint],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert client.stdin is not None and client.stdout is not None
    silent: list[Link] = []
    closed: list[bool] = []
    try:
        take()  # only the first frame: "last words" stays queued in the router
        watch.poll(route_queued)
        old_address = watch.address_of(b"bot-1")
        assert old_address is not None
        descriptor = _descriptor_of(old_address)

        client.stdin.write(b"close\n")
        client.stdin.flush()
        wait_until(lambda: _peer_of(descriptor) is None, 10, "the old connection to close")
        client.stdin.write(b"connect again\n")
        client.stdin.flush()
        wait_until(
            lambda: _peer_of(descriptor) not in (None, old_address),
            10,
            "the new connection to get the old one's descriptor",
        )
        new_address = _peer_of(descriptor)
        assert select.select([client.stdout], [], [], 10)[0], "the new connection's handshake"
        assert b"handshake done\n" == client.stdout.readline()
        # Let the router take the new connection in (it does so when asked for its state) while
        # the old one's last frame is queued: libzmq then keeps the new one apart, as it does
        # when a restarted agent comes back before the broker has read its old connection out.
        # How soon after the client's handshake the router's own is done is not observable.
        until = time.monotonic() + 0.2
        while time.monotonic() < until:
            router.poll(0)

        deadline = time.monotonic() + 10
        while (b"bot-1", b"again") not in received and time.monotonic() < deadline:
            for link in watch.poll(route_queued)[1]:
                silent.append(link)
                closed.append(watch.close_link(link))
            if router.poll(100):
                take()
    finally:
        client.stdin.close()
        try:
            client.wait(10)
        finally:
            client.kill()
            client.wait()
            client.stdout.close()
        watch.close()
        router.close(linger=0)
    assert [(b"bot-1", b"first"), (b"bot-1", b"last words")] == received[:2]
    assert (b"bot-1", b"again") in received, "the restarted client never got in"
    # Kept apart, it was refused as silent and its client reconnected (taken in at once, when
    # the router was slower than the spin above, it was never silent).
    assert [new_address] * len(silent) == [link.address for link in silent]
    assert [True] * len(silent) == closed
