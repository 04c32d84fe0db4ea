"""The clock: the actor that drives ticks and ends the run.

Lockstep: the clock broadcasts ``Tick(N)`` to every participant and waits until each has answered
``TickDone(N)`` (or ``tick_timeout`` seconds passed, which is logged as ``tick.timeout`` naming
the missing agents). Then it handles the messages it received during tick N, in (sender, seq)
order, calls :meth:`Clock.advance` (the world steps the simulation there) and starts tick N+1.

Realtime: ticks follow the wall clock every ``tick_interval`` seconds; nobody is waited for.

At the end (``ticks`` reached or a ``_FinishRun`` request) the clock sends ``_Shutdown`` to every
participant, collects their ``_Stats``, and stores a :class:`RunResult`.

Participants that leave for good (they stopped, failed in ``on_start``, their process died and
stayed down, their host went silent) are reported by the broker with ``_Left``. The clock stops
waiting for them at once, records why in ``RunResult.departed``, and asks its departure policy
whether the run goes on without them (the default) or ends there, not completed. A participant
whose connection was lost without a goodbye (a crashed process) gets ``rejoin_grace`` seconds
to announce itself again, as a restarted process does, before it counts as departed. A departed
participant that comes back takes part again from the next tick.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

import msgspec

from .actor import Actor
from .addresses import GAVE_UP, TICK_GROUP
from .catalog import (
    Heartbeat,
    Message,
    Tick,
    TickDone,
    _FinishRun,
    _Left,
    _Ready,
    _RollCall,
    _Shutdown,
    _Stats,
)


class RunResult(msgspec.Struct, kw_only=True):
    """What a finished run reports: counts, how it ended, and each actor's final state."""

    ticks: int
    """Ticks completed."""
    seed: int = 0
    """The run's seed (``--seed``): an outcome judge of a scenario whose setup depends on it
    can say which variant was played."""
    finish_reason: str
    """Why the run ended: ``"ticks"`` when the tick limit was reached, else the request's reason."""
    messages_sent: int = 0
    """Catalog messages sent by all actors, the clock included (control messages not counted)."""
    messages_received: int = 0
    """Catalog messages received and accepted by all actors, the clock included."""
    messages_rejected: int = 0
    """Frames actors rejected as malformed."""
    tick_timeouts: int = 0
    """Ticks on which some participant did not report TickDone in time."""
    final_states: dict[str, dict[str, Any]] = {}
    """Each actor's ``final_state()``."""
    missing: list[str] = []
    """Participants that sent no stats before the shutdown timeout."""
    started: bool = True
    """False when the ticks never began (participants never connected)."""
    completed: bool = True
    """False when the run did not start, or ended early because a participant left and the
    departure policy said the run cannot go on without it."""
    departed: dict[str, str] = {}
    """Participants that left for good during the run, with the reason the broker gave."""
    handler_failures: dict[str, int] = {}
    """Per actor (those with any): exceptions raised by handlers, timers and ``on_tick``."""
    undeliverable: dict[str, int] = {}
    """Per actor (those with any): messages the broker could not deliver."""
    conflated: dict[str, int] = {}
    """Per actor (those with any): Percepts dropped for a newer one (backpressure)."""
    would_block: dict[str, int] = {}
    """Per actor (those with any): sends refused with EAGAIN (queue to the broker full)."""
    rejected: dict[str, int] = {}
    """Per actor (those with any): frames it rejected."""

    @property
    def clean(self) -> bool:
        """True when no actor's handler, timer or ``on_tick`` raised."""
        return not self.handler_failures


REALTIME_TICK_S = 0.05
"""Seconds between two ticks of a realtime run (``warband run --mode realtime``). An actor's
waits count seconds there, ticks in lockstep: ``ticks * REALTIME_TICK_S`` waits as long in
realtime as ``ticks`` does in lockstep."""

DeparturePolicy = Callable[[str, str], "str | None"]
"""Called with (agent id, reason) when a participant leaves for good: None lets the run go on,
a string ends it there (not completed) with that string as the reason."""


class Clock(Actor):
    """Drives the ticks of a run for ``participants`` and collects their results at the end."""

    lockstep_participant: ClassVar[bool] = False
    _immediate_types: ClassVar[tuple[type[Message], ...]] = (
        *Actor._immediate_types,
        TickDone,
        _Ready,
        _FinishRun,
        _Stats,
        Heartbeat,
    )

    def __init__(
        self,
        actor_id: str = "clock",
        *,
        participants: Iterable[str],
        ticks: int,
        seed: int = 0,
        tick_interval: float = REALTIME_TICK_S,
        tick_timeout: float = 10.0,
        ready_timeout: float = 60.0,
        shutdown_timeout: float = 10.0,
        departure_policy: DeparturePolicy | None = None,
        on_tick_complete: Callable[[int], None] | None = None,
        rejoin_grace: float = 5.0,
        outside_participants: Iterable[str] = (),
    ) -> None:
        super().__init__(actor_id, seed=seed)
        self.participants = sorted({*participants, *outside_participants})
        self.members = frozenset([actor_id, *self.participants])
        """The run's membership: the only ids the clock takes ``_Ready``, ``TickDone``,
        ``_FinishRun`` and ``_Stats`` from, declared to the broker as it registers (which then
        refuses any other id). ``outside_participants`` are ids that take part without being
        built by the scenario (clients in another language that the scenario declares): the
        clock waits for them as for any participant, and they take part in every tick."""
        self.everyone: set[str] = set(self.participants)
        """Every participant the run ever had, departed ones included: what the clock sends
        to (the world's percepts) must not depend on when a departure was noticed, or a run
        would send other messages in one process than in many."""
        self.max_ticks = ticks
        self.tick_interval = tick_interval
        self.tick_timeout = tick_timeout
        self.ready_timeout = ready_timeout
        self.shutdown_timeout = shutdown_timeout
        self.result: RunResult | None = None
        self.ticks_completed = 0
        """Ticks completed so far (the run's ``ticks`` once it is over)."""
        self._ready: set[str] = set()
        self._waiting: set[str] = set()
        self._stats: dict[str, _Stats] = {}
        self._finish_reason: str | None = None
        self._tick_timeouts = 0
        self._all_ready = asyncio.Event()
        self._tick_complete = asyncio.Event()
        self._stats_complete = asyncio.Event()
        self._last_heartbeat: dict[str, float] = {}
        self._driver: asyncio.Task[None] | None = None
        self._started = False
        self._shutting_down = False
        self._shutdown_reason: str | None = None
        self._suspects: dict[str, asyncio.TimerHandle] = {}
        self._crashed_at_start: set[str] = set()
        """Participants that connected and went without a goodbye before they announced
        themselves, the run not started yet: waited for like any other (see _peer_left)."""
        self.rejoin_grace = rejoin_grace
        self._departed: dict[str, str] = {}
        self._departure_policy = departure_policy
        self._ended_by_departure = False
        self._resend_ticks = False
        self._on_tick_complete = on_tick_complete

    async def before_ticks(self) -> None:
        """Called once every participant is ready, before tick 1; the world sends first percepts."""

    async def advance(self, tick: int) -> None:
        """Called after every participant finished ``tick``; subclasses step the world here."""

    def _cancel_tracked(self) -> None:
        # The driver is no handler task, but it ends with the clock too (stopped by a signal,
        # or its run cancelled): left running, it would tick on through a closed connection.
        if self._driver is not None and self._driver is not asyncio.current_task():
            self._driver.cancel()
        super()._cancel_tracked()

    def end_run(self, reason: str) -> None:
        """Finish the run after the current tick (a subclass's game is over, say)."""
        if self._finish_reason is None:
            self._finish_reason = reason
            self.log.info("run.finish_requested", by=self.id, reason=reason)

    async def on_start(self) -> None:
        # Participants that registered before us wait for a roll call; later ones saw us in
        # their _Registered peers and announce themselves. Only call if someone is waiting.
        if set(self.participants) & set(self._peers_at_registration):
            self.broadcast(TICK_GROUP, _RollCall())
        self._driver = asyncio.get_running_loop().create_task(self._drive())
        self._driver.add_done_callback(self._driver_done)

    def _driver_done(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            if not self.stopping:
                # Cancelled by anything but the clock's own stop, the ticks are over: a clock
                # left running would keep every actor of the run waiting for the next, forever.
                self.log.error("run.driver_cancelled", tick=self.tick)
                self.stop("clock failed: its driver was cancelled")
            return
        if task.exception() is not None:
            self.on_failure(task.exception() or RuntimeError("clock failed"), None)
            self.stop("clock failed")

    async def _drive(self) -> None:
        await self._wait_for_participants()
        # The ticks begin unless the wait ended the run (participants never connected, or one
        # left before the start and the departure policy said the run cannot go on).
        self._started = self._finish_reason is None
        self.log.info("run.start", participants=self.participants, mode=self.mode)
        await self.before_ticks()
        completed = 0
        for tick in range(1, self.max_ticks + 1):
            if self._finish_reason is not None:
                break
            # A tick nobody is waited for (every participant left) awaits nothing: yield once
            # a tick so the loop still reads frames and signals (SIGTERM must stop the clock).
            await asyncio.sleep(0)
            await self._run_one_tick(tick)
            completed = self.ticks_completed = tick
            if self._on_tick_complete is not None:
                self._on_tick_complete(tick)
        reason = self._finish_reason or "ticks"
        self.log.info("run.finish", ticks=completed, reason=reason)
        await self._shut_down(reason)
        self.result = self._build_result(completed, reason)
        self.stop("run complete")

    async def _wait_for_participants(self) -> None:
        self._check_ready()
        try:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for swallows a cancellation that
            # comes as the event is set, and the driver would go on after its clock stopped.
            async with asyncio.timeout(self.ready_timeout):
                await self._all_ready.wait()
        except TimeoutError:
            missing = sorted(set(self.participants) - self._ready)
            # Those that crashed and did not come back in all that time are gone: the run
            # goes on without them, as without any participant that crashed (unless the
            # scenario says it cannot). Those never heard of make a run that cannot start.
            for agent in sorted(self._crashed_at_start & set(missing)):
                self._depart(agent, "disconnected")
            missing = [agent for agent in missing if agent not in self._crashed_at_start]
            if missing:
                self.log.error("run.participants_missing", missing=missing)
                self._finish_reason = f"participants never connected: {', '.join(missing)}"

    async def _run_one_tick(self, tick: int) -> None:
        self.tick = tick
        if self.mode == "realtime":
            self.broadcast(TICK_GROUP, Tick())
            self._report_silent_agents()
            await asyncio.sleep(self.tick_interval)
            await self.advance(tick)
            return
        self._waiting = set(self.participants)
        self._tick_complete.clear()
        self.broadcast(TICK_GROUP, Tick())
        if not self._waiting:
            self._tick_complete.set()
        if not await self._wait_for_tick_done():
            self._tick_timeouts += 1
            self.log.error("tick.timeout", tick=tick, missing=sorted(self._waiting))
        self._resend_ticks = False
        await self.flush_buffer(before_tick=tick + 1)
        await self.advance(tick)

    async def _wait_for_tick_done(self) -> bool:
        """Wait for every TickDone of this tick; False when the tick timeout passed first.

        After the broker came back from a restart, the tick is sent again every ping interval
        until it completes: the first one, or the answers to it, may have been lost with the
        old broker, and participants register again one by one.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.tick_timeout
        while not self._tick_complete.is_set():
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            wait = min(remaining, self._liveness.interval) if self._resend_ticks else remaining
            try:
                async with asyncio.timeout(wait):  # not wait_for: see _wait_for_participants
                    await self._tick_complete.wait()
            except TimeoutError:
                if self._resend_ticks:
                    self.broadcast(TICK_GROUP, Tick())
        return True

    def on_broker_back(self) -> None:
        self._resend_ticks = True
        if not self._tick_complete.is_set():
            self.broadcast(TICK_GROUP, Tick())

    def _watched(self) -> list[str]:
        # At the run's end participants leave one after the other, some after the clock
        # itself: the clock watches only those whose _Stats it still waits for. One that goes
        # without them (a crash as the run ends, a suspect's restart that stays dead after
        # --kill) must end that wait at once, not after the rejoin grace or the shutdown wait.
        if self._shutting_down:
            return sorted(set(self.participants) - set(self._stats))
        return ["*"]

    def _peer_left(self, notice: _Left) -> None:
        agent = notice.agent
        if notice.reason.startswith(GAVE_UP):
            # The supervisor will not restart it: no need to wait for it any longer, and the
            # run's report says why it is gone for good.
            suspect = self._suspects.pop(agent, None)
            if suspect is not None:
                suspect.cancel()
            if agent in self._departed:
                self._departed[agent] = notice.reason
                return
        if agent not in self.participants or agent in self._stats:
            return
        if agent in self._suspects:
            if notice.reason == "disconnected":
                return  # suspected already: its rejoin grace runs
            # Its restart said goodbye (it stays dead) or went silent: gone, no grace needed.
            self._suspects.pop(agent).cancel()
        if notice.reason == "disconnected" and not self._shutting_down:
            # A lost connection without a goodbye: a crashed process that its supervisor may
            # restart. Wait a while for it to announce itself again before giving up on it.
            self.log.warning("agent.disconnected", peer=agent, tick=self.tick)
            if not self._started and agent not in self._ready:
                # Before the run starts, one that never announced itself is waited for as
                # long as any participant not ready yet (the start timeout), not the grace:
                # a restart on a busy machine takes seconds, and its supervisor's giving up
                # (gave_up) departs it at once.
                self._crashed_at_start.add(agent)
                return
            self._suspects[agent] = asyncio.get_running_loop().call_later(
                self.rejoin_grace, self._depart, agent, notice.reason
            )
            return
        self._depart(agent, notice.reason)

    def _depart(self, agent: str, reason: str) -> None:
        self._suspects.pop(agent, None)
        if agent not in self.participants or agent in self._stats:
            return
        self.participants = [p for p in self.participants if p != agent]
        self._departed[agent] = reason
        self._ready.discard(agent)
        self.log.warning("agent.departed", peer=agent, reason=reason, tick=self.tick)
        self._waiting.discard(agent)
        if not self._waiting:
            self._tick_complete.set()
        self._check_ready()
        self._check_stats()
        verdict = self._departure_policy(agent, reason) if self._departure_policy else None
        if verdict is not None and self._finish_reason is None:
            self._ended_by_departure = True
            self._finish_reason = verdict
            self.log.error("run.cannot_go_on", peer=agent, reason=verdict)

    async def _shut_down(self, reason: str) -> None:
        self._shutting_down = True
        self._shutdown_reason = reason
        self.send(self._registration())  # watch only those it waits for (see _watched)
        for participant in self.participants:
            self.send(_Shutdown(recipient=participant, reason=reason))
        self._check_stats()
        try:
            async with asyncio.timeout(self.shutdown_timeout):  # see _wait_for_participants
                await self._stats_complete.wait()
        except TimeoutError:
            self.log.error(
                "run.stats_missing", missing=sorted(set(self.participants) - set(self._stats))
            )

    def progress(self, reason: str) -> RunResult:
        """What the clock knows of a run not over yet, as a result that did not complete: the
        ticks completed so far, its own message counts and those of participants that already
        reported, departures; no final states. A launcher reports it when the run breaks."""
        result = self._build_result(self.ticks_completed, reason, final=False)
        result.completed = False
        return result

    def _build_result(self, ticks: int, reason: str, *, final: bool = True) -> RunResult:
        stats = list(self._stats.values())
        counts = {
            self.id: self._stats_fields(),
            **{name: msgspec.structs.asdict(s) for name, s in self._stats.items()},
        }
        return RunResult(
            started=self._started,
            completed=self._started and not self._ended_by_departure,
            departed=dict(sorted(self._departed.items())),
            handler_failures=_nonzero(counts, "handler_failures"),
            undeliverable=_nonzero(counts, "undeliverable"),
            conflated=_nonzero(counts, "conflated"),
            would_block=_nonzero(counts, "would_block"),
            rejected=_nonzero(counts, "messages_rejected"),
            ticks=ticks,
            seed=self.seed,
            finish_reason=reason,
            messages_sent=self.stats.sent + sum(s.messages_sent for s in stats),
            messages_received=self.stats.received + sum(s.messages_received for s in stats),
            messages_rejected=self.stats.rejected + sum(s.messages_rejected for s in stats),
            tick_timeouts=self._tick_timeouts,
            final_states={
                self.id: self.final_state(),
                **{name: s.final_state for name, s in sorted(self._stats.items())},
            }
            if final
            else {},
            missing=sorted(set(self.participants) - set(self._stats)),
        )

    def _declared_members(self) -> list[str]:
        return sorted(self.members)

    def _refusal(self, message: Message) -> str | None:
        # A tick's end, a finish request and final stats count only from participants. _Ready
        # is how an agent joins (or comes back after a restart): only the run's members may.
        if isinstance(message, TickDone | _FinishRun | _Stats):
            if message.sender in self.participants:
                return None
            return f"{type(message).__name__} is taken only from the run's participants"
        if isinstance(message, _Ready):
            if message.sender in self.members:
                return None
            return (
                f"_Ready is taken only from the run's members (the scenario's agents and the "
                f"outside participants it declares); {message.sender!r} is none of them"
            )
        return super()._refusal(message)

    async def _handle_immediate(self, message: Message) -> None:
        if isinstance(message, TickDone):
            self._tick_done(message)
        elif isinstance(message, _Ready):
            self._participant_ready(message.sender)
        elif isinstance(message, _FinishRun):
            if self._finish_reason is None:
                self._finish_reason = message.reason or f"requested by {message.sender}"
                self.log.info("run.finish_requested", by=message.sender, reason=message.reason)
        elif isinstance(message, _Stats):
            self._stats[message.sender] = message
            self._check_stats()
        elif isinstance(message, Heartbeat):
            self._last_heartbeat[message.sender] = asyncio.get_running_loop().time()
        else:
            await super()._handle_immediate(message)

    def _tick_done(self, message: TickDone) -> None:
        if message.tick != self.tick:
            self.log.warning("tick.late", sender=message.sender, tick=message.tick, now=self.tick)
            return
        self._waiting.discard(message.sender)
        if not self._waiting:
            self._tick_complete.set()

    def _participant_ready(self, agent: str) -> None:
        self.everyone.add(agent)
        self._crashed_at_start.discard(agent)
        suspect = self._suspects.pop(agent, None)
        if suspect is not None:
            suspect.cancel()
        returned = self._departed.pop(agent, None) is not None
        if returned:
            self.log.warning("agent.returned", peer=agent, tick=self.tick)
        if agent not in self.participants:
            self.participants = sorted({*self.participants, agent})
            self.log.info("agent.joined", peer=agent)
        if self._started:
            # A restarted agent: its previous incarnation will never finish this tick.
            self.log.warning("agent.rejoined", peer=agent, tick=self.tick)
            self._waiting.discard(agent)
            if not self._waiting:
                self._tick_complete.set()
        self._ready.add(agent)
        self._check_ready()
        if self._shutdown_reason is not None and (suspect is not None or returned):
            # Back from a restart as the run ends: the _Shutdown sent to its dead connection
            # (if any) never reached it, and the clock waits for its _Stats.
            self.send(_Shutdown(recipient=agent, reason=self._shutdown_reason))

    def _check_stats(self) -> None:
        # Only participants that ever announced themselves can answer a _Shutdown.
        if self._shutting_down and set(self.participants) & self._ready <= set(self._stats):
            self._stats_complete.set()

    def _check_ready(self) -> None:
        if set(self.participants) <= self._ready:
            self._all_ready.set()

    def _report_silent_agents(self) -> None:
        now = asyncio.get_running_loop().time()
        for agent, seen in self._last_heartbeat.items():
            if now - seen > 3 * max(self.tick_interval, 1.0):
                self.log.warning("agent.silent", peer=agent, seconds=round(now - seen, 2))

    def final_state(self) -> dict[str, Any]:
        return {"ticks": self.tick}


def _nonzero(counts: dict[str, Any], key: str) -> dict[str, int]:
    return {name: fields[key] for name, fields in sorted(counts.items()) if fields[key]}
