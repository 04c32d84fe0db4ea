"""Injected faults, for testing only: a broker that loses some of the frames it routes.

Real links lose what is in flight when they die; :class:`FrameDrops` makes a broker lose frames
on purpose, at a seeded random rate, so tests of re-sending and deduplication are repeatable:
``Broker(endpoint, drops=FrameDrops(rate=0.1, seed=7))``. Never use it in a real run.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Collection
from dataclasses import dataclass, field

from ..exceptions import ConfigurationError


@dataclass
class FrameDrops:
    """Drop each routed frame (one per recipient of a broadcast) with probability ``rate``.

    ``types`` limits the drops to those message types (e.g. ``{"Order", "_Ack"}``); None drops
    any type. Frames to and from the broker itself (registration, pings) are never dropped.
    The draws come from ``random.Random(seed)`` in routing order, so one broker routing the same
    frames in the same order drops the same ones.
    """

    rate: float
    seed: int = 0
    types: Collection[str] | None = None
    dropped: int = 0
    """Frames dropped so far."""
    _random: random.Random = field(init=False, repr=False)
    _lock: threading.Lock = field(init=False, repr=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ConfigurationError(f"drop rate must be between 0 and 1, got {self.rate}")
        self._random = random.Random(self.seed)

    def drop(self, message_type: str) -> bool:
        """True when the frame of ``message_type`` about to be routed is to be lost."""
        if self.types is not None and message_type not in self.types:
            return False
        with self._lock:
            if self._random.random() >= self.rate:
                return False
            self.dropped += 1
            return True
