"""Broker liveness: an actor pings its broker, finds it again after a restart, gives up on it
after a time-out, and says goodbye when it stops (PROTOCOL.md, section 8).

Pings run on the event loop's wall clock in both clock modes; they are control messages, so
they change no agent message's id or order and a lockstep run stays deterministic.
"""

from __future__ import annotations

import asyncio
import random

from ..exceptions import ConfigurationError, DeliveryError
from ._state import ActorState
from .addresses import BROKER_ID
from .catalog import TickDone, _Leave, _Left, _Ping, _Pong, _Ready, _Registered

REJOIN_RATE = 2.0
"""The most ``_Register`` attempts an actor makes per second while its broker is lost."""

# Not the actor's seeded random source: re-registration timing must change no agent message.
_jitter = random.Random()


class BrokerLiveness:
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
        self.due = 0.0
        """When the next ping is due on the loop's clock."""

    def rejoin_delay(self) -> float:
        """Seconds until the next ``_Register`` while the broker is lost: one to two per ping
        interval of at least 1 s, drawn at random (never more than REJOIN_RATE a second)."""
        return max(self.interval, 2.0 / REJOIN_RATE) * _jitter.uniform(0.5, 1.0)

    def heard(self, now: float) -> None:
        self.last_heard = now

    def silent(self, now: float) -> bool:
        return now - self.last_heard > self.SILENT_PINGS * self.interval

    def cancel(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None


class LivenessMixin(ActorState):
    """The broker-liveness part of :class:`~warband.messaging.actor.Actor`."""

    def _leave(self) -> None:
        """Tell the broker we are gone for good, so the clock stops waiting for us."""
        self._liveness.cancel()
        if self._registered.is_set() and not self._connection.closed and not self._liveness.lost:
            self.send(_Leave(recipient=BROKER_ID, reason=self._stop_reason or "stopped"))

    def _schedule_ping(self) -> None:
        # The first ping goes at once: until the broker has one, it cannot find us silent.
        now = asyncio.get_running_loop().time()
        self._liveness.heard(now)
        self._liveness.due = now
        self._ping()

    def _ping(self) -> None:
        if self._stopping or self._connection is None or self._connection.closed:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        liveness = self._liveness
        if not liveness.lost and now - liveness.due > liveness.interval:
            # This ping is late: the loop was blocked (a long tick), so nothing was read from
            # the broker meanwhile, and its silence says nothing of it. Ping now and judge from
            # here: a broker that departed us in the meantime answers registered=false.
            liveness.heard(now)
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
            # Whichever broker answers next has never heard of us: register, no ping (it would
            # only queue up). While the broker is down these queue in the socket, and the first
            # one reaches it as soon as ZeroMQ reconnects; sending them at jittered times, at
            # most REJOIN_RATE a second, keeps actors that lost it together from
            # re-registering in lockstep (a storm) when it comes back.
            self.send(self._registration())
            liveness.handle = loop.call_later(liveness.rejoin_delay(), self._ping)
            return
        self.send(_Ping(recipient=BROKER_ID, interval=liveness.interval))
        liveness.due = now + liveness.interval
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
            # What was in flight when the broker died is lost: send it again now (_delivery).
            self._resend_all()
            self.on_broker_back()

    def on_broker_back(self) -> None:
        """Called when the broker came back after it was lost and this actor registered again.

        The default announces itself to the clock again (``_Ready``: the broker may have
        reported it gone while its connection was down, and the clock then stops waiting for
        it) and re-sends ``TickDone`` for the last tick finished (the first one may have been
        lost with the connection); the clock re-sends its current tick.
        """
        if not self.lockstep_participant:
            return
        self.send(_Ready(recipient=self.clock_id, percept_deltas=self.percept_deltas))
        if self.mode == "lockstep" and self._tick_done_sent:
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
            return
        self.on_peer_left(notice.agent, notice.reason)

    def on_peer_left(self, agent: str, reason: str) -> None:
        """A peer this actor watches left the run (the broker's ``_Left`` notice): one of its
        :meth:`watched_peers`, or one it awaited a reply from. ``reason`` says why (``left: ...``,
        ``disconnected``, ``silent``, ``gave_up: ...``). The default does nothing; a failure
        here is the actor's, as in a handler. (The clock leaving ends the actor instead.)"""

    def watched_peers(self) -> list[str]:
        """Peers whose departure this actor wants to hear of in :meth:`on_peer_left`, besides
        its clock and the peers it awaited a reply from; the default is none. When the answer
        changes, call :meth:`update_registration`."""
        return []
