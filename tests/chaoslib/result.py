"""What a fault reports: its figures (:class:`Result`, its JSON entry), the helpers that reduce
numbered frames and time stamps to them, and its progress lines."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Result:
    """One fault's figures; ``entry()`` is its JSON object."""

    name: str
    passed: bool | None
    lost: int | None = None
    duplicated: int | None = None
    figures: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    target: str = ""
    """The issue's timing target, in words (empty: the issue sets none for this fault)."""
    target_met: bool | None = None
    """Whether the figures met ``target`` (None: no target, or no figure to hold it to).
    ``passed`` is correctness only (lost, duplicated, detected at all, everyone back...)."""

    def entry(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "lost": self.lost,
            "duplicated": self.duplicated,
            **self.figures,
            "target": self.target,
            "target_met": self.target_met,
            "note": self.note,
        }

    @property
    def verdict(self) -> str:
        """``passed``, ``skipped`` (``passed`` is None) or ``FAILED``."""
        return "passed" if self.passed else "skipped" if self.passed is None else "FAILED"


def lost_and_duplicated(received: list[list[float]], sent: int) -> tuple[int, int]:
    """Of ``sent`` numbered frames (0 to sent - 1), how many of ``received`` ([number, time]
    pairs) never came, and how many came more than once."""
    seqs = [int(item[0]) for item in received]
    distinct = set(seqs)
    return sent - len(distinct & set(range(sent))), len(seqs) - len(distinct)


def first_after(times: list[float], moment: float) -> float | None:
    """Seconds from ``moment`` to the first of ``times`` at or after it; None when none is."""
    later = [t - moment for t in times if t >= moment]
    return round(min(later), 3) if later else None


def worst(values: Sequence[float | None]) -> float | None:
    """The largest of ``values``; None when there is none or one of them is None (never seen)."""
    if not values or any(v is None for v in values):
        return None
    return round(max(v for v in values if v is not None), 3)


def progress(text: str) -> None:
    """One progress line on stderr (stdout is for the report)."""
    print(f"[chaos] {text}", file=sys.stderr, flush=True)
