"""Helpers to test actors the way warband tests its own: real broker, real sockets, one process.

    async def test_bot_reports_back() -> None:
        result = await run_actors([Commander("commander"), Bot("bot-1")], ticks=10)
        assert 1 == result.final_states["commander"]["reports"]

:func:`run_actors` is a coroutine: it runs a lockstep (or realtime) run to its end with the same
in-process runner as ``warband run`` and returns the clock's
:class:`~warband.messaging.clock.RunResult`. By default it raises :class:`ActorFailures` when any
actor's handler, timer or ``on_tick`` raised, so a test cannot pass over a swallowed exception.
:func:`running_broker` gives a broker and an endpoint for tests that drive actors, or raw
ZeroMQ sockets, themselves.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import zmq

from .exceptions import WarbandError
from .interrupts import Interrupted, run_until_signalled
from .launcher import make_clock, run_actors_in_process
from .messaging.actor import Actor, Mode
from .messaging.broker import Broker
from .messaging.clock import DeparturePolicy, RunResult
from .pipes import guard_standard_streams

if TYPE_CHECKING:
    from .world.actor import WorldModel

__all__ = ["ActorFailures", "run_actors", "running_broker"]


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
