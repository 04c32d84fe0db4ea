"""The supervisor: starts actor processes, restarts a crashed one, and reaps them all.

Every process it starts is killed and reaped by :meth:`Supervisor.stop_all`, which the launcher
calls in a ``finally``: a failed or interrupted run leaves no process behind. A restarted process
gets the environment variable ``WARBAND_INCARNATION`` (0 for the first start, then 1, 2, ...).

The children of one supervisor share one process group of their own, so a Ctrl-C in a terminal
(sent to the terminal's foreground group) reaches the launcher alone, which then ends the run in
order, and :meth:`Supervisor.stop_all` can signal the whole group at once. A child that outlives
its supervisor (the launcher was ``kill -9``ed) ends itself: each child calls
:func:`watch_parent` when it starts (``warband agent`` and ``warband broker`` do).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import zmq

from ..exceptions import ConfigurationError
from .addresses import BROKER_ID, GAVE_UP, SUPERVISOR_ID
from .catalog import _GaveUp
from .codec import Codec
from .tracing import get_logger

if TYPE_CHECKING:
    from .curve import CurveClient
    from .secret import RunSecret

INCARNATION_VARIABLE = "WARBAND_INCARNATION"
PARENT_VARIABLE = "WARBAND_PARENT_PID"
"""Set by the supervisor to its own pid in every child's environment; read by
:func:`watch_parent`."""

PARENT_GONE_GRACE = 2.0
"""Seconds a child whose supervisor died has to stop cleanly before it exits hard."""

_PARENT_POLL_INTERVAL = 0.25
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def incarnation() -> int:
    """How many times the supervisor has restarted this process (0 on its first start)."""
    try:
        return int(os.environ.get(INCARNATION_VARIABLE, "0"))
    except ValueError:
        return 0


def watch_parent() -> bool:
    """End this process when the supervisor that started it dies, even by ``kill -9``.

    Does nothing in a process the supervisor did not start, and returns False. Otherwise
    returns True; the process receives
    SIGTERM when its supervisor dies (its SIGTERM handling stops it cleanly), and exits with
    code 143 if it is still alive :data:`PARENT_GONE_GRACE` s later. Call it first thing in the
    child, before it connects anywhere and from the main thread.
    """
    value = os.environ.pop(PARENT_VARIABLE, "")  # popped: not inherited by our own children
    if not value.isdigit():
        return False
    parent = int(value)
    # Linux: the kernel sends the signal the moment the parent dies, however it dies. Set here,
    # after exec, rather than in a preexec_fn (unsafe in a threaded parent); the getppid check
    # below covers a parent that died before this line ran.
    _set_parent_death_signal(signal.SIGTERM)
    if os.getppid() != parent:
        os._exit(128 + signal.SIGTERM)
    # Everywhere (macOS and the BSDs have no parent-death signal): an orphan is re-parented, so
    # its getppid() changes; a thread that notices sends the same SIGTERM. On Linux it is the
    # backstop that bounds a clean stop which hangs.
    threading.Thread(
        target=_exit_when_orphaned, args=(parent,), name="warband-parent-watch", daemon=True
    ).start()
    return True


def _set_parent_death_signal(signum: int) -> None:
    if not sys.platform.startswith("linux"):
        return
    libc_name = ctypes.util.find_library("c")
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(libc_name, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, ctypes.c_ulong(signum), 0, 0, 0)


def _exit_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_PARENT_POLL_INTERVAL)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(PARENT_GONE_GRACE)
    os._exit(128 + signal.SIGTERM)


@dataclass
class ManagedProcess:
    """One supervised OS process and its history."""

    name: str
    argv: list[str]
    restartable: bool
    process: subprocess.Popen[bytes]
    restarts: int = 0
    pids: list[int] = field(default_factory=list)
    restart_times: deque[float] = field(default_factory=deque)
    """When it was restarted (monotonic seconds), within the supervisor's restart period."""
    finished: bool = False
    returncode: int | None = None


DEFAULT_MAX_RESTARTS = 3
"""Restarts allowed per :data:`DEFAULT_RESTART_PERIOD` before the supervisor gives up."""
DEFAULT_RESTART_PERIOD = 10.0
"""Seconds over which restarts are counted (Erlang's restart intensity: 3 per 10 s)."""

GiveUp = Callable[[str, str], None]
"""Called with (process name, reason) when the supervisor gives up on a process."""


class Supervisor:
    """Starts named processes and keeps restartable ones alive until told the run is over.

    Restart intensity, as in Erlang/OTP: a crashed restartable process (exit code not 0) is
    restarted as long as it was restarted fewer than ``max_restarts`` times in the last
    ``restart_period`` seconds; past that the supervisor gives up on it: it logs
    ``process.gave_up`` and calls ``on_give_up(name, reason)`` (the launcher tells the broker,
    which reports the agent's departure, reason ``gave_up: ...``, to its superior and the
    clock). A process that crashes now and then, more than ``restart_period`` apart, is
    restarted every time.

    Its log events name a child's pid ``child_pid``: ``pid`` is the logging process's own.

    Use it from a thread that lives as long as its processes (the main thread): Linux sends a
    child its parent-death signal when the thread that started it ends.
    """

    def __init__(
        self,
        *,
        max_restarts: int = DEFAULT_MAX_RESTARTS,
        restart_period: float = DEFAULT_RESTART_PERIOD,
        on_give_up: GiveUp | None = None,
        environment: Mapping[str, str] | None = None,
    ) -> None:
        """``environment``: variables every child gets on top of this process's own (the run's
        secret: never on a command line, which every user of the host can read)."""
        if max_restarts < 0 or restart_period <= 0:
            raise ConfigurationError(
                f"restart intensity needs max_restarts >= 0 and restart_period > 0 seconds, "
                f"got {max_restarts} and {restart_period}; e.g. --max-restarts 3 "
                "--restart-period 10"
            )
        self.max_restarts = max_restarts
        self.restart_period = restart_period
        self.on_give_up = on_give_up
        self._environment = dict(environment or {})
        self.processes: dict[str, ManagedProcess] = {}
        self.total_restarts = 0
        self.gave_up: list[str] = []
        """Names of the processes the supervisor gave up on, in order."""
        self._log = get_logger(agent="supervisor")
        # Normally one group, led by the first child; a new one only if a child had to be
        # started after every member of the previous group had ended.
        self._groups: list[int] = []
        self._group_of: dict[int, int] = {}

    @property
    def process_group(self) -> int | None:
        """The process group id of the children started last (None before the first start)."""
        return self._groups[-1] if self._groups else None

    def start(self, name: str, argv: list[str], *, restartable: bool = True) -> ManagedProcess:
        """Start ``argv`` as the process called ``name``."""
        process = self._spawn(argv, incarnation=0)
        managed = ManagedProcess(name, argv, restartable, process, pids=[process.pid])
        self.processes[name] = managed
        self._log.info("process.start", process=name, child_pid=process.pid)
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
            if code != 0 and managed.restartable:
                if self._within_intensity(managed):
                    self._restart(managed, code)
                    continue
                managed.finished = True
                managed.returncode = code
                self._give_up(managed, code)
                ended.append(managed)
                continue
            managed.finished = True
            managed.returncode = code
            if code != 0:
                self._log.error("process.failed", process=managed.name, code=code)
            ended.append(managed)
        return ended

    def _within_intensity(self, managed: ManagedProcess) -> bool:
        """True when ``managed`` may be restarted once more (fewer than ``max_restarts``
        restarts in the last ``restart_period`` seconds)."""
        now = time.monotonic()
        while managed.restart_times and now - managed.restart_times[0] > self.restart_period:
            managed.restart_times.popleft()
        return len(managed.restart_times) < self.max_restarts

    def _give_up(self, managed: ManagedProcess, code: int) -> None:
        reason = (
            f"{GAVE_UP}: exited with code {code} after {len(managed.restart_times)} restarts "
            f"in {self.restart_period:g} s"
        )
        self.gave_up.append(managed.name)
        self._log.error(
            "process.gave_up",
            process=managed.name,
            code=code,
            restarts=managed.restarts,
            max_restarts=self.max_restarts,
            restart_period=self.restart_period,
        )
        if self.on_give_up is not None:
            try:
                self.on_give_up(managed.name, reason)
            except Exception as error:  # the run goes on; the escalation is what failed
                self._log.error(
                    "process.escalation_failed", process=managed.name, error=repr(error)
                )

    def stop_restarting(self) -> None:
        """The run is ending: a process that exits now, however it exits, stays down."""
        for managed in self.processes.values():
            managed.restartable = False

    def wait_all(
        self,
        timeout: float,
        *,
        exclude: tuple[str, ...] = (),
        give_up: Callable[[], bool] | None = None,
    ) -> list[str]:
        """Wait up to ``timeout`` s for the processes not in ``exclude`` to exit.

        Stops waiting early as soon as ``give_up()`` is true (checked every 50 ms). Returns the
        names of those still running.
        """
        deadline = time.monotonic() + timeout
        while True:
            running = [
                m.name
                for m in self.processes.values()
                if m.name not in exclude and m.process.poll() is None
            ]
            if not running or time.monotonic() >= deadline or (give_up and give_up()):
                break
            time.sleep(0.05)
        self.check()
        return running

    def stop_all(
        self, grace: float = 1.5, *, last: tuple[str, ...] = (), last_grace: float | None = None
    ) -> None:
        """Terminate every process still running, kill it after ``grace`` s, and reap it.

        SIGTERM goes to each child; whatever is alive after ``grace`` s gets SIGKILL. The
        processes named in ``last`` (the broker) are stopped only once the others are gone, so
        what those send as they stop (an agent's leave notice) still reaches its recipient;
        they get ``last_grace`` s (default ``grace``: a broker may spend its socket's linger
        closing). The last step signals the run's process group too, which catches anything a
        child started. At most two steps: everything is reaped within about ``grace +
        last_grace`` s.
        """
        self.stop_restarting()
        running = [m for m in self.processes.values() if m.process.poll() is None]
        then = [m for m in running if m.name in last]
        final_grace = grace
        if then:
            self._terminate([m for m in running if m.name not in last], grace, groups=False)
            running = [m for m in then if m.process.poll() is None]
            final_grace = grace if last_grace is None else last_grace
        self._terminate(running, final_grace, groups=True)

    def _terminate(self, running: list[ManagedProcess], grace: float, *, groups: bool) -> None:
        if not running:
            return
        self._signal_all(running, signal.SIGTERM, groups=groups)
        deadline = time.monotonic() + grace
        survivors = []
        for managed in running:
            try:
                managed.process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                survivors.append(managed)
        self._signal_all(survivors, signal.SIGKILL, groups=groups)
        for managed in survivors:
            managed.process.wait()
            self._log.warning("process.killed", process=managed.name, child_pid=managed.process.pid)

    def _signal_all(self, running: list[ManagedProcess], signum: int, *, groups: bool) -> None:
        for managed in running:
            with contextlib.suppress(ProcessLookupError):
                managed.process.send_signal(signum)
        if not groups:
            return
        # A group id cannot be reused while a member exists, and an unreaped child is one: only
        # groups with such a member are signalled, never a stranger's.
        live_groups = {self._group_of.get(m.process.pid) for m in running}
        for group in self._groups:
            if group in live_groups:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(group, signum)

    def _restart(self, managed: ManagedProcess, code: int) -> None:
        managed.restarts += 1
        managed.restart_times.append(time.monotonic())
        self.total_restarts += 1
        old_pid = managed.process.pid
        managed.process = self._spawn(managed.argv, incarnation=managed.restarts)
        managed.pids.append(managed.process.pid)
        self._log.warning(
            "process.restart",
            process=managed.name,
            code=code,
            old_pid=old_pid,
            child_pid=managed.process.pid,
            restarts=managed.restarts,
        )

    def _spawn(self, argv: list[str], *, incarnation: int) -> subprocess.Popen[bytes]:
        env = dict(
            os.environ,
            **self._environment,
            **{INCARNATION_VARIABLE: str(incarnation), PARENT_VARIABLE: str(os.getpid())},
        )
        process: subprocess.Popen[bytes] | None = None
        if self._groups:
            # setpgid fails when every member of the group has ended: start a new group then.
            with contextlib.suppress(OSError):
                process = subprocess.Popen(
                    argv, env=env, stdin=subprocess.DEVNULL, process_group=self._groups[-1]
                )
        if process is None:
            process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, process_group=0)
            self._groups.append(process.pid)
        self._group_of[process.pid] = self._groups[-1]
        return process


class BrokerEscalation:
    """Tells the run's broker about the agents a supervisor gave up on: use an instance as the
    supervisor's ``on_give_up``, and :meth:`close` it when the run is over.

    It connects one DEALER with the id ``supervisor`` on the first give-up (the broker obeys
    ``_GaveUp`` from that id only) and keeps it for the rest of the run: a second connection
    claiming the id while the first is known would be refused.
    """

    def __init__(
        self,
        endpoint: str,
        *,
        context: zmq.Context[zmq.Socket[bytes]] | None = None,
        curve: CurveClient | None = None,
        secret: RunSecret | None = None,
    ):
        self.endpoint = endpoint
        self.curve = curve
        """With a CURVE broker: the supervisor's own keys (``supervisor.key_secret``)."""
        self.secret = secret
        """With a broker that checks a run secret: the secret ``supervisor`` proves itself by."""
        self._context = context or zmq.Context.instance()
        self._socket: zmq.Socket[bytes] | None = None
        self._codec = Codec()
        self._sent = 0

    def __call__(self, agent: str, reason: str) -> None:
        if self._socket is None:
            socket = self._context.socket(zmq.DEALER)
            socket.setsockopt(zmq.ROUTING_ID, SUPERVISOR_ID.encode())
            socket.setsockopt(zmq.LINGER, 1000)
            if self.curve is not None:
                self.curve.apply(socket)
            elif self.secret is not None:
                self.secret.apply_client(socket, SUPERVISOR_ID)
            socket.connect(self.endpoint)
            self._socket = socket
        self._sent += 1
        notice = _GaveUp(
            sender=SUPERVISOR_ID,
            recipient=BROKER_ID,
            id=f"{SUPERVISOR_ID}:c{self._sent}",
            agent=agent,
            reason=reason,
        )
        # Queued even before the connection is up (up to ZeroMQ's default 1,000 frames); a
        # refusal raises, and the supervisor logs it (process.escalation_failed).
        self._socket.send(self._codec.encode(notice), zmq.NOBLOCK)

    def close(self) -> None:
        """Close the connection, waiting up to 1 s for what it still has to send."""
        if self._socket is not None:
            self._socket.close(linger=1000)
            self._socket = None
