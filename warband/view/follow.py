"""Following a run that is still writing its logs: ``warband view LOG_DIR --follow``.

Every process of a run appends JSON lines to its own ``LOG_DIR/<name>.<pid>.jsonl`` (in
blocks of a few hundred events). A :class:`LogFollower` remembers how far it read each file
and, on each :meth:`~LogFollower.read_new`, returns the complete lines written since; a line
still being written is kept until its end arrives. The run does no work for the viewer: the
viewer reads files the run writes anyway, in its own process, as often as it likes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ..messaging.trace_view import MESSAGE_EVENTS

_MESSAGE_KEYS = ("msg_id", "msg_type", "sender", "recipient")
_decode = msgspec.json.Decoder().decode


@dataclass
class _FileState:
    offset: int = 0
    partial: bytes = b""
    lines: int = 0
    skipped: bool = False
    """Not a file (a directory named ``x.jsonl``): never read."""


@dataclass
class LogFollower:
    """Reads what the processes of a run append to the ``*.jsonl`` files of ``log_dir``
    (files that appear later too, as processes start)."""

    log_dir: Path
    problems: list[str] = field(default_factory=list)
    """Lines that were not events (file:line: why); they are skipped."""
    _files: dict[Path, _FileState] = field(default_factory=dict)

    def read_new(self) -> list[dict[str, Any]]:
        """The events written since the last call, file by file; nothing when the directory
        does not exist yet."""
        if not self.log_dir.is_dir():
            return []
        events: list[dict[str, Any]] = []
        for path in sorted(self.log_dir.glob("*.jsonl")):
            if path not in self._files and not path.is_file():
                self._files[path] = _FileState(skipped=True)
                self.problems.append(f"{path.name}: not a file")  # said once, as a bad line
            state = self._files.setdefault(path, _FileState())
            if state.skipped:
                continue
            try:
                with path.open("rb") as file:
                    file.seek(state.offset)
                    data = file.read()
            except OSError:
                continue  # removed or unreadable for now: try again next time
            state.offset += len(data)
            *lines, state.partial = (state.partial + data).split(b"\n")
            for line in lines:
                state.lines += 1
                event = self._parse(line, f"{path.name}:{state.lines}")
                if event is not None:
                    events.append(event)
        return events

    def _parse(self, line: bytes, where: str) -> dict[str, Any] | None:
        return parse_event(line, where, self.problems)


def parse_event(line: bytes, where: str, problems: list[str]) -> dict[str, Any] | None:
    """One log line as an event, or None (blank, or not an event: said in ``problems``)."""
    if not line.strip():
        return None
    try:
        event = _decode(line)  # msgspec: a few times faster than json, for a live run's flow
    except msgspec.DecodeError:
        problems.append(f"{where}: not JSON")
        return None
    if not isinstance(event, dict):
        problems.append(f"{where}: not a JSON object")
        return None
    if event.get("event") in MESSAGE_EVENTS and not all(
        isinstance(event.get(key), str) for key in _MESSAGE_KEYS
    ):
        problems.append(f"{where}: a message event without its string ids")
        return None
    return event
