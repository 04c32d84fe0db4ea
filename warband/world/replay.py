"""Reading a run's world back from its logs: the ``world.snapshot`` events of ``--log DIR``.

The world actor writes one snapshot per tick (tick 0 is the state before the first tick);
``warband render LOG_DIR --tick N`` draws one of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._paths import wrong_kind
from ..exceptions import ConfigurationError
from ._snapshot import SNAPSHOT_EVENT


def load_snapshots(log_dir: Path) -> dict[int, dict[str, Any]]:
    """Every world snapshot under ``log_dir``, by tick (a restarted world's later one wins)."""
    problem = wrong_kind(log_dir, "directory")
    if problem is not None:
        raise ConfigurationError(f"log directory {str(log_dir)!r} {problem}")
    snapshots: dict[int, dict[str, Any]] = {}
    for path in sorted(log_dir.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            # Cheap filter first: a run's logs are mostly message traces.
            if SNAPSHOT_EVENT not in line:
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a killed process; the tick before it still counts
            if event.get("event") == SNAPSHOT_EVENT and isinstance(event.get("snapshot"), dict):
                snapshots[int(event.get("tick", 0))] = event["snapshot"]
    if not snapshots:
        raise ConfigurationError(
            f"no {SNAPSHOT_EVENT} events in {str(log_dir)!r}: render needs the logs of a run "
            "whose scenario declares a world (@scenario.world), run with --log DIR"
        )
    return snapshots


def snapshot_at(log_dir: Path, tick: int | None = None) -> tuple[int, dict[str, Any]]:
    """The snapshot of ``tick`` (default: the last one) and its tick number."""
    snapshots = load_snapshots(log_dir)
    if tick is None:
        tick = max(snapshots)
    if tick not in snapshots:
        raise ConfigurationError(
            f"{str(log_dir)!r} has no snapshot for tick {tick}; "
            f"ticks {min(snapshots)}..{max(snapshots)} were logged"
        )
    return tick, snapshots[tick]
