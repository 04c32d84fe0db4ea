"""Which asyncio event loop actors run on: uvloop where it is installed, else the standard one.

Every message wakes an actor's loop at least once, so the loop's own cost per wake-up is part
of every round trip: in `warband bench messaging`, uvloop cut the framework's round trip by
about a fifth against the standard loop. Both loops run the same code; lockstep runs give the
same message sequence on either (messages are ordered by tick, sender and sequence number, not
by arrival).

``WARBAND_EVENT_LOOP=asyncio`` (or ``uvloop``) overrides the choice, e.g. to compare them.

While actors run, Python's garbage collector runs less often (:func:`fewer_collections`; why:
:mod:`warband.messaging._collector`): :func:`run` does it, and a caller that drives a loop of
:func:`new_event_loop` itself does it around each drive, or holds it while its loop lives
(:func:`hold_fewer_collections`, as an environment does from ``reset()`` to ``close()``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from ..exceptions import ConfigurationError
from ._collector import YOUNG_THRESHOLD as YOUNG_THRESHOLD
from ._collector import fewer_collections as fewer_collections
from ._collector import hold_fewer_collections as hold_fewer_collections

EVENT_LOOP_ENV = "WARBAND_EVENT_LOOP"
"""Environment variable naming the event loop: ``uvloop`` or ``asyncio``."""

LOOPS = ("uvloop", "asyncio")

T = TypeVar("T")


def event_loop_name() -> str:
    """The loop :func:`run` uses here: the environment's choice, else uvloop if importable."""
    chosen = os.environ.get(EVENT_LOOP_ENV, "").strip().lower()
    if chosen and chosen not in LOOPS:
        raise ConfigurationError(
            f"{EVENT_LOOP_ENV}={chosen!r} is not an event loop warband knows; "
            f"use one of: {', '.join(LOOPS)}"
        )
    if chosen == "asyncio":
        return "asyncio"
    if _uvloop_factory() is not None:
        return "uvloop"
    if chosen == "uvloop":
        raise ConfigurationError(
            f"{EVENT_LOOP_ENV}=uvloop but uvloop is not installed; `pip install uvloop` "
            "(it does not exist for Windows) or unset the variable"
        )
    return "asyncio"


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to completion on a new event loop, like :func:`asyncio.run`, with
    Python's garbage collector run less often meanwhile (:mod:`._collector`)."""
    try:
        factory = _uvloop_factory() if event_loop_name() == "uvloop" else None
    except ConfigurationError:
        coroutine.close()  # never awaited: close it so Python does not warn about it
        raise
    # The garbage collector runs less often while actors run (see _collector: at 48v48 it
    # took a sixth of the CPU).
    with fewer_collections(), asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(coroutine)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new event loop of the kind :func:`run` uses, for a caller that drives it itself
    (``run_until_complete``, as :mod:`warband.env` does between its steps, inside
    :func:`fewer_collections`)."""
    factory = _uvloop_factory() if event_loop_name() == "uvloop" else None
    return factory() if factory is not None else asyncio.new_event_loop()


def _uvloop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory
