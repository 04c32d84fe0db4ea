"""Child processes of the benchmark, both ends: :class:`Child` (the parent's handle, reading the
JSON lines the child prints) and :func:`emit` (the child printing one).

A child runs a role of tests/chaoslib/roles.py (:func:`role_argv`) or a ``warband`` command
(:func:`warband_argv`), from the repository root and in a session of its own; :func:`children`
kills and reaps every child it started, whatever happens.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PY = sys.executable


class Child:
    """A child process whose stdout carries JSON lines; killed and reaped by :meth:`close`."""

    def __init__(self, argv: list[str], name: str) -> None:
        self.name = name
        self.process = subprocess.Popen(
            argv,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        self.lines: list[dict[str, Any]] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with contextlib.suppress(ValueError):
                item = json.loads(line)
                with self._changed:
                    self.lines.append(item)
                    self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, key: str, timeout: float) -> dict[str, Any]:
        """The first JSON line holding ``key``; raises after ``timeout`` s or if the child ends."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for item in self.lines:
                    if key in item:
                        return item
                left = deadline - time.monotonic()
                if left <= 0 or (self.process.poll() is not None and not self._reader.is_alive()):
                    raise RuntimeError(f"{self.name} gave no {key!r} within {timeout} s")
                self._changed.wait(min(left, 0.1))

    def close(self, grace: float = 3.0) -> None:
        """Terminate the child, kill its session after ``grace`` s, reap it."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()
            try:
                self.process.wait(grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self._reader.join(2)
        if self.process.stdout is not None:
            self.process.stdout.close()


Start = Callable[[list[str], str], Child]
"""Start a child: its argv and its name (in error messages)."""


@contextlib.contextmanager
def children() -> Iterator[Start]:
    """A :data:`Start` whose children are all closed, last first, on the way out."""
    started: list[Child] = []

    def start(argv: list[str], name: str) -> Child:
        child = Child(argv, name)
        started.append(child)
        return child

    try:
        yield start
    finally:
        for child in reversed(started):
            child.close()


def role_argv(role: str, *args: object) -> list[str]:
    """The argv of a child playing ``role`` (see tests/chaoslib/roles.py) with ``args``."""
    return [PY, "-m", "tests.chaoslib.roles", role, *(str(a) for a in args)]


def warband_argv(*args: str) -> list[str]:
    """The argv of ``warband ARGS`` run by this interpreter."""
    return [PY, "-m", "warband", *args]


def emit(**fields: Any) -> None:
    """Print one JSON line for the parent's :meth:`Child.wait_for` (in a child)."""
    print(json.dumps(fields), flush=True)
