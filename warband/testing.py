"""Helpers to test actors the way warband tests its own: real broker, real sockets, one process.

    async def test_bot_reports_back() -> None:
        result = await run_actors([Commander("commander"), Bot("bot-1")], ticks=10)
        assert 1 == result.final_states["commander"]["reports"]

:func:`run_actors` runs a lockstep (or realtime) run to its end and returns the clock's
:class:`~warband.messaging.clock.RunResult`; :func:`running_broker` gives a broker and an
endpoint for tests that drive actors, or raw ZeroMQ sockets, themselves.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager

import zmq

from .exceptions import WarbandError
from .messaging.actor import Actor, Mode
from .messaging.broker import Broker
from .messaging.clock import Clock, RunResult
from .world.actor import WORLD_ID, WorldActor, WorldModel


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
) -> RunResult:
    """Run ``actors`` under a clock for ``ticks`` ticks in this process; return the result.

    With ``world`` (e.g. a ``warband.world.World``), the clock is a world actor (id ``"world"``
    unless ``clock_id`` says otherwise) that steps it, answers Acts and sends Percepts.
    """
    actors = list(actors)
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    clock: Clock
    if world is not None:
        clock = WorldActor(
            world,
            clock_id or WORLD_ID,
            participants=[a.id for a in actors],
            ticks=ticks,
            seed=seed,
            tick_timeout=tick_timeout,
            tick_interval=0.01,
        )
    else:
        clock = Clock(
            clock_id or "clock",
            participants=[a.id for a in actors],
            ticks=ticks,
            seed=seed,
            tick_timeout=tick_timeout,
            tick_interval=0.01,
        )
    try:
        with running_broker(context=context) as broker:
            async with _actors_running(actors, broker.bound_endpoint, context, mode, clock.id):
                await clock.run(broker.bound_endpoint, context=context, mode=mode)
    finally:
        context.term()
    if clock.result is None:
        raise WarbandError("the run ended without a result; see the actor.failure log events")
    return clock.result


@asynccontextmanager
async def _actors_running(
    actors: list[Actor],
    endpoint: str,
    context: zmq.Context[zmq.Socket[bytes]],
    mode: Mode,
    clock_id: str,
) -> AsyncIterator[None]:
    tasks = [
        asyncio.create_task(actor.run(endpoint, context=context, mode=mode, clock_id=clock_id))
        for actor in actors
    ]
    try:
        yield
        await asyncio.wait(tasks, timeout=10)
    finally:
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
    failures = [r for r in results if isinstance(r, BaseException)]
    failures = [f for f in failures if not isinstance(f, asyncio.CancelledError)]
    if failures:
        raise failures[0]
