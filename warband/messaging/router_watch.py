"""What the broker can learn about the connections behind its ROUTER socket.

The broker routes by ZeroMQ routing id and keeps ``ROUTER_HANDOVER`` off, so a second connection
that claims the routing id of a connected agent never gets that agent's route: libzmq keeps it
"anonymous" and silently drops whatever it sends (for as long as it stays connected, even after
the first connection is gone). libzmq tells the socket nothing about such a connection, and
``ROUTER_NOTIFY``, which would, exists only in libzmq's draft API that pyzmq's wheels leave out.

What a stable libzmq does give: a socket monitor reports every TCP or IPC connection the ROUTER
accepts or loses, with its file descriptor, and each received frame tells the descriptor it came
from (``ZMQ_SRCFD``). :class:`RouterWatch` joins the two. A connection whose frames never reach
the broker within ``first_frame_timeout`` seconds of being accepted is, for a client that follows
PROTOCOL.md (its first frame is ``_Register``), one that claims a taken routing id; the watch
hands it to the broker, which logs it and closes it. In-process (``inproc://``) connections are
not monitored: they do not cross a process boundary.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

import zmq
from zmq.utils.monitor import parse_monitor_message

_EVENTS = int(zmq.EVENT_ACCEPTED) | int(zmq.EVENT_DISCONNECTED)
_SRCFD = int(zmq.SRCFD)


@dataclass
class Link:
    """One accepted connection: its descriptor, the peer's address, and who spoke on it."""

    fd: int
    address: str
    accepted: float
    routing_id: bytes | None = None
    """The routing id of its first frame; None while nothing has arrived from it."""


class RouterWatch:
    """Follows the ROUTER's connections through a socket monitor (see the module docstring)."""

    def __init__(self, router: zmq.Socket[bytes], *, first_frame_timeout: float) -> None:
        self.first_frame_timeout = first_frame_timeout
        self._router = router
        self._monitor = router.get_monitor_socket(_EVENTS)
        self._links: dict[int, Link] = {}
        self._unheard: dict[int, Link] = {}
        # Frames can arrive before the monitor's event for their connection is read. Such an
        # event is queued before the connection's first frame, so the next poll reads it: an
        # entry that poll did not claim came over a connection already closed or forgotten, and
        # is dropped there (kept, a new connection on the reused descriptor would inherit it
        # and never be found silent).
        self._heard_early: dict[int, bytes] = {}

    @property
    def pending(self) -> bool:
        """True while some accepted connection has not been heard from: read frames' fds then."""
        return bool(self._unheard)

    def heard(self, frame: zmq.Frame, routing_id: bytes) -> None:
        """Note that ``frame`` (received from ``routing_id``) came over its connection.

        The broker calls this for every frame while :attr:`pending`, and for every ``_Register``.
        """
        try:
            fd = frame.get(_SRCFD)
        except zmq.ZMQError:
            return  # inproc: no descriptor
        if not isinstance(fd, int):
            return
        link = self._unheard.pop(fd, None)
        if link is not None:
            link.routing_id = routing_id
            return
        known = self._links.get(fd)
        if known is None or known.routing_id != routing_id:
            # Its connection's event is still in the monitor's queue (and the descriptor
            # may still name a closed connection there, whose event comes first).
            self._heard_early[fd] = routing_id

    def has_link(self, routing_id: bytes) -> bool:
        """True while some open connection has spoken as ``routing_id``."""
        return any(link.routing_id == routing_id for link in self._links.values())

    def address_of(self, routing_id: bytes) -> str | None:
        """The address of the connection ``routing_id`` speaks over, when known."""
        for link in self._links.values():
            if link.routing_id == routing_id:
                return link.address
        return None

    def poll(self, route_queued: Callable[[], object]) -> tuple[list[Link], list[Link]]:
        """Read the monitor; return (connections that closed, connections silent for too long).

        ``route_queued`` must read (and pass to :meth:`heard`) every frame already queued in the
        router, without waiting for more: it is called before a closed connection is forgotten.
        The silent ones are forgotten here: the caller reports and closes them.
        """
        closed: list[Link] = []
        while self._monitor.poll(0):
            event = parse_monitor_message(self._monitor.recv_multipart())
            fd = int(event["value"])
            if event["event"] == zmq.EVENT_ACCEPTED:
                if fd in self._links:
                    # Its close was not reported (the monitor's queue overflowed), yet the
                    # number was free again: that connection is gone.
                    self._forget(fd, route_queued, closed)
                link = Link(fd, _peer_address(fd), time.monotonic())
                self._links[fd] = link
                link.routing_id = self._heard_early.pop(fd, None)
                if link.routing_id is None:
                    self._unheard[fd] = link
            elif event["event"] == zmq.EVENT_DISCONNECTED:
                self._forget(fd, route_queued, closed)
        self._heard_early.clear()
        deadline = time.monotonic() - self.first_frame_timeout
        silent = [link for link in self._unheard.values() if link.accepted <= deadline]
        for link in silent:
            del self._unheard[link.fd]
            del self._links[link.fd]
        return closed, silent

    def _forget(self, fd: int, route_queued: Callable[[], object], closed: list[Link]) -> None:
        """Forget the closed connection on ``fd``, once the frames it left are read.

        libzmq queues a connection's last frames before it reports the close, so they are all
        read here while ``fd`` still names that connection. Read later, with a new connection
        on the same descriptor (a restarted agent, whose old connection's last frames carry
        its id), they would mark that connection heard: were it one libzmq keeps apart (it
        came while the old one still held the id), it would never be found silent, and the
        agent never got back in.
        """
        route_queued()
        self._unheard.pop(fd, None)
        gone = self._links.pop(fd, None)
        if gone is not None:
            closed.append(gone)
        else:
            # Read from a connection no longer followed (refused as silent): the next
            # connection on this descriptor must not inherit it. One that came after it and
            # already spoke is not heard yet, and will be when it speaks again.
            self._heard_early.pop(fd, None)

    def close_link(self, link: Link) -> bool:
        """Shut the connection down under libzmq, which then drops it as if the peer had left.

        Checked against the address first, so a descriptor reused since is never touched.
        Returns False when the connection was already gone.
        """
        try:
            duplicate = _socket_of(link.fd)
        except OSError:
            return False
        with duplicate:
            try:
                if _format_address(duplicate.getpeername()) != link.address:
                    return False
                duplicate.shutdown(socket.SHUT_RDWR)
            except OSError:
                return False
        return True

    def close_source(self, frame: zmq.Frame) -> bool:
        """Shut down the connection ``frame`` (just received) came over; False when it is gone.

        The descriptor is checked against the frame's peer address first, so one that a new
        connection from another host took since is left alone.
        """
        try:
            fd = frame.get(_SRCFD)
            host = frame.get("Peer-Address")
        except zmq.ZMQError:
            return False  # inproc: no descriptor
        if not isinstance(fd, int):
            return False
        try:
            with _socket_of(fd) as duplicate:
                if duplicate.getpeername()[0] != host:
                    return False
                duplicate.shutdown(socket.SHUT_RDWR)
        except (OSError, IndexError):
            return False
        return True

    def close(self) -> None:
        """Stop monitoring (call before closing the ROUTER)."""
        with contextlib.suppress(zmq.ZMQError):
            self._router.disable_monitor()
        self._monitor.close(linger=0)


def _socket_of(fd: int) -> socket.socket:
    """A socket object on a duplicate of ``fd``; OSError if ``fd`` is no longer a socket.

    The descriptor a monitor event names may have been closed and reused by then, for anything
    (an eventfd, a file): ``socket.socket(fileno=...)`` then raises and leaves the duplicate
    open, so it is closed here, or every such event would leak one descriptor.
    """
    duplicate = os.dup(fd)
    try:
        return socket.socket(fileno=duplicate)
    except BaseException:
        os.close(duplicate)
        raise


def _peer_address(fd: int) -> str:
    try:
        with _socket_of(fd) as duplicate:
            return _format_address(duplicate.getpeername())
    except OSError:
        return "unknown"


def _format_address(address: object) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        host, port = address[0], address[1]
        return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"
    return str(address) or "local"
