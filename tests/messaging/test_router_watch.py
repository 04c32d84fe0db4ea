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

# Clients in a separate process, told what to do next on standard input, one line per step;
# they import only zmq (found where this interpreter finds it).
_PRELUDE = """
import select, sys
sys.path.insert(0, sys.argv[1])
import zmq
context = zmq.Context()
def dealer(routing_id):
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.ROUTING_ID, routing_id)
    socket.setsockopt(zmq.RECONNECT_IVL, 100)
    socket.setsockopt(zmq.LINGER, 1000)
    socket.connect(sys.argv[2])
    return socket
"""

# A restarted agent, as a supervisor restarts a process at once: "old" says two frames; told to,
# it closes; told again, "new" connects under the same routing id, prints a line once its
# handshake is done and speaks every 0.1 s until standard input closes.
_RESTARTED = (
    _PRELUDE
    + """
old = dealer(b"bot-1")
old.send(b"first")
old.send(b"last words")
sys.stdin.readline()
old.close()
sys.stdin.readline()
new = dealer(b"bot-1")
events = new.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
events.recv_multipart()
print("handshake done", flush=True)
while not select.select([sys.stdin], [], [], 0.1)[0]:
    new.send(b"again")
events.close(linger=0)
new.close(linger=0)
context.term()
"""
)

# An agent crashing right after it registered, and the clock connecting then: "red-2" says a
# frame; told to, it closes; told again, "world" connects, says a frame and waits.
_CRASH_THEN_CLOCK = (
    _PRELUDE
    + """
red = dealer(b"red-2")
red.send(b"register red-2")
sys.stdin.readline()
red.close()
sys.stdin.readline()
world = dealer(b"world")
world.send(b"register world")
sys.stdin.read()
world.close(linger=0)
context.term()
"""
)


class Harness:
    """A real ROUTER over TCP with its RouterWatch, read the way the broker reads it, and a
    client process."""

    def __init__(self, context: Context, script: str) -> None:
        self.router = context.socket(zmq.ROUTER)
        self.router.setsockopt(zmq.LINGER, 0)
        self.router.setsockopt(zmq.RCVTIMEO, 10_000)
        self.router.bind("tcp://127.0.0.1:*")
        self.watch = RouterWatch(
            self.router, first_frame_timeout=0.5, route_queued=self.route_queued
        )
        self.received: list[tuple[bytes, bytes]] = []
        zmq_home = str(Path(zmq.__file__).resolve().parents[1])
        endpoint = self.router.getsockopt_string(zmq.LAST_ENDPOINT)
        self.client = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", script, zmq_home, endpoint],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def take(self, flags: int = 0) -> int:
        """Receive one message, as the broker does (handled, then heard); its descriptor."""
        routing_id = self.router.recv(flags)
        last = self.router.recv(copy=False)
        self.received.append((routing_id, last.bytes))
        self.watch.heard(last, routing_id)
        fd = last.get(zmq.SRCFD)
        assert isinstance(fd, int)
        return fd

    def route_queued(self) -> None:
        while True:
            try:
                self.take(zmq.NOBLOCK)
            except zmq.Again:
                return

    def tell(self, line: str) -> None:
        assert self.client.stdin is not None
        self.client.stdin.write(line.encode() + b"\n")
        self.client.stdin.flush()

    def read_line(self) -> bytes:
        assert self.client.stdout is not None
        assert select.select([self.client.stdout], [], [], 60)[0], "no line from the client"
        return self.client.stdout.readline()

    def close(self) -> None:
        assert self.client.stdin is not None and self.client.stdout is not None
        self.client.stdin.close()
        try:
            self.client.wait(60)
        finally:
            self.client.kill()
            self.client.wait()
            self.client.stdout.close()
            self.watch.close()
            self.router.close(linger=0)


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


def test_a_restarted_client_on_its_old_connections_descriptor_gets_in_though_libzmq_parked_it(
    context: Context,
) -> None:
    # The sequence that locked a restarted agent out: its old connection's last frame was still
    # queued when the monitor told of the close and of the new connection, which the kernel
    # gave the same descriptor and libzmq kept apart (the old one still held the id). Read
    # then, that last frame marked the new connection heard, so it was never found silent,
    # never closed, and its frames never reached the broker.
    harness = Harness(context, _RESTARTED)
    watch, router, received = harness.watch, harness.router, harness.received
    silent: list[Link] = []
    closed: list[bool] = []
    try:
        descriptor = harness.take()  # only the first frame: "last words" stays queued
        old_address = _peer_of(descriptor)
        harness.tell("close")
        wait_until(lambda: _peer_of(descriptor) is None, 10, "the old connection to close")
        harness.tell("connect again")
        wait_until(
            lambda: _peer_of(descriptor) not in (None, old_address),
            10,
            "the new connection to get the old one's descriptor",
        )
        new_address = _peer_of(descriptor)
        assert b"handshake done\n" == harness.read_line()
        # Let the router take the new connection in (it does so when asked for its state) while
        # the old one's last frame is queued: libzmq then keeps the new one apart, as it does
        # when a restarted agent comes back before the broker has read its old connection out.
        # How soon after the client's handshake the router's own is done is not observable.
        until = time.monotonic() + 0.2
        while time.monotonic() < until:
            router.poll(0)
        deadline = time.monotonic() + 10
        while (b"bot-1", b"again") not in received and time.monotonic() < deadline:
            for link in watch.poll()[1]:
                silent.append(link)
                closed.append(watch.close_link(link))
            if router.poll(100):
                harness.take()
    finally:
        harness.close()
    assert [(b"bot-1", b"first"), (b"bot-1", b"last words")] == received[:2]
    assert (b"bot-1", b"again") in received, "the restarted client never got in"
    # Kept apart, it was refused as silent and its client reconnected (taken in at once, when
    # the router was slower than the spin above, it was never silent).
    assert [new_address] * len(silent) == [link.address for link in silent]
    assert [True] * len(silent) == closed


def test_a_frame_is_joined_to_its_own_connection_though_its_descriptor_was_reused_since(
    context: Context,
) -> None:
    # The sequence that reported a connected clock gone: an agent registered and crashed, the
    # clock connected on the same descriptor and registered, and both frames were read before
    # the monitor's events. Joined by descriptor alone, the clock's frame named the crashed
    # agent's connection, whose close then told everyone the clock had left.
    harness = Harness(context, _CRASH_THEN_CLOCK)
    try:
        descriptor = harness.take()
        harness.tell("close")
        wait_until(lambda: _peer_of(descriptor) is None, 10, "the first connection to close")
        harness.tell("connect")
        assert descriptor == harness.take(), "the kernel gave the second connection another fd"
        closed, silent = harness.watch.poll()
        has_world = harness.watch.has_link(b"world")
        world_address = harness.watch.address_of(b"world")
        world_port = _peer_of(descriptor)
    finally:
        harness.close()
    assert [(b"red-2", b"register red-2"), (b"world", b"register world")] == harness.received
    assert [b"red-2"] == [link.routing_id for link in closed]
    assert [] == silent
    assert has_world
    assert world_port == world_address
