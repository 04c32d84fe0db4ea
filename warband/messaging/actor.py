"""The Actor base: typed handlers, send / reply / request, timers, ticks, lifecycle hooks.

An actor is an asyncio task with one connection to the broker. Subclasses declare handlers with
:func:`handles` and override the hooks (:meth:`Actor.on_start`, :meth:`Actor.on_tick`,
:meth:`Actor.on_stop`, :meth:`Actor.on_failure`). Other actors know it only by its id.

Lockstep (the default) makes runs reproducible. Every message carries its sender's tick. On
``Tick(N)`` an actor first handles every buffered message stamped before N, sorted by
(tick, sender, seq), then fires the timers due at N, expires requests whose deadline is N, calls
``on_tick(N)``, and reports ``TickDone(N)``. After each of those steps it waits until every
handler it started has finished or is parked in :meth:`Actor.request` / :meth:`Actor.sleep`,
so what a handler sends, and in which order, never depends on the event loop's scheduling.
In lockstep, handlers may await only the actor's own awaitables (``request``, ``sleep``).

Realtime mode handles each message as it arrives and counts timeouts in seconds.

This module holds the hooks, sending, running and dispatch; the other concerns live one per
module and are mixed in: ``_timers`` (call_later, every), ``_requests`` (request, sleep,
conversations, refusals), ``_liveness`` (broker pings, re-registration, leaving), ``_control``
(who may send what) and ``_lockstep`` (the tick). ``_state`` declares the state they share.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import itertools
import os
import random
import signal
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec
import zmq

from ..exceptions import DeliveryError, ProtocolError
from ._control import ControlMixin
from ._delivery import DeliveryMixin
from ._liveness import BrokerLiveness, LivenessMixin
from ._lockstep import LockstepMixin
from ._mailbox import DEFAULT_MAILBOX_LIMIT, Mailbox, MailboxMixin
from ._requests import Pending, RequestsMixin
from ._state import ActorStats, M, Mode
from ._timers import Timer, TimersMixin
from .addresses import (
    BROKER_ID,
    DEFAULT_CLOCK_ID,
    GROUP_PREFIX,
    TICK_GROUP,
    check_actor_id,
    check_group_name,
)
from .catalog import (
    EndTalk,
    Heartbeat,
    Message,
    Percept,
    Tick,
    _Ack,
    _FinishRun,
    _Left,
    _Pong,
    _Ready,
    _Register,
    _Registered,
    _RollCall,
    _Shutdown,
    _Stats,
    _Undeliverable,
)
from .codec import Codec
from .otel import ActorTelemetry, actor_telemetry
from .supervisor import incarnation
from .tracing import _state as _tracing
from .tracing import get_logger, trace_recv, trace_send

if TYPE_CHECKING:
    from .curve import CurveClient
    from .secret import RunSecret

__all__ = [
    "DEFAULT_CLOCK_ID",
    "TICK_GROUP",
    "Actor",
    "ActorStats",
    "Mode",
    "Timer",
    "check_actor_id",
    "check_group_name",
    "handles",
]

Handler = Callable[[Any, Any], Awaitable[None] | None]


_send_listeners: list[Callable[[Message], None]] = []
"""Called with every message any actor of this process sends (see :func:`listening_to_sends`)."""


@contextmanager
def listening_to_sends(listener: Callable[[Message], None]) -> Iterator[None]:
    """Call ``listener`` with every message an actor of this process sends (stamped, control
    messages included) until the block ends: :func:`warband.testing.capture_messages`."""
    _send_listeners.append(listener)
    try:
        yield
    finally:
        _send_listeners.remove(listener)


def handles(*message_types: type[Message]) -> Callable[[Handler], Handler]:
    """Mark a method as the handler of ``message_types`` (one handler per type per class)."""

    def mark(function: Handler) -> Handler:
        function.__warband_handles__ = message_types  # type: ignore[attr-defined]
        return function

    return mark


class Actor(
    TimersMixin,
    RequestsMixin,
    LivenessMixin,
    ControlMixin,
    LockstepMixin,
    DeliveryMixin,
    MailboxMixin,
):
    """Base class of every warband actor: bots, squads, commanders, the world, the clock.

    Failure semantics: an exception raised by a handler or ``on_tick`` is passed to
    :meth:`on_failure` and the actor keeps running; a frame that cannot be decoded is logged as
    ``msg.rejected`` and skipped. Only :meth:`stop`, a ``_Shutdown`` from the clock, or an
    exception in :meth:`on_start` ends the actor.
    """

    lockstep_participant: ClassVar[bool] = True
    """False for actors that do not report TickDone (the clock itself)."""
    mailbox_limit: ClassVar[int] = DEFAULT_MAILBOX_LIMIT
    """Messages received and not yet handled that the actor holds; at the bound, Percepts are
    conflated (the newest per sender kept, counted and logged) and nothing else is ever
    dropped; past it the connection stops reading and ZeroMQ queues (see ``_mailbox``)."""
    percept_deltas: ClassVar[bool] = False
    """True when the actor's Percept handler applies delta percepts (``Percept.since``): said
    to the clock in ``_Ready``, so a world sends it what changed instead of every fact."""
    _immediate_types: ClassVar[tuple[type[Message], ...]] = (
        Tick,
        _Registered,
        _RollCall,
        _Shutdown,
        _Pong,
        _Left,
    )
    _handlers: ClassVar[dict[type[Message], str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        handlers: dict[type[Message], str] = {}
        for klass in reversed(cls.__mro__):
            for name, member in vars(klass).items():
                for message_type in getattr(member, "__warband_handles__", ()):
                    handlers[message_type] = name
        cls._handlers = handlers

    def handler_for(self, message_type: type[Message]) -> Callable[[Any], Any] | None:
        """What handles a message of ``message_type``: by default the method marked with
        :func:`handles` for it, or None (the message is logged ``msg.unhandled`` and a request
        is refused). An actor made of parts (an agent's components) answers with theirs too."""
        name = self._handlers.get(message_type)
        return getattr(self, name) if name is not None else None

    def __init__(self, actor_id: str, *, groups: Iterable[str] = (), seed: int = 0) -> None:
        self.id = check_actor_id(actor_id)
        self.groups = tuple(check_group_name(group) for group in groups)
        self.seed = seed
        self.random = random.Random(f"{seed}/{actor_id}")
        """This actor's own seeded random source: use it, never the global one."""
        self.tick = 0
        self.mode: Mode = "lockstep"
        self.clock_id = DEFAULT_CLOCK_ID
        self.run_id = ""
        """The id of the run this actor belongs to, when its launcher said (``run``)."""
        self.stats = ActorStats()
        self.log = get_logger(agent=actor_id)
        self._codec = Codec()
        self._connection: Any = None
        self._seq = 0
        self._control_seq = 0
        self._clock_seen = False
        self._peers_at_registration: tuple[str, ...] = ()
        self._ready_sent = False
        self._buffer: list[Message] = []
        self._mailbox = Mailbox()
        self._pending: dict[str, Pending] = {}
        self._closed_conversations: set[str] = set()
        self._closed_order: collections.deque[str] = collections.deque()
        self._watching: set[str] = set()
        self._timers: list[Timer] = []
        self._timer_order = itertools.count()
        self._tracked: set[asyncio.Task[Any]] = set()
        self._runnable = 0
        self._idle = asyncio.Event()
        self._wakeup = asyncio.Event()
        self._registered = asyncio.Event()
        self._running = asyncio.Event()
        # Set with _running in realtime mode: frames are handled in the reader callback then.
        self._handling_in_reader = False
        self._stopping = False
        self._stop_reason = ""
        self._heartbeat_interval: float | None = None
        self._tick_done_sent = 0
        self._tick_running = False
        self._liveness = BrokerLiveness()
        self._fatal: BaseException | None = None
        self._kill_tick: int | None = None
        self.shares_process = False
        """True when other actors of the run share this actor's process (a worker of
        ``warband run --workers N``, ``warband agent --ids``): :meth:`kill` then stops it alone
        rather than killing the process."""
        self._otel: ActorTelemetry | None = None
        """Span bookkeeping when this process exports OpenTelemetry spans (set in ``run``)."""
        self._init_delivery()

    # --- hooks ----------------------------------------------------------------------------------

    async def on_start(self) -> None:
        """Called once connected and registered, before the first tick. May send messages."""

    def on_tick(self, tick: int) -> Awaitable[None] | None:
        """Called every tick after the messages of the previous tick were handled."""
        return None

    async def on_stop(self) -> None:
        """Called once when the actor stops, before its connection closes."""

    def on_failure(self, error: BaseException, message: Message | None) -> None:
        """Called when a handler (``message`` set) or ``on_tick`` (``message`` None) raised.

        The default logs ``actor.failure`` with the traceback; the actor keeps running.
        """
        self.log.error(
            "actor.failure",
            error=repr(error),
            msg_type=type(message).__name__ if message else None,
            msg_id=message.id if message else None,
            exc_info=error,
        )

    def on_undeliverable(self, notice: _Undeliverable) -> None:
        """Called when the broker could not deliver one of our messages (already logged)."""

    def final_state(self) -> dict[str, Any]:
        """What this actor exposes to the scenario's outcome function at the end of a run.

        Plain data only (str, int, float, bool, None, lists and string-keyed dicts of them): in
        a multi-process run it travels to the clock as MessagePack.
        """
        return {}

    # --- sending --------------------------------------------------------------------------------

    def send(self, message: M) -> M:
        """Stamp ``message`` with our id, a sequence number and the tick, and send it."""
        return self._send(message, about_to_wait=False)

    def _send(self, message: M, *, about_to_wait: bool) -> M:
        if not message.recipient:
            raise DeliveryError(f"{self.id}: {type(message).__name__} has no recipient")
        control = type(message).__name__.startswith("_")
        if control:
            self._control_seq += 1
            message_id, seq = f"{self.id}:c{self._control_seq}", 0
        else:
            self._seq += 1
            message_id, seq = f"{self.id}:{self._seq}", self._seq
        stamped = msgspec.structs.replace(
            message,
            sender=self.id,
            id=message_id,
            seq=seq,
            tick=self.tick,
            ack_token=None if control else self._ack_token(message),
        )
        if self._otel is not None and not control and message.trace is None:
            stamped = msgspec.structs.replace(stamped, trace=self._otel.outgoing(stamped))
        connection = self._connection
        if connection is None:
            raise DeliveryError(f"{self.id} is not running; cannot send {type(message).__name__}")
        frame = self._codec.encode(stamped)
        try:
            connection.send(frame, about_to_wait=about_to_wait)
        except zmq.Again:
            refusal = connection.refusal()
            if refusal is not None:  # nothing will ever be sent: say why, not "queue full"
                raise DeliveryError(f"{self.id}: {refusal}") from None
            # Never silent: counted, logged, and the caller learns it was not sent.
            self.stats.would_block += 1
            self.log.error(
                "msg.would_block",
                msg_id=stamped.id,
                msg_type=type(stamped).__name__,
                recipient=stamped.recipient,
                would_block=self.stats.would_block,
            )
            raise DeliveryError(
                f"{self.id}: cannot send {type(stamped).__name__} {stamped.id} to "
                f"{stamped.recipient!r}: the queue to the broker is full (EAGAIN); the broker "
                "is not reading, retry later"
            ) from None
        if stamped.ack_token is not None:
            self._track(stamped, frame)
        if not control:
            self.stats.sent += 1
        for listener in _send_listeners:
            listener(stamped)
        # Acks are delivery plumbing, like re-sends and duplicates (see _delivery): not traced.
        if _tracing.tracing and not isinstance(stamped, _Ack):
            trace_send(
                stamped.id,
                type(stamped).__name__,
                stamped.sender,
                stamped.recipient,
                stamped.conversation,
                stamped.tick,
                stamped.reply_to,
            )
        return stamped

    def broadcast(self, group: str, message: M) -> M:
        """Send ``message`` to every member of ``group`` (except ourselves)."""
        return self.send(msgspec.structs.replace(message, recipient=GROUP_PREFIX + group))

    def reply(self, to: Message, message: M) -> M:
        """Send ``message`` back to the sender of ``to``, in the same conversation."""
        if to.conversation is not None and to.conversation in self._closed_conversations:
            raise DeliveryError(
                f"{self.id} cannot reply to {to.id}: conversation {to.conversation} is closed"
            )
        return self._send(
            msgspec.structs.replace(
                message, recipient=to.sender, reply_to=to.id, conversation=to.conversation
            ),
            about_to_wait=False,
        )

    def start_task(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Run ``coroutine`` as one of this actor's handler tasks.

        In lockstep the tick waits for it like for a handler, so what it sends stays
        deterministic; failures go to :meth:`on_failure`.
        """
        self._spawn(lambda: coroutine, None)

    # --- timers ---------------------------------------------------------------------------------

    # --- control --------------------------------------------------------------------------------

    def stop(self, reason: str = "stopped") -> None:
        """Ask the actor to stop after the message it is handling."""
        self._stopping = True
        self._stop_reason = reason
        self._wakeup.set()

    def kill(self, reason: str = "killed") -> None:
        """Die as abruptly as this process allows, logging ``actor.killed`` (tick, pid) first.

        Alone in a process a supervisor started (``warband run --processes``), the process
        gets SIGKILL (buffered log events are written first): no goodbye to the broker or
        anyone. Elsewhere (one process, a worker shared with other actors, a test) the actor
        stops, as :meth:`stop` with ``reason``. Either way the run sees the actor leave
        (``_Left``); the supervisor restarts a killed process, whose actor carries on unless
        it was made to stay dead (:meth:`kill_at` does).
        """
        from .supervisor import INCARNATION_VARIABLE
        from .tracing import flush_logging

        self.log.info("actor.killed", tick=self.tick, reason=reason, pid=os.getpid())
        if INCARNATION_VARIABLE in os.environ and not self.shares_process:
            flush_logging()  # SIGKILL leaves no chance to write them later
            os.kill(os.getpid(), signal.SIGKILL)
        self.stop(reason)

    def kill_at(self, tick: int) -> None:
        """:meth:`kill` this actor when the clock's ``Tick(tick)`` (or a later one) reaches
        it, before it handles anything of that tick (``warband run --kill AGENT@TICK``). It
        stays dead: a process the supervisor restarts after the kill stops as soon as it has
        registered again, so the run sees one departure in one process and across many (a
        restart cannot tell a kill from a crash: one that crashed before its kill tick stays
        down too). Call before :meth:`run`."""
        self._kill_tick = tick

    def finish_run(self, reason: str) -> None:
        """Ask the clock to end the whole run after the current tick."""
        self.send(_FinishRun(recipient=self.clock_id, reason=reason))

    # --- running --------------------------------------------------------------------------------

    async def run(
        self,
        endpoint: str,
        *,
        context: zmq.Context[zmq.Socket[bytes]] | None = None,
        mode: Mode = "lockstep",
        clock_id: str = DEFAULT_CLOCK_ID,
        heartbeat_interval: float | None = None,
        register_timeout: float = 30.0,
        ping_interval: float = 1.0,
        broker_timeout: float = 30.0,
        curve: CurveClient | None = None,
        secret: RunSecret | None = None,
        run_id: str = "",
    ) -> None:
        """Connect to the broker at ``endpoint`` and handle messages until stopped.

        With ``curve`` keys (:func:`warband.messaging.curve.load_client`) the connection is
        encrypted and the broker knows this actor by its key (a ``tcp://`` broker started with
        the same key directory). With a run ``secret`` (:mod:`warband.messaging.secret`) the
        actor proves its id by it to a broker holding the same secret. ``run_id``, when given,
        is the run the actor belongs to: a broker serving another run refuses it.

        In realtime mode the actor sends a Heartbeat to the clock every ``heartbeat_interval``
        seconds (default 1) from its event loop, so a stuck loop shows as silence. In lockstep,
        TickDone plays that part and the clock's tick timeout catches a stuck actor.

        In both modes the actor pings the broker every ``ping_interval`` wall-clock seconds
        (pings are control messages: they change no agent message's id or order). A broker that
        stays silent for a few intervals is counted lost; the actor then registers again until
        a broker answers, and gives up after ``broker_timeout`` seconds: it stops and ``run``
        raises :class:`DeliveryError`. The actor also stops with that error when its clock
        leaves the run for good. When it stops, for whatever reason, it tells the broker
        (``_Leave``), and the broker tells the clock, which stops waiting for it.
        """
        if heartbeat_interval is None and mode == "realtime":
            heartbeat_interval = 1.0
        from .connection import Connection

        self.mode = mode
        self.clock_id = clock_id
        self.run_id = run_id
        self._heartbeat_interval = heartbeat_interval
        self._otel = actor_telemetry(self.id)
        self._connection = Connection(
            self.id,
            endpoint,
            context=context or zmq.Context.instance(),
            on_frames=self._frames_arrived,
            inbox_limit=self.mailbox_limit,
            curve=curve,
            secret=secret,
        )
        self._connection.open()
        self._liveness = BrokerLiveness(ping_interval, broker_timeout)
        self.log.info("actor.start", endpoint=endpoint, mode=mode)
        try:
            await self._register(register_timeout)
            self._schedule_ping()
            try:
                await self.on_start()
            except BaseException as error:
                self._stop_reason = f"on_start failed: {error!r}"
                raise
            if self._kill_tick is not None and incarnation() > 0:
                # The supervisor restarted the process kill_at killed: it stays dead.
                self.log.info("actor.stays_dead", incarnation=incarnation())
                self.stop(f"killed at tick {self._kill_tick}")
            # If the clock is not registered yet, its roll call will reach us instead. An actor
            # already stopping (it stays dead, or on_start stopped it) announces nothing: the
            # clock would count it back in the run and wait for a _Stats it never sends.
            if self.lockstep_participant and self._clock_seen and not self._stopping:
                self._announce_ready()
            if mode == "realtime" and heartbeat_interval:
                self.every(heartbeat_interval, self._beat)
            self._running.set()
            self._handling_in_reader = mode == "realtime"
            await self._dispatch_forever()
        finally:
            try:
                await self.on_stop()
            finally:
                self._cancel_tracked()
                self._stop_delivery()
                self._leave()
                self._connection.close()
                self.log.info("actor.stop", reason=self._stop_reason, **vars(self.stats))
        if self._fatal is not None:
            raise self._fatal

    # --- liveness -------------------------------------------------------------------------------

    async def wait_started(self, timeout: float = 10.0) -> None:
        """Wait until :meth:`run` has registered with the broker and ran ``on_start``.

        From then on, messages addressed to this actor reach it; before, the broker answers
        them with an undeliverable notice. Raises :class:`DeliveryError` after ``timeout`` s.
        """
        try:
            await asyncio.wait_for(self._running.wait(), timeout)
        except TimeoutError:
            raise DeliveryError(
                f"{self.id} did not start within {timeout} s; is its run() task running?"
            ) from None

    def join_group(self, group: str) -> None:
        """Join ``group``, so that broadcasts to it reach this actor.

        Groups may change during a run, so a group can stand for "nearby": a bot that keeps
        itself in the group of the area it stands in reaches its neighbours with
        ``broadcast(area_group, ...)``. In lockstep the change takes effect as the next tick
        begins: broadcasts sent during this tick still follow the old groups, those of later
        ticks the new ones, so runs stay deterministic. In realtime it takes effect as soon as
        the broker reads it (before anything this actor sends afterwards).
        """
        check_group_name(group)
        if group not in self.groups:
            self._change_groups((*self.groups, group))

    def leave_group(self, group: str) -> None:
        """Leave ``group``; takes effect like :meth:`join_group`."""
        check_group_name(group)
        if group in self.groups:
            self._change_groups(tuple(g for g in self.groups if g != group))

    def _change_groups(self, groups: tuple[str, ...]) -> None:
        if self._connection is None or self._connection.closed or not self._registered.is_set():
            raise DeliveryError(
                f"{self.id} is not running; change its groups from on_start on, or pass "
                "groups= to the constructor"
            )
        self.groups = groups
        # Registering again replaces the groups (the broker answers; see _handle_immediate).
        self.send(self._registration())

    def _registration(self) -> _Register:
        groups = list(self.groups)
        lockstep = self.lockstep_participant and self.mode == "lockstep"
        if self.lockstep_participant:
            groups.append(TICK_GROUP)
        return _Register(
            recipient=BROKER_ID,
            groups=groups,
            lockstep=lockstep,
            watch=self._watched(),
            run=self.run_id,
            members=self._declared_members(),
        )

    def _declared_members(self) -> list[str]:
        """The run's membership, declared to the broker by a clock; empty for any other actor."""
        return []

    def _watched(self) -> list[str]:
        """Peers whose departure the broker reports to us: our clock, every peer we have
        waited on a reply from (see ``request``) and our :meth:`watched_peers`."""
        clock = [self.clock_id] if self.clock_id != self.id else []
        others = sorted(self._watching - {self.clock_id})
        return clock + others + [p for p in self.watched_peers() if p not in {*clock, *others}]

    @property
    def stopping(self) -> bool:
        """True once the actor is stopping (``stop`` was called, or the run ends)."""
        return self._stopping

    @property
    def registered(self) -> bool:
        """True once the broker registered this actor, until it stops: what the keeper of its
        process vouches for (:mod:`warband.messaging.keeper`)."""
        return self._registered.is_set() and not self._stopping

    def update_registration(self) -> None:
        """Tell the broker again who this actor is: its groups and the peers it watches
        (:meth:`watched_peers`) changed. Nothing before the actor registered or after it
        stopped (its first registration says it all)."""
        connection = self._connection
        if self._registered.is_set() and connection is not None and not connection.closed:
            self.send(self._registration())

    async def _register(self, timeout: float) -> None:
        self.send(self._registration())
        dispatcher = asyncio.create_task(self._dispatch_until_registered())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        # Asked again every second: the first _Register is lost when the broker still held our
        # id for an old connection of ours (a restart) and refused this one; the broker closes
        # such a connection and ZeroMQ reconnects by itself.
        while not dispatcher.done() and loop.time() < deadline:
            await asyncio.wait({dispatcher}, timeout=min(1.0, max(0.0, deadline - loop.time())))
            refusal = self._connection.refusal() if self._connection is not None else None
            if refusal is not None and not dispatcher.done():
                dispatcher.cancel()  # a refused key is refused again: no use waiting
                raise DeliveryError(f"{self.id}: {refusal}")
            if not dispatcher.done():
                self.send(self._registration())
        if not dispatcher.done():
            dispatcher.cancel()
            raise DeliveryError(
                f"{self.id}: no broker answered at {self._connection.endpoint!r} within "
                f"{timeout} s; start one with `warband broker --bind ENDPOINT`"
            )
        dispatcher.result()
        if self._fatal is not None:
            raise self._fatal  # the broker refused us for good (_registration_refused)

    async def _dispatch_until_registered(self) -> None:
        while not self._registered.is_set() and not self._stopping:
            await self._wakeup.wait()
            self._wakeup.clear()
            await self._drain_inbox(until_registered=True)

    def _announce_ready(self) -> None:
        if not self._ready_sent:
            self._ready_sent = True
            self.send(_Ready(recipient=self.clock_id, percept_deltas=self.percept_deltas))

    def _beat(self) -> None:
        self.send(Heartbeat(recipient=self.clock_id, interval=self._heartbeat_interval or 1.0))

    async def _dispatch_forever(self) -> None:
        while not self._stopping:
            await self._drain_inbox()
            if self._stopping:
                break
            await self._wakeup.wait()
            self._wakeup.clear()

    def _frames_arrived(self) -> None:
        # What BrokerLiveness.heard does, without its call: this runs for every frame received.
        self._liveness.last_heard = asyncio.get_running_loop().time()
        # A running realtime actor handles frames right in the reader callback: waking the
        # dispatcher task first costs an extra event-loop turn per message, which was a third of
        # the round-trip time in `warband bench messaging`. Lockstep buffers by tick and the
        # start-up handshake awaits, so those go through the dispatcher.
        if self._handling_in_reader and not self._stopping:
            self._drain_inbox_now()
        else:
            self._wakeup.set()

    def _drain_inbox_now(self) -> None:
        connection = self._connection
        inbox = connection.inbox
        while inbox and not self._stopping:
            message = self._decode(inbox.popleft())
            if message is None:
                continue
            if isinstance(message, self._immediate_types):
                self._spawn(functools.partial(self._handle_immediate, message), message)
            elif self._otel is None:
                self._deliver_now(message)
            else:
                self._deliver(message)
        if connection.paused:
            connection.resume()

    async def _drain_inbox(self, *, until_registered: bool = False) -> None:
        inbox = self._connection.inbox
        while inbox and not self._stopping:
            if until_registered and self._registered.is_set():
                # What came with _Registered (the clock's Tick, when the actor joins a run
                # under way) waits in the inbox for _dispatch_forever: on_start runs first,
                # and no on_tick or handler may run before it has finished.
                break
            frame = inbox.popleft()
            message = self._decode(frame)
            if message is not None:
                await self._accept(message)
        self._connection.resume()

    def _decode(self, frame: bytes) -> Message | None:
        try:
            message = self._codec.decode(frame)
        except ProtocolError as error:
            self.stats.rejected += 1
            self.log.error("msg.rejected", peer=self._peer_of(frame), reason=str(error))
            return None
        if not self._on_receipt(message):
            return None
        refusal = self._refusal(message)
        if refusal is not None:
            self.stats.rejected += 1
            self.log.error(
                "msg.rejected",
                peer=message.sender,
                msg_type=type(message).__name__,
                msg_id=message.id,
                reason=refusal,
            )
            return None
        if (
            isinstance(message, _Undeliverable)
            and message.message_type == "_Register"
            and message.sender == BROKER_ID
        ):
            self._registration_refused(message)
            return None
        if not type(message).__name__.startswith("_"):
            self.stats.received += 1
        if _tracing.tracing:
            trace_recv(
                message.id,
                type(message).__name__,
                message.sender,
                self.id,
                message.conversation,
                message.tick,
            )
        return message

    def _registration_refused(self, notice: _Undeliverable) -> None:
        """The broker refused our ``_Register`` (not a member of its run, a run that is over, a
        second clock...): no retry can change that, so the actor stops with the reason."""
        reason = notice.reason.removeprefix("rejected by broker: ")
        self._fail_fatally(DeliveryError(f"{self.id}: the broker refused to register it: {reason}"))

    def _peer_of(self, frame: bytes) -> str:
        envelope = self._codec.salvage_envelope(frame)
        return envelope.sender if envelope is not None and envelope.sender else "unknown"

    async def _accept(self, message: Message) -> None:
        if isinstance(message, self._immediate_types):
            await self._handle_immediate(message)
        elif self.mode == "lockstep":
            self._buffer_message(message)
        else:
            self._deliver(message)

    async def _handle_immediate(self, message: Message) -> None:
        if isinstance(message, _Registered) and self._registered.is_set():
            # The broker's answer to a change of groups, or to registering again after it was
            # lost (see _ping).
            self._broker_answered(message)
        elif isinstance(message, _Pong):
            self._broker_answered(message)
        elif isinstance(message, _Left):
            self._close_conversations_with(message.agent, message.reason)
            self._peer_left(message)
        elif isinstance(message, _Registered):
            self._peers_at_registration = tuple(message.peers)
            self._clock_seen = self.clock_id in message.peers
            self._registered.set()
        elif isinstance(message, _RollCall):
            if self.lockstep_participant and not self._stopping:
                self._announce_ready()
        elif isinstance(message, _Shutdown):
            self.send(_Stats(recipient=message.sender, **self._stats_fields()))
            self.stop(message.reason or "shutdown")
        elif isinstance(message, Tick):
            if self._kill_tick is not None and message.tick >= self._kill_tick:
                self._kill_tick, self.tick = None, message.tick
                self.kill(f"killed at tick {message.tick}")
                return
            await self._run_tick(message.tick)

    def _stats_fields(self) -> dict[str, Any]:
        return {
            "messages_sent": self.stats.sent,
            "messages_received": self.stats.received,
            "messages_rejected": self.stats.rejected,
            "handler_failures": self.stats.handler_failures,
            "undeliverable": self.stats.undeliverable,
            "conflated": self.stats.conflated,
            "would_block": self.stats.would_block,
            "final_state": self.final_state(),
        }

    # --- delivery -------------------------------------------------------------------------------

    def _deliver(self, message: Message) -> None:
        if self._otel is not None and not type(message).__name__.startswith("_"):
            self._otel.deliver(message, self._deliver_now)
        else:
            self._deliver_now(message)

    def _deliver_now(self, message: Message) -> None:
        pending = self._pending.pop(message.reply_to, None) if message.reply_to else None
        if pending is not None:
            self._resolve(pending, message)
            return
        if isinstance(message, _Undeliverable):
            self._undeliverable(message)
            return
        if message.reply_to is not None and message.conversation in self._closed_conversations:
            self._late_reply(message)
            return
        if isinstance(message, EndTalk) and message.conversation is not None:
            self._close_conversation(message.conversation, f"ended by {message.sender}")
        handler = self.handler_for(type(message))
        if handler is None:
            if not isinstance(message, EndTalk | Heartbeat):
                self.log.warning(
                    "msg.unhandled", msg_type=type(message).__name__, sender=message.sender
                )
                self._refuse_unhandled(message)
            return
        if isinstance(message, Percept) and self.mode == "realtime":
            if self._hold_percept(message):
                return
            self._percept_started(message, self._spawn(lambda: handler(message), message))
            return
        self._spawn(functools.partial(handler, message), message)

    # --- handler tasks --------------------------------------------------------------------------

    def _spawn(self, call: Callable[[], Any], message: Message | None) -> asyncio.Task[Any] | None:
        """Run ``call``; the task that runs the rest of it if it returned a coroutine."""
        try:
            result = call()
        except Exception as error:
            self._handler_failed(error, message)
            return None
        if result is None or not asyncio.iscoroutine(result):  # None: most handlers, at once
            return None
        task = asyncio.get_running_loop().create_task(self._guard(result, message))
        self._tracked.add(task)
        self._runnable += 1
        self._idle.clear()
        task.add_done_callback(self._task_done)
        if self._otel is not None:
            self._otel.task_started(task)
        return task

    async def _guard(self, coroutine: Awaitable[Any], message: Message | None) -> None:
        try:
            await coroutine
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self._handler_failed(error, message)

    def _handler_failed(self, error: Exception, message: Message | None) -> None:
        self.stats.handler_failures += 1
        if self._otel is not None and message is not None:
            # Before the span ends: a task's span ends in its done callback, after this.
            self._otel.failed(message, error)
        self.on_failure(error, message)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tracked.discard(task)
        self._runnable -= 1
        if self._runnable <= 0:
            self._runnable = 0
            self._idle.set()

    async def _quiesce(self) -> None:
        """Wait until every handler task has finished or is parked on one of our futures."""
        while self._runnable > 0:
            self._idle.clear()
            await self._idle.wait()

    def _cancel_tracked(self) -> None:
        for task in list(self._tracked):
            task.cancel()
        for pending in self._pending.values():
            if pending.timer is not None:
                pending.timer.cancel()
            if not pending.future.done():
                pending.future.cancel()
        self._pending.clear()
