"""The broker: a ZeroMQ ROUTER that routes frames between actors by recipient id.

Every actor holds one DEALER connection to the broker with its agent id as ZeroMQ routing id,
so the broker always knows who really sent a frame; a frame whose ``sender`` field names anyone
else is rejected. Recipients are agent ids or ``#group`` names (``#all`` reaches everyone).

The broker reads only the envelope (type, sender, recipient, id, tick) and forwards the bytes
untouched; full validation happens in the receiving actor. The common frame (one payload from a
registered peer, its own sender, to a registered peer) takes a fast path with no Python call
(``_route_fast``); every other frame the full path, which rejects, answers or routes it. Nothing
is dropped silently: a frame that cannot be routed is logged and answered with an
``_Undeliverable`` notice to its sender.

A run has a membership: its clock declares it as it registers (``_Register.members``), and the
broker then registers only those ids and refuses a second clock until the run is over (one
broker serves one run at a time; PROTOCOL.md, section 4). With CURVE keys or a run secret
(secret.py), every connection proves its id at the handshake, so a stranger never holds one.

The routing loop is blocking pyzmq in a thread (in-process runs) or in its own process
(``warband broker``); it never shares the actors' event loop, so a busy agent cannot stall it.
"""

from __future__ import annotations

import asyncio
import contextlib
import stat
import threading
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import msgspec
import zmq
from zmq.backend import Socket as _BackendSocket

from ..exceptions import ConfigurationError, ProtocolError
from .addresses import ALL_GROUP, BROKER_ID, GROUP_PREFIX, SUPERVISOR_ID
from .catalog import (
    MESSAGE_TYPES,
    Message,
    _GaveUp,
    _Leave,
    _Left,
    _Ping,
    _Pong,
    _Register,
    _Registered,
    _Undeliverable,
    _Vouch,
    _Watch,
)
from .codec import Codec, Envelope, Route
from .curve import CurveServer, KeyAuthenticator, check_curve_endpoint
from .faults import FrameDrops
from .otel import broker_telemetry
from .router_watch import Link, RouterWatch
from .secret import RunSecret, SecretAuthenticator
from .tracing import get_logger, trace_recv, trace_send, tracing_enabled

_POLL_MS = 200
_QUEUED_AT_MOST = 10_000
"""Frames routed at most before closed connections are handled, so a flood cannot stall it."""

SILENT_PINGS = 3
"""A peer that pings is counted gone after this many ping intervals without a frame from it.

The broker looks every ``_POLL_MS`` (and after every frame under load), so a stuck or cut-off
peer is flagged within 4 of its heartbeats at any interval of 0.2 s or more."""

GONE_KEPT = 10_000
"""Departures the broker remembers for watchers that register later (the most recent ones)."""

DEFAULT_QUEUE_LIMIT = 100_000
"""Frames the broker queues for one peer before it answers the sender with _Undeliverable."""

_NO_ROUTING_ID = (
    "your connection has no routing id: set your socket's routing id (ZMQ_ROUTING_ID) to your "
    "agent id before connecting (PROTOCOL.md, section 1)"
)
_NOT_REGISTERED = (
    "you have not registered: send _Register to the broker first (PROTOCOL.md, section 4)"
)

# Plain ints: pyzmq builds an enum value per call when given its enum members.
_NOBLOCK = int(zmq.NOBLOCK)
_SNDMORE_NOBLOCK = int(zmq.SNDMORE) | _NOBLOCK

_NO_ROUTE = Route(type="")
"""What the fast path reads of a frame that is not a MessagePack map of the right shape."""

# pyzmq's Socket.send is a Python wrapper (routing ids and groups of draft sockets) around the
# compiled send: calling the compiled one saves a Python call and a super() per frame sent.
_send = _BackendSocket.send


CLOSE_LINGER_MS = 1000
"""How long the broker's socket may go on sending the frames it still holds when it closes:
a broker told to stop may take that long before it exits."""


@dataclass
class BrokerStats:
    """Counters a broker keeps while it runs."""

    routed: int = 0
    rejected: int = 0
    undeliverable: int = 0
    peers: set[str] = field(default_factory=set)
    departed: int = 0
    would_block: int = 0
    """Frames for a peer whose queue was full (EAGAIN): answered with _Undeliverable."""
    unreachable: int = 0
    """Frames for a peer with no connection (EHOSTUNREACH): answered with _Undeliverable."""
    notices_lost: int = 0
    """The broker's own notices (pongs, departures, refusals) its socket refused: logged."""
    spoofed: int = 0
    """Frames refused because their routing id or sender was not their CURVE key's agent."""


@dataclass(frozen=True)
class RunMembership:
    """The run a broker serves: declared by its clock when it registers (``_Register.members``).

    From then on the broker registers only its members, and refuses a second clock until this
    run's clock has left (one broker serves one run at a time).
    """

    run_id: str
    clock: str
    members: frozenset[str]
    """Every agent id that may register: the scenario's agents, the clock, and the outside
    participants a scenario declares."""


RUNS_OVER_KEPT = 1_000
"""Ended runs a broker remembers, to refuse a late registration for one clearly."""


@dataclass
class _Peer:
    """What the broker knows of a registered peer, for liveness and departure notices."""

    watch: frozenset[str] = frozenset()
    last_seen: float = 0.0
    ping_interval: float | None = None
    """Set once the peer pings: only peers that ping can be found silent."""


@dataclass
class _OnLoop:
    """A broker routing on an event loop (:meth:`Broker.start_on_loop`)."""

    loop: asyncio.AbstractEventLoop
    router: zmq.Socket[bytes]
    watch: RouterWatch
    fd: int = -1
    timer: asyncio.TimerHandle | None = None


class Broker:
    """Routes frames between the actors connected to ``endpoint``.

    Call :meth:`start` to run the routing loop in a background thread, or :meth:`serve` to run it
    in the calling thread until :meth:`stop` is called (from another thread or a signal handler).
    """

    def __init__(
        self,
        endpoint: str,
        *,
        context: zmq.Context[zmq.Socket[bytes]] | None = None,
        codec: Codec | None = None,
        first_frame_timeout: float = 2.0,
        curve: CurveServer | None = None,
        drops: FrameDrops | None = None,
        queue_limit: int = DEFAULT_QUEUE_LIMIT,
        secret: RunSecret | None = None,
    ) -> None:
        if curve is not None:
            check_curve_endpoint(endpoint)  # frames over ipc or inproc carry no User-Id
            if secret is not None:
                raise ConfigurationError(
                    "a broker takes CURVE keys or a run secret, not both: with --curve every "
                    "connection proves its id by its key already; drop --secret"
                )
        if secret is not None and endpoint.startswith("inproc://"):
            raise ConfigurationError(
                f"a run secret protects tcp:// and ipc:// endpoints, got {endpoint!r}: "
                "inproc:// never leaves this process and carries no proof of who connects"
            )
        self.endpoint = endpoint
        self.queue_limit = queue_limit
        """Frames queued per peer (ZeroMQ's high-water marks): past it a frame for that peer
        is answered with _Undeliverable (EAGAIN), counted in ``stats.would_block``."""
        self.drops = drops
        """For tests only: frames this broker loses on purpose (faults.py)."""
        self.curve = curve
        """With CURVE keys, only their agents get in, each bound to its key (curve.py)."""
        self._authenticator: KeyAuthenticator | None = None
        self.secret = secret
        """With a run secret, only connections that prove their id by it get in (secret.py)."""
        self._secret_check: SecretAuthenticator | None = None
        self.run: RunMembership | None = None
        """The run this broker serves, once its clock registered; None between runs."""
        self._runs_over: dict[str, str] = {}
        self.first_frame_timeout = first_frame_timeout
        """Seconds a TCP or IPC connection may stay silent before it is closed as refused."""
        self._watch: RouterWatch | None = None
        self._last_frame: zmq.Frame | None = None
        self._hear_register = False
        self.stats = BrokerStats()
        # A broker that checks proofs answers its handshakes on its context's one ZAP endpoint
        # (inproc://zeromq.zap.01): two such brokers on the shared default context collide
        # (one still stopping, in a test that starts the next). Such a broker never serves
        # inproc://, so it may have a context of its own, ended as it stops.
        self._owns_context = context is None and (curve is not None or secret is not None)
        self._context = zmq.Context() if self._owns_context else context or zmq.Context.instance()
        self._codec = codec or Codec()
        self._otel = broker_telemetry()
        """Spans of routing traced frames when this process exports OpenTelemetry spans."""
        self._groups: defaultdict[str, set[str]] = defaultdict(set)
        # Lockstep group changes wait for the next Tick: (tick stamped, peer, new groups).
        self._deferred: list[tuple[int, str, list[str]]] = []
        self._seq = 0
        self._tick = 0
        """The run's current tick: the last Tick broadcast; the broker's own notices carry it."""
        self._registry: dict[str, _Peer] = {}
        # Who left and why, until they register again: a watcher that registers late (a clock
        # started after an agent that failed at once) still learns of them.
        self._gone: dict[str, str] = {}
        # Peers departed for silence, with their groups: one that speaks again on its connection
        # (it was stopped, its loop blocked, its link cut) is readmitted, not refused.
        self._silent: dict[str, tuple[list[str], _Peer]] = {}
        # Peers heard from since the last liveness check: it stamps their last_seen then, so
        # routing a frame costs a set.add rather than a clock read and an attribute write.
        self._heard: set[str] = set()
        # Set every _POLL_MS by a timer thread while routing: the fast path reads this flag
        # rather than the clock at every frame.
        self._housekeeping_due = False
        self._next_liveness_check = 0.0
        self._last_liveness_check: float | None = None
        self._next_link_check = 0.0
        self._log = get_logger(agent=BROKER_ID)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bound = threading.Event()
        self._bind_error: BaseException | None = None
        self.bound_endpoint = endpoint
        self._on_loop: _OnLoop | None = None

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        """Bind and route in a daemon thread; returns once the socket is bound."""
        self._thread = threading.Thread(
            target=self._serve_in_thread, name="warband-broker", daemon=True
        )
        self._thread.start()
        self._bound.wait()
        if self._bind_error is not None:
            raise self._bind_error

    def stop(self, timeout: float = 5.0) -> None:
        """Stop routing and close the socket; waits up to ``timeout`` s for the thread."""
        self._stop_on_loop()
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def is_running(self) -> bool:
        """True while the routing thread started by :meth:`start` is alive."""
        return self._thread is not None and self._thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        """Wait up to ``timeout`` s for the routing thread to end."""
        if self._thread is not None:
            self._thread.join(timeout)

    def _serve_in_thread(self) -> None:
        try:
            self.serve()
        except BaseException as error:
            if not self._bound.is_set():
                # Whatever failed before the socket was bound, start() raises in its caller's
                # thread (it waits for _bound: unset, it would wait forever).
                self._bind_error = error
                self._bound.set()
                return
            # The bind error is start()'s to raise; the thread's own report would only
            # interleave a traceback with the caller's one-line error.
            if error is not self._bind_error:
                raise
        finally:
            if self._owns_context:
                self._context.term()

    def serve(self) -> None:
        """Bind and route frames until :meth:`stop` is called."""
        router, watch = self._open()
        try:
            self._route_until_stopped(router)
        finally:
            self._close(router, watch)

    def start_on_loop(self) -> None:
        """Bind and route on the running event loop, in its thread, rather than in a thread of
        its own: each frame is routed when the loop sees the router readable.

        For an in-process run whose caller holds the loop between ticks (:mod:`warband.env`):
        a routing thread would wake for every frame an actor sends, and take the interpreter
        from the loop's thread and give it back each time; here routing waits for the loop's
        next turn, and the actors, all on this loop, never wait for another thread. A busy
        actor holds up routing as it holds up every other actor of the loop, which is why a
        run that is not paused this way keeps the thread (:meth:`start`). Call :meth:`stop` on
        the loop's thread.
        """
        loop = asyncio.get_running_loop()
        router, watch = self._open()
        router.setsockopt(zmq.RCVTIMEO, 0)  # a receive never waits: the loop says when to read
        self._on_loop = _OnLoop(loop, router, watch)
        fd = router.getsockopt(zmq.FD)
        assert isinstance(fd, int)
        self._on_loop.fd = fd
        loop.add_reader(fd, self._route_on_loop)
        loop.call_soon(self._route_on_loop)  # the descriptor signals edges only
        self._on_loop.timer = loop.call_later(_POLL_MS / 1000, self._housekeeping_on_loop)

    def _route_on_loop(self) -> None:
        """Route what the router holds, then look again (see :meth:`_route_until_stopped`)."""
        state = self._on_loop
        if state is None:
            return
        router, watch = state.router, state.watch
        while self._route_some(router, watch):
            pass
        # Once all that waited is routed: after a pause of the loop, it says who is alive. The
        # monitor is read when due (every _POLL_MS, the housekeeping timer), not at every turn.
        self._check_liveness(router)
        if time.monotonic() >= self._next_link_check:
            self._check_links(router, watch)
        # Sending consumes the descriptor's edge: a frame that came meanwhile is read now.
        if zmq.zmq_poll([(router, zmq.POLLIN)], 0):
            state.loop.call_soon(self._route_on_loop)

    def _housekeeping_on_loop(self) -> None:
        # Every _POLL_MS the checks of liveness and links are due; _route_on_loop makes them
        # after it routed all that waits. Not by _housekeeping_due, which would make it check
        # after one frame: the loop may have been paused for long (between an environment's
        # steps), and the frames waiting then (the keeper's _Vouch among them) say who lives.
        state = self._on_loop
        if state is None:
            return
        self._route_on_loop()
        state.timer = state.loop.call_later(_POLL_MS / 1000, self._housekeeping_on_loop)

    def _stop_on_loop(self) -> None:
        state, self._on_loop = self._on_loop, None
        if state is None:
            return
        if state.timer is not None:
            state.timer.cancel()
        state.loop.remove_reader(state.fd)
        self._close(state.router, state.watch)

    def _open(self) -> tuple[zmq.Socket[bytes], RouterWatch]:
        """The bound router and its watch; raises ConfigurationError when it cannot bind."""
        router = self._context.socket(zmq.ROUTER)
        router.setsockopt(zmq.LINGER, CLOSE_LINGER_MS)
        # Without MANDATORY a ROUTER silently drops frames for unknown ids; we want the error.
        router.setsockopt(zmq.ROUTER_MANDATORY, 1)
        # No ROUTER_HANDOVER: a second connection claiming a connected agent's id must not take
        # its route. libzmq keeps such a connection apart and drops its frames; RouterWatch
        # finds it, and the broker logs and closes it. A restarted agent gets its id back once
        # its old connection is gone: the kernel closes it when the process dies, and ZMTP
        # heartbeats close it when the host vanished.
        router.setsockopt(zmq.HEARTBEAT_IVL, 2000)
        router.setsockopt(zmq.HEARTBEAT_TIMEOUT, 10_000)
        # Refuse a frame over the codec's limit before reading it whole; libzmq drops the
        # sender's connection then (its DEALER reconnects by itself; what it had queued is lost).
        router.setsockopt(zmq.MAXMSGSIZE, self._codec.max_frame_bytes)
        router.setsockopt(zmq.SNDHWM, self.queue_limit)
        router.setsockopt(zmq.RCVHWM, self.queue_limit)
        try:
            self._start_authenticators(router)
        except zmq.ZMQError as error:
            self._refuse_to_start(
                router,
                f"broker for {self.endpoint!r} cannot check proofs of identity: {error}; another "
                "broker with a run secret or CURVE keys already answers the handshakes of its "
                "ZeroMQ context: give each broker a context of its own",
            )
        try:
            router.bind(self.endpoint)
            self.bound_endpoint = router.getsockopt_string(zmq.LAST_ENDPOINT)
        except zmq.ZMQError as error:
            self._refuse_to_start(
                router,
                f"broker cannot bind {self.endpoint!r}: {error}; "
                "pick a free endpoint such as tcp://127.0.0.1:5555 or ipc:///tmp/warband.sock",
            )
        self._log.info("broker.start", endpoint=self.bound_endpoint, proof=self._proof_name())

        def route_queued() -> None:
            self._route_queued(router, watch)

        watch = RouterWatch(
            router, first_frame_timeout=self.first_frame_timeout, route_queued=route_queued
        )
        self._watch = watch
        self._bound.set()
        return router, watch

    def _close(self, router: zmq.Socket[bytes], watch: RouterWatch) -> None:
        try:
            watch.close()
        finally:
            router.close(linger=CLOSE_LINGER_MS)
            self._stop_authenticators()
            remove_ipc_socket_file(self.bound_endpoint)
            self._log.info(
                "broker.stop",
                routed=self.stats.routed,
                rejected=self.stats.rejected,
                undeliverable=self.stats.undeliverable,
                would_block=self.stats.would_block,
                unreachable=self.stats.unreachable,
                notices_lost=self.stats.notices_lost,
            )

    def _refuse_to_start(self, router: zmq.Socket[bytes], why: str) -> NoReturn:
        """Close ``router`` and the authenticators, and fail the start with ``why`` (also for
        whoever waits for the broker to be bound)."""
        router.close(linger=0)
        self._stop_authenticators()
        self._bind_error = ConfigurationError(why)
        self._bound.set()
        raise self._bind_error from None

    def _start_authenticators(self, router: zmq.Socket[bytes]) -> None:
        if self.curve is not None:
            self.curve.apply(router)
            self._authenticator = KeyAuthenticator(self._context, self.curve)
            self._authenticator.start()
        if self.secret is not None:
            self.secret.apply_server(router)
            self._secret_check = SecretAuthenticator(self._context, self.secret)
            self._secret_check.start()

    def _stop_authenticators(self) -> None:
        if self._authenticator is not None:
            self._authenticator.stop()
        if self._secret_check is not None:
            self._secret_check.stop()

    def _route_until_stopped(self, router: zmq.Socket[bytes]) -> None:
        # A blocking receive with a timeout, not a poller: per frame, polling and then failing a
        # non-blocking receive (zmq.Again is an exception) cost more than the routing itself.
        router.setsockopt(zmq.RCVTIMEO, _POLL_MS)
        stopped = self._stop.is_set
        watch = self._watch
        assert watch is not None
        threading.Thread(
            target=self._housekeeping_timer, name="warband-broker-timer", daemon=True
        ).start()
        while not stopped():
            busy = self._route_some(router, watch)
            self._check_liveness(router)
            if not busy or time.monotonic() >= self._next_link_check:
                # Busy is not idle: connections still come and go. Read the monitor at least
                # every _POLL_MS, or its queue fills and libzmq drops the events that tell a
                # closed connection, and a silent squatter (a restarted agent that came back
                # before its old connection was gone) stays connected and is never refused.
                self._check_links(router, watch)

    def _route_some(self, router: zmq.Socket[bytes], watch: RouterWatch) -> bool:
        """Route what comes (:meth:`_route_fast`), or one frame while a connection is not heard
        from yet (every frame's descriptor is read: :meth:`_take`); False when nothing came."""
        if watch.pending:
            try:
                frames, last = _receive_message(router)
            except zmq.Again:
                return False
            self._take(router, watch, frames, last)
            return True
        return self._route_fast(router, watch)

    def _housekeeping_timer(self) -> None:
        """Tell the routing loop every _POLL_MS that liveness and links are due, until stop."""
        while not self._stop.wait(_POLL_MS / 1000):
            self._housekeeping_due = True

    def _route_fast(self, router: zmq.Socket[bytes], watch: RouterWatch) -> bool:
        """Route frames until housekeeping is due (every _POLL_MS) or a frame leaves some
        connection unheard (True), or until the receive times out (False).

        The common frame (one payload, its ``sender`` its connection's id, from a registered
        peer to a registered peer, of a known type, within the size limit) is routed here
        without a Python call: pyzmq's compiled receive and send, msgspec for the route. Every
        other frame (to the broker or a group, from a stranger, malformed, traced with OTel,
        refused by the recipient's queue) takes the full path (:meth:`_take`), which rejects,
        answers or routes it as before.
        """
        recv = router.recv
        read_route = self._codec.read_route
        max_bytes = self._codec.max_frame_bytes
        registered = self._groups[ALL_GROUP]
        heard_from = self._heard
        # Proofs of identity, OTel spans and dropped frames need more than a route.
        simple = not self._authenticated and self._otel is None and self.drops is None
        self._housekeeping_due = False
        stats = self.stats
        while True:
            try:
                routing_id = recv(0)
            except zmq.Again:
                return False
            # The last frame as a zmq.Frame: it tells whether more follow, and it carries
            # the connection's properties (User-Id with CURVE, its descriptor).
            last = recv(0, False)
            payload = last.bytes
            try:
                route = read_route(payload)
            except Exception:  # the full path says what is wrong with it
                route = _NO_ROUTE
            sender = route.sender
            recipient = route.recipient
            if (
                sender in registered
                and recipient in registered
                and route.type in MESSAGE_TYPES
                and sender.encode() == routing_id
                and not last.more
                and len(payload) <= max_bytes
                and (simple or self._plain(route, last))
            ):
                heard_from.add(sender)
                try:
                    _send(router, recipient.encode(), _SNDMORE_NOBLOCK)
                except zmq.ZMQError:
                    pass  # the full path below answers it (nothing was sent)
                else:
                    _send(router, payload, _NOBLOCK)
                    stats.routed += 1
                    if self._housekeeping_due:
                        return True
                    continue
            frames = [routing_id, payload]
            while last.more:
                last = recv(0, False)
                frames.append(last.bytes)
            self._take(router, watch, frames, last)
            if watch.pending or self._housekeeping_due:
                return True

    def _plain(self, route: Route, last: zmq.Frame) -> bool:
        """True when a frame needs nothing of the full path: its connection proved the sender's
        id (CURVE, run secret), it carries no trace to export, and no drop is set for tests."""
        if self._authenticated and last.get("User-Id") != route.sender:
            return False
        if self._otel is not None and route.trace is not None:
            return False
        return self.drops is None

    # --- routing --------------------------------------------------------------------------------

    def _take(
        self, router: zmq.Socket[bytes], watch: RouterWatch, frames: list[bytes], last: zmq.Frame
    ) -> None:
        """Handle one message taken from the router (``last``: its last frame as received)."""
        self._last_frame = last
        self._hear_register = False
        self._handle(router, frames)
        # Heard once handled: hearing may read the connection monitor and route the frames a
        # closed connection left, which came after this one.
        if watch.pending or self._hear_register:
            watch.heard(last, frames[0])

    def _route_queued(self, router: zmq.Socket[bytes], watch: RouterWatch) -> None:
        """Route what already waits in the router's queue, without waiting for more."""
        for _ in range(_QUEUED_AT_MOST):
            try:
                frames, last = _receive_message(router, zmq.NOBLOCK)
            except zmq.Again:
                return
            self._take(router, watch, frames, last)

    def _handle(self, router: zmq.Socket[bytes], frames: list[bytes]) -> None:
        peer = frames[0].decode("utf-8", "replace")
        if frames[0][:1] == b"\x00":
            # libzmq's own id for a connection that set none: it names no agent.
            self._reject(
                router,
                frames[0],
                f"0x{frames[0].hex()}",
                _NO_ROUTING_ID,
                self._codec.salvage_envelope(frames[1]),
            )
            return
        # Before anything else is read: a squatter must not keep an id by sending bad frames.
        if self._authenticated and not self._bound_to_key(router, peer, frames[-1]):
            return
        if len(frames) != 2:
            self._reject(
                router,
                frames[0],
                peer,
                f"expected 1 payload frame, got {len(frames) - 1}",
                self._codec.salvage_envelope(frames[1]),
            )
            return
        payload = frames[1]
        try:
            envelope = self._codec.decode_envelope(payload)
        except ProtocolError as error:
            self._reject(router, frames[0], peer, str(error), self._codec.salvage_envelope(payload))
            return
        if envelope.sender != peer:
            if self.curve is not None:
                self.stats.spoofed += 1
                self._log.error(
                    "broker.spoofed", key=peer, claimed=envelope.sender, msg_type=envelope.type
                )
            self._reject(
                router,
                frames[0],
                peer,
                f"sender field {envelope.sender!r} does not match the connection's id {peer!r}",
                envelope,
            )
            return
        if (
            envelope.recipient != BROKER_ID
            and peer not in self._groups[ALL_GROUP]
            and not self._readmit(peer)
        ):
            self._reject(router, frames[0], peer, _NOT_REGISTERED, envelope)
            return
        self.stats.peers.add(peer)
        known = self._registry.get(peer)
        if known is not None:
            known.last_seen = time.monotonic()
        if self._otel is not None and envelope.trace is not None:
            self._otel.route(envelope, lambda: self._route(router, peer, payload, envelope))
        else:
            self._route(router, peer, payload, envelope)

    def _route(
        self, router: zmq.Socket[bytes], peer: str, payload: bytes, envelope: Envelope
    ) -> None:
        if envelope.recipient == BROKER_ID:
            self._handle_control(router, peer, payload, envelope)
        elif envelope.recipient.startswith(GROUP_PREFIX):
            self._broadcast(router, peer, payload, envelope)
        else:
            self._forward(router, envelope.recipient, payload, envelope)

    def _bound_to_key(self, router: zmq.Socket[bytes], peer: str, payload: bytes) -> bool:
        """With CURVE: True when the frame's routing id is its key's agent id (the User-Id the
        ZAP handler gave its connection). Its sender is then checked against the routing id.

        A connection on another agent's routing id is closed: left open, it would keep that
        agent out (ZeroMQ keeps a routing id with its first connection). Its key is not banned:
        the key's own agent, restarted, must still get in under its own id.
        """
        assert self._last_frame is not None
        user = str(self._last_frame.get("User-Id"))
        if user == peer:
            return True
        self.stats.spoofed += 1
        self.stats.rejected += 1
        closed = self._watch.close_source(self._last_frame) if self._watch else False
        envelope = self._codec.salvage_envelope(payload)
        self._log.error(
            "broker.spoofed",
            key=user,
            claimed=peer,
            msg_type=envelope.type if envelope else None,
            reason=(
                f"the key of {user!r} connected with routing id {peer!r}: a connection must "
                "use its key's agent id; connection closed"
            ),
            closed=closed,
        )
        return False

    @property
    def _authenticated(self) -> bool:
        """True when every connection proved its id at its handshake (CURVE keys, run secret)."""
        return self.curve is not None or self.secret is not None

    def _proof_name(self) -> str:
        if self.curve is not None:
            return "curve"
        return "secret" if self.secret is not None else "none"

    def _handle_control(
        self, router: zmq.Socket[bytes], peer: str, payload: bytes, envelope: Envelope
    ) -> None:
        if envelope.type == "_GaveUp" and peer != SUPERVISOR_ID:
            reason = f"only {SUPERVISOR_ID!r} may send _GaveUp"
            self._reject(router, peer.encode(), peer, reason, envelope)
            return
        if envelope.type == "_GaveUp" and not self._authenticated:
            # Anyone can connect as 'supervisor' to a broker that checks no proof: obeyed,
            # _GaveUp would let a stranger depart any agent.
            reason = (
                f"this broker checks no proof of identity (no --secret, no --curve), so no "
                f"connection can prove it is {SUPERVISOR_ID!r}: _GaveUp is refused; start the "
                "broker with --secret FILE or --curve KEYDIR to take it"
            )
            self._reject(router, peer.encode(), peer, reason, envelope)
            return
        if envelope.type not in ("_Register", "_Ping", "_Vouch", "_Leave", "_Watch", "_GaveUp"):
            # The notice names the message: a reliable one (an Order) is then not sent again.
            reason = f"the broker does not handle {envelope.type}"
            self._reject(router, peer.encode(), peer, reason, envelope)
            return
        try:
            message = self._codec.decode(payload)
        except ProtocolError as error:
            self._reject(router, peer.encode(), peer, str(error), envelope)
            return
        if isinstance(message, _Vouch):
            self._vouch(message)  # every second from every keeper: not traced
            return
        if tracing_enabled():
            trace_recv(message.id, envelope.type, peer, BROKER_ID, None, message.tick)
        if isinstance(message, _Ping):
            self._ping(router, peer, message)
        elif isinstance(message, _Leave):
            self._depart(router, peer, f"left: {message.reason}" if message.reason else "left")
        elif isinstance(message, _Register):
            refusal = self._admission(peer, message)
            if refusal is not None:
                self._refuse_registration(router, peer, envelope, refusal)
            else:
                self._register(router, peer, message)
        elif isinstance(message, _Watch):
            self._add_watch(router, peer, message.agent)
        elif isinstance(message, _GaveUp):
            self._gave_up(router, message.agent, message.reason or "gave_up")

    # --- membership -----------------------------------------------------------------------------

    def _admission(self, peer: str, message: _Register) -> str | None:
        """Why ``peer`` may not register as ``message`` asks, or None when it may.

        A clock (a registration that lists ``members``) declares the run; a second clock is
        refused while a run is on. Once a run is declared, only its members register, and a
        registration naming another run is refused. Before any clock declared a run, agents
        register (they may start first): those that turn out not to be members are refused
        when it is declared (:meth:`_declare_run`).
        """
        run = self.run
        if peer == BROKER_ID or peer.startswith(GROUP_PREFIX):
            return (
                f"{peer!r} names the broker or a group, not an agent: register under an agent "
                "id (1-64 letters, digits, '-', '_', '.', ':', starting with a letter or digit)"
            )
        if peer == SUPERVISOR_ID and not self._authenticated:
            return (
                f"this broker checks no proof of identity (no --secret, no --curve), so no "
                f"connection can prove it is {SUPERVISOR_ID!r}"
            )
        if message.members:
            if run is not None and peer != run.clock:
                return (
                    f"this broker serves run {run.run_id!r} of the clock {run.clock!r} until "
                    f"that clock leaves: one broker serves one run at a time; start another "
                    f"broker (`warband broker --bind ENDPOINT`) for {peer!r}'s run, or wait"
                )
            if run is not None and message.run and message.run != run.run_id:
                return f"the clock {peer!r} already serves run {run.run_id!r} on this broker"
            return None
        if run is None:
            if message.run in self._runs_over:
                return f"run {message.run!r} is over ({self._runs_over[message.run]})"
            return None
        if message.run and message.run != run.run_id:
            return f"this broker serves run {run.run_id!r}, not run {message.run!r}"
        if peer not in run.members and peer != SUPERVISOR_ID:
            return _not_a_member(peer, run)
        return None

    def _refuse_registration(
        self, router: zmq.Socket[bytes], peer: str, envelope: Envelope, reason: str
    ) -> None:
        """Answer a refused ``_Register`` with ``_Undeliverable`` naming why; the peer stays
        unregistered (every frame it sends elsewhere is refused)."""
        self._log.warning(
            "broker.registration_refused",
            peer=peer,
            run=self.run.run_id if self.run else None,
            reason=reason,
        )
        self._reject(router, peer.encode(), peer, reason, envelope)

    def _declare_run(self, router: zmq.Socket[bytes], clock: str, message: _Register) -> None:
        """The clock ``clock`` declared its run: serve it, and refuse registered non-members."""
        if self.run is not None and self.run.clock == clock:
            return  # the clock registering again (new groups, a broker that came back)
        members = frozenset([clock, *message.members])
        self.run = RunMembership(message.run or uuid.uuid4().hex[:12], clock, members)
        self._log.info(
            "broker.run_declared", run=self.run.run_id, clock=clock, members=sorted(members)
        )
        for peer in sorted(self._registry):
            if peer not in members and peer not in (clock, SUPERVISOR_ID):
                reason = _not_a_member(peer, self.run)
                self._log.warning("broker.registration_refused", peer=peer, reason=reason)
                self._depart(router, peer, f"refused: {reason}")
                notice = _Undeliverable(
                    recipient=peer,
                    message_id="",
                    message_type="_Register",
                    target=BROKER_ID,
                    reason=f"rejected by broker: {reason}",
                )
                self._send_own(router, peer, notice)

    def _end_run(self, reason: str) -> None:
        """The run's clock left for good: the run is over, and the next clock starts a new one.

        What the broker remembered of this run's departures is forgotten, so that the agents of
        the next run, which may register before its clock, are not told of this run's clock
        leaving (they would stop at once).
        """
        run = self.run
        if run is None:
            return
        self.run = None
        self._runs_over[run.run_id] = f"its clock {run.clock!r} {reason}"
        if len(self._runs_over) > RUNS_OVER_KEPT:
            del self._runs_over[next(iter(self._runs_over))]
        self._gone.clear()
        self._log.info("broker.run_over", run=run.run_id, clock=run.clock, reason=reason)

    def _register(self, router: zmq.Socket[bytes], peer: str, message: _Register) -> None:
        self._hear_register = True  # its connection is known by it from now on (_take)
        if message.members:
            self._declare_run(router, peer, message)
        if message.lockstep and peer in self._groups[ALL_GROUP]:
            # A lockstep actor changing its groups during tick N: every broadcast of tick N
            # was sent before the clock's Tick N+1 reached us (each actor's TickDone follows
            # its sends on the same connection), so applying the change as Tick N+1 passes
            # gives every run the same deliveries, in one process or many.
            self._defer(message.tick, peer, list(message.groups))
        else:
            self._join(peer, message.groups)
        self.stats.peers.add(peer)
        known = self._registry.get(peer)
        watch = frozenset(message.watch)
        self._registry[peer] = _Peer(
            watch=watch,
            last_seen=time.monotonic(),
            ping_interval=known.ping_interval if known else None,
        )
        self._gone.pop(peer, None)
        self._silent.pop(peer, None)
        peers = sorted(self._groups[ALL_GROUP])
        self._send_own(router, peer, _Registered(recipient=peer, reply_to=message.id, peers=peers))
        if known is None:
            for agent, reason in sorted(self._gone.items()):
                if "*" in watch or agent in watch:
                    self._send_own(router, peer, _Left(recipient=peer, agent=agent, reason=reason))

    # --- liveness and departures ----------------------------------------------------------------

    def _add_watch(self, router: zmq.Socket[bytes], peer: str, agent: str) -> None:
        """Report ``agent``'s departure to ``peer`` from now on; at once if it is gone already."""
        known = self._registry.get(peer)
        if known is None:
            return
        known.watch = known.watch | {agent}
        reason = self._gone.get(agent)
        if reason is not None:
            self._send_own(router, peer, _Left(recipient=peer, agent=agent, reason=reason))

    def _remember_gone(self, peer: str, reason: str) -> None:
        """Keep why ``peer`` left for watchers that register later: the last GONE_KEPT only,
        so a broker that sees endless new ids (restarts under fresh ids) does not grow."""
        self._gone.pop(peer, None)
        self._gone[peer] = reason
        if len(self._gone) > GONE_KEPT:
            del self._gone[next(iter(self._gone))]

    def _gave_up(self, router: zmq.Socket[bytes], agent: str, reason: str) -> None:
        """The supervisor will not restart ``agent``: report it gone for good to its watchers.

        Told even when the agent already departed (``disconnected``: its watchers may be waiting
        for a restart) or never registered (it crashed at start): its superior reassigns its
        work, and the clock stops waiting for it at once.
        """
        self._log.warning("broker.gave_up", peer=agent, reason=reason)
        if agent in self._registry:
            self._depart(router, agent, reason)
            return
        self._remember_gone(agent, reason)
        for watcher, known in sorted(self._registry.items()):
            if "*" in known.watch or agent in known.watch:
                notice = _Left(recipient=watcher, agent=agent, reason=reason)
                self._send_own(router, watcher, notice)

    def _ping(self, router: zmq.Socket[bytes], peer: str, ping: _Ping) -> None:
        known = self._registry.get(peer)
        if known is not None:
            known.ping_interval = max(ping.interval, 0.01)
        self._send_own(router, peer, _Pong(recipient=peer, registered=known is not None))

    def _vouch(self, vouch: _Vouch) -> None:
        """A process's keeper (keeper.py) says these agents of its process are alive: each one
        registered counts as heard, as if a frame had come from it. Its own connection still
        tells when it is gone (``disconnected``); only silence is covered."""
        registry = self._registry
        for agent in vouch.agents:
            if agent in registry:
                self._heard.add(agent)

    def _check_liveness(self, router: zmq.Socket[bytes]) -> None:
        """Count a pinging peer gone once it has been silent for SILENT_PINGS intervals of the
        broker's own running time."""
        now = time.monotonic()
        if now < self._next_liveness_check:
            return
        self._next_liveness_check = now + _POLL_MS / 1000
        self._forgive_own_stall(now)
        if self._heard:
            registry = self._registry
            for peer in self._heard:
                heard = registry.get(peer)
                if heard is not None:
                    heard.last_seen = now
            self._heard.clear()
        for peer, known in list(self._registry.items()):
            if known.ping_interval is None:
                continue
            silent = now - known.last_seen
            if silent > SILENT_PINGS * known.ping_interval:
                self._depart(router, peer, f"silent for {silent:.1f} s")

    def _forgive_own_stall(self, now: float) -> None:
        """Take the time the broker itself did not run off every peer's silence.

        The routing loop looks every _POLL_MS. When far more passed since its last look, the
        broker was not running (a machine kept busy by other work starved its process, or the
        interpreter lock its thread, as in a one-process run): what it could not read in that
        time says nothing about the peers, whose frames (pings, a keeper's vouches) may wait
        in its queue or in their own starved threads. A peer really gone still shows: its
        connection closes (``disconnected``), or it stays silent while the broker runs.
        """
        last, self._last_liveness_check = self._last_liveness_check, now
        if last is None:
            return
        gap = now - last
        if gap <= 2 * _POLL_MS / 1000:  # the most a look waits while the broker runs
            return
        stalled = gap - _POLL_MS / 1000
        for known in self._registry.values():
            known.last_seen = min(now, known.last_seen + stalled)

    def _depart(self, router: zmq.Socket[bytes], peer: str, reason: str) -> None:
        """Forget ``peer`` (groups, pending group changes) and tell whoever watches it."""
        known = self._registry.pop(peer, None)
        if known is None:
            return
        self._remember_gone(peer, reason)
        ending_run = (
            self.run is not None and peer == self.run.clock and not reason.startswith("silent")
        )
        if reason.startswith("silent"):
            groups = [
                g for g, members in self._groups.items() if peer in members and g != ALL_GROUP
            ]
            self._silent[peer] = (groups, known)
        self.stats.departed += 1
        for members in self._groups.values():
            members.discard(peer)
        self._deferred = [change for change in self._deferred if change[1] != peer]
        if reason.startswith("left"):
            self._log.info("broker.departed", peer=peer, reason=reason)
        else:
            self._log.warning("broker.departed", peer=peer, reason=reason)
        for watcher, known in sorted(self._registry.items()):
            if "*" in known.watch or peer in known.watch:
                self._send_own(router, watcher, _Left(recipient=watcher, agent=peer, reason=reason))
        if ending_run:
            self._end_run(reason)

    def _defer(self, tick: int, peer: str, groups: list[str]) -> None:
        """Keep a lockstep group change for the next Tick; at most two per peer (a lockstep
        actor is never more than one tick ahead), so a peer re-registering without end, or
        with made-up ticks, cannot grow the list."""
        mine = [c for c in self._deferred if c[1] == peer and c[0] < tick][-1:]
        others = [c for c in self._deferred if c[1] != peer]
        self._deferred = [*others, *mine, (tick, peer, groups)]

    def _readmit(self, peer: str) -> bool:
        """Take back a peer departed for silence that speaks again (its watchers were told it
        left; it registers again itself once it notices the gap, see _liveness.py)."""
        found = self._silent.pop(peer, None)
        if found is None or (self.run is not None and peer not in self.run.members):
            return False  # never departed, or of a run since replaced: it must register
        groups, known = found
        known.last_seen = time.monotonic()
        self._registry[peer] = known
        self._gone.pop(peer, None)
        self._join(peer, groups)
        self._log.warning("broker.readmitted", peer=peer)
        return True

    def _join(self, peer: str, groups: list[str]) -> None:
        """Make ``groups`` (and ``all``) the groups of ``peer``, replacing its earlier ones."""
        for members in self._groups.values():
            members.discard(peer)
        for group in [ALL_GROUP, *groups]:
            self._groups[group].add(peer)
        self._log.info("broker.register", peer=peer, groups=sorted(groups))

    def _apply_deferred(self, tick: int) -> None:
        due = [change for change in self._deferred if change[0] < tick]
        if due:
            self._deferred = [change for change in self._deferred if change[0] >= tick]
            for _, peer, groups in due:
                self._join(peer, groups)

    def _broadcast(
        self, router: zmq.Socket[bytes], peer: str, payload: bytes, envelope: Envelope
    ) -> None:
        group = envelope.recipient[len(GROUP_PREFIX) :]
        if envelope.type == "Tick":
            self._tick = envelope.tick
            if self._deferred:
                self._apply_deferred(envelope.tick)
        # An empty group is not an error: a team whose members all died still has a channel.
        members = sorted(self._groups.get(group, ()))
        if self.drops is not None:
            for member in members:
                if member != peer:
                    self._forward(router, member, payload, envelope)
            return
        # What _forward does, inline: a broadcast to a team or to every ticking actor sends
        # one frame per member.
        stats = self.stats
        for member in members:
            if member == peer:
                continue
            try:
                _send(router, member.encode(), _SNDMORE_NOBLOCK)
            except zmq.ZMQError as error:
                self._not_forwarded(router, member, envelope, error)
            else:
                _send(router, payload, _NOBLOCK)
                stats.routed += 1

    def _forward(
        self, router: zmq.Socket[bytes], target: str, payload: bytes, envelope: Envelope
    ) -> None:
        if self.drops is not None and self.drops.drop(envelope.type):
            self._log.debug(
                "broker.dropped", peer=target, msg_type=envelope.type, msg_id=envelope.id
            )
            return
        try:
            _send_to(router, target, payload)
        except zmq.ZMQError as error:
            self._not_forwarded(router, target, envelope, error)
        else:
            self.stats.routed += 1

    def _not_forwarded(
        self, router: zmq.Socket[bytes], target: str, envelope: Envelope, error: zmq.ZMQError
    ) -> None:
        """Answer a frame ``target`` could not be sent: its queue is full, or it is gone."""
        if isinstance(error, zmq.Again):
            self.stats.would_block += 1
            self._undeliverable(
                router, envelope, f"{target!r} is not keeping up (queue full)", errno="EAGAIN"
            )
            return
        if error.errno != zmq.EHOSTUNREACH:
            raise error
        self.stats.unreachable += 1
        self._undeliverable(
            router, envelope, f"no agent {target!r} is connected", errno="EHOSTUNREACH"
        )
        self._depart(router, target, "disconnected")

    # --- failures -------------------------------------------------------------------------------

    def _undeliverable(
        self,
        router: zmq.Socket[bytes],
        envelope: Envelope,
        reason: str,
        *,
        errno: str | None = None,
    ) -> None:
        self.stats.undeliverable += 1
        if self._otel is not None:
            self._otel.refused(reason)
        self._log.error(
            "broker.undeliverable",
            errno=errno,
            peer=envelope.sender,
            msg_id=envelope.id,
            msg_type=envelope.type,
            recipient=envelope.recipient,
            reason=reason,
        )
        if envelope.type == "_Undeliverable":
            return  # never bounce a bounce
        notice = _Undeliverable(
            recipient=envelope.sender,
            message_id=envelope.id,
            message_type=envelope.type,
            target=envelope.recipient,
            reason=reason,
            tick=envelope.tick,
        )
        self._send_own(router, envelope.sender, notice)

    def _reject(
        self,
        router: zmq.Socket[bytes],
        routing_id: bytes,
        peer: str,
        reason: str,
        envelope: Envelope | None = None,
    ) -> None:
        self.stats.rejected += 1
        if self._otel is not None:
            self._otel.refused(f"rejected by broker: {reason}")
        address = self._watch.address_of(routing_id) if self._watch else None
        self._log.error("broker.rejected", peer=peer, address=address, reason=reason)
        notice = _Undeliverable(
            recipient=peer,
            message_id=envelope.id if envelope else "",
            message_type=envelope.type if envelope else "",
            target=envelope.recipient if envelope else "",
            reason=f"rejected by broker: {reason}",
            tick=envelope.tick if envelope else 0,
        )
        self._send_own(router, routing_id, notice)

    def _check_links(self, router: zmq.Socket[bytes], watch: RouterWatch) -> None:
        """Log connections that closed, and refuse the ones ZeroMQ keeps silent (router_watch)."""
        self._next_link_check = time.monotonic() + _POLL_MS / 1000
        # Before each closed connection is forgotten, the watch has the frames it left routed
        # (an agent's _Stats and _Leave as it stops): the monitor can tell of the close before
        # the router hands them over, and then the peer would count as gone and its own last
        # words be refused; and they must not be heard as a later connection's (router_watch).
        closed, silent = watch.poll()
        for link in closed:
            if link.routing_id is not None:
                peer = link.routing_id.decode("utf-8", "replace")
                self._log.info("broker.disconnected", peer=peer, address=link.address)
                if not watch.has_link(link.routing_id):
                    # Its process died or its host closed the connection: no need to wait
                    # until someone sends to it to find out.
                    self._depart(router, peer, "disconnected")
                    if self.run is not None and peer == self.run.clock:
                        self._end_run("disconnected")  # it had gone silent first
        for link in silent:
            self._refuse_silent(link, watch)

    def _refuse_silent(self, link: Link, watch: RouterWatch) -> None:
        self.stats.rejected += 1
        same_host = sorted(
            peer
            for peer in self._groups[ALL_GROUP]
            if (watch.address_of(peer.encode()) or "").rsplit(":", 1)[0]
            == link.address.rsplit(":", 1)[0]
        )
        self._log.error(
            "broker.rejected",
            peer="unknown",
            address=link.address,
            reason=(
                f"no frame from this connection reached the broker within "
                f"{watch.first_frame_timeout:g} s: it claims the routing id of an agent that "
                "is already connected (ZeroMQ keeps the route with the first connection and "
                "drops this one's frames), or it never sent its _Register; connection closed"
            ),
            connected_from_same_host=same_host,
            closed=watch.close_link(link),
        )

    def _send_own(self, router: zmq.Socket[bytes], target: str | bytes, message: Message) -> None:
        self._seq += 1
        # The broker's own notices are of the run's current tick (stamped 0, a departure sorted
        # to the top of a trace, before what it ends); each is handled on arrival, whatever its
        # tick. An _Undeliverable keeps the tick of the frame it refuses (PROTOCOL.md, 7).
        own_tick = isinstance(message, _Registered | _Pong | _Left) and not message.tick
        stamped = msgspec.structs.replace(
            message,
            sender=BROKER_ID,
            id=f"{BROKER_ID}:c{self._seq}",
            tick=self._tick if own_tick else message.tick,
        )
        try:
            if isinstance(target, bytes):
                router.send(target, _SNDMORE_NOBLOCK)
                router.send(self._codec.encode(stamped), _NOBLOCK)
                target = target.decode("utf-8", "replace")
            else:
                _send_to(router, target, self._codec.encode(stamped))
        except zmq.ZMQError as error:
            # Pongs and departure notices are advice: one lost to a peer that is closing (the
            # run's end) is no news. Nor is any notice to a peer whose connection is gone
            # (EHOSTUNREACH): it left (as a run ends, its _Leave may still be queued behind the
            # frame this notice answers) or crashed, and its departure is logged as such
            # (broker.departed: a warning when it went without a goodbye). A notice refused by
            # a connected peer's full queue, a registration answer or a refusal, is an error.
            advice = isinstance(message, _Pong | _Left) or error.errno == zmq.EHOSTUNREACH
            log = self._log.error if target in self._registry and not advice else self._log.info
            self.stats.notices_lost += 1
            log(
                "broker.notice_lost",
                peer=target,
                msg_type=type(message).__name__,
                reason=str(error),
                errno=_errno_name(error),
                notices_lost=self.stats.notices_lost,
            )
            return
        if tracing_enabled():
            trace_send(stamped.id, type(stamped).__name__, BROKER_ID, target, None, stamped.tick)


# pyzmq's recv_multipart and send_multipart cost about as much again as the routing itself
# (an RCVMORE query per frame, enum arithmetic per send); the broker does the two by hand.


def _not_a_member(peer: str, run: RunMembership) -> str:
    members = sorted(run.members)
    more = f" and {len(members) - 12} more" if len(members) > 12 else ""
    shown = ", ".join(members[:12]) + more
    return (
        f"{peer!r} is not a participant of run {run.run_id!r} (its clock {run.clock!r} declared "
        f"{shown}): register under the id of an agent of the run's scenario"
    )


def remove_ipc_socket_file(endpoint: str) -> None:
    """Remove the socket file of an ``ipc://`` endpoint (ZeroMQ 4.3 leaves it behind).

    Call it once the broker bound there is gone: after :meth:`Broker.serve` returned (it calls
    this itself) or after its process was killed. Anything but a socket file is left alone.
    """
    if not endpoint.startswith("ipc://") or endpoint.startswith("ipc://@"):
        return  # not ipc, or Linux's abstract namespace: no file
    path = Path(endpoint.removeprefix("ipc://"))
    with contextlib.suppress(OSError):  # gone already
        if stat.S_ISSOCK(path.stat().st_mode):
            path.unlink()


def _receive_message(router: zmq.Socket[bytes], flags: int = 0) -> tuple[list[bytes], zmq.Frame]:
    """Every frame of the next message, the peer's routing id first, and the last frame as
    received (its properties tell the connection it came over); zmq.Again on timeout, or at
    once with ``flags=zmq.NOBLOCK`` when nothing waits."""
    frame = router.recv(flags, copy=False)
    frames = [frame.bytes]
    while frame.more:
        frame = router.recv(copy=False)
        frames.append(frame.bytes)
    return frames, frame


def _errno_name(error: zmq.ZMQError) -> str:
    """``EAGAIN``, ``EHOSTUNREACH``, ...: the symbolic name of ``error``'s errno."""
    try:
        return zmq.Errno(error.errno or 0).name
    except ValueError:
        return str(error.errno)


def _send_to(router: zmq.Socket[bytes], target: str, payload: bytes) -> None:
    """Send ``payload`` to the peer whose routing id is ``target``, without blocking."""
    _send(router, target.encode(), _SNDMORE_NOBLOCK)
    _send(router, payload, _NOBLOCK)
