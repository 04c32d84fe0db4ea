"""The processes of a ``warband run --processes`` (:func:`start_run`), seen from /proc: its agents,
their process groups, who is still alive; and the scratch folders the faults work in."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .children import REPO, warband_argv


@contextlib.contextmanager
def scratch_dir() -> Iterator[Path]:
    """A fresh folder under /tmp (short enough for ``ipc://`` paths), removed on the way out."""
    tmp = Path(tempfile.mkdtemp(prefix="wbc-", dir="/tmp"))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def wait_until(condition: Callable[[], bool], timeout: float) -> bool:
    """Whether ``condition()`` came to hold within ``timeout`` s (polled every 50 ms)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent, process group) of ``pid``, None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[2])


def _alive(pid: int) -> bool:
    found = proc_stat(pid)
    return found is not None and found[0] not in ("Z", "X")


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def agents_of(launcher: int) -> dict[str, int]:
    """Agent id -> pid of the launcher's children started as ``warband agent --id ID``."""
    found: dict[str, int] = {}
    for pid in _pids():
        stat = proc_stat(pid)
        if stat is None or stat[1] != launcher or not _alive(pid):
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "--id" in argv:
            found[argv[argv.index("--id") + 1]] = pid
    return found


def process_groups(launcher: int) -> set[int]:
    """The process groups of the launcher's agents running now."""
    return {s[2] for pid in agents_of(launcher).values() if (s := proc_stat(pid))}


def members(groups: set[int]) -> list[int]:
    """The living processes in ``groups``."""
    return [
        pid
        for pid in _pids()
        if (s := proc_stat(pid)) is not None and s[2] in groups and _alive(pid)
    ]


def last_json(text: str) -> dict[str, Any] | None:
    """The last line of ``text`` that is a JSON object, None when none is."""
    for line in reversed(text.strip().splitlines()):
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                return value
    return None


@dataclass
class Launch:
    """A ``warband run ... --processes --json`` launcher and the files it writes to."""

    process: subprocess.Popen[bytes]
    out: Path
    err: Path

    def kill_all(self, groups: set[int]) -> None:
        """``kill -9`` every process of ``groups`` and the launcher; reap the launcher."""
        for group in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def start_run(tmp: Path, name: str, *args: str) -> Launch:
    """``warband run ARGS --processes --json``, its output in ``tmp/NAME.out`` and ``.err``."""
    out, err = tmp / f"{name}.out", tmp / f"{name}.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            warband_argv("run", *args, "--processes", "--json"),
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            env={**os.environ, "TMPDIR": str(tmp)},
        )
    return Launch(process, out, err)
