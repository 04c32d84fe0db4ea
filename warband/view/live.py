"""Following a running run over ZeroMQ: ``warband view --live ENDPOINT``.

The viewer binds a PULL socket at ENDPOINT; a run started with ``--live ENDPOINT`` (or by
``warband run --view``) has each of its processes push the blocks of JSON lines its log sink
writes out (:mod:`warband.messaging.live_feed`). A :class:`LiveFeed` reads the blocks that
arrived since its last :meth:`~LiveFeed.read_new`, as :class:`~warband.view.follow.LogFollower`
reads appended lines, so the page and the timeline are the same as for ``--follow``.

The run never waits for the viewer: a viewer that is slow lets its socket's queue fill, and
the run's processes then drop blocks and count them (``live.dropped`` events, which the
timeline sums per process).
"""

from __future__ import annotations

import os
import select
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import zmq

from ..exceptions import ConfigurationError
from ..messaging.live_feed import QUEUE_BLOCKS
from .follow import parse_event

MAX_BLOCKS_PER_READ = 512
"""At most this many blocks per :meth:`LiveFeed.read_new` (the rest wait for the next)."""


@dataclass
class LiveFeed:
    """The viewer's PULL socket at ``endpoint`` (bound on creation; :meth:`close` it)."""

    endpoint: str
    problems: list[str] = field(default_factory=list)
    """Lines that were not events (block:line: why); they are skipped."""
    blocks: int = 0
    """Blocks received so far."""
    events: int = 0
    """Events received so far."""

    def __post_init__(self) -> None:
        self._context: zmq.Context[zmq.Socket[bytes]] = zmq.Context(io_threads=1)
        self._socket = self._context.socket(zmq.PULL)
        self._socket.setsockopt(zmq.RCVHWM, QUEUE_BLOCKS)
        self._socket.setsockopt(zmq.LINGER, 0)
        try:
            self._socket.bind(self.endpoint)
        except zmq.ZMQError as error:
            self.close()
            raise ConfigurationError(
                f"warband view --live cannot bind {self.endpoint!r}: {error}; pick a free "
                "endpoint such as tcp://127.0.0.1:8766 or ipc:///tmp/warband-view.sock, and "
                "start the run with --live and the same endpoint"
            ) from None
        self.endpoint = self._socket.getsockopt_string(zmq.LAST_ENDPOINT) or self.endpoint

    def read_new(self) -> list[dict[str, Any]]:
        """The events of the blocks that arrived since the last call (none: an empty list);
        never waits."""
        found: list[dict[str, Any]] = []
        for _ in range(MAX_BLOCKS_PER_READ):
            try:
                block = self._socket.recv(zmq.NOBLOCK)
            except zmq.Again:
                break
            self.blocks += 1
            for number, line in enumerate(block.split(b"\n"), start=1):
                event = parse_event(line, f"block {self.blocks}:{number}", self.problems)
                if event is not None:
                    found.append(event)
        self.events += len(found)
        return found

    def close(self) -> None:
        """Unbind and let go of the socket (blocks still queued are dropped)."""
        self._socket.close(linger=0)
        self._context.term()


VIEWER_START_TIMEOUT = 60.0
"""Seconds ``warband run --view`` waits for its viewer to print the page's URL."""


class AttachedViewer:
    """The ``warband view --live`` process that ``warband run --view`` starts for its run.

    It binds an ipc:// endpoint in a directory of its own; :attr:`url` is the page, and
    :attr:`endpoint` what the run's processes push to (``--live``). It ends when this process
    dies (even by ``kill -9``), when :meth:`stop` is called, or on Ctrl-C (the terminal sends
    SIGINT to both).
    """

    def __init__(self, host: str, port: int, name: str | None = None) -> None:
        import subprocess
        import tempfile

        from ..messaging.supervisor import PARENT_VARIABLE
        from .server import check_port

        check_port(port, "--view-port")  # said here, not by a viewer that fails to start
        self._workdir = tempfile.TemporaryDirectory(prefix="warband-view-")
        self.endpoint = f"ipc://{self._workdir.name}/view.sock"
        argv = [sys.executable, "-m", "warband", "view", "--live", self.endpoint]
        argv += ["--host", host, "--port", str(port)]
        if name is not None:
            # The page's title names the run, not the internal socket it is fed through.
            argv += ["--name", name]
        self._process = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env={**os.environ, PARENT_VARIABLE: str(os.getpid())},
        )
        assert self._process.stdout is not None
        self._stdout = self._process.stdout
        try:
            self.url = self._first_line()
        except BaseException:
            self.stop()
            raise

    def _first_line(self) -> str:
        ready, _, _ = select.select([self._stdout], [], [], VIEWER_START_TIMEOUT)
        line = self._stdout.readline().decode().strip() if ready else ""
        if not line.startswith("http"):
            code = self._process.poll()
            why = f"exited with code {code}" if code is not None else "printed no URL"
            raise ConfigurationError(
                f"the viewer of --view {why} (see its message above); pick another port "
                "with --view-port, or run without --view"
            )
        return line

    def wait(self, announce: Callable[[], None] | None = None) -> int:
        """Wait until the viewer stops (Ctrl-C); returns its exit code. SIGTERM to this
        process stops the viewer too, from before ``announce`` is called (it says that the
        viewer keeps serving: a signal sent on reading that finds its handler)."""
        stop_viewer = signal.signal(signal.SIGTERM, lambda *_: self.terminate())
        try:
            if announce is not None:
                announce()
            while True:
                try:
                    return self._process.wait()
                except KeyboardInterrupt:
                    self._process.send_signal(signal.SIGINT)  # not in our group: pass it on
        finally:
            signal.signal(signal.SIGTERM, stop_viewer)
            self.stop()

    def terminate(self) -> None:
        """Ask the viewer to stop (SIGTERM); :meth:`wait` then returns. Safe in a signal
        handler."""
        if self._process.poll() is None:
            self._process.terminate()

    def stop(self) -> None:
        """Stop the viewer (SIGTERM, then SIGKILL) and reap it; remove its directory."""
        import subprocess

        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10.0)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if not self._stdout.closed:
            # The viewer's last line (what it served, what it received): ours to print.
            print(self._stdout.read().decode(errors="replace"), end="", flush=True)
            self._stdout.close()
        self._workdir.cleanup()
