"""The supervisor: starts actor processes, restarts a crashed one, and reaps them all.

Every process it starts is killed and reaped by :meth:`Supervisor.stop_all`, which the launcher
calls in a ``finally``: a failed run leaves no process behind. A restarted process gets the
environment variable ``WARBAND_INCARNATION`` (0 for the first start, then 1, 2, ...).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field

from .tracing import get_logger

INCARNATION_VARIABLE = "WARBAND_INCARNATION"


def incarnation() -> int:
    """How many times the supervisor has restarted this process (0 on its first start)."""
    try:
        return int(os.environ.get(INCARNATION_VARIABLE, "0"))
    except ValueError:
        return 0


@dataclass
class ManagedProcess:
    """One supervised OS process and its history."""

    name: str
    argv: list[str]
    restartable: bool
    process: subprocess.Popen[bytes]
    restarts: int = 0
    pids: list[int] = field(default_factory=list)
    finished: bool = False
    returncode: int | None = None


class Supervisor:
    """Starts named processes and keeps restartable ones alive until told the run is over."""

    def __init__(self, *, max_restarts: int = 3) -> None:
        self.max_restarts = max_restarts
        self.processes: dict[str, ManagedProcess] = {}
        self.total_restarts = 0
        self._log = get_logger(agent="supervisor")

    def start(self, name: str, argv: list[str], *, restartable: bool = True) -> ManagedProcess:
        """Start ``argv`` as the process called ``name``."""
        process = self._spawn(argv, incarnation=0)
        managed = ManagedProcess(name, argv, restartable, process, pids=[process.pid])
        self.processes[name] = managed
        self._log.info("process.start", process=name, pid=process.pid)
        return managed

    def check(self) -> list[ManagedProcess]:
        """Restart crashed restartable processes; return those that ended for good since the last
        call."""
        ended: list[ManagedProcess] = []
        for managed in self.processes.values():
            if managed.finished:
                continue
            code = managed.process.poll()
            if code is None:
                continue
            if code != 0 and managed.restartable and managed.restarts < self.max_restarts:
                self._restart(managed, code)
                continue
            managed.finished = True
            managed.returncode = code
            if code != 0:
                self._log.error("process.failed", process=managed.name, code=code)
            ended.append(managed)
        return ended

    def stop_restarting(self) -> None:
        """The run is ending: a process that exits now, however it exits, stays down."""
        for managed in self.processes.values():
            managed.restartable = False

    def wait_all(self, timeout: float, *, exclude: tuple[str, ...] = ()) -> list[str]:
        """Wait up to ``timeout`` s for the processes not in ``exclude`` to exit.

        Returns the names of those still running.
        """
        deadline = time.monotonic() + timeout
        for managed in self.processes.values():
            if managed.name in exclude:
                continue
            with contextlib.suppress(subprocess.TimeoutExpired):
                managed.process.wait(max(0.0, deadline - time.monotonic()))
        self.check()
        return [
            m.name
            for m in self.processes.values()
            if m.name not in exclude and m.process.poll() is None
        ]

    def stop_all(self, grace: float = 3.0) -> None:
        """Terminate every process still running, kill it after ``grace`` s, and reap it."""
        self.stop_restarting()
        running = [m for m in self.processes.values() if m.process.poll() is None]
        for managed in running:
            managed.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for managed in running:
            try:
                managed.process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                managed.process.kill()
                managed.process.wait()
                self._log.warning("process.killed", process=managed.name, pid=managed.process.pid)

    def _restart(self, managed: ManagedProcess, code: int) -> None:
        managed.restarts += 1
        self.total_restarts += 1
        old_pid = managed.process.pid
        managed.process = self._spawn(managed.argv, incarnation=managed.restarts)
        managed.pids.append(managed.process.pid)
        self._log.warning(
            "process.restart",
            process=managed.name,
            code=code,
            old_pid=old_pid,
            pid=managed.process.pid,
            restarts=managed.restarts,
        )

    @staticmethod
    def _spawn(argv: list[str], *, incarnation: int) -> subprocess.Popen[bytes]:
        env = dict(os.environ, **{INCARNATION_VARIABLE: str(incarnation)})
        return subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL)
