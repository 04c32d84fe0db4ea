"""What every benchmark shares: its error and its percentile.

A benchmark module imports this as ``bench.measure`` after putting the repository on
``sys.path`` (``warband bench NAME`` runs a benchmark file by its path).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from warband.exceptions import WarbandError


class BenchmarkError(WarbandError):
    """A benchmark could not run what it must run: a process failed, hung or reported
    something inconsistent, a match never started, a planner of ours found no plan."""


def percentile(samples: Sequence[float], fraction: float) -> float:
    """The nearest-rank ``fraction`` percentile of ``samples`` (0 < fraction <= 1); raises
    :class:`BenchmarkError` when there are none."""
    if not samples:
        raise BenchmarkError("no samples were measured")
    ordered = sorted(samples)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return float(ordered[rank - 1])
