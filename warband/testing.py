"""Helpers to test actors the way warband tests its own.

**A whole run**, real broker, real sockets, one process::

    async def test_bot_reports_back() -> None:
        result = await run_actors([Commander("commander"), Bot("bot-1")], ticks=10)
        assert 1 == result.final_states["commander"]["reports"]

:func:`run_actors` is a coroutine: it runs a lockstep (or realtime) run to its end with the same
in-process runner as ``warband run`` and returns the clock's
:class:`~warband.messaging.clock.RunResult`. By default it raises :class:`ActorFailures` when any
actor's handler, timer or ``on_tick`` raised, so a test cannot pass over a swallowed exception.
:func:`running_broker` gives a broker and an endpoint for tests that drive actors, or raw
ZeroMQ sockets, themselves.

**One agent, or a squad and its bots, tick by tick**, with no broker, no sockets and no event
loop of your own (:class:`Drive`; call it from a plain ``def test_...``)::

    def test_a_bot_fires_at_an_enemy_in_sight() -> None:
        with Drive(Agent("bot-1", bot_role(load_map("test")), team="red")) as drive:
            sent = drive.tick(Percept(recipient="bot-1", facts=[...]))
        assert [a.verb for a in sent if isinstance(a, Act)] == ["fire"]

What the actors send comes back decoded from its MessagePack frames, as a receiver reads it.

**Capture** what a run sends and logs: :func:`capture_messages` and :func:`capture_log_events`;
and wait for something outside your test to happen with :func:`wait_until`.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import zmq
from structlog.testing import capture_logs

from .exceptions import WarbandError
from .interrupts import Interrupted, run_until_signalled
from .launcher import make_clock, run_actors_in_process
from .messaging.actor import Actor, Mode, listening_to_sends
from .messaging.broker import Broker
from .messaging.catalog import Message
from .messaging.clock import DeparturePolicy, RunResult
from .messaging.detached import DetachedRun
from .pipes import guard_standard_streams

if TYPE_CHECKING:
    from .world.actor import WorldModel

T = TypeVar("T")

__all__ = [
    "ActorFailures",
    "Drive",
    "capture_log_events",
    "capture_messages",
    "run_actors",
    "running_broker",
    "wait_until",
    "wait_until_async",
]


class ActorFailures(WarbandError):
    """Actors' handlers, timers or ``on_tick`` raised during a run; ``result`` has the counts."""

    def __init__(self, result: RunResult) -> None:
        counts = ", ".join(f"{agent}: {n}" for agent, n in result.handler_failures.items())
        super().__init__(
            f"actors raised during the run ({counts}); their actor.failure log events hold the "
            "tracebacks; pass raise_on_failure=False to inspect the result instead"
        )
        self.result = result


@contextmanager
def running_broker(
    endpoint: str | None = None, *, context: zmq.Context[zmq.Socket[bytes]] | None = None
) -> Iterator[Broker]:
    """A broker routing on ``endpoint`` (default: a fresh ``inproc://``) until the block ends.

    Use ``broker.bound_endpoint`` to connect (it resolves ``tcp://127.0.0.1:*`` to the port).
    """
    broker = Broker(endpoint or f"inproc://test-{uuid.uuid4().hex[:12]}", context=context)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


async def run_actors(
    actors: Iterable[Actor],
    *,
    ticks: int,
    mode: Mode = "lockstep",
    tick_timeout: float = 10.0,
    clock_id: str | None = None,
    seed: int = 0,
    world: WorldModel | None = None,
    departure_policy: DeparturePolicy | None = None,
    raise_on_failure: bool = True,
) -> RunResult:
    """Run ``actors`` under a clock for ``ticks`` ticks in this process; return the result.

    With ``world`` (e.g. a ``warband.world.World``), the clock is a world actor (id ``"world"``
    unless ``clock_id`` says otherwise) that steps it, answers Acts and sends Percepts.
    ``departure_policy`` decides whether the run goes on when an actor leaves for good (see
    :class:`~warband.messaging.clock.Clock`). Raises :class:`ActorFailures` when an actor's
    handler, timer or ``on_tick`` raised, unless ``raise_on_failure`` is False.

    When this process's stdout or stderr turns out to be a closed pipe (a script piped into
    ``head``), the run stops at once, in order, and ``SystemExit(141)`` is raised: the script
    ends without a traceback, as ``SIGPIPE`` ends a Unix tool (:mod:`warband.pipes`).
    """
    guard_standard_streams()
    actors = list(actors)
    clock = make_clock(
        [a.id for a in actors],
        ticks=ticks,
        seed=seed,
        tick_timeout=tick_timeout,
        world=world,
        clock_id=clock_id,
        departure_policy=departure_policy,
    )
    try:
        # signals=False: SIGINT and SIGTERM keep whatever meaning the caller gave them.
        result = await run_until_signalled(
            run_actors_in_process(actors, clock, mode=mode), signals=False
        )
    except Interrupted as closed:
        raise SystemExit(closed.exit_code) from None
    if raise_on_failure and not result.clean:
        raise ActorFailures(result)
    return result


class Drive:
    """Actors stepped tick by tick in this thread: no broker, no sockets, no event loop of yours.

    ``tick(*messages)`` delivers ``messages`` (from ``sender``, ``"world"`` by default, unless
    a message names its own sender; a Percept is one) and what the driven actors sent each other
    last tick, runs one lockstep tick of every actor, and returns what they sent during it,
    decoded from the MessagePack frames as a receiver would read them. :attr:`sent` holds all of
    it. Timers, request time-outs and awaiting handlers run as in a run; nothing is lost, so
    nothing is acknowledged or sent again. Use it from plain (not ``async``) code; ``close`` (or
    the ``with`` block) runs each actor's ``on_stop``.
    """

    def __init__(self, *actors: Actor, sender: str = "world") -> None:
        self._run = DetachedRun(actors)
        self.sender = sender
        self.sent: list[Message] = []
        """Every message the driven actors sent, in order."""

    @property
    def tick_number(self) -> int:
        """The last tick run (0 before the first)."""
        return self._run.tick

    def tick(self, *messages: Message, sender: str | None = None) -> list[Message]:
        """Run one tick (see the class docstring); return what the actors sent during it."""
        stamped = [self._run.stamped(m, sender or self.sender) for m in messages]
        sent = self._run.step(stamped)
        self.sent += sent
        return sent

    def ticks(self, count: int, *messages: Message) -> list[Message]:
        """Run ``count`` ticks, ``messages`` delivered at the first; return all that was sent."""
        sent = self.tick(*messages)
        for _ in range(count - 1):
            sent += self.tick()
        return sent

    def close(self) -> None:
        self._run.close()

    def __enter__(self) -> Drive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def capture_messages() -> Iterator[list[Message]]:
    """Every message an actor of this process sends inside the block, as sent (stamped), in
    order; control messages left out::

        with capture_messages() as sent:
            await run_actors([...], ticks=10)
        orders = [m for m in sent if isinstance(m, Order)]
    """
    captured: list[Message] = []

    def keep(message: Message) -> None:
        if not type(message).__name__.startswith("_"):
            captured.append(message)

    with listening_to_sends(keep):
        yield captured


def capture_log_events() -> AbstractContextManager[list[MutableMapping[str, Any]]]:
    """The log events of the block as dicts (structlog's ``capture_logs``): ``event`` is the
    name, the rest its fields (``agent.plan``, ``cooperation.agreed``, ``msg.send`` when
    tracing...)."""
    return capture_logs()


def wait_until(
    condition: Callable[[], T],
    *,
    timeout: float = 10.0,
    interval: float = 0.05,
    what: str = "the condition",
) -> T:
    """Call ``condition`` until it returns a true value, and return that value; raise
    :class:`TimeoutError` naming ``what`` after ``timeout`` seconds. For things outside the
    test's control (a process starting, a file appearing); never to order a run's own events,
    which lockstep orders."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{what} did not happen within {timeout:g} s")
        time.sleep(interval)


async def wait_until_async(
    condition: Callable[[], T],
    *,
    timeout: float = 10.0,
    interval: float = 0.01,
    what: str = "the condition",
) -> T:
    """:func:`wait_until` for async code: the event loop runs while it waits (actors in this
    process go on handling messages)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{what} did not happen within {timeout:g} s")
        await asyncio.sleep(interval)
