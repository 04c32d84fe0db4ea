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
from itertools import compress

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


class _Sent:
    """The facts of one percept as sent, the base of the next delta: each fact's MessagePack
    bytes (``keys``, in the order of ``facts``) and their set."""

    __slots__ = ("facts", "key_set", "keys", "tick")

    def __init__(self, tick: int, facts: Sequence[WireFact]) -> None:
        self.tick = tick
        self.facts = tuple(facts)  # a copy: the caller's list may be a buffer it reuses
        self.keys = list(map(_encode, self.facts))
        self.key_set = set(self.keys)

    def outside(self, others: set[bytes]) -> list[WireFact]:
        """The facts whose bytes are not in ``others``, in the order of ``facts``; a fact said
        twice is where it was first said, as the last of its forms (a tuple and a list are the
        same bytes), as a dict of bytes to fact keeps them."""
        if len(self.key_set) != len(self.keys):  # a fact said twice: rare
            by_key = dict(zip(self.keys, self.facts, strict=True))
            return [fact for key, fact in by_key.items() if key not in others]
        fresh = self.key_set - others
        if not fresh:
            return []
        return list(compress(self.facts, map(fresh.__contains__, self.keys)))


class PerceptDeltas:
    """The last facts sent to each recipient, and the delta to the next ones.

    Facts given as a tuple are taken as the same facts whenever the same tuple is given again
    in one tick (a tuple cannot change; its facts are not to be changed either, as none
    given may be): a team's facts, sent to each of its commanders and squads, are encoded
    once, and their delta worked out once for those whose last percept was the same too.
    """

    def __init__(self, full_every: int = 50) -> None:
        if full_every < 1:
            raise ConfigurationError(
                f"full percepts every {full_every} ticks: say 1 or more (1: every percept full)"
            )
        self.full_every = full_every
        self._last: dict[str, _Sent] = {}
        self._phase: dict[str, int] = {}
        self._shared_tick: int | None = None
        self._shared: dict[int, _Sent] = {}
        """This tick's facts given as a tuple, by the tuple's id (its _Sent holds it: no other
        object can take that id while it is here)."""
        self._changes: dict[tuple[int, int], tuple[_Sent, _Sent, PerceptChange | None]] = {}
        """This tick's deltas from one _Sent to another (ids), None when full is smaller."""

    def forget(self, recipient: str) -> None:
        """``recipient``'s next percept is a full one (it joined again, or asked for it)."""
        self._last.pop(recipient, None)

    def next(self, recipient: str, facts: Sequence[WireFact], tick: int) -> PerceptChange:
        """The percept of tick ``tick`` for ``recipient``, whose facts are now ``facts``:
        a full one (``facts`` as given, in their order) or the delta from its last one (added
        facts in the order of ``facts``, removed ones in the order they were sent). ``tick``
        must be the tick the percept is stamped with: the next delta names it in ``since``."""
        now = self._sent(facts, tick)
        last = self._last.get(recipient)
        self._last[recipient] = now
        if last is None or self._due(recipient, tick):
            return PerceptChange(None, facts)
        if type(facts) is not tuple:
            change = _delta(last, now)
        else:  # the same for every recipient whose last facts were the same too
            pair = (id(last), id(now))
            known = self._changes.get(pair)
            if known is None:
                known = self._changes[pair] = (last, now, _delta(last, now))
            change = known[2]
        return PerceptChange(None, facts) if change is None else change

    def _sent(self, facts: Sequence[WireFact], tick: int) -> _Sent:
        if type(facts) is not tuple:
            return _Sent(tick, facts)
        if self._shared_tick != tick:
            self._shared_tick = tick
            self._shared.clear()
            self._changes.clear()
        found = self._shared.get(id(facts))
        if found is None or found.facts is not facts:
            found = self._shared[id(facts)] = _Sent(tick, facts)
        return found

    def _due(self, recipient: str, tick: int) -> bool:
        phase = self._phase.get(recipient)
        if phase is None:
            phase = self._phase[recipient] = zlib.crc32(recipient.encode()) % self.full_every
        return (tick + phase) % self.full_every == 0


def _delta(last: _Sent, now: _Sent) -> PerceptChange | None:
    """The delta from ``last`` to ``now``, or None when a full percept says it in as few
    facts."""
    before, keys = last.key_set, now.key_set
    count = len(now.keys)
    # Counted first, in C: most facts of a crowd on the move change every tick (every
    # distance in sight), and then the lists below need not be built at all.
    kept = len(keys & before)
    if len(keys) + len(before) - 2 * kept >= count:
        return None
    added = now.outside(before)
    removed = last.outside(keys)
    if removed:  # kept facts a receiver would lose with a removed one (see _alike)
        added.extend(fact for fact in _alike(removed, now.facts) if _encode(fact) in before)
    if len(added) + len(removed) >= count:
        # Most facts changed (a crowd on the move: every distance in sight): a full
        # percept says it in fewer facts, and is as good a base for the next delta.
        return None
    return PerceptChange(last.tick, added, removed)


def _alike(removed: list[WireFact], facts: Sequence[WireFact]) -> list[WireFact]:
    """The facts of ``facts`` equal to a removed one by Python's equality (``1 == 1.0 ==
    True``). A planner holds ``("h", 1)`` and ``("h", 1.0)`` as one fact, so a receiver that
    removes one form while the other still holds must be told the other again. Rare (two forms
    of one fact in one percept), and cheap to rule out."""
    try:
        gone = set(removed)
        # In C, every fact hashed once: nearly always none is alike. A fact that is a list or
        # holds one raises here or below, as it would in a set of the facts.
        if gone.isdisjoint(facts):
            return []
        return [fact for fact in facts if fact in gone]
    except TypeError:  # facts as lists, or a list inside a fact: compare every pair
        return [fact for fact in facts if any(list(fact) == list(r) for r in removed)]
