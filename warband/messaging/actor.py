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
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import itertools
import random
import re
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

import msgspec
import zmq

from ..exceptions import ConfigurationError, DeliveryError, ProtocolError, RequestTimeout
from .broker import ALL_GROUP, BROKER_ID, GROUP_PREFIX
from .catalog import (
    Act,
    ActResult,
    CompletionReport,
    CooperationReply,
    EndTalk,
    Heartbeat,
    Message,
    Order,
    RequestCooperation,
    RequestTalk,
    TalkReply,
    Tick,
    TickDone,
    _FinishRun,
    _Leave,
    _Left,
    _Ping,
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
from .tracing import get_logger, trace_recv, trace_send, tracing_enabled

M = TypeVar("M", bound=Message)
Mode = Literal["lockstep", "realtime"]
Handler = Callable[[Any, Any], Awaitable[None] | None]

DEFAULT_CLOCK_ID = "clock"
TICK_GROUP = "ticks"
"""Every actor that takes ticks joins this group; the clock broadcasts Tick to it."""
_VALID_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,63}$")


def handles(*message_types: type[Message]) -> Callable[[Handler], Handler]:
    """Mark a method as the handler of ``message_types`` (one handler per type per class)."""

    def mark(function: Handler) -> Handler:
        function.__warband_handles__ = message_types  # type: ignore[attr-defined]
        return function

    return mark


def check_group_name(group: str) -> str:
    """Return ``group`` if actors may join or leave it, else raise ConfigurationError."""
    if group in (ALL_GROUP, TICK_GROUP) or not _VALID_ID.match(group):
        raise ConfigurationError(
            f"invalid group name {group!r}: use 1-64 letters, digits, '-', '_', '.', ':' "
            f"starting with a letter or digit (no leading '#'), and not {ALL_GROUP!r} or "
            f"{TICK_GROUP!r}, which the framework manages"
        )
    return group


def check_actor_id(actor_id: str) -> str:
    """Return ``actor_id`` if it is usable as an agent id, else raise ConfigurationError."""
    if actor_id == BROKER_ID or not _VALID_ID.match(actor_id):
        raise ConfigurationError(
            f"invalid agent id {actor_id!r}: use 1-64 letters, digits, '-', '_', '.', ':' "
            f"starting with a letter or digit, and not {BROKER_ID!r}"
        )
    return actor_id


@dataclass
class ActorStats:
    """Counters an actor keeps; reported at the end of a run."""

    sent: int = 0
    received: int = 0
    rejected: int = 0
    undeliverable: int = 0
    handler_failures: int = 0


@dataclass
class _Pending:
    future: asyncio.Future[Message]
    message: Message
    tracked: bool
    deadline_tick: int | None = None
    timer: asyncio.TimerHandle | None = None


@dataclass(order=True)
class Timer:
    """A pending ``call_later`` / ``every`` callback; :meth:`cancel` stops it."""

    due: float
    order: int
    callback: Callable[[], Any] = field(compare=False)
    interval: float | None = field(default=None, compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


class Actor:
    """Base class of every warband actor: bots, squads, commanders, the world, the clock.

    Failure semantics: an exception raised by a handler or ``on_tick`` is passed to
    :meth:`on_failure` and the actor keeps running; a frame that cannot be decoded is logged as
    ``msg.rejected`` and skipped. Only :meth:`stop`, a ``_Shutdown`` from the clock, or an
    exception in :meth:`on_start` ends the actor.
    """

    lockstep_participant: ClassVar[bool] = True
    """False for actors that do not report TickDone (the clock itself)."""
    mailbox_limit: ClassVar[int] = 100_000
    """Frames read ahead of handling; beyond it the actor stops reading until it catches up,
    ZeroMQ queues the rest, and the broker reports the actor as not keeping up."""
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

    def __init__(self, actor_id: str, *, groups: Iterable[str] = (), seed: int = 0) -> None:
        self.id = check_actor_id(actor_id)
        self.groups = tuple(check_group_name(group) for group in groups)
        self.seed = seed
        self.random = random.Random(f"{seed}/{actor_id}")
        """This actor's own seeded random source: use it, never the global one."""
        self.tick = 0
        self.mode: Mode = "lockstep"
        self.clock_id = DEFAULT_CLOCK_ID
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
        self._pending: dict[str, _Pending] = {}
        self._closed_conversations: set[str] = set()
        self._timers: list[Timer] = []
        self._timer_order = itertools.count()
        self._tracked: set[asyncio.Task[Any]] = set()
        self._runnable = 0
        self._idle = asyncio.Event()
        self._wakeup = asyncio.Event()
        self._registered = asyncio.Event()
        self._running = asyncio.Event()
        self._stopping = False
        self._stop_reason = ""
        self._heartbeat_interval: float | None = None
        self._tick_done_sent = 0
        self._tick_running = False
        self._liveness = _BrokerLiveness()
        self._fatal: BaseException | None = None

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
            message, sender=self.id, id=message_id, seq=seq, tick=self.tick
        )
        connection = self._connection
        if connection is None:
            raise DeliveryError(f"{self.id} is not running; cannot send {type(message).__name__}")
        connection.send(self._codec.encode(stamped), about_to_wait=about_to_wait)
        if not control:
            self.stats.sent += 1
        if tracing_enabled():
            trace_send(
                stamped.id,
                type(stamped).__name__,
                stamped.sender,
                stamped.recipient,
                stamped.conversation,
                stamped.tick,
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
        return self.send(
            msgspec.structs.replace(
                message, recipient=to.sender, reply_to=to.id, conversation=to.conversation
            )
        )

    async def request(self, message: Message, *, timeout: float = 10) -> Message:
        """Send ``message`` and wait for the message whose ``reply_to`` is its id.

        ``timeout`` counts ticks in lockstep (a round trip takes at least two) and seconds in
        realtime. On timeout the conversation is closed on both sides (we send EndTalk) and
        :class:`RequestTimeout` is raised. If the broker cannot deliver the request,
        :class:`DeliveryError` is raised.
        """
        if message.conversation is None:
            message = msgspec.structs.replace(message, conversation=f"{self.id}:{self._seq + 1}")
        sent = self._send(message, about_to_wait=True)
        tracked = asyncio.current_task() in self._tracked
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        pending = _Pending(future, sent, tracked)
        if self.mode == "lockstep":
            pending.deadline_tick = self.tick + max(1, int(timeout))
        else:
            pending.timer = asyncio.get_running_loop().call_later(
                timeout, self._expire, sent.id, f"no reply within {timeout} s"
            )
        self._pending[sent.id] = pending
        return await self._park(future, tracked)

    async def sleep(self, duration: float) -> None:
        """Wait ``duration`` ticks (lockstep) or seconds (realtime)."""
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        tracked = asyncio.current_task() in self._tracked

        def wake() -> None:
            if not future.done():
                future.set_result(Tick())
                self._mark_runnable(tracked)

        self.call_later(duration, wake)
        await self._park(future, tracked)

    async def _park(self, future: asyncio.Future[Message], tracked: bool) -> Message:
        if tracked:
            self._runnable -= 1
            if self._runnable == 0:
                self._idle.set()
        return await future

    def _mark_runnable(self, tracked: bool) -> None:
        if tracked:
            self._runnable += 1
            self._idle.clear()

    def start_task(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Run ``coroutine`` as one of this actor's handler tasks.

        In lockstep the tick waits for it like for a handler, so what it sends stays
        deterministic; failures go to :meth:`on_failure`.
        """
        self._spawn(lambda: coroutine, None)

    # --- timers ---------------------------------------------------------------------------------

    def call_later(self, delay: float, callback: Callable[[], Any]) -> Timer:
        """Run ``callback`` after ``delay`` ticks (lockstep) or seconds (realtime)."""
        return self._add_timer(delay, callback, None)

    def every(self, interval: float, callback: Callable[[], Any]) -> Timer:
        """Run ``callback`` every ``interval`` ticks (lockstep) or seconds (realtime)."""
        if interval <= 0:
            raise ConfigurationError(f"timer interval must be positive, got {interval}")
        return self._add_timer(interval, callback, interval)

    def _add_timer(
        self, delay: float, callback: Callable[[], Any], interval: float | None
    ) -> Timer:
        if self.mode == "lockstep":
            timer = Timer(self.tick + delay, next(self._timer_order), callback, interval)
            heapq.heappush(self._timers, timer)
        else:
            loop = asyncio.get_running_loop()
            timer = Timer(loop.time() + delay, next(self._timer_order), callback, interval)
            loop.call_later(delay, self._fire_realtime_timer, timer)
        return timer

    def _fire_due_timers(self, tick: int) -> None:
        """Lockstep: run every timer due at or before ``tick``, earliest (then oldest) first."""
        while self._timers and self._timers[0].due <= tick:
            timer = heapq.heappop(self._timers)
            if timer.cancelled:
                continue
            if timer.interval is not None:
                timer.due += timer.interval
                timer.order = next(self._timer_order)
                heapq.heappush(self._timers, timer)
            self._spawn(timer.callback, None)

    def _fire_realtime_timer(self, timer: Timer) -> None:
        if timer.cancelled or self._stopping:
            return
        if timer.interval is not None:
            asyncio.get_running_loop().call_later(timer.interval, self._fire_realtime_timer, timer)
        self._spawn(timer.callback, None)

    # --- control --------------------------------------------------------------------------------

    def stop(self, reason: str = "stopped") -> None:
        """Ask the actor to stop after the message it is handling."""
        self._stopping = True
        self._stop_reason = reason
        self._wakeup.set()

    def finish_run(self, reason: str) -> None:
        """Ask the clock to end the whole run after the current tick."""
        self.send(_FinishRun(recipient=self.clock_id, reason=reason))

    def is_closed(self, conversation: str) -> bool:
        """True when ``conversation`` was ended by EndTalk or a timeout."""
        return conversation in self._closed_conversations

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
    ) -> None:
        """Connect to the broker at ``endpoint`` and handle messages until stopped.

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
        self._heartbeat_interval = heartbeat_interval
        self._connection = Connection(
            self.id,
            endpoint,
            context=context or zmq.Context.instance(),
            on_frames=self._frames_arrived,
            inbox_limit=self.mailbox_limit,
        )
        self._connection.open()
        self._liveness = _BrokerLiveness(ping_interval, broker_timeout)
        self.log.info("actor.start", endpoint=endpoint, mode=mode)
        try:
            await self._register(register_timeout)
            self._schedule_ping()
            try:
                await self.on_start()
            except BaseException as error:
                self._stop_reason = f"on_start failed: {error!r}"
                raise
            # If the clock is not registered yet, its roll call will reach us instead.
            if self.lockstep_participant and self._clock_seen:
                self._announce_ready()
            if mode == "realtime" and heartbeat_interval:
                self.every(heartbeat_interval, self._beat)
            self._running.set()
            await self._dispatch_forever()
        finally:
            try:
                await self.on_stop()
            finally:
                self._cancel_tracked()
                self._leave()
                self._connection.close()
                self.log.info("actor.stop", reason=self._stop_reason, **vars(self.stats))
        if self._fatal is not None:
            raise self._fatal

    def _leave(self) -> None:
        """Tell the broker we are gone for good, so the clock stops waiting for us."""
        self._liveness.cancel()
        if self._registered.is_set() and not self._connection.closed and not self._liveness.lost:
            self.send(_Leave(recipient=BROKER_ID, reason=self._stop_reason or "stopped"))

    # --- liveness -------------------------------------------------------------------------------

    def _schedule_ping(self) -> None:
        loop = asyncio.get_running_loop()
        self._liveness.heard(loop.time())
        self._liveness.handle = loop.call_later(self._liveness.interval, self._ping)

    def _ping(self) -> None:
        if self._stopping or self._connection is None or self._connection.closed:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        liveness = self._liveness
        if liveness.silent(now) and not liveness.lost:
            liveness.lost = True
            liveness.lost_since = now
            self.log.error("broker.lost", endpoint=self._connection.endpoint)
        if liveness.lost and now - liveness.lost_since > liveness.give_up_after:
            self._fail_fatally(
                DeliveryError(
                    f"{self.id}: the broker at {self._connection.endpoint!r} did not come back "
                    f"within {liveness.give_up_after:g} s; restart it (`warband broker --bind "
                    "ENDPOINT`) and the run, or raise the broker timeout"
                )
            )
            return
        if liveness.lost:
            # Whichever broker answers next has never heard of us: register right away.
            self.send(self._registration())
        self.send(_Ping(recipient=BROKER_ID, interval=liveness.interval))
        liveness.handle = loop.call_later(liveness.interval, self._ping)

    def _broker_answered(self, message: _Pong | _Registered) -> None:
        liveness = self._liveness
        if isinstance(message, _Pong) and not message.registered and not liveness.rejoining:
            # A broker that does not know us: it restarted before we noticed it was gone.
            liveness.rejoining = True
            self.log.warning("broker.reregister", endpoint=self._connection.endpoint)
            self.send(self._registration())
        if isinstance(message, _Registered) and (liveness.lost or liveness.rejoining):
            liveness.lost = liveness.rejoining = False
            self.log.warning("broker.back", endpoint=self._connection.endpoint)
            self.on_broker_back()

    def on_broker_back(self) -> None:
        """Called when the broker came back after it was lost and this actor registered again.

        The default re-sends ``TickDone`` for the last tick finished (the first one may have
        been lost with the broker); the clock re-sends its current tick.
        """
        if self.lockstep_participant and self.mode == "lockstep" and self._tick_done_sent:
            self.send(TickDone(recipient=self.clock_id))

    def _fail_fatally(self, error: BaseException) -> None:
        self.log.error("actor.fatal", error=str(error))
        self._fatal = error
        self.stop(str(error))

    def _peer_left(self, notice: _Left) -> None:
        if notice.agent == self.clock_id and notice.agent != self.id:
            self._fail_fatally(
                DeliveryError(f"{self.id}: the clock {self.clock_id!r} left ({notice.reason})")
            )

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
            recipient=BROKER_ID, groups=groups, lockstep=lockstep, watch=self._watched()
        )

    def _watched(self) -> list[str]:
        """Peers whose departure the broker reports to us: our clock."""
        return [self.clock_id] if self.clock_id != self.id else []

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
            if not dispatcher.done():
                self.send(self._registration())
        if not dispatcher.done():
            dispatcher.cancel()
            raise DeliveryError(
                f"{self.id}: no broker answered at {self._connection.endpoint!r} within "
                f"{timeout} s; start one with `warband broker --bind ENDPOINT`"
            )
        dispatcher.result()

    async def _dispatch_until_registered(self) -> None:
        while not self._registered.is_set():
            await self._wakeup.wait()
            self._wakeup.clear()
            await self._drain_inbox()

    def _announce_ready(self) -> None:
        if not self._ready_sent:
            self._ready_sent = True
            self.send(_Ready(recipient=self.clock_id))

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
        self._liveness.heard(asyncio.get_running_loop().time())
        # A running realtime actor handles frames right in the reader callback: waking the
        # dispatcher task first costs an extra event-loop turn per message, which was a third of
        # the round-trip time in `warband bench messaging`. Lockstep buffers by tick and the
        # start-up handshake awaits, so those go through the dispatcher.
        if self.mode == "realtime" and self._running.is_set() and not self._stopping:
            self._drain_inbox_now()
        else:
            self._wakeup.set()

    def _drain_inbox_now(self) -> None:
        inbox = self._connection.inbox
        while inbox and not self._stopping:
            message = self._decode(inbox.popleft())
            if message is None:
                continue
            if isinstance(message, self._immediate_types):
                self._spawn(functools.partial(self._handle_immediate, message), message)
            else:
                self._deliver(message)
        self._connection.resume()

    async def _drain_inbox(self) -> None:
        inbox = self._connection.inbox
        while inbox and not self._stopping:
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
        if not type(message).__name__.startswith("_"):
            self.stats.received += 1
        if tracing_enabled():
            trace_recv(
                message.id,
                type(message).__name__,
                message.sender,
                self.id,
                message.conversation,
                message.tick,
            )
        return message

    def _peer_of(self, frame: bytes) -> str:
        envelope = self._codec.salvage_envelope(frame)
        return envelope.sender if envelope is not None and envelope.sender else "unknown"

    def _refusal(self, message: Message) -> str | None:
        """Why ``message`` is not obeyed, or None when it may be.

        Control messages are obeyed only from the peer entitled to send them (PROTOCOL.md,
        "Who may send what"): ticks, roll calls and shutdowns from our clock; registration
        answers, pongs and departure notices from the broker. An ``_Undeliverable`` comes from
        the broker, or from the peer we sent a request to (it refuses a request it does not
        handle). The other control messages are for the broker or the clock, never an agent.
        """
        kind = type(message)
        if kind in _FROM_CLOCK:
            if message.sender == self.clock_id:
                return None
            return f"{kind.__name__} is obeyed only from the clock {self.clock_id!r}"
        if kind in _FROM_BROKER:
            if message.sender == BROKER_ID or self._answers_our_request(message):
                return None
            return f"{kind.__name__} is obeyed only from the broker"
        if kind.__name__.startswith("_"):
            return f"{kind.__name__} is for the broker or the clock, not for an agent"
        return None

    def _answers_our_request(self, message: Message) -> bool:
        if not isinstance(message, _Undeliverable):
            return False
        pending = self._pending.get(message.message_id)
        return pending is not None and pending.message.recipient == message.sender

    async def _accept(self, message: Message) -> None:
        if isinstance(message, self._immediate_types):
            await self._handle_immediate(message)
        elif self.mode == "lockstep":
            self._buffer.append(message)
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
            self._peer_left(message)
        elif isinstance(message, _Registered):
            self._peers_at_registration = tuple(message.peers)
            self._clock_seen = self.clock_id in message.peers
            self._registered.set()
        elif isinstance(message, _RollCall):
            if self.lockstep_participant:
                self._announce_ready()
        elif isinstance(message, _Shutdown):
            self.send(_Stats(recipient=message.sender, **self._stats_fields()))
            self.stop(message.reason or "shutdown")
        elif isinstance(message, Tick):
            await self._run_tick(message.tick)

    def _stats_fields(self) -> dict[str, Any]:
        return {
            "messages_sent": self.stats.sent,
            "messages_received": self.stats.received,
            "messages_rejected": self.stats.rejected,
            "handler_failures": self.stats.handler_failures,
            "undeliverable": self.stats.undeliverable,
            "final_state": self.final_state(),
        }

    async def _run_tick(self, tick: int) -> None:
        if self.mode == "lockstep" and (self._tick_running or tick <= self._tick_done_sent):
            # A tick the clock sent again (it lost our TickDone with a restarted broker).
            if tick == self._tick_done_sent and self.lockstep_participant:
                self.send(TickDone(recipient=self.clock_id))
            return
        self._tick_running = True
        try:
            await self._run_tick_body(tick)
        finally:
            self._tick_running = False

    async def _run_tick_body(self, tick: int) -> None:
        self.tick = tick
        if self.mode == "lockstep":
            await self.flush_buffer(before_tick=tick)
            self._fire_due_timers(tick)
            await self._quiesce()
            self._expire_deadlines(tick)
            await self._quiesce()
        self._spawn(lambda: self.on_tick(tick), None)
        if self.lockstep_participant and self.mode == "lockstep":
            await self._quiesce()
            self._tick_done_sent = tick
            self.send(TickDone(recipient=self.clock_id))

    async def flush_buffer(self, *, before_tick: int) -> None:
        """Handle buffered messages stamped before ``before_tick``, in (tick, sender, seq) order."""
        due = [m for m in self._buffer if m.tick < before_tick]
        if not due:
            return
        self._buffer = [m for m in self._buffer if m.tick >= before_tick]
        due.sort(key=lambda m: (m.tick, m.sender, m.seq))
        for message in due:
            self._deliver(message)
            await self._quiesce()

    # --- delivery -------------------------------------------------------------------------------

    def _deliver(self, message: Message) -> None:
        pending = self._pending.pop(message.reply_to, None) if message.reply_to else None
        if pending is not None:
            self._resolve(pending, message)
            return
        if isinstance(message, _Undeliverable):
            self._undeliverable(message)
            return
        if isinstance(message, EndTalk) and message.conversation is not None:
            self._close_conversation(message.conversation, f"ended by {message.sender}")
        handler_name = self._handlers.get(type(message))
        if handler_name is None:
            if not isinstance(message, EndTalk | Heartbeat):
                self.log.warning(
                    "msg.unhandled", msg_type=type(message).__name__, sender=message.sender
                )
                self._refuse_unhandled(message)
            return
        handler = getattr(self, handler_name)
        self._spawn(lambda: handler(message), message)

    def _refuse_unhandled(self, message: Message) -> None:
        """Answer a request no handler takes, so its sender need not wait for its time-out.

        A request type gets its own reply type, refusing; any other message that looks like
        a request (it opens a conversation: ``conversation`` set, ``reply_to`` not) gets an
        ``_Undeliverable`` naming it. Replies and notices get nothing: nobody awaits an answer.
        """
        if message.reply_to is not None or type(message).__name__.startswith("_"):
            return
        refusal = _refusal_of(message)
        try:
            if refusal is not None:
                self.reply(message, refusal)
            elif message.conversation is not None:
                self.send(
                    _Undeliverable(
                        recipient=message.sender,
                        conversation=message.conversation,
                        message_id=message.id,
                        message_type=type(message).__name__,
                        target=self.id,
                        reason=NOT_HANDLED,
                    )
                )
        except DeliveryError:
            pass  # the conversation is closed: nobody waits for the answer any more

    def _resolve(self, pending: _Pending, message: Message) -> None:
        if pending.timer is not None:
            pending.timer.cancel()
        if not pending.future.done():
            pending.future.set_result(message)
            self._mark_runnable(pending.tracked)

    def _fail(self, pending: _Pending, error: BaseException) -> None:
        if pending.timer is not None:
            pending.timer.cancel()
        if not pending.future.done():
            pending.future.set_exception(error)
            self._mark_runnable(pending.tracked)

    def _undeliverable(self, notice: _Undeliverable) -> None:
        self.stats.undeliverable += 1
        self.log.error(
            "msg.undeliverable",
            msg_id=notice.message_id,
            msg_type=notice.message_type,
            recipient=notice.target,
            reason=notice.reason,
        )
        pending = self._pending.pop(notice.message_id, None)
        if pending is not None:
            self._fail(
                pending,
                DeliveryError(f"{notice.message_type} to {notice.target!r}: {notice.reason}"),
            )
        self.on_undeliverable(notice)

    def _close_conversation(self, conversation: str, reason: str) -> None:
        self._closed_conversations.add(conversation)
        for message_id, pending in list(self._pending.items()):
            if pending.message.conversation == conversation:
                del self._pending[message_id]
                self._fail(pending, DeliveryError(f"conversation {conversation} {reason}"))

    def _expire_deadlines(self, tick: int) -> None:
        for message_id, pending in list(self._pending.items()):
            if pending.deadline_tick is not None and pending.deadline_tick <= tick:
                self._expire(
                    message_id,
                    f"no reply within {pending.deadline_tick - pending.message.tick} ticks",
                )

    def _expire(self, message_id: str, why: str) -> None:
        pending = self._pending.pop(message_id, None)
        if pending is None:
            return
        request = pending.message
        self.log.warning(
            "request.timeout",
            msg_id=request.id,
            msg_type=type(request).__name__,
            recipient=request.recipient,
            conversation=request.conversation,
        )
        if request.conversation is not None:
            self._closed_conversations.add(request.conversation)
            self.send(
                EndTalk(
                    recipient=request.recipient, conversation=request.conversation, reason="timeout"
                )
            )
        self._fail(
            pending,
            RequestTimeout(
                f"{type(request).__name__} {request.id} to {request.recipient!r}: {why}"
            ),
        )

    # --- handler tasks --------------------------------------------------------------------------

    def _spawn(self, call: Callable[[], Any], message: Message | None) -> None:
        try:
            result = call()
        except Exception as error:
            self.stats.handler_failures += 1
            self.on_failure(error, message)
            return
        if not asyncio.iscoroutine(result):
            return
        task = asyncio.get_running_loop().create_task(self._guard(result, message))
        self._tracked.add(task)
        self._runnable += 1
        self._idle.clear()
        task.add_done_callback(self._task_done)

    async def _guard(self, coroutine: Awaitable[Any], message: Message | None) -> None:
        try:
            await coroutine
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self.stats.handler_failures += 1
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


NOT_HANDLED = "not handled"
"""The reason in the refusal an actor sends for a request none of its handlers takes."""

_FROM_CLOCK: frozenset[type[Message]] = frozenset({Tick, _RollCall, _Shutdown})
_FROM_BROKER: frozenset[type[Message]] = frozenset({_Registered, _Undeliverable, _Pong, _Left})


def _refusal_of(request: Message) -> Message | None:
    """The reply that refuses ``request``, for the types that have a reply type."""
    if isinstance(request, RequestTalk):
        return TalkReply(accepted=False, reason=NOT_HANDLED)
    if isinstance(request, RequestCooperation):
        return CooperationReply(accepted=False, reason=NOT_HANDLED)
    if isinstance(request, Order):
        return CompletionReport(task=request.task, success=False, reason=NOT_HANDLED)
    if isinstance(request, Act):
        return ActResult(accepted=False, reason=NOT_HANDLED)
    return None


class _BrokerLiveness:
    """An actor's view of its broker: when it last heard from it, and whether it is lost."""

    SILENT_PINGS = 3
    """Ping intervals without any frame after which the broker counts as lost."""

    def __init__(self, interval: float = 1.0, give_up_after: float = 30.0) -> None:
        if interval <= 0 or give_up_after <= 0:
            raise ConfigurationError(
                f"ping interval and broker timeout must be positive seconds, got {interval} "
                f"and {give_up_after}"
            )
        self.interval = interval
        self.give_up_after = give_up_after
        self.last_heard = 0.0
        self.lost = False
        self.lost_since = 0.0
        self.rejoining = False
        self.handle: asyncio.TimerHandle | None = None

    def heard(self, now: float) -> None:
        self.last_heard = now

    def silent(self, now: float) -> bool:
        return now - self.last_heard > self.SILENT_PINGS * self.interval

    def cancel(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None
