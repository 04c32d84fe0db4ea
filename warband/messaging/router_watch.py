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
    """Follows the ROUTER's connections through a socket monitor (see the module docstring).

    A descriptor names a connection only until it closes: the kernel gives the number to the
    next connection at once, while the monitor's events and the router's frames are read in
    turns. Two orderings make the join sound. libzmq reports a connection accepted before any
    of its frames can be read, and queues its last frames before it reports it closed; so
    :meth:`heard` reads the monitor before it joins a frame to a connection it does not know
    yet, and the frames a closed connection left are routed (``route_queued``) before it is
    forgotten. A frame that could still have come over either of two connections on the same
    descriptor is joined to neither: a connection wrongly taken as heard would never be found
    silent (a restarted agent, kept apart by libzmq, locked out), and a closed one wrongly
    named would report a connected agent gone; one wrongly left unheard only has to speak
    again, or is closed as silent and reconnects.
    """

    def __init__(
        self,
        router: zmq.Socket[bytes],
        *,
        first_frame_timeout: float,
        route_queued: Callable[[], object],
    ) -> None:
        """``route_queued`` reads and routes every frame already queued in ``router``, without
        waiting for more (passing them to :meth:`heard` as usual)."""
        self.first_frame_timeout = first_frame_timeout
        self._router = router
        self._route_queued = route_queued
        self._monitor = router.get_monitor_socket(_EVENTS)
        self._links: dict[int, Link] = {}
        self._unheard: dict[int, Link] = {}
        self._closed: list[Link] = []
        self._reading = False

    @property
    def pending(self) -> bool:
        """True while some accepted connection has not been heard from: read frames' fds then."""
        return bool(self._unheard)

    def heard(self, frame: zmq.Frame, routing_id: bytes) -> None:
        """Note that ``frame`` (received from ``routing_id``, and handled) came over its
        connection.

        The broker calls this for every frame while :attr:`pending`, and for every ``_Register``,
        once the frame is handled: this may read the monitor and route frames queued after it.
        """
        try:
            fd = frame.get(_SRCFD)
        except zmq.ZMQError:
            return  # inproc: no descriptor
        if not isinstance(fd, int):
            return
        known = self._links.get(fd)
        if (known is not None and known.routing_id == routing_id) or self._reading:
            # Already joined; or routed while a closed connection's last frames are read, when
            # the connections on its descriptor are not all known yet.
            return
        # The frame's connection was reported accepted before the frame could be read: its
        # event is in the monitor's queue now, maybe after the close of an older connection on
        # this descriptor, or before the close of its own and the accept of a newer one.
        candidates = [known] if known is not None else []
        candidates += self._read_events().get(fd, [])
        candidates = [c for c in candidates if c.routing_id in (None, routing_id)]
        if len(candidates) == 1 and candidates[0].routing_id is None:
            link = candidates[0]
            link.routing_id = routing_id
            if self._unheard.get(fd) is link:
                del self._unheard[fd]

    def has_link(self, routing_id: bytes) -> bool:
        """True while some open connection has spoken as ``routing_id``."""
        return any(link.routing_id == routing_id for link in self._links.values())

    def address_of(self, routing_id: bytes) -> str | None:
        """The address of the connection ``routing_id`` speaks over, when known."""
        for link in self._links.values():
            if link.routing_id == routing_id:
                return link.address
        return None

    def poll(self) -> tuple[list[Link], list[Link]]:
        """Read the monitor; return (connections that closed, connections silent for too long).

        The closed ones include those found while hearing frames since the last poll. The
        silent ones are forgotten here: the caller reports and closes them.
        """
        self._read_events()
        closed, self._closed = self._closed, []
        deadline = time.monotonic() - self.first_frame_timeout
        silent = [link for link in self._unheard.values() if link.accepted <= deadline]
        for link in silent:
            del self._unheard[link.fd]
            del self._links[link.fd]
        return closed, silent

    def _read_events(self) -> dict[int, list[Link]]:
        """Read every event queued in the monitor; return the links accepted, per descriptor."""
        accepted: dict[int, list[Link]] = {}
        if self._reading:
            return accepted
        self._reading = True
        try:
            while self._monitor.poll(0):
                event = parse_monitor_message(self._monitor.recv_multipart())
                fd = int(event["value"])
                if event["event"] == zmq.EVENT_ACCEPTED:
                    if fd in self._links:
                        # Its close was not reported (the monitor's queue overflowed), yet the
                        # number was free again: that connection is gone.
                        self._forget(fd)
                    link = Link(fd, _peer_address(fd), time.monotonic())
                    self._links[fd] = link
                    self._unheard[fd] = link
                    accepted.setdefault(fd, []).append(link)
                elif event["event"] == zmq.EVENT_DISCONNECTED:
                    self._forget(fd)
        finally:
            self._reading = False
        return accepted

    def _forget(self, fd: int) -> None:
        """Forget the closed connection on ``fd``, once the frames it left are routed.

        They were all queued before its close was reported: routed now, none can be read
        later, when ``fd`` may name the next connection (a restarted agent's, whose old
        connection's last frames carry its id).
        """
        self._route_queued()
        self._unheard.pop(fd, None)
        gone = self._links.pop(fd, None)
        if gone is not None:
            self._closed.append(gone)

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
