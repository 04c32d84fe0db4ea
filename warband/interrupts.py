"""How runs and actors end on a signal: SIGTERM, SIGINT and SIGHUP stop them in order.

The launcher of a run (``warband run``) and each actor process (``warband agent``) turn these
signals into a clean stop: actors stop, sockets close, logs flush, child processes are reaped,
and the process exits with 128 + the signal number (130 for SIGINT, 143 for SIGTERM). A
stdout or stderr found closed (:mod:`warband.pipes`) stops them the same way, as ``SIGPIPE``
(exit status 141).

No handler here raises. An exception thrown from a signal handler lands on whatever line the
process happened to run, possibly in the middle of the cleanup it should let finish (or, in an
event loop, in a callback, where it surfaces as "Task exception was never retrieved"). The
handlers record the signal, or stop the actor through its event loop, and the code that polls
or awaits decides what to do.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from types import FrameType, TracebackType
from typing import Any, TypeVar

from .exceptions import WarbandError
from .pipes import on_closed_pipe

T = TypeVar("T")

STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
"""The signals that end a run or an actor cleanly instead of killing it."""


def signal_name(signum: int) -> str:
    """``"SIGTERM"`` for 15, and so on."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class Interrupted(WarbandError):
    """A signal ended the work early; everything it had started was stopped and reaped."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted by {signal_name(signum)}")

    @property
    def exit_code(self) -> int:
        """The shell's convention for a process ended by a signal: 128 + its number."""
        return 128 + self.signum


class SignalFlag:
    """While entered, records the first stop signal instead of letting it end the process.

    For synchronous code that polls: it reads :attr:`received` between two steps and winds down
    when it is set. Outside the main thread (where Python cannot install handlers) it records
    nothing and the signals keep their previous behaviour.
    """

    def __init__(self) -> None:
        self.received: int | None = None
        self._previous: dict[signal.Signals, Any] = {}
        self._pipe = contextlib.ExitStack()

    def __enter__(self) -> SignalFlag:
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._record)
        self._pipe.enter_context(on_closed_pipe(self._record_pipe))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for signum, previous in self._previous.items():
            # None: a handler installed outside Python; the default is the closest we can do.
            signal.signal(signum, signal.SIG_DFL if previous is None else previous)
        self._previous.clear()
        self._pipe.close()

    def _record(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum

    def _record_pipe(self, signum: int) -> None:
        self._record(signum, None)


async def run_until_signalled(coroutine: Coroutine[Any, Any, T], *, signals: bool = True) -> T:
    """Await ``coroutine``; the first stop signal, or a closed stdout or stderr, cancels it.

    Once the cancelled coroutine has run its cleanup (its ``finally`` blocks), raises
    :class:`Interrupted` (``SIGPIPE`` for a closed pipe, see :mod:`warband.pipes`). A coroutine
    that finished with a result despite the signal returns it. ``signals=False`` leaves the
    signals' handling as it was: only a closed pipe stops the coroutine then.
    """
    task = asyncio.ensure_future(coroutine)
    received: list[int] = []

    def interrupt(signum: int) -> None:
        if not received:
            received.append(signum)
            task.cancel()

    with _loop_signal_handlers(interrupt, signals=signals):
        try:
            return await task
        except (asyncio.CancelledError, WarbandError):
            if received:
                raise Interrupted(received[0]) from None
            raise


async def stop_on_signal(
    coroutine: Coroutine[Any, Any, None], stop: Callable[[str], None], *, grace: float = 1.0
) -> int | None:
    """Await ``coroutine`` (an actor's ``run``); the first stop signal calls ``stop(reason)``.

    ``stop`` asks for a clean stop (the actor finishes its message, runs ``on_stop`` and closes
    its socket); if the coroutine is still running ``grace`` s later it is cancelled. Returns
    the number of the signal that stopped it, or None when it ended on its own.
    """
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(coroutine)
    received: list[int] = []

    def interrupt(signum: int) -> None:
        if not received:
            received.append(signum)
            stop(f"interrupted by {signal_name(signum)}")
            loop.call_later(grace, task.cancel)

    with _loop_signal_handlers(interrupt):
        try:
            await task
        except asyncio.CancelledError:
            if not received:
                raise
    return received[0] if received else None


@contextlib.contextmanager
def _loop_signal_handlers(
    callback: Callable[[int], None], *, signals: bool = True
) -> Iterator[None]:
    """Call ``callback(signum)`` in the running loop on a stop signal or a closed pipe."""
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    # The loop's handlers restore the default ones when removed: put back whatever the caller
    # had (warband run --view stops its viewer on SIGTERM before and after the run).
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS} if signals else {}

    def pipe_closed(signum: int) -> None:
        # From whichever thread wrote; a loop closed meanwhile has nothing left to stop.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(callback, signum)

    try:
        for signum in STOP_SIGNALS if signals else ():
            try:
                loop.add_signal_handler(signum, callback, signum)
            except (ValueError, RuntimeError, NotImplementedError):
                break  # not the main thread, or no signal support: the defaults stay
            installed.append(signum)
        with on_closed_pipe(pipe_closed):
            yield
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
            handler = previous.get(signum)
            if handler is not None:
                signal.signal(signum, handler)
