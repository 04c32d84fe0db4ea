"""The keeper of a process of actors: it tells the broker they are alive while their loop is busy.

Every actor pings the broker from its event loop, and the broker counts a peer that stayed
silent for 3 ping intervals gone. When many actors share a process (one process, a worker of
``warband run --workers N``, ``warband agent --ids``), one long tick (an agent that plans for
seconds, a machine kept busy by other work) keeps every one of them from pinging, and the broker
would depart them all, healthy as they are. So each such process runs one keeper: a thread with
its own connection to the broker that sends ``_Vouch`` (the ids of the process's running actors)
every ping interval. A thread of its own, because a long tick holds the event loop but not the
interpreter: Python hands the lock to other threads every few milliseconds.

The keeper vouches only while the process's event loop still turns now and then: a loop that
has not run a callback for :data:`STUCK_AFTER` seconds is stuck rather than busy, and its actors
are left to be counted silent as before. A process that is stopped (SIGSTOP) or gone takes its
keeper with it, so the broker finds its actors silent or disconnected as before.

The keeper's id starts with ``~``, which no agent id may: it never registers, never takes part
in a run, and the broker answers it nothing (PROTOCOL.md, section 8).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterable

import zmq

from .addresses import BROKER_ID
from .catalog import _Vouch
from .codec import Codec
from .secret import RunSecret
from .tracing import get_logger

STUCK_AFTER = 30.0
"""Seconds without a turn of the event loop after which the keeper stops vouching: a tick that
long is a stuck loop, not a busy one (the clock's tick time-out, 10 s by default, has long
moved on without it)."""

KEEPER_PREFIX = "~keeper"
"""The keeper's id is ``~keeper:<pid>:<random>``; ``~`` starts no agent id."""


class ProcessKeeper:
    """Vouches for the running actors of this process to the broker at ``endpoint``.

    ``running`` returns the ids to vouch for (the actors registered and not stopped); the
    keeper's thread calls it before each vouch, so it must only read (flags, a fixed list of
    actors), never change anything the loop uses. Use the keeper as an async context manager
    around the actors' runs, from the loop that runs them: the loop notes every ``interval``
    that it still turns.
    """

    def __init__(
        self,
        endpoint: str,
        running: Callable[[], Iterable[str]],
        *,
        context: zmq.Context[zmq.Socket[bytes]],
        interval: float = 1.0,
        secret: RunSecret | None = None,
        stuck_after: float = STUCK_AFTER,
    ) -> None:
        self.endpoint = endpoint
        self.interval = interval
        self.stuck_after = stuck_after
        self.id = f"{KEEPER_PREFIX}:{os.getpid()}:{secrets.token_hex(4)}"
        self.vouches = 0
        """Vouches sent so far."""
        self._running = running
        self._context = context
        self._secret = secret
        self._loop_turned = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._codec = Codec()

    async def __aenter__(self) -> ProcessKeeper:
        self._look()
        self._thread = threading.Thread(target=self._keep, name="warband-keeper", daemon=True)
        self._thread.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._stop.set()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, 5.0)

    def _look(self) -> None:
        """On the loop: note that it turned."""
        self._loop_turned = time.monotonic()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self.interval, self._look)

    def _keep(self) -> None:
        socket = self._context.socket(zmq.DEALER)
        socket.setsockopt(zmq.ROUTING_ID, self.id.encode())
        socket.setsockopt(zmq.LINGER, 0)
        # Vouches are worth nothing late: never queue more than a few while the broker is away.
        socket.setsockopt(zmq.SNDHWM, 4)
        if self._secret is not None:
            self._secret.apply_client(socket, self.id)
        try:
            socket.connect(self.endpoint)
            while not self._stop.is_set():
                self._vouch(socket)
                self._stop.wait(self.interval)
        except zmq.ZMQError as error:  # the context is being torn down: the process ends
            get_logger(agent=self.id).info("keeper.stopped", error=str(error))
        finally:
            socket.close(linger=0)

    def _vouch(self, socket: zmq.Socket[bytes]) -> None:
        # Sent even empty (no actor registered yet, or the loop is stuck): the broker closes a
        # connection that says nothing within its first seconds.
        stuck = time.monotonic() - self._loop_turned > self.stuck_after
        agents = [] if stuck else list(self._running())
        self.vouches += 1
        vouch = _Vouch(
            sender=self.id,
            recipient=BROKER_ID,
            id=f"{self.id}:c{self.vouches}",
            agents=agents,
            interval=self.interval,
        )
        with contextlib.suppress(zmq.Again):  # the broker is away: the next one will do
            socket.send(self._codec.encode(vouch), zmq.NOBLOCK)
