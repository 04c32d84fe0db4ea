"""Looking at real processes from tests: their state, parents and groups in /proc, a free TCP
port for them to meet on, and waiting on a condition with a deadline (never on the clock alone)."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path

from warband import testing


def stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, process group) of ``pid``, or None when it no longer exists."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The command name is in parentheses and may contain spaces: split after the last ')'.
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[2])


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    state = stat(pid)
    return state is not None and state[0] not in ("Z", "X")


def all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def children_of(parent: int) -> list[int]:
    return [pid for pid in all_pids() if (stat(pid) or ("", 0, 0))[1] == parent]


def group_members(group: int) -> list[int]:
    return [pid for pid in all_pids() if (stat(pid) or ("", 0, 0))[2] == group and alive(pid)]


def child_running(parent: int, argument: str) -> int:
    """The pid of a child of ``parent`` whose command line holds ``argument``."""
    for pid in children_of(parent):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argument.encode() in argv:
            return pid
    raise AssertionError(f"no child of {parent} runs {argument!r}")


def wait_until(condition: Callable[[], object], timeout: float, what: str) -> None:
    """Poll ``condition`` until it holds (warband.testing.wait_until); fail naming ``what``
    after ``timeout`` seconds."""
    testing.wait_until(condition, timeout=timeout, interval=0.02, what=what)


def free_tcp_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
