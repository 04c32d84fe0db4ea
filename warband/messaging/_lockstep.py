"""The lockstep tick: on ``Tick(N)``, handle the messages stamped before N in (tick, sender, seq)
order, fire the timers due, expire the requests due, run ``on_tick`` and report ``TickDone(N)``;
after each step wait until every handler has finished or is parked (see ``_requests``).
"""

from __future__ import annotations

from ._state import ActorState
from .catalog import TickDone


class LockstepMixin(ActorState):
    """The tick part of :class:`~warband.messaging.actor.Actor`."""

    async def _run_tick(self, tick: int) -> None:
        if self.mode == "lockstep" and (self._tick_running or tick <= self._tick_done_sent):
            # A tick the clock sent again (it lost our TickDone with a restarted broker).
            if tick == self._tick_done_sent and self.lockstep_participant:
                self._after_delivered(self._report_tick_done)
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
            # Not before every reliable message of this tick is acknowledged: then each sits in
            # its recipient's buffer before the clock can start the next tick, as when nothing
            # was lost (see _delivery).
            self._after_delivered(self._report_tick_done)

    def _report_tick_done(self) -> None:
        if not self._stopping and self._connection is not None and not self._connection.closed:
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
