"""An actor's one connection to the broker: a ZeroMQ DEALER read from the asyncio loop.

The socket is a plain (blocking-API) pyzmq socket used with NOBLOCK only. Reading is driven by
``loop.add_reader`` on the socket's file descriptor and drains every queued frame at once:
awaiting one frame at a time through zmq.asyncio costs a future per frame, which made round
trips ~2.5x and throughput ~6x slower than blocking pyzmq in our measurements.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

import zmq
from zmq.backend import Socket as _BackendSocket
from zmq.utils.monitor import recv_monitor_message

from ..exceptions import DeliveryError

if TYPE_CHECKING:
    from .curve import CurveClient
    from .secret import RunSecret

DEFAULT_LINGER_MS = 2000
"""How long closing waits for unsent frames; ZeroMQ's default (forever) can hang an exit."""

# Plain ints: passing pyzmq's enum members makes it build enum values on every call.
RECONNECT_IVL_MS = 500
"""The shortest wait before ZeroMQ reconnects a lost connection: at most 2 tries a second."""
RECONNECT_IVL_MAX_MS = 1000
"""The longest wait between two reconnection tries: a broker that is back is found within it."""
RECONNECT_JITTER_MS = 500
"""Each connection's first wait is ``RECONNECT_IVL_MS`` plus up to this much, drawn at random
once per connection; later waits are ``RECONNECT_IVL_MAX_MS``. libzmq draws no jitter of its
own once ``RECONNECT_IVL_MAX`` is set (it doubles the wait up to the maximum instead), so
without ours the actors that lost the same broker would all retry at the same instants; with
it their tries are spread over the maximum wait."""

# Not the actor's seeded random source: reconnection timing must change no agent message.
_jitter = random.Random()

_NOBLOCK = int(zmq.NOBLOCK)
_HANDSHAKE_FAILED_AUTH = int(zmq.EVENT_HANDSHAKE_FAILED_AUTH)
_HANDSHAKE_FAILED = (
    _HANDSHAKE_FAILED_AUTH
    | int(zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL)
    | int(zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)
)
_POLLIN = int(zmq.POLLIN)
_poll = zmq.zmq_poll
# pyzmq's Socket.send wraps the compiled send in Python (for draft sockets' routing ids and
# groups): calling the compiled one saves a Python call per frame.
_send = _BackendSocket.send


class Connection:
    """The DEALER socket of one actor, connected to the broker with the actor's id as routing id.

    Received frames are appended to :attr:`inbox` and ``on_frames`` is called; when the inbox
    holds ``inbox_limit`` frames, reading pauses (ZeroMQ then queues, and the broker reports
    the recipient as not keeping up) until :meth:`resume` is called.
    """

    def __init__(
        self,
        actor_id: str,
        endpoint: str,
        *,
        context: zmq.Context[zmq.Socket[bytes]],
        on_frames: Callable[[], None],
        inbox_limit: int = 100_000,
        linger_ms: int = DEFAULT_LINGER_MS,
        curve: CurveClient | None = None,
        secret: RunSecret | None = None,
    ) -> None:
        self.actor_id = actor_id
        self.curve = curve
        """The CURVE keys to connect with, or None for a plain connection."""
        self.secret = secret
        """The run secret this actor proves its id with (PLAIN), or None."""
        self.endpoint = endpoint
        self.inbox: deque[bytes] = deque()
        self.inbox_limit = inbox_limit
        self._context = context
        self._on_frames = on_frames
        self._linger_ms = linger_ms
        self._socket: zmq.Socket[bytes] | None = None
        self._monitor: zmq.Socket[bytes] | None = None
        self._refusal: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._fd: int | None = None
        self.paused = False
        """True while reading waits for :meth:`resume` (the inbox was full)."""
        self._draining = False
        self._look_scheduled = False
        self._poll_items: list[tuple[zmq.Socket[bytes], int]] | None = None

    def open(self) -> None:
        """Create the socket, connect it and start reading from the running event loop."""
        socket = self._context.socket(zmq.DEALER)
        socket.setsockopt(zmq.ROUTING_ID, self.actor_id.encode())
        socket.setsockopt(zmq.LINGER, self._linger_ms)
        socket.setsockopt(zmq.SNDHWM, 0)
        socket.setsockopt(zmq.RCVHWM, 0)
        socket.setsockopt(
            zmq.RECONNECT_IVL, RECONNECT_IVL_MS + _jitter.randint(0, RECONNECT_JITTER_MS)
        )
        socket.setsockopt(zmq.RECONNECT_IVL_MAX, RECONNECT_IVL_MAX_MS)
        if self.curve is not None:
            self.curve.apply(socket)
            # The handshake's outcome is told only to a monitor: without one, a refused key
            # looks like a broker that never answers.
            self._monitor = socket.get_monitor_socket(_HANDSHAKE_FAILED)
        elif self.secret is not None:
            self.secret.apply_client(socket, self.actor_id)
            # Likewise a refused run secret: the broker's ZAP handler says no to each attempt,
            # and waiting for an answer would only wait out the register timeout.
            self._monitor = socket.get_monitor_socket(_HANDSHAKE_FAILED_AUTH)
        try:
            socket.connect(self.endpoint)
        except zmq.ZMQError as error:
            socket.close(linger=0)
            raise DeliveryError(
                f"{self.actor_id} cannot connect to {self.endpoint!r}: {error}; "
                "check the endpoint (tcp://HOST:PORT, ipc:///path or inproc://name)"
            ) from None
        self._socket = socket
        self._poll_items = [(socket, _POLLIN)]
        self._loop = asyncio.get_running_loop()
        fd = socket.getsockopt(zmq.FD)
        assert isinstance(fd, int)
        self._fd = fd
        self._loop.add_reader(fd, self._drain)
        # Frames may already be queued: the fd only signals edges.
        self._loop.call_soon(self._drain)

    def send(self, frame: bytes, *, about_to_wait: bool = False) -> None:
        """Queue ``frame`` for the broker without blocking.

        ``about_to_wait``: the caller awaits an answer right after this send (a request), so
        the look for frames below happens now rather than in one more turn of the loop.
        """
        socket = self._socket
        if socket is None:
            raise DeliveryError(f"{self.actor_id}'s connection is closed; start the actor first")
        _send(socket, frame, _NOBLOCK)
        # libzmq handles queued commands on send, which can consume the fd's readable edge: a
        # frame that arrived meanwhile would then wait for the next one. So look again: sends
        # made while draining are covered by the drain's own look after its handlers; others
        # look once the current callback is done (one look serves a burst of sends).
        if self._draining:
            pass
        elif about_to_wait:
            if self._readable() and self._loop is not None:
                self._loop.call_soon(self._drain)
        elif not self._look_scheduled and self._loop is not None:
            self._look_scheduled = True
            self._loop.call_soon(self._look)

    def resume(self) -> None:
        """Read again after the inbox was full."""
        if self.paused and len(self.inbox) < self.inbox_limit:
            self.paused = False
            if self._loop is not None:
                self._loop.call_soon(self._drain)

    def refusal(self) -> str | None:
        """Why the broker refused this connection's CURVE handshake or run secret, once it did;
        else None."""
        monitor = self._monitor
        while self._refusal is None and monitor is not None:
            try:
                event = recv_monitor_message(monitor, _NOBLOCK)
            except zmq.Again:
                break
            self._refusal = self._explain(int(event["event"]), int(event["value"]))
        return self._refusal

    def _explain(self, event: int, value: int) -> str:
        if self.curve is None:
            return (
                f"the broker at {self.endpoint!r} refused this connection's run secret (ZAP "
                f"status {value}): it was given another --secret file; pass the same run secret "
                "file to the broker and every agent"
            )
        agent = self.curve.agent_id
        if event == _HANDSHAKE_FAILED_AUTH:
            return (
                f"the broker at {self.endpoint!r} refused this key (ZAP status {value}): the "
                f"public key of {agent}.key_secret is not among its keys; copy {agent}.key to "
                "the broker's key directory and restart the broker, or use the keys it holds"
            )
        return (
            f"the CURVE handshake with {self.endpoint!r} failed: the broker there does not "
            "hold the secret key of this broker.key (keys from another `warband keys` run?) "
            "or does not use CURVE; copy the broker's own broker.key here"
        )

    def close(self) -> None:
        """Stop reading and close the socket (waiting at most the linger time to flush)."""
        if self._loop is not None and self._fd is not None:
            self._loop.remove_reader(self._fd)
        if self._monitor is not None and self._socket is not None:
            self._socket.disable_monitor()
        if self._monitor is not None:
            self._monitor.close(linger=0)
            self._monitor = None
        if self._socket is not None:
            self._socket.close(linger=self._linger_ms)
        self._socket = None
        self._poll_items = None
        self._fd = None

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran."""
        return self._socket is None

    def _look(self) -> None:
        self._look_scheduled = False
        if self._readable():
            self._drain()

    def _readable(self) -> bool:
        # libzmq's zmq_poll reads ZMQ_EVENTS, which handles its queued commands and so re-arms
        # the fd. Not socket.get(zmq.EVENTS): pyzmq builds a SocketOption enum at every call,
        # which costs three times the poll (a poll(2) with no timeout included).
        items = self._poll_items
        return items is not None and bool(_poll(items, 0))

    def _drain(self) -> None:
        if self._draining:
            return  # never nest drains: the running one reads on until the socket is empty
        self._draining = True
        try:
            burst = False
            while self._receive_queued(burst):
                self._on_frames()
                # One look serves both: frames that came meanwhile (the fd signals edges), and
                # a handler's send, which may have consumed the edge of one.
                if not self._readable():
                    break
                burst = True
        finally:
            self._draining = False

    def _receive_queued(self, burst: bool) -> bool:
        """Move the next queued frame into the inbox, or with ``burst`` every queued frame
        (until the inbox is full); True if any came."""
        socket = self._socket
        if socket is None or self.paused:
            return False
        if len(self.inbox) >= self.inbox_limit:
            self.paused = True
            return False
        try:
            self.inbox.append(socket.recv(_NOBLOCK))
        except zmq.Again:
            return False
        # Mostly one frame comes per wake-up, and the look after handling it is cheaper than
        # the zmq.Again exception that ends a read-until-empty loop, which only bursts need.
        if burst:
            self._receive_burst(socket)
        return True

    def _receive_burst(self, socket: zmq.Socket[bytes]) -> None:
        inbox = self.inbox
        while True:
            if len(inbox) >= self.inbox_limit:
                self.paused = True
                return
            try:
                inbox.append(socket.recv(_NOBLOCK))
            except zmq.Again:
                return
