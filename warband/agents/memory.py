"""An agent's memory: one fact database, filled from named sources.

Killzone's bots keep a world database that perception, messages from team mates and *daemons*
(components that each add one kind of fact: health, weapons, threats) write into, and the
planner reads. Here each writer is a named *source* whose facts replace what that source said
before: the last Percept (``percept``), the events of the last tick (``events``), each daemon,
the agent's orders and reports. The one source that persists is ``memory``: what the plan itself
remembers and forgets (``!remember``, ``!forget``). The planner reads the union, a
:class:`~warband.planning.FactDB`, rebuilt only when a source changed.

Facts are tuples of :data:`warband.values.Value` (``("sees", "bot-7", "w9", 12.5)``), the same
tuples the world's vocabulary reads by name (``SEES.all(memory.facts)``) and the HTN planner
queries, so a percept fact reaches the planner as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import is_

import msgspec

from ..exceptions import ConfigurationError
from ..planning import FactDB
from ..values import Fact, Value, check_fact, fact_key, value_key, values_equal

MEMORY = "memory"
"""The source ``!remember`` and ``!forget`` write: the only one that lasts until changed."""

Daemon = Callable[["Memory", int], Iterable[Fact]]
"""Derives facts each tick from the rest of memory (``(memory, tick) -> facts``); its facts
replace the ones it gave the tick before."""

WILDCARD = "**"
"""In ``!forget`` arguments, matches any remaining fields (``(!forget member_status ?m **)``)."""


class Memory:
    """The facts an agent knows, by source (see the module docstring)."""

    def __init__(self, facts: Iterable[Sequence[Value]] = ()) -> None:
        # Each source's facts by fact_key, so ("armed", True) and ("armed", 1) stay two facts.
        self._sources: dict[str, dict[Fact, Fact]] = {}
        self._remembered: dict[Fact, Fact] = {}
        # The keys of the remembered facts by name, and by name and first value, in the order
        # remembered: forget() looks only at the facts its pattern can match, not at all the
        # plan remembered (a bot forgets an enemy's last sighting for each enemy out of sight).
        self._remembered_groups: dict[object, dict[Fact, None]] = {}
        # The union, kept up to date fact by fact: a source changes a few facts a tick, and
        # rebuilding the whole database on every change cost a quarter of a Warzone match.
        self._db = FactDB()
        self._holders: dict[Fact, int] = {}
        # What each source said through set_source, as held, in order, and (once asked for) as
        # MessagePack bytes: a source said again unchanged costs one comparison (_unchanged).
        self._said: dict[str, tuple[tuple[Fact, ...], bytes | None]] = {}
        for fact in facts:
            self.remember(*fact)

    # --- writing ---------------------------------------------------------------------------

    def set_source(self, source: str, facts: Iterable[Sequence[Value]]) -> None:
        """Make ``facts`` all that ``source`` says, replacing what it said before."""
        if source == MEMORY:
            raise ConfigurationError(
                f"the source {MEMORY!r} changes only by remember() and forget()"
            )
        given = tuple(facts)
        if self._unchanged(source, given):
            return
        old = self._sources.get(source, _NOTHING)
        new = {}
        for fact in given:
            # The very tuple held before (a source that keeps its fact objects, such as the
            # agent's threat reports) was checked when it came, and is its own key: a fact
            # keyed otherwise (holding a bool) is held under a key that is not equal to it.
            if fact.__class__ is tuple:
                try:
                    if old.get(fact) is fact:
                        new[fact] = fact
                        continue
                except TypeError:  # unhashable (a list inside): _keyed names it
                    pass
            known, key = _keyed(fact, old)
            new[key] = known
        self._sources[source] = new
        self._said[source] = (tuple(new.values()), None)
        self._exchange(
            [(key, fact) for key, fact in old.items() if key not in new],
            [(key, fact) for key, fact in new.items() if key not in old],
        )

    def _unchanged(self, source: str, given: tuple[Sequence[Value], ...]) -> bool:
        """Whether ``given`` is exactly what ``source`` says now, in the same order: then
        :meth:`set_source` has nothing to do (most sources of an agent say the same thing
        most ticks: its orders, its order book, its daemons' facts).

        Exactly: ``==`` tells a list from a tuple (a fact given as a list is never the same)
        but takes ``True`` for ``1``, ``1`` for ``1.0`` and ``0.0`` for ``-0.0``; their
        MessagePack bytes tell those apart, so both must agree. The bytes of what the source
        says are worked out the first time they are needed and kept until it changes."""
        said = self._said.get(source)
        if said is None or said[0] != given:
            return False
        facts, packed = said
        if all(map(is_, given, facts)):
            return True  # the very tuples held (== has compared the lengths)
        try:
            if packed is None:
                packed = _PACK(facts)
                self._said[source] = (facts, packed)
            return _PACK(given) == packed
        except (TypeError, ValueError, OverflowError):
            return False  # not a value MessagePack writes: set_source names what is wrong

    def change_source(
        self, source: str, added: Iterable[Sequence[Value]], removed: Iterable[Sequence[Value]]
    ) -> None:
        """Apply what changed in ``source``: the facts ``removed`` no longer hold, ``added``
        hold now (a delta Percept). The database ends exactly as :meth:`set_source` with the
        source's new facts would leave it: the facts only removed leave it, the new ones come
        in in ``added``'s order, and a fact removed and added again in another form (``12`` and
        ``12.0``, one fact to the planner) stays as it was. The source lists the facts it
        kept, in their order, then the added ones."""
        if source == MEMORY:
            raise ConfigurationError(
                f"the source {MEMORY!r} changes only by remember() and forget()"
            )
        self._said.pop(source, None)
        held = self._sources.setdefault(source, {})
        coming: dict[Fact, Fact] = {}
        for fact in added:
            known, key = _keyed(fact, _NOTHING)
            coming[key] = known
        leaving: list[tuple[Fact, Fact]] = []
        for fact in removed:
            key = _keyed(fact, held)[1]
            if key not in coming and key in held:
                leaving.append((key, held.pop(key)))
        self._exchange(leaving, [(key, fact) for key, fact in coming.items() if key not in held])
        held.update(coming)

    def clear_source(self, source: str) -> None:
        """Forget everything ``source`` said."""
        self._said.pop(source, None)
        self._exchange(list(self._sources.pop(source, {}).items()), [])

    def remember(self, *fact: Value) -> None:
        """Add a fact that lasts until :meth:`forget` removes it."""
        known = _as_fact(fact)
        key = fact_key(known)
        if key not in self._remembered:
            self._remembered[key] = known
            for group in _groups_of(known):
                self._remembered_groups.setdefault(group, {})[key] = None
            self._exchange([], [(key, known)])

    def forget(self, *pattern: Value) -> int:
        """Remove remembered facts that start with ``pattern``; returns how many.

        ``pattern`` is the fact's name and leading fields; a trailing ``"**"`` is allowed and
        means the same (any remaining fields).
        """
        if pattern and pattern[-1] == WILDCARD:
            pattern = pattern[:-1]
        if not pattern:
            raise ConfigurationError("forget needs at least the fact's name")
        remembered, groups = self._remembered, self._remembered_groups
        candidates = groups.get(_group_of(pattern), _NO_KEYS)
        gone = [key for key in candidates if _starts_with(remembered[key], pattern)]
        leaving: list[tuple[Fact, Fact]] = []
        for key in gone:
            fact = remembered.pop(key)
            for group in _groups_of(fact):
                keys = groups[group]
                del keys[key]
                if not keys:
                    del groups[group]
            leaving.append((key, fact))
        self._exchange(leaving, [])
        return len(gone)

    def _exchange(self, leaving: list[tuple[Fact, Fact]], coming: list[tuple[Fact, Fact]]) -> None:
        """One source less says each ``(key, fact)`` of ``leaving``, one more each of
        ``coming``: the facts no source says any more leave the database and those no source
        said before come in, in one change of it (a source changes hundreds of facts a tick in
        a big battle)."""
        holders = self._holders
        removed: list[tuple[Fact, Fact]] = []
        for pair in leaving:
            key = pair[0]
            held = holders[key] - 1
            if held:
                holders[key] = held
            else:
                del holders[key]
                removed.append(pair)
        added: list[tuple[Fact, Fact]] = []
        for pair in coming:
            key = pair[0]
            held = holders.get(key, 0)
            if not held:
                added.append(pair)  # checked on the way in; keyed as the database keys it
            holders[key] = held + 1
        if removed or added:
            self._db.exchange_keyed(removed, added)

    # --- reading ---------------------------------------------------------------------------

    @property
    def facts(self) -> FactDB:
        """Every fact of every source, as the planner reads them. It changes as the sources
        change: take ``facts.copy()`` (cheap: copy on write) to keep a snapshot; never change
        it yourself."""
        return self._db

    def source(self, source: str) -> tuple[Fact, ...]:
        """What ``source`` says now (``memory``: the remembered facts)."""
        if source == MEMORY:
            return tuple(self._remembered.values())
        return tuple(self._sources.get(source, {}).values())

    def sources(self) -> list[str]:
        """The sources that say something, ``memory`` first."""
        return [MEMORY, *sorted(name for name, facts in self._sources.items() if facts)]

    def __iter__(self) -> Iterator[Fact]:
        return iter(self.facts)

    def snapshot(self) -> dict[str, list[Fact]]:
        """Every source's facts, for a log event (``warband explain`` reads it); each fact is
        written as a JSON array, as a list would be."""
        return {name: list(self.source(name)) for name in self.sources()}


_NOTHING: dict[Fact, Fact] = {}
_PACK = msgspec.msgpack.Encoder().encode
_NO_KEYS: dict[Fact, None] = {}


def _group_of(pattern: Sequence[Value]) -> object:
    """The narrowest group of remembered facts that holds every fact ``pattern`` matches: its
    name and first value (as a key: True apart from 1), or its name alone."""
    return (pattern[0], value_key(pattern[1])) if len(pattern) > 1 else pattern[0]


def _groups_of(fact: Fact) -> tuple[object, ...]:
    """The groups a remembered ``fact`` is in (:func:`_group_of` each pattern it may match)."""
    if len(fact) == 1:
        return (fact[0],)  # by index: any fact's name (memory holds facts of every kind)
    return (fact[0], (fact[0], value_key(fact[1])))  # by index: its name and first value


def _as_fact(fact: Sequence[Value]) -> Fact:
    return check_fact(tuple(fact))


def _keyed(fact: Sequence[Value], held: dict[Fact, Fact]) -> tuple[Fact, Fact]:
    """``fact`` as a checked tuple, and its :func:`~warband.values.fact_key`.

    Most facts a source gives were in what it gave before: a fact holding no bool and no list
    is its own key, and one equal to a fact already ``held`` was checked when that one came
    (equal values are valid alike), so it is neither checked nor keyed again. The types are
    looked at first because ``==`` alone takes ``True`` for ``1``.
    """
    known = fact if fact.__class__ is tuple else tuple(fact)
    if bool not in map(type, known) and tuple not in map(type, known):
        try:
            if known in held:
                return known, known
        except TypeError:  # unhashable (a list inside): check_fact names it
            pass
        known = check_fact(known)
        return known, known
    known = check_fact(known)
    return known, fact_key(known)


def _starts_with(fact: Fact, pattern: Sequence[Value]) -> bool:
    return len(fact) >= len(pattern) and all(
        values_equal(a, b) for a, b in zip(fact, pattern, strict=False)
    )


class PerceptFeed:
    """Feeds Percepts, full or delta (``Percept.since``), into one source of a memory.

    A full percept replaces the source; a delta is applied only when it follows the last
    percept applied (its ``since`` is that percept's tick). One that does not (a percept was
    lost or dropped on the way) is not applied: the source keeps the last consistent facts
    until a full percept comes, and :meth:`take` says to ask for one, once per gap.
    """

    def __init__(self, memory: Memory, source: str = "percept") -> None:
        self.memory = memory
        self.source = source
        self.last_tick: int | None = None
        """The tick of the last percept applied (None: none yet, or a gap since)."""
        self.gaps = 0
        """Deltas not applied because they did not follow the last percept applied."""
        self._asked = False

    def take(
        self,
        facts: Iterable[Sequence[Value]],
        tick: int,
        *,
        since: int | None = None,
        removed: Iterable[Sequence[Value]] = (),
    ) -> bool:
        """Apply one percept stamped ``tick``; True when the sender should be asked for a full
        percept (the first delta of a gap)."""
        if since is None:
            self.memory.set_source(self.source, facts)
        elif since == self.last_tick:
            self.memory.change_source(self.source, facts, removed)
        else:
            self.gaps += 1
            self.last_tick = None
            ask, self._asked = not self._asked, True
            return ask
        self.last_tick, self._asked = tick, False
        return False
