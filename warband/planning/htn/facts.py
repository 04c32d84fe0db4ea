"""The agent's fact database (working memory) and the query language the HTN planner uses on it.

A fact is a tuple ``(name, arg1, arg2, ...)``: a name (str) followed by zero or more values
(:data:`warband.values.Value`: None, bool, int, float or str), e.g. ``("sees", "bot-7", 12.5)``.
A Percept fact goes in as it is, ``None`` included. The database is a set of facts: asserting a
fact twice keeps one copy. Facts are indexed by name and, within a name, by
their first argument, so ``(distance_to_threat bot-7 ?d)`` looks at one small bucket.

A query pattern is a name plus terms. A term is a value, a :class:`Var` (``?d``: matches anything
and binds it, or must equal its binding), or a :class:`ConstRef` (``@max_range``: a named constant
supplied by the domain or the agent). :func:`parse_term` reads the text forms ``?d`` and ``@self``.
Answers come in insertion order of the facts, so queries are deterministic.

Values compare by the one equality of :mod:`warband.values`: ``True`` is not ``1`` (the facts
``("armed", True)`` and ``("armed", 1)`` are two facts, and neither answers a query for the
other), while ``1`` equals ``1.0``. Facts are stored under :func:`~warband.values.fact_key`.

:meth:`FactDB.copy` is cheap (proportional to the number of distinct fact names, not facts):
buckets are shared copy-on-write, so the planner can snapshot memory at every step it simulates.
:attr:`FactDB.version` identifies the contents, so functions may cache what they derive from them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias, TypeVar

from ...exceptions import PlanningError
from ...values import Fact, Value, check_fact, fact_key, value_key, values_equal

HtnBindings: TypeAlias = dict[str, Value]
"""HTN variable bindings: variable name (without the ``?``) to value (GOAP's are
:class:`warband.planning.goap.state.Bindings`, an immutable mapping)."""


@dataclass(frozen=True, slots=True)
class Var:
    """A query variable, written ``?name``; ``name`` excludes the ``?``."""

    name: str

    def __str__(self) -> str:
        return f"?{self.name}"


@dataclass(frozen=True, slots=True)
class ConstRef:
    """A reference to a named constant, written ``@name``; ``name`` excludes the ``@``."""

    name: str

    def __str__(self) -> str:
        return f"@{self.name}"


Term: TypeAlias = Var | ConstRef | Value
"""One position of a query pattern."""


def parse_term(value: Value | Var | ConstRef) -> Term:
    """Turn ``"?x"`` into ``Var("x")`` and ``"@x"`` into ``ConstRef("x")``; keep anything else."""
    if isinstance(value, str) and len(value) > 1:
        if value[0] == "?":
            return Var(value[1:])
        if value[0] == "@":
            return ConstRef(value[1:])
    return value


class _Bucket:
    """All facts of one name, plus an index of them by first argument.

    Both are keyed by :func:`fact_key` / :func:`value_key` (so ``True`` and ``1`` stay apart)
    and hold the facts as they were asserted. ``exact`` stays True while no fact here holds a
    value equal to ``True`` or ``False`` (a bool, 0, 1, 0.0 or 1.0): then every key is the fact
    itself and a look-up may use the fact as it comes, skipping :func:`fact_key` (most buckets
    hold names and ids only, and the planner looks facts up far more often than it adds them).

    A clone shares the index's groups with the original and copies a group only when it first
    writes it (``owned``): the planner clones a bucket for every simulated action, and copying
    one small group beats rebuilding every group of the index.
    """

    __slots__ = ("by_first", "exact", "facts", "owned")

    def __init__(self) -> None:
        self.facts: dict[Fact, Fact] = {}
        self.by_first: dict[object, dict[Fact, Fact]] = {}
        # First arguments whose group this bucket created or copied, so may change in place.
        self.owned: set[object] = set()
        self.exact = True

    def key(self, fact: tuple[object, ...]) -> object:
        """The key ``fact`` is stored under here, if it is stored."""
        return fact if self.exact else fact_key(fact)  # type: ignore[arg-type]

    def clone(self) -> _Bucket:
        twin = _Bucket.__new__(_Bucket)
        twin.facts = self.facts.copy()
        twin.by_first = self.by_first.copy()
        twin.owned = set()
        twin.exact = self.exact
        return twin

    def add(self, fact: Fact, key: Fact | None = None) -> None:
        """Store ``fact``, known to be absent; ``key``: its :func:`fact_key`, when the caller
        has it (an equal key is the same to the dictionaries)."""
        if key is None:
            if True in fact or False in fact:  # also true for 0, 1, 0.0 and 1.0
                self.exact = False
                key = fact_key(fact)
                first = value_key(fact[1]) if len(fact) > 1 else None
            else:
                key = fact
                first = fact[1] if len(fact) > 1 else None
        else:
            if self.exact and (True in fact or False in fact):
                self.exact = False
            if len(fact) < 2:
                first = None
            elif self.exact:
                first = fact[1]
            else:
                first = value_key(fact[1])
        self.facts[key] = fact
        if len(fact) > 1:
            group = self.by_first.get(first)
            if group is None:
                self.by_first[first] = {key: fact}
                self.owned.add(first)
            else:
                if first not in self.owned:
                    group = self.by_first[first] = group.copy()
                    self.owned.add(first)
                group[key] = fact

    def remove(self, key: Fact) -> None:
        fact = self.facts.pop(key)
        if len(fact) > 1:
            first = fact[1] if self.exact else value_key(fact[1])
            group = self.by_first[first]
            if len(group) == 1:
                del self.by_first[first]
                self.owned.discard(first)
                return
            if first not in self.owned:
                group = self.by_first[first] = group.copy()
                self.owned.add(first)
            del group[key]


_EMPTY: dict[Fact, Fact] = {}

_DB = TypeVar("_DB", bound="FactDB")

_VERSIONS = itertools.count()
"""Every change of every database takes the next number: versions are never reused."""


class FactDB:
    """A set of facts with pattern queries; see the module docstring for the data model.

    Iterating yields every fact (grouped by name, in insertion order within a name).
    """

    __slots__ = ("_buckets", "_owned", "_size", "_version")

    def __init__(self, facts: Iterable[Fact] = ()) -> None:
        self._buckets: dict[str, _Bucket] = {}
        # Names whose bucket this database may change in place; others are shared with a copy.
        self._owned: set[str] = set()
        self._size = 0
        self._version = next(_VERSIONS)
        self.update(facts)

    def __setstate__(self, state: tuple[None, dict[str, object]]) -> None:
        # Unpickled (or deep-copied) contents take a new version: the one they carry may have
        # been given to other contents in this process.
        for slot, value in state[1].items():
            setattr(self, slot, value)
        self._version = next(_VERSIONS)

    # --- changing -------------------------------------------------------------------------

    def assert_fact(self, name: str, *args: Value) -> bool:
        """Add the fact ``(name, *args)``; return False if it was already there.

        Raises PlanningError for an argument that is not a :data:`~warband.values.Value`
        (or a float that is not finite)."""
        fact: Fact = (name, *args)
        bucket = self._buckets.get(name)
        if bucket is not None and bucket.key(fact) in bucket.facts:
            return False
        check_fact(fact, PlanningError)
        self._writable(name).add(fact)
        self._size += 1
        self._version = next(_VERSIONS)
        return True

    def add_new(self, fact: Fact) -> bool:
        """:meth:`assert_fact` for ``fact``, a tuple already checked
        (:func:`~warband.values.check_fact`): no check, no new tuple. For a caller that adds
        and removes thousands of checked facts a tick (an agent's
        :class:`~warband.agents.Memory`)."""
        name: str = fact[0]  # type: ignore[assignment]  # checked: a str
        bucket = self._buckets.get(name)
        if bucket is not None and bucket.key(fact) in bucket.facts:
            return False
        self._writable(name).add(fact)
        self._size += 1
        self._version = next(_VERSIONS)
        return True

    def remove_fact(self, fact: Fact) -> bool:
        """:meth:`retract` for ``fact``, a tuple (no new tuple): the other half of
        :meth:`add_new`."""
        name: str = fact[0]  # type: ignore[assignment]
        bucket = self._buckets.get(name)
        if bucket is None:
            return False
        key = bucket.key(fact)
        if key not in bucket.facts:
            return False
        self._remove(name, key)
        self._version = next(_VERSIONS)
        return True

    def exchange(self, removed: Iterable[Fact], added: Iterable[Fact]) -> None:
        """:meth:`remove_fact` each of ``removed``, then :meth:`add_new` each of ``added``
        (tuples already checked), in one call: what a caller does when a source of its facts
        changes, hundreds of facts a tick in a big battle. The contents, and each bucket's
        order, end as those calls would leave them; the version changes once, if anything did.
        A caller that keeps its facts by key already passes them to :meth:`exchange_keyed`."""
        self.exchange_keyed(
            [(fact_key(fact), fact) for fact in removed], [(fact_key(fact), fact) for fact in added]
        )

    def exchange_keyed(
        self, removed: Iterable[tuple[Fact, Fact]], added: Iterable[tuple[Fact, Fact]]
    ) -> None:
        """:meth:`exchange` for ``(key, fact)`` pairs whose key is
        :func:`~warband.values.fact_key` of the (checked) fact, as a caller that keeps its facts
        by key has them (an agent's :class:`~warband.agents.Memory`): the database ends exactly
        as :meth:`exchange` of the facts would leave it, without keying each fact again.

        The key serves in any bucket: one that is not exact keys its facts so, and in an exact
        one (no fact equal to a bool in it) a fact is stored as itself, which equals its key
        unless the fact holds a bool, and then it is in no exact bucket either way."""
        # _Bucket.key and _remove written out: a method call per fact cost 5% of an agent's
        # Memory update (the same loops calling them, measured side by side).
        buckets, owned = self._buckets, self._owned
        changed = False
        for key, fact in removed:
            name: str = fact[0]  # type: ignore[assignment]  # checked: a str
            bucket = buckets.get(name)
            if bucket is None or key not in bucket.facts:
                continue
            if name not in owned:
                bucket = self._writable(name)
            bucket.remove(key)
            self._size -= 1
            changed = True
            if not bucket.facts:
                del buckets[name]
                owned.discard(name)
        for key, fact in added:
            name = fact[0]  # type: ignore[assignment]
            bucket = buckets.get(name)
            if bucket is not None and key in bucket.facts:
                continue
            if bucket is None or name not in owned:
                bucket = self._writable(name)
            bucket.add(fact, key)
            self._size += 1
            changed = True
        if changed:
            self._version = next(_VERSIONS)

    def update(self, facts: Iterable[Fact]) -> None:
        """Assert every fact of ``facts`` (each a tuple whose first element is the name)."""
        for fact in facts:
            if not fact or not isinstance(fact[0], str):
                check_fact(fact, PlanningError)  # raises, naming the fact
            self.assert_fact(fact[0], *fact[1:])  # type: ignore[arg-type]  # the name: a str

    def retract(self, name: str, *args: Value) -> bool:
        """Remove the fact ``(name, *args)``; return False if it was not there."""
        bucket = self._buckets.get(name)
        if bucket is None:
            return False
        key = bucket.key((name, *args))
        if key not in bucket.facts:
            return False
        self._remove(name, key)
        self._version = next(_VERSIONS)
        return True

    def retract_all(self, name: str) -> int:
        """Remove every fact called ``name``; return how many were removed."""
        bucket = self._buckets.pop(name, None)
        self._owned.discard(name)
        if bucket is None:
            return 0
        self._size -= len(bucket.facts)
        self._version = next(_VERSIONS)
        return len(bucket.facts)

    def retract_matching(
        self,
        name: str,
        *pattern: Term,
        constants: Mapping[str, Value] | None = None,
    ) -> int:
        """Remove every fact matching the pattern (``?vars`` act as wildcards); return the count."""
        doomed = list(self._facts_matching(name, pattern, {}, constants or {}))
        for fact in doomed:
            self.retract(name, *fact[1:])
        return len(doomed)

    def copy(self) -> FactDB:
        """An independent snapshot costing O(number of fact names): buckets are shared until
        either side writes them."""
        return self._copy_as(FactDB)

    def _copy_as(self, kind: type[_DB]) -> _DB:
        """:meth:`copy`, made a ``kind`` (a subclass that adds slots of its own: it sets them)."""
        twin = kind.__new__(kind)
        twin._buckets = dict(self._buckets)
        twin._owned = set()
        twin._size = self._size
        twin._version = self._version
        self._owned = set()
        return twin

    def _writable(self, name: str) -> _Bucket:
        if name in self._owned:
            return self._buckets[name]
        bucket = self._buckets.get(name)
        bucket = self._buckets[name] = _Bucket() if bucket is None else bucket.clone()
        self._owned.add(name)
        return bucket

    # --- reading --------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._size

    @property
    def version(self) -> int:
        """A token for the current contents: it changes whenever a fact is added or removed,
        and a copy shares it until either side changes. No two different contents of any two
        databases share a version in one process, so a domain function may cache what it derives
        from the facts under it (``domains.blocks.is_done`` does)."""
        return self._version

    def __iter__(self) -> Iterator[Fact]:
        for bucket in list(self._buckets.values()):
            yield from tuple(bucket.facts.values())

    def __contains__(self, fact: object) -> bool:
        if not isinstance(fact, tuple) or not fact or not isinstance(fact[0], str):
            return False
        bucket = self._buckets.get(fact[0])
        return bucket is not None and bucket.key(fact) in bucket.facts

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FactDB):
            return NotImplemented
        return self._size == other._size and all(fact in other for fact in self)

    __hash__ = None  # type: ignore[assignment]  # mutable: a FactDB is not a dict key

    def __repr__(self) -> str:
        return f"FactDB({len(self)} facts, names={sorted(self._buckets)})"

    def names(self) -> list[str]:
        """The names that have at least one fact, in first-assertion order."""
        return list(self._buckets)

    def facts(self, name: str, *prefix: Value) -> list[Fact]:
        """Every fact called ``name`` whose arguments start with ``prefix``, in insertion order.

        ``facts("on", "a")`` uses the first-argument index: the quick way to read ``a``'s facts.
        """
        bucket = self._buckets.get(name)
        if bucket is None:
            return []
        if not prefix:
            return list(bucket.facts.values())
        if bucket.exact:  # keys are the facts themselves
            group = bucket.by_first.get(prefix[0], _EMPTY)
            if len(prefix) == 1:
                return list(group)  # the index already selected exactly these facts
        else:
            group = bucket.by_first.get(value_key(prefix[0]), _EMPTY)
            if len(prefix) == 1:
                return list(group.values())
        width = len(prefix) + 1
        want = fact_key(prefix)
        return [fact for key, fact in group.items() if key[1:width] == want]

    def has(self, name: str, *args: Value) -> bool:
        """True if the ground fact ``(name, *args)`` holds."""
        bucket = self._buckets.get(name)
        if bucket is None:
            return False
        fact = (name, *args)
        return (fact if bucket.exact else fact_key(fact)) in bucket.facts

    def query(
        self,
        name: str,
        *pattern: Term,
        bindings: Mapping[str, Value] | None = None,
        constants: Mapping[str, Value] | None = None,
    ) -> Iterator[HtnBindings]:
        """Yield, for every fact matching ``(name, *pattern)``, the bindings extended by it.

        Strings ``"?x"`` / ``"@x"`` in ``pattern`` are read as variables / constants (see
        :func:`parse_term`). ``bindings`` fixes variables already known. Raises PlanningError
        for an ``@constant`` missing from ``constants``.
        """
        terms = tuple(parse_term(term) for term in pattern)
        return self.query_terms(name, terms, dict(bindings or {}), constants or {})

    def query_terms(
        self,
        name: str,
        terms: Sequence[Term],
        bindings: HtnBindings,
        constants: Mapping[str, Value],
    ) -> Iterator[HtnBindings]:
        """Like :meth:`query` with terms already parsed; the planner's fast path.

        Each answer is a new dict; ``bindings`` itself is never changed. The candidate facts are
        snapshot before the first answer, so the caller may change the database while iterating.
        """
        arity = len(terms) + 1
        # Each position as value_key(value), or _MISSING where a new variable goes: facts are
        # matched on their keys, so True never meets 1.
        resolved: list[object] = []
        new_vars: list[tuple[int, str]] = []
        for position, term in enumerate(terms, start=1):
            if isinstance(term, Var):
                if term.name in bindings:
                    resolved.append(value_key(bindings[term.name]))
                else:
                    resolved.append(_MISSING)
                    new_vars.append((position, term.name))
            elif isinstance(term, ConstRef):
                resolved.append(value_key(_constant(term.name, constants)))
            else:
                resolved.append(value_key(term))
        for key, fact in self._candidates(name, resolved, bool(new_vars)):
            if len(fact) != arity:
                continue
            if not all(
                want is _MISSING or key[position] == want
                for position, want in enumerate(resolved, start=1)
            ):
                continue
            answer = dict(bindings)
            consistent = True
            for position, var in new_vars:
                value = fact[position]
                seen = answer.get(var, _MISSING)
                if seen is _MISSING:
                    answer[var] = value
                elif not values_equal(seen, value):
                    consistent = False  # the pattern repeats ?var with two different values
                    break
            if consistent:
                yield answer

    def _candidates(
        self, name: str, resolved: Sequence[object], open_vars: bool
    ) -> tuple[tuple[Fact, Fact], ...]:
        """(key, fact) pairs that may match ``resolved`` (positions as value keys)."""
        bucket = self._buckets.get(name)
        if bucket is None:
            return ()
        if not open_vars:
            key: Fact = (name, *resolved)  # type: ignore[arg-type]  # value keys, all known
            fact = bucket.facts.get(key)
            return () if fact is None else ((key, fact),)
        if resolved and resolved[0] is not _MISSING:
            return tuple(bucket.by_first.get(resolved[0], _EMPTY).items())
        return tuple(bucket.facts.items())

    # The planner's compiled queries read through these three instead of query_terms: they
    # resolve their terms themselves, so only the index lookup and the snapshot are left here.

    def _change(self, deleted: Iterable[Fact], added: Iterable[Fact]) -> None:
        """Retract ``deleted``, then assert ``added``, as retract() and assert_fact() would one
        fact at a time: the planner's primitive effects, without a call per fact."""
        self._version = next(_VERSIONS)  # first: even a change cut short by an error is new
        buckets = self._buckets
        for fact in deleted:
            name: str = fact[0]  # type: ignore[assignment]
            bucket = buckets.get(name)
            if bucket is not None:
                key = fact if bucket.exact else fact_key(fact)
                if key in bucket.facts:
                    self._remove(name, key)
        for fact in added:
            name = fact[0]  # type: ignore[assignment]
            bucket = buckets.get(name)
            if bucket is None or (fact if bucket.exact else fact_key(fact)) not in bucket.facts:
                check_fact(fact, PlanningError)
                self._writable(name).add(fact)
                self._size += 1

    def _remove(self, name: str, key: Fact) -> None:
        """Remove the fact stored under ``key``, known to be present; drop its bucket once
        empty."""
        bucket = self._writable(name)
        bucket.remove(key)
        self._size -= 1
        if not bucket.facts:
            del self._buckets[name]
            self._owned.discard(name)

    def _holds(self, fact: tuple[object, ...]) -> bool:
        bucket = self._buckets.get(fact[0])  # type: ignore[call-overload]  # fact[0]: the name
        if bucket is None:
            return False
        return (fact if bucket.exact else fact_key(fact)) in bucket.facts  # type: ignore[arg-type]

    def _snapshot(self, name: str) -> tuple[Fact, ...]:
        bucket = self._buckets.get(name)
        return () if bucket is None else tuple(bucket.facts.values())

    def _snapshot_first(self, name: str, first: object) -> tuple[Fact, ...]:
        """The facts whose first argument equals ``first`` (typed: True is not 1)."""
        bucket = self._buckets.get(name)
        if bucket is None:
            return ()
        group = bucket.by_first.get(first if bucket.exact else value_key(first), _EMPTY)  # type: ignore[arg-type]
        return tuple(group.values())

    def _facts_matching(
        self,
        name: str,
        pattern: Sequence[Term],
        bindings: HtnBindings,
        constants: Mapping[str, Value],
    ) -> Iterator[Fact]:
        terms = tuple(parse_term(term) for term in pattern)
        for answer in self.query_terms(name, terms, bindings, constants):
            yield (name, *(_ground(term, answer, constants) for term in terms))


_MISSING = object()


def _constant(name: str, constants: Mapping[str, Value]) -> Value:
    try:
        return constants[name]
    except KeyError:
        known = ", ".join("@" + key for key in sorted(constants)) or "none"
        raise PlanningError(
            f"unknown constant '@{name}'; known constants: {known}. "
            "Declare it in the domain or pass it in the planner's constants"
        ) from None


def _ground(term: Term, bindings: Mapping[str, Value], constants: Mapping[str, Value]) -> Value:
    if isinstance(term, Var):
        return bindings[term.name]
    if isinstance(term, ConstRef):
        return _constant(term.name, constants)
    return term
