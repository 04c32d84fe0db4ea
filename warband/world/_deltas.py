"""Percept deltas: what changed in a recipient's facts since the last percept it was sent.

Most of an agent's facts are the same from one tick to the next (its class, its weapons, the
capture points, the score), so the world actor sends an agent that asked for it
(``_Ready.percept_deltas``) only the facts added and removed since its last percept
(``Percept.since``, ``Percept.removed``). :class:`PerceptDeltas` keeps, per recipient, the facts
of the last percept it was sent and works out the next one.

Facts are compared as their MessagePack bytes, as the receiver decodes them: ``1``, ``1.0`` and
``True`` are three facts, so the facts of the last percept, less ``removed``, plus ``facts``,
are byte for byte those of a full percept. A recipient gets a full percept when it has none to
follow (it joined, came back, or asked: :meth:`PerceptDeltas.forget`), when the delta would
carry as many facts as the full percept, and every ``full_every`` ticks, at a tick spread by
its id so that not every recipient gets its full one in the same tick: a delta lost on the way
(dropped by backpressure) is healed by then at the latest.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from ..exceptions import ConfigurationError
from ..values import Value

_encode = msgspec.msgpack.Encoder().encode

WireFact = Sequence[Value]
"""A fact as a world model gives it (a tuple or a list)."""


@dataclass(frozen=True, slots=True)
class PerceptChange:
    """The next percept of one recipient: full (``since`` is None, ``facts`` all of them) or a
    delta from the percept of tick ``since`` (``facts`` added, ``removed`` gone)."""

    since: int | None
    facts: Sequence[WireFact]
    removed: Sequence[WireFact] = ()


class PerceptDeltas:
    """The last facts sent to each recipient, and the delta to the next ones."""

    def __init__(self, full_every: int = 50) -> None:
        if full_every < 1:
            raise ConfigurationError(
                f"full percepts every {full_every} ticks: say 1 or more (1: every percept full)"
            )
        self.full_every = full_every
        self._last: dict[str, tuple[int, dict[bytes, WireFact]]] = {}
        self._phase: dict[str, int] = {}

    def forget(self, recipient: str) -> None:
        """``recipient``'s next percept is a full one (it joined again, or asked for it)."""
        self._last.pop(recipient, None)

    def next(self, recipient: str, facts: Sequence[WireFact], tick: int) -> PerceptChange:
        """The percept of tick ``tick`` for ``recipient``, whose facts are now ``facts``:
        a full one (``facts`` as given, in their order) or the delta from its last one (added
        facts in the order of ``facts``, removed ones in the order they were sent). ``tick``
        must be the tick the percept is stamped with: the next delta names it in ``since``."""
        now = dict(zip(map(_encode, facts), facts, strict=True))
        last = self._last.get(recipient)
        self._last[recipient] = (tick, now)
        if last is None or self._due(recipient, tick):
            return PerceptChange(None, facts)
        since, before = last
        # Counted first, in C: most facts of a crowd on the move change every tick (every
        # distance in sight), and then the lists below need not be built at all.
        kept = len(now.keys() & before.keys())
        if len(now) + len(before) - 2 * kept >= len(facts):
            return PerceptChange(None, facts)
        added = [fact for key, fact in now.items() if key not in before]
        removed = [fact for key, fact in before.items() if key not in now]
        if removed:  # kept facts a receiver would lose with a removed one (see _alike)
            added.extend(fact for fact in _alike(removed, facts) if _encode(fact) in before)
        if len(added) + len(removed) >= len(facts):
            # Most facts changed (a crowd on the move: every distance in sight): a full
            # percept says it in fewer facts, and is as good a base for the next delta.
            return PerceptChange(None, facts)
        return PerceptChange(since, added, removed)

    def _due(self, recipient: str, tick: int) -> bool:
        phase = self._phase.get(recipient)
        if phase is None:
            phase = self._phase[recipient] = zlib.crc32(recipient.encode()) % self.full_every
        return (tick + phase) % self.full_every == 0


def _alike(removed: list[WireFact], facts: Sequence[WireFact]) -> list[WireFact]:
    """The facts of ``facts`` equal to a removed one by Python's equality (``1 == 1.0 ==
    True``). A planner holds ``("h", 1)`` and ``("h", 1.0)`` as one fact, so a receiver that
    removes one form while the other still holds must be told the other again. Rare (two forms
    of one fact in one percept), and cheap to rule out."""
    try:
        present = set(facts)  # tuples, as a World gives them: hashed as they are
        alike = {fact for fact in removed if fact in present}
    except TypeError:  # facts as lists, or a list inside a fact: compare every pair
        return [fact for fact in facts if any(list(fact) == list(r) for r in removed)]
    if not alike:
        return []
    return [fact for fact in facts if fact in alike]
