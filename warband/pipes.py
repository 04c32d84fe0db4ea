"""Closed pipes: a run whose output nobody reads any more ends as ``SIGPIPE`` ends a Unix tool.

Python ignores ``SIGPIPE``, so a write to a pipe whose reader has gone (``warband run ... |
head -1``) raises ``BrokenPipeError`` wherever it happens: in a progress callback of the
clock, in the broker's thread as it logs, in ``print``. Raised there it kills that task or
thread and leaves the rest of the run waiting for it. Installing the default action instead
would end the process at once, with its children unreaped and its logs unflushed, and any
socket write to a closed peer (a browser leaving ``warband view``) would do the same.

So :func:`guard_standard_streams` wraps ``sys.stdout`` and ``sys.stderr``: a write or flush
that finds the pipe closed points the descriptor at ``/dev/null`` (what is still buffered,
and every later write, goes nowhere instead of raising again), records it, and calls the
listeners registered with :func:`on_closed_pipe` with ``SIGPIPE``. The code that runs a run
registers one next to its signal handlers (:mod:`warband.interrupts`), so a closed pipe stops
the run in order, as a SIGTERM would, and ``warband`` exits with 141 (128 + ``SIGPIPE``), the
status of a Unix tool ``SIGPIPE`` ended.

A process started by a supervisor (an agent of ``--processes``) shares its launcher's stderr:
it only silences its writes (:func:`guard_standard_streams` with ``stop=False``) and leaves
the decision to the launcher, which stops the whole run at its own next write.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import signal
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TextIO

ClosedPipeListener = Callable[[int], None]
"""Called with ``signal.SIGPIPE`` (from whichever thread wrote) when stdout or stderr closes."""

_lock = threading.Lock()
_listeners: list[ClosedPipeListener] = []
_closed = threading.Event()
_stop = True


def guard_standard_streams(*, stop: bool = True) -> None:
    """Wrap ``sys.stdout`` and ``sys.stderr`` so a closed pipe stops the run instead of raising.

    Idempotent; ``stop=False`` (a supervised child) only silences the closed stream, from then
    on. A stream with no file descriptor (one a test captures in memory) is left as it is.
    Call it before anything keeps a reference to either stream (structlog's loggers, say).
    """
    global _stop
    _stop = _stop and stop
    pipes: dict[int, TextIO] = {}
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None or isinstance(stream, _GuardedStream):
            continue
        try:
            fd = stream.fileno()
        except (OSError, ValueError):
            continue
        setattr(sys, name, _GuardedStream(stream))
        with contextlib.suppress(OSError):
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                pipes.setdefault(fd, stream)
    if pipes and _stop and hasattr(select, "poll"):
        # A run that writes nothing for a while (`--quiet --json`) still ends at once.
        threading.Thread(
            target=_watch_readers, args=(pipes,), name="warband-pipe-watch", daemon=True
        ).start()


def pipe_closed() -> bool:
    """True once a write found this process's stdout or stderr closed."""
    return _closed.is_set()


def exit_status(code: int) -> int:
    """``code``, or 141 (128 + ``SIGPIPE``) once a closed pipe stopped this process."""
    return 128 + signal.SIGPIPE if _closed.is_set() and _stop else code


@contextlib.contextmanager
def on_closed_pipe(listener: ClosedPipeListener) -> Iterator[None]:
    """Call ``listener(SIGPIPE)`` if stdout or stderr is found closed while the block runs.

    Called at once on entry if that already happened. ``listener`` may be called from any
    thread: it should only record the fact or hand it to its event loop thread-safely.
    """
    with _lock:
        _listeners.append(listener)
    try:
        if _closed.is_set() and _stop:
            listener(signal.SIGPIPE)
        yield
    finally:
        with _lock:
            _listeners.remove(listener)


def _found_closed(stream: TextIO) -> None:
    with contextlib.suppress(OSError, ValueError):
        # The descriptor, not the object: buffered text and the interpreter's last flush at
        # exit go to /dev/null too, instead of raising once more.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    first = not _closed.is_set()
    _closed.set()
    if not (first and _stop):
        return
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        listener(signal.SIGPIPE)


def _watch_readers(pipes: dict[int, TextIO]) -> None:
    """Wait until the reader of one of ``pipes`` (fd -> stream) has gone, then act as a failed
    write would: Linux and the BSDs report ``POLLERR`` on a pipe's write end without readers."""
    poller = select.poll()
    for fd in pipes:
        poller.register(fd, 0)  # no events asked for: errors and hang-ups are always reported
    with contextlib.suppress(OSError):
        for fd, events in poller.poll():
            if events & select.POLLERR:
                _found_closed(pipes[fd])
                return


def _is_closed_pipe(error: OSError) -> bool:
    return isinstance(error, BrokenPipeError) or error.errno == errno.EPIPE


class _GuardedStream:
    """A text stream that turns a closed pipe into :func:`_found_closed` instead of an error."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as error:
            if not _is_closed_pipe(error):
                raise
            _found_closed(self._stream)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as error:
            if not _is_closed_pipe(error):
                raise
            _found_closed(self._stream)
            with contextlib.suppress(OSError):
                self._stream.flush()  # now into /dev/null: the buffer is empty again

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
