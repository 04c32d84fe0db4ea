"""What a computation read of a fact database, and whether any of it changed since.

An agent decides every tick, but most ticks change nothing its decision depends on. To know
that, the decision runs against a *watching* copy of the agent's facts
(:meth:`FactReads.watch`): a :class:`FactDB` that notes every fact it is asked about, in the
planner's compiled queries and in the functions a domain calls alike, and hands the same
watching to every copy made of it (the planner copies the facts at every branch that calls a
function and at every primitive with effects). What it notes is a :class:`FactReads`:

- a fact name read whole (``(sees ?who ?where ?d @team)``, ``facts.facts("sees")``);
- a fact name read for one first argument only (``(at @self ?here)``, ``facts.facts("at",
  "bot-3")``, a ground test ``(crouched)`` or ``(captured p1 red)``): a change of another
  agent's ``at`` fact does not concern it;
- or everything (iterating the facts, their size, their :attr:`~FactDB.version`).

:meth:`FactReads.changed` then tells, between the copy the computation read (it never changes:
the planner works on copies of it) and the facts as they are now, whether any fact it read was
added or removed. It compares buckets, not facts: a :class:`FactDB` copy shares its buckets
(and within a bucket, its first-argument groups) with the original until either side writes
them, so a bucket or group that is still the very same object holds the very same facts. The
check costs a dictionary look-up per name read, whatever the number of facts. A bucket written
and put back as it was counts as changed: the answer may be "changed" when nothing did, never
"unchanged" when something did.

A computation that reads anything besides its facts (a clock, a random draw, a global) is
beyond what this sees; the planner's functions are ``fn(facts, *args)`` for that reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from ...values import Fact, Value, fact_key, value_key
from .facts import FactDB, HtnBindings, Term, _Bucket


class FactReads:
    """The facts a computation read: names read whole, (name, first argument) pairs, or
    everything. Empty when made; filled by the watching copies of :meth:`watch`, or by hand
    (:meth:`read_all` for a computation that reads every fact)."""

    __slots__ = ("everything", "groups", "names")

    def __init__(self) -> None:
        self.everything = False
        """True once the computation read every fact (or their number, or their version)."""
        self.names: set[str] = set()
        """Fact names read whole."""
        self.groups: set[tuple[str, object]] = set()
        """(name, first argument) pairs read. Equal values share an entry (``1``, ``1.0`` and
        ``True``): at worst a change of one is taken for a change of the other."""

    def __repr__(self) -> str:
        if self.everything:
            return "FactReads(everything)"
        return f"FactReads(names={sorted(self.names)}, groups={len(self.groups)})"

    def read_all(self) -> None:
        """Note that the computation read every fact."""
        self.everything = True

    def watch(self, facts: FactDB) -> FactDB:
        """A copy of ``facts`` (cheap: copy on write) that notes here what is read of it, as
        do the copies made of it. Keep it: it is what :meth:`changed` compares with later."""
        return _Watching.of(facts, self)

    def changed(self, before: FactDB, after: FactDB) -> bool:
        """True if a fact read here was added to or removed from ``after`` since ``after``
        was copied into ``before`` (``before`` unchanged since: the copy :meth:`watch` gave).
        """
        old, new = before._buckets, after._buckets
        if self.everything:
            return len(old) != len(new) or any(new.get(name) is not b for name, b in old.items())
        for name in self.names:
            if old.get(name) is not new.get(name):
                return True
        for name, first in self.groups:
            was, now = old.get(name), new.get(name)
            if was is not now and not _same_group(was, now, first):
                return True
        return False


def _same_group(was: _Bucket | None, now: _Bucket | None, first: object) -> bool:
    """True if the facts whose first argument is ``first`` are the same in both buckets (by
    the identity of their group: a copy shares a group until it writes it)."""
    if was is None or now is None:
        return was is now
    if was.exact is not now.exact:
        return False  # a bool came in: the groups are keyed otherwise (True apart from 1)
    key = first if was.exact else value_key(first)  # type: ignore[arg-type]  # a fact value
    return was.by_first.get(key) is now.by_first.get(key)


_NONE: dict[Fact, Fact] = {}


class _Watching(FactDB):
    """A :class:`FactDB` copy that notes in its :class:`FactReads` what is read of it."""

    __slots__ = ("_group", "_name", "_reads")

    _reads: FactReads
    _group: Callable[[tuple[str, object]], None]
    _name: Callable[[str], None]

    @classmethod
    def of(cls, facts: FactDB, reads: FactReads) -> _Watching:
        watching = facts._copy_as(cls)
        watching.note_into(reads)
        return watching

    @property
    def reads(self) -> FactReads:
        """Where what is read of this copy is noted now."""
        return self._reads

    def note_into(self, reads: FactReads) -> None:
        """Note what is read of this copy in ``reads`` from now on."""
        self._reads = reads
        # Bound once: the planner's queries call these for every fact they look at.
        self._group = reads.groups.add
        self._name = reads.names.add

    def copy(self) -> FactDB:
        twin = self._copy_as(_Watching)
        twin._reads, twin._group, twin._name = self._reads, self._group, self._name
        return twin

    # --- the planner's compiled queries -------------------------------------------------------
    #
    # Called for nearly every fact the planner looks at: FactDB's own bodies, with the note
    # added, rather than a second call.

    def _holds(self, fact: tuple[object, ...]) -> bool:
        name: str = fact[0]  # type: ignore[assignment]
        if len(fact) > 1:
            self._group((name, fact[1]))
        else:
            self._name(name)
        bucket = self._buckets.get(name)
        if bucket is None:
            return False
        return (fact if bucket.exact else fact_key(fact)) in bucket.facts  # type: ignore[arg-type,operator]

    def _snapshot(self, name: str) -> tuple[Fact, ...]:
        self._name(name)
        bucket = self._buckets.get(name)
        return () if bucket is None else tuple(bucket.facts.values())

    def _snapshot_first(self, name: str, first: object) -> tuple[Fact, ...]:
        self._group((name, first))
        bucket = self._buckets.get(name)
        if bucket is None:
            return ()
        key = first if bucket.exact else value_key(first)  # type: ignore[arg-type]
        return tuple(bucket.by_first.get(key, _NONE).values())

    # --- what functions read --------------------------------------------------------------

    def _note(self, name: str, args: Sequence[Value]) -> None:
        if args:
            self._reads.groups.add((name, args[0]))
        else:
            self._reads.names.add(name)

    def facts(self, name: str, *prefix: Value) -> list[Fact]:
        self._note(name, prefix)
        return super().facts(name, *prefix)

    def has(self, name: str, *args: Value) -> bool:
        self._note(name, args)
        return super().has(name, *args)

    def __contains__(self, fact: object) -> bool:
        if isinstance(fact, tuple) and fact and isinstance(fact[0], str):
            self._note(fact[0], fact[1:])
        return super().__contains__(fact)

    def query_terms(
        self,
        name: str,
        terms: Sequence[Term],
        bindings: HtnBindings,
        constants: Mapping[str, Value],
    ) -> Iterator[HtnBindings]:
        self._reads.names.add(name)
        return super().query_terms(name, terms, bindings, constants)

    def names(self) -> list[str]:
        self._reads.read_all()
        return super().names()

    def __iter__(self) -> Iterator[Fact]:
        self._reads.read_all()
        return super().__iter__()

    def __len__(self) -> int:
        self._reads.read_all()
        return super().__len__()

    def __eq__(self, other: object) -> bool:
        self._reads.read_all()
        return super().__eq__(other)

    __hash__ = None

    @property
    def version(self) -> int:
        self._reads.read_all()
        return self._version

    # --- writes: what they find decides what they do, so they read too ---------------------

    def assert_fact(self, name: str, *args: Value) -> bool:
        self._note(name, args)
        return super().assert_fact(name, *args)

    def retract(self, name: str, *args: Value) -> bool:
        self._note(name, args)
        return super().retract(name, *args)

    def retract_all(self, name: str) -> int:
        self._reads.names.add(name)
        return super().retract_all(name)

    def _change(self, deleted: Iterable[Fact], added: Iterable[Fact]) -> None:
        deleted, added = list(deleted), list(added)
        for fact in (*deleted, *added):
            self._note(fact[0], fact[1:])  # type: ignore[arg-type]  # fact[0]: the name
        super()._change(deleted, added)
