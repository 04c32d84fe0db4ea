"""The run's side of ``warband view --live``: each process pushes its log events to a viewer.

A run started with ``--live ENDPOINT`` (``warband run --view`` picks one) has every process,
the broker's included, connect a ZeroMQ PUSH socket to ENDPOINT, where the viewer has bound a
PULL socket. What the process's log sink writes out (blocks of JSON lines, the same lines a
``--log DIR`` file gets) is also sent there, one block per ZeroMQ message, at least every
:data:`FLUSH_EVERY` seconds.

The viewer drops frames, never the run: a block is sent without blocking; when the viewer is
slow, stopped or not there, up to :data:`QUEUE_BLOCKS` blocks wait in the socket's queue and
the next ones are dropped and counted. The next block that goes out starts with a
``live.dropped`` line (the process's ``pid`` and how many ``blocks`` and ``events`` it dropped
so far), and a process that dropped any says so in its log at exit. Blocks still queued when a
process exits are given :data:`LINGER_MS` to go out, then lost without a count.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field

import zmq

from ..exceptions import ConfigurationError

QUEUE_VARIABLE = "WARBAND_LIVE_QUEUE"
"""The environment variable that sets :data:`QUEUE_BLOCKS` for the processes of a run."""
QUEUE_BLOCKS = 64
"""Blocks a process keeps for a viewer that is not reading, then it drops them (a block is
at most a few hundred events; ``WARBAND_LIVE_QUEUE=N`` keeps N instead)."""
FLUSH_EVERY = 0.25
"""Seconds after which a process sends what it has, however few events (a live page moves)."""
LINGER_MS = 250
"""How long a process that exits keeps trying to hand its last blocks to the viewer."""
DROPPED_EVENT = "live.dropped"


@dataclass
class LivePublisher:
    """A process's PUSH socket to a viewer's ``--live`` endpoint; not thread-safe (the log
    sink calls it under its lock)."""

    endpoint: str
    pid: int
    dropped_blocks: int = 0
    dropped_events: int = 0
    sent_blocks: int = 0
    _told: int = field(default=0, repr=False)
    """``dropped_blocks`` when the viewer was last told."""

    def __post_init__(self) -> None:
        self._context: zmq.Context[zmq.Socket[bytes]] = zmq.Context(io_threads=1)
        self._socket = self._context.socket(zmq.PUSH)
        self._socket.setsockopt(zmq.SNDHWM, queue_blocks())
        self._socket.setsockopt(zmq.LINGER, LINGER_MS)
        try:
            self._socket.connect(self.endpoint)
        except zmq.ZMQError as error:
            self.close()
            raise ConfigurationError(
                f"--live {self.endpoint!r} is not an endpoint to connect to: {error}; pass the "
                "one `warband view --live ENDPOINT` binds, such as tcp://127.0.0.1:8766"
            ) from None

    @property
    def queue(self) -> int:
        """How many blocks wait for a viewer before the next are dropped."""
        return int(self._socket.getsockopt(zmq.SNDHWM))

    def publish(self, block: bytes, events: int) -> None:
        """Send ``block`` (``events`` JSON lines, each ending in a newline), or drop it."""
        if self.dropped_blocks != self._told:
            block = self._dropped_line() + block
        try:
            self._socket.send(block, zmq.NOBLOCK)
        except zmq.Again:
            self.dropped_blocks += 1
            self.dropped_events += events
            return
        self.sent_blocks += 1
        self._told = self.dropped_blocks

    def _dropped_line(self) -> bytes:
        return (
            f'{{"event":"{DROPPED_EVENT}","pid":{self.pid},'
            f'"blocks":{self.dropped_blocks},"events":{self.dropped_events}}}\n'
        ).encode()

    def close(self) -> None:
        """Tell the viewer what was dropped (if it can take it), then let go of the socket."""
        if not self._socket.closed:
            if self.dropped_blocks != self._told:
                # Still full: the run's log says it instead (see the sink).
                with contextlib.suppress(zmq.Again):
                    self._socket.send(self._dropped_line(), zmq.NOBLOCK)
            self._socket.close()
        self._context.term()


def queue_blocks() -> int:
    """:data:`QUEUE_BLOCKS`, or the value of ``WARBAND_LIVE_QUEUE``; raises
    :class:`ConfigurationError` when that is not a positive integer."""
    raw = os.environ.get(QUEUE_VARIABLE)
    if raw is None:
        return QUEUE_BLOCKS
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigurationError(
            f"{QUEUE_VARIABLE}={raw!r} is not a positive number of blocks; unset it for "
            f"{QUEUE_BLOCKS}"
        )
    return int(raw)
