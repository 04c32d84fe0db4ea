"""Timers: ``call_later`` and ``every``, counted in ticks (lockstep) or seconds (realtime).

In lockstep, timers wait in a heap keyed by (due tick, creation order) and fire at the start of
the tick they are due, before ``on_tick``, so a run fires them in the same order every time.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..exceptions import ConfigurationError
from ._state import ActorState


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


class TimersMixin(ActorState):
    """The timer part of :class:`~warband.messaging.actor.Actor`."""

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
